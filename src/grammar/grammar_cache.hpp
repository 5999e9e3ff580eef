// Compiling a constraint once per (constraint, tokenizer): the front end, the lowering and the
// tokenizer's trie are paid by the first request that uses them; later requests (and their
// retries, and every engine of the process) share the CompiledGrammar and its cached masks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.hpp"
#include "grammar/json_schema.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln::grammar {

struct GrammarSource {
  enum class Kind : std::uint8_t { kJsonSchema, kJsonObject, kRegex, kGbnf, kChoice, kTags };
  Kind kind = Kind::kJsonObject;
  std::string text;                   // the schema, regex or grammar
  std::vector<std::string> choices;   // kChoice: the output is exactly one of these
  std::vector<TaggedSchema> tags;     // kTags: one of these, or free text with them where
  std::vector<std::string> triggers;  // one of these opens them
};

// The front end's rules for `source` (throws kiln::Error naming the place of a mistake).
RuleSet source_rules(const GrammarSource& source);

// Throws kiln::Error for a malformed source or a tokenizer whose tokens cannot be matched.
std::shared_ptr<CompiledGrammar> compile_cached(const GrammarSource& source, const Tokenizer& tokenizer);

}  // namespace kiln::grammar
