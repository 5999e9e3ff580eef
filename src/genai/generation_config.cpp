#include "kiln/generation_config.hpp"

#include <algorithm>

#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

[[noreturn]] void bad_field(std::string_view field, std::string_view problem) {
  fail("GenerationConfig: {} {}", field, problem);
}

}  // namespace

void GenerationConfig::validate() const {
  if (max_new_tokens && *max_new_tokens < 0) {
    bad_field("max_new_tokens", fmt::format("must be >= 0, got {}", *max_new_tokens));
  }
  if (max_length && *max_length <= 0) bad_field("max_length", fmt::format("must be positive, got {}", *max_length));
  if (min_new_tokens < 0) bad_field("min_new_tokens", fmt::format("must be >= 0, got {}", min_new_tokens));
  if (max_new_tokens && min_new_tokens > *max_new_tokens) {
    bad_field("min_new_tokens", fmt::format("({}) exceeds max_new_tokens ({})", min_new_tokens, *max_new_tokens));
  }
  if (!(temperature >= 0.0)) bad_field("temperature", fmt::format("must be >= 0, got {}", temperature));
  if (do_sample && temperature == 0.0) {
    bad_field("temperature", "is 0 while do_sample is true (use do_sample=false for greedy decoding)");
  }
  if (top_k < 0) bad_field("top_k", fmt::format("must be >= 0 (0 disables it), got {}", top_k));
  if (!(top_p > 0.0 && top_p <= 1.0)) bad_field("top_p", fmt::format("must be in (0, 1], got {}", top_p));
  if (!(min_p >= 0.0 && min_p <= 1.0)) bad_field("min_p", fmt::format("must be in [0, 1], got {}", min_p));
  if (!(repetition_penalty > 0.0)) {
    bad_field("repetition_penalty", fmt::format("must be > 0 (1 disables it), got {}", repetition_penalty));
  }
  if (!(presence_penalty >= -2.0 && presence_penalty <= 2.0)) {
    bad_field("presence_penalty", fmt::format("must be in [-2, 2], got {}", presence_penalty));
  }
  if (!(frequency_penalty >= -2.0 && frequency_penalty <= 2.0)) {
    bad_field("frequency_penalty", fmt::format("must be in [-2, 2], got {}", frequency_penalty));
  }
  if (no_repeat_ngram_size < 0) bad_field("no_repeat_ngram_size", fmt::format("must be >= 0, got {}", no_repeat_ngram_size));
}

std::int64_t GenerationConfig::new_token_limit(std::int64_t prompt_tokens, std::int64_t context_tokens) const {
  std::int64_t limit = context_tokens - prompt_tokens;
  if (max_new_tokens) {
    limit = std::min(limit, *max_new_tokens);
  } else if (max_length) {
    limit = std::min(limit, *max_length - prompt_tokens);
  }
  return std::max<std::int64_t>(limit, 0);
}

GenerationConfig GenerationConfig::from_model_defaults(const nlohmann::json& json,
                                                       const std::set<std::int32_t>& model_eos_ids) {
  GenerationConfig c;
  c.eos_token_ids = model_eos_ids;
  if (json.is_null() || json.empty()) return c;
  JsonFields f(json, "generation_config.json");
  c.do_sample = f.get_or<bool>("do_sample", c.do_sample);
  c.temperature = f.get_or<double>("temperature", c.temperature);
  c.top_k = f.get_or<std::int64_t>("top_k", c.top_k);
  c.top_p = f.get_or<double>("top_p", c.top_p);
  c.min_p = f.get_or<double>("min_p", c.min_p);
  c.repetition_penalty = f.get_or<double>("repetition_penalty", c.repetition_penalty);
  c.no_repeat_ngram_size = f.get_or<std::int64_t>("no_repeat_ngram_size", c.no_repeat_ngram_size);
  c.max_new_tokens = f.get_optional<std::int64_t>("max_new_tokens");
  c.max_length = f.get_optional<std::int64_t>("max_length");
  c.min_new_tokens = f.get_or<std::int64_t>("min_new_tokens", c.min_new_tokens);
  if (f.has("eos_token_id")) {
    const Json& eos = json["eos_token_id"];
    c.eos_token_ids.clear();
    if (eos.is_number_integer()) {
      c.eos_token_ids.insert(eos.get<std::int32_t>());
    } else if (eos.is_array()) {
      for (const Json& id : eos) {
        if (!id.is_number_integer()) f.fail_field("eos_token_id", "must be an integer or a list of integers");
        c.eos_token_ids.insert(id.get<std::int32_t>());
      }
    } else {
      f.fail_field("eos_token_id", "must be an integer or a list of integers");
    }
  }
  return c;
}

}  // namespace kiln
