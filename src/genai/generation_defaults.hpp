// A model's generation defaults, as transformers reads them: generation_config.json's fields
// where present (do_sample, temperature, top_k, top_p, min_p, repetition_penalty,
// max_new_tokens, max_length, eos_token_id, num_beams, length_penalty, early_stopping,
// num_return_sequences, stop_strings, ...), eos from config.json otherwise.
#pragma once

#include <cstdint>
#include <set>

#include "kiln/generation_config.hpp"
#include "util/json.hpp"

namespace kiln::genai {

// Throws kiln::Error naming generation_config.json and the field when one has the wrong type.
GenerationConfig generation_config_from_model(const Json& generation_config_json,
                                              const std::set<std::int32_t>& model_eos_ids);

}  // namespace kiln::genai
