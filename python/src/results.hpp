// Result types the Python API has and the C++ API does not: openvino_genai's EncodedResults
// (what generate() returns for token-id input).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/decoded_results.hpp"

namespace kiln::python {

struct EncodedResults {
  std::vector<std::vector<std::int32_t>> tokens;  // for each prompt, its sequences' generated ids, best first
  std::vector<float> scores;
  std::vector<GenerationFinishReason> finish_reasons;
  PerfMetrics perf_metrics;
};

}  // namespace kiln::python
