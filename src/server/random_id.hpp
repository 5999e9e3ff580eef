// Random ids for responses and tool calls ("chatcmpl-3f9c...", "call_..."): unique in practice,
// not secrets.
#pragma once

#include <cstddef>
#include <string>

namespace kiln::server {

std::string random_hex(std::size_t digits);
// Letters and digits: Mistral's templates require tool-call ids of exactly 9 of them.
std::string random_alphanumeric(std::size_t length);

}  // namespace kiln::server
