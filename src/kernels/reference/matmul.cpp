// Scalar matmul twins: per element decoding through weight_format.hpp, double accumulation.
#include "kernels/reference/matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "util/half.hpp"

namespace kiln::kernels::reference {
namespace {

float weight_value(const WeightView& w, std::size_t row, std::size_t k) {
  const std::size_t index = row * w.in + k;
  switch (w.scheme) {
    case WeightScheme::kF32: {
      float v;
      std::memcpy(&v, w.data + 4 * index, 4);
      return v;
    }
    case WeightScheme::kF16:
    case WeightScheme::kBf16: {
      std::uint16_t bits;
      std::memcpy(&bits, w.data + 2 * index, 2);
      return w.scheme == WeightScheme::kF16 ? f16_to_f32(bits) : bf16_to_f32(bits);
    }
    default: return dequantize_value(w.scheme, read_code(w, row, k), read_params(w, row, k / w.group_size));
  }
}

}  // namespace

void matmul_int8_activations(const WeightView& w, const QuantizedActivations& xq, std::size_t block_columns,
                             const float* bias, float* y, std::size_t y_stride, std::size_t row_begin,
                             std::size_t row_end) {
  for (std::size_t r = row_begin; r < row_end; ++r) {
    for (std::size_t i = 0; i < xq.n; ++i) {
      const std::int8_t* q = xq.codes + i * xq.row_stride;
      double acc = 0.0;
      for (std::size_t begin = 0; begin < w.in; begin += block_columns) {
        const std::size_t end = std::min(begin + block_columns, w.in);
        const QuantParams p = read_params(w, r, begin / w.group_size);
        std::int64_t dot = 0;
        for (std::size_t k = begin; k < end; ++k) {
          dot += static_cast<std::int64_t>(read_code(w, r, k) - p.zero_point) * q[k];
        }
        const double s_a = xq.scales[i * xq.groups + begin / xq.group_size];
        acc += static_cast<double>(p.scale) * s_a * static_cast<double>(dot);
      }
      y[i * y_stride + r] = static_cast<float>(acc + (bias ? bias[r] : 0.0));
    }
  }
}

void matmul_f32_activations(const WeightView& w, const float* x, std::size_t n, const float* bias, float* y,
                            std::size_t y_stride, std::size_t row_begin, std::size_t row_end) {
  const bool bf16_activations = w.scheme == WeightScheme::kBf16;
  for (std::size_t r = row_begin; r < row_end; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const float* xi = x + i * w.in;
      double acc = 0.0;
      for (std::size_t k = 0; k < w.in; ++k) {
        const float xv = bf16_activations ? bf16_to_f32(f32_to_bf16(xi[k])) : xi[k];
        acc += static_cast<double>(weight_value(w, r, k)) * xv;
      }
      y[i * y_stride + r] = static_cast<float>(acc + (bias ? bias[r] : 0.0));
    }
  }
}

}  // namespace kiln::kernels::reference
