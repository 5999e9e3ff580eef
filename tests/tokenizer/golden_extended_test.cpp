// Oracle: golden_extended.jsonl.gz of each tokenizer under tests/data/tokenizers, made by
// tools/tokenizer/make_goldens.py with PyPI `tokenizers` (and transformers' rules for
// add_bos/add_eos and clean-up) over the extended corpus: every script, emoji sequences,
// NFD/NFKC text, whitespace runs, code, numbers, special-token strings inside text. The
// from-scratch tokenizers between them use every component kiln implements. Zero mismatches.
#include <gtest/gtest.h>

#include <map>

#include "kiln/tokenizer.hpp"
#include "tokenizer_fixtures.hpp"

namespace kiln {
namespace {

class GoldenExtended : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenExtended, MatchesHuggingFace) {
  const auto source = testing::test_data_dir() / "tokenizers" / GetParam();
  testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::usable_tokenizer_dir(source, scratch));
  std::map<std::string, std::string> corpus;
  for (const Json& line :
       testing::read_json_lines(testing::test_data_dir() / "tokenizers" / "extended_corpus.jsonl.gz")) {
    corpus[line.at("id").get<std::string>()] = line.at("text").get<std::string>();
  }
  const auto records = testing::read_json_lines(source / "golden_extended.jsonl.gz");
  ASSERT_EQ(records.size(), corpus.size());
  DecodeOptions no_cleanup;
  no_cleanup.clean_up_tokenization_spaces = false;
  for (const Json& r : records) {
    const std::string id = r.at("id").get<std::string>();
    const std::string& text = corpus.at(id);
    const auto ids = r.at("ids").get<std::vector<std::int32_t>>();
    EXPECT_EQ(tokenizer.encode(text, false), ids) << id;
    EXPECT_EQ(tokenizer.encode(text, true), r.at("ids_with_special").get<std::vector<std::int32_t>>()) << id;
    // Left-out decoded fields equal the one before them (see make_goldens.py).
    if (!r.contains("hf_decode_panics")) {
      const std::string raw = r.value("decoded_no_cleanup", text);
      const std::string decoded = r.value("decoded", raw);
      EXPECT_EQ(tokenizer.decode(ids, no_cleanup), raw) << id;
      EXPECT_EQ(tokenizer.decode(ids), decoded) << id;
      if (!r.contains("hf_skip_decode_panics")) {
        EXPECT_EQ(tokenizer.decode(ids, true), r.value("decoded_skip_special", decoded)) << id;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, GoldenExtended,
                         ::testing::Values("qwen3", "mistral7b", "gpt2_style", "llama3_style", "llama2_style",
                                           "sp_unk_style", "metaspace_first", "zoo_bert", "zoo_suffix", "zoo_split",
                                           "zoo_words", "zoo_bytes"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
