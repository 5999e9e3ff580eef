// The model a GGUF file describes, as kiln's ModelConfig: llama.cpp's `<arch>.*` metadata keys
// and the tensor shapes translated into the Hugging Face config.json they came from, then parsed
// and validated by the same code as a checkpoint's (so every limit is checked once). Errors name
// the GGUF key at fault.
#pragma once

#include "ir/gguf_file.hpp"
#include "ir/model_config.hpp"

namespace kiln::ir {

// llama.cpp's architecture names kiln runs: "llama" (also Mistral's files), "qwen2", "qwen3".
std::string supported_gguf_architectures();

// The file's `general.architecture`, checked against the supported ones.
std::string gguf_architecture(const GgufFile& file);

// The equivalent config.json (architectures, sizes, RoPE, biases, tied head, BOS/EOS ids).
// llama.cpp's per-frequency RoPE factors (`rope_freqs.weight`, written for Llama 3's scaling)
// become per-frequency divisors (rope_type "longrope" with a factor of 1), which is what they are.
Json gguf_config_json(const GgufFile& file);

ModelConfig gguf_model_config(const GgufFile& file);

}  // namespace kiln::ir
