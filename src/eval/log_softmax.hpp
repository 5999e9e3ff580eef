// Next-token distributions from logits, in double precision: the arithmetic perplexity and
// compare share. Invariant: exp(log_softmax(x)) sums to 1 within rounding for any finite x.
#pragma once

#include <span>
#include <vector>

namespace kiln::eval {

// out [vocab] = x - log_sum_exp(x).
void log_softmax(std::span<const float> logits, std::vector<double>& out);

// KL(p ‖ q) = Σ p (log p - log q) from log-probabilities [vocab]; terms with p == 0 add 0.
double kl_divergence(std::span<const double> log_p, std::span<const double> log_q);

}  // namespace kiln::eval
