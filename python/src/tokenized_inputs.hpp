// openvino_genai's TokenizedInputs: a batch of prompts as token ids and attention mask, both
// rows x columns, padded to the longest row. The Python API has it; the C++ API takes id lists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::python {

struct IdTensor {
  std::vector<std::int64_t> values;  // row-major
  std::size_t rows = 0;
  std::size_t columns = 0;
};

struct TokenizedInputs {
  IdTensor input_ids;
  IdTensor attention_mask;
};

// Each row's ids where the mask is 1 (padding on either side left out).
std::vector<std::vector<std::int32_t>> prompts_of(const TokenizedInputs& inputs);

}  // namespace kiln::python
