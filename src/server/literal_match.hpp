// Matching fixed markers (<think>, <tool_call>, [TOOL_CALLS], ...) in text that arrives in pieces:
// a marker may be split across two pieces, so a piece that ends in the start of one must be held
// back until the next piece decides it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace kiln::server {

// The length of the longest suffix of `text` that is a proper prefix of `marker` (0 for none).
inline std::size_t partial_marker_length(std::string_view text, std::string_view marker) {
  for (std::size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

enum class LiteralMatch { kMatch, kPartial, kMismatch };

// Whether `text` starts with `literal` (kMatch), is a proper prefix of it so more text could
// still complete it (kPartial), or can no longer start with it (kMismatch).
inline LiteralMatch match_literal(std::string_view text, std::string_view literal) {
  if (text.starts_with(literal)) return LiteralMatch::kMatch;
  if (text.size() < literal.size() && literal.starts_with(text)) return LiteralMatch::kPartial;
  return LiteralMatch::kMismatch;
}

}  // namespace kiln::server
