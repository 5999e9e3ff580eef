#include "kernels/stripe_hash.hpp"

#include "kernels/reference/stripe_hash.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"

namespace kiln::kernels {

StripeAccumulateFn find_stripe_accumulate(Isa isa) {
  if (isa >= Isa::kAvx512) return avx512::accumulate_stripes;
  if (isa >= Isa::kAvx2) return avx2::accumulate_stripes;
  return reference::accumulate_stripes;
}

}  // namespace kiln::kernels
