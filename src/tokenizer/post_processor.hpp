// Post-processors: what add_special_tokens=true adds around an encoded sequence
// (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence), as HF applies
// them to a single sequence. Only ids are produced (offsets and type ids are not tracked).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace kiln::tok {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Rewrites the ids of one sequence when special tokens are requested.
  virtual void process(std::vector<std::int32_t>& ids) const = 0;
};

std::unique_ptr<PostProcessor> make_post_processor(const Json& spec, const std::string& origin);

// The template transformers builds from add_bos_token / add_eos_token: [bos] $A [eos].
std::unique_ptr<PostProcessor> make_bos_eos_processor(std::optional<std::int32_t> bos, std::optional<std::int32_t> eos);

}  // namespace kiln::tok
