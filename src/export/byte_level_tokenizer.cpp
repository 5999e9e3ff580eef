#include "export/byte_level_tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "tokenizer/byte_level_alphabet.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

namespace kiln::exporter {
namespace {

// Bytes in merge priority: lowercase, space, uppercase, digits, punctuation, then the rest, so the
// first merges are the letter pairs real text is made of.
std::vector<std::uint8_t> byte_priority() {
  std::vector<std::uint8_t> order;
  const auto add_if = [&](auto predicate) {
    for (int b = 0; b < 256; ++b) {
      if (predicate(b) && std::find(order.begin(), order.end(), b) == order.end())
        order.push_back(static_cast<std::uint8_t>(b));
    }
  };
  add_if([](int b) { return b >= 'a' && b <= 'z'; });
  add_if([](int b) { return b == ' '; });
  add_if([](int b) { return b >= 'A' && b <= 'Z'; });
  add_if([](int b) { return b >= '0' && b <= '9'; });
  add_if([](int b) { return b < 128 && std::ispunct(b); });
  add_if([](int) { return true; });
  return order;
}

std::string special_name(std::int64_t id, const ByteLevelTokenizerSpec& spec, std::int64_t first_special) {
  if (id == spec.bos_token_id) return "<|begin_of_text|>";
  if (id == spec.eos_token_id) return "<|end_of_text|>";
  return "<|reserved_special_token_" + std::to_string(id - first_special) + "|>";
}

}  // namespace

void write_byte_level_tokenizer(const std::filesystem::path& dir, const ByteLevelTokenizerSpec& spec) {
  const std::int64_t first_special = std::min(spec.bos_token_id, spec.eos_token_id);
  if (first_special < 256 || std::max(spec.bos_token_id, spec.eos_token_id) >= spec.vocab_size ||
      spec.bos_token_id == spec.eos_token_id) {
    fail("generated tokenizer: BOS {} and EOS {} must be distinct ids in [256, {})", spec.bos_token_id,
         spec.eos_token_id, spec.vocab_size);
  }
  const auto& alphabet = tok::ByteLevelAlphabet::get();
  const std::vector<std::uint8_t> order = byte_priority();
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  std::vector<std::string> tokens;  // id → string, for the merges
  for (std::uint8_t b : order) {
    tokens.emplace_back(alphabet.utf8_of(b));
    vocab[tokens.back()] = static_cast<std::int64_t>(tokens.size()) - 1;
  }
  Json merges = Json::array();
  // Level by level: every token of the previous level followed by every byte, in priority order.
  std::size_t level_begin = 0, level_end = tokens.size();
  while (static_cast<std::int64_t>(tokens.size()) < first_special) {
    for (std::size_t left = level_begin; left < level_end && static_cast<std::int64_t>(tokens.size()) < first_special;
         ++left) {
      for (std::size_t b = 0; b < 256 && static_cast<std::int64_t>(tokens.size()) < first_special; ++b) {
        const std::string right = tokens[b];
        merges.push_back(tokens[left] + " " + right);
        tokens.push_back(tokens[left] + right);
        vocab[tokens.back()] = static_cast<std::int64_t>(tokens.size()) - 1;
      }
    }
    level_begin = level_end;
    level_end = tokens.size();
  }
  Json added = Json::array();
  for (std::int64_t id = first_special; id < spec.vocab_size; ++id) {
    added.push_back({{"id", id},
                     {"content", special_name(id, spec, first_special)},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  const std::string bos = special_name(spec.bos_token_id, spec, first_special);
  const Json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  nlohmann::ordered_json tokenizer = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", byte_level},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", bos}, {"type_id", 1}}}},
          {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{bos, {{"id", bos}, {"ids", {spec.bos_token_id}}, {"tokens", {bos}}}}}}}},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merges}}},
  };
  write_file_atomic(dir / "tokenizer.json", tokenizer.dump());
  const Json config = {{"bos_token", bos},
                       {"eos_token", special_name(spec.eos_token_id, spec, first_special)},
                       {"clean_up_tokenization_spaces", false},
                       {"model_max_length", spec.model_max_length},
                       {"tokenizer_class", "PreTrainedTokenizerFast"}};
  write_file_atomic(dir / "tokenizer_config.json", config.dump(2) + "\n");
}

}  // namespace kiln::exporter
