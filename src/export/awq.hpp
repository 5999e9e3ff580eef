// Activation-aware weight quantisation (AWQ, Lin et al. 2023; NNCF's --awq): input channel c of
// the layers that read one input is multiplied by s_c and the op producing that input divided by
// it, which leaves the float model unchanged but lets salient channels (large activations) keep
// more precision after quantisation. s = mean|x|^α (normalised), α searched on a grid so the
// quantised layers' error on the per-sample mean inputs of NNCF's subset of 32 samples (as NNCF
// measures it) is least; α = 0 (s = 1, plain round to nearest) is on the grid, so AWQ never ends
// worse on that measure.
// NOTE: NNCF applies AWQ to the MatMul→Multiply→MatMul pattern only (Llama: down_proj, folded
// into up_proj) and corrects the groups of the top 0.2% channels; kiln follows the paper: every
// group of every pair below (measured better on kiln-tiny, docs/PERFORMANCE_NOTES.md).
#pragma once

#include <span>
#include <vector>

#include "export/activation_statistics.hpp"
#include "ir/weight_format.hpp"

namespace kiln::exporter {

// One layer reading the shared input: w [out, in] f32 and the scheme it will be stored in.
struct AwqTarget {
  std::span<float> w;
  std::size_t out = 0;
  WeightScheme scheme = WeightScheme::kInt4Sym;
  std::size_t group_size = 0;
};

// The per-input-channel scales s [in] (all 1 when no α beats round to nearest or no samples
// were recorded). Does not change the targets. `pool` (may be null) shares the grid between cores; the
// result does not depend on it.
std::vector<double> search_awq_scales(std::span<const AwqTarget> targets, std::size_t in, const InputStatistics& stats,
                                      ThreadPool* pool = nullptr);

// w[:, c] *= s[c] for every target.
void scale_input_channels(std::span<const AwqTarget> targets, std::size_t in, std::span<const double> s);

}  // namespace kiln::exporter
