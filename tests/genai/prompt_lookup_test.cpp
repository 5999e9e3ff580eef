// Oracle: HF PromptLookupCandidateGenerator's rule, worked by hand on small sequences: the
// longest n-gram (≤ max_ngram_size) ending the sequence that occurs earlier, its earliest
// occurrence, and the tokens after it (at most max_candidates, never past the end).
#include "genai/prompt_lookup.hpp"

#include <gtest/gtest.h>

namespace kiln::genai {
namespace {

using Ids = std::vector<std::int32_t>;

TEST(PromptLookup, TakesTheTokensAfterTheEarliestMatchOfTheLongestNgram) {
  //                 0  1  2  3  4  5  6  7  8  9
  const Ids tokens{5, 6, 7, 8, 9, 6, 7, 1, 6, 7};
  // "6 7" ends the sequence; earliest earlier occurrence at 1 → candidates from 3.
  EXPECT_EQ(lookup_candidates(tokens, 2, 3), (Ids{8, 9, 6}));
  // With n = 3 ("1 6 7" never occurred before) it falls back to n = 2.
  EXPECT_EQ(lookup_candidates(tokens, 3, 2), (Ids{8, 9}));
  // n = 1: "7" first occurs at 2.
  EXPECT_EQ(lookup_candidates(tokens, 1, 4), (Ids{8, 9, 6, 7}));
}

TEST(PromptLookup, StopsAtTheEndAndFindsNothingWithoutRepeats) {
  EXPECT_EQ(lookup_candidates(Ids{3, 4, 3, 4}, 2, 5), (Ids{3, 4}));  // "3 4" at 0: then 3, 4 (the end)
  EXPECT_TRUE(lookup_candidates(Ids{1, 2, 3, 4}, 3, 5).empty());
  EXPECT_TRUE(lookup_candidates(Ids{1}, 3, 5).empty());
  EXPECT_TRUE(lookup_candidates(Ids{}, 3, 5).empty());
}

}  // namespace
}  // namespace kiln::genai
