// The ISA-free parts of paged attention: element names and sizes, kernel lookup, and merging
// partial softmax states (a few floats per head, so plain scalar code).
#include "kernels/paged_attention.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/reference/paged_attention.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "util/error.hpp"

namespace kiln::kernels {

AttentionKernels find_attention_kernels(Isa isa) {
  if (!isa_supported(isa)) {
    fail(ErrorKind::kUnsupported, "ISA '{}' is not supported by this CPU (detected: {})", isa_name(isa),
         isa_name(detected_isa()));
  }
  switch (isa) {
    case Isa::kScalar: return {reference::attend, reference::encode_kv};
    case Isa::kAvx2: return avx2::attention_kernels();
    case Isa::kAvx512:
    case Isa::kAmx: return avx512::attention_kernels();
  }
  return {reference::attend, reference::encode_kv};
}

void merge_attention_partials(const AttentionPartial& a, const AttentionPartial& b, std::int64_t num_heads,
                              std::int64_t head_dim) {
  for (std::int64_t h = 0; h < num_heads; ++h) {
    const float m = std::max(a.max[h], b.max[h]);
    // exp(-inf - m) = 0 covers a side that saw no position.
    const float wa = std::exp(a.max[h] - m), wb = std::exp(b.max[h] - m);
    a.max[h] = m;
    a.sum[h] = a.sum[h] * wa + b.sum[h] * wb;
    float* acc = a.acc + h * head_dim;
    const float* other = b.acc + h * head_dim;
    for (std::int64_t i = 0; i < head_dim; ++i) acc[i] = acc[i] * wa + other[i] * wb;
  }
}

void finish_attention(const AttentionPartial& p, std::int64_t num_heads, std::int64_t head_dim, float* out) {
  for (std::int64_t h = 0; h < num_heads; ++h) {
    const float inverse = 1.0f / p.sum[h];
    for (std::int64_t i = 0; i < head_dim; ++i) out[h * head_dim + i] = p.acc[h * head_dim + i] * inverse;
  }
}

}  // namespace kiln::kernels
