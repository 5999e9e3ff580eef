// Reading a tool call's JSON as a model writes it, one character at a time, so that its name and
// arguments can be streamed while it is still being generated. Only the structure is tracked
// (strings, escapes, nesting): `}` or `</tool_call>` inside a string never ends a call.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln::server {

// JSON's whitespace (RFC 8259: space, tab, line feed, carriage return).
inline bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Finds where one JSON value ends: an object, array, string, number or literal.
class JsonValueScanner {
 public:
  enum class Step {
    kMore,       // the character belongs to the value, which goes on
    kEnd,        // the character was the value's last
    kEndBefore,  // a number or literal ended before this character, which is not part of it
    kFailed,     // not JSON
  };
  // The first character must start the value (callers skip the whitespace before it).
  Step feed(char c);

 private:
  std::vector<char> closers_;  // the brackets still open, innermost last
  bool started_ = false;
  bool in_string_ = false;
  bool escaped_ = false;
  bool scalar_ = false;  // a top-level number or literal
};

// What one character of a call made known.
struct CallPieces {
  std::optional<std::string> name;  // the call's name, once complete
  std::string arguments;            // more of the arguments' JSON text
};

// One call written as an object: {"name": "f", "arguments": {...}} (or "parameters", as Llama 3
// writes it), keys in any order, other keys ignored. The name is reported once complete;
// argument text follows it as it arrives: an object's text verbatim, a JSON string's decoded
// contents at its end, "{}" when there are none. Arguments written before the name wait for it.
class ToolCallObjectReader {
 public:
  enum class State { kReading, kDone, kFailed };

  State feed(char c, CallPieces& out);
  State state() const { return state_; }
  bool named() const { return name_.has_value(); }

 private:
  enum class Part { kBeforeObject, kBeforeKey, kKey, kColon, kBeforeValue, kValue, kAfterValue };
  enum class Field { kName, kArguments, kOther };
  State fail();
  void start_value(char c, CallPieces& out);
  void end_value(CallPieces& out);
  void emit_arguments(const std::string& text, CallPieces& out);

  State state_ = State::kReading;
  Part part_ = Part::kBeforeObject;
  Field field_ = Field::kOther;
  std::string token_;  // the key or value being read, as written
  JsonValueScanner value_;
  std::optional<std::string> name_;
  bool has_arguments_ = false;
  std::string early_arguments_;  // written before the name
};

}  // namespace kiln::server
