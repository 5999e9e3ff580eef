// Oracle: the shared fixtures' golden.jsonl (169 strings per tokenizer, made with the HF
// tokenizers JS port and cross-checked against @huggingface/tokenizers and tiktoken; see each
// SOURCE.md). Every field of every line must match: ids with and without special tokens, the
// token strings, and the three decodes. The incremental detokenizer must reproduce `decoded`.
#include <gtest/gtest.h>

#include "kiln/tokenizer.hpp"
#include "tokenizer_fixtures.hpp"

namespace kiln {
namespace {

std::vector<std::int32_t> ids_of(const Json& value) { return value.get<std::vector<std::int32_t>>(); }

class GoldenFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenFixture, EveryLineEveryField) {
  const auto source = testing::tokenizer_fixture(GetParam());
  if (!source) {
    GTEST_SKIP() << "fixture '" << GetParam() << "' needs KILN_EXTERNAL_FIXTURES (it may not be "
                 << "committed); set it to the shared fixtures folder to run this test";
  }
  testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::usable_tokenizer_dir(*source, scratch));
  const auto records = testing::read_json_lines(*source / "golden.jsonl");
  ASSERT_EQ(records.size(), 169u);
  for (const Json& r : records) {
    const std::string id = r.at("id").get<std::string>();
    const std::string text = r.at("text").get<std::string>();
    const auto ids = ids_of(r.at("ids"));
    EXPECT_EQ(tokenizer.encode(text, false), ids) << id;
    EXPECT_EQ(tokenizer.encode(text, true), ids_of(r.at("ids_with_special"))) << id;
    std::vector<std::string> tokens;
    for (const std::int32_t t : ids) tokens.push_back(tokenizer.id_to_token(t));
    EXPECT_EQ(tokens, r.at("tokens").get<std::vector<std::string>>()) << id;

    EXPECT_EQ(tokenizer.decode(ids), r.at("decoded").get<std::string>()) << id;
    DecodeOptions raw;
    raw.clean_up_tokenization_spaces = false;
    EXPECT_EQ(tokenizer.decode(ids, raw), r.at("decoded_no_cleanup").get<std::string>()) << id;
    EXPECT_EQ(tokenizer.decode(ids, true), r.at("decoded_skip_special").get<std::string>()) << id;

    IncrementalDetokenizer stream(tokenizer);
    std::string streamed;
    for (const std::int32_t t : ids) streamed += stream.push(t);
    streamed += stream.flush();
    EXPECT_EQ(streamed, r.at("decoded").get<std::string>()) << id;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenFixture, ::testing::Values("qwen3", "mistral7b", "llama3", "llama3_1"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
