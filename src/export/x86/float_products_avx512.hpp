// The AVX-512 kernel behind accumulate_product (float_products.hpp); built with AVX-512 flags only.
#pragma once

#include "export/float_product.hpp"

namespace kiln::exporter::avx512 {
void accumulate_product(const FloatProduct& p);
}  // namespace kiln::exporter::avx512
