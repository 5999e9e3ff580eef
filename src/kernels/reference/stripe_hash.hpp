// The definition of the stripe-hash loop (kernels/stripe_hash.hpp) in plain integer code.
#pragma once

#include "kernels/stripe_hash.hpp"

namespace kiln::kernels::reference {

void accumulate_stripes(std::uint64_t* lanes, const std::uint8_t* p, std::size_t stripes, std::size_t index);

}  // namespace kiln::kernels::reference
