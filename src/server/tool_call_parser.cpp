#include "server/tool_call_parser.hpp"

#include <cctype>

#include "server/literal_match.hpp"
#include "server/random_id.hpp"
#include "server/tool_call_json.hpp"

namespace kiln::server {
namespace {

bool all_space(std::string_view text) {
  for (char c : text) {
    if (!is_json_space(c)) return false;
  }
  return true;
}

// What the three formats share: the calls made so far, the one being read, and the content
// between them. Subclasses find where calls start and end; this class reads them.
class CallReader : public ToolCallParser {
 public:
  CallReader(ToolCallFormat format, bool single_call) : format_(format), single_call_(single_call) {}

  ParsedOutput push(std::string_view piece) final {
    ParsedOutput out;
    if (closed_) return out;
    buffer_ += piece;
    scan(out);
    if (closed_) buffer_.clear();
    return out;
  }

  ParsedOutput finish() final {
    ParsedOutput out;
    if (!closed_) {
      scan(out);
      end(out);
    }
    buffer_.clear();
    return out;
  }

 protected:
  // Consumes what it can decide of buffer_.
  virtual void scan(ParsedOutput& out) = 0;
  // The output ended: what is left in buffer_ and any call being read.
  virtual void end(ParsedOutput& out) = 0;

  bool closed() const { return closed_; }

  // Content, except whitespace right after a call (it separates calls; kept only when text
  // follows). Once text has followed, whitespace is content again: held back, a trailing "\n"
  // streamed on its own was lost, while the same text pushed whole kept it.
  void add_content(std::string_view text, ParsedOutput& out) {
    if (closed_ || text.empty()) return;
    if (!after_call_) {
      out.content += text;
      return;
    }
    gap_ += text;
    if (!all_space(gap_)) {
      out.content += gap_;
      gap_.clear();
      after_call_ = false;
    }
  }

  // A call written as an object starts; `opener` is the text that announced it, given back as
  // content if the call turns out not to be one.
  void begin_object_call(std::string opener) {
    object_.emplace();
    raw_ = std::move(opener);
  }

  enum class CallEnd { kNotYet, kCall, kNotACall };
  // Feeds buffer_ to the object call until it ends or the buffer does. A call that failed
  // before its name is given back as content (kNotACall).
  CallEnd read_object_call(ParsedOutput& out) {
    std::size_t used = 0;
    ToolCallObjectReader::State state = ToolCallObjectReader::State::kReading;
    while (used < buffer_.size() && state == ToolCallObjectReader::State::kReading) {
      const char c = buffer_[used++];
      raw_ += c;
      CallPieces pieces;
      state = object_->feed(c, pieces);
      deliver(pieces, out);
    }
    buffer_.erase(0, used);
    if (state == ToolCallObjectReader::State::kReading) return CallEnd::kNotYet;
    return end_object_call(out);
  }

  // The object call ends here (its JSON did, or the output did).
  CallEnd end_object_call(ParsedOutput& out) {
    const bool named = object_->named();
    object_.reset();
    if (named) {
      end_call();
    } else {
      add_content(raw_, out);
    }
    raw_.clear();
    return named ? CallEnd::kCall : CallEnd::kNotACall;
  }
  bool in_object_call() const { return object_.has_value(); }

  // A call whose name is known before its arguments (Mistral's name[ARGS]{...}).
  void begin_named_call(const std::string& name, ParsedOutput& out) {
    deliver(CallPieces{name, {}}, out);
    arguments_.emplace();
  }
  // Feeds buffer_ to the named call's arguments; true when they ended.
  bool read_named_arguments(ParsedOutput& out) {
    std::size_t used = 0;
    bool ended = false;
    while (used < buffer_.size() && !ended) {
      const char c = buffer_[used];
      const JsonValueScanner::Step step = arguments_->feed(c);
      ended = step != JsonValueScanner::Step::kMore;
      if (step == JsonValueScanner::Step::kMore || step == JsonValueScanner::Step::kEnd) {
        deliver(CallPieces{std::nullopt, std::string(1, c)}, out);
        ++used;
      }
    }
    buffer_.erase(0, used);
    if (ended) end_named_arguments();
    return ended;
  }
  void end_named_arguments() {
    arguments_.reset();
    end_call();
  }
  bool in_named_arguments() const { return arguments_.has_value(); }

  // Drops the whitespace buffer_ starts with (kept in `kept` when given); true when something
  // else is left.
  bool skip_space(std::string* kept = nullptr) {
    std::size_t n = 0;
    while (n < buffer_.size() && is_json_space(buffer_[n])) ++n;
    if (kept != nullptr) *kept += buffer_.substr(0, n);
    buffer_.erase(0, n);
    return !buffer_.empty();
  }

  // Content up to `marker`: true once found (buffer_ then starts after it). Otherwise all but a
  // possible start of the marker is content.
  bool content_until(std::string_view marker, ParsedOutput& out) {
    const std::size_t at = buffer_.find(marker);
    const std::size_t end = at != std::string::npos ? at : buffer_.size() - partial_marker_length(buffer_, marker);
    add_content(std::string_view(buffer_).substr(0, end), out);
    buffer_.erase(0, at != std::string::npos ? at + marker.size() : end);
    return at != std::string::npos;
  }

  std::string buffer_;  // text not decided yet

 private:
  void deliver(const CallPieces& pieces, ParsedOutput& out) {
    if (pieces.name) {
      out.calls.push_back({calls_, new_id(), *pieces.name, {}});
      gap_.clear();
    }
    if (!pieces.arguments.empty()) {
      if (out.calls.empty() || out.calls.back().index != calls_) out.calls.push_back({calls_, {}, {}, {}});
      out.calls.back().arguments += pieces.arguments;
    }
  }
  void end_call() {
    ++calls_;
    after_call_ = true;
    if (single_call_) closed_ = true;
  }
  std::string new_id() const {
    return format_ == ToolCallFormat::kMistral ? random_alphanumeric(9) : "call_" + random_hex(24);
  }

  const ToolCallFormat format_;
  const bool single_call_;
  std::size_t calls_ = 0;    // calls ended; also the index of the one being read
  bool closed_ = false;      // single_call_ and the call ended: the rest is dropped
  bool after_call_ = false;  // a call ended and only whitespace (gap_) followed it yet
  std::string gap_;          // whitespace after a call
  std::optional<ToolCallObjectReader> object_;
  std::optional<JsonValueScanner> arguments_;
  std::string raw_;  // the object call's text so far
};

class HermesParser final : public CallReader {
 public:
  explicit HermesParser(bool single_call) : CallReader(ToolCallFormat::kHermes, single_call) {}

 private:
  static constexpr std::string_view kOpen = "<tool_call>";
  static constexpr std::string_view kClose = "</tool_call>";
  enum class State { kContent, kCall, kAfterCall };

  void scan(ParsedOutput& out) override {
    while (!buffer_.empty() && !closed()) {
      switch (state_) {
        case State::kContent:
          if (!content_until(kOpen, out)) return;
          begin_object_call(std::string(kOpen));
          state_ = State::kCall;
          break;
        case State::kCall: {
          const CallEnd end = read_object_call(out);
          if (end == CallEnd::kNotYet) return;
          state_ = end == CallEnd::kCall ? State::kAfterCall : State::kContent;
          break;
        }
        case State::kAfterCall:
          if (!skip_space()) return;
          switch (match_literal(buffer_, kClose)) {
            case LiteralMatch::kPartial: return;
            case LiteralMatch::kMatch: buffer_.erase(0, kClose.size()); break;
            case LiteralMatch::kMismatch: break;  // no closing tag: what follows is content
          }
          state_ = State::kContent;
          break;
      }
    }
  }

  void end(ParsedOutput& out) override {
    if (state_ == State::kContent) add_content(buffer_, out);
    if (in_object_call()) end_object_call(out);
  }

  State state_ = State::kContent;
};

class Llama3JsonParser final : public CallReader {
 public:
  explicit Llama3JsonParser(bool single_call) : CallReader(ToolCallFormat::kLlama3Json, single_call) {}

 private:
  static constexpr std::string_view kPythonTag = "<|python_tag|>";
  enum class State { kStart, kCall, kBetween, kNext, kContent };

  void scan(ParsedOutput& out) override {
    while (!buffer_.empty() && !closed()) {
      switch (state_) {
        case State::kStart: {  // the output is calls only if it starts with one
          if (!skip_space(&lead_)) return;
          const LiteralMatch tag = match_literal(buffer_, kPythonTag);
          if (tag == LiteralMatch::kPartial) return;
          if (tag == LiteralMatch::kMatch) {
            lead_ += kPythonTag;
            buffer_.erase(0, kPythonTag.size());
            break;
          }
          if (buffer_[0] == '{') {
            begin_object_call(std::move(lead_));
            state_ = State::kCall;
          } else {
            add_content(lead_, out);
            state_ = State::kContent;
          }
          lead_.clear();
          break;
        }
        case State::kCall: {
          const CallEnd end = read_object_call(out);
          if (end == CallEnd::kNotYet) return;
          state_ = end == CallEnd::kCall ? State::kBetween : State::kContent;
          break;
        }
        case State::kBetween:
        case State::kNext:
          if (!skip_space()) return;
          if (state_ == State::kBetween && buffer_[0] == ';') {
            buffer_.erase(0, 1);
            state_ = State::kNext;
          } else if (state_ == State::kNext && buffer_[0] == '{') {
            begin_object_call({});
            state_ = State::kCall;
          } else {
            state_ = State::kContent;
          }
          break;
        case State::kContent:
          add_content(buffer_, out);
          buffer_.clear();
          break;
      }
    }
  }

  void end(ParsedOutput& out) override {
    if (state_ == State::kStart) add_content(lead_ + buffer_, out);
    if (in_object_call()) end_object_call(out);
  }

  State state_ = State::kStart;
  std::string lead_;  // whitespace and <|python_tag|> before the first call
};

class MistralParser final : public CallReader {
 public:
  explicit MistralParser(bool single_call) : CallReader(ToolCallFormat::kMistral, single_call) {}

 private:
  static constexpr std::string_view kMarker = "[TOOL_CALLS]";
  static constexpr std::string_view kArgs = "[ARGS]";
  enum class State { kContent, kAfterMarker, kArray, kCall, kName, kArguments };

  static bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  }

  void scan(ParsedOutput& out) override {
    while (!buffer_.empty() && !closed()) {
      switch (state_) {
        case State::kContent:
          if (!content_until(kMarker, out)) return;
          state_ = State::kAfterMarker;
          break;
        case State::kAfterMarker:
          if (!skip_space()) return;
          if (buffer_[0] == '[') {
            buffer_.erase(0, 1);
            state_ = State::kArray;
          } else if (is_name_char(buffer_[0])) {
            name_.clear();
            state_ = State::kName;
          } else {
            add_content(kMarker, out);
            state_ = State::kContent;
          }
          break;
        case State::kArray:
          if (!skip_space()) return;
          if (buffer_[0] == ',') {
            buffer_.erase(0, 1);
          } else if (buffer_[0] == '{') {
            begin_object_call({});
            state_ = State::kCall;
          } else {
            if (buffer_[0] == ']') buffer_.erase(0, 1);
            state_ = State::kContent;
          }
          break;
        case State::kCall: {
          const CallEnd end = read_object_call(out);
          if (end == CallEnd::kNotYet) return;
          state_ = end == CallEnd::kCall ? State::kArray : State::kContent;
          break;
        }
        case State::kName: {
          std::size_t n = 0;
          while (n < buffer_.size() && is_name_char(buffer_[n])) ++n;
          name_ += buffer_.substr(0, n);
          buffer_.erase(0, n);
          if (buffer_.empty()) return;
          const LiteralMatch args = match_literal(buffer_, kArgs);
          if (args == LiteralMatch::kPartial) return;
          if (args == LiteralMatch::kMatch) buffer_.erase(0, kArgs.size());
          if (args == LiteralMatch::kMismatch && buffer_[0] != '{') {
            add_content(std::string(kMarker) + name_, out);
            state_ = State::kContent;
            break;
          }
          begin_named_call(name_, out);
          state_ = State::kArguments;
          break;
        }
        case State::kArguments:
          if (!read_named_arguments(out)) return;
          state_ = State::kContent;
          break;
      }
    }
  }

  void end(ParsedOutput& out) override {
    if (state_ == State::kContent) add_content(buffer_, out);
    if (state_ == State::kName) add_content(std::string(kMarker) + name_ + buffer_, out);
    if (in_object_call()) end_object_call(out);
    if (in_named_arguments()) end_named_arguments();
  }

  State state_ = State::kContent;
  std::string name_;  // a name[ARGS] call's name so far
};

}  // namespace

std::optional<ToolCallFormat> tool_call_format(std::string_view name) {
  if (name == "hermes") return ToolCallFormat::kHermes;
  if (name == "llama3_json") return ToolCallFormat::kLlama3Json;
  if (name == "mistral") return ToolCallFormat::kMistral;
  return std::nullopt;
}

std::unique_ptr<ToolCallParser> make_tool_call_parser(ToolCallFormat format, bool single_call) {
  switch (format) {
    case ToolCallFormat::kHermes: return std::make_unique<HermesParser>(single_call);
    case ToolCallFormat::kLlama3Json: return std::make_unique<Llama3JsonParser>(single_call);
    case ToolCallFormat::kMistral: return std::make_unique<MistralParser>(single_call);
  }
  return nullptr;
}

namespace {

// The key a call's arguments come under, after its name.
std::string arguments_key(ToolCallFormat format) {
  return format == ToolCallFormat::kLlama3Json ? "\"parameters\": " : "\"arguments\": ";
}

// What closes a call after its arguments.
std::string call_closing(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::kHermes: return "}\n</tool_call>";
    case ToolCallFormat::kLlama3Json: return "}";
    case ToolCallFormat::kMistral: return "}]";
  }
  return {};
}

// A function tool's parameters schema; OpenAI: a function without parameters takes none.
std::string parameters_of(const nlohmann::ordered_json& function) {
  return function.contains("parameters") ? function.at("parameters").dump() : R"({"type": "object", "properties": {}})";
}

// What follows the name in a call: the name's closing quote and the arguments key.
std::string after_name(ToolCallFormat format) { return "\", " + arguments_key(format); }

}  // namespace

std::string tool_call_prefill(ToolCallFormat format, const std::string& name) {
  // Names are checked to be [A-Za-z0-9_-]: no escaping is needed.
  const std::string call = name.empty() ? "{\"name\": \"" : "{\"name\": \"" + name + after_name(format);
  switch (format) {
    case ToolCallFormat::kHermes: return "<tool_call>\n" + call;
    case ToolCallFormat::kLlama3Json: return call;
    case ToolCallFormat::kMistral: return "[TOOL_CALLS][" + call;
  }
  return {};
}

StructuredOutputConfig forced_tool_call(ToolCallFormat format, const nlohmann::ordered_json& tools,
                                        const std::string& name) {
  StructuredOutputConfig config;
  for (const auto& tool : tools) {
    const auto& function = tool.at("function");
    const std::string tool_name = function.at("name").get<std::string>();
    if (!name.empty() && tool_name != name) continue;
    // After the prefill: the rest of the name (any tool) or nothing more (the named one).
    const std::string begin = name.empty() ? tool_name + after_name(format) : "";
    config.structural_tags.push_back({begin, parameters_of(function), call_closing(format)});
  }
  return config;
}

std::optional<StructuredOutputConfig> optional_tool_calls(ToolCallFormat format, const nlohmann::ordered_json& tools) {
  if (format != ToolCallFormat::kHermes) return std::nullopt;
  StructuredOutputConfig config;
  config.triggers = {"<tool_call>"};
  for (const auto& tool : tools) {
    const auto& function = tool.at("function");
    const std::string begin =
        tool_call_prefill(format, "") + function.at("name").get<std::string>() + after_name(format);
    config.structural_tags.push_back({begin, parameters_of(function), call_closing(format)});
  }
  return config;
}

}  // namespace kiln::server
