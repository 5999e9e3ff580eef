#include "server/tool_call_json.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

namespace kiln::server {
namespace {

// Characters that may continue a number or a literal (true, false, null).
bool is_scalar_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-'; }

// A JSON string token as written ("a\"b") decoded, or nullopt when it is not valid JSON.
std::optional<std::string> decode_string(const std::string& token) {
  const nlohmann::json parsed = nlohmann::json::parse(token, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_string()) return std::nullopt;
  return parsed.get<std::string>();
}

}  // namespace

JsonValueScanner::Step JsonValueScanner::feed(char c) {
  if (in_string_) {
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (closers_.empty()) return Step::kEnd;
    }
    return Step::kMore;
  }
  if (!started_) {
    started_ = true;
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      closers_.push_back(c == '{' ? '}' : ']');
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) || c == 't' || c == 'f' || c == 'n') {
      scalar_ = true;
    } else {
      return Step::kFailed;
    }
    return Step::kMore;
  }
  if (scalar_) return is_scalar_char(c) ? Step::kMore : Step::kEndBefore;
  if (c == '"') {
    in_string_ = true;
  } else if (c == '{' || c == '[') {
    closers_.push_back(c == '{' ? '}' : ']');
  } else if (c == '}' || c == ']') {
    if (c != closers_.back()) return Step::kFailed;
    closers_.pop_back();
    if (closers_.empty()) return Step::kEnd;
  }
  return Step::kMore;
}

ToolCallObjectReader::State ToolCallObjectReader::fail() { return state_ = State::kFailed; }

ToolCallObjectReader::State ToolCallObjectReader::feed(char c, CallPieces& out) {
  if (state_ != State::kReading) return state_;
  switch (part_) {
    case Part::kBeforeObject:
      if (is_json_space(c)) break;
      if (c != '{') return fail();
      part_ = Part::kBeforeKey;
      break;
    case Part::kBeforeKey:
      if (is_json_space(c)) break;
      if (c != '"') return fail();
      token_ = "\"";
      value_ = {};
      value_.feed(c);
      part_ = Part::kKey;
      break;
    case Part::kKey:
      token_ += c;
      if (value_.feed(c) == JsonValueScanner::Step::kEnd) {
        const std::optional<std::string> key = decode_string(token_);
        if (!key) return fail();
        if (*key == "name") {
          field_ = name_ ? Field::kOther : Field::kName;
        } else if (*key == "arguments" || *key == "parameters") {
          field_ = has_arguments_ ? Field::kOther : Field::kArguments;
        } else {
          field_ = Field::kOther;
        }
        part_ = Part::kColon;
      }
      break;
    case Part::kColon:
      if (is_json_space(c)) break;
      if (c != ':') return fail();
      part_ = Part::kBeforeValue;
      break;
    case Part::kBeforeValue:
      if (is_json_space(c)) break;
      value_ = {};
      token_.clear();
      part_ = Part::kValue;
      [[fallthrough]];
    case Part::kValue:
      switch (value_.feed(c)) {
        case JsonValueScanner::Step::kMore:
          token_ += c;
          if (field_ == Field::kArguments && token_[0] != '"') emit_arguments(std::string(1, c), out);
          break;
        case JsonValueScanner::Step::kEnd:
          token_ += c;
          if (field_ == Field::kArguments && token_[0] != '"') emit_arguments(std::string(1, c), out);
          end_value(out);
          break;
        case JsonValueScanner::Step::kEndBefore:
          end_value(out);
          return state_ == State::kReading ? feed(c, out) : state_;
        case JsonValueScanner::Step::kFailed: return fail();
      }
      break;
    case Part::kAfterValue:
      if (is_json_space(c)) break;
      if (c == ',') {
        part_ = Part::kBeforeKey;
      } else if (c == '}') {
        if (!name_) return fail();
        if (!has_arguments_) out.arguments += "{}";
        state_ = State::kDone;
      } else {
        return fail();
      }
      break;
  }
  return state_;
}

void ToolCallObjectReader::emit_arguments(const std::string& text, CallPieces& out) {
  has_arguments_ = true;
  if (name_) {
    out.arguments += text;
  } else {
    early_arguments_ += text;
  }
}

void ToolCallObjectReader::end_value(CallPieces& out) {
  part_ = Part::kAfterValue;
  if (field_ == Field::kName) {
    name_ = decode_string(token_);
    if (!name_ || name_->empty()) {
      name_.reset();
      fail();
      return;
    }
    out.name = *name_;
    out.arguments += early_arguments_;
    early_arguments_.clear();
  } else if (field_ == Field::kArguments && token_[0] == '"') {
    const std::optional<std::string> text = decode_string(token_);
    if (!text) {
      fail();
      return;
    }
    emit_arguments(*text, out);
  }
}

}  // namespace kiln::server
