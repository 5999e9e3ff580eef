// str.format and the format-spec mini-language ([[fill]align][sign][#][0][width][,][.prec][type])
// for str, int, bool and float, as CPython's string.Formatter and __format__ implement them.
#include <cstdio>

#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/string_format.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

struct Spec {
  std::string fill = " ";
  char align = 0;
  char sign = '-';
  bool alternate = false;
  size_t width = 0;
  char grouping = 0;
  int precision = -1;
  char type = 0;
};

Spec parse_spec(std::string_view s) {
  Spec spec;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  size_t after_first = 0;
  if (!s.empty()) {
    next_code_point(s, after_first);
    if (after_first < s.size() && is_align(s[after_first])) {
      spec.fill = std::string(s.substr(0, after_first));
      spec.align = s[after_first];
      i = after_first + 1;
    } else if (is_align(s[0])) {
      spec.align = s[0];
      i = 1;
    }
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) spec.sign = s[i++];
  if (i < s.size() && s[i] == '#') {
    spec.alternate = true;
    ++i;
  }
  if (i < s.size() && s[i] == '0') {
    if (spec.align == 0) {
      spec.fill.assign(1, '0');
      spec.align = '=';
    }
    ++i;
  }
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    spec.width = spec.width * 10 + static_cast<size_t>(s[i++] - '0');
    if (spec.width > 1'000'000) raise(ErrorType::kValueError, "Too many decimal digits in format string");
  }
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) spec.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    spec.precision = 0;
    if (i >= s.size() || s[i] < '0' || s[i] > '9') raise(ErrorType::kValueError, "Format specifier missing precision");
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      spec.precision = spec.precision * 10 + (s[i++] - '0');
      if (spec.precision > 1'000'000) raise(ErrorType::kValueError, "Too many decimal digits in format string");
    }
  }
  if (i < s.size()) spec.type = s[i++];
  if (i < s.size()) raise(ErrorType::kValueError, "Invalid format specifier '{}'", s);
  return spec;
}

std::string apply_padding(std::string body, const Spec& spec, char default_align, size_t sign_len) {
  const char align = spec.align == 0 ? default_align : spec.align;
  const size_t len = unicode::length(body);
  if (len >= spec.width) return body;
  const size_t n = spec.width - len;
  auto fills = [&](size_t k) {
    std::string out;
    for (size_t j = 0; j < k; ++j) out += spec.fill;
    return out;
  };
  switch (align) {
    case '<': return body + fills(n);
    case '^': return fills(n / 2) + body + fills(n - n / 2);
    case '=': return body.substr(0, sign_len) + fills(n) + body.substr(sign_len);
    default: return fills(n) + body;
  }
}

std::string group_digits(const std::string& digits, char sep, size_t every) {
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % every == 0) out.push_back(sep);
    out.push_back(digits[i]);
  }
  return out;
}

std::string sign_of(bool negative, char sign) {
  if (negative) return "-";
  return sign == '+' ? "+" : sign == ' ' ? " " : "";
}

std::string format_float(double v, const Spec& spec) {
  char type = spec.type;
  std::string body;
  const bool negative = std::signbit(v) && !std::isnan(v);
  const double a = std::fabs(v);
  if (type == 0 && spec.precision < 0) {
    body = repr_float(a);
  } else {
    int precision = spec.precision < 0 ? 6 : spec.precision;
    char c_type = type == 0 ? 'g' : type == 'n' ? 'g' : type == '%' ? 'f' : type;
    const double x = type == '%' ? a * 100 : a;
    std::string flags = spec.alternate ? "#" : "";
    char buf[512];
    if (precision > 300) raise(ErrorType::kValueError, "precision too big");
    std::snprintf(buf, sizeof buf, fmt::format("%{}.{}{}", flags, precision, c_type).c_str(), x);
    body = buf;
    if (type == 0 && body.find_first_of(".einf") == std::string::npos) body += ".0";
    if (type == '%') body += "%";
  }
  if (spec.grouping != 0) {
    const size_t end = body.find_first_not_of("0123456789");
    body = group_digits(body.substr(0, end), spec.grouping, 3) + (end == std::string::npos ? "" : body.substr(end));
  }
  const std::string sign = sign_of(negative, spec.sign);
  return apply_padding(sign + body, spec, '>', sign.size());
}

std::string format_int(int64_t v, const Spec& spec) {
  const char type = spec.type == 0 ? 'd' : spec.type;
  if (type == 'e' || type == 'E' || type == 'f' || type == 'F' || type == 'g' || type == 'G' || type == '%') {
    return format_float(static_cast<double>(v), spec);
  }
  if (spec.precision >= 0) raise(ErrorType::kValueError, "Precision not allowed in integer format specifier");
  const uint64_t m = v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  std::string digits;
  std::string prefix;
  switch (type) {
    case 'd':
    case 'n': digits = std::to_string(m); break;
    case 'b':
    case 'o':
    case 'x':
    case 'X': {
      const int base = type == 'b' ? 2 : type == 'o' ? 8 : 16;
      const char* set = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
      for (uint64_t k = m; k > 0; k /= static_cast<uint64_t>(base)) {
        digits.insert(digits.begin(), set[k % static_cast<uint64_t>(base)]);
      }
      if (digits.empty()) digits.assign(1, '0');
      if (spec.alternate) prefix = std::string("0") + type;
      break;
    }
    case 'c': {
      if (v < 0 || v > 0x10FFFF) raise(ErrorType::kOverflowError, "%c arg not in range(0x110000)");
      if (v >= 0xD800 && v <= 0xDFFF) {
        raise(ErrorType::kValueError, "%c of a surrogate code point is not valid UTF-8 text");
      }
      std::string out;
      append_utf8(out, static_cast<char32_t>(v));
      return apply_padding(out, spec, '<', 0);
    }
    default: raise(ErrorType::kValueError, "Unknown format code '{}' for object of type 'int'", type);
  }
  if (spec.grouping != 0) {
    digits = group_digits(digits, spec.grouping, (type == 'd' || type == 'n') ? 3 : 4);
  }
  const std::string head = sign_of(v < 0, spec.sign) + prefix;
  return apply_padding(head + digits, spec, '>', head.size());
}

}  // namespace

std::string format_value(const Value& value, std::string_view spec_text) {
  if (spec_text.empty()) return python_str(value);
  const Spec spec = parse_spec(spec_text);
  if (value.is_string()) {
    if (spec.type != 0 && spec.type != 's') {
      raise(ErrorType::kValueError, "Unknown format code '{}' for object of type 'str'", spec.type);
    }
    if (spec.sign != '-') raise(ErrorType::kValueError, "Sign not allowed in string format specifier");
    if (spec.align == '=') raise(ErrorType::kValueError, "'=' alignment not allowed in string format specifier");
    std::string s = value.as_string();
    if (spec.precision >= 0) {
      size_t i = 0;
      for (int k = 0; k < spec.precision && i < s.size(); ++k) next_code_point(s, i);
      s.resize(i);
    }
    return apply_padding(std::move(s), spec, '<', 0);
  }
  if (value.is_integral()) return format_int(value.as_int(), spec);
  if (value.is_float()) return format_float(value.as_float(), spec);
  raise(ErrorType::kTypeError, "unsupported format string passed to {}.__format__", type_name(value));
}

namespace {

class BraceFormatter {
 public:
  BraceFormatter(Interpreter& interp, const CallArgs& args) : interp_(interp), args_(args) {}

  std::string run(std::string_view format, int depth) {
    if (depth > 2) raise(ErrorType::kValueError, "Max string recursion exceeded");
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
      const char c = format[i];
      if (c == '}') {
        if (i + 1 < format.size() && format[i + 1] == '}') {
          out.push_back('}');
          ++i;
          continue;
        }
        raise(ErrorType::kValueError, "{}", "Single '}' encountered in format string");
      }
      if (c != '{') {
        out.push_back(c);
        continue;
      }
      if (i + 1 < format.size() && format[i + 1] == '{') {
        out.push_back('{');
        ++i;
        continue;
      }
      size_t end = i + 1;
      int nesting = 1;
      bool in_name = true;  // before ':' or '!': an index [..] may hold braces
      while (end < format.size()) {
        const char c = format[end];
        if (in_name && c == '[') {
          end = format.find(']', end);
          if (end == std::string_view::npos) break;
          ++end;
          continue;
        }
        if (c == ':' || c == '!') in_name = false;
        if (c == '{') ++nesting;
        if (c == '}' && --nesting == 0) break;
        ++end;
      }
      if (end >= format.size()) raise(ErrorType::kValueError, "{}", "expected '}' before end of string");
      out += replace_field(format.substr(i + 1, end - i - 1), depth);
      interp_.check_size(out.size());
      i = end;
    }
    return out;
  }

 private:
  std::string replace_field(std::string_view field, int depth) {
    size_t name_end = 0;
    int brackets = 0;
    while (name_end < field.size()) {
      const char c = field[name_end];
      if (c == '[') ++brackets;
      if (c == ']') --brackets;
      if (brackets == 0 && (c == '!' || c == ':')) break;
      ++name_end;
    }
    Value value = lookup(field.substr(0, name_end));
    std::string_view rest = field.substr(name_end);
    if (!rest.empty() && rest[0] == '!') {
      if (rest.size() < 2) raise(ErrorType::kValueError, "end of string while looking for conversion specifier");
      const char conversion = rest[1];
      if (conversion == 's') {
        value = Value::string(python_str(value));
      } else if (conversion == 'r' || conversion == 'a') {
        value = Value::string(python_repr(value));
      } else {
        raise(ErrorType::kValueError, "Unknown conversion specifier {}", conversion);
      }
      rest.remove_prefix(2);
      if (!rest.empty() && rest[0] != ':') raise(ErrorType::kValueError, "expected ':' after conversion specifier");
    }
    std::string spec;
    if (!rest.empty()) spec = run(rest.substr(1), depth + 1);
    if (value.is_undefined() && spec.empty()) return "";
    return format_value(value, spec);
  }

  Value lookup(std::string_view name) {
    size_t first_end = name.find_first_of(".[");
    if (first_end == std::string_view::npos) first_end = name.size();
    const std::string_view first = name.substr(0, first_end);
    Value obj;
    if (first.empty() || first.find_first_not_of("0123456789") == std::string_view::npos) {
      size_t index;
      if (first.empty()) {
        if (manual_)
          raise(ErrorType::kValueError, "cannot switch from manual field specification to automatic field numbering");
        automatic_ = true;
        index = next_index_++;
      } else {
        if (automatic_)
          raise(ErrorType::kValueError, "cannot switch from automatic field numbering to manual field specification");
        manual_ = true;
        index = std::stoul(std::string(first));
      }
      if (index >= args_.positional.size()) {
        raise(ErrorType::kIndexError, "tuple index out of range");
      }
      obj = args_.positional[index];
    } else {
      const Value* found = nullptr;
      for (const auto& [key, v] : args_.keyword) {
        if (key == first) found = &v;
      }
      if (found == nullptr) raise(ErrorType::kKeyError, "{}", repr_string(first));
      obj = *found;
    }
    size_t i = first_end;
    while (i < name.size()) {
      if (name[i] == '.') {
        const size_t end = name.find_first_of(".[", i + 1);
        const std::string_view attr = name.substr(i + 1, end == std::string_view::npos ? end : end - i - 1);
        if (attr.empty()) raise(ErrorType::kValueError, "Empty attribute in format string");
        obj = interp_.getattr(obj, attr);
        i = end == std::string_view::npos ? name.size() : end;
      } else if (name[i] == '[') {
        const size_t close = name.find(']', i);
        if (close == std::string_view::npos) raise(ErrorType::kValueError, "Missing ']' in format string");
        const std::string_view key = name.substr(i + 1, close - i - 1);
        const bool numeric = !key.empty() && key.find_first_not_of("0123456789") == std::string_view::npos;
        obj = interp_.getitem(obj,
                              numeric ? Value::integer(std::stoll(std::string(key))) : Value::string(std::string(key)));
        i = close + 1;
      } else {
        raise(ErrorType::kValueError, "Only '.' or '[' may follow ']' in format field specifier");
      }
    }
    return obj;
  }

  Interpreter& interp_;
  const CallArgs& args_;
  size_t next_index_ = 0;
  bool automatic_ = false;
  bool manual_ = false;
};

}  // namespace

std::string brace_format(Interpreter& interp, std::string_view format, const CallArgs& args) {
  return BraceFormatter(interp, args).run(format, 0);
}

}  // namespace kiln::jinja
