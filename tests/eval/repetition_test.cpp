// Oracles: hand-counted 4-gram ratios, and transformers' greedy generations on llama3_tiny with
// their ratios (tests/data/eval/goldens.json, computed by the same definition in Python).
#include <gtest/gtest.h>

#include "eval/repetition.hpp"
#include "eval_fixtures.hpp"

namespace kiln::eval {
namespace {

TEST(Repetition, RatioCountsRepeatedNgrams) {
  const std::vector<std::int32_t> none{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(repeated_ngram_ratio(none, 4), 0.0);
  // 1 2 3 4 1 2 3 4: 4-grams 1234 2341 3412 4123 1234 → 5 grams, 4 distinct.
  const std::vector<std::int32_t> loop{1, 2, 3, 4, 1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(repeated_ngram_ratio(loop, 4), 1.0 - 4.0 / 5.0);
  // Ten 7s: seven identical 4-grams, one distinct.
  const std::vector<std::int32_t> same(10, 7);
  EXPECT_DOUBLE_EQ(repeated_ngram_ratio(same, 4), 1.0 - 1.0 / 7.0);
  const std::vector<std::int32_t> short_one{1, 1, 1};
  EXPECT_EQ(repeated_ngram_ratio(short_one, 4), 0.0);
}

TEST(Repetition, ReproducesTransformersGreedyGenerations) {
  const Json& g = testing::eval_goldens()["repetition"];
  const auto dir = testing::checkpoint_dir(g["checkpoint"].get<std::string>());
  const std::vector<std::string> prompts = load_prompts(testing::test_data_dir() / "eval" / "repetition_prompts.jsonl");
  genai::LoadedModel m = testing::load_for_eval(dir, 128, 2);
  const RepetitionReport r = evaluate_repetition(*m.model, m.tokenizer, m.generation_defaults.eos_token_ids, prompts,
                                                 g["max_new_tokens"].get<std::int64_t>());
  ASSERT_EQ(r.items.size(), g["generations"].size());
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    const Json& want = g["generations"][i];
    EXPECT_EQ(r.items[i].prompt, want["prompt"].get<std::string>());
    const auto tokens = want["tokens"].get<std::vector<std::int32_t>>();
    EXPECT_EQ(r.items[i].num_tokens, std::ssize(tokens));
    EXPECT_EQ(r.items[i].completion, m.tokenizer.decode(tokens, true));
    EXPECT_DOUBLE_EQ(r.items[i].ratio, want["ratio"].get<double>());
  }
  EXPECT_NEAR(r.mean_ratio, g["mean_ratio"].get<double>(), 1e-12);
  EXPECT_GT(r.mean_ratio, 0.0);                                               // the fixture has a prompt that repeats
  EXPECT_LT(r.items[0].num_tokens, g["max_new_tokens"].get<std::int64_t>());  // and one that ends at EOS
}

TEST(Repetition, LoadsPlainAndJsonlPromptFiles) {
  testing::TempDir tmp;
  write_file_atomic(tmp.path() / "p.txt", "first prompt\n\n  \nsecond\n");
  EXPECT_EQ(load_prompts(tmp.path() / "p.txt"), (std::vector<std::string>{"first prompt", "second"}));
  write_file_atomic(tmp.path() / "p.jsonl", "{\"prompt\": \"a\\nb\"}\n");
  EXPECT_EQ(load_prompts(tmp.path() / "p.jsonl"), (std::vector<std::string>{"a\nb"}));
  write_file_atomic(tmp.path() / "bad.jsonl", "{\"text\": \"a\"}\n");
  EXPECT_KILN_ERROR(load_prompts(tmp.path() / "bad.jsonl"), "bad.jsonl: line 1", "prompt");
  write_file_atomic(tmp.path() / "empty.txt", "\n\n");
  EXPECT_KILN_ERROR(load_prompts(tmp.path() / "empty.txt"), "empty.txt", "no prompts");
}

}  // namespace
}  // namespace kiln::eval
