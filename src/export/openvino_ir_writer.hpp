// kiln's weights written as an OpenVINO IR directory in the shape `optimum-cli export openvino`
// gives the Llama family (Llama, Mistral, Qwen2, Qwen3, Phi-3): a stateful decoder graph
// (openvino_model.xml / .bin) with optimum's inputs (input_ids, attention_mask, position_ids,
// beam_idx), its `logits` output and its KV-cache variables, so OpenVINO and OpenVINO GenAI load
// it as they load optimum's export; each weight as NNCF lays it out (int4 / int8 codes, f16
// scales and zero points, exactly kiln's bytes: nothing is re-quantised), named after its module
// as optimum's converter names it, so kiln's own reader (ir/openvino_model.hpp) finds it again.
// Beside the graph: config.json (ir::to_json of the config), the tokenizer and generation files of
// `files_from`, and OpenVINO GenAI's tokenizer models built from them
// (export/openvino_tokenizer_writer.hpp). The directory is staged and renamed into place when
// complete.
#pragma once

#include <filesystem>
#include <string>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"

namespace kiln::exporter {

inline constexpr const char* kOpenVinoModelXml = "openvino_model.xml";
inline constexpr const char* kOpenVinoModelBin = "openvino_model.bin";

struct OpenVinoWriteOptions {
  // Tokenizer files (tokenizer.json, tokenizer_config.json, chat_template.jinja, ...) and
  // generation_config.json are copied from here when present; empty copies nothing.
  std::filesystem::path files_from;
};

// Refuses (kiln::Error naming the config field) an architecture the writer has no graph for (a
// family outside the Llama family, an odd rotary width, LongRoPE factors of the wrong length).
// write_openvino_ir checks this first; the CLI checks it before a long export.
void check_openvino_export_supported(const ir::ModelConfig& config);

struct OpenVinoWriteResult {
  // Why openvino_tokenizer / openvino_detokenizer were not written (a tokenizer kind the writer
  // has no graph for), empty when they were. The decoder is written either way.
  std::string tokenizer_skipped;
};

// Writes `dir` (which must not exist). Phi-3's fused qkv_proj / gate_up_proj come split from the
// TensorSource and are written as separate MatMuls (NOTE: not re-fused as optimum writes them:
// a mixed-precision export may give q, k and v different schemes, which one NNCF Const cannot
// hold; OpenVINO computes the same logits either way); its LongRoPE picks the long or short factors
// in the graph from the context length, as optimum's export does; partial rotary rotates the
// leading rotary_dim of each head. An architecture check_openvino_export_supported refuses is
// refused naming the config field; a weight missing, misshapen, or in a layout NNCF has no form
// for (a group size that does not divide the input) is refused naming the tensor.
// NOTE: a tokenizer the tokenizer writer refuses does not fail the export: the decoder is what
// took minutes to quantise and is usable as it is (OpenVINO, kiln, or GenAI after
// openvino-tokenizers' convert_tokenizer); the reason comes back in the result for the caller to
// show.
OpenVinoWriteResult write_openvino_ir(const ir::TensorSource& weights, const ir::ModelConfig& config,
                                      const std::filesystem::path& dir, const OpenVinoWriteOptions& options = {});

}  // namespace kiln::exporter
