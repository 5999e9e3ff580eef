// Scale estimation (NNCF's --scale-estimation, data-aware): each group's scale is refined to
// minimise the error the group adds to the layer's output, (w - ŵ)ᵀ M (w - ŵ), starting from round
// to nearest and never ending worse than it on M. As NNCF, M = Σ_s μ_s μ_sᵀ over the per-sample
// mean inputs μ_s (a subset of 64 samples), i.e. the shift each sample's mean output suffers: on
// kiln-tiny this beat the every-token Hessian Σ x xᵀ clearly (docs/PERFORMANCE_NOTES.md). The search: a few
// steps of the least-squares ideal scale for the current codes, then a grid of shrunken scales each
// followed by its ideal scale; the zero point stays as round to nearest chose it.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "export/activation_statistics.hpp"
#include "ir/weight_format.hpp"

namespace kiln::exporter {

// The best parameters found for one group w [n] with H [n, n] (f32); `start` is round to nearest's.
QuantParams estimate_group_params(WeightScheme scheme, std::span<const float> w, const float* hessian,
                                  QuantParams start);

// The [n, n] block of Σ x xᵀ from `first` (n = min(size, in - first)) in f32, as the search reads it
// (GPTQ's scale estimation, which searches on the Hessian its error compensation uses).
std::vector<float> hessian_block_f32(const InputStatistics& stats, std::size_t first, std::size_t size);

// The [n, n] block from `first` of Σ_s μ_s μ_sᵀ / S over the subset of S per-sample mean inputs.
std::vector<float> sample_mean_gram(const InputStatistics& stats, std::size_t first, std::size_t size);

// An [out, in] matrix quantised with estimated scales; `stats` must hold per-sample means of its
// input. `pool` (may be null) shares the groups' searches; the result does not depend on it.
QuantizedMatrix quantize_with_scale_estimation(std::span<const float> w, std::size_t out, std::size_t in,
                                               WeightScheme scheme, std::size_t group_size,
                                               const InputStatistics& stats, std::string_view name,
                                               ThreadPool* pool = nullptr);

}  // namespace kiln::exporter
