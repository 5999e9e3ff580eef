// ActivationBuffer storage and the scalar reference of dynamic activation quantisation.
#include "kernels/activation_quant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"

namespace kiln::kernels {
namespace {

template <typename T>
T* allocate_zeroed(std::size_t count) {
  const std::size_t bytes = std::max<std::size_t>((count * sizeof(T) + 63) / 64 * 64, 64);
  void* p = std::aligned_alloc(64, bytes);
  if (!p) fail(ErrorKind::kIo, "cannot allocate {} bytes for quantised activations", bytes);
  std::memset(p, 0, bytes);
  return static_cast<T*>(p);
}

}  // namespace

void ActivationBuffer::FreeDeleter::operator()(void* p) const { std::free(p); }

ActivationBuffer::ActivationBuffer(std::size_t max_n, std::size_t in, std::size_t group_size)
    : max_n_(max_n), in_(in), group_size_(group_size) {
  if (in == 0 || max_n == 0) fail("activation buffer: empty shape [{}, {}]", max_n, in);
  if (group_size == 0 || (group_size < in && group_size % kActivationChunk != 0)) {
    fail(
        "DYNAMIC_QUANTIZATION_GROUP_SIZE {} is not supported for input width {} (accepted: a "
        "multiple of {}, or >= {} for one group per row)",
        group_size, in, kActivationChunk, in);
  }
  groups_ = (in + group_size - 1) / group_size;
  row_stride_ = (in + 63) / 64 * 64;
  codes_.reset(allocate_zeroed<std::int8_t>(max_n * row_stride_));
  scales_.reset(allocate_zeroed<float>(max_n * groups_));
  chunk_sums_.reset(allocate_zeroed<std::int32_t>(max_n * (row_stride_ / kActivationChunk)));
}

QuantizedActivations ActivationBuffer::view(std::size_t n) const {
  KILN_DASSERT(n <= max_n_);
  return QuantizedActivations{n,
                              in_,
                              group_size_,
                              groups_,
                              row_stride_,
                              row_stride_ / kActivationChunk,
                              codes_.get(),
                              scales_.get(),
                              chunk_sums_.get()};
}

void quantize_activations_reference(const float* x, const QuantizedActivations& q, std::size_t row_begin,
                                    std::size_t row_end) {
  for (std::size_t i = row_begin; i < row_end; ++i) {
    const float* xi = x + i * q.in;
    std::int8_t* codes = q.codes + i * q.row_stride;
    for (std::size_t h = 0; h < q.groups; ++h) {
      const std::size_t begin = h * q.group_size;
      const std::size_t end = std::min(begin + q.group_size, q.in);
      float absmax = 0.0f;
      for (std::size_t k = begin; k < end; ++k) absmax = std::max(absmax, std::fabs(xi[k]));
      const float inverse = absmax > 0.0f ? 127.0f / absmax : 0.0f;
      q.scales[i * q.groups + h] = absmax / 127.0f;
      for (std::size_t k = begin; k < end; ++k) {
        codes[k] = static_cast<std::int8_t>(std::nearbyint(xi[k] * inverse));
      }
    }
    std::memset(codes + q.in, 0, q.row_stride - q.in);
    for (std::size_t c = 0; c < q.chunks; ++c) {
      std::int32_t sum = 0;
      for (std::size_t k = c * kActivationChunk; k < (c + 1) * kActivationChunk; ++k) sum += codes[k];
      q.chunk_sums[i * q.chunks + c] = sum;
    }
  }
}

}  // namespace kiln::kernels
