#include "genai/request_state.hpp"

#include "genai/beam_search.hpp"
#include "genai/draft_proposer.hpp"
#include "genai/speculation_controller.hpp"
#include "grammar/grammar_matcher.hpp"

namespace kiln::genai {

Sequence::Sequence(kv::BlockTable table) : blocks(std::move(table)) {}
Sequence::~Sequence() = default;
Sequence::Sequence(Sequence&&) noexcept = default;

RequestState::RequestState(const GenerationConfig& generation_config)
    : config(generation_config), sampler(generation_config) {}
RequestState::~RequestState() = default;

std::int64_t RequestState::num_generated_total() const {
  std::int64_t total = 0;
  for (const auto& s : sequences) total += s->num_committed() - num_prompt;
  return total;
}

}  // namespace kiln::genai
