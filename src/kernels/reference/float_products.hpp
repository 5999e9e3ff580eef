// The scalar twin of the float-product kernels (kernels/float_products.hpp).
#pragma once

#include "kernels/float_products.hpp"

namespace kiln::kernels::reference {

// c[i, j] += a(i, 0)·b[0, j] + a(i, 1)·b[1, j] + ... in k order, unfused.
void accumulate_product(const FloatProduct& p);

}  // namespace kiln::kernels::reference
