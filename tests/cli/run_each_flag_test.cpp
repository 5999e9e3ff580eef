// `kiln run`: every GenerationConfig flag reaches the pipeline. Oracle, per flag: the text
// LLMPipeline generates through the API with that field set (the fields' behaviour is tested
// against its own oracles in tests/genai), on the exact REFERENCE device; and, so that a flag
// the CLI ignored cannot pass, that text differs from the text without the flag.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>

#include "kiln/llm_pipeline.hpp"
#include "support/test_support.hpp"

namespace kiln {
namespace {

struct FlagCase {
  std::vector<std::string> flags;
  std::function<void(GenerationConfig&)> set;
  // The length and EOS flags every other case runs with (-n 32 --ignore-eos, the API's base).
  std::vector<std::string> base{"-n", "32", "--ignore-eos"};
};

class RunEachFlag : public ::testing::Test {
 protected:
  static constexpr const char* kPrompt = "The quick brown fox";

  std::string dir() const { return (testing::test_data_dir() / "checkpoints" / "llama2_tiny").string(); }

  // What `kiln run` prints for one answer: the text, then a newline.
  std::string api_text(LLMPipeline& pipe, const std::function<void(GenerationConfig&)>& set) const {
    GenerationConfig c = pipe.get_generation_config();
    c.apply_chat_template = false;
    c.max_new_tokens = 32;
    c.ignore_eos = true;
    set(c);
    return pipe.generate(kPrompt, c).texts[0] + "\n";
  }

  std::string cli_text(const FlagCase& f) const {
    std::vector<std::string> args{"run", "-m", dir(), "-p", kPrompt, "--device", "REFERENCE"};
    args.insert(args.end(), f.base.begin(), f.base.end());
    args.insert(args.end(), f.flags.begin(), f.flags.end());
    const auto r = testing::run_kiln(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
};

TEST_F(RunEachFlag, EveryFieldFlagMatchesTheApi) {
  LLMPipeline pipe(dir(), "REFERENCE");
  const std::string plain = api_text(pipe, [](GenerationConfig&) {});
  ASSERT_EQ(cli_text({{}, {}}), plain);
  // Greedy tokens of the plain text: ids that stop or end it part-way.
  GenerationConfig probe = pipe.get_generation_config();
  probe.apply_chat_template = false;
  probe.max_new_tokens = 32;
  probe.ignore_eos = true;
  const std::vector<std::int32_t> greedy = pipe.generate(kPrompt, probe).tokens[0];
  const std::int32_t third = greedy.at(2);
  const std::string stop = plain.substr(4, 3);
  const auto prompt_tokens = static_cast<std::int64_t>(pipe.get_tokenizer().encode(kPrompt).size());
  const std::vector<FlagCase> cases{
      {{"--max-new-tokens", "5"}, [](GenerationConfig& c) { c.max_new_tokens = 5; }, {"--ignore-eos"}},
      {{"--max-length", std::to_string(prompt_tokens + 4)},
       [&](GenerationConfig& c) {
         c.max_new_tokens.reset();
         c.max_length = prompt_tokens + 4;
       },
       {"--ignore-eos"}},
      {{"--stop-token-id", std::to_string(third)}, [&](GenerationConfig& c) { c.stop_token_ids = {third}; }},
      {{"--stop", stop, "--include-stop-str"},
       [&](GenerationConfig& c) {
         c.stop_strings = {stop};
         c.include_stop_str_in_output = true;
       }},
      {{"--do-sample", "--seed", "11"},
       [](GenerationConfig& c) {
         c.do_sample = true;
         c.rng_seed = 11;
       }},
      {{"--temperature", "0.7", "--seed", "11"},
       [](GenerationConfig& c) {
         c.do_sample = true;
         c.temperature = 0.7;
         c.rng_seed = 11;
       }},
      {{"--do-sample", "--top-k", "3", "--seed", "11"},
       [](GenerationConfig& c) {
         c.do_sample = true;
         c.top_k = 3;
         c.rng_seed = 11;
       }},
      {{"--do-sample", "--top-p", "0.5", "--seed", "11"},
       [](GenerationConfig& c) {
         c.do_sample = true;
         c.top_p = 0.5;
         c.rng_seed = 11;
       }},
      {{"--do-sample", "--min-p", "0.3", "--seed", "11"},
       [](GenerationConfig& c) {
         c.do_sample = true;
         c.min_p = 0.3;
         c.rng_seed = 11;
       }},
      {{"--repetition-penalty", "3"}, [](GenerationConfig& c) { c.repetition_penalty = 3; }},
      {{"--presence-penalty", "2"}, [](GenerationConfig& c) { c.presence_penalty = 2; }},
      {{"--frequency-penalty", "2"}, [](GenerationConfig& c) { c.frequency_penalty = 2; }},
      {{"--no-repeat-ngram-size", "1"}, [](GenerationConfig& c) { c.no_repeat_ngram_size = 1; }},
      {{"--eos-token-id", std::to_string(third), "--min-new-tokens", "6"},
       [&](GenerationConfig& c) {
         c.ignore_eos = false;
         c.eos_token_ids = {third};
         c.min_new_tokens = 6;
       },
       {"-n", "32"}},
      {{"--apply-chat-template", "true"}, [](GenerationConfig& c) { c.apply_chat_template = true; }},
  };
  for (const FlagCase& f : cases) {
    std::string flags;
    for (const auto& s : f.flags) flags += s + " ";
    const std::string expected = api_text(pipe, f.set);
    EXPECT_NE(expected, plain) << flags << ": the flag changes nothing on this prompt, so the test proves nothing";
    EXPECT_EQ(cli_text(f), expected) << flags;
  }
}

TEST_F(RunEachFlag, BeamFlagsMatchTheApi) {
  // Several answers print as "=== i (score s) ===" blocks: the API's texts and scores.
  LLMPipeline pipe(dir(), "REFERENCE");
  const auto beams = [&](double length_penalty) {
    GenerationConfig c = pipe.get_generation_config();
    c.apply_chat_template = false;
    c.max_new_tokens = 12;
    c.num_beams = 3;
    c.num_return_sequences = 2;
    c.length_penalty = length_penalty;
    c.early_stopping = StopCriteria::NEVER;
    const DecodedResults r = pipe.generate(kPrompt, c);
    std::string out;
    for (std::size_t i = 0; i < r.texts.size(); ++i)
      out += fmt::format("=== {} (score {:.4f}) ===\n{}\n", i + 1, r.scores[i], r.texts[i]);
    return out;
  };
  const std::string expected = beams(0.3);
  EXPECT_NE(expected, beams(1.0)) << "--length-penalty would be untested";
  const FlagCase f{
      {"--num-beams", "3", "--num-return-sequences", "2", "--length-penalty", "0.3", "--early-stopping", "never"},
      {},
      {"-n", "12"}};
  EXPECT_EQ(cli_text(f), expected);
}

TEST_F(RunEachFlag, ConfidenceThresholdSpeculatesAndKeepsTheGreedyText) {
  // Oracle: speculative greedy decoding is plain greedy decoding; the draft did propose.
  const std::string draft = (testing::test_data_dir() / "genai" / "llama3_tiny_draft").string();
  const std::string llama3 = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  const std::vector<std::string> base{"run", "-m", llama3,         "-p",       kPrompt,
                                      "-n",  "24", "--ignore-eos", "--device", "REFERENCE"};
  const auto plain = testing::run_kiln(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto args = base;
  args.insert(args.end(), {"--draft", draft, "--assistant-confidence-threshold", "0.2", "--no-adaptive-draft"});
  const auto r = testing::run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_NE(r.err.find("draft acceptance"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln
