// Filters on single values (strings, numbers, JSON) and the filter registry. The sequence
// filters live in filters_sequence.cpp. Each follows jinja2/filters.py with autoescape off;
// `tojson` is transformers' json.dumps wrapper, not Jinja2's HTML-safe one.
#include "tokenizer/jinja/filters.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "tokenizer/jinja/args.hpp"
#include "tokenizer/jinja/filters_impl.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/json_codec.hpp"
#include "tokenizer/jinja/methods.hpp"
#include "tokenizer/jinja/objects.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/string_format.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {

// markupsafe.soft_str: strings (Markup included) stay as they are, anything else becomes str().
Value soft_str(const Value& v) {
  if (v.is_string()) return v;
  return Value::string(python_str(v));
}

namespace {

Value f_upper(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_upper", args, {});
  const Value s = soft_str(v);
  return Value::string(unicode::upper(s.as_string()), s.is_safe());
}

Value f_lower(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_lower", args, {});
  const Value s = soft_str(v);
  return Value::string(unicode::lower(s.as_string()), s.is_safe());
}

Value f_capitalize(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_capitalize", args, {});
  const Value s = soft_str(v);
  return Value::string(unicode::capitalize(s.as_string()), s.is_safe());
}

// Jinja2's own title(): words start after runs of "-", whitespace, "(", "{", "[" or "<".
Value f_title(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_title", args, {});
  const std::string s = python_str(v);
  std::string out;
  bool word_start = true;
  for (size_t i = 0; i < s.size();) {
    const char32_t c = next_code_point(s, i);
    const bool separator = unicode::is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    if (separator) {
      append_utf8(out, c);
      word_start = true;
    } else {
      append_utf8(out, word_start ? unicode::to_upper(c) : unicode::to_lower(c));
      word_start = false;
    }
  }
  return Value::string(std::move(out));
}

Value f_trim(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_trim", args, {"chars"});
  const Value s = soft_str(v);
  const Value* chars = a.has(0) ? &a[0] : nullptr;
  return Value::string(strip_string(s.as_string(), chars, true, true), s.is_safe());
}

Value f_center(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_center", args, {"width"});
  CallArgs method_args;
  method_args.positional.push_back(a.get(0, Value::integer(80)));
  return interp.call(interp.getattr(soft_str(v), "center"), std::move(method_args));
}

Value f_default(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_default", args, {"default_value", "boolean"});
  if (v.is_undefined() || (a.get_bool(1, false) && !truthy(v))) return a.get(0, Value::string(""));
  return v;
}

Value f_escape(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("escape", args, {});
  if (v.is_safe()) return v;
  return Value::string(html_escape(python_str(v)), true);
}

Value f_forceescape(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_forceescape", args, {});
  return Value::string(html_escape(python_str(v)), true);
}

Value f_safe(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_mark_safe", args, {});
  return Value::string(python_str(v), true);
}

Value f_string(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("soft_str", args, {});
  return soft_str(v);
}

Value f_replace(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_replace", args, {"old", "new", "count"}, 2);
  CallArgs method_args;
  method_args.positional = {Value::string(python_str(a[0])), Value::string(python_str(a[1]))};
  if (a.has(2) && !a[2].is_none()) method_args.positional.push_back(a[2]);
  return interp.call(interp.getattr(Value::string(python_str(v)), "replace"), std::move(method_args));
}

Value f_format(Interpreter& interp, const Value& v, CallArgs& args) {
  if (!args.positional.empty() && !args.keyword.empty()) {
    raise(ErrorType::kFilterArgumentError, "can't handle positional and keyword arguments at the same time");
  }
  Value format_args;
  if (!args.keyword.empty()) {
    Dict kwargs;
    for (auto& [key, value] : args.keyword) kwargs.set(Value::string(key), value);
    format_args = Value::dict(std::move(kwargs));
  } else {
    format_args = Value::tuple(args.positional);
  }
  const Value s = soft_str(v);
  return Value::string(percent_format(interp, s.as_string(), format_args), s.is_safe());
}

Value f_indent(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_indent", args, {"width", "first", "blank"});
  std::string indention;
  const Value width = a.get(0, Value::integer(4));
  if (width.is_undefined()) raise_undefined(width);
  if (width.is_string()) {
    indention = width.as_string();
  } else if (width.is_integral()) {
    if (width.as_int() > 0) {
      interp.check_size(static_cast<size_t>(width.as_int()));
      indention.assign(static_cast<size_t>(width.as_int()), ' ');
    }
  } else {
    raise(ErrorType::kTypeError, "can't multiply sequence by non-int of type '{}'", type_name(width));
  }
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_string()) {
    raise(ErrorType::kTypeError, "unsupported operand type(s) for +=: '{}' and 'str'", type_name(v));
  }
  CallArgs none;
  const Value lines_value =
      interp.call(interp.getattr(Value::string(v.as_string() + "\n"), "splitlines"), std::move(none));
  const ValueList& lines = lines_value.items();
  std::string out;
  if (a.get_bool(2, false)) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) {
        out += "\n";
        out += indention;
      }
      out += lines[i].as_string();
    }
  } else {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) out += "\n";
      if (i > 0 && !lines[i].as_string().empty()) out += indention;
      out += lines[i].as_string();
      interp.check_size(out.size());
    }
  }
  if (a.get_bool(1, false)) out = indention + out;
  return Value::string(std::move(out), v.is_safe());
}

Value f_truncate(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_truncate", args, {"length", "killwords", "end", "leeway"});
  const int64_t length = a.get_int(0, 255);
  const bool killwords = a.get_bool(1, false);
  const std::string end = a.get_string(2, "...");
  const int64_t leeway = a.get_int(3, 5);
  const auto end_len = static_cast<int64_t>(unicode::length(end));
  if (length < end_len) {
    raise(ErrorType::kFilterArgumentError, "expected length >= {}, got {}", end_len, length);
  }
  if (leeway < 0) raise(ErrorType::kFilterArgumentError, "expected leeway >= 0, got {}", leeway);
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_string()) raise(ErrorType::kTypeError, "object of type '{}' has no len()", type_name(v));
  const std::u32string text = unicode::decode(v.as_string());
  if (static_cast<int64_t>(text.size()) <= length + leeway) return v;
  std::u32string head = text.substr(0, static_cast<size_t>(length - end_len));
  if (!killwords) {
    const size_t space = head.rfind(U' ');
    if (space != std::u32string::npos) head.resize(space);
  }
  return Value::string(unicode::encode(head) + end);
}

Value f_wordcount(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_wordcount", args, {});
  const std::string s = python_str(v);
  int64_t words = 0;
  bool in_word = false;
  for (size_t i = 0; i < s.size();) {
    const bool w = unicode::is_word(next_code_point(s, i));
    if (w && !in_word) ++words;
    in_word = w;
  }
  return Value::integer(words);
}

// Python's float(str): surrounding whitespace, underscores between digits, inf/nan words.
std::optional<double> parse_python_float(const std::string& text) {
  std::string s = strip_string(text, nullptr, true, true);
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    clean.push_back(s[i]);
  }
  std::string lower = unicode::lower(clean);
  const bool negative = !lower.empty() && lower[0] == '-';
  std::string_view body(lower);
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (body == "inf" || body == "infinity") return negative ? -HUGE_VAL : HUGE_VAL;
  if (body == "nan") return std::nan("");
  if (body.empty() || body.find_first_not_of("0123456789.e+-") != std::string_view::npos) {
    return std::nullopt;
  }
  double value = 0;
  const char* begin = clean.data() + (clean[0] == '+' ? 1 : 0);
  auto [ptr, ec] = std::from_chars(begin, clean.data() + clean.size(), value);
  if (ptr != clean.data() + clean.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range)
    return lower.find("e-") != std::string::npos ? 0.0 : (negative ? -HUGE_VAL : HUGE_VAL);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

// Python's int(str, base): whitespace, sign, underscores, and a prefix matching the base.
std::optional<int64_t> parse_python_int(const std::string& text, int64_t base) {
  std::string s = strip_string(text, nullptr, true, true);
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i + 1 < s.size() && s[i] == '0') {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i + 1])));
    const int64_t prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed != 0 && (base == prefixed || base == 0)) {
      base = prefixed;
      i += 2;
      if (i < s.size() && s[i] == '_') ++i;
    }
  }
  if (base == 0) base = 10;
  if (base < 2 || base > 36 || i >= s.size()) return std::nullopt;
  __int128 value = 0;
  bool last_underscore = true;
  for (; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (last_underscore) return std::nullopt;
      last_underscore = true;
      continue;
    }
    const int c = std::tolower(static_cast<unsigned char>(s[i]));
    const int d = std::isdigit(c) ? c - '0' : (c >= 'a' && c <= 'z') ? c - 'a' + 10 : 99;
    if (d >= base) return std::nullopt;
    value = value * base + d;
    if (value > static_cast<__int128>(INT64_MAX) + 1) {
      raise(ErrorType::kLimitError, "integer {} does not fit kiln's 64-bit integers", text);
    }
    last_underscore = false;
  }
  if (last_underscore) return std::nullopt;
  if (negative) value = -value;
  if (value > INT64_MAX) raise(ErrorType::kLimitError, "integer {} does not fit kiln's 64-bit integers", text);
  return static_cast<int64_t>(value);
}

std::optional<int64_t> float_to_int(double d) {
  if (!std::isfinite(d)) return std::nullopt;
  const double t = std::trunc(d);
  if (t < -9.2e18 || t > 9.2e18) raise(ErrorType::kLimitError, "integer {} does not fit kiln's 64-bit integers", t);
  return static_cast<int64_t>(t);
}

Value f_int(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_int", args, {"default", "base"});
  const Value fallback = a.get(0, Value::integer(0));
  if (v.is_undefined()) raise_undefined(v);
  if (v.is_integral()) return Value::integer(v.as_int());
  if (v.is_float()) {
    auto i = float_to_int(v.as_float());
    return i ? Value::integer(*i) : fallback;
  }
  if (v.is_string()) {
    if (auto i = parse_python_int(v.as_string(), a.get_int(1, 10))) return Value::integer(*i);
    // Jinja2's quirk: "42.23"|int is 42, through float().
    if (auto d = parse_python_float(v.as_string())) {
      if (auto i = float_to_int(*d)) return Value::integer(*i);
    }
  }
  return fallback;
}

Value f_float(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_float", args, {"default"});
  if (v.is_undefined()) raise_undefined(v);
  if (v.is_number()) return Value::number(v.as_float());
  if (v.is_string()) {
    if (auto d = parse_python_float(v.as_string())) return Value::number(*d);
  }
  return a.get(0, Value::number(0.0));
}

Value f_abs(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("abs", args, {});
  if (v.is_undefined()) raise_undefined(v);
  if (v.is_float()) return Value::number(std::fabs(v.as_float()));
  if (v.is_integral()) {
    if (v.as_int() == INT64_MIN)
      raise(ErrorType::kLimitError, "abs({}) does not fit kiln's 64-bit integers", v.as_int());
    return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  raise(ErrorType::kTypeError, "bad operand type for abs(): '{}'", type_name(v));
}

// Python's round(x, n): correctly rounded, ties to even on the exact binary value.
double python_round(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits >= 0) {
    if (digits > 300) return x;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), x);
    double out = 0;
    std::from_chars(buf, buf + std::strlen(buf), out);
    return out;
  }
  if (digits < -400) return 0.0 * x;  // every finite double rounds to (signed) zero
  const double scale = std::pow(10.0, static_cast<double>(-digits));
  return std::nearbyint(x / scale) * scale;
}

Value f_round(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_round", args, {"precision", "method"});
  const int64_t precision = a.get_int(0, 0);
  const std::string method = a.get_string(1, "common");
  if (method != "common" && method != "ceil" && method != "floor") {
    raise(ErrorType::kFilterArgumentError, "method must be common, ceil or floor");
  }
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_number()) {
    raise(ErrorType::kTypeError, "type {} doesn't define __round__ method", type_name(v));
  }
  if (method == "common") {
    if (v.is_integral()) return Value::integer(v.as_int());  // round(int, n) stays an int
    return Value::number(python_round(v.as_float(), precision));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = v.as_float() * scale;
  return Value::number((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Value f_tojson(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions options;
  options.ensure_ascii = a.get_bool(0, false);
  options.sort_keys = a.get_bool(3, false);
  if (a.has(1) && !a[1].is_none()) {
    const Value& indent = a[1];
    if (indent.is_string()) {
      options.indent = indent.as_string();
    } else if (indent.is_integral()) {
      options.indent =
          std::string(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(indent.as_int(), 1024))), ' ');
    } else {
      raise(ErrorType::kTypeError, "can't multiply sequence by non-int of type '{}'", type_name(indent));
    }
    options.item_separator.assign(1, ',');
  }
  if (a.has(2) && !a[2].is_none()) {
    const ValueList parts = interp.iterate(a[2]);
    if (parts.size() != 2) {
      raise(ErrorType::kValueError, "too many values to unpack (expected 2)");
    }
    options.item_separator = expect_string(parts[0], "separators");
    options.key_separator = expect_string(parts[1], "separators");
  }
  return Value::string(dump_json(interp, v, options));
}

Value f_attr(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_attr", args, {"name"}, 1);
  const std::string& name = expect_string(a[0], "attr");
  // Like getattr, but without falling back to items.
  if (v.is_undefined()) raise_undefined(v);
  if (v.is_object()) {
    if (auto attr = v.as_object().attribute(interp, name)) return *attr;
  } else if (auto method = find_method(v, name)) {
    return *method;
  }
  return Value::undefined(
      fmt::format("{} has no attribute {}", repr_string(type_name(v) + " object"), repr_string(name)));
}

const std::unordered_map<std::string_view, FilterFn>& scalar_filters() {
  static const std::unordered_map<std::string_view, FilterFn> kFilters = {
      {"abs", f_abs},
      {"attr", f_attr},
      {"capitalize", f_capitalize},
      {"center", f_center},
      {"d", f_default},
      {"default", f_default},
      {"e", f_escape},
      {"escape", f_escape},
      {"float", f_float},
      {"forceescape", f_forceescape},
      {"format", f_format},
      {"indent", f_indent},
      {"int", f_int},
      {"lower", f_lower},
      {"replace", f_replace},
      {"round", f_round},
      {"safe", f_safe},
      {"string", f_string},
      {"title", f_title},
      {"tojson", f_tojson},
      {"trim", f_trim},
      {"truncate", f_truncate},
      {"upper", f_upper},
      {"wordcount", f_wordcount},
  };
  return kFilters;
}

}  // namespace

const FilterEntry* find_filter(std::string_view name) {
  static std::unordered_map<std::string_view, FilterEntry> entries = [] {
    std::unordered_map<std::string_view, FilterEntry> all;
    for (const auto& [n, fn] : scalar_filters()) all.emplace(n, FilterEntry{n, fn});
    for (const auto& [n, fn] : sequence_filters()) all.emplace(n, FilterEntry{n, fn});
    return all;
  }();
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

}  // namespace kiln::jinja
