// The engine's half of prefix caching: a sequence that holds no KV blocks (new, or preempted)
// starts from the cached blocks of its longest cached prefix, and every full block a step
// computes joins the cache (kv::BlockPool keeps it findable after its sequence ends, until the
// space is needed). Only committed tokens are cached: a block that still holds speculative
// candidates waits until they are verified. The draft model's cache does the same in its own
// pool: a speculative sequence's draft starts from the longest prefix cached there, and leaves
// its blocks behind when the sequence ends (a chat's next turn finds them).
#include <algorithm>

#include "genai/draft_proposer.hpp"
#include "genai/engine.hpp"
#include "kv/prefix_cache.hpp"

namespace kiln::genai {

kv::PrefixChain Engine::prefix_chain(Sequence& s, std::size_t num_blocks) const {
  const auto block_size = static_cast<std::int32_t>(model_.kv_cache_layout().block_size);
  kv::hash_blocks(s.block_hashes, s.tokens, prefix_salt_, block_size, num_blocks);
  return {s.tokens, std::span(s.block_hashes).first(num_blocks), prefix_salt_, block_size};
}

void Engine::reuse_cached_prefix(RequestState& r, Sequence& s) {
  if (r.scores_prompt() || !s.blocks.blocks().empty() || s.num_computed != 0) return;
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  // The last committed token is always computed: its logits continue the sequence.
  const auto num_full = static_cast<std::size_t>((s.num_committed() - 1) / block_size);
  const std::size_t hits = kv::take_cached_prefix(s.blocks, prefix_chain(s, num_full));
  s.num_cached_blocks = hits;
  s.num_computed = static_cast<std::int64_t>(hits) * block_size;
  counters_.prefix_cache_queries += static_cast<std::int64_t>(num_full) * block_size;
  counters_.prefix_cache_hits += s.num_computed;
  // A request's first computation of its prompt: the reused part is not prefilled.
  if (&s == r.sequences.front().get() && s.num_committed() == r.num_prompt) {
    r.num_reused = std::max(r.num_reused, std::min(s.num_computed, r.num_prompt));
  }
}

std::int64_t Engine::cached_prefix_tokens(std::span<const std::int32_t> prompt) const {
  if (!prefix_caching_ || prompt.empty()) return 0;
  const auto block_size = static_cast<std::int32_t>(model_.kv_cache_layout().block_size);
  const auto num_full = static_cast<std::size_t>((static_cast<std::int64_t>(prompt.size()) - 1) / block_size);
  std::vector<std::uint64_t> hashes;
  kv::hash_blocks(hashes, prompt, prefix_salt_, block_size, num_full);
  return static_cast<std::int64_t>(kv::count_cached_prefix(pool_, {prompt, hashes, prefix_salt_, block_size})) *
         block_size;
}

void Engine::cache_computed_blocks(Sequence& s) {
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  const std::int64_t committed_computed = std::min(s.num_computed, s.num_committed());
  const auto num_full = std::min(static_cast<std::size_t>(committed_computed / block_size), s.blocks.blocks().size());
  if (s.num_cached_blocks >= num_full) return;
  kv::cache_blocks(s.blocks, prefix_chain(s, num_full), s.num_cached_blocks, num_full);
  s.num_cached_blocks = num_full;
}

void Engine::reuse_cached_draft_prefix(RequestState& r, Sequence& s) {
  DraftState& d = *s.draft;
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  const auto num_full = static_cast<std::size_t>((s.num_committed() - 1) / block_size);
  d.num_computed = static_cast<std::int64_t>(kv::take_cached_prefix(d.blocks, prefix_chain(s, num_full))) * block_size;
  r.speculation.num_draft_reused = std::min(d.num_computed, r.num_prompt);
}

void Engine::cache_draft_blocks(Sequence& s) {
  const DraftState& d = *s.draft;
  const std::int64_t block_size = model_.kv_cache_layout().block_size;
  const std::int64_t valid = std::min(d.num_computed, s.num_committed());
  const auto num_full = std::min(static_cast<std::size_t>(valid / block_size), d.blocks.blocks().size());
  kv::cache_blocks(d.blocks, prefix_chain(s, num_full), 0, num_full);
}

}  // namespace kiln::genai
