#include "genai/logprobs.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "runtime/host_math.hpp"

namespace kiln::genai {

TokenLogprob token_logprob(std::span<const float> logits, std::int32_t token, std::int64_t top_n) {
  const double norm = runtime::log_sum_exp(logits);
  TokenLogprob out{token, static_cast<float>(logits[static_cast<std::size_t>(token)] - norm), {}};
  if (top_n <= 0) return out;
  std::vector<std::int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto n = static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(top_n), ids.size()));
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](std::int32_t a, std::int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    out.top.emplace_back(ids[i], static_cast<float>(logits[static_cast<std::size_t>(ids[i])] - norm));
  }
  return out;
}

}  // namespace kiln::genai
