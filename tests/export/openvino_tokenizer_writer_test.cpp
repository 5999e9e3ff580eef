// OpenVINO GenAI's tokenizer models as kiln writes them (export/openvino_tokenizer_writer).
// Oracles: (1) OpenVINO itself, offline (tools/openvino_tokenizer_oracle.py via
// tools/make_openvino_export_goldens.py): OpenVINO ran these exact bytes (their sha256 in
// tests/data/openvino/exports/tokenizers.json for the real Llama 3 / Qwen3 tokenizers of
// $KILN_EXTERNAL_FIXTURES, golden.json for the committed checkpoints) and gave Hugging Face
// tokenizers' ids and text; (2) the graph's own structure: the ops convert_tokenizer writes for a
// byte-level BPE, in order, and the ids and template GenAI reads from rt_info.
#include <gtest/gtest.h>

#include <regex>

#include "../tokenizer/tokenizer_fixtures.hpp"
#include "export/openvino_tokenizer_writer.hpp"
#include "export_test_util.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/sha256.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;
using testing::golden_checkpoint_dir;

// The layer types of an IR's XML in document order, Consts left out, space-separated.
std::string layer_types(const std::string& xml) {
  static const std::regex layer("<layer id=\"\\d+\" name=\"[^\"]*\" type=\"([A-Za-z0-9]+)\"");
  std::string types;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), layer); it != std::sregex_iterator(); ++it) {
    const std::string type = (*it)[1];
    if (type != "Const") types += (types.empty() ? "" : " ") + type;
  }
  return types;
}

TEST(OpenVinoTokenizerWriter, AByteLevelBpeHasConvertTokenizersOpsAndGenAisRtInfo) {
  const OpenVinoTokenizerModels m = build_openvino_tokenizers(golden_checkpoint_dir("llama3_tiny"));
  EXPECT_EQ(layer_types(m.tokenizer_xml),
            "Parameter ReadValue Assign StringTensorUnpack ShapeOf Gather Range Add Range SpecialTokensSplit "
            "RegexSplit BPETokenizer Select Truncate CombineSegments Subtract ReduceMax RaggedToDense Convert Convert "
            "Convert Result Result");
  EXPECT_EQ(layer_types(m.detokenizer_xml),
            "Parameter Convert VocabDecoder FuzeRagged UTF8Validate StringTensorPack Result");
  for (const std::string* xml : {&m.tokenizer_xml, &m.detokenizer_xml}) {
    EXPECT_NE(xml->find("<bos_token_id value=\"507\" />"), std::string::npos);
    EXPECT_NE(xml->find("<eos_token_id value=\"508\" />"), std::string::npos);
    // The template's newlines survive as character references (a parser would make them spaces).
    EXPECT_NE(xml->find("<chat_template value=\"{{ bos_token }}"), std::string::npos);
    EXPECT_NE(xml->find("&lt;|end_header_id|&gt;&#10;&#10;"), std::string::npos);
  }
  EXPECT_NE(m.tokenizer_xml.find("names=\"input_ids\""), std::string::npos);
  EXPECT_NE(m.tokenizer_xml.find("names=\"attention_mask\""), std::string::npos);
  EXPECT_NE(m.detokenizer_xml.find("names=\"string_output\""), std::string::npos);
  // The added tokens' alternation and the pre-tokenizer's regex are u8 Consts; the vocabulary is
  // raw bytes: id 0 is "!", and the byte-level alphabet's "Ġ" is a space again.
  const std::string bin(m.tokenizer_bin.begin(), m.tokenizer_bin.end());
  EXPECT_NE(bin.find("(\\<\\|start_header_id\\|\\>|\\<\\|eot_id\\|\\>|"), std::string::npos);
  EXPECT_NE(bin.find("(?i:'s|'t|'re|'ve|'m|'ll|'d)"), std::string::npos);
  EXPECT_EQ(bin.find("\xc4\xa0"), std::string::npos);
}

TEST(OpenVinoTokenizerWriter, TheSameTokenizerGivesTheSameBytes) {
  const OpenVinoTokenizerModels a = build_openvino_tokenizers(golden_checkpoint_dir("qwen3_tiny"));
  const OpenVinoTokenizerModels b = build_openvino_tokenizers(golden_checkpoint_dir("qwen3_tiny"));
  EXPECT_EQ(a.tokenizer_xml, b.tokenizer_xml);
  EXPECT_EQ(a.tokenizer_bin, b.tokenizer_bin);
  EXPECT_EQ(a.detokenizer_xml, b.detokenizer_xml);
  EXPECT_EQ(a.detokenizer_bin, b.detokenizer_bin);
}

// A tokenizer.json edited in one field is refused naming it.
TEST(OpenVinoTokenizerWriter, ATokenizerItHasNoGraphForIsRefusedNamingTheField) {
  const std::vector<std::pair<std::string, Json>> edits = {
      {"normalizer", Json{{"type", "Lowercase"}}},
      {"decoder", Json{{"type", "Metaspace"}}},
      {"added_tokens", Json::array()},
  };
  for (const auto& [field, value] : edits) {
    testing::TempDir tmp;
    Json doc = read_json_file(golden_checkpoint_dir("llama3_tiny") / "tokenizer.json");
    doc[field] = value;
    write_file_atomic(tmp.path() / "tokenizer.json", doc.dump());
    try {
      build_openvino_tokenizers(tmp.path());
      ADD_FAILURE() << field << ": built";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// SentencePiece-style BPE (Mistral 7B's byte fallback): spaces as "▁" by RegexNormalization, no
// regex split, BPE with byte fallback, and the decoder's "▁" -> " ", ByteFallback, strip.
TEST(OpenVinoTokenizerWriter, SentencePieceBpeHasItsNormalizationAndByteFallback) {
  const auto mistral = testing::tokenizer_fixture("mistral7b");
  ASSERT_TRUE(mistral.has_value());
  const OpenVinoTokenizerModels m = build_openvino_tokenizers(*mistral);
  EXPECT_EQ(layer_types(m.tokenizer_xml),
            "Parameter ReadValue Assign StringTensorUnpack ShapeOf Gather Range Add Range SpecialTokensSplit "
            "RegexNormalization RegexNormalization BPETokenizer Select Truncate CombineSegments Subtract ReduceMax "
            "RaggedToDense Convert Convert Convert Result Result");
  EXPECT_EQ(layer_types(m.detokenizer_xml),
            "Parameter Convert VocabDecoder RegexNormalization ByteFallback FuzeRagged RegexNormalization "
            "UTF8Validate StringTensorPack Result");
  EXPECT_NE(m.tokenizer_xml.find("byte_fallback=\"true\""), std::string::npos);
  const std::string bin(m.tokenizer_bin.begin(), m.tokenizer_bin.end());
  EXPECT_NE(bin.find("<unk><s></s><0x00><0x01>"), std::string::npos);  // the vocabulary, pieces as they are
}

// The real tokenizers OpenVINO ran offline (tests/data/openvino/exports/tokenizers.json).
class OpenVinoTokenizerWriterReal : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenVinoTokenizerWriterReal, GivesTheBytesOpenVinoRan) {
  static const Json golden = read_json_file(testing::test_data_dir() / "openvino" / "exports" / "tokenizers.json");
  const std::string& name = GetParam();
  const Json& g = golden.at(name);
  const auto source = testing::tokenizer_fixture(name);
  if (!source) GTEST_SKIP() << "set KILN_EXTERNAL_FIXTURES for the " << name << " tokenizer";
  testing::TempDir scratch;
  const OpenVinoTokenizerModels m = build_openvino_tokenizers(testing::usable_tokenizer_dir(*source, scratch));
  EXPECT_EQ(sha256_hex(m.tokenizer_xml), g.at("openvino_tokenizer_xml_sha256").get<std::string>());
  EXPECT_EQ(sha256_hex(std::span(m.tokenizer_bin)), g.at("openvino_tokenizer_bin_sha256").get<std::string>());
  EXPECT_EQ(sha256_hex(m.detokenizer_xml), g.at("openvino_detokenizer_xml_sha256").get<std::string>());
  EXPECT_EQ(sha256_hex(std::span(m.detokenizer_bin)), g.at("openvino_detokenizer_bin_sha256").get<std::string>());
  // OpenVINO gave tokenizers' ids and text on every text but two, each as convert_tokenizer's own
  // models do: Llama 3's one word that ignore_merges finds whole ("Việt"), which
  // openvino-tokenizers' BPETokenizer does not do, and Mistral's "<0x0A>" typed as text, which
  // its byte_fallback BPE reads as the byte token.
  EXPECT_LE(g.at("encode_differs_from_hf").size(), 1u);
  EXPECT_LE(g.at("decode_differs_from_hf").size(), 1u);
  EXPECT_EQ(g.at("texts_checked").get<int>(), 178);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OpenVinoTokenizerWriterReal,
                         ::testing::Values("llama3", "llama3_1", "qwen3", "mistral7b"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln::exporter
