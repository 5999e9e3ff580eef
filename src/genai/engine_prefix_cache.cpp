// The engine's half of prefix caching: a sequence that holds no KV blocks (new, or preempted)
// starts from the cached blocks of its longest cached prefix, and every full block a step
// computes joins the cache (kv::BlockPool keeps it findable after its sequence ends, until the
// space is needed). Only committed tokens are cached: a block that still holds speculative
// candidates waits until they are verified.
#include <algorithm>

#include "genai/engine.hpp"
#include "kv/block_hash.hpp"

namespace kiln::genai {

namespace {

// Block i's token ids.
std::span<const std::int32_t> block_tokens(const Sequence& s, std::size_t i, std::int64_t block_size) {
  const auto size = static_cast<std::size_t>(block_size);
  return std::span(s.tokens).subspan(i * size, size);
}

}  // namespace

std::uint64_t Engine::block_parent(const Sequence& s, std::size_t i) const {
  return i == 0 ? prefix_salt_ : s.block_hashes[i - 1];
}

void Engine::hash_blocks(Sequence& s, std::size_t count) const {
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  while (s.block_hashes.size() < count) {
    const std::size_t i = s.block_hashes.size();
    s.block_hashes.push_back(kv::hash_block(block_parent(s, i), block_tokens(s, i, block_size)));
  }
}

void Engine::reuse_cached_prefix(RequestState& r, Sequence& s) {
  if (r.scores_prompt() || !s.blocks.blocks().empty() || s.num_computed != 0) return;
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  // The last committed token is always computed: its logits continue the sequence.
  const auto num_full = static_cast<std::size_t>((s.num_committed() - 1) / block_size);
  hash_blocks(s, num_full);
  std::size_t hits = 0;
  for (; hits < num_full; ++hits) {
    const std::optional<std::int32_t> block =
        pool_.find_cached(s.block_hashes[hits], block_parent(s, hits), block_tokens(s, hits, block_size));
    if (!block) break;
    s.blocks.append(*block);
  }
  s.num_cached_blocks = hits;
  s.num_computed = static_cast<std::int64_t>(hits) * block_size;
  counters_.prefix_cache_queries += static_cast<std::int64_t>(num_full) * block_size;
  counters_.prefix_cache_hits += s.num_computed;
  // A request's first computation of its prompt: the reused part is not prefilled.
  if (&s == r.sequences.front().get() && s.num_committed() == r.num_prompt) {
    r.num_reused = std::max(r.num_reused, std::min(s.num_computed, r.num_prompt));
  }
}

void Engine::cache_computed_blocks(Sequence& s) {
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  const std::int64_t committed_computed = std::min(s.num_computed, s.num_committed());
  const auto num_full = std::min(static_cast<std::size_t>(committed_computed / block_size), s.blocks.blocks().size());
  if (s.num_cached_blocks >= num_full) return;
  hash_blocks(s, num_full);
  for (std::size_t i = s.num_cached_blocks; i < num_full; ++i) {
    pool_.cache(s.blocks.blocks()[i], s.block_hashes[i], block_parent(s, i), block_tokens(s, i, block_size));
  }
  s.num_cached_blocks = num_full;
}

}  // namespace kiln::genai
