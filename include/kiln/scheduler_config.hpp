// How the engine shares each forward step and the KV cache between sequences. Names follow
// OpenVINO GenAI's SchedulerConfig.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

struct SchedulerConfig {
  std::int64_t max_num_batched_tokens = 2048;  // new tokens per step over all sequences
  std::int32_t max_num_seqs = 64;              // sequences per step
  // KV cache size in blocks of PipelineProperties::kv_block_size tokens; 0: cache_size decides.
  std::int64_t num_kv_blocks = 0;
  // When num_kv_blocks is 0: the KV cache's size in GiB (2^30 bytes), in blocks of the KV
  // precision (KV_CACHE_PRECISION: f16 by default, u8 takes about half); 0: derived from the free
  // memory, room for PipelineProperties::kv_cache_sequences sequences at full context within half
  // the memory available when the model loads. Blocks never used never become resident.
  std::size_t cache_size = 0;
  // Chunked prefill: a prompt that does not fit a step's remaining budget is cut, its chunks
  // sharing steps with other sequences' decode tokens. false: a prompt waits for a step with room
  // for all of it (cut only when even an empty step could not hold it).
  bool dynamic_split_fuse = true;
  // Full KV blocks are kept by content after their sequence ends, and a prompt starting with
  // the same tokens reuses them instead of computing them again (until the space is needed).
  bool enable_prefix_caching = true;
};

}  // namespace kiln
