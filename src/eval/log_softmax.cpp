#include "eval/log_softmax.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::eval {

double log_sum_exp(std::span<const float> logits) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float x : logits) sum += std::exp(static_cast<double>(x) - max);
  return max + std::log(sum);
}

void log_softmax(std::span<const float> logits, std::vector<double>& out) {
  const double lse = log_sum_exp(logits);
  out.resize(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - lse;
}

double kl_divergence(std::span<const double> log_p, std::span<const double> log_q) {
  double kl = 0.0;
  for (std::size_t i = 0; i < log_p.size(); ++i) {
    const double p = std::exp(log_p[i]);
    if (p > 0.0) kl += p * (log_p[i] - log_q[i]);
  }
  return kl;
}

}  // namespace kiln::eval
