// Oracle: Oniguruma semantics as HF `tokenizers` uses them (tokenizers/src/utils/onig.rs:
// an empty match right after the previous match is skipped) and the class definitions measured
// against `tokenizers` on every code point (\s is exactly White_Space).
#include "tokenizer/regex.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/test_support.hpp"

namespace kiln::tok {
namespace {

std::vector<std::pair<std::size_t, std::size_t>> matches(const Regex& regex, std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  regex.for_each_match(text, [&](std::size_t start, std::size_t end) { out.emplace_back(start, end); });
  return out;
}

TEST(Regex, EmptyMatchesFollowOniguruma) {
  const auto regex = Regex::from_oniguruma("a*", "test");
  // Python's re would also report (4, 4); Oniguruma's iterator does not.
  const std::vector<std::pair<std::size_t, std::size_t>> expected{{0, 0}, {1, 4}, {5, 5}};
  EXPECT_EQ(matches(regex, "baaac"), expected);
}

TEST(Regex, SpaceIsWhiteSpaceOnly) {
  const auto regex = Regex::from_oniguruma("\\s", "test");
  EXPECT_EQ(matches(regex, "\xE1\xA0\x8E").size(), 0u);  // U+180E: PCRE2's \s has it, Oniguruma's not
  EXPECT_EQ(matches(regex, "\xC2\x85").size(), 1u);      // U+0085 NEL
  EXPECT_EQ(matches(regex, "\xE3\x80\x80").size(), 1u);  // U+3000
  EXPECT_EQ(matches(regex, "\xE2\x80\x8B").size(), 0u);  // U+200B is not White_Space
}

TEST(Regex, TranslatesClassesOutsideAndInsideBrackets) {
  EXPECT_EQ(translate_oniguruma_pattern("\\s+"), "[\\t\\n\\x0B\\f\\r\\x{85}\\p{Z}]+");
  EXPECT_EQ(translate_oniguruma_pattern("[^\\s\\p{L}]"), "[^\\t\\n\\x0B\\f\\r\\x{85}\\p{Z}\\p{L}]");
  EXPECT_EQ(translate_oniguruma_pattern("\\\\s"), "\\\\s");    // an escaped backslash, then 's'
  EXPECT_EQ(translate_oniguruma_pattern("(?m:.)"), "(?s:.)");  // Ruby's m is dot-all
  EXPECT_EQ(translate_oniguruma_pattern("[]a]"), "[]a]");
}

TEST(Regex, LiteralMatchesExactlyAndEmptyLiteralMatchesEverywhere) {
  const auto dot = Regex::from_literal("a.b", "test");
  EXPECT_EQ(matches(dot, "axb a.b"), (std::vector<std::pair<std::size_t, std::size_t>>{{4, 7}}));
  const auto empty = Regex::from_literal("", "test");
  EXPECT_EQ(matches(empty, "ab").size(), 3u);  // before a, before b, at the end
}

TEST(Regex, BadPatternNamesTheComponent) {
  EXPECT_KILN_ERROR(Regex::from_oniguruma("(unclosed", "tokenizer.json: pre_tokenizer"),
                    "tokenizer.json: pre_tokenizer", "(unclosed");
}

}  // namespace
}  // namespace kiln::tok
