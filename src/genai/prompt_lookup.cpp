#include "genai/prompt_lookup.hpp"

#include <algorithm>

namespace kiln::genai {

std::vector<std::int32_t> lookup_candidates(std::span<const std::int32_t> tokens, std::int64_t max_ngram_size,
                                            std::int64_t max_candidates) {
  const auto length = static_cast<std::int64_t>(tokens.size());
  for (std::int64_t n = std::min(max_ngram_size, length - 1); n >= 1; --n) {
    const auto ngram = tokens.last(static_cast<std::size_t>(n));
    // Windows that end before the last token, so something follows them.
    for (std::int64_t start = 0; start + n < length; ++start) {
      if (!std::equal(ngram.begin(), ngram.end(), tokens.begin() + start)) continue;
      const std::int64_t from = start + n;
      const std::int64_t to = std::min(from + max_candidates, length);
      return {tokens.begin() + from, tokens.begin() + to};
    }
  }
  return {};
}

}  // namespace kiln::genai
