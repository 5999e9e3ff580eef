// A GGUF file (llama.cpp's format) as a source of kiln weights: its tensors under the Hugging
// Face names the forward pass asks for, in kiln's layouts, and its config from the metadata.
// What kiln can hold exactly is kept exactly: F32, F16 and BF16 tensors are views into the
// mapped file, Q8_0 and Q4_0 become int8_sym / int4_sym codes with the same scales. Any other
// quantised type is decoded and re-quantised to GgufImportOptions::requantize, said in one log
// line. llama.cpp's permutation of Llama's q and k rows is undone on the way.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ir/gguf_file.hpp"
#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"

namespace kiln::ir {

// The Hugging Face name of a llama.cpp tensor name ("blk.3.attn_q.weight" ->
// "model.layers.3.self_attn.q_proj.weight"); empty when kiln has no place for it.
std::string hf_tensor_name(std::string_view gguf_name);

struct GgufImportOptions {
  // For tensors whose GGUF type has no exact kiln scheme (Q4_1, Q5_0, Q5_1, Q2_K ... Q6_K). int8
  // asymmetric by default: each value stays within a 255th of its group's range (group 32, a
  // K-quant's sub-block), far below the 4- to 6-bit steps the file already took.
  WeightScheme requantize = WeightScheme::kInt8Asym;
  std::size_t group_size = 32;
};

class GgufModel final : public TensorMap {
 public:
  // Maps and imports the file. Errors name the file and the key or tensor at fault.
  explicit GgufModel(const std::filesystem::path& path, GgufImportOptions options = {});

  // True for a regular file that starts with GGUF's magic.
  static bool is_gguf_file(const std::filesystem::path& path);

  const GgufFile& file() const { return file_; }
  const ModelConfig& config() const { return config_; }

  std::string origin() const override { return file_.path().string(); }

 private:
  void import_tensor(const GgufTensor& tensor, const std::string& name, std::map<std::string, int>& requantized);
  QuantizedMatrix requantize(const GgufTensor& tensor, std::span<const std::size_t> row_order,
                             const std::string& name) const;
  void add_matrix(const std::string& name, QuantizedMatrix matrix);
  void add_values(const std::string& name, ElementType dtype, std::vector<std::int64_t> shape,
                  std::vector<std::uint8_t> bytes);

  GgufFile file_;
  ModelConfig config_;
  GgufImportOptions options_;
  std::deque<QuantizedMatrix> matrices_;             // imported matrices; a deque keeps addresses
  std::deque<std::vector<std::uint8_t>> converted_;  // float tensors that had to be copied
};

}  // namespace kiln::ir
