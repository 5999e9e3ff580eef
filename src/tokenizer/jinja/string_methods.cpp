// Python's str methods over UTF-8 values. Positions and widths count code points; whitespace
// is str.isspace's. Methods of a Markup string return Markup, as markupsafe's do.
#include <algorithm>
#include <unordered_map>

#include "tokenizer/jinja/args.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/methods.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/string_format.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

using unicode::decode;
using unicode::encode;

Value same_kind(const Value& self, std::string s) { return Value::string(std::move(s), self.is_safe()); }

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}

// Python slice bounds start/end over `len` code points.
std::pair<size_t, size_t> clamp_range(const BoundArgs& a, size_t start_i, size_t end_i, size_t len) {
  const auto n = static_cast<int64_t>(len);
  auto norm = [&](int64_t x) {
    if (x < 0) x = std::max<int64_t>(0, x + n);
    return static_cast<size_t>(std::min(x, n));
  };
  const size_t start = norm(a.get_int(start_i, 0));
  const size_t end = norm(a.get_int(end_i, n));
  return {start, end};
}

Value no_args(std::string_view name, const CallArgs& args) {
  BoundArgs a(name, args, {});
  return Value::none();
}

Value m_upper(Interpreter&, const Value& s, CallArgs& args) {
  no_args("upper", args);
  return same_kind(s, unicode::upper(s.as_string()));
}
Value m_lower(Interpreter&, const Value& s, CallArgs& args) {
  no_args("lower", args);
  return same_kind(s, unicode::lower(s.as_string()));
}
Value m_casefold(Interpreter&, const Value& s, CallArgs& args) {
  no_args("casefold", args);
  return same_kind(s, unicode::casefold(s.as_string()));
}
Value m_swapcase(Interpreter&, const Value& s, CallArgs& args) {
  no_args("swapcase", args);
  return same_kind(s, unicode::swapcase(s.as_string()));
}
Value m_title(Interpreter&, const Value& s, CallArgs& args) {
  no_args("title", args);
  return same_kind(s, unicode::title(s.as_string()));
}
Value m_capitalize(Interpreter&, const Value& s, CallArgs& args) {
  no_args("capitalize", args);
  return same_kind(s, unicode::capitalize(s.as_string()));
}

Value strip_method(const Value& s, CallArgs& args, const char* name, bool left, bool right) {
  BoundArgs a(name, args, {"chars"});
  const Value* chars = a.has(0) ? &a[0] : nullptr;
  return same_kind(s, strip_string(s.as_string(), chars, left, right));
}
Value m_strip(Interpreter&, const Value& s, CallArgs& args) { return strip_method(s, args, "strip", true, true); }
Value m_lstrip(Interpreter&, const Value& s, CallArgs& args) { return strip_method(s, args, "lstrip", true, false); }
Value m_rstrip(Interpreter&, const Value& s, CallArgs& args) { return strip_method(s, args, "rstrip", false, true); }

Value split_method(const Value& s, CallArgs& args, const char* name, bool from_right) {
  BoundArgs a(name, args, {"sep", "maxsplit"});
  const Value* sep = a.has(0) && !a[0].is_none() ? &a[0] : nullptr;
  ValueList parts = split_string(s.as_string(), sep, a.get_int(1, -1), from_right);
  if (s.is_safe()) {
    for (Value& p : parts) p = Value::string(p.as_string(), true);
  }
  return Value::list(std::move(parts));
}
Value m_split(Interpreter&, const Value& s, CallArgs& args) { return split_method(s, args, "split", false); }
Value m_rsplit(Interpreter&, const Value& s, CallArgs& args) { return split_method(s, args, "rsplit", true); }

Value m_splitlines(Interpreter&, const Value& s, CallArgs& args) {
  BoundArgs a("splitlines", args, {"keepends"});
  const bool keepends = a.get_bool(0, false);
  const std::u32string text = decode(s.as_string());
  ValueList lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!is_line_break(text[i])) continue;
    size_t end = i;
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    lines.push_back(same_kind(s, encode(text.substr(start, (keepends ? i + 1 : end) - start))));
    start = i + 1;
  }
  if (start < text.size()) lines.push_back(same_kind(s, encode(text.substr(start))));
  return Value::list(std::move(lines));
}

Value affix_method(const Value& s, CallArgs& args, const char* name, bool at_start) {
  BoundArgs a(name, args, {"prefix", "start", "end"}, 1);
  if (!a.has(1) && !a.has(2) && a[0].is_string()) {
    // Whole-string test: comparing UTF-8 bytes is comparing code points.
    const std::string& text = s.as_string();
    const std::string& affix = a[0].as_string();
    if (affix.size() > text.size()) return Value::boolean(false);
    return Value::boolean(at_start ? text.compare(0, affix.size(), affix) == 0
                                   : text.compare(text.size() - affix.size(), affix.size(), affix) == 0);
  }
  const std::u32string text = decode(s.as_string());
  const auto range = clamp_range(a, 1, 2, text.size());
  const size_t start = range.first;
  const size_t end = range.second;
  const std::u32string window = start <= end ? text.substr(start, end - start) : std::u32string();
  auto matches = [&](const Value& affix) {
    if (!affix.is_string()) {
      raise(ErrorType::kTypeError, "{} first arg must be str or a tuple of str, not {}", name, type_name(affix));
    }
    if (start > text.size() || start > end) return false;
    const std::u32string x = decode(affix.as_string());
    if (x.size() > window.size()) return false;
    return at_start ? window.compare(0, x.size(), x) == 0 : window.compare(window.size() - x.size(), x.size(), x) == 0;
  };
  if (a[0].is_tuple()) {
    for (const Value& item : a[0].items()) {
      if (matches(item)) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  return Value::boolean(matches(a[0]));
}
Value m_startswith(Interpreter&, const Value& s, CallArgs& args) { return affix_method(s, args, "startswith", true); }
Value m_endswith(Interpreter&, const Value& s, CallArgs& args) { return affix_method(s, args, "endswith", false); }

enum class Search { kFind, kRFind, kIndex, kRIndex, kCount };

Value search_method(const Value& s, CallArgs& args, const char* name, Search mode) {
  BoundArgs a(name, args, {"sub", "start", "end"}, 1);
  const std::u32string text = decode(s.as_string());
  const std::u32string sub = decode(expect_string(a[0], name));
  const auto [start, end] = clamp_range(a, 1, 2, text.size());
  if (mode == Search::kCount) {
    if (start > end || start > text.size()) return Value::integer(0);
    if (sub.empty()) return Value::integer(static_cast<int64_t>(end - start + 1));
    int64_t n = 0;
    for (size_t i = start; i + sub.size() <= end;) {
      if (text.compare(i, sub.size(), sub) == 0) {
        ++n;
        i += sub.size();
      } else {
        ++i;
      }
    }
    return Value::integer(n);
  }
  int64_t found = -1;
  if (start <= end && start + sub.size() <= end) {
    const std::u32string_view window(text.data() + start, end - start);
    const size_t pos = (mode == Search::kFind || mode == Search::kIndex) ? window.find(sub) : window.rfind(sub);
    if (pos != std::u32string_view::npos) found = static_cast<int64_t>(start + pos);
  }
  if (found < 0 && (mode == Search::kIndex || mode == Search::kRIndex)) {
    raise(ErrorType::kValueError, "substring not found");
  }
  return Value::integer(found);
}
Value m_find(Interpreter&, const Value& s, CallArgs& args) { return search_method(s, args, "find", Search::kFind); }
Value m_rfind(Interpreter&, const Value& s, CallArgs& args) { return search_method(s, args, "rfind", Search::kRFind); }
Value m_index(Interpreter&, const Value& s, CallArgs& args) { return search_method(s, args, "index", Search::kIndex); }
Value m_rindex(Interpreter&, const Value& s, CallArgs& args) {
  return search_method(s, args, "rindex", Search::kRIndex);
}
Value m_count(Interpreter&, const Value& s, CallArgs& args) { return search_method(s, args, "count", Search::kCount); }

Value m_replace(Interpreter& interp, const Value& s, CallArgs& args) {
  BoundArgs a("replace", args, {"old", "new", "count"}, 2);
  const std::string& old_text = expect_string(a[0], "replace");
  const std::string& new_text = expect_string(a[1], "replace");
  int64_t count = a.get_int(2, -1);
  const std::string& text = s.as_string();
  std::string out;
  if (old_text.empty()) {
    // Python inserts `new` before every code point and at the end.
    size_t i = 0;
    while (i < text.size() && count != 0) {
      out += new_text;
      const size_t start = i;
      next_code_point(text, i);
      out.append(text, start, i - start);
      --count;
      interp.check_size(out.size());
    }
    if (count != 0) out += new_text;
    out.append(text, i, std::string::npos);
    return same_kind(s, std::move(out));
  }
  size_t pos = 0;
  while (count != 0) {
    const size_t hit = text.find(old_text, pos);
    if (hit == std::string::npos) break;
    out.append(text, pos, hit - pos);
    out += new_text;
    pos = hit + old_text.size();
    --count;
    interp.check_size(out.size());
  }
  out.append(text, pos, std::string::npos);
  return same_kind(s, std::move(out));
}

Value m_join(Interpreter& interp, const Value& s, CallArgs& args) {
  BoundArgs a("join", args, {"iterable"}, 1);
  const ValueList items = interp.iterate(a[0]);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      raise(ErrorType::kTypeError, "sequence item {}: expected str instance, {} found", i, type_name(items[i]));
    }
    if (i > 0) out += s.as_string();
    out += items[i].as_string();
    interp.check_size(out.size());
  }
  return same_kind(s, std::move(out));
}

char32_t fill_char(const BoundArgs& a, size_t i) {
  if (!a.has(i)) return U' ';
  const std::u32string fill = decode(expect_string(a[i], "fill"));
  if (fill.size() != 1) {
    raise(ErrorType::kTypeError, "The fill character must be exactly one character long");
  }
  return fill[0];
}

enum class Justify { kLeft, kRight, kCenter };

Value justify_method(Interpreter& interp, const Value& s, CallArgs& args, const char* name, Justify how) {
  BoundArgs a(name, args, {"width", "fillchar"}, 1);
  const int64_t width = a.get_int(0, 0);
  const char32_t fill = fill_char(a, 1);
  const std::u32string text = decode(s.as_string());
  if (width <= static_cast<int64_t>(text.size())) return s;
  interp.check_size(static_cast<size_t>(width) * 4);
  const size_t margin = static_cast<size_t>(width) - text.size();
  size_t left = 0;
  if (how == Justify::kRight) left = margin;
  // CPython's centering puts the odd space on the left when width is odd.
  if (how == Justify::kCenter) left = margin / 2 + (margin & static_cast<size_t>(width) & 1);
  const std::u32string out = std::u32string(left, fill) + text + std::u32string(margin - left, fill);
  return same_kind(s, encode(out));
}
Value m_center(Interpreter& i, const Value& s, CallArgs& args) {
  return justify_method(i, s, args, "center", Justify::kCenter);
}
Value m_ljust(Interpreter& i, const Value& s, CallArgs& args) {
  return justify_method(i, s, args, "ljust", Justify::kLeft);
}
Value m_rjust(Interpreter& i, const Value& s, CallArgs& args) {
  return justify_method(i, s, args, "rjust", Justify::kRight);
}

Value m_zfill(Interpreter& interp, const Value& s, CallArgs& args) {
  BoundArgs a("zfill", args, {"width"}, 1);
  const int64_t width = a.get_int(0, 0);
  std::string text = s.as_string();
  const auto len = static_cast<int64_t>(unicode::length(text));
  if (width <= len) return s;
  interp.check_size(static_cast<size_t>(width));
  const size_t sign = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  text.insert(sign, static_cast<size_t>(width - len), '0');
  return same_kind(s, std::move(text));
}

Value partition_method(const Value& s, CallArgs& args, const char* name, bool from_right) {
  BoundArgs a(name, args, {"sep"}, 1);
  const std::string& sep = expect_string(a[0], name);
  if (sep.empty()) raise(ErrorType::kValueError, "empty separator");
  const std::string& text = s.as_string();
  const size_t hit = from_right ? text.rfind(sep) : text.find(sep);
  if (hit == std::string::npos) {
    return from_right ? Value::tuple({same_kind(s, ""), same_kind(s, ""), s})
                      : Value::tuple({s, same_kind(s, ""), same_kind(s, "")});
  }
  return Value::tuple(
      {same_kind(s, text.substr(0, hit)), same_kind(s, sep), same_kind(s, text.substr(hit + sep.size()))});
}
Value m_partition(Interpreter&, const Value& s, CallArgs& args) {
  return partition_method(s, args, "partition", false);
}
Value m_rpartition(Interpreter&, const Value& s, CallArgs& args) {
  return partition_method(s, args, "rpartition", true);
}

Value m_removeprefix(Interpreter&, const Value& s, CallArgs& args) {
  BoundArgs a("removeprefix", args, {"prefix"}, 1);
  const std::string& p = expect_string(a[0], "removeprefix");
  const std::string& t = s.as_string();
  return same_kind(s, t.compare(0, p.size(), p) == 0 && t.size() >= p.size() ? t.substr(p.size()) : t);
}

Value m_removesuffix(Interpreter&, const Value& s, CallArgs& args) {
  BoundArgs a("removesuffix", args, {"suffix"}, 1);
  const std::string& p = expect_string(a[0], "removesuffix");
  const std::string& t = s.as_string();
  const bool ends = !p.empty() && t.size() >= p.size() && t.compare(t.size() - p.size(), p.size(), p) == 0;
  return same_kind(s, ends ? t.substr(0, t.size() - p.size()) : t);
}

template <bool (*Pred)(char32_t)>
Value all_of_method(const Value& s, CallArgs& args, const char* name) {
  no_args(name, args);
  const std::u32string text = decode(s.as_string());
  return Value::boolean(!text.empty() && std::all_of(text.begin(), text.end(), Pred));
}
bool is_alnum(char32_t c) { return unicode::is_alpha(c) || unicode::is_numeric(c); }
bool is_ascii_char(char32_t c) { return c < 0x80; }
Value m_isalnum(Interpreter&, const Value& s, CallArgs& a) { return all_of_method<is_alnum>(s, a, "isalnum"); }
Value m_isalpha(Interpreter&, const Value& s, CallArgs& a) { return all_of_method<unicode::is_alpha>(s, a, "isalpha"); }
Value m_isdecimal(Interpreter&, const Value& s, CallArgs& a) {
  return all_of_method<unicode::is_decimal>(s, a, "isdecimal");
}
Value m_isdigit(Interpreter&, const Value& s, CallArgs& a) {
  return all_of_method<unicode::is_decimal>(s, a, "isdigit");
}
Value m_isnumeric(Interpreter&, const Value& s, CallArgs& a) {
  return all_of_method<unicode::is_numeric>(s, a, "isnumeric");
}
Value m_isspace(Interpreter&, const Value& s, CallArgs& a) { return all_of_method<unicode::is_space>(s, a, "isspace"); }
Value m_isprintable(Interpreter&, const Value& s, CallArgs& args) {
  no_args("isprintable", args);
  const std::u32string text = decode(s.as_string());
  return Value::boolean(std::all_of(text.begin(), text.end(), unicode::is_printable));
}
Value m_isascii(Interpreter&, const Value& s, CallArgs& args) {
  no_args("isascii", args);
  const std::u32string text = decode(s.as_string());
  return Value::boolean(std::all_of(text.begin(), text.end(), is_ascii_char));
}

// islower/isupper: at least one cased character, and no cased character of the other case.
Value case_test(const Value& s, CallArgs& args, const char* name, bool lower) {
  no_args(name, args);
  bool cased = false;
  for (char32_t c : decode(s.as_string())) {
    if (lower ? unicode::is_upper(c) : unicode::is_lower(c)) return Value::boolean(false);
    if (unicode::is_cased(c)) cased = true;
  }
  return Value::boolean(cased);
}
Value m_islower(Interpreter&, const Value& s, CallArgs& a) { return case_test(s, a, "islower", true); }
Value m_isupper(Interpreter&, const Value& s, CallArgs& a) { return case_test(s, a, "isupper", false); }

Value m_istitle(Interpreter&, const Value& s, CallArgs& args) {
  no_args("istitle", args);
  bool cased = false;
  bool previous_cased = false;
  for (char32_t c : decode(s.as_string())) {
    if (unicode::is_cased(c) && !unicode::is_lower(c)) {  // upper or title case
      if (previous_cased) return Value::boolean(false);
      previous_cased = cased = true;
    } else if (unicode::is_lower(c)) {
      if (!previous_cased) return Value::boolean(false);
      previous_cased = cased = true;
    } else {
      previous_cased = false;
    }
  }
  return Value::boolean(cased);
}

Value m_isidentifier(Interpreter&, const Value& s, CallArgs& args) {
  no_args("isidentifier", args);
  const std::u32string text = decode(s.as_string());
  if (text.empty() || !unicode::is_identifier_start(text[0])) return Value::boolean(false);
  return Value::boolean(std::all_of(text.begin() + 1, text.end(), unicode::is_identifier_continue));
}

Value m_format(Interpreter& interp, const Value& s, CallArgs& args) {
  return same_kind(s, brace_format(interp, s.as_string(), args));
}

Value m_expandtabs(Interpreter& interp, const Value& s, CallArgs& args) {
  BoundArgs a("expandtabs", args, {"tabsize"});
  const int64_t tabsize = a.get_int(0, 8);
  std::u32string out;
  size_t column = 0;
  for (char32_t c : decode(s.as_string())) {
    if (c == '\t') {
      if (tabsize > 0) {
        const size_t n = static_cast<size_t>(tabsize) - column % static_cast<size_t>(tabsize);
        interp.check_size(out.size() + n);
        out.append(n, U' ');
        column += n;
      }
    } else {
      out.push_back(c);
      column = (c == '\n' || c == '\r') ? 0 : column + 1;
    }
    interp.check_size(out.size());
  }
  return same_kind(s, encode(out));
}

const std::unordered_map<std::string_view, MethodFn>& string_methods() {
  static const std::unordered_map<std::string_view, MethodFn> kMethods = {
      {"upper", m_upper},
      {"lower", m_lower},
      {"casefold", m_casefold},
      {"swapcase", m_swapcase},
      {"title", m_title},
      {"capitalize", m_capitalize},
      {"strip", m_strip},
      {"lstrip", m_lstrip},
      {"rstrip", m_rstrip},
      {"split", m_split},
      {"rsplit", m_rsplit},
      {"splitlines", m_splitlines},
      {"startswith", m_startswith},
      {"endswith", m_endswith},
      {"find", m_find},
      {"rfind", m_rfind},
      {"index", m_index},
      {"rindex", m_rindex},
      {"count", m_count},
      {"replace", m_replace},
      {"join", m_join},
      {"center", m_center},
      {"ljust", m_ljust},
      {"rjust", m_rjust},
      {"zfill", m_zfill},
      {"partition", m_partition},
      {"rpartition", m_rpartition},
      {"removeprefix", m_removeprefix},
      {"removesuffix", m_removesuffix},
      {"isalnum", m_isalnum},
      {"isalpha", m_isalpha},
      {"isascii", m_isascii},
      {"isdecimal", m_isdecimal},
      {"isdigit", m_isdigit},
      {"isnumeric", m_isnumeric},
      {"isspace", m_isspace},
      {"isprintable", m_isprintable},
      {"islower", m_islower},
      {"isupper", m_isupper},
      {"istitle", m_istitle},
      {"isidentifier", m_isidentifier},
      {"format", m_format},
      {"expandtabs", m_expandtabs},
  };
  return kMethods;
}

}  // namespace

MethodFn find_string_method(std::string_view name) {
  auto it = string_methods().find(name);
  return it == string_methods().end() ? nullptr : it->second;
}

std::string strip_string(const std::string& s, const Value* chars, bool left, bool right) {
  std::u32string set;
  const bool whitespace = chars == nullptr || chars->is_none();
  if (!whitespace) {
    if (chars->is_undefined()) raise_undefined(*chars);
    if (!chars->is_string()) raise(ErrorType::kTypeError, "strip arg must be None or str");
    set = decode(chars->as_string());
  }
  auto strip_it = [&](char32_t c) { return whitespace ? unicode::is_space(c) : set.find(c) != std::u32string::npos; };
  // Walks code points from both ends in place: decoding the whole string would cost more than
  // the strip itself on long messages.
  size_t begin = 0;
  size_t end = s.size();
  while (left && begin < end) {
    size_t next = begin;
    if (!strip_it(next_code_point(s, next))) break;
    begin = next;
  }
  while (right && end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t i = start;
    if (!strip_it(next_code_point(s, i))) break;
    end = start;
  }
  return s.substr(begin, end - begin);
}

ValueList split_string(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right) {
  ValueList parts;
  if (sep == nullptr) {
    std::u32string text = decode(s);
    if (from_right) std::reverse(text.begin(), text.end());
    size_t i = 0;
    while (true) {
      while (i < text.size() && unicode::is_space(text[i])) ++i;
      if (i >= text.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        // The remainder keeps its trailing whitespace, as CPython does.
        parts.push_back(Value::string(encode(text.substr(i))));
        break;
      }
      const size_t start = i;
      while (i < text.size() && !unicode::is_space(text[i])) ++i;
      parts.push_back(Value::string(encode(text.substr(start, i - start))));
    }
    if (from_right) {
      for (Value& p : parts) {
        std::u32string t = decode(p.as_string());
        std::reverse(t.begin(), t.end());
        p = Value::string(encode(t));
      }
      std::reverse(parts.begin(), parts.end());
    }
    return parts;
  }
  const std::string& delim = expect_string(*sep, "split");
  if (delim.empty()) raise(ErrorType::kValueError, "empty separator");
  if (!from_right) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t hit = s.find(delim, pos);
      if (hit == std::string::npos) break;
      parts.push_back(Value::string(s.substr(pos, hit - pos)));
      pos = hit + delim.size();
    }
    parts.push_back(Value::string(s.substr(pos)));
    return parts;
  }
  size_t end = s.size();
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    if (end < delim.size()) break;
    const size_t hit = s.rfind(delim, end - delim.size());
    if (hit == std::string::npos) break;
    parts.push_back(Value::string(s.substr(hit + delim.size(), end - hit - delim.size())));
    end = hit;
  }
  parts.push_back(Value::string(s.substr(0, end)));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

}  // namespace kiln::jinja
