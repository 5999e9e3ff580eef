#include "genai/generation_defaults.hpp"

#include <algorithm>

namespace kiln::genai {

GenerationConfig generation_config_from_model(const Json& json, const std::set<std::int32_t>& model_eos_ids) {
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
  c.num_beams = f.get_or<std::int64_t>("num_beams", c.num_beams);
  c.num_return_sequences = f.get_or<std::int64_t>("num_return_sequences", c.num_return_sequences);
  c.length_penalty = f.get_or<double>("length_penalty", c.length_penalty);
  if (f.has("early_stopping")) {
    const Json& e = json["early_stopping"];
    if (e.is_boolean()) {
      c.early_stopping = e.get<bool>() ? StopCriteria::EARLY : StopCriteria::HEURISTIC;
    } else if (e.is_string() && e.get<std::string>() == "never") {
      c.early_stopping = StopCriteria::NEVER;
    } else {
      f.fail_field("early_stopping", "must be true, false or \"never\"");
    }
  }
  c.presence_penalty = f.get_or<double>("presence_penalty", c.presence_penalty);
  c.frequency_penalty = f.get_or<double>("frequency_penalty", c.frequency_penalty);
  if (f.has("stop_strings")) {
    const Json& stops = json["stop_strings"];
    if (stops.is_string()) {
      c.stop_strings.insert(stops.get<std::string>());
    } else if (stops.is_array() &&
               std::all_of(stops.begin(), stops.end(), [](const Json& s) { return s.is_string(); })) {
      for (const Json& s : stops) c.stop_strings.insert(s.get<std::string>());
    } else {
      f.fail_field("stop_strings", "must be a string or a list of strings");
    }
  }
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

}  // namespace kiln::genai
