// Oracles: the tokenizer.json / tokenizer_config.json contents themselves (ids of named tokens,
// templates), HF's error cases (named in the messages), serial encode as the reference for
// concurrent encode, and the definition of the streaming detokenizer (its pieces are whole UTF-8
// and concatenate to decode()).
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "kiln/tokenizer.hpp"
#include "tokenizer/tokenizer_access.hpp"
#include "tokenizer/unicode.hpp"
#include "tokenizer_fixtures.hpp"
#include "util/file_io.hpp"

namespace kiln {
namespace {

// A tiny byte-level BPE: the 256-character alphabet plus "ab" and "abc".
std::string tiny_tokenizer_json(const std::string& extra = "") {
  Json vocab = Json::object();
  int extra_code = 0x100;  // GPT-2's alphabet: unprintable bytes map to U+0100 onwards
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    std::string ch;
    kiln::append_utf8(ch, printable ? static_cast<char32_t>(b) : static_cast<char32_t>(extra_code++));
    vocab[ch] = b;
  }
  vocab["ab"] = 256;
  vocab["abc"] = 257;
  Json spec = {{"version", "1.0"},
               {"added_tokens", Json::array({{{"id", 258},
                                              {"content", "<|end|>"},
                                              {"special", true},
                                              {"normalized", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"single_word", false}}})},
               {"normalizer", nullptr},
               {"pre_tokenizer",
                {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
               {"post_processor", nullptr},
               {"decoder", {{"type", "ByteLevel"}}},
               {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", Json::array({"a b", "ab c"})}}}};
  if (!extra.empty()) spec.merge_patch(Json::parse(extra));
  return spec.dump();
}

TEST(TokenizerApi, FromJsonEncodesWithMergesAndAddedTokens) {
  const Tokenizer tokenizer = Tokenizer::from_json(tiny_tokenizer_json());
  EXPECT_EQ(tokenizer.encode("abc<|end|>ab"), (std::vector<std::int32_t>{257, 258, 256}));
  EXPECT_EQ(tokenizer.decode(std::vector<std::int32_t>{257, 258, 256}), "abc<|end|>ab");
  EXPECT_EQ(tokenizer.decode(std::vector<std::int32_t>{257, 258, 256}, true), "abcab");
  EXPECT_EQ(tokenizer.vocab_size(), 259);
  EXPECT_TRUE(tokenizer.is_special(258));
  EXPECT_FALSE(tokenizer.is_special(256));
  EXPECT_EQ(tokenizer.id_to_token(256), "ab");
  EXPECT_EQ(tokenizer.token_to_id("<|end|>"), 258);
  EXPECT_KILN_ERROR(tokenizer.id_to_token(259), "259", "not in the vocabulary");
}

TEST(TokenizerApi, EncodeBatchEqualsOneByOne) {
  const Tokenizer tokenizer = Tokenizer::from_json(tiny_tokenizer_json());
  const std::vector<std::string> texts{"abc", "", "ab<|end|> c",
                                       "\xFF"
                                       "ab"};
  const auto batch = tokenizer.encode_batch(texts, false);
  ASSERT_EQ(batch.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(batch[i], tokenizer.encode(texts[i], false)) << i;
}

TEST(TokenizerApi, ConfigGivesNamedTokensTemplateAndBosOverride) {
  const std::string config = R"({"bos_token": {"content": "ab", "lstrip": false}, "eos_token": "<|end|>",
      "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}],
      "add_bos_token": true, "add_eos_token": true})";
  const Tokenizer tokenizer = Tokenizer::from_json(tiny_tokenizer_json(), config);
  EXPECT_EQ(tokenizer.bos_token(), "ab");
  EXPECT_EQ(tokenizer.bos_token_id(), 256);
  EXPECT_EQ(tokenizer.eos_token_id(), 258);
  EXPECT_FALSE(tokenizer.pad_token_id().has_value());
  EXPECT_EQ(tokenizer.chat_template(), "D");
  EXPECT_EQ(tok::TokenizerAccess::config(tokenizer).at("eos_token"), "<|end|>");
  // transformers rebuilds the post-processor as "[bos] $A [eos]" when the config sets the flags.
  EXPECT_EQ(tokenizer.encode("c"), (std::vector<std::int32_t>{256, 'c', 258}));
  EXPECT_EQ(tokenizer.encode("c", false), (std::vector<std::int32_t>{'c'}));
}

TEST(TokenizerApi, ChatTemplateFileOverridesTheConfig) {
  testing::TempDir dir;
  write_file_atomic(dir.path() / "tokenizer.json", tiny_tokenizer_json());
  write_file_atomic(dir.path() / "tokenizer_config.json", R"({"chat_template": "old"})");
  EXPECT_EQ(Tokenizer::from_dir(dir.path()).chat_template(), "old");
  write_file_atomic(dir.path() / "chat_template.jinja", "new {{ messages }}");
  EXPECT_EQ(Tokenizer::from_dir(dir.path()).chat_template(), "new {{ messages }}");
}

TEST(TokenizerApi, FingerprintIgnoresFormattingButNotContent) {
  const Tokenizer a = Tokenizer::from_json(tiny_tokenizer_json());
  const Tokenizer b = Tokenizer::from_json(Json::parse(tiny_tokenizer_json()).dump(2));
  const Tokenizer c = Tokenizer::from_json(tiny_tokenizer_json(R"({"model": {"merges": ["a b"]}})"));
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_NE(a.fingerprint(), c.fingerprint());
  EXPECT_EQ(a.fingerprint().size(), 64u);
}

TEST(TokenizerApi, UnsupportedAndBrokenComponentsFailAtLoadNamingThem) {
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"model": {"type": "WordPiece"}})")),
                    "tokenizer.json: model", "WordPiece", "not supported");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"model": {"type": "Unigram"}})")), "Unigram");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"normalizer": {"type": "Precompiled"}})")),
                    "tokenizer.json: normalizer", "Precompiled");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"pre_tokenizer": {"type": "UnicodeScripts"}})")),
                    "tokenizer.json: pre_tokenizer", "UnicodeScripts");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"decoder": {"type": "Nope"}})")),
                    "tokenizer.json: decoder", "Nope");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"model": {"merges": ["a zz"]}})")),
                    "tokenizer.json: model.merges[0]", "zz", "not in the vocabulary");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"model": {"merges": ["a b c"]}})")), "model.merges[0]",
                    "two tokens");
  EXPECT_KILN_ERROR(Tokenizer::from_json(tiny_tokenizer_json(R"({"model": {"dropout": 0.1}})")), "dropout");
  EXPECT_KILN_ERROR(Tokenizer::from_json("{\"model\": "), "tokenizer.json", "invalid JSON");
  testing::TempDir empty;
  EXPECT_KILN_ERROR(Tokenizer::from_dir(empty.path()), "tokenizer.json");
}

TEST(TokenizerApi, ConcurrentEncodesEqualSerialOnes) {
  testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(
      testing::usable_tokenizer_dir(testing::test_data_dir() / "tokenizers" / "llama3_style", scratch));
  std::vector<std::string> texts;
  for (const Json& line :
       testing::read_json_lines(testing::test_data_dir() / "tokenizers" / "extended_corpus.jsonl.gz")) {
    texts.push_back(line.at("text"));
  }
  std::vector<std::vector<std::int32_t>> serial;
  for (const auto& text : texts) serial.push_back(tokenizer.encode(text));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::size_t k = (i * 7 + static_cast<std::size_t>(t) * 13) % texts.size();
        if (tokenizer.encode(texts[k]) != serial[k]) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

class StreamingDecode : public ::testing::TestWithParam<std::string> {};

// Random ids, byte tokens and special tokens included: every piece is whole UTF-8 and the
// pieces add up to decode() (with and without skip_special_tokens and clean-up).
TEST_P(StreamingDecode, PiecesAreWholeCharactersAndAddUpToDecode) {
  testing::TempDir scratch;
  const Tokenizer tokenizer =
      Tokenizer::from_dir(testing::usable_tokenizer_dir(testing::test_data_dir() / "tokenizers" / GetParam(), scratch));
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::int32_t> any_id(0, tokenizer.vocab_size() - 1);
  std::uniform_int_distribution<std::int32_t> low_id(0, 300);  // byte tokens and specials live here
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::int32_t> ids;
    for (int i = 0; i < 1 + trial % 40; ++i) ids.push_back(rng() % 2 ? any_id(rng) : low_id(rng));
    for (const bool skip : {false, true}) {
      for (const bool clean : {false, true}) {
        DecodeOptions options;
        options.skip_special_tokens = skip;
        options.clean_up_tokenization_spaces = clean;
        IncrementalDetokenizer stream(tokenizer, options);
        std::string streamed;
        for (const std::int32_t id : ids) {
          const std::string piece = stream.push(id);
          ASSERT_TRUE(kiln::is_valid_utf8(piece));
          streamed += piece;
        }
        streamed += stream.flush();
        ASSERT_EQ(streamed, tokenizer.decode(ids, options)) << "trial " << trial;
      }
    }
  }
}

TEST_P(StreamingDecode, AsciiTextStreamsWithoutDelay) {
  testing::TempDir scratch;
  const Tokenizer tokenizer =
      Tokenizer::from_dir(testing::usable_tokenizer_dir(testing::test_data_dir() / "tokenizers" / GetParam(), scratch));
  DecodeOptions options;
  options.clean_up_tokenization_spaces = false;
  IncrementalDetokenizer stream(tokenizer, options);
  std::size_t delayed = 0;
  const auto ids = tokenizer.encode("Hello world, this is streaming text", false);
  for (const std::int32_t id : ids) delayed += stream.push(id).empty() ? 1 : 0;
  // Only a leading token can wait (Strip / Metaspace decide on the first character).
  EXPECT_LE(delayed, 1u);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, StreamingDecode,
                         ::testing::Values("gpt2_style", "llama2_style", "sp_unk_style", "metaspace_first", "zoo_bert",
                                           "zoo_split", "zoo_suffix", "zoo_words", "mistral7b"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
