#include "eval/perplexity.hpp"

#include <cmath>
#include <numbers>

#include "eval/log_softmax.hpp"
#include "eval/sliding_window.hpp"
#include "runtime/host_math.hpp"
#include "util/clock.hpp"

namespace kiln::eval {

std::vector<std::int32_t> encode_eval_text(const Tokenizer& tokenizer, std::string_view text) {
  return tokenizer.encode(text, /*add_special_tokens=*/true);
}

double token_nll(std::span<const float> logits, std::int32_t target) {
  return runtime::log_sum_exp(logits) - static_cast<double>(logits[static_cast<std::size_t>(target)]);
}

PerplexityResult evaluate_perplexity(models::LanguageModel& model, std::span<const std::int32_t> ids,
                                     std::int64_t num_bytes, const WindowOptions& options) {
  Stopwatch clock;
  const auto num_tokens = static_cast<std::int64_t>(ids.size());
  const std::vector<Window> windows = plan_windows(num_tokens, options.context, options.stride);
  PerplexityResult r;
  r.num_tokens = num_tokens;
  r.num_bytes = num_bytes;
  r.num_windows = static_cast<std::int64_t>(windows.size());
  genai::Engine engine(model, window_scheduler(options.max_chunk_tokens));
  for (const Window& window : windows) {
    WindowPass pass(engine, ids, window);
    while (pass.next()) {
      for (std::int64_t i = 0; i < pass.num_rows(); ++i) {
        r.nll_nats += token_nll(pass.row(i), ids[static_cast<std::size_t>(pass.first_target() + i)]);
        ++r.num_scored;
      }
    }
  }
  r.ppl = std::exp(r.nll_nats / static_cast<double>(r.num_scored));
  r.bits_per_byte = num_bytes > 0 ? r.nll_nats / std::numbers::ln2 / static_cast<double>(num_bytes) : 0.0;
  r.seconds = clock.elapsed_ms() / 1000.0;
  return r;
}

PerplexityResult evaluate_perplexity(models::LanguageModel& model, const Tokenizer& tokenizer, std::string_view text,
                                     const WindowOptions& options) {
  const std::vector<std::int32_t> ids = encode_eval_text(tokenizer, text);
  return evaluate_perplexity(model, ids, static_cast<std::int64_t>(text.size()), options);
}

}  // namespace kiln::eval
