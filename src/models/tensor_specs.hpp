// The tensors an architecture expects, by Hugging Face name, with shape and role. Loading
// validates a checkpoint against this list; `kiln budget` and `kiln export` group by role.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "models/ops.hpp"

namespace kiln::models {

enum class TensorRole : std::uint8_t { kEmbedding, kHead, kAttention, kMlp, kNorm };

std::string_view tensor_role_name(TensorRole role);  // "embedding", "head", ...

// True for the families models::LlamaModel runs (Llama, Qwen2, Qwen3, Mistral, Phi-3): one
// pre-norm decoder whose variations are fields of ir::ModelConfig.
bool is_decoder_family(std::string_view family);

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  TensorRole role;
  WeightUse use;
  std::int64_t layer = -1;  // -1 outside the decoder layers
};

// Every tensor the config's family needs, in forward order.
std::vector<TensorSpec> tensor_specs(const ir::ModelConfig& config);

// Checks the source holds exactly these tensors (up to known-harmless extras such as a tied
// lm_head copy or rotary inv_freq buffers), with matching shapes and float dtypes (matrices and
// embeddings may also be quantised, as in kiln's IR). The error
// lists every problem found (up to a limit), each naming the tensor.
void validate_tensors(const ir::ModelConfig& config, const ir::TensorSource& source);

// Extras some checkpoints carry that the forward pass does not read.
bool is_ignorable_extra_tensor(const ir::ModelConfig& config, std::string_view name);

}  // namespace kiln::models
