#include "eval/log_softmax.hpp"

#include <cmath>

#include "runtime/host_math.hpp"

namespace kiln::eval {

void log_softmax(std::span<const float> logits, std::vector<double>& out) {
  const double lse = runtime::log_sum_exp(logits);
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
