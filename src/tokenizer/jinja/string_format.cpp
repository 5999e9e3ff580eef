// CPython's printf-style formatting (Objects/unicodeobject.c), str.format (string.Formatter,
// sandboxed as jinja2.sandbox.SandboxedFormatter) and the format-spec mini-language.
// Widths and precisions count code points, as Python's do.
#include "tokenizer/jinja/string_format.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

// Pads to `width` code points; align is '<', '>', '^' or '=' (pad after a sign/prefix of
// `sign_len` bytes).
std::string pad(std::string s, size_t width, char align, std::string_view fill, size_t sign_len = 0) {
  const size_t len = unicode::length(s);
  if (len >= width) return s;
  const size_t n = width - len;
  auto fills = [&](size_t k) {
    std::string out;
    for (size_t i = 0; i < k; ++i) out += fill;
    return out;
  };
  switch (align) {
    case '<': return s + fills(n);
    case '^': return fills(n / 2) + s + fills(n - n / 2);
    case '=': return s.substr(0, sign_len) + fills(n) + s.substr(sign_len);
    default: return fills(n) + s;
  }
}

std::string truncate_code_points(const std::string& s, size_t n) {
  size_t i = 0;
  for (size_t k = 0; k < n && i < s.size(); ++k) next_code_point(s, i);
  return s.substr(0, i);
}

std::string ascii_repr(const Value& v) {
  const std::string repr = python_repr(v);
  std::string out;
  for (size_t i = 0; i < repr.size();) {
    const char32_t cp = next_code_point(repr, i);
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp <= 0xFF) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (cp <= 0xFFFF) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else {
      out += fmt::format("\\U{:08x}", static_cast<unsigned>(cp));
    }
  }
  return out;
}

std::string digits_in_base(uint64_t v, int base, bool upper) {
  if (v == 0) return "0";
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  for (; v > 0; v /= static_cast<uint64_t>(base)) out.insert(out.begin(), set[v % static_cast<uint64_t>(base)]);
  return out;
}

uint64_t magnitude(int64_t v) { return v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v); }

std::string c_format_double(std::string_view flags, int width, int precision, char type, double v) {
  std::string spec = fmt::format("%{}", flags);
  if (width > 0) spec += std::to_string(width);
  if (precision >= 0) spec += fmt::format(".{}", precision);
  spec.push_back(type);
  const int n = std::snprintf(nullptr, 0, spec.c_str(), v);
  std::string out(static_cast<size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, spec.c_str(), v);
  return out;
}

struct PercentSpec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char type = 's';
  bool has(char f) const { return flags.find(f) != std::string::npos; }
};

std::string percent_integer(const PercentSpec& spec, const Value& v) {
  const char t = spec.type;
  const bool decimal = t == 'd' || t == 'i' || t == 'u';
  int64_t n;
  if (v.is_integral()) {
    n = v.as_int();
  } else if (v.is_float() && decimal) {
    const double d = std::trunc(v.as_float());
    if (std::isnan(d)) raise(ErrorType::kValueError, "cannot convert float NaN to integer");
    if (std::isinf(d)) raise(ErrorType::kOverflowError, "cannot convert float infinity to integer");
    if (d < -9.2e18 || d > 9.2e18) {
      raise(ErrorType::kLimitError, "integer {} does not fit kiln's 64-bit integers", d);
    }
    n = static_cast<int64_t>(d);
  } else {
    raise(ErrorType::kTypeError, "%{} format: {} is required, not {}", t, decimal ? "a real number" : "an integer",
          type_name(v));
  }
  const int base = decimal ? 10 : t == 'o' ? 8 : 16;
  std::string digits = digits_in_base(magnitude(n), base, t == 'X');
  if (spec.precision > 0 && digits.size() < static_cast<size_t>(spec.precision)) {
    digits.insert(0, static_cast<size_t>(spec.precision) - digits.size(), '0');
  }
  std::string prefix = n < 0 ? "-" : spec.has('+') ? "+" : spec.has(' ') ? " " : "";
  if (spec.has('#') && !decimal) prefix += t == 'o' ? "0o" : t == 'x' ? "0x" : "0X";
  const size_t width = spec.width > 0 ? static_cast<size_t>(spec.width) : 0;
  if (spec.has('-')) return pad(prefix + digits, width, '<', " ");
  if (spec.has('0')) return pad(prefix + digits, width, '=', "0", prefix.size());
  return pad(prefix + digits, width, '>', " ");
}

std::string percent_one(const PercentSpec& spec, const Value& v) {
  // %d and %f convert with int() / float(), which Undefined defines to raise its UndefinedError;
  // %x, %o and %c want __index__ or a str, which it lacks: those are TypeErrors below.
  if (v.is_undefined() && std::string_view("diueEfFgG").find(spec.type) != std::string_view::npos) {
    raise_undefined(v);
  }
  const size_t width = spec.width > 0 ? static_cast<size_t>(spec.width) : 0;
  const char align = spec.has('-') ? '<' : '>';
  switch (spec.type) {
    case 's':
    case 'r':
    case 'a': {
      std::string s = spec.type == 's' ? python_str(v) : spec.type == 'r' ? python_repr(v) : ascii_repr(v);
      if (spec.precision >= 0) s = truncate_code_points(s, static_cast<size_t>(spec.precision));
      return pad(std::move(s), width, align, " ");
    }
    case 'c': {
      std::string s;
      if (v.is_integral()) {
        if (v.as_int() < 0 || v.as_int() > 0x10FFFF) {
          raise(ErrorType::kOverflowError, "%c arg not in range(0x110000)");
        }
        if (v.as_int() >= 0xD800 && v.as_int() <= 0xDFFF) {
          raise(ErrorType::kValueError, "%c of a surrogate code point is not valid UTF-8 text");
        }
        append_utf8(s, static_cast<char32_t>(v.as_int()));
      } else if (v.is_string() && unicode::length(v.as_string()) == 1) {
        s = v.as_string();
      } else {
        raise(ErrorType::kTypeError, "%c requires int or char");
      }
      return pad(std::move(s), width, align, " ");
    }
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': return percent_integer(spec, v);
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      if (!v.is_number()) raise(ErrorType::kTypeError, "must be real number, not {}", type_name(v));
      return c_format_double(spec.flags, spec.width, spec.precision, spec.type, v.as_float());
    default: raise(ErrorType::kValueError, "unsupported format character '{}'", spec.type);
  }
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string percent_format(Interpreter& interp, std::string_view format, const Value& args) {
  const ValueList single{args};
  const ValueList& positional = args.is_tuple() ? args.items() : single;
  const Dict* mapping = args.is_dict() ? &args.as_dict() : nullptr;
  size_t next_arg = 0;
  auto take = [&]() -> const Value& {
    if (next_arg >= positional.size()) {
      raise(ErrorType::kTypeError, "not enough arguments for format string");
    }
    return positional[next_arg++];
  };
  auto read_number = [&](size_t& i) {
    if (i < format.size() && format[i] == '*') {
      ++i;
      const Value& v = take();
      if (!v.is_integral()) raise(ErrorType::kTypeError, "* wants int");
      if (v.as_int() > 1'000'000 || v.as_int() < -1'000'000) {
        raise(ErrorType::kLimitError, "format width or precision {} exceeds kiln's limit of 1000000", v.as_int());
      }
      return static_cast<int>(v.as_int());
    }
    int n = 0;
    while (i < format.size() && format[i] >= '0' && format[i] <= '9') {
      n = n * 10 + (format[i++] - '0');
      if (n > 1'000'000) raise(ErrorType::kValueError, "width too big");
    }
    return n;
  };
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out.push_back(format[i]);
      continue;
    }
    if (++i >= format.size()) raise(ErrorType::kValueError, "incomplete format");
    const Value* value = nullptr;
    if (format[i] == '(') {
      // Python takes anything with __getitem__ but a tuple or str as the mapping.
      if (args.is_undefined()) raise_undefined(args);
      if (args.is_list()) raise(ErrorType::kTypeError, "list indices must be integers or slices, not str");
      if (mapping == nullptr) raise(ErrorType::kTypeError, "format requires a mapping");
      int depth = 1;
      const size_t start = ++i;
      while (i < format.size() && depth > 0) {
        if (format[i] == '(') ++depth;
        if (format[i] == ')') --depth;
        ++i;
      }
      if (depth > 0) raise(ErrorType::kValueError, "incomplete format key");
      const std::string key(format.substr(start, i - 1 - start));
      value = mapping->find(key);
      if (value == nullptr) raise(ErrorType::kKeyError, "{}", repr_string(key));
    }
    PercentSpec spec;
    while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos) {
      spec.flags.push_back(format[i++]);
    }
    spec.width = read_number(i);
    if (spec.width < 0) {
      spec.flags.push_back('-');
      spec.width = -spec.width;
    }
    if (i < format.size() && format[i] == '.') {
      ++i;
      spec.precision = read_number(i);
    }
    while (i < format.size() && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
    if (i >= format.size()) raise(ErrorType::kValueError, "incomplete format");
    spec.type = format[i];
    if (spec.type == '%') {
      out.push_back('%');
      continue;
    }
    out += percent_one(spec, value != nullptr ? *value : take());
    interp.check_size(out.size());
  }
  const bool mapping_like = mapping != nullptr || args.is_list() || args.is_undefined();
  if (!mapping_like && next_arg < positional.size()) {
    raise(ErrorType::kTypeError, "not all arguments converted during string formatting");
  }
  return out;
}

}  // namespace kiln::jinja
