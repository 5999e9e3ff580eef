#include "ir/gguf_pre_tokenizer.hpp"

#include <array>

namespace kiln::ir {
namespace {

// The regexes of each LLAMA_VOCAB_PRE_TYPE_*, copied from llm_tokenizer_bpe's constructor. Where
// llama.cpp runs a hand-written splitter instead (the GPT-2, Llama 3, Qwen2 and Qwen3.5
// patterns, "[^\n]+|[\n]+"), it selects it by this exact string and implements the same regex.
// NOTE: llama.cpp's own adaptations are kept as they are: (?i:...) spelled out as '[sS]... (so
// no Unicode case folding), and Tekken's / GPT-4o's letter classes as "letter, not a-z".
enum class Family {
  kDefault,
  kLlama3,
  kJais2,
  kDeepseekCoder,
  kDeepseek3,
  kSpark25,
  kFalcon,
  kStarcoder,
  kGpt2,
  kQwen2,
  kQwen35,
  kPoro,
  kViking,
  kTekken,
  kGpt4o,
  kGraniteEmbedMulti,
  kBailingMoe,
  kSeedCoder,
  kUfakzeka,
  kLaguna,
  kExaoneMoe,
  kMinicpm5,
};

constexpr const char* kGpt2Regex = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr const char* kLlama3Regex =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Regex =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// NOTE: llama.cpp matches the next two with std::wregex after turning every non-ASCII space of
// the text into U+000B, so those spaces never fall in a literal range. The ranges of its
// "[一-龥ࠀ-一가-퟿]" that hold spaces (U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000) are therefore guarded by (?!\s) here, to the same effect.
constexpr const char* kCjkRegex = "(?:(?!\\s)[一-龥ࠀ-一가-퟿])+";
constexpr const char* kFinnishRegex = " ?[^(\\s|.,!?…。，、।۔،)]+";

std::vector<std::string> family_regexes(Family family) {
  switch (family) {
    case Family::kDefault: return {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2Regex, "\\p{N}+", "[0-9][0-9][0-9]"};
    case Family::kLlama3: return {kLlama3Regex};
    case Family::kJais2:
      return {
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
          "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|"
          "\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"};
    case Family::kDeepseekCoder: return {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjkRegex, "\\p{N}"};
    case Family::kDeepseek3:
      return {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
              "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
              "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"};
    case Family::kSpark25:
      return {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
              "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
              "?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
              "\\p{N}"};
    case Family::kFalcon: return {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2Regex, "[0-9][0-9][0-9]"};
    case Family::kStarcoder: return {"\\p{N}", kGpt2Regex};
    case Family::kGpt2: return {kGpt2Regex};
    case Family::kQwen2: return {kQwen2Regex};
    case Family::kQwen35:
      return {
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
          "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
    case Family::kPoro: return {kFinnishRegex};
    case Family::kViking: return {kFinnishRegex, "\\p{N}"};
    case Family::kTekken:
      return {
          "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^"
          "a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
    case Family::kGpt4o:
      return {
          "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]"
          "|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR]"
          "[eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)"
          "|\\s+"};
    case Family::kGraniteEmbedMulti:
      return {
          "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'"
          "[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-"
          "Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/"
          "]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
    case Family::kBailingMoe:
      return {
          "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
          "?[^\\s\\p{L}\\p{N}]+[\\r\\n]"
          "*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"};
    case Family::kSeedCoder:
      return {
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| "
          "?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
    case Family::kUfakzeka:
      return {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
    case Family::kLaguna: return {"[^\\n]+|[\\n]+", kQwen2Regex};
    case Family::kExaoneMoe:
      return {
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: "
          "\\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"};
    case Family::kMinicpm5:
      return {"\\p{N}{1,3}",
              "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| "
              "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
  }
  return {};
}

struct PreName {
  const char* name;
  Family family;
  bool ignore_merges;
  bool add_bos;
  bool clean_spaces;
  bool has_default_bos = true;
};

// llama_vocab::impl::load's mapping of tokenizer.ggml.pre, with the switches each name sets.
// Left out: names whose splitter is hand-written without an equivalent regex (kimi-k2, afmoe,
// tiny_aya, cohere2moe, superbpe), SentencePiece-style BPE (gemma4, sarvam-moe,
// granite-embed-multi-311m, whitespace), chameleon, youtu (its \p{Lu}-style classes mean any
// letter in llama.cpp) and deepseek-llm (its letter class holds ranges whose ends are out of
// order, such as "Ὗ-ώ", which PCRE2 refuses and std::regex reads its own way). Each name here
// was checked against llama.cpp with Llama 3's vocabulary (ids and llama_detokenize text).
constexpr std::array kPreNames = std::to_array<PreName>({
    {"default", Family::kDefault, false, false, true},
    {"llama3", Family::kLlama3, true, true, true},
    {"llama-v3", Family::kLlama3, true, true, true},
    {"llama-bpe", Family::kLlama3, true, true, true},
    {"falcon3", Family::kLlama3, true, true, true},
    {"falcon-h1", Family::kLlama3, true, true, true},
    {"pixtral", Family::kLlama3, true, true, true},
    {"midm-2.0", Family::kLlama3, true, true, true},
    {"lfm2", Family::kLlama3, true, true, true},
    {"jina-v5-nano", Family::kLlama3, true, true, true},
    {"dbrx", Family::kLlama3, false, false, true},
    {"smaug-bpe", Family::kLlama3, false, false, true},
    {"chatglm-bpe", Family::kLlama3, false, false, true, false},
    {"glm4", Family::kLlama3, true, false, true, false},
    {"glm5", Family::kLlama3, true, false, true, false},
    {"jais-2", Family::kJais2, false, false, true},
    {"deepseek-coder", Family::kDeepseekCoder, false, false, false},
    {"deepseek-v3", Family::kDeepseek3, false, false, false},
    {"hunyuan-dense", Family::kDeepseek3, false, false, false},
    {"hy_v4", Family::kDeepseek3, false, false, false},
    {"joyai-llm", Family::kDeepseek3, false, false, false},
    {"spark2_5", Family::kSpark25, false, false, false},
    {"falcon", Family::kFalcon, false, false, true},
    {"starcoder", Family::kStarcoder, false, false, true},
    {"refact", Family::kStarcoder, false, false, true},
    {"command-r", Family::kStarcoder, false, false, false},
    {"smollm", Family::kStarcoder, false, false, false},
    {"codeshell", Family::kStarcoder, false, false, true},
    {"exaone", Family::kStarcoder, false, false, true},
    {"minerva-7b", Family::kStarcoder, false, false, true},
    {"mellum2", Family::kStarcoder, false, false, true},
    {"gpt-2", Family::kGpt2, false, false, true},
    {"phi-2", Family::kGpt2, false, false, true},
    {"jina-es", Family::kGpt2, false, false, true},
    {"jina-de", Family::kGpt2, false, false, true},
    {"gigachat", Family::kGpt2, false, false, true},
    {"jina-v2-es", Family::kGpt2, false, false, true},
    {"jina-v2-de", Family::kGpt2, false, false, true},
    {"a.x-4.0", Family::kGpt2, false, false, true},
    {"mellum", Family::kGpt2, false, false, true},
    {"modern-bert", Family::kGpt2, false, false, true},
    {"jina-v1-en", Family::kGpt2, false, false, true},
    {"jina-v2-code", Family::kGpt2, false, false, true},
    {"roberta-bpe", Family::kGpt2, false, false, true},
    {"mpt", Family::kGpt2, false, false, true},
    {"olmo", Family::kGpt2, false, false, true},
    {"jais", Family::kGpt2, false, false, true},
    {"exaone4", Family::kGpt2, false, false, true},
    {"trillion", Family::kGpt2, false, false, false},
    {"granite-docling", Family::kGpt2, false, false, false},
    {"qwen2", Family::kQwen2, false, false, false},
    {"deepseek-r1-qwen", Family::kQwen2, false, false, false},
    {"kormo", Family::kQwen2, false, false, false},
    {"f2llmv2", Family::kQwen2, false, false, false},
    {"megrez", Family::kQwen2, false, false, true},
    {"stablelm2", Family::kQwen2, false, false, true},
    {"hunyuan", Family::kQwen2, false, false, false},
    {"solar-open", Family::kQwen2, false, false, false},
    {"grok-2", Family::kQwen2, false, false, false},
    {"qwen35", Family::kQwen35, false, false, false},
    {"poro-chat", Family::kPoro, false, false, false},
    {"bloom", Family::kPoro, false, false, true},
    {"gpt3-finnish", Family::kPoro, false, false, true},
    {"viking", Family::kViking, false, false, false},
    {"tekken", Family::kTekken, true, true, false},
    {"gpt-4o", Family::kGpt4o, false, false, false},
    {"llama4", Family::kGpt4o, false, false, false},
    {"kanana2", Family::kGpt4o, false, false, false},
    {"talkie", Family::kGpt4o, false, false, false},
    {"minimax-m2", Family::kGpt4o, false, false, false},
    {"granite-embed-multi-97m", Family::kGraniteEmbedMulti, true, false, false},
    {"bailingmoe", Family::kBailingMoe, false, false, false},
    {"bailingmoe2", Family::kBailingMoe, false, false, false},
    {"llada-moe", Family::kBailingMoe, false, false, false},
    {"seed-coder", Family::kSeedCoder, false, false, false},
    {"ufakzeka", Family::kUfakzeka, false, false, false},
    {"laguna", Family::kLaguna, false, false, false},
    {"exaone-moe", Family::kExaoneMoe, false, false, true},
    {"minicpm5", Family::kMinicpm5, true, false, true},
});

}  // namespace

std::optional<GgufPreTokenizer> gguf_pre_tokenizer(std::string_view name) {
  for (const PreName& entry : kPreNames) {
    if (entry.name != name) continue;
    GgufPreTokenizer pre;
    pre.regexes = family_regexes(entry.family);
    pre.ignore_merges = entry.ignore_merges;
    pre.add_bos = entry.add_bos;
    pre.clean_spaces = entry.clean_spaces;
    pre.has_default_bos = entry.has_default_bos;
    return pre;
  }
  return std::nullopt;
}

std::string supported_gguf_pre_tokenizers() {
  std::string names;
  for (const PreName& entry : kPreNames) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

}  // namespace kiln::ir
