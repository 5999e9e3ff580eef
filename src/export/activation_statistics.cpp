#include "export/activation_statistics.hpp"

#include <algorithm>
#include <cmath>

#include "export/parallel_products.hpp"

namespace kiln::exporter {
namespace {

constexpr std::size_t kHessianPanelRows = 64;  // rows of Xᵀ X per parallel task
constexpr std::size_t kChannelsPerTask = 128;  // input channels per parallel task of the sums
constexpr std::int64_t kChannelsPerPass = 6;   // channels whose 4 sums fit in 12 of the 16 SSE registers

}  // namespace

InputStatistics::InputStatistics(std::int64_t in, const StatisticsConfig& config)
    : in_(in), config_(config), sum_abs_(static_cast<std::size_t>(in)) {
  const auto n = static_cast<std::size_t>(in);
  if (config.hessian == HessianMode::kFull) hessian_.assign(n * n, 0.0);
}

void InputStatistics::begin_sample() {
  sample_sum_.assign(static_cast<std::size_t>(in_), 0.0);
  sample_sum_sq_.assign(static_cast<std::size_t>(in_), 0.0);
  sample_max_abs_.assign(static_cast<std::size_t>(in_), 0.0);
  sample_tokens_ = 0;
}

void InputStatistics::add_rows(const float* x, std::int64_t rows, ThreadPool* pool) {
  // Channels are independent: ranges of them go to the pool's threads, each channel summed in
  // row order as on one thread, so the statistics do not depend on the pool.
  const std::size_t tasks = (static_cast<std::size_t>(in_) + kChannelsPerTask - 1) / kChannelsPerTask;
  run_tasks(pool, tasks, [&](std::size_t task, std::size_t) {
    const std::int64_t c0 = static_cast<std::int64_t>(task * kChannelsPerTask);
    const std::int64_t c1 = std::min<std::int64_t>(in_, c0 + static_cast<std::int64_t>(kChannelsPerTask));
    std::int64_t c = c0;
    for (; c + kChannelsPerPass <= c1; c += kChannelsPerPass) sum_channels<kChannelsPerPass>(x, rows, c);
    for (; c + 2 <= c1; c += 2) sum_channels<2>(x, rows, c);
    if (c < c1) sum_channel(x, rows, c);  // an odd width's last channel
  });
  if (config_.hessian == HessianMode::kFull) add_full_hessian(x, rows, pool);
  sample_tokens_ += rows;
  num_tokens_ += rows;
}

template <std::int64_t kChannels>
void InputStatistics::sum_channels(const float* x, std::int64_t rows, std::int64_t c0) {
  // The sums live in vector locals for the whole pass, two channels a lane pair: GCC kept the four
  // member arrays (which might alias) in memory and did not vectorise, a load, an op and a store
  // per statistic and element. Lane l still sums channel c0 + l in row order: the same bits.
  static_assert(kChannels % 2 == 0);
  using F64x2 = double __attribute__((vector_size(16)));
  using I64x2 = std::int64_t __attribute__((vector_size(16)));
  constexpr I64x2 kMagnitude{INT64_MAX, INT64_MAX};
  constexpr std::int64_t kPairs = kChannels / 2;
  F64x2 abs_sum[kPairs], sum[kPairs], sum_sq[kPairs], max_abs[kPairs];
  for (std::int64_t p = 0; p < kPairs; ++p) {
    const std::size_t c = static_cast<std::size_t>(c0 + 2 * p);
    abs_sum[p] = F64x2{sum_abs_[c], sum_abs_[c + 1]};
    sum[p] = F64x2{sample_sum_[c], sample_sum_[c + 1]};
    sum_sq[p] = F64x2{sample_sum_sq_[c], sample_sum_sq_[c + 1]};
    max_abs[p] = F64x2{sample_max_abs_[c], sample_max_abs_[c + 1]};
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in_ + c0;
#pragma GCC unroll 8
    for (std::int64_t p = 0; p < kPairs; ++p) {
      const F64x2 v{xr[2 * p], xr[2 * p + 1]};
      const F64x2 a = reinterpret_cast<F64x2>(reinterpret_cast<I64x2>(v) & kMagnitude);  // std::fabs
      abs_sum[p] += a;
      sum[p] += v;
      sum_sq[p] += v * v;
      max_abs[p] = max_abs[p] < a ? a : max_abs[p];  // std::max
    }
  }
  for (std::int64_t p = 0; p < kPairs; ++p) {
    for (std::int64_t l = 0; l < 2; ++l) {
      const std::size_t c = static_cast<std::size_t>(c0 + 2 * p + l);
      sum_abs_[c] = abs_sum[p][l];
      sample_sum_[c] = sum[p][l];
      sample_sum_sq_[c] = sum_sq[p][l];
      sample_max_abs_[c] = max_abs[p][l];
    }
  }
}

void InputStatistics::sum_channel(const float* x, std::int64_t rows, std::int64_t c) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const double v = x[r * in_ + c];
    sum_abs_[c] += std::fabs(v);
    sample_sum_[c] += v;
    sample_sum_sq_[c] += v * v;
    sample_max_abs_[c] = std::max(sample_max_abs_[c], std::fabs(v));
  }
}

// NOTE: each call's Xᵀ X is summed in f32 over its rows (one sample's tokens, AVX-512 FMA chains)
// and then added to the f64 Hessian: the scalar f64 loop this replaces was 39% of a kiln-tiny
// AWQ + SE export; f32 over a sample's few hundred rows loses nothing AWQ or GPTQ can see.
void InputStatistics::add_full_hessian(const float* x, std::int64_t rows, ThreadPool* pool) {
  const auto in = static_cast<std::size_t>(in_);
  const std::size_t panels = (in + kHessianPanelRows - 1) / kHessianPanelRows;
  std::vector<std::vector<float>>& scratch = scratch_for(pool);
  run_tasks(pool, panels, [&](std::size_t panel, std::size_t thread) {
    const std::size_t first = panel * kHessianPanelRows;
    const std::size_t m = std::min(kHessianPanelRows, in - first), n = in - first;
    std::vector<float>& c = scratch[thread];  // [m, n] rows first.. of Xᵀ X, columns first..
    c.assign(m * n, 0.0f);
    kernels::accumulate_product({.a = x + first,
                                 .a_row_stride = 1,
                                 .a_k_stride = in,
                                 .b = x + first,
                                 .ldb = in,
                                 .c = c.data(),
                                 .ldc = n,
                                 .m = m,
                                 .n = n,
                                 .k = static_cast<std::size_t>(rows)},
                                product_isa());
    for (std::size_t i = 0; i < m; ++i) {  // upper triangle only; hessian() mirrors it
      double* h = hessian_.data() + (first + i) * in + first;
      for (std::size_t j = i; j < n; ++j) h[j] += c[i * n + j];
    }
  });
}

std::vector<std::vector<float>>& InputStatistics::scratch_for(ThreadPool* pool) {
  scratch_.resize(thread_count(pool));
  return scratch_;
}

void InputStatistics::end_sample() {
  if (sample_tokens_ == 0) return;
  const double n = static_cast<double>(sample_tokens_);
  double sum_sq = 0, var_sum = 0, var_max = 0, mag_sum = 0;
  for (std::int64_t c = 0; c < in_; ++c) {
    const double mean = sample_sum_[c] / n;
    // Population variance over the sample's tokens, as NNCF's reducers (numpy var, ddof 0).
    const double var = std::max(0.0, sample_sum_sq_[c] / n - mean * mean);
    sum_sq += sample_sum_sq_[c];
    var_sum += var;
    var_max = std::max(var_max, var);
    mag_sum += sample_max_abs_[c];
    sample_means_.push_back(static_cast<float>(mean));
  }
  hawq_sum_ += sum_sq / (n * static_cast<double>(in_));
  mean_var_sum_ += var_sum / static_cast<double>(in_);
  max_var_sum_ += var_max;
  mean_mag_sum_ += mag_sum / static_cast<double>(in_);
  ++num_samples_;
}

double InputStatistics::hessian_trace() const { return num_samples_ ? 2.0 * hawq_sum_ / double(num_samples_) : 0.0; }
double InputStatistics::mean_variance() const { return num_samples_ ? mean_var_sum_ / double(num_samples_) : 0.0; }
double InputStatistics::max_variance() const { return num_samples_ ? max_var_sum_ / double(num_samples_) : 0.0; }
double InputStatistics::mean_magnitude() const { return num_samples_ ? mean_mag_sum_ / double(num_samples_) : 0.0; }

std::vector<std::size_t> InputStatistics::sample_subset(std::size_t size) const {
  const auto samples = static_cast<std::size_t>(num_samples_);
  const std::size_t step = size > 0 && samples > size ? samples / size : 1;
  std::vector<std::size_t> subset;
  for (std::size_t s = 0; s < samples; s += step) subset.push_back(s);
  return subset;
}

double InputStatistics::hessian(std::int64_t i, std::int64_t j) const {
  if (i > j) std::swap(i, j);
  return config_.hessian == HessianMode::kFull ? hessian_[i * in_ + j] : 0.0;
}

std::vector<double> InputStatistics::hessian_block(std::int64_t first, std::int64_t size) const {
  const std::int64_t n = std::min(size, in_ - first);
  std::vector<double> block(static_cast<std::size_t>(n * n));  // [n, n]
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) block[i * n + j] = hessian(first + i, first + j);
  }
  return block;
}

void InputStatistics::rescale_channels(std::span<const double> scales) {
  for (std::int64_t c = 0; c < in_; ++c) sum_abs_[c] /= scales[c];
  for (std::size_t i = 0; i < sample_means_.size(); ++i) {
    sample_means_[i] = static_cast<float>(sample_means_[i] / scales[i % static_cast<std::size_t>(in_)]);
  }
  if (config_.hessian == HessianMode::kFull) {
    for (std::int64_t i = 0; i < in_; ++i) {
      for (std::int64_t j = i; j < in_; ++j) hessian_[i * in_ + j] /= scales[i] * scales[j];
    }
  }
}

}  // namespace kiln::exporter
