// Oracle: llama.cpp. tests/data/gguf/models/golden.json holds what llama-cpp-python (the vendored
// llama.cpp) tokenizes and detokenizes with each fixture GGUF (tools/make_gguf_models.py); the
// tokenizer rebuilt from the file's tokenizer.ggml.* metadata must give the same ids and text.
// Hand-made GGUFs, written here, pin SentencePiece's merge order, special-token types and the
// end-of-generation set against what llama.cpp gave for the same metadata (quoted below), check
// that every supported pre-tokenizer compiles, and that malformed or unsupported metadata is a
// kiln::Error naming the file, the key and the index.
#include "ir/gguf_vocab.hpp"

#include <gtest/gtest.h>

#include "ir/gguf_pre_tokenizer.hpp"
#include "kiln/tokenizer.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln::ir {
namespace {

using Ids = std::vector<std::int32_t>;

Tokenizer tokenizer_of(const GgufFile& file) {
  const GgufTokenizerFiles files = tokenizer_files_from_gguf(file);
  return Tokenizer::from_json(files.tokenizer.dump(), files.tokenizer_config.dump());
}

std::filesystem::path models_dir() { return testing::test_data_dir() / "gguf" / "models"; }

// ---- The fixtures against llama.cpp's goldens ----

class GgufVocabGolden : public ::testing::Test {
 protected:
  Json golden = read_json_file(models_dir() / "golden.json");
  // The fixtures with tokenizer goldens (the quantised llama3_tiny copies share f16's vocabulary).
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& [name, entry] : golden.items()) {
      if (entry.contains("tokenize")) names.push_back(name);
    }
    return names;
  }
};

TEST_F(GgufVocabGolden, TokenizesAsLlamaCpp) {
  ASSERT_GE(files().size(), 5u);
  for (const std::string& name : files()) {
    const Tokenizer tokenizer = tokenizer_of(GgufFile(models_dir() / name));
    int compared = 0;
    for (const Json& entry : golden[name]["tokenize"]) {
      // NOTE: with special=false llama.cpp reads control tokens in the text as plain text; HF
      // tokenizers (and so kiln) always split added tokens out, so there is nothing to compare.
      if (!entry["special"].get<bool>()) continue;
      const std::string text = entry["text"];
      EXPECT_EQ(tokenizer.encode(text, entry["add_bos"].get<bool>()), entry["ids"].get<Ids>())
          << name << ": \"" << text << "\" add_bos " << entry["add_bos"];
      ++compared;
    }
    EXPECT_GE(compared, 15) << name;
  }
}

// The GGUF's tokenizer against the tokenizer.json of the checkpoint it was converted from, where
// both split text the same way (the Llama 3 regex: the qwen2 / qwen3 fixtures were given the
// "qwen2" pre-tokenizer, which splits digits differently from their checkpoints' files).
TEST_F(GgufVocabGolden, TokenizesAsTheCheckpointsTokenizerJson) {
  for (const std::string name : {"llama3_tiny", "mistral_tiny"}) {
    const Tokenizer gguf = tokenizer_of(GgufFile(models_dir() / (name + ".f16.gguf")));
    const Tokenizer hf = Tokenizer::from_dir(testing::test_data_dir() / "checkpoints" / name);
    for (const Json& entry : golden[name + ".f16.gguf"]["tokenize"]) {
      const std::string text = entry["text"];
      for (const bool special : {true, false}) {
        EXPECT_EQ(gguf.encode(text, special), hf.encode(text, special)) << name << ": \"" << text << "\"";
      }
      const Ids ids = hf.encode(text, true);
      EXPECT_EQ(gguf.decode(ids, true), hf.decode(ids, true)) << name << ": \"" << text << "\"";
    }
  }
}

// llama.cpp's own llama_detokenize (remove_special false, unparse_special true) is decode()
// without skipping special tokens and with the config's clean-up; llama-cpp-python's
// detokenize joins the pieces without clean-up and drops one leading space only after a
// leading BOS, where HF's SentencePiece decoder (Strip) always drops one.
TEST_F(GgufVocabGolden, DetokenizesAsLlamaCpp) {
  for (const std::string& name : files()) {
    const Tokenizer tokenizer = tokenizer_of(GgufFile(models_dir() / name));
    const bool spm = name == "spm_vocab.gguf";
    for (const Json& entry : golden[name]["detokenize"]) {
      const Ids ids = entry["ids"].get<Ids>();
      EXPECT_EQ(tokenizer.decode(ids), entry["llama_detokenize"].get<std::string>()) << name;

      const bool leading_bos = !ids.empty() && ids[0] == tokenizer.bos_token_id();
      auto as_llama_cpp_python = [&](std::string kiln_text, std::string python_text) {
        if (!spm && leading_bos && kiln_text.starts_with(' ')) kiln_text.erase(0, 1);
        if (spm && !leading_bos && python_text.starts_with(' ')) python_text.erase(0, 1);
        return std::pair(kiln_text, python_text);
      };
      DecodeOptions options;
      options.clean_up_tokenization_spaces = false;
      for (const bool skip : {true, false}) {
        options.skip_special_tokens = skip;
        const auto [got, want] = as_llama_cpp_python(tokenizer.decode(ids, options),
                                                     entry[skip ? "text" : "text_special"].get<std::string>());
        EXPECT_EQ(got, want) << name << " skip_special_tokens " << skip;
      }
    }
  }
}

TEST_F(GgufVocabGolden, ConfigHasTheFilesSpecialTokensAndTemplate) {
  const GgufFile llama3(models_dir() / "llama3_tiny.f16.gguf");
  const GgufTokenizerFiles files = tokenizer_files_from_gguf(llama3);
  const Json& config = files.tokenizer_config;
  EXPECT_EQ(config["bos_token"], "<|begin_of_text|>");
  EXPECT_EQ(config["add_bos_token"], true);  // llama.cpp's default for llama-bpe
  EXPECT_EQ(config["add_eos_token"], false);
  EXPECT_EQ(config["chat_template"], *llama3.find("tokenizer.chat_template"));
  const Tokenizer tokenizer = Tokenizer::from_json(files.tokenizer.dump(), config.dump());
  EXPECT_EQ(tokenizer.bos_token_id(), llama3.find("tokenizer.ggml.bos_token_id")->get<std::int32_t>());
  EXPECT_EQ(tokenizer.eos_token_id(), llama3.find("tokenizer.ggml.eos_token_id")->get<std::int32_t>());
  // <|end_of_text|> (EOS) and <|eot_id|> both end generation in llama.cpp.
  EXPECT_EQ(files.end_of_generation_ids,
            (Ids{*tokenizer.token_to_id("<|end_of_text|>"), *tokenizer.token_to_id("<|eot_id|>")}));

  const GgufTokenizerFiles qwen = tokenizer_files_from_gguf(GgufFile(models_dir() / "qwen2_tiny.f16.gguf"));
  EXPECT_EQ(qwen.tokenizer_config["add_bos_token"], true);                  // the file's tokenizer.ggml.add_bos_token
  EXPECT_EQ(qwen.tokenizer_config["clean_up_tokenization_spaces"], false);  // llama.cpp's qwen2 switch
  EXPECT_EQ(qwen.tokenizer["model"]["ignore_merges"], false);
}

// ---- Hand-made GGUFs ----

// Writes a GGUF (version 3, no tensors) key by key, for metadata no converter would write. Setting
// a key again replaces its value.
class GgufWriter {
 public:
  GgufWriter& string(const std::string& key, const std::string& value) {
    return set(key, typed(kString) + encoded_string(value));
  }
  GgufWriter& u32(const std::string& key, std::uint32_t value) { return set(key, typed(4) + encoded(value)); }
  GgufWriter& boolean(const std::string& key, bool value) {
    return set(key, typed(7) + encoded(static_cast<std::uint8_t>(value)));
  }
  GgufWriter& strings(const std::string& key, const std::vector<std::string>& values) {
    std::string value = array_of(kString, values.size());
    for (const std::string& v : values) value += encoded_string(v);
    return set(key, value);
  }
  GgufWriter& i32s(const std::string& key, const std::vector<std::int32_t>& values) {
    std::string value = array_of(5, values.size());
    for (const std::int32_t v : values) value += encoded(v);
    return set(key, value);
  }
  GgufWriter& f32s(const std::string& key, const std::vector<float>& values) {
    std::string value = array_of(6, values.size());
    for (const float v : values) value += encoded(v);
    return set(key, value);
  }
  std::filesystem::path write(const std::filesystem::path& path) const {
    std::string bytes = "GGUF" + encoded(std::uint32_t{3}) + encoded(std::uint64_t{0}) +  // no tensors
                        encoded(std::uint64_t{entries_.size()});
    for (const auto& [key, value] : entries_) bytes += encoded_string(key) + value;
    write_file_atomic(path, bytes);
    return path;
  }

 private:
  static constexpr std::uint32_t kString = 8;
  template <typename T>
  static std::string encoded(T value) {
    return std::string(reinterpret_cast<const char*>(&value), sizeof value);
  }
  static std::string encoded_string(const std::string& s) { return encoded(std::uint64_t{s.size()}) + s; }
  static std::string typed(std::uint32_t type) { return encoded(type); }
  static std::string array_of(std::uint32_t element_type, std::size_t size) {
    return typed(9) + encoded(element_type) + encoded(std::uint64_t{size});
  }
  GgufWriter& set(const std::string& key, std::string value) {
    for (auto& entry : entries_) {
      if (entry.first == key) {
        entry.second = std::move(value);
        return *this;
      }
    }
    entries_.emplace_back(key, std::move(value));
    return *this;
  }
  std::vector<std::pair<std::string, std::string>> entries_;  // key, then type and value as stored
};

// GPT-2's byte-level alphabet: the character each byte is written as in a byte-level vocabulary.
std::vector<std::string> byte_level_alphabet() {
  std::vector<std::string> alphabet(256);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int c = printable ? b : next++;
    alphabet[b] = c < 0x80 ? std::string(1, static_cast<char>(c))
                           : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
  }
  return alphabet;
}

// A byte-level vocabulary: ids 0-255 the alphabet, then "hi" 256, "Ġt" 257, "<|c|>" 258
// (CONTROL), "<u>" 259 (USER_DEFINED), "<|im_end|>" 260 (NORMAL, which llama.cpp retypes),
// "<s>" 261 and "</s>" 262 (CONTROL; BOS and EOS).
GgufWriter byte_level_gguf(const std::string& pre = "gpt-2") {
  std::vector<std::string> tokens = byte_level_alphabet();
  std::vector<std::int32_t> types(256, 1);
  for (const auto& [text, type] : std::vector<std::pair<std::string, std::int32_t>>{
           {"hi", 1}, {"Ġt", 1}, {"<|c|>", 3}, {"<u>", 4}, {"<|im_end|>", 1}, {"<s>", 3}, {"</s>", 3}}) {
    tokens.push_back(text);
    types.push_back(type);
  }
  GgufWriter w;
  w.string("general.architecture", "llama")
      .string("tokenizer.ggml.model", "gpt2")
      .string("tokenizer.ggml.pre", pre)
      .strings("tokenizer.ggml.tokens", tokens)
      .i32s("tokenizer.ggml.token_type", types)
      .strings("tokenizer.ggml.merges", {"h i", "Ġ t"})
      .u32("tokenizer.ggml.bos_token_id", 261)
      .u32("tokenizer.ggml.eos_token_id", 262);
  return w;
}

// A SentencePiece vocabulary: <unk> <s> </s>, the 256 <0xXX> byte tokens (ids 3-258), then
// "▁" -1, "a" -2, "b" -3, "c" -4, "ab" -10, "bc" -5, "abc" -6, "▁a" -20, "▁ab" -30, "ca" -8
// (ids 259-268, with those scores) and "<think>" 269 (USER_DEFINED).
GgufWriter sentencepiece_gguf() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0, 0, 0};
  std::vector<std::int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    scores.push_back(0);
    types.push_back(6);
  }
  for (const auto& [text, score] : std::vector<std::pair<std::string, float>>{{"▁", -1},
                                                                              {"a", -2},
                                                                              {"b", -3},
                                                                              {"c", -4},
                                                                              {"ab", -10},
                                                                              {"bc", -5},
                                                                              {"abc", -6},
                                                                              {"▁a", -20},
                                                                              {"▁ab", -30},
                                                                              {"ca", -8},
                                                                              {"<think>", 0}}) {
    tokens.push_back(text);
    scores.push_back(score);
    types.push_back(text == "<think>" ? 4 : 1);
  }
  GgufWriter w;
  w.string("general.architecture", "llama")
      .string("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tokens)
      .f32s("tokenizer.ggml.scores", scores)
      .i32s("tokenizer.ggml.token_type", types);
  return w;
}

class GgufVocabHandMade : public ::testing::Test {
 protected:
  testing::TempDir dir;
  GgufFile write(const GgufWriter& writer) { return GgufFile(writer.write(dir.path() / "vocab.gguf")); }
};

// llama.cpp merges the pair of highest score first ("ca" -8 before "ab" -10 in "cab"), builds
// "▁ab" from "▁" + "ab" though "▁a" + "b" spells it too, prefixes "▁" after every special token
// and falls back to <0xXX> bytes (ids and texts from llama-cpp-python on the same metadata).
TEST_F(GgufVocabHandMade, SentencePieceMergesByScoreAsLlamaCpp) {
  const Tokenizer tokenizer =
      tokenizer_of(write(sentencepiece_gguf().boolean("tokenizer.ggml.add_space_prefix", true)));
  const std::vector<std::pair<std::string, Ids>> cases = {
      {"abc", {1, 259, 265}},
      {"abcabc", {1, 259, 265, 265}},
      {"ab ca", {1, 267, 259, 268}},
      {"cab a", {1, 259, 268, 261, 266}},
      {"<think>abc</s>bc", {1, 269, 259, 265, 2, 259, 264}},
      {"é!", {1, 259, 198, 172, 36}},
      {"", {1}},
  };
  for (const auto& [text, ids] : cases) EXPECT_EQ(tokenizer.encode(text), ids) << text;
  EXPECT_EQ(tokenizer.decode(Ids{1, 267, 259, 268}), "<s> ab ca");
  EXPECT_EQ(tokenizer.decode(Ids{1, 269, 259, 265, 2, 259, 264}), "<s><think> abc</s> bc");
  EXPECT_EQ(tokenizer.decode(Ids{269, 259, 265, 2, 259, 264}), "<think> abc</s> bc");
  EXPECT_EQ(tokenizer.decode(Ids{1, 259, 198, 172, 36}), "<s> é!");
  EXPECT_EQ(tokenizer.decode(Ids{1, 269, 259, 265, 2, 259, 264}, true), "<think> abc bc");
}

TEST_F(GgufVocabHandMade, SentencePieceWithoutSpacePrefix) {
  const Tokenizer tokenizer =
      tokenizer_of(write(sentencepiece_gguf().boolean("tokenizer.ggml.add_space_prefix", false)));
  const std::vector<std::pair<std::string, Ids>> cases = {
      {"abc", {1, 265}},
      {"ab ca", {1, 263, 259, 268}},
      {"cab a", {1, 268, 261, 266}},
      {"é!", {1, 198, 172, 36}},
      {"<think>abc</s>bc", {1, 269, 265, 2, 264}},
  };
  for (const auto& [text, ids] : cases) EXPECT_EQ(tokenizer.encode(text), ids) << text;
  EXPECT_EQ(tokenizer.decode(Ids{1, 263, 259, 268}), "<s>ab ca");
  EXPECT_EQ(tokenizer.decode(Ids{1, 269, 265, 2, 264}), "<s><think>abc</s>bc");
}

// CONTROL tokens are special, USER_DEFINED ones are split out but decoded even when special
// tokens are skipped, and "<|im_end|>" typed NORMAL is retyped CONTROL and ends generation, as
// llama.cpp has it (ids and texts from llama-cpp-python on the same metadata).
TEST_F(GgufVocabHandMade, SpecialTokenTypesAsLlamaCpp) {
  const GgufTokenizerFiles files = tokenizer_files_from_gguf(write(byte_level_gguf()));
  const Tokenizer tokenizer = Tokenizer::from_json(files.tokenizer.dump(), files.tokenizer_config.dump());
  const Ids ids = {256, 258, 257, 259, 256, 260};
  EXPECT_EQ(tokenizer.encode("hi<|c|> t<u>hi<|im_end|>"), ids);
  EXPECT_EQ(tokenizer.encode("<s>hi</s>"), (Ids{261, 256, 262}));  // gpt-2 adds no BOS
  EXPECT_EQ(tokenizer.decode(ids), "hi<|c|> t<u>hi<|im_end|>");
  EXPECT_EQ(tokenizer.decode(ids, true), "hi t<u>hi");
  EXPECT_EQ(tokenizer.encode("hi there ."), (Ids{256, 257, 104, 101, 114, 101, 32, 46}));
  EXPECT_EQ(tokenizer.decode(Ids{256, 257, 104, 101, 114, 101, 32, 46}), "hi there.");  // clean_spaces
  EXPECT_TRUE(tokenizer.is_special(258));
  EXPECT_FALSE(tokenizer.is_special(259));
  EXPECT_TRUE(tokenizer.is_special(260));
  EXPECT_EQ(files.end_of_generation_ids, (Ids{260, 262}));
}

// Without tokenizer.ggml.add_bos_token, llama.cpp adds BOS for SentencePiece and for the llama3
// and tekken pre-tokenizers only (llama_vocab::impl::load).
TEST_F(GgufVocabHandMade, AddsBosAsLlamaCppByDefault) {
  EXPECT_EQ(tokenizer_of(write(byte_level_gguf("gpt-2"))).encode("hi"), (Ids{256}));
  EXPECT_EQ(tokenizer_of(write(byte_level_gguf("qwen2"))).encode("hi"), (Ids{256}));
  EXPECT_EQ(tokenizer_of(write(byte_level_gguf("llama-bpe"))).encode("hi"), (Ids{261, 256}));
  EXPECT_EQ(tokenizer_of(write(byte_level_gguf("tekken"))).encode("hi"), (Ids{261, 256}));
  EXPECT_EQ(
      tokenizer_of(write(byte_level_gguf("llama-bpe").boolean("tokenizer.ggml.add_bos_token", false))).encode("hi"),
      (Ids{256}));
  EXPECT_EQ(tokenizer_of(write(byte_level_gguf("gpt-2").boolean("tokenizer.ggml.add_eos_token", true))).encode("hi"),
            (Ids{256, 262}));
}

// Each name's regexes compile in kiln's regex engine, and text survives the round trip.
TEST_F(GgufVocabHandMade, EverySupportedPreTokenizerLoads) {
  const std::string names = supported_gguf_pre_tokenizers();
  int loaded = 0;
  for (std::size_t start = 0; start < names.size();) {
    const std::size_t end = std::min(names.find(", ", start), names.size());
    const std::string name = names.substr(start, end - start);
    start = end + 2;
    SCOPED_TRACE(name);
    const Tokenizer tokenizer = tokenizer_of(write(byte_level_gguf(name)));
    const std::string text = "Hello  wörld, it's 12345 — 日本語 🦙\n\ttabs  ";
    EXPECT_EQ(tokenizer.decode(tokenizer.encode(text, false)), text);
    ++loaded;
  }
  EXPECT_GE(loaded, 70);
}

// ---- Refused metadata ----

TEST_F(GgufVocabHandMade, RefusesUnsupportedModelsAndPreTokenizers) {
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().string("tokenizer.ggml.model", "bert"))),
                    "vocab.gguf", "tokenizer.ggml.model 'bert'", "gpt2, llama");
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf("no-such-pre"))), "vocab.gguf",
                    "tokenizer.ggml.pre 'no-such-pre'", "llama-bpe", "qwen2");
  GgufWriter no_model;
  no_model.string("general.architecture", "llama");
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(no_model)), "vocab.gguf", "tokenizer.ggml.model is missing");
}

TEST_F(GgufVocabHandMade, RefusesMalformedTokens) {
  GgufWriter missing;
  missing.string("tokenizer.ggml.model", "gpt2").strings("tokenizer.ggml.merges", {});
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(missing)), "vocab.gguf", "tokenizer.ggml.tokens is missing");
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().i32s("tokenizer.ggml.tokens", {1, 2}))),
                    "tokenizer.ggml.tokens[0] must be a string");
  std::vector<std::string> repeated = byte_level_alphabet();
  repeated.push_back("hi");
  repeated.push_back("hi");
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().strings("tokenizer.ggml.tokens", repeated))),
                    "tokenizer.ggml.tokens[257] \"hi\" repeats token 256");
}

TEST_F(GgufVocabHandMade, RefusesArraysOfTheWrongLength) {
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().i32s("tokenizer.ggml.token_type", {1, 1, 1}))),
                    "vocab.gguf", "tokenizer.ggml.token_type has 3 entries for the 263 tokens");
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(sentencepiece_gguf().f32s("tokenizer.ggml.scores", {0.5f}))),
                    "tokenizer.ggml.scores has 1 entries for the 270 tokens");
  std::vector<std::int32_t> types(263, 1);
  types[7] = 9;
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().i32s("tokenizer.ggml.token_type", types))),
                    "tokenizer.ggml.token_type[7] must be a token type 0 to 6, got 9");
}

TEST_F(GgufVocabHandMade, RefusesIdsOutsideTheVocabulary) {
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().u32("tokenizer.ggml.bos_token_id", 263))),
                    "vocab.gguf", "tokenizer.ggml.bos_token_id is 263, outside the vocabulary of 263 tokens");
  EXPECT_KILN_ERROR(
      tokenizer_files_from_gguf(write(sentencepiece_gguf().string("tokenizer.ggml.eos_token_id", "</s>"))),
      "tokenizer.ggml.eos_token_id must be a token id");
}

TEST_F(GgufVocabHandMade, RefusesMergesOfNonTokens) {
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().strings("tokenizer.ggml.merges", {"h i", "hi"}))),
                    "vocab.gguf", "tokenizer.ggml.merges[1] \"hi\" is not two tokens separated by a space");
  EXPECT_KILN_ERROR(
      tokenizer_files_from_gguf(write(byte_level_gguf().strings("tokenizer.ggml.merges", {"h i", "hi zz"}))),
      "tokenizer.ggml.merges[1] \"hi zz\": \"zz\" is not a token");
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(byte_level_gguf().strings("tokenizer.ggml.merges", {"t h"}))),
                    "tokenizer.ggml.merges[0] \"t h\": \"th\" is not a token");
}

TEST_F(GgufVocabHandMade, RefusesAddingATokenTheFileDoesNotName) {
  GgufWriter w;
  w.string("tokenizer.ggml.model", "gpt2")
      .string("tokenizer.ggml.pre", "qwen2")
      .strings("tokenizer.ggml.tokens", {"a", "b"})
      .strings("tokenizer.ggml.merges", {})
      .boolean("tokenizer.ggml.add_eos_token", true);
  EXPECT_KILN_ERROR(tokenizer_files_from_gguf(write(w)), "vocab.gguf",
                    "tokenizer.ggml.add_eos_token is true but the file names no such token");
}

}  // namespace
}  // namespace kiln::ir
