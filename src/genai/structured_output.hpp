// GenerationConfig's structured_output_config as the grammar layer's terms: which source to
// compile, and a matcher for one sequence of a request.
#pragma once

#include <memory>

#include "grammar/grammar_matcher.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln::genai {

// nullptr when the config has no constraint. Compiles (or finds in the process cache) the
// grammar for `tokenizer`; throws kiln::Error naming what is wrong with the constraint.
std::unique_ptr<grammar::GrammarMatcher> make_grammar_matcher(const GenerationConfig& config,
                                                              const Tokenizer& tokenizer);

}  // namespace kiln::genai
