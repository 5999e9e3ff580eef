// Building a TokenizerImpl from tokenizer.json and tokenizer_config.json, in the order HF's
// deserializer and transformers' constructor apply them.
#include <unordered_set>

#include "tokenizer/tokenizer_impl.hpp"
#include "tokenizer/tokenizer_json_reader.hpp"
#include "util/log.hpp"
#include "util/mapped_file.hpp"
#include "util/sha256.hpp"

namespace kiln::tok {
namespace {

const Json& optional_component(const Json& root, const char* key) {
  static const Json kNull;
  const auto it = root.find(key);
  return it == root.end() ? kNull : *it;
}

std::unique_ptr<BpeModel> make_model(const Json& spec, BpeTables tables, const std::string& origin) {
  if (!spec.is_object()) fail("{}: missing or not an object", origin);
  // HF reads an untyped model by its fields; a BPE model is the one with merges.
  const std::string type = spec.contains("type")     ? spec.value("type", std::string())
                           : spec.contains("merges") ? "BPE"
                                                     : "";
  if (type != "BPE") {
    fail(ErrorKind::kUnsupported,
         "{}: model type '{}' is not supported (supported: BPE; WordPiece, WordLevel and Unigram "
         "are not implemented)",
         origin, type);
  }
  return std::make_unique<BpeModel>(spec, std::move(tables), origin);
}

std::vector<AddedToken> parse_added_tokens(const Json& list, const std::string& origin,
                                           std::vector<std::int32_t>& declared_ids) {
  std::vector<AddedToken> tokens;
  if (list.is_null()) return tokens;
  if (!list.is_array()) fail("{}: must be an array", origin);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonFields fields(list[i], fmt::format("{}[{}]", origin, i));
    AddedToken token;
    token.content = fields.get<std::string>("content");
    token.single_word = fields.get_or<bool>("single_word", false);
    token.lstrip = fields.get_or<bool>("lstrip", false);
    token.rstrip = fields.get_or<bool>("rstrip", false);
    token.normalized = fields.get_or<bool>("normalized", true);
    token.special = fields.get_or<bool>("special", false);
    declared_ids.push_back(fields.get<std::int32_t>("id"));
    tokens.push_back(std::move(token));
  }
  return tokens;
}

std::string compute_fingerprint(const Json& root, const BpeModel& model) {
  Sha256 hash;
  // nlohmann dumps objects with sorted keys, and the model digests its vocabulary by id, so
  // formatting and key order do not matter.
  for (const char* key : {"model", "added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    hash.update(key);
    hash.update(optional_component(root, key).dump());
  }
  hash.update(model.content_digest());
  return hash.hex_digest();
}

void add_declared_tokens(TokenizerImpl& impl) {
  std::vector<AddedToken> missing;
  for (const AddedToken& token : impl.config.declared_tokens) {
    if (!impl.added.token_to_id(token.content) && !impl.model->token_to_id(token.content)) {
      missing.push_back(token);
    }
  }
  if (missing.empty()) return;
  impl.added.add(
      missing, [&](std::string_view s) { return impl.model->token_to_id(s); }, impl.model->size(),
      impl.normalizer.get());
}

// transformers rebuilds the post-processor from add_bos_token / add_eos_token when the config
// sets either of them (a missing one counts as false).
void apply_bos_eos_override(TokenizerImpl& impl) {
  const std::string config_origin = "tokenizer_config.json";
  const TokenizerConfig& config = impl.config;
  if (!config.add_bos_token && !config.add_eos_token) return;
  auto id_of = [&](const std::optional<std::string>& token, bool wanted) -> std::optional<std::int32_t> {
    if (!wanted || !token) return std::nullopt;
    auto id = impl.added.token_to_id(*token);
    if (!id) id = impl.model->token_to_id(*token);
    if (!id) fail("{}: special token \"{}\" is not in the vocabulary", config_origin, *token);
    return id;
  };
  impl.post_processor = make_bos_eos_processor(id_of(config.bos_token, config.add_bos_token.value_or(false)),
                                               id_of(config.eos_token, config.add_eos_token.value_or(false)));
}

std::int32_t count_vocabulary(const TokenizerImpl& impl) {
  // HF get_vocab_size(with_added_tokens=true): distinct strings of the model and added tokens.
  std::int32_t count = impl.model->size();
  for (const std::int32_t id : impl.added.ids()) {
    if (!impl.model->token_to_id(impl.added.token(id)->content)) ++count;
  }
  return count;
}

}  // namespace

namespace {

std::shared_ptr<const TokenizerImpl> build_checked(TokenizerJson document, const std::string& file,
                                                   TokenizerConfig config) {
  const Json& root = document.root;
  if (!root.is_object()) fail("{}: expected a JSON object", file);
  auto impl = std::make_shared<TokenizerImpl>();
  impl->model = make_model(optional_component(root, "model"), std::move(document.bpe), file + ": model");
  if (const Json& spec = optional_component(root, "normalizer"); !spec.is_null()) {
    impl->normalizer = make_normalizer(spec, file + ": normalizer");
  }
  if (const Json& spec = optional_component(root, "pre_tokenizer"); !spec.is_null()) {
    PreTokenizerOptions options;
    options.defer_final_byte_level_mapping = ends_with_byte_level(spec) && impl->model->enable_raw_byte_input();
    impl->pre_tokenizer = make_pre_tokenizer(spec, file + ": pre_tokenizer", options);
  }
  std::vector<std::int32_t> declared_ids;
  const auto added =
      parse_added_tokens(optional_component(root, "added_tokens"), file + ": added_tokens", declared_ids);
  impl->added.add(
      added, [&](std::string_view s) { return impl->model->token_to_id(s); }, impl->model->size(),
      impl->normalizer.get());
  for (std::size_t i = 0; i < added.size(); ++i) {
    const auto id = impl->added.token_to_id(added[i].content);
    if (id && *id != declared_ids[i]) {
      spdlog::warn("{}: added token \"{}\" declares id {} but gets id {} (as in HF tokenizers)", file, added[i].content,
                   declared_ids[i], *id);
    }
  }
  if (const Json& spec = optional_component(root, "post_processor"); !spec.is_null()) {
    impl->post_processor = make_post_processor(spec, file + ": post_processor");
  }
  if (const Json& spec = optional_component(root, "decoder"); !spec.is_null()) {
    impl->decoder_steps = make_decoder_steps(spec, file + ": decoder");
  }
  if (!optional_component(root, "truncation").is_null() || !optional_component(root, "padding").is_null()) {
    spdlog::debug(
        "{}: truncation / padding settings are ignored (transformers disables them too "
        "unless asked per call)",
        file);
  }
  impl->config = std::move(config);
  add_declared_tokens(*impl);
  apply_bos_eos_override(*impl);
  impl->vocab_size = count_vocabulary(*impl);
  impl->fingerprint = compute_fingerprint(root, *impl->model);
  return impl;
}

std::shared_ptr<const TokenizerImpl> build_from_document(TokenizerJson document, const std::string& file,
                                                         TokenizerConfig config) {
  try {
    return build_checked(std::move(document), file, std::move(config));
  } catch (const Json::exception& e) {
    // A field of an unexpected shape that no check above names more precisely.
    fail("{}: unexpected content: {}", file, e.what());
  }
}

}  // namespace

std::shared_ptr<const TokenizerImpl> build_tokenizer(std::string_view text, const std::string& file,
                                                     TokenizerConfig config) {
  return build_from_document(read_tokenizer_json(text, file), file, std::move(config));
}

std::shared_ptr<const TokenizerImpl> load_tokenizer(const std::filesystem::path& tokenizer_json,
                                                    const std::filesystem::path& config_path,
                                                    const std::filesystem::path& chat_template) {
  // Syntax errors and bad vocab / merges entries name the whole path; the components name the
  // file as tokenizer.json, the name a user looks for in the model folder.
  // Mapped, not read: the parser makes one pass, and a copy of a 9 MB file costs ~5% of the load.
  const MappedFile file(tokenizer_json);
  const std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
  return build_from_document(read_tokenizer_json(text, tokenizer_json.string()), tokenizer_json.filename().string(),
                             read_tokenizer_config(config_path, chat_template));
}

}  // namespace kiln::tok
