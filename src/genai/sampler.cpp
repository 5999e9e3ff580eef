#include "genai/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/host_math.hpp"

namespace kiln::genai {

std::int32_t argmax(std::span<const float> logits) { return static_cast<std::int32_t>(runtime::argmax(logits)); }

Sampler::Sampler(const GenerationConfig& config) : config_(config), rng_(config.rng_seed) { config_.validate(); }

double Sampler::next_uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

void Sampler::distribution(std::span<float> logits, const TokenHistory& history, std::vector<float>& probs) {
  apply_logits_processors(logits, history, config_);
  const auto vocab = static_cast<std::int32_t>(logits.size());
  probs.assign(logits.size(), 0.0f);
  if (!config_.do_sample) {
    probs[static_cast<std::size_t>(argmax(logits))] = 1.0f;
    return;
  }
  // Candidates: sorted by logit, descending (ties keep the lower id first) when a truncating
  // warper needs the order; in vocabulary order otherwise, which spares sorting the vocabulary.
  order_.resize(logits.size());
  std::iota(order_.begin(), order_.end(), 0);
  const auto by_logit = [&](std::int32_t a, std::int32_t b) { return logits[a] > logits[b]; };
  const bool truncates = (config_.top_k > 0 && config_.top_k < vocab) || config_.top_p < 1.0 || config_.min_p > 0.0;
  std::int32_t keep = vocab;
  if (!truncates) {
    // No ordering needed.
  } else if (config_.top_k > 0 && config_.top_k < vocab) {
    keep = static_cast<std::int32_t>(config_.top_k);
    std::partial_sort(order_.begin(), order_.begin() + keep, order_.end(), by_logit);
    // HF keeps every token tied with the k-th.
    const float kth = logits[order_[keep - 1]];
    std::stable_sort(order_.begin() + keep, order_.end(), by_logit);
    while (keep < vocab && logits[order_[keep]] >= kth) ++keep;
  } else {
    std::stable_sort(order_.begin(), order_.end(), by_logit);
  }
  // Softmax of logit / temperature over the candidates, in double.
  const double inv_t = 1.0 / config_.temperature;
  const double top = (truncates ? logits[order_[0]] : *std::max_element(logits.begin(), logits.end())) * inv_t;
  std::vector<double> p(static_cast<std::size_t>(keep));
  double total = 0.0;
  for (std::int32_t i = 0; i < keep; ++i) total += (p[i] = std::exp(logits[order_[i]] * inv_t - top));
  for (double& x : p) x /= total;
  // top-p: the smallest prefix whose mass reaches top_p (at least one token).
  if (config_.top_p < 1.0) {
    double cumulative = 0.0;
    std::int32_t n = 0;
    while (n < keep && (n == 0 || cumulative < config_.top_p)) cumulative += p[n++];
    keep = n;
  }
  // min-p: drop tokens below min_p times the most likely one (p[0] once sorted).
  if (config_.min_p > 0.0) {
    const double floor = config_.min_p * p[0];
    std::int32_t n = 1;
    while (n < keep && p[n] >= floor) ++n;
    keep = n;
  }
  double kept = 0.0;
  for (std::int32_t i = 0; i < keep; ++i) kept += p[i];
  for (std::int32_t i = 0; i < keep; ++i) probs[static_cast<std::size_t>(order_[i])] = static_cast<float>(p[i] / kept);
}

std::int32_t Sampler::sample(std::span<float> logits, const TokenHistory& history) {
  if (!config_.do_sample) {
    apply_logits_processors(logits, history, config_);
    return argmax(logits);
  }
  distribution(logits, history, probs_);
  return draw(probs_);
}

std::int32_t Sampler::draw(std::span<const float> probs) {
  // Walk the candidates in the order distribution() left them.
  const double u = next_uniform();
  double cumulative = 0.0;
  std::int32_t last = -1;
  for (std::int32_t id : order_) {
    const float q = probs[static_cast<std::size_t>(id)];
    if (q <= 0.0f) continue;
    cumulative += q;
    last = id;
    if (u < cumulative) return id;
  }
  return last;  // rounding left u just above the total
}

std::int32_t sample_in_vocab_order(std::span<const float> probs, double u) {
  double total = 0.0;
  for (float p : probs) total += p;
  if (!(total > 0.0)) return -1;
  const double target = u * total;
  double cumulative = 0.0;
  std::int32_t last = -1;
  for (std::size_t id = 0; id < probs.size(); ++id) {
    if (probs[id] <= 0.0f) continue;
    cumulative += probs[id];
    last = static_cast<std::int32_t>(id);
    if (target < cumulative) return last;
  }
  return last;
}

}  // namespace kiln::genai
