// Oracles: the JSON text itself (what a DOM parse of it holds: the same ids, the last of two
// duplicate keys, vocab and merges in either order) and the error cases the reader must name (file,
// field, entry). Encode results come from the merges the test writes (a b -> ab, ab c -> abc).
#include <gtest/gtest.h>

#include "kiln/tokenizer.hpp"
#include "support/test_support.hpp"
#include "tokenizer/tokenizer_json_reader.hpp"
#include "util/file_io.hpp"

namespace kiln::tok {
namespace {

// A minimal tokenizer.json around `model`: no pre-tokenizer, so pieces go to BPE as they are.
std::string with_model(const std::string& model) {
  return R"({"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": null,
             "post_processor": null, "decoder": null, "model": )" +
         model + "}";
}

const char* kModel = R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4},
                         "merges": ["a b", ["ab", "c"]]})";

TEST(TokenizerJsonReader, CapturesVocabAndMergesAndLeavesThePlaceholders) {
  const TokenizerJson document = read_tokenizer_json(with_model(kModel), "t.json");
  ASSERT_TRUE(document.bpe.has_vocab);
  ASSERT_TRUE(document.bpe.has_merges);
  EXPECT_EQ(document.bpe.vocab.size(), 5u);
  EXPECT_EQ(document.bpe.vocab.find("abc").value_or(-1), 4);
  EXPECT_FALSE(document.bpe.vocab.find("bc").has_value());
  ASSERT_EQ(document.bpe.merges.size(), 2u);
  EXPECT_EQ(document.bpe.merges.left(1), "ab");
  EXPECT_EQ(document.bpe.merges.right(1), "c");
  // The rest of the document is a tree, with null where the captured fields were.
  const Json& model = document.root.at("model");
  EXPECT_EQ(model.at("type"), "BPE");
  EXPECT_TRUE(model.at("vocab").is_null());
  EXPECT_TRUE(model.at("merges").is_null());
  EXPECT_TRUE(document.root.at("added_tokens").is_array());
}

TEST(TokenizerJsonReader, OnlyRootModelFieldsAreCaptured) {
  // "vocab" and "merges" elsewhere (inside another component, or nested in the model) stay in the tree.
  const TokenizerJson document = read_tokenizer_json(
      R"({"decoder": {"vocab": {"x": 1}, "merges": ["x y"]},
          "model": {"extra": {"vocab": {"y": 2}}, "vocab": {"a": 0}, "merges": []}})",
      "t.json");
  EXPECT_EQ(document.root.at("decoder").at("vocab").at("x"), 1);
  EXPECT_EQ(document.root.at("decoder").at("merges").size(), 1u);
  EXPECT_EQ(document.root.at("model").at("extra").at("vocab").at("y"), 2);
  EXPECT_EQ(document.bpe.vocab.size(), 1u);
  EXPECT_EQ(document.bpe.merges.size(), 0u);
}

TEST(TokenizerJsonReader, DuplicateVocabKeysKeepTheLastIdAsADomParseDoes) {
  const TokenizerJson document =
      read_tokenizer_json(with_model(R"({"vocab": {"a": 0, "a": 7}, "merges": []})"), "t.json");
  EXPECT_EQ(document.bpe.vocab.find("a").value_or(-1), Json::parse(R"({"a": 0, "a": 7})").at("a").get<int>());
}

TEST(TokenizerJsonReader, MergesBeforeVocabLoadTheSameModel) {
  // HF writes vocab first, but JSON objects are unordered.
  const Tokenizer ordered = Tokenizer::from_json(with_model(kModel));
  const Tokenizer reversed = Tokenizer::from_json(with_model(
      R"({"merges": ["a b", ["ab", "c"]], "vocab": {"abc": 4, "ab": 3, "c": 2, "b": 1, "a": 0}, "type": "BPE"})"));
  EXPECT_EQ(ordered.encode("abcab"), (std::vector<std::int32_t>{4, 3}));
  EXPECT_EQ(reversed.encode("abcab"), (std::vector<std::int32_t>{4, 3}));
  EXPECT_EQ(ordered.id_to_token(3), "ab");
  EXPECT_EQ(reversed.id_to_token(3), "ab");
  // Same content in another key order: the same fingerprint.
  EXPECT_EQ(ordered.fingerprint(), reversed.fingerprint());
}

TEST(TokenizerJsonReader, BadVocabIdsNameTheFieldAndTheToken) {
  for (const char* id : {"-1", "2147483648", "1.5", "\"3\"", "null", "true", "[1]", "{\"x\": 1}"}) {
    SCOPED_TRACE(id);
    EXPECT_KILN_ERROR(read_tokenizer_json(
                          with_model(fmt::format(R"({{"vocab": {{"a": 0, "zz": {}}}, "merges": []}})", id)), "t.json"),
                      "t.json: model.vocab", "\"zz\"", "non-negative 32-bit integer");
  }
}

TEST(TokenizerJsonReader, MalformedMergesNameTheFieldAndTheRank) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"(["a b", "ab"])", "two tokens separated by one space"},
      {R"(["a b", "a  b"])", "two tokens separated by one space"},
      {R"(["a b", ["ab"]])", "an array of 1 string"},
      {R"(["a b", ["a", "b", "c"]])", "more than two strings"},
      {R"(["a b", ["a", 1]])", "an array holding 1"},
      {R"(["a b", ["a", ["b"]]])", "an array holding an array"},
      {R"(["a b", 7])", "got 7"},
      {R"(["a b", {"a": "b"}])", "got an object"},
  };
  for (const auto& [merges, problem] : cases) {
    SCOPED_TRACE(merges);
    EXPECT_KILN_ERROR(
        read_tokenizer_json(with_model(fmt::format(R"({{"vocab": {{"a": 0}}, "merges": {}}})", merges)), "t.json"),
        "t.json: model.merges[1]", problem);
  }
}

TEST(TokenizerJsonReader, VocabAndMergesOfTheWrongShapeFailInTheModel) {
  EXPECT_KILN_ERROR(Tokenizer::from_json(with_model(R"({"type": "BPE", "vocab": ["a"], "merges": []})")),
                    "tokenizer.json: model.vocab", "must be an object");
  EXPECT_KILN_ERROR(Tokenizer::from_json(with_model(R"({"type": "BPE", "vocab": {"a": 0}, "merges": "a b"})")),
                    "tokenizer.json: model.merges", "must be an array");
  EXPECT_KILN_ERROR(Tokenizer::from_json(with_model(R"({"type": "BPE", "vocab": null, "merges": []})")),
                    "tokenizer.json: model.vocab", "must be an object");
  EXPECT_KILN_ERROR(Tokenizer::from_json(with_model(R"({"type": "BPE", "vocab": {"a": 0}})")), "tokenizer.json: model",
                    "needs both 'vocab' and 'merges'");
}

TEST(TokenizerJsonReader, SyntaxErrorsNameTheFileAndTheByte) {
  EXPECT_KILN_ERROR(read_tokenizer_json(with_model(R"({"vocab": {"a": 0,}, "merges": []})"), "t.json"), "t.json",
                    "invalid JSON at byte");
  EXPECT_KILN_ERROR(read_tokenizer_json(with_model(kModel) + " trailing", "t.json"), "t.json", "invalid JSON");
  EXPECT_KILN_ERROR(read_tokenizer_json(with_model(R"({"vocab": {"a": 1e999}, "merges": []})"), "t.json"), "t.json");
  EXPECT_KILN_ERROR(read_tokenizer_json("", "t.json"), "t.json", "invalid JSON");
}

TEST(TokenizerJsonReader, FromDirNamesThePathOfABrokenFile) {
  testing::TempDir dir;
  write_file_atomic(dir.path() / "tokenizer.json", with_model(R"({"vocab": {"a": -4}, "merges": []})"));
  const std::string path = (dir.path() / "tokenizer.json").string();
  EXPECT_KILN_ERROR(Tokenizer::from_dir(dir.path()), path.c_str(), "model.vocab", "\"a\"");
  write_file_atomic(dir.path() / "tokenizer.json", "");
  EXPECT_KILN_ERROR(Tokenizer::from_dir(dir.path()), path.c_str());
}

}  // namespace
}  // namespace kiln::tok
