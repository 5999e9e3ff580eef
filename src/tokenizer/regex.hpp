// PCRE2 (UTF + UCP + JIT) regexes that behave like the Oniguruma ones HF `tokenizers` compiles:
// patterns are translated where the two engines' classes differ, and iteration follows
// Oniguruma's rule for empty matches. Compiled patterns are immutable and shared across threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/function_ref.hpp"
#include "util/json.hpp"

namespace kiln::tok {

// Rewrites an Oniguruma (Ruby syntax) pattern into PCRE2 syntax with the same meaning:
// \s is exactly White_Space (PCRE2's also has U+180E), \w is Alphabetic+Mark+Nd+Pc plus the
// Latin-1 digits-like No characters Oniguruma counts, \h is a hex digit, and Ruby's (?m) is
// PCRE2's (?s). Inside a character class, \S \W \D keep PCRE2's meaning (they cannot be
// expanded there); that differs only at U+180E and for the few characters named above.
std::string translate_oniguruma_pattern(std::string_view pattern);

class Regex {
 public:
  // Compiles `pattern` (Oniguruma syntax). Errors name `origin` (e.g. "tokenizer.json:
  // pre_tokenizer.pretokenizers[0]") and the PCRE2 message with its offset.
  static Regex from_oniguruma(std::string_view pattern, std::string_view origin);
  // Matches `literal` exactly (HF compiles String patterns as an escaped regex, so an empty
  // literal matches the empty string at every position, and so does this).
  static Regex from_literal(std::string_view literal, std::string_view origin);
  // A pattern already in PCRE2 syntax (for kiln's own fixed patterns).
  static Regex from_pcre2(std::string_view pattern, std::string_view origin) {
    return compile(pattern, std::string(pattern), origin);
  }
  // A tokenizer.json pattern object: {"String": "..."} or {"Regex": "..."}.
  static Regex from_pattern_json(const Json& spec, std::string_view origin);

  // Calls on_match(start, end) for each match, left to right, non-overlapping. An empty match
  // right where the previous match ended is skipped, as Oniguruma's find_iter does.
  // `text` must be valid UTF-8 (it is not re-checked).
  void for_each_match(std::string_view text, FunctionRef<void(std::size_t, std::size_t)> on_match) const;

 private:
  struct Code;
  static Regex compile(std::string_view pattern, std::string pcre2_pattern, std::string_view origin);

  std::shared_ptr<const Code> code_;
  std::string pattern_;
};

}  // namespace kiln::tok
