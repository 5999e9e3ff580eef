// `kiln budget --measure`: the process's resident memory, read from /proc/self/status
// (VmRSS, VmHWM) with getrusage's peak as the fallback, and a prefill of a given length to
// measure it against (the KV cache filled to that context, as a real prompt would).
#pragma once

#include <cstdint>
#include <optional>

#include "models/language_model.hpp"

namespace kiln::eval {

// Peak resident set size of this process so far (VmHWM), in bytes; nullopt when unavailable.
std::optional<std::uint64_t> peak_rss_bytes();
// Current resident set size (VmRSS), in bytes; nullopt when unavailable.
std::optional<std::uint64_t> current_rss_bytes();

// Generates one sequence of `num_tokens` through the engine: a prompt of num_tokens - 1
// deterministic ids in chunks of at most `max_chunk_tokens`, then one greedy token. Throws
// kiln::Error when the sequence does not fit the KV cache or the model's positions.
void run_synthetic_prefill(models::LanguageModel& model, std::int64_t num_tokens, std::int64_t max_chunk_tokens = 512);

}  // namespace kiln::eval
