// Mirrors CPython's object repr rules for the types a template can hold.
#include "tokenizer/jinja/python_repr.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {

std::string repr_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  // Shortest round-trip digits, as Python's repr; then Python's layout rules.
  auto result = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(result.ptr - buf));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::stoi(std::string(sci.substr(e + 1)));
  const int decpt = exponent + 1;  // digits[0] sits at 10^(decpt-1)
  const int ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += fmt::format("0.{}{}", std::string(static_cast<size_t>(-decpt), '0'), digits);
    } else if (decpt >= ndigits) {
      out += digits + std::string(static_cast<size_t>(decpt - ndigits), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (ndigits > 1) out += fmt::format(".{}", digits.substr(1));
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

std::string repr_string(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (cp < 0x7F || unicode::is_printable(cp)) {
      append_utf8(out, cp);
    } else if (cp <= 0xFF) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (cp <= 0xFFFF) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else {
      out += fmt::format("\\U{:08x}", static_cast<unsigned>(cp));
    }
  }
  out.push_back(quote);
  return out;
}

namespace {

void append_repr(std::string& out, const Value& v);

void append_sequence(std::string& out, const ValueList& items, char open, char close, bool tuple) {
  out.push_back(open);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    append_repr(out, items[i]);
  }
  if (tuple && items.size() == 1) out.push_back(',');
  out.push_back(close);
}

void append_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: out += "Undefined"; return;
    case Value::Kind::kString:
      if (v.is_safe()) {
        out += fmt::format("Markup({})", repr_string(v.as_string()));
      } else {
        out += repr_string(v.as_string());
      }
      return;
    case Value::Kind::kList: append_sequence(out, v.items(), '[', ']', false); return;
    case Value::Kind::kTuple: append_sequence(out, v.items(), '(', ')', true); return;
    case Value::Kind::kDict: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, value] : v.as_dict().entries()) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, key);
        out += ": ";
        append_repr(out, value);
      }
      out.push_back('}');
      return;
    }
    default: append_str(out, v);
  }
}

}  // namespace

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: out += repr_float(v.as_float()); return;
    case Value::Kind::kString: out += v.as_string(); return;
    case Value::Kind::kObject: out += v.as_object().repr(); return;
    default: append_repr(out, v);
  }
}

std::string python_str(const Value& v) {
  if (v.is_string()) return v.as_string();
  std::string out;
  append_str(out, v);
  return out;
}

std::string python_repr(const Value& v) {
  std::string out;
  append_repr(out, v);
  return out;
}

}  // namespace kiln::jinja
