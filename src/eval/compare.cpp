#include "eval/compare.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "eval/log_softmax.hpp"
#include "eval/sliding_window.hpp"
#include "genai/sampler.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln::eval {

CompareResult compare_models(models::LanguageModel& model, models::LanguageModel& reference,
                             std::span<const std::int32_t> ids, std::int64_t num_bytes, const WindowOptions& options) {
  if (model.config().vocab_size != reference.config().vocab_size) {
    fail("compare: the model's vocabulary has {} entries but the reference's has {}; they must share a tokenizer",
         model.config().vocab_size, reference.config().vocab_size);
  }
  Stopwatch clock;
  const auto num_tokens = static_cast<std::int64_t>(ids.size());
  const std::vector<Window> windows = plan_windows(num_tokens, options.context, options.stride);
  CompareResult r;
  r.num_tokens = num_tokens;
  r.num_bytes = num_bytes;
  r.num_windows = static_cast<std::int64_t>(windows.size());
  double kl_sum = 0.0, nll_model = 0.0, nll_reference = 0.0;
  std::int64_t agree = 0;
  std::vector<double> log_p, log_q;  // [vocab] reference, model
  genai::Engine model_engine(model, window_scheduler(options.max_chunk_tokens));
  genai::Engine reference_engine(reference, window_scheduler(options.max_chunk_tokens));
  for (const Window& window : windows) {
    WindowPass model_pass(model_engine, ids, window);
    WindowPass reference_pass(reference_engine, ids, window);
    // Same window and chunk size: both passes produce the same row ranges, chunk by chunk.
    while (model_pass.next() && reference_pass.next()) {
      KILN_DASSERT(model_pass.first_target() == reference_pass.first_target());
      for (std::int64_t i = 0; i < model_pass.num_rows(); ++i) {
        log_softmax(reference_pass.row(i), log_p);
        log_softmax(model_pass.row(i), log_q);
        const double kl = kl_divergence(log_p, log_q);
        kl_sum += kl;
        r.max_kl = std::max(r.max_kl, kl);
        agree += genai::argmax(model_pass.row(i)) == genai::argmax(reference_pass.row(i)) ? 1 : 0;
        const auto target = static_cast<std::size_t>(ids[static_cast<std::size_t>(model_pass.first_target() + i)]);
        nll_model -= log_q[target];
        nll_reference -= log_p[target];
        ++r.num_scored;
      }
    }
  }
  const auto scored = static_cast<double>(r.num_scored);
  r.mean_kl = kl_sum / scored;
  r.top1_agreement = static_cast<double>(agree) / scored;
  r.ppl_model = std::exp(nll_model / scored);
  r.ppl_reference = std::exp(nll_reference / scored);
  if (num_bytes > 0) {
    r.bits_per_byte_model = nll_model / std::numbers::ln2 / static_cast<double>(num_bytes);
    r.bits_per_byte_reference = nll_reference / std::numbers::ln2 / static_cast<double>(num_bytes);
  }
  r.seconds = clock.elapsed_ms() / 1000.0;
  return r;
}

}  // namespace kiln::eval
