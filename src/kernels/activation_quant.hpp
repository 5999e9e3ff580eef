// Dynamic int8 quantisation of activations (DYNAMIC_QUANTIZATION_GROUP_SIZE): each row of
// x [n, in] is split into groups and each group is quantised symmetrically, so int4 / int8
// weights can be multiplied with integer dot products (VNNI). Invariant: the codes are in
// [-127, 127] (never -128, so the AVX2 sign trick cannot overflow) and zero beyond `in`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kiln::kernels {

// Sums of codes are kept per chunk of this many columns: the kernels' zero-point correction
// needs Σq over each block, and every block boundary is a multiple of it.
inline constexpr std::size_t kActivationChunk = 32;

// A view of quantised activations. For row i and group h = k / group_size:
//   x[i, k] ≈ codes[i * row_stride + k] * scales[i * groups + h]
struct QuantizedActivations {
  std::size_t n = 0, in = 0;
  std::size_t group_size = 0;          // a multiple of kActivationChunk, or >= in (one group per row)
  std::size_t groups = 0;              // ceil(in / group_size)
  std::size_t row_stride = 0;          // codes per row: in rounded up to 64, zero-padded
  std::size_t chunks = 0;              // row_stride / kActivationChunk
  std::int8_t* codes = nullptr;        // [n, row_stride]
  float* scales = nullptr;             // [n, groups]; absmax / 127, 0 for an all-zero group
  std::int32_t* chunk_sums = nullptr;  // [n, chunks]: Σ codes over each 32-column chunk
};

// Owns the storage of QuantizedActivations for up to max_n rows of width `in`; allocate once
// (per compiled model) and reuse on the token path.
class ActivationBuffer {
 public:
  // Throws kiln::Error when group_size is neither a multiple of 32 nor >= in.
  ActivationBuffer(std::size_t max_n, std::size_t in, std::size_t group_size);
  // A view for the first n rows (n <= max_n).
  QuantizedActivations view(std::size_t n) const;

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  [[maybe_unused]] std::size_t max_n_;  // read by KILN_DASSERT only, which a release build drops
  std::size_t in_, group_size_, groups_, row_stride_;
  std::unique_ptr<std::int8_t, FreeDeleter> codes_;
  std::unique_ptr<float, FreeDeleter> scales_;
  std::unique_ptr<std::int32_t, FreeDeleter> chunk_sums_;
};

// Reference quantisation of rows [row_begin, row_end) of x [n, in] into q:
//   scale = absmax(group) / 127, code = round_half_even(x * (127 / absmax)), 0 for all-zero groups.
// The vector versions (dispatch table) must match it bit for bit.
void quantize_activations_reference(const float* x, const QuantizedActivations& q, std::size_t row_begin,
                                    std::size_t row_end);

}  // namespace kiln::kernels
