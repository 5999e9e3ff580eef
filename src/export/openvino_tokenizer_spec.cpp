#include "export/openvino_tokenizer_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "tokenizer/byte_level_alphabet.hpp"
#include "tokenizer/tokenizer_config.hpp"
#include "tokenizer/tokenizer_json_reader.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/utf8.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMaxLength = std::numeric_limits<std::int32_t>::max();

[[noreturn]] void refuse(std::string_view field, const Json& value, std::string_view why) {
  fail(ErrorKind::kUnsupported,
       "tokenizer.json: {} is {}: {}; kiln writes OpenVINO tokenizer models for byte-level BPE (Llama 3, Qwen2, "
       "Qwen3) and SentencePiece-style BPE (Llama 2, Mistral) only",
       field, value.dump().substr(0, 200), why);
}

std::string type_of(const Json& component) {
  return component.is_object() && component.contains("type") && component["type"].is_string()
             ? component["type"].get<std::string>()
             : "";
}

// The byte string a byte-level token stands for; a token outside the alphabet (an added token
// kept in model.vocab) stands for its own UTF-8 bytes.
std::string token_bytes(const std::string& token) {
  std::optional<std::string> bytes = tok::ByteLevelAlphabet::get().decode(token);
  return bytes ? std::move(*bytes) : token;
}

void read_model(const tok::TokenizerJson& doc, OvTokenizerSpec& spec) {
  const Json& model = doc.root.at("model");
  if (type_of(model) != "BPE") refuse("model.type", model.value("type", Json()), "not BPE");
  spec.kind = model.value("byte_fallback", false) ? OvTokenizerKind::kSentencePiece : OvTokenizerKind::kByteLevel;
  const bool byte_level = spec.kind == OvTokenizerKind::kByteLevel;
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model[key].is_null() && model[key] != "")
      refuse(fmt::format("model.{}", key), model[key], "not supported");
  }
  if (model.contains("dropout") && !model["dropout"].is_null())
    refuse("model.dropout", model["dropout"], "not supported");
  if (!doc.bpe.has_vocab || !doc.bpe.has_merges) refuse("model", Json("without vocab / merges"), "not readable");
  std::int64_t size = 0;
  for (std::size_t e = 0; e < doc.bpe.vocab.size(); ++e) size = std::max<std::int64_t>(size, doc.bpe.vocab.id(e) + 1);
  spec.model_vocab_size = doc.bpe.vocab.size();
  spec.vocab.resize(static_cast<std::size_t>(size));
  for (std::size_t e = 0; e < doc.bpe.vocab.size(); ++e) {
    const std::string& token = doc.bpe.vocab.token(e);
    spec.vocab[static_cast<std::size_t>(doc.bpe.vocab.id(e))] = byte_level ? token_bytes(token) : token;
  }
  spec.merges.reserve(doc.bpe.merges.size());
  for (std::size_t r = 0; r < doc.bpe.merges.size(); ++r) {
    std::string left(doc.bpe.merges.left(r)), right(doc.bpe.merges.right(r));
    spec.merges.emplace_back(byte_level ? token_bytes(left) : left, byte_level ? token_bytes(right) : right);
  }
}

void read_added_tokens(const Json& list, OvTokenizerSpec& spec) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonFields fields(list[i], fmt::format("tokenizer.json: added_tokens[{}]", i));
    for (const char* rule : {"single_word", "lstrip", "rstrip"}) {
      if (fields.get_or<bool>(rule, false)) refuse(fmt::format("added_tokens[{}].{}", i, rule), true, "not supported");
    }
    OvAddedToken token{fields.get<std::string>("content"), fields.get<std::int32_t>("id"),
                       fields.get_or<bool>("special", false)};
    if (token.id < 0) fields.fail_field("id", "must not be negative");
    if (static_cast<std::size_t>(token.id) >= spec.vocab.size())
      spec.vocab.resize(static_cast<std::size_t>(token.id) + 1);
    spec.vocab[static_cast<std::size_t>(token.id)] = token.content;
    spec.added.push_back(std::move(token));
  }
  // NOTE: the graph cuts added tokens out first, with an alternation of them; an empty one would
  // match everywhere. Tokenizers without any are rare enough to leave to convert_tokenizer.
  if (spec.added.empty()) refuse("added_tokens", list, "empty: the graph needs at least one");
}

// The normalizer, pre-tokenizer and decoder of SentencePiece-style BPE as Hugging Face converts
// it: Sequence [Prepend "▁", Replace " " -> "▁"], none, Sequence [Replace "▁" -> " ", ByteFallback,
// Fuse, Strip one leading space].
void check_sentencepiece_pipeline(const Json& root) {
  const Json spm_normalizer = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Prepend"}, {"prepend", kSentencePieceSpace}},
        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSentencePieceSpace}}}}};
  const Json spm_decoder = {{"type", "Sequence"},
                            {"decoders",
                             {{{"type", "Replace"}, {"pattern", {{"String", kSentencePieceSpace}}}, {"content", " "}},
                              {{"type", "ByteFallback"}},
                              {{"type", "Fuse"}},
                              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  const Json& normalizer = root.value("normalizer", Json());
  if (normalizer != spm_normalizer)
    refuse("normalizer", normalizer, "byte_fallback BPE needs Prepend + Replace of \"▁\"");
  const Json& pre = root.value("pre_tokenizer", Json());
  if (!pre.is_null()) refuse("pre_tokenizer", pre, "byte_fallback BPE needs none");
  const Json& decoder = root.value("decoder", Json());
  if (decoder != spm_decoder) refuse("decoder", decoder, "byte_fallback BPE needs Replace, ByteFallback, Fuse, Strip");
}

void read_normalizer_and_split(const Json& root, OvTokenizerSpec& spec) {
  if (spec.kind == OvTokenizerKind::kSentencePiece) {
    check_sentencepiece_pipeline(root);
    return;
  }
  const Json& normalizer = root.value("normalizer", Json());
  if (!normalizer.is_null()) {
    if (type_of(normalizer) != "NFC") refuse("normalizer", normalizer, "only NFC (or none) is supported");
    spec.nfc = true;
  }
  // Sequence [Split(Regex, Isolated), ByteLevel(no prefix space, no regex of its own)].
  const Json& pre = root.value("pre_tokenizer", Json());
  const Json* steps = type_of(pre) == "Sequence" ? &pre["pretokenizers"] : nullptr;
  const bool shaped = steps != nullptr && steps->is_array() && steps->size() == 2 && type_of((*steps)[0]) == "Split" &&
                      type_of((*steps)[1]) == "ByteLevel";
  if (!shaped) refuse("pre_tokenizer", pre, "only Sequence [Split (regex, Isolated), ByteLevel] is supported");
  const Json& split = (*steps)[0];
  const Json& byte_level = (*steps)[1];
  if (!split.contains("pattern") || !split["pattern"].contains("Regex") || split.value("behavior", "") != "Isolated" ||
      split.value("invert", false)) {
    refuse("pre_tokenizer.pretokenizers[0]", split, "only an Isolated, non-inverted Regex split is supported");
  }
  if (byte_level.value("add_prefix_space", false) || byte_level.value("use_regex", true)) {
    refuse("pre_tokenizer.pretokenizers[1]", byte_level, "add_prefix_space and use_regex must be false");
  }
  spec.split_regex = split["pattern"]["Regex"].get<std::string>();
  const Json& decoder = root.value("decoder", Json());
  if (type_of(decoder) != "ByteLevel") refuse("decoder", decoder, "only ByteLevel is supported");
}

// Ids of a TemplateProcessing entry list: a special token's ids, -1 / -2 for sequence A / B.
void template_ids(const Json& entries, const Json& specials, std::vector<std::int32_t>& ids,
                  std::vector<std::int32_t>& type_ids) {
  for (const Json& entry : entries) {
    if (entry.contains("SpecialToken")) {
      const Json& token = entry["SpecialToken"];
      for (const Json& id : specials.at(token.at("id").get<std::string>()).at("ids")) {
        ids.push_back(id.get<std::int32_t>());
        type_ids.push_back(token.value("type_id", 0));
      }
    } else {
      const Json& sequence = entry.at("Sequence");
      ids.push_back(sequence.at("id").get<std::string>() == "A" ? -1 : -2);
      type_ids.push_back(sequence.value("type_id", 0));
    }
  }
}

void read_post_processor(const Json& root, OvTokenizerSpec& spec) {
  const Json& post = root.value("post_processor", Json());
  std::vector<Json> processors;
  if (type_of(post) == "Sequence") {
    for (const Json& p : post.at("processors")) processors.push_back(p);
  } else if (!post.is_null()) {
    processors.push_back(post);
  }
  Json processed = {{"single", {{"ids", {-1}}, {"type_ids", {0}}}},
                    {"pair", {{"ids", {-1, -2}}, {"type_ids", {0, 0}}}}};
  for (const Json& p : processors) {
    if (type_of(p) == "ByteLevel") continue;  // offsets only
    if (type_of(p) != "TemplateProcessing") refuse("post_processor", p, "only TemplateProcessing / ByteLevel");
    const Json& specials = p.value("special_tokens", Json::object());
    std::vector<std::int32_t> single, single_types, pair, pair_types;
    template_ids(p.at("single"), specials, single, single_types);
    template_ids(p.at("pair"), specials, pair, pair_types);
    const auto a = std::find(single.begin(), single.end(), -1);
    if (a == single.end() || std::count(single.begin(), single.end(), -1) != 1) {
      refuse("post_processor.single", p.at("single"), "needs sequence A once");
    }
    spec.prefix_ids.assign(single.begin(), a);
    spec.suffix_ids.assign(a + 1, single.end());
    processed = {{"single", {{"ids", single}, {"type_ids", single_types}}},
                 {"pair", {{"ids", pair}, {"type_ids", pair_types}}}};
  }
  spec.processed_template = processed.dump();
}

void read_config(const fs::path& dir, OvTokenizerSpec& spec) {
  const tok::TokenizerConfig config =
      tok::read_tokenizer_config(dir / "tokenizer_config.json", dir / "chat_template.jinja");
  const auto id_of = [&](const std::optional<std::string>& content) -> std::optional<std::int32_t> {
    if (!content) return std::nullopt;
    for (const OvAddedToken& t : spec.added) {
      if (t.content == *content) return t.id;
    }
    for (std::size_t id = 0; id < spec.vocab.size(); ++id) {
      if (spec.vocab[id] == *content) return static_cast<std::int32_t>(id);
    }
    return std::nullopt;
  };
  spec.bos_token_id = id_of(config.bos_token);
  spec.eos_token_id = id_of(config.eos_token);
  spec.pad_token_id = id_of(config.pad_token);
  spec.chat_template = config.chat_template;
  std::int64_t max_length = kMaxLength;
  if (const auto it = config.json.find("model_max_length"); it != config.json.end() && it->is_number()) {
    max_length = it->get<double>() < static_cast<double>(kMaxLength) ? it->get<std::int64_t>() : kMaxLength;
  }
  const auto added = static_cast<std::int64_t>(spec.prefix_ids.size() + spec.suffix_ids.size());
  spec.max_length = std::max<std::int64_t>(max_length - added, 0);
  spec.pad_right = config.json.value("padding_side", std::string("right")) != "left";
}

}  // namespace

OvTokenizerSpec read_ov_tokenizer_spec(const fs::path& dir) {
  const tok::TokenizerJson doc =
      tok::read_tokenizer_json(read_file(dir / "tokenizer.json"), (dir / "tokenizer.json").string());
  OvTokenizerSpec spec;
  read_model(doc, spec);
  read_added_tokens(doc.root.value("added_tokens", Json()), spec);
  read_normalizer_and_split(doc.root, spec);
  read_post_processor(doc.root, spec);
  read_config(dir, spec);
  return spec;
}

}  // namespace kiln::exporter
