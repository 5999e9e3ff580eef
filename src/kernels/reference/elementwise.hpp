// Scalar reference kernels for the element-wise parts of a transformer layer. They define the
// semantics (Hugging Face's Llama modules) that every vectorised twin is tested against, and
// they accumulate in double so they are the more exact side of any comparison.
#pragma once

#include <cstdint>

namespace kiln::kernels::reference {

// out [rows, dim] = x * gain / sqrt(mean(x²) + eps). out may alias x.
void rms_norm(const float* x, const float* gain, double eps, std::int64_t rows, std::int64_t dim, float* out);

// acc [count] += x.
void add(float* acc, const float* x, std::int64_t count);

// out [count] = silu(gate) * up, silu(g) = g / (1 + e^-g). out may alias gate or up.
void silu_mul(const float* gate, const float* up, std::int64_t count, float* out);

// Rotates x [rows, heads, head_dim] in place with HF's rotate_half pairing (i with i + half):
// x'[i] = x[i]·cos − x[i+half]·sin, x'[i+half] = x[i+half]·cos + x[i]·sin; cos/sin [rows, half].
void rope_rotate_half(float* x, std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* cos,
                      const float* sin);

// log Σ exp(x) over x [count], count >= 1: max(x) + log Σ exp(x − max(x)); max(x) itself when it is ±inf.
double log_sum_exp(const float* x, std::int64_t count);
// The index of the first largest value.
std::int64_t argmax(const float* x, std::int64_t count);

}  // namespace kiln::kernels::reference
