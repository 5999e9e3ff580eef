// Conversion from nlohmann::ordered_json, and a re-implementation of CPython's json encoder
// (Lib/json/encoder.py): separators, indentation, ensure_ascii escapes, float repr, key rules.
#include "tokenizer/jinja/json_codec.hpp"

#include <algorithm>
#include <cmath>

#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {

Value value_from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) {
        fail("JSON integer {} does not fit kiln's 64-bit template integers", u);
      }
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::number(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(value_from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      for (const auto& [key, item] : json.items()) dict.set(Value::string(key), value_from_json(item));
      return Value::dict(std::move(dict));
    }
    default: fail("JSON value of type {} cannot be passed to a template", json.type_name());
  }
}

namespace {

std::string json_key(const Value& key);

}  // namespace

nlohmann::ordered_json value_to_json(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNone: return nullptr;
    case Value::Kind::kBool: return value.as_bool();
    case Value::Kind::kInt: return value.as_int();
    case Value::Kind::kFloat: return value.as_float();
    case Value::Kind::kString: return value.as_string();
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (const Value& item : value.items()) out.push_back(value_to_json(item));
      return out;
    }
    case Value::Kind::kDict: {
      nlohmann::ordered_json out = nlohmann::ordered_json::object();
      for (const auto& [key, item] : value.as_dict().entries()) {
        std::string name;
        try {
          name = json_key(key);
        } catch (const Exception& e) {
          fail("{}", e.message);
        }
        out[name] = value_to_json(item);
      }
      return out;
    }
    default: fail("a template value of type {} cannot be converted to JSON", type_name(value));
  }
}

namespace {

void append_escaped_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t cp = next_code_point(s, i);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
      if (cp >= 0x10000) {
        const char32_t v = cp - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
      }
      continue;
    }
    out.append(s, start, i - start);
  }
  out.push_back('"');
}

std::string float_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return repr_float(d);
}

// json.dumps's key rule: str as is, numbers, booleans and None spelled as JSON.
std::string json_key(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kString: return key.as_string();
    case Value::Kind::kFloat: return float_text(key.as_float());
    case Value::Kind::kBool: return key.as_bool() ? "true" : "false";
    case Value::Kind::kInt: return std::to_string(key.as_int());
    case Value::Kind::kNone: return "null";
    default: raise(ErrorType::kTypeError, "keys must be str, int, float, bool or None, not {}", type_name(key));
  }
}

class Encoder {
 public:
  Encoder(Interpreter& interp, const JsonDumpOptions& options) : interp_(interp), options_(options) {}

  void encode(const Value& v, int level) {
    interp_.count_step();
    interp_.check_stack();
    interp_.check_size(out_.size());
    switch (v.kind()) {
      case Value::Kind::kNone: out_ += "null"; return;
      case Value::Kind::kBool: out_ += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out_ += std::to_string(v.as_int()); return;
      case Value::Kind::kFloat: out_ += float_text(v.as_float()); return;
      case Value::Kind::kString: append_escaped_string(out_, v.as_string(), options_.ensure_ascii); return;
      case Value::Kind::kList:
      case Value::Kind::kTuple: encode_list(v.items(), level); return;
      case Value::Kind::kDict: encode_dict(v.as_dict(), level); return;
      default: raise(ErrorType::kTypeError, "Object of type {} is not JSON serializable", type_name(v));
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    out_.push_back('\n');
    for (int i = 0; i < level; ++i) out_ += *options_.indent;
  }

  void encode_list(const ValueList& items, int level) {
    if (items.empty()) {
      out_ += "[]";
      return;
    }
    out_.push_back('[');
    if (options_.indent) newline(level + 1);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) {
        out_ += options_.item_separator;
        if (options_.indent) newline(level + 1);
      }
      encode(items[i], level + 1);
    }
    if (options_.indent) newline(level);
    out_.push_back(']');
  }

  void encode_dict(const Dict& dict, int level) {
    if (dict.empty()) {
      out_ += "{}";
      return;
    }
    std::vector<const Dict::Entry*> entries;
    for (const auto& entry : dict.entries()) entries.push_back(&entry);
    if (options_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const Dict::Entry* a, const Dict::Entry* b) { return less_than(a->first, b->first); });
    }
    out_.push_back('{');
    if (options_.indent) newline(level + 1);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) {
        out_ += options_.item_separator;
        if (options_.indent) newline(level + 1);
      }
      append_escaped_string(out_, json_key(entries[i]->first), options_.ensure_ascii);
      out_ += options_.key_separator;
      encode(entries[i]->second, level + 1);
    }
    if (options_.indent) newline(level);
    out_.push_back('}');
  }

  Interpreter& interp_;
  const JsonDumpOptions& options_;
  std::string out_;
};

}  // namespace

std::string dump_json(Interpreter& interp, const Value& value, const JsonDumpOptions& options) {
  Encoder encoder(interp, options);
  encoder.encode(value, 0);
  return encoder.take();
}

}  // namespace kiln::jinja
