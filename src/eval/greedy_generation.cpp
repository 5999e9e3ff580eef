#include "eval/greedy_generation.hpp"

#include "genai/engine.hpp"

namespace kiln::eval {

std::vector<Generation> generate_greedy(models::LanguageModel& model,
                                        std::span<const std::vector<std::int32_t>> prompts, std::int64_t max_new_tokens,
                                        const std::set<std::int32_t>& eos_token_ids, const StopRule& stop) {
  GenerationConfig config;
  config.do_sample = false;
  config.max_new_tokens = max_new_tokens;
  config.eos_token_ids = eos_token_ids;
  config.validate();

  genai::Engine engine(model);
  std::vector<Generation> out(prompts.size());
  std::vector<genai::RequestId> ids;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    // The engine streams every token but the stopping EOS; `out` collects them as they come.
    ids.push_back(engine.add_request(prompts[i], config, [&out, &stop, i](std::int32_t token) {
      out[i].tokens.push_back(token);
      return stop && stop(i, out[i].tokens) ? StreamingStatus::STOP : StreamingStatus::RUNNING;
    }));
  }
  engine.run_until_idle();
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const genai::RequestState& r = engine.request(ids[i]);
    const std::span<const std::int32_t> generated = r.generated();
    out[i].tokens.assign(generated.begin(), generated.end());
    out[i].ended_with_eos = !generated.empty() && eos_token_ids.contains(generated.back());
  }
  return out;
}

}  // namespace kiln::eval
