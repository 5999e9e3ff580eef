#include "eval/memory_measure.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

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
  if (num_tokens < 1 || num_tokens > kv.num_tokens() || num_tokens > config.max_position_embeddings) {
    fail("a prompt of {} tokens does not fit: the KV cache holds {} tokens and the model {} positions", num_tokens,
         kv.num_tokens(), config.max_position_embeddings);
  }
  // Ids spread over the vocabulary; what they say does not change the memory a prefill needs.
  std::vector<std::int32_t> ids(static_cast<std::size_t>(num_tokens));  // [num_tokens]
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 7919 + 1) % config.vocab_size);
  std::vector<std::int32_t> blocks(static_cast<std::size_t>((num_tokens + kv.block_size - 1) / kv.block_size));
  std::iota(blocks.begin(), blocks.end(), 0);
  models::StepOutput out;
  for (std::int64_t done = 0; done < num_tokens;) {
    const std::int64_t n = std::min(max_chunk_tokens, num_tokens - done);
    const models::SequenceChunk chunk{
        .tokens = std::span(ids).subspan(static_cast<std::size_t>(done), static_cast<std::size_t>(n)),
        .num_cached = done,
        .block_table = blocks,
        .logits = done + n == num_tokens ? models::LogitsMode::kLast : models::LogitsMode::kNone};
    model.step(std::span(&chunk, 1), out);
    done += n;
  }
}

}  // namespace kiln::eval
