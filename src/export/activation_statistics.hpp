// Statistics of the input of one linear layer over the calibration samples: what AWQ, scale
// estimation, GPTQ and the data-aware sensitivity metrics read. q/k/v share one input, as do
// gate/up, so they share one InputStatistics. Accumulation is in double and in sample order, so
// an export is deterministic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln {
class ThreadPool;
}

namespace kiln::exporter {

// Whether to keep xᵀx: GPTQ needs all of it (in² per token and in² doubles of memory); AWQ and
// scale estimation read only the per-sample means, which are always kept.
enum class HessianMode : std::uint8_t { kNone, kFull };

struct StatisticsConfig {
  HessianMode hessian = HessianMode::kNone;
};

class InputStatistics {
 public:
  InputStatistics(std::int64_t in, const StatisticsConfig& config);

  void begin_sample();
  // x [rows, in]: this sample's rows passing through the layer; `pool` (may be null) shares
  // the Hessian's products. The result does not depend on the pool.
  void add_rows(const float* x, std::int64_t rows, ThreadPool* pool = nullptr);
  void end_sample();

  // Divides input channel c by scales[c] (AWQ moved that factor into the weight): every
  // statistic is updated as if the calibration had seen x / s.
  void rescale_channels(std::span<const double> scales);

  std::int64_t in() const { return in_; }
  std::int64_t num_tokens() const { return num_tokens_; }

  double mean_abs(std::int64_t c) const { return num_tokens_ ? sum_abs_[c] / double(num_tokens_) : 0.0; }
  // NNCF's data-aware activation sensitivities, each averaged over samples.
  double hessian_trace() const;   // hessian_input_activation: 2 · mean over samples of mean(x²)
  double mean_variance() const;   // mean over channels of the per-sample token variance
  double max_variance() const;    // max over channels of the same
  double mean_magnitude() const;  // mean over channels of the per-sample max |x|

  // Each sample's mean input over its tokens, in sample order (NNCF's per-sample statistic).
  const std::vector<float>& sample_means() const { return sample_means_; }  // [num_samples, in]
  std::int64_t num_samples() const { return num_samples_; }
  // NNCF's subset of the samples (process_stats, shared by its AWQ and scale estimation): of
  // more than `size` samples every (num_samples / size)-th from the first, else all of them. NNCF
  // orders samples by length first (stably); calibration's samples are all one length.
  std::vector<std::size_t> sample_subset(std::size_t size) const;

  HessianMode hessian_mode() const { return config_.hessian; }
  // Σ x xᵀ over all tokens: element (i, j); 0 without kFull.
  double hessian(std::int64_t i, std::int64_t j) const;
  // The [n, n] block of Σ x xᵀ starting at (first, first), row-major, n = min(size, in - first).
  std::vector<double> hessian_block(std::int64_t first, std::int64_t size) const;

 private:
  // Adds rows of x to the per-channel sums of channels [c0, c0 + kChannels), each in row order.
  template <std::int64_t kChannels>
  void sum_channels(const float* x, std::int64_t rows, std::int64_t c0);
  void sum_channel(const float* x, std::int64_t rows, std::int64_t c);
  void add_full_hessian(const float* x, std::int64_t rows, ThreadPool* pool);
  std::vector<std::vector<float>>& scratch_for(ThreadPool* pool);

  std::int64_t in_;
  StatisticsConfig config_;
  std::int64_t num_tokens_ = 0;
  std::int64_t num_samples_ = 0;
  std::vector<double> sum_abs_;  // [in]
  // This sample's: Σx, Σx², max|x| per channel [in], and its token count.
  std::vector<double> sample_sum_, sample_sum_sq_, sample_max_abs_;
  std::int64_t sample_tokens_ = 0;
  double hawq_sum_ = 0, mean_var_sum_ = 0, max_var_sum_ = 0, mean_mag_sum_ = 0;
  std::vector<float> sample_means_;          // [num_samples, in]
  std::vector<double> hessian_;              // kFull: [in, in], upper triangle
  std::vector<std::vector<float>> scratch_;  // per thread: one panel of a call's Xᵀ X
};

}  // namespace kiln::exporter
