#include "eval/memory_measure.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "genai/engine.hpp"
#include "util/error.hpp"

namespace kiln::eval {
namespace {

// A "Name:   1234 kB" line of /proc/self/status, in bytes.
std::optional<std::uint64_t> proc_status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(field + ":")) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> peak_rss_bytes() {
  if (auto v = proc_status_kib("VmHWM")) return v;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::optional<std::uint64_t> current_rss_bytes() { return proc_status_kib("VmRSS"); }

void run_synthetic_prefill(models::LanguageModel& model, std::int64_t num_tokens, std::int64_t max_chunk_tokens) {
  const models::KvCacheLayout& kv = model.kv_cache_layout();
  const ir::ModelConfig& config = model.config();
  if (num_tokens < 2 || num_tokens > kv.num_tokens() || num_tokens > config.max_position_embeddings) {
    fail("a prompt of {} tokens does not fit: the KV cache holds {} tokens and the model {} positions", num_tokens,
         kv.num_tokens(), config.max_position_embeddings);
  }
  if (max_chunk_tokens < 1) fail("prefill: chunk size must be positive, got {}", max_chunk_tokens);
  // Ids spread over the vocabulary; what they say does not change the memory a prefill needs.
  std::vector<std::int32_t> prompt(static_cast<std::size_t>(num_tokens - 1));  // [num_tokens - 1]
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    prompt[i] = static_cast<std::int32_t>((i * 7919 + 1) % config.vocab_size);
  }
  // Through the engine, as every generation runs: the prompt in chunks, then one greedy token,
  // which makes the sequence num_tokens long.
  genai::Engine engine(model, SchedulerConfig{.max_num_batched_tokens = max_chunk_tokens, .max_num_seqs = 1});
  GenerationConfig greedy_one;
  greedy_one.max_new_tokens = 1;
  greedy_one.ignore_eos = true;
  engine.add_request(std::move(prompt), greedy_one);
  engine.run_until_idle();
}

}  // namespace kiln::eval
