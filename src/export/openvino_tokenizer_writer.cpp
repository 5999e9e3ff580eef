#include "export/openvino_tokenizer_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "export/openvino_graph_writer.hpp"
#include "export/openvino_tokenizer_spec.hpp"
#include "util/file_io.hpp"
#include "util/utf8.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;

const OvTensorType kRagged{"i32", {kDyn}};  // begins, ends, ids or string offsets
const OvTensorType kChars{"u8", {kDyn}};
const OvTensorType kFlags{"boolean", {kDyn}};

// A list of strings as OpenVINO's string ops take it: i32 begin and end offsets into one u8 buffer.
struct StringTable {
  OvPort begins, ends, chars;
};

StringTable string_table(OvGraphWriter& g, const std::vector<std::string_view>& strings) {
  std::vector<std::int32_t> begins, ends;
  std::string chars;
  for (std::string_view s : strings) {
    begins.push_back(static_cast<std::int32_t>(chars.size()));
    chars.append(s);
    ends.push_back(static_cast<std::int32_t>(chars.size()));
  }
  return {g.i32_constant(begins), g.i32_constant(ends), g.u8_constant(chars)};
}

StringTable vocab_table(OvGraphWriter& g, const OvTokenizerSpec& spec) {
  return string_table(g, std::vector<std::string_view>(spec.vocab.begin(), spec.vocab.end()));
}

// An alternation matching any added token; longer tokens sharing a prefix come first (reverse
// byte order) so the alternation prefers them, and ASCII punctuation is escaped.
std::string added_tokens_regex(const OvTokenizerSpec& spec) {
  std::vector<std::string> contents;
  for (const OvAddedToken& t : spec.added) contents.push_back(t.content);
  std::sort(contents.begin(), contents.end(), std::greater<>());
  contents.erase(std::unique(contents.begin(), contents.end()), contents.end());
  std::vector<std::string> escaped;
  for (const std::string& content : contents) {
    std::string e;
    for (char c : content) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x80 && !std::isalnum(u) && c != '_') e += '\\';
      e += c;
    }
    escaped.push_back(std::move(e));
  }
  return fmt::format("({})", fmt::join(escaped, "|"));
}

// The rt_info keys GenAI and openvino-tokenizers read, in key order, on both models.
OvAttributes rt_info(const OvTokenizerSpec& spec) {
  OvAttributes info = {
      {"add_attention_mask", "True"},    {"add_special_tokens", "True"},
      {"detokenizer_input_type", "i64"}, {"handle_special_tokens_with_re", "False"},
      {"number_of_inputs", "1"},         {"processed_post_processor_template", spec.processed_template},
      {"skip_special_tokens", "True"},   {"streaming_detokenizer", "False"},
      {"tokenizer_output_type", "i64"},  {"truncation", "False"},
      {"use_max_padding", "False"},      {"use_sentencepiece_backend", "False"},
      {"utf8_replace_mode", "replace"}};
  if (spec.bos_token_id) info.emplace_back("bos_token_id", std::to_string(*spec.bos_token_id));
  if (spec.eos_token_id) info.emplace_back("eos_token_id", std::to_string(*spec.eos_token_id));
  if (spec.pad_token_id) info.emplace_back("pad_token_id", std::to_string(*spec.pad_token_id));
  if (!spec.chat_template.empty()) info.emplace_back("chat_template", spec.chat_template);
  std::sort(info.begin(), info.end());
  return info;
}

// string [batch] -> input_ids, attention_mask i64 [batch, tokens].
OvGraphWriter tokenizer_graph(const OvTokenizerSpec& spec) {
  OvGraphWriter g;
  const OvPort text = g.parameter("string_input", {"string", {kDyn}});
  // GenAI switches truncation on through this variable; off, the limit below is never reached.
  const std::uint8_t off = 0;
  const OvPort truncation =
      g.op("ReadValue", "opset6", "",
           {{"variable_id", "truncation"}, {"variable_type", "dynamic"}, {"variable_shape", "..."}},
           {g.constant("", {"boolean", {}}, std::span(&off, 1))}, {"boolean", {}});
  g.sink("Assign", "opset6", "", {{"variable_id", "truncation"}}, {truncation}, &g.type_of(truncation));

  // Each string of the batch is one ragged row [i, i + 1) of strings.
  const std::vector<OvPort> strings =
      g.multi_op("StringTensorUnpack", "opset15", {}, {text}, {kRagged, kRagged, kChars});
  const OvPort shape = g.op("ShapeOf", "opset3", "", {{"output_type", "i64"}}, {strings[0]}, {"i64", {1}});
  const OvPort batch = g.op("Gather", "opset8", "", {{"batch_dims", "0"}},
                            {shape, g.i64_constant({0}, true), g.i64_constant({0}, true)}, {"i64", {}});
  const OvPort row_begins = g.op("Range", "opset4", "", {{"output_type", "i32"}},
                                 {g.i64_constant({0}, true), batch, g.i64_constant({1}, true)}, kRagged);
  const OvPort batch_end =
      g.op("Add", "opset1", "", {{"auto_broadcast", "numpy"}}, {batch, g.i64_constant({1}, true)}, {"i64", {}});
  const OvPort row_ends = g.op("Range", "opset4", "", {{"output_type", "i32"}},
                               {g.i64_constant({1}, true), batch_end, g.i64_constant({1}, true)}, kRagged);

  // [rows, strings, flags]: added tokens cut out and flagged so later steps pass them through.
  std::vector<OvPort> pieces =
      g.multi_op("SpecialTokensSplit", "extension", {},
                 {row_begins, row_ends, strings[0], strings[1], strings[2], g.u8_constant(added_tokens_regex(spec))},
                 {kRagged, kRagged, kRagged, kRagged, kChars, kFlags});
  const bool byte_level = spec.kind == OvTokenizerKind::kByteLevel;
  // [rows, words of strings, ...]: what BPE runs on, the skip flags dropped.
  std::vector<OvPort> words;
  if (byte_level) {
    if (spec.nfc) {
      const std::vector<OvPort> normalized =
          g.multi_op("CharsMapNormalization", "extension",
                     {{"add_dummy_prefix", "false"},
                      {"remove_extra_whitespaces", "false"},
                      {"escape_whitespaces", "false"},
                      {"normalization_form", "nfc"},
                      {"case_fold", "false"},
                      {"nmt", "false"}},
                     {pieces[2], pieces[3], pieces[4], pieces[5]}, {kRagged, kRagged, kChars, kFlags});
      std::copy(normalized.begin(), normalized.end(), pieces.begin() + 2);
    }
    std::vector<OvPort> words_in(pieces);
    words_in.push_back(g.u8_constant(spec.split_regex));
    words = g.multi_op("RegexSplit", "extension", {{"behaviour", "isolate"}, {"invert", "false"}, {"max_splits", "-1"}},
                       words_in, {kRagged, kRagged, kRagged, kRagged, kChars, kFlags});
  } else {
    // Spaces become "▁", then one is put before each piece of text: Hugging Face's Prepend
    // and Replace in the other order, which gives the same string.
    const auto replace = [&](const std::vector<OvPort>& in, std::string_view search, std::string_view with) {
      return g.multi_op("RegexNormalization", "extension", {{"global_replace", "true"}},
                        {in[0], in[1], in[2], in[3], g.u8_constant(search), g.u8_constant(with)},
                        {kRagged, kRagged, kChars, kFlags});
    };
    std::vector<OvPort> text(pieces.begin() + 2, pieces.end());
    text = replace(text, " ", kSentencePieceSpace);
    text = replace(text, "^([\\s\\S])", std::string(kSentencePieceSpace) + "$1");
    words = {pieces[0], pieces[1], text[0], text[1], text[2], text[3]};
  }
  std::vector<std::string_view> lefts, rights, added;
  for (const auto& [left, right] : spec.merges) {
    lefts.push_back(left);
    rights.push_back(right);
  }
  std::vector<std::int32_t> added_ids;
  for (const OvAddedToken& t : spec.added) {
    added.push_back(t.content);
    added_ids.push_back(t.id);
  }
  std::vector<OvPort> bpe_in(words.begin(), words.end() - 1);
  for (const StringTable& t :
       {vocab_table(g, spec), string_table(g, lefts), string_table(g, rights), string_table(g, added)}) {
    bpe_in.insert(bpe_in.end(), {t.begins, t.ends, t.chars});
  }
  bpe_in.push_back(g.i32_constant(added_ids));
  // NOTE: a cache of 20% of the vocabulary (at least 20000 words), as convert_tokenizer sizes it.
  const auto cache = std::max<std::size_t>(20000, spec.model_vocab_size / 5);
  const std::vector<OvPort> tokens = g.multi_op("BPETokenizer", "extension",
                                                {{"unk_token", ""},
                                                 {"fuse_unk", byte_level ? "false" : "true"},
                                                 {"suffix_indicator", ""},
                                                 {"end_suffix", ""},
                                                 {"byte_fallback", byte_level ? "false" : "true"},
                                                 {"cache_capacity", std::to_string(cache)}},
                                                bpe_in, {kRagged, kRagged, kRagged});

  const OvPort limit = g.op("Select", "opset1", "", {{"auto_broadcast", "numpy"}},
                            {truncation, g.i32_constant(static_cast<std::int32_t>(spec.max_length)),
                             g.i32_constant(std::numeric_limits<std::int32_t>::max() - 64)},
                            {"i32", {}});
  const std::vector<OvPort> kept =
      g.multi_op("Truncate", "extension", {{"m_num_inputs", "1"}},
                 {tokens[0], tokens[1], tokens[2], limit, g.u8_constant("right"), g.u8_constant("longest_first")},
                 {kRagged, kRagged, kRagged});

  // The post-processor's tokens as constant one-row segments around the text's.
  std::vector<OvPort> segments;
  std::vector<std::int32_t> segment_types;
  const auto add_constant_segment = [&](const std::vector<std::int32_t>& ids) {
    if (ids.empty()) return;
    segments.insert(segments.end(),
                    {g.i32_constant(0), g.i32_constant(static_cast<std::int32_t>(ids.size())), g.i32_constant(ids)});
    segment_types.push_back(0);
  };
  add_constant_segment(spec.prefix_ids);
  segments.insert(segments.end(), kept.begin(), kept.end());
  segment_types.push_back(0);
  add_constant_segment(spec.suffix_ids);
  segments.push_back(g.i32_constant(segment_types));
  const std::vector<OvPort> row =
      g.multi_op("CombineSegments", "extension", {}, segments, {kRagged, kRagged, kRagged, kRagged, kRagged, kRagged});

  const OvPort lengths = g.op("Subtract", "opset1", "", {{"auto_broadcast", "numpy"}}, {row[1], row[0]}, kRagged);
  const OvPort longest =
      g.op("ReduceMax", "opset1", "", {{"keep_dims", "false"}}, {lengths, g.i32_constant(0)}, {"i32", {}});
  const std::vector<OvPort> dense = g.multi_op(
      "RaggedToDense", "extension", {{"pad_right", spec.pad_right ? "true" : "false"}, {"m_pad_max_length", "false"}},
      {row[0], row[1], row[2], longest, g.i32_constant(spec.pad_token_id.value_or(0))},
      {{"i32", {kDyn, kDyn}}, {"boolean", {kDyn, kDyn}}});
  const OvPort mask32 = g.op("Convert", "opset1", "", {{"destination_type", "i32"}}, {dense[1]}, {"i32", {kDyn, kDyn}});
  const OvPort mask = g.op("Convert", "opset1", "", {{"destination_type", "i64"}}, {mask32}, {"i64", {kDyn, kDyn}});
  const OvPort ids = g.op("Convert", "opset1", "", {{"destination_type", "i64"}}, {dense[0]}, {"i64", {kDyn, kDyn}});
  g.name_output(ids, "input_ids");
  g.name_output(mask, "attention_mask");
  g.sink("Result", "opset1", "Result_input_ids", {}, {ids}, nullptr);
  g.sink("Result", "opset1", "Result_attention_mask", {}, {mask}, nullptr);
  g.set_rt_info(rt_info(spec));
  return g;
}

// i64 [batch, tokens] -> string [batch]; special tokens skipped, invalid UTF-8 replaced.
OvGraphWriter detokenizer_graph(const OvTokenizerSpec& spec) {
  OvGraphWriter g;
  const OvPort ids = g.parameter("token_ids", {"i64", {kDyn, kDyn}});
  const OvPort ids32 = g.op("Convert", "opset1", "", {{"destination_type", "i32"}}, {ids}, {"i32", {kDyn, kDyn}});
  const StringTable vocab = vocab_table(g, spec);
  std::vector<std::int32_t> skipped;
  for (const OvAddedToken& t : spec.added) {
    if (t.special) skipped.push_back(t.id);
  }
  std::sort(skipped.begin(), skipped.end());
  const std::vector<OvPort> pieces = g.multi_op("VocabDecoder", "extension", {{"skip_tokens", ""}},
                                                {ids32, vocab.begins, vocab.ends, vocab.chars, g.i32_constant(skipped)},
                                                {kRagged, kRagged, kRagged, kRagged, kChars});
  // [begins, ends, chars] of the decoded text, one string per row.
  std::vector<OvPort> decoded;
  if (spec.kind == OvTokenizerKind::kByteLevel) {
    const std::vector<OvPort> joined =
        g.multi_op("FuzeRagged", "extension", {}, {pieces[0], pieces[1], pieces[2], pieces[3]}, {kRagged, kRagged});
    decoded = {joined[0], joined[1], pieces[4]};
  } else {
    // Replace "▁" by spaces, <0xNN> tokens by their bytes, join, strip one leading space.
    const auto replace = [&](const std::vector<OvPort>& in, std::string_view search, std::string_view with) {
      return g.multi_op("RegexNormalization", "extension", {{"global_replace", "true"}},
                        {in[0], in[1], in[2], g.u8_constant(search), g.u8_constant(with)}, {kRagged, kRagged, kChars});
    };
    const std::vector<OvPort> spaced = replace({pieces[2], pieces[3], pieces[4]}, kSentencePieceSpace, " ");
    const std::vector<OvPort> bytes = g.multi_op("ByteFallback", "extension", {}, spaced, {kRagged, kRagged, kChars});
    const std::vector<OvPort> joined =
        g.multi_op("FuzeRagged", "extension", {}, {pieces[0], pieces[1], bytes[0], bytes[1]}, {kRagged, kRagged});
    decoded = replace({joined[0], joined[1], bytes[2]}, "^ ", "");
  }
  const std::vector<OvPort> valid =
      g.multi_op("UTF8Validate", "extension", {{"replace_mode", "true"}}, decoded, {kRagged, kRagged, kChars});
  const OvPort text = g.op("StringTensorPack", "opset15", "", {}, {valid[0], valid[1], valid[2]}, {"string", {kDyn}});
  g.name_output(text, "string_output");
  g.sink("Result", "opset1", "Result_string_output", {}, {text}, nullptr);
  g.set_rt_info(rt_info(spec));
  return g;
}

std::string_view as_text(const std::vector<std::uint8_t>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

OpenVinoTokenizerModels build_openvino_tokenizers(const fs::path& dir) {
  const OvTokenizerSpec spec = read_ov_tokenizer_spec(dir);
  const OvGraphWriter tokenizer = tokenizer_graph(spec);
  const OvGraphWriter detokenizer = detokenizer_graph(spec);
  return {tokenizer.xml(), tokenizer.bin(), detokenizer.xml(), detokenizer.bin()};
}

void write_openvino_tokenizers(const OpenVinoTokenizerModels& models, const fs::path& dir) {
  write_file_atomic(dir / kOpenVinoTokenizerXml, models.tokenizer_xml);
  write_file_atomic(dir / kOpenVinoTokenizerBin, as_text(models.tokenizer_bin));
  write_file_atomic(dir / kOpenVinoDetokenizerXml, models.detokenizer_xml);
  write_file_atomic(dir / kOpenVinoDetokenizerBin, as_text(models.detokenizer_bin));
}

}  // namespace kiln::exporter
