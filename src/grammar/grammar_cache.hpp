// Compiling a constraint once per (constraint, tokenizer): the front end, the lowering and the
// tokenizer's trie are paid by the first request that uses them; later requests (and their
// retries, and every engine of the process) share the CompiledGrammar and its cached masks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.hpp"
#include "grammar/grammar_source.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln::grammar {

// Throws kiln::Error for a malformed source or a tokenizer whose tokens cannot be matched.
std::shared_ptr<CompiledGrammar> compile_cached(const GrammarSource& source, const Tokenizer& tokenizer);

}  // namespace kiln::grammar
