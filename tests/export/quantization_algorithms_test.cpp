// Oracles: the layer output error Σ_x ‖(W − Ŵ) x‖² over the same calibration rows, or for scale
// estimation Σ_s ‖(W − Ŵ) μ_s‖² over the samples' mean rows (what it minimises), computed
// directly here; identities (GPTQ with H ∝ I is round to nearest; Uᵀ U H = I); and statistics
// recomputed by plain loops. Scale estimation, GPTQ and AWQ must not be worse than round to
// nearest on the data they saw, and must be clearly better where activations are uneven.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "export/activation_statistics.hpp"
#include "export/awq.hpp"
#include "export/gptq.hpp"
#include "export/group_quantizer.hpp"
#include "export/scale_estimation.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::exporter {
namespace {

struct Problem {
  std::size_t out = 24, in = 64, rows = 256;
  std::vector<float> w;  // [out, in]
  std::vector<float> x;  // [rows, in]: correlated channels, a few salient ones
};

Problem make_problem(std::uint32_t seed) {
  Problem p;
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (std::size_t i = 0; i < p.out * p.in; ++i) p.w.push_back(0.05f * n(rng));
  for (std::size_t r = 0; r < p.rows; ++r) {
    const float shared = n(rng);
    for (std::size_t c = 0; c < p.in; ++c) {
      const float salient = c % 16 == 3 ? 8.0f : 1.0f;  // outlier channels, as LLM activations have
      p.x.push_back(salient * (0.7f * shared + 0.3f * n(rng)));
    }
  }
  return p;
}

constexpr std::size_t kSampleRows = 16;  // record() cuts the rows into samples of this many by default

InputStatistics record(const Problem& p, HessianMode mode, std::size_t sample_rows = kSampleRows) {
  InputStatistics s(static_cast<std::int64_t>(p.in), StatisticsConfig{.hessian = mode});
  for (std::size_t first = 0; first < p.rows; first += sample_rows) {
    s.begin_sample();
    s.add_rows(p.x.data() + first * p.in, static_cast<std::int64_t>(std::min(sample_rows, p.rows - first)));
    s.end_sample();
  }
  return s;
}

// Σ over samples of ‖(W − Ŵ) μ_s‖², μ_s the mean of the sample's rows (samples as record cuts
// them), over every `sample_step`-th sample from the first.
double mean_output_error(const Problem& p, const std::vector<float>& w_hat, std::size_t sample_rows = kSampleRows,
                         std::size_t sample_step = 1) {
  double total = 0;
  for (std::size_t first = 0; first < p.rows; first += sample_rows * sample_step) {
    const std::size_t n = std::min(sample_rows, p.rows - first);
    std::vector<double> mu(p.in, 0.0);  // [in]
    for (std::size_t r = first; r < first + n; ++r) {
      for (std::size_t c = 0; c < p.in; ++c) mu[c] += p.x[r * p.in + c] / double(n);
    }
    for (std::size_t o = 0; o < p.out; ++o) {
      double d = 0;
      for (std::size_t c = 0; c < p.in; ++c) d += (double(p.w[o * p.in + c]) - w_hat[o * p.in + c]) * mu[c];
      total += d * d;
    }
  }
  return total;
}

double output_error(const Problem& p, const std::vector<float>& w_hat) {
  double total = 0;
  for (std::size_t r = 0; r < p.rows; ++r) {
    for (std::size_t o = 0; o < p.out; ++o) {
      double d = 0;
      for (std::size_t c = 0; c < p.in; ++c) d += (double(p.w[o * p.in + c]) - w_hat[o * p.in + c]) * p.x[r * p.in + c];
      total += d * d;
    }
  }
  return total;
}

// (w - ŵ)ᵀ H (w - ŵ) for H [n, n] row-major, in double: the group's output error.
double weighted_error(std::span<const float> w, std::span<const float> w_hat, const double* h) {
  const std::size_t n = w.size();
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) total += (double(w[i]) - w_hat[i]) * h[i * n + j] * (double(w[j]) - w_hat[j]);
  }
  return total;
}

double rtn_error(const Problem& p, WeightScheme scheme, std::size_t gs) {
  return output_error(p, dequantize_weights(quantize_weights(p.w, p.out, p.in, scheme, gs, "w").view()));
}

TEST(ScaleEstimation, NeverWorseAndBetterOnUnevenActivations) {
  for (WeightScheme scheme : {WeightScheme::kInt4Sym, WeightScheme::kInt4Asym, WeightScheme::kNf4}) {
    const Problem p = make_problem(1);
    const InputStatistics stats = record(p, HessianMode::kNone);
    const QuantizedMatrix m = quantize_with_scale_estimation(p.w, p.out, p.in, scheme, 32, stats, "w");
    const double se = mean_output_error(p, dequantize_weights(m.view()));
    const double rtn =
        mean_output_error(p, dequantize_weights(quantize_weights(p.w, p.out, p.in, scheme, 32, "w").view()));
    EXPECT_LT(se, 0.9 * rtn) << weight_scheme_name(scheme) << ": SE " << se << " vs RTN " << rtn;
  }
}

// The matrix search runs (group, row panel) tasks on a pool and writes codes by row panels.
// Oracle: each row and group searched alone (estimate_group_params on the group's gram), with
// and without a pool, on a shape with a ragged panel (70 rows), a ragged last group (90 = 2·32 +
// 26) and an odd group count, so 4-bit zero points are packed across rows.
TEST(ScaleEstimation, MatrixEqualsEachRowSearchedAloneWithOrWithoutAPool) {
  Problem p = make_problem(5);
  p.out = 70;
  p.in = 90;
  p.w.resize(p.out * p.in);
  std::mt19937 rng(6);
  std::normal_distribution<float> n(0.0f, 0.05f);
  for (float& v : p.w) v = n(rng);
  p.x.resize(p.rows * p.in);
  for (std::size_t i = 0; i < p.x.size(); ++i) p.x[i] = (i % p.in % 16 == 3 ? 8.0f : 1.0f) * n(rng) * 20.0f;
  const InputStatistics stats = record(p, HessianMode::kNone);
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3});
  for (WeightScheme scheme : {WeightScheme::kInt4Sym, WeightScheme::kInt4Asym}) {
    const std::size_t gs = 32, groups = 3;
    QuantizedMatrix want(scheme, p.out, p.in, gs);
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t first = g * gs, width = std::min(gs, p.in - first);
      const std::vector<float> h = sample_mean_gram(stats, first, gs);
      for (std::size_t r = 0; r < p.out; ++r) {
        const std::span<const float> w(p.w.data() + r * p.in + first, width);
        const QuantParams best = estimate_group_params(scheme, w, h.data(), rtn_params(scheme, w));
        want.set_params(r, g, best);
        for (std::size_t c = 0; c < width; ++c) want.set_code(r, first + c, quantize_value(scheme, w[c], best));
      }
    }
    // The search moved scales away from round to nearest's, so the comparison below has teeth.
    ASSERT_NE(want.scales(), quantize_weights(p.w, p.out, p.in, scheme, gs, "w").scales());
    for (ThreadPool* on : {static_cast<ThreadPool*>(nullptr), &pool}) {
      const QuantizedMatrix got = quantize_with_scale_estimation(p.w, p.out, p.in, scheme, gs, stats, "w", on);
      EXPECT_EQ(got.data(), want.data()) << weight_scheme_name(scheme) << (on ? " pooled" : " serial");
      EXPECT_EQ(got.scales(), want.scales()) << weight_scheme_name(scheme) << (on ? " pooled" : " serial");
      EXPECT_EQ(got.zero_points(), want.zero_points()) << weight_scheme_name(scheme) << (on ? " pooled" : " serial");
    }
  }
}

TEST(ScaleEstimation, GroupSearchNeverLosesToItsStart) {
  const Problem p = make_problem(2);
  const InputStatistics stats = record(p, HessianMode::kFull);
  const std::vector<double> h = stats.hessian_block(0, 64);
  const std::vector<float> h32 = hessian_block_f32(stats, 0, 64);
  for (std::size_t r = 0; r < p.out; ++r) {
    const std::span<const float> w(p.w.data() + r * p.in, p.in);
    const QuantParams start = rtn_params(WeightScheme::kInt4Sym, w);
    const QuantParams best = estimate_group_params(WeightScheme::kInt4Sym, w, h32.data(), start);
    std::vector<float> a(p.in), b(p.in);
    fake_quantize(WeightScheme::kInt4Sym, w, start, a);
    fake_quantize(WeightScheme::kInt4Sym, w, best, b);
    EXPECT_LE(weighted_error(w, b, h.data()), weighted_error(w, a, h.data()) * (1 + 1e-12)) << "row " << r;
  }
}

TEST(Gptq, InverseCholeskyFactorInvertsH) {
  const Problem p = make_problem(3);
  const InputStatistics stats = record(p, HessianMode::kFull);
  std::vector<double> h = stats.hessian_block(0, 64);
  for (std::size_t i = 0; i < 64; ++i) h[i * 64 + i] += 1.0;
  const std::vector<double> u = inverse_cholesky_upper(h, 64, "h");
  for (std::size_t i = 0; i < 64; ++i) {
    for (std::size_t j = 0; j < 64; ++j) {
      double v = 0;  // (Uᵀ U H)[i, j]
      for (std::size_t k = 0; k < 64; ++k) {
        double utu = 0;
        for (std::size_t m = 0; m < 64; ++m) utu += u[m * 64 + i] * u[m * 64 + k];
        v += utu * h[k * 64 + j];
      }
      EXPECT_NEAR(v, i == j ? 1.0 : 0.0, 1e-8);
    }
  }
}

TEST(Gptq, BeatsRoundToNearestOnCorrelatedInputs) {
  const Problem p = make_problem(4);
  const InputStatistics stats = record(p, HessianMode::kFull);
  for (WeightScheme scheme : {WeightScheme::kInt4Sym, WeightScheme::kInt4Asym, WeightScheme::kInt8Asym}) {
    const QuantizedMatrix m = quantize_gptq(p.w, p.out, p.in, scheme, 32, stats, false, "w");
    const double gptq = output_error(p, dequantize_weights(m.view()));
    EXPECT_LT(gptq, 0.8 * rtn_error(p, scheme, 32)) << weight_scheme_name(scheme);
  }
}

TEST(Gptq, WithIsotropicInputsIsRoundToNearest) {
  // H ∝ I: no error can be compensated, so every code must equal round to nearest's.
  Problem p = make_problem(5);
  p.rows = p.in;
  p.x.assign(p.in * p.in, 0.0f);
  for (std::size_t i = 0; i < p.in; ++i) p.x[i * p.in + i] = 2.0f;
  const InputStatistics stats = record(p, HessianMode::kFull);
  const QuantizedMatrix g = quantize_gptq(p.w, p.out, p.in, WeightScheme::kInt4Asym, 16, stats, false, "w");
  const QuantizedMatrix r = quantize_weights(p.w, p.out, p.in, WeightScheme::kInt4Asym, 16, "w");
  EXPECT_EQ(g.data(), r.data());
  EXPECT_EQ(g.scales(), r.scales());
}

TEST(Awq, FindsScalesThatLowerTheOutputError) {
  Problem p = make_problem(6);
  const InputStatistics stats = record(p, HessianMode::kNone);
  std::vector<float> w = p.w;
  const AwqTarget target{w, p.out, WeightScheme::kInt4Sym, 32};
  const std::vector<double> s = search_awq_scales({&target, 1}, p.in, stats);
  EXPECT_NE(s[3], 1.0);
  EXPECT_GT(s[3], s[4]) << "the salient channel must be scaled up relative to a quiet one";
  scale_input_channels({&target, 1}, p.in, s);
  std::vector<float> w_hat(w.size());
  fake_quantize_rtn(WeightScheme::kInt4Sym, w, p.out, p.in, 32, w_hat);
  for (std::size_t o = 0; o < p.out; ++o) {
    for (std::size_t c = 0; c < p.in; ++c) w_hat[o * p.in + c] = static_cast<float>(w_hat[o * p.in + c] / s[c]);
  }
  const double rtn = mean_output_error(
      p, dequantize_weights(quantize_weights(p.w, p.out, p.in, WeightScheme::kInt4Sym, 32, "w").view()));
  EXPECT_LT(mean_output_error(p, w_hat), 0.9 * rtn);
}

// AWQ's search redone by plain loops: for α = 0, 0.05, …, 0.95, s = mean|x|^α (floored at 1e-4,
// divided by √(min s · max s)), Ŵ = RTN(W·s)/s and its error on every `sample_step`-th sample's
// mean; the least error's scales.
std::vector<double> awq_scales_by_loops(const Problem& p, std::size_t sample_rows, std::size_t sample_step,
                                        std::size_t group) {
  std::vector<double> magnitude(p.in, 0.0);
  for (std::size_t r = 0; r < p.rows; ++r) {
    for (std::size_t c = 0; c < p.in; ++c) magnitude[c] += std::fabs(double(p.x[r * p.in + c])) / double(p.rows);
  }
  double best_error = std::numeric_limits<double>::infinity();
  std::vector<double> best;
  for (int step = 0; step < 20; ++step) {
    std::vector<double> s(p.in);
    for (std::size_t c = 0; c < p.in; ++c) s[c] = std::max(std::pow(magnitude[c], step / 20.0), 1e-4);
    const double norm = std::sqrt(*std::min_element(s.begin(), s.end()) * *std::max_element(s.begin(), s.end()));
    for (double& v : s) v /= norm;
    std::vector<float> scaled(p.w.size()), w_hat(p.w.size());
    for (std::size_t i = 0; i < p.w.size(); ++i) scaled[i] = static_cast<float>(p.w[i] * s[i % p.in]);
    const std::vector<float> rounded =
        dequantize_weights(quantize_weights(scaled, p.out, p.in, WeightScheme::kInt4Sym, group, "w").view());
    for (std::size_t i = 0; i < p.w.size(); ++i) w_hat[i] = static_cast<float>(rounded[i] / s[i % p.in]);
    const double error = mean_output_error(p, w_hat, sample_rows, sample_step);
    if (error < best_error) {
      best_error = error;
      best = s;
    }
  }
  return best;
}

// Oracle: awq_scales_by_loops over NNCF's subset, every second of 64 samples. The odd samples'
// means are made to pull α another way (their salient channels cancel out, their quiet ones do
// not), so a search over all 64 chooses other scales; the test checks that it does.
TEST(Awq, MeasuresTheErrorOnNncfsSubsetOfSamples) {
  constexpr std::size_t kRows = 4, kGroup = 32;
  Problem p = make_problem(8);
  for (std::size_t first = kRows; first < p.rows; first += 2 * kRows) {  // odd samples
    for (std::size_t r = first; r < first + kRows; ++r) {
      for (std::size_t c = 0; c < p.in; ++c) {
        float& x = p.x[r * p.in + c];
        x = c % 16 == 3 ? ((r % 2) ? 1.0f : -1.0f) * std::fabs(x) : 3.0f * std::fabs(x);
      }
    }
  }
  const InputStatistics stats = record(p, HessianMode::kNone, kRows);
  ASSERT_EQ(stats.num_samples(), 64);
  std::vector<float> w = p.w;
  const AwqTarget target{w, p.out, WeightScheme::kInt4Sym, kGroup};
  const std::vector<double> s = search_awq_scales({&target, 1}, p.in, stats);
  const std::vector<double> want = awq_scales_by_loops(p, kRows, 2, kGroup);
  ASSERT_NE(want, awq_scales_by_loops(p, kRows, 1, kGroup)) << "the test needs the subset to matter";
  for (std::size_t c = 0; c < p.in; ++c) EXPECT_NEAR(s[c], want[c], 1e-9 * want[c]) << "channel " << c;
}

TEST(InputStatistics, SampleSubsetIsNncfs) {
  const auto subset_of = [](std::size_t samples, std::size_t size) {
    InputStatistics s(1, StatisticsConfig{});
    const float x = 1.0f;
    for (std::size_t k = 0; k < samples; ++k) {
      s.begin_sample();
      s.add_rows(&x, 1);
      s.end_sample();
    }
    return s.sample_subset(size);
  };
  std::vector<std::size_t> every_fourth, evens, all;
  for (std::size_t k = 0; k < 128; k += 4) every_fourth.push_back(k);
  for (std::size_t k = 0; k < 130; k += 2) evens.push_back(k);
  for (std::size_t k = 0; k < 20; ++k) all.push_back(k);
  EXPECT_EQ(subset_of(128, 32), every_fourth);
  EXPECT_EQ(subset_of(130, 64), evens);  // 130 / 64 = 2: 65 samples, as NNCF's [::step]
  EXPECT_EQ(subset_of(20, 32), all);
  EXPECT_EQ(subset_of(20, 0), all);
  EXPECT_TRUE(subset_of(0, 32).empty());
}

// Oracle: the kernels' quantize_value / dequantize_value, element by element. fake_quantize has
// its own inlined rounding (no libm call, so it vectorises); it must give the same codes,
// including halfway ties (round half to even), far out-of-range values and infinities.
TEST(GroupQuantizer, FakeQuantizeIsQuantizeValue) {
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 3.0f);
  std::vector<float> w;
  for (int i = -300; i <= 300; ++i) w.push_back(0.5f * static_cast<float>(i) * 0.25f);  // ties at scale 0.25
  for (int i = 0; i < 2000; ++i) w.push_back(n(rng));
  for (float v :
       {1e30f, -1e30f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), -0.0f}) {
    w.push_back(v);
  }
  for (WeightScheme scheme :
       {WeightScheme::kInt4Sym, WeightScheme::kInt4Asym, WeightScheme::kInt8Sym, WeightScheme::kInt8Asym}) {
    for (QuantParams params :
         {QuantParams{0.25f, 0}, QuantParams{0.25f, 3}, QuantParams{0.0137f, 8}, QuantParams{1.5f, 128}}) {
      std::vector<float> out(w.size());
      std::vector<int> codes(w.size());
      fake_quantize(scheme, w, params, out, codes);
      for (std::size_t i = 0; i < w.size(); ++i) {
        const int want = quantize_value(scheme, w[i], params);
        ASSERT_EQ(codes[i], want) << weight_scheme_name(scheme) << " w " << w[i] << " scale " << params.scale;
        ASSERT_EQ(out[i], dequantize_value(scheme, want, params));
      }
    }
  }
}

TEST(InputStatistics, MatchesDirectComputation) {
  const Problem p = make_problem(7);
  StatisticsConfig c;
  c.hessian = HessianMode::kFull;
  InputStatistics s(static_cast<std::int64_t>(p.in), c);
  // Two samples of 100 and 156 rows.
  s.begin_sample();
  s.add_rows(p.x.data(), 100);
  s.end_sample();
  s.begin_sample();
  s.add_rows(p.x.data() + 100 * p.in, 156);
  s.end_sample();
  double max_var_sum = 0, hawq_sum = 0;
  for (auto [first, n] : {std::pair<std::size_t, std::size_t>{0, 100}, {100, 156}}) {
    double max_var = 0, sq = 0;
    for (std::size_t ch = 0; ch < p.in; ++ch) {
      double mean = 0, var = 0;
      for (std::size_t r = first; r < first + n; ++r) mean += p.x[r * p.in + ch] / double(n);
      for (std::size_t r = first; r < first + n; ++r) {
        var += (p.x[r * p.in + ch] - mean) * (p.x[r * p.in + ch] - mean) / double(n);
        sq += double(p.x[r * p.in + ch]) * p.x[r * p.in + ch];
      }
      max_var = std::max(max_var, var);
    }
    max_var_sum += max_var;
    hawq_sum += sq / double(n * p.in);
  }
  EXPECT_NEAR(s.max_variance(), max_var_sum / 2, 1e-9 * max_var_sum);
  EXPECT_NEAR(s.hessian_trace(), hawq_sum, 1e-9 * hawq_sum);  // 2 · mean of two samples
  double h_3_5 = 0;
  for (std::size_t r = 0; r < p.rows; ++r) h_3_5 += double(p.x[r * p.in + 3]) * p.x[r * p.in + 5];
  // Each call's products are summed in f32 (float_products.hpp), then in f64.
  EXPECT_NEAR(s.hessian(5, 3), h_3_5, 1e-5 * std::fabs(h_3_5) + 1e-6);
  ASSERT_EQ(s.num_samples(), 2);
  ASSERT_EQ(s.sample_means().size(), 2 * p.in);
  double mean_7 = 0;  // channel 7's mean over the second sample
  for (std::size_t r = 100; r < 256; ++r) mean_7 += p.x[r * p.in + 7] / 156.0;
  EXPECT_NEAR(s.sample_means()[p.in + 7], mean_7, 1e-6 * std::fabs(mean_7) + 1e-7);
  std::vector<double> scale(p.in, 2.0);
  s.rescale_channels(scale);
  EXPECT_NEAR(s.hessian(5, 3), h_3_5 / 4, 1e-5 * std::fabs(h_3_5) + 1e-6);
  EXPECT_NEAR(s.sample_means()[p.in + 7], mean_7 / 2, 1e-6 * std::fabs(mean_7) + 1e-7);
}

// Oracle: Σ_s μ_s μ_sᵀ / S by plain loops over NNCF's subset: of 130 samples, every second one
// (130 / 64 = 2), i.e. the 65 even-numbered samples.
TEST(ScaleEstimation, SampleMeanGramUsesNncfsSubset) {
  const std::size_t in = 8, samples = 130;
  InputStatistics s(static_cast<std::int64_t>(in), StatisticsConfig{});
  std::mt19937 rng(12);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> means;  // [samples, in] each one-row sample's mean is the row
  for (std::size_t k = 0; k < samples; ++k) {
    std::vector<float> row(in);
    for (float& v : row) v = n(rng);
    means.insert(means.end(), row.begin(), row.end());
    s.begin_sample();
    s.add_rows(row.data(), 1);
    s.end_sample();
  }
  const std::vector<float> gram = sample_mean_gram(s, 2, 4);  // columns 2..5
  ASSERT_EQ(gram.size(), 16u);
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < samples; k += 2) want += double(means[k * in + 2 + i]) * means[k * in + 2 + j];
      want /= 65.0;
      EXPECT_NEAR(gram[i * 4 + j], want, 1e-5 * (1 + std::fabs(want)));
    }
  }
}

}  // namespace
}  // namespace kiln::exporter
