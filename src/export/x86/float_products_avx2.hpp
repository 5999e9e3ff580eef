// The AVX2 + FMA kernel behind accumulate_product (float_products.hpp); built with AVX2 flags only.
#pragma once

#include "export/float_product.hpp"

namespace kiln::exporter::avx2 {
void accumulate_product(const FloatProduct& p);
}  // namespace kiln::exporter::avx2
