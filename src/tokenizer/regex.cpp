// PCRE2 wrapper: Oniguruma-to-PCRE2 translation, JIT compilation, and match iteration with a
// per-thread match block and JIT stack (so concurrent encodes never share mutable state).
#include "tokenizer/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>

#include "tokenizer/unicode.hpp"
#include "util/error.hpp"

namespace kiln::tok {
namespace {

constexpr std::string_view kSpaceClass = "\\t\\n\\x0B\\f\\r\\x{85}\\p{Z}";
constexpr std::string_view kWordClass = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}";
constexpr std::string_view kHexClass = "0-9a-fA-F";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

// Expands a class shorthand; inside [...] only the positive ones can be spliced in.
bool expand_shorthand(char letter, bool in_class, std::string& out) {
  std::string_view body;
  bool negated = false;
  switch (letter) {
    case 's': body = kSpaceClass; break;
    case 'S': body = kSpaceClass, negated = true; break;
    case 'w': body = kWordClass; break;
    case 'W': body = kWordClass, negated = true; break;
    case 'h': body = kHexClass; break;
    case 'H': body = kHexClass, negated = true; break;
    default: return false;
  }
  if (in_class) {
    if (negated) return false;  // keep PCRE2's own \S / \W (see header)
    out += body;
  } else {
    out += negated ? "[^" : "[";
    out += body;
    out += ']';
  }
  return true;
}

// Ruby's (?m) is "dot matches newline", PCRE2's (?s); Ruby has no PCRE2-style (?m).
std::size_t copy_group_flags(std::string_view pattern, std::size_t i, std::string& out) {
  // pattern[i] == '(' and pattern[i + 1] == '?'
  out += "(?";
  std::size_t j = i + 2;
  while (j < pattern.size() && (std::isalpha(static_cast<unsigned char>(pattern[j])) || pattern[j] == '-')) {
    out += pattern[j] == 'm' ? 's' : pattern[j];
    ++j;
  }
  return j;
}

struct ThreadMatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  ThreadMatchState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadMatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

ThreadMatchState& thread_match_state() {
  thread_local ThreadMatchState state;
  return state;
}

}  // namespace

std::string translate_oniguruma_pattern(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() * 2);
  int class_depth = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (!expand_shorthand(next, class_depth > 0, out)) {
        out += c;
        out += next;
      }
      ++i;
    } else if (c == '[') {
      ++class_depth;
      out += c;
      // A ']' right after '[' or '[^' is a literal member, not the end of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
    } else if (c == ']' && class_depth > 0) {
      --class_depth;
      out += c;
    } else if (c == '(' && class_depth == 0 && i + 1 < pattern.size() && pattern[i + 1] == '?') {
      i = copy_group_flags(pattern, i, out) - 1;
    } else {
      out += c;
    }
  }
  return out;
}

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

Regex Regex::compile(std::string_view pattern, std::string pcre2_pattern, std::string_view origin) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // NOTE: Ruby syntax makes ^ and $ line anchors, hence MULTILINE.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre2_pattern.data()), pcre2_pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error, &offset, nullptr);
  if (code == nullptr) {
    fail(ErrorKind::kUnsupported, "{}: cannot compile regex \"{}\" (as PCRE2 \"{}\"): {} at offset {}", origin, pattern,
         pcre2_pattern, pcre2_message(error), offset);
  }
  auto compiled = std::make_shared<Code>();
  compiled->code = code;
  compiled->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  Regex regex;
  regex.code_ = std::move(compiled);
  regex.pattern_ = std::string(pattern);
  return regex;
}

Regex Regex::from_oniguruma(std::string_view pattern, std::string_view origin) {
  return compile(pattern, translate_oniguruma_pattern(pattern), origin);
}

Regex Regex::from_literal(std::string_view literal, std::string_view origin) {
  std::string escaped;
  for (const char c : literal) {
    // A backslash before any ASCII non-alphanumeric character makes it literal in PCRE2.
    if (static_cast<unsigned char>(c) < 0x80 && !std::isalnum(static_cast<unsigned char>(c))) {
      escaped += '\\';
    }
    escaped += c;
  }
  return compile(literal, std::move(escaped), origin);
}

Regex Regex::from_pattern_json(const Json& spec, std::string_view origin) {
  if (spec.is_object() && spec.size() == 1) {
    if (auto it = spec.find("String"); it != spec.end() && it->is_string()) {
      return from_literal(it->get<std::string>(), origin);
    }
    if (auto it = spec.find("Regex"); it != spec.end() && it->is_string()) {
      return from_oniguruma(it->get<std::string>(), origin);
    }
  }
  fail("{}: pattern must be {{\"String\": ...}} or {{\"Regex\": ...}}, got {}", origin, spec.dump());
}

void Regex::for_each_match(std::string_view text, FunctionRef<void(std::size_t, std::size_t)> on_match) const {
  ThreadMatchState& state = thread_match_state();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t search_from = 0;
  std::size_t last_match_end = std::string_view::npos;
  while (search_from <= text.size()) {
    const int rc = code_->jit
                       ? pcre2_jit_match(code_->code, subject, text.size(), search_from, 0, state.data, state.context)
                       : pcre2_match(code_->code, subject, text.size(), search_from, PCRE2_NO_UTF_CHECK, state.data,
                                     state.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      fail(ErrorKind::kInvalidInput, "regex \"{}\" failed on a {}-byte text at byte {}: {}", pattern_, text.size(),
           search_from, pcre2_message(rc));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    const std::size_t start = ovector[0], end = ovector[1];
    if (start == end && end == last_match_end) {
      if (end >= text.size()) return;
      search_from = end + utf8_sequence_length(static_cast<unsigned char>(text[end]));
      continue;
    }
    search_from = end;
    last_match_end = end;
    on_match(start, end);
  }
}

}  // namespace kiln::tok
