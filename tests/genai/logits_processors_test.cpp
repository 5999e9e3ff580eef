// Oracle: the processors' definitions (HF's repetition penalty and no-repeat n-gram, OpenAI's
// presence/frequency penalties) applied by hand to small examples.
#include "genai/logits_processors.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::genai {
namespace {

TEST(LogitsProcessors, RepetitionPenaltyDividesPositiveMultipliesNegative) {
  std::vector<float> logits{2.0f, -2.0f, 1.0f};
  const std::vector<std::int32_t> seen{0, 1, 0};
  apply_repetition_penalty(logits, seen, 2.0);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);  // once, even though seen twice
  EXPECT_FLOAT_EQ(logits[1], -4.0f);
  EXPECT_FLOAT_EQ(logits[2], 1.0f);
}

TEST(LogitsProcessors, PresenceAndFrequency) {
  std::vector<float> logits{0.0f, 0.0f, 0.0f};
  const std::vector<std::int32_t> generated{2, 2, 2, 0};
  apply_presence_frequency_penalty(logits, generated, 0.5, 0.25);
  EXPECT_FLOAT_EQ(logits[0], -0.75f);
  EXPECT_FLOAT_EQ(logits[1], 0.0f);
  EXPECT_FLOAT_EQ(logits[2], -1.25f);
}

TEST(LogitsProcessors, LogitBiasAddsAfterThePenalties) {
  std::vector<float> logits{1.0f, 1.0f, 1.0f};
  GenerationConfig c;
  c.presence_penalty = 0.5;
  c.logit_bias = {{0, -100.0f}, {2, 3.0f}, {7, 5.0f}};  // 7 is outside the vocabulary: ignored
  const std::vector<std::int32_t> tokens{2};
  apply_logits_processors(logits, {tokens, 0}, c);
  EXPECT_FLOAT_EQ(logits[0], -99.0f);
  EXPECT_FLOAT_EQ(logits[1], 1.0f);
  EXPECT_FLOAT_EQ(logits[2], 3.5f);
}

TEST(LogitsProcessors, NoRepeatNgramBansCompletions) {
  std::vector<float> logits(6, 0.0f);
  // Tokens ... 1 2 3 ... 1 2 → with n=3, "1 2 3" exists, so 3 is banned after "1 2".
  const std::vector<std::int32_t> tokens{1, 2, 3, 4, 1, 2};
  apply_no_repeat_ngram(logits, tokens, 3);
  EXPECT_TRUE(std::isinf(logits[3]) && logits[3] < 0);
  for (int t : {0, 1, 2, 4, 5}) EXPECT_EQ(logits[t], 0.0f);
}

TEST(LogitsProcessors, MinNewTokensMasksEos) {
  GenerationConfig c;
  c.eos_token_ids = {1};
  c.min_new_tokens = 2;
  const std::vector<std::int32_t> tokens{5, 5, 7};  // prompt of 2, one generated
  std::vector<float> logits(8, 0.0f);
  apply_logits_processors(logits, {tokens, 2}, c);
  EXPECT_TRUE(std::isinf(logits[1]));
  std::vector<float> later(8, 0.0f);
  const std::vector<std::int32_t> more{5, 5, 7, 7};
  apply_logits_processors(later, {more, 2}, c);
  EXPECT_EQ(later[1], 0.0f);
}

}  // namespace
}  // namespace kiln::genai
