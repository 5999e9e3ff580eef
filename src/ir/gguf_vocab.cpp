// tokenizer.ggml.* -> tokenizer.json: every token goes into the BPE vocabulary at its id, the
// CONTROL / USER_DEFINED / UNKNOWN ones also into added_tokens (llama.cpp splits exactly those out
// of the text first), and llama.cpp's defaults are spelled out, since a GGUF omits them.
#include "ir/gguf_vocab.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/gguf_pre_tokenizer.hpp"
#include "ir/gguf_special_tokens.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/utf8.hpp"

namespace kiln::ir {
namespace {

constexpr const char* kSupportedModels = "gpt2, llama";

// The checked arrays of tokenizer.ggml.*, one entry per token id.
struct Vocab {
  std::vector<std::string> tokens;  // llama.cpp names an empty token "[EMPTY_<id>]"; so does this
  std::vector<GgufTokenType> types;
  std::vector<float> scores;                               // 0 for every token without tokenizer.ggml.scores
  std::unordered_map<std::string_view, std::int32_t> ids;  // views into `tokens`

  std::int32_t size() const { return static_cast<std::int32_t>(tokens.size()); }
  std::optional<std::int32_t> find(std::string_view text) const {
    const auto it = ids.find(text);
    return it == ids.end() ? std::nullopt : std::optional(it->second);
  }
};

std::string where(const GgufFile& file) { return file.path().string(); }

const Json& require_array(const GgufFile& file, const char* key) {
  const Json* value = file.find(key);
  if (value == nullptr) fail("{}: {} is missing", where(file), key);
  if (!value->is_array()) fail("{}: {} must be an array, got {}", where(file), key, value->type_name());
  return *value;
}

// An optional per-token array: absent, or exactly one entry per token.
const Json* per_token_array(const GgufFile& file, const char* key, std::size_t num_tokens) {
  if (file.find(key) == nullptr) return nullptr;
  const Json& array = require_array(file, key);
  if (array.size() != num_tokens) {
    fail("{}: {} has {} entries for the {} tokens of tokenizer.ggml.tokens", where(file), key, array.size(),
         num_tokens);
  }
  return &array;
}

std::optional<bool> optional_bool(const GgufFile& file, const char* key) {
  const Json* value = file.find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) fail("{}: {} must be a bool, got {}", where(file), key, value->dump());
  return value->get<bool>();
}

Vocab read_vocab(const GgufFile& file) {
  const char* key = "tokenizer.ggml.tokens";
  const Json& tokens = require_array(file, key);
  if (tokens.empty()) fail("{}: {} is empty", where(file), key);
  if (tokens.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    fail("{}: {} holds {} tokens, more than 32-bit ids can number", where(file), key, tokens.size());
  }
  Vocab vocab;
  vocab.tokens.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) fail("{}: {}[{}] must be a string, got {}", where(file), key, i, tokens[i].dump());
    std::string text = tokens[i].get<std::string>();
    if (!is_valid_utf8(text)) fail("{}: {}[{}] is not valid UTF-8", where(file), key, i);
    vocab.tokens.push_back(text.empty() ? fmt::format("[EMPTY_{}]", i) : std::move(text));
  }
  vocab.ids.reserve(vocab.tokens.size());
  for (std::int32_t id = 0; id < vocab.size(); ++id) {
    const auto [it, added] = vocab.ids.emplace(vocab.tokens[id], id);
    if (!added) {
      fail("{}: {}[{}] \"{}\" repeats token {} (llama.cpp refuses such a vocabulary too)", where(file), key, id,
           vocab.tokens[id], it->second);
    }
  }

  vocab.types.assign(vocab.tokens.size(), GgufTokenType::kNormal);
  if (const Json* types = per_token_array(file, "tokenizer.ggml.token_type", vocab.tokens.size())) {
    for (std::size_t i = 0; i < types->size(); ++i) {
      const Json& t = (*types)[i];
      if (!t.is_number_integer() || t.get<std::int64_t>() < 0 || t.get<std::int64_t>() > 6) {
        fail("{}: tokenizer.ggml.token_type[{}] must be a token type 0 to 6, got {}", where(file), i, t.dump());
      }
      vocab.types[i] = static_cast<GgufTokenType>(t.get<std::int32_t>());
    }
  }
  vocab.scores.assign(vocab.tokens.size(), 0.0f);
  if (const Json* scores = per_token_array(file, "tokenizer.ggml.scores", vocab.tokens.size())) {
    for (std::size_t i = 0; i < scores->size(); ++i) {
      if (!(*scores)[i].is_number()) {
        fail("{}: tokenizer.ggml.scores[{}] must be a number, got {}", where(file), i, (*scores)[i].dump());
      }
      vocab.scores[i] = (*scores)[i].get<float>();
    }
  }
  return vocab;
}

Json vocab_object(const Vocab& vocab) {
  Json object = Json::object();
  for (std::int32_t id = 0; id < vocab.size(); ++id) object[vocab.tokens[id]] = id;
  return object;
}

// tokenizer.ggml.merges, "left right" by rank, as llama.cpp splits them (at the first space after
// the first byte). Every part and the merged string must be tokens: HF BPE cannot hold a merge
// into a string outside the vocabulary (llama.cpp would fall back to single bytes there).
Json bpe_merges(const GgufFile& file, const Vocab& vocab) {
  const char* key = "tokenizer.ggml.merges";
  const Json& merges = require_array(file, key);
  Json out = Json::array();
  std::unordered_set<std::uint64_t> seen;  // (left id << 32 | right id)
  for (std::size_t i = 0; i < merges.size(); ++i) {
    if (!merges[i].is_string()) fail("{}: {}[{}] must be a string, got {}", where(file), key, i, merges[i].dump());
    const std::string merge = merges[i].get<std::string>();
    const std::size_t space = merge.find(' ', 1);
    if (space == std::string::npos) {
      fail("{}: {}[{}] \"{}\" is not two tokens separated by a space", where(file), key, i, merge);
    }
    const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
    for (const std::string& part : {left, right, left + right}) {
      if (!vocab.find(part)) fail("{}: {}[{}] \"{}\": \"{}\" is not a token", where(file), key, i, merge, part);
    }
    // NOTE: llama.cpp keeps the first rank of a pair listed twice and HF the last: repeats go.
    const auto pair = std::uint64_t{static_cast<std::uint32_t>(*vocab.find(left))} << 32 |
                      static_cast<std::uint32_t>(*vocab.find(right));
    if (seen.insert(pair).second) out.push_back(Json::array({left, right}));
  }
  return out;
}

// llama.cpp's SentencePiece tokenizer (llm_tokenizer_spm_session) starts from characters and
// repeatedly merges the adjacent pair whose concatenation is the token of highest score, the
// leftmost on a tie. HF BPE merges the pair of lowest rank, the leftmost on a tie, so every split
// of a token into two tokens becomes a merge ranked by that token's score: the same merges in the
// same order. Equal scores rank by token id, and a token's splits left to right.
// NOTE: only where two different pairs of one score compete does the order differ (llama.cpp
// takes the leftmost pair, this the lower rank); real vocabularies give distinct scores.
Json spm_merges(const Vocab& vocab) {
  struct Merge {
    float score;
    std::int32_t left, right;
  };
  std::vector<Merge> merges;
  for (std::int32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view token = vocab.tokens[id];
    for (std::size_t cut = utf8_sequence_length(token[0]); cut < token.size();
         cut += utf8_sequence_length(token[cut])) {
      const auto left = vocab.find(token.substr(0, cut)), right = vocab.find(token.substr(cut));
      if (left && right) merges.push_back({vocab.scores[id], *left, *right});
    }
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
  Json out = Json::array();
  for (const Merge& m : merges) out.push_back(Json::array({vocab.tokens[m.left], vocab.tokens[m.right]}));
  return out;
}

Json byte_level() {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
}

Json bpe_model(const Vocab& vocab, Json merges, bool ignore_merges, bool byte_fallback,
               std::optional<std::string> unk_token) {
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", unk_token ? Json(*unk_token) : Json()},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", byte_fallback},
          {"byte_fallback", byte_fallback},
          {"ignore_merges", ignore_merges},
          {"vocab", vocab_object(vocab)},
          {"merges", std::move(merges)}};
}

Json strip_one_leading_space() { return {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}; }

// The tokenizer.json parts that differ between the two vocabulary types.
struct ModelParts {
  Json normalizer, pre_tokenizer, model, decoder;
  bool add_bos = false;  // llama.cpp's default when tokenizer.ggml.add_bos_token is absent
  bool clean_spaces = false;
};

ModelParts gpt2_parts(const GgufFile& file, const Vocab& vocab) {
  std::string name = "default";
  if (const Json* pre = file.find("tokenizer.ggml.pre")) {
    if (!pre->is_string()) fail("{}: tokenizer.ggml.pre must be a string, got {}", where(file), pre->dump());
    name = pre->get<std::string>();
  } else {
    spdlog::warn("{}: no tokenizer.ggml.pre; using llama.cpp's 'default' pre-tokenizer, as llama.cpp does",
                 where(file));
  }
  const std::optional<GgufPreTokenizer> pre = gguf_pre_tokenizer(name);
  if (!pre) {
    fail(ErrorKind::kUnsupported, "{}: tokenizer.ggml.pre '{}' is not supported (supported: {})", where(file), name,
         supported_gguf_pre_tokenizers());
  }
  ModelParts parts;
  Json steps = Json::array();
  for (const std::string& regex : pre->regexes) {
    steps.push_back({{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}});
  }
  steps.push_back(byte_level());
  parts.pre_tokenizer = {{"type", "Sequence"}, {"pretokenizers", std::move(steps)}};
  parts.model = bpe_model(vocab, bpe_merges(file, vocab), pre->ignore_merges, false, std::nullopt);
  parts.decoder = byte_level();
  // llama_detokenize drops one leading space when a byte-level file sets add_space_prefix.
  if (optional_bool(file, "tokenizer.ggml.add_space_prefix").value_or(false)) {
    parts.decoder = {{"type", "Sequence"}, {"decoders", Json::array({byte_level(), strip_one_leading_space()})}};
  }
  parts.add_bos = pre->add_bos;
  parts.clean_spaces = pre->clean_spaces;
  return parts;
}

// llama.cpp prefixes a space to each stretch of text that follows the start or a special token
// (when add_space_prefix), writes spaces as "▁" and merges by score with <0xXX> byte fallback:
// Mistral's and Llama 2's own tokenizer.json, normalizer and decoders included.
ModelParts spm_parts(const GgufFile& file, const Vocab& vocab, std::optional<std::int32_t> unk) {
  const bool add_space_prefix = optional_bool(file, "tokenizer.ggml.add_space_prefix").value_or(true);
  ModelParts parts;
  Json normalizers = Json::array();
  if (add_space_prefix) normalizers.push_back({{"type", "Prepend"}, {"prepend", kSentencePieceSpace}});
  normalizers.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSentencePieceSpace}});
  parts.normalizer = {{"type", "Sequence"}, {"normalizers", std::move(normalizers)}};
  parts.pre_tokenizer = nullptr;
  parts.model = bpe_model(vocab, spm_merges(vocab), false, true,
                          unk ? std::optional<std::string>(vocab.tokens[*unk]) : std::nullopt);
  Json decoders =
      Json::array({Json{{"type", "Replace"}, {"pattern", {{"String", kSentencePieceSpace}}}, {"content", " "}},
                   Json{{"type", "ByteFallback"}}, Json{{"type", "Fuse"}}});
  if (add_space_prefix) decoders.push_back(strip_one_leading_space());
  parts.decoder = {{"type", "Sequence"}, {"decoders", std::move(decoders)}};
  parts.add_bos = true;
  parts.clean_spaces = false;
  return parts;
}

// llama.cpp sets RSTRIP on Phi-3's special tokens by the model's name (general.name).
// NOTE: llama.cpp strips ASCII spaces after them, HF any Unicode space.
bool is_phi3(const GgufFile& file) {
  const Json* name = file.find("general.name");
  if (name == nullptr || !name->is_string()) return false;
  std::string lower = name->get<std::string>();
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("phi-3") != std::string::npos || lower.find("phi3") != std::string::npos;
}

Json added_tokens(const GgufFile& file, const Vocab& vocab) {
  const bool phi3 = is_phi3(file);
  Json out = Json::array();
  for (std::int32_t id = 0; id < vocab.size(); ++id) {
    const GgufTokenType type = vocab.types[id];
    if (type != GgufTokenType::kControl && type != GgufTokenType::kUserDefined && type != GgufTokenType::kUnknown) {
      continue;
    }
    const std::string& text = vocab.tokens[id];
    const bool rstrip = phi3 && text != "<unk>" && text != "<s>" && text != "<|endoftext|>";
    // USER_DEFINED tokens are split out of the text even when llama.cpp parses no special tokens,
    // and decoded even when it skips them: HF's non-special added tokens.
    out.push_back({{"id", id},
                   {"content", text},
                   {"single_word", false},
                   {"lstrip", false},
                   {"rstrip", rstrip},
                   {"normalized", false},
                   {"special", type != GgufTokenType::kUserDefined}});
  }
  return out;
}

// BOS and EOS around the sequence, as Llama 3's tokenizer.json does it.
Json template_processing(const Vocab& vocab, std::optional<std::int32_t> bos, std::optional<std::int32_t> eos) {
  auto pieces = [&](std::initializer_list<std::pair<const char*, int>> sequences) {
    Json out = Json::array();
    for (const auto& [name, type_id] : sequences) {
      if (bos) out.push_back({{"SpecialToken", {{"id", vocab.tokens[*bos]}, {"type_id", type_id}}}});
      out.push_back({{"Sequence", {{"id", name}, {"type_id", type_id}}}});
      if (eos) out.push_back({{"SpecialToken", {{"id", vocab.tokens[*eos]}, {"type_id", type_id}}}});
    }
    return out;
  };
  Json special = Json::object();
  for (const auto& id : {bos, eos}) {
    if (!id) continue;
    const std::string& text = vocab.tokens[*id];
    special[text] = {{"id", text}, {"ids", Json::array({*id})}, {"tokens", Json::array({text})}};
  }
  return {{"type", "TemplateProcessing"},
          {"single", pieces({{"A", 0}})},
          {"pair", pieces({{"A", 0}, {"B", 1}})},
          {"special_tokens", std::move(special)}};
}

// Whether llama.cpp adds the token: the file's flag, else the vocabulary type's default; a flag
// that asks for a token the file does not have is refused (llama.cpp would abort on encode).
bool add_token(const GgufFile& file, const char* key, bool fallback, std::optional<std::int32_t> id) {
  const bool add = optional_bool(file, key).value_or(fallback);
  if (add && !id) fail("{}: {} is true but the file names no such token", where(file), key);
  return add;
}

}  // namespace

namespace {

// The vocabulary with llama.cpp's special ids and token-type corrections applied.
struct TypedVocab {
  bool spm = false;  // tokenizer.ggml.model "llama"; else "gpt2"
  Vocab vocab;
  GgufSpecialIds ids;
  std::vector<std::int32_t> end_of_generation_ids;
};

TypedVocab read_typed_vocab(const GgufFile& file) {
  const Json* model_name = file.find("tokenizer.ggml.model");
  if (model_name == nullptr) fail("{}: tokenizer.ggml.model is missing (the file holds no tokenizer)", where(file));
  if (!model_name->is_string()) {
    fail("{}: tokenizer.ggml.model must be a string, got {}", where(file), model_name->dump());
  }
  const std::string model = model_name->get<std::string>();
  if (model != "gpt2" && model != "llama") {
    fail(ErrorKind::kUnsupported, "{}: tokenizer.ggml.model '{}' is not supported (supported: {})", where(file), model,
         kSupportedModels);
  }
  TypedVocab t;
  t.spm = model == "llama";
  t.vocab = read_vocab(file);
  GgufSpecialDefaults defaults;
  if (t.spm) {
    defaults = {1, 2, 0};
  } else {
    const Json* pre = file.find("tokenizer.ggml.pre");
    const auto known = pre != nullptr && pre->is_string() ? gguf_pre_tokenizer(pre->get<std::string>()) : std::nullopt;
    if (!known || known->has_default_bos) defaults.bos = 11;
    defaults.eos = 11;
  }
  t.ids = read_gguf_special_ids(file, t.vocab.size(), defaults);
  t.end_of_generation_ids = apply_llama_cpp_token_types(t.vocab.tokens, t.vocab.types, t.ids);
  return t;
}

}  // namespace

std::vector<std::int32_t> gguf_end_of_generation_ids(const GgufFile& file) {
  return read_typed_vocab(file).end_of_generation_ids;
}

GgufTokenizerFiles tokenizer_files_from_gguf(const GgufFile& file) {
  TypedVocab typed = read_typed_vocab(file);
  const bool spm = typed.spm;
  Vocab& vocab = typed.vocab;
  const GgufSpecialIds& ids = typed.ids;
  GgufTokenizerFiles files;
  files.end_of_generation_ids = typed.end_of_generation_ids;

  ModelParts parts = spm ? spm_parts(file, vocab, ids.unk) : gpt2_parts(file, vocab);
  const bool add_bos = add_token(file, "tokenizer.ggml.add_bos_token", parts.add_bos, ids.bos);
  const bool add_eos = add_token(file, "tokenizer.ggml.add_eos_token", false, ids.eos);

  files.tokenizer = {{"version", "1.0"},
                     {"truncation", nullptr},
                     {"padding", nullptr},
                     {"added_tokens", added_tokens(file, vocab)},
                     {"normalizer", std::move(parts.normalizer)},
                     {"pre_tokenizer", std::move(parts.pre_tokenizer)},
                     {"post_processor",
                      template_processing(vocab, add_bos ? ids.bos : std::nullopt, add_eos ? ids.eos : std::nullopt)},
                     {"decoder", std::move(parts.decoder)},
                     {"model", std::move(parts.model)}};

  Json& config = files.tokenizer_config;
  config = {{"tokenizer_class", "PreTrainedTokenizerFast"},
            {"add_bos_token", add_bos},
            {"add_eos_token", add_eos},
            {"clean_up_tokenization_spaces", parts.clean_spaces}};
  for (const auto& [key, id] : {std::pair{"bos_token", ids.bos}, std::pair{"eos_token", ids.eos},
                                std::pair{"unk_token", ids.unk}, std::pair{"pad_token", ids.pad}}) {
    if (id) config[key] = vocab.tokens[*id];
  }
  if (const Json* chat_template = file.find("tokenizer.chat_template")) {
    if (!chat_template->is_string()) {
      fail("{}: tokenizer.chat_template must be a string, got {}", where(file), chat_template->type_name());
    }
    config["chat_template"] = *chat_template;
  }
  return files;
}

}  // namespace kiln::ir
