// What generate() returns: texts (one per prompt and returned sequence), their scores and
// optional per-token log-probabilities, and the call's performance metrics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/perf_metrics.hpp"

namespace kiln {

struct TokenLogprob {
  std::int32_t token = 0;
  float logprob = 0;                                // of `token`
  std::vector<std::pair<std::int32_t, float>> top;  // the n most likely (token, logprob), best first
};

// Why a sequence ended.
enum class GenerationFinishReason : std::uint8_t {
  NONE,    // still running (never in a returned result)
  STOP,    // EOS, a stop token or stop string, or the streamer said STOP
  LENGTH,  // max_new_tokens / max_length / the end of the context
  CANCEL,  // the streamer said CANCEL, or the request was cancelled
};

struct DecodedResults {
  // For each prompt in order, its num_return_sequences answers, best first.
  std::vector<std::string> texts;
  // Beam search: the hypothesis' length-penalised score; otherwise the sum of the generated
  // tokens' log-probabilities.
  std::vector<float> scores;
  std::vector<std::vector<std::int32_t>> tokens;  // generated token ids (a final EOS included)
  std::vector<GenerationFinishReason> finish_reasons;
  std::vector<std::vector<TokenLogprob>> logprobs;  // empty unless GenerationConfig::logprobs > 0
  PerfMetrics perf_metrics;
};

}  // namespace kiln
