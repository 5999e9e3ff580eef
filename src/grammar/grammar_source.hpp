// What a constraint is before it is compiled: its kind and text (a schema, a regex, GBNF,
// choices, tagged schemas and their triggers), and the front end that turns it into rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_expr.hpp"
#include "grammar/json_schema.hpp"

namespace kiln::grammar {

struct GrammarSource {
  enum class Kind : std::uint8_t { kJsonSchema, kJsonObject, kRegex, kGbnf, kChoice, kTags };
  Kind kind = Kind::kJsonObject;
  std::string text{};                   // the schema, regex or grammar
  std::vector<std::string> choices{};   // kChoice: the output is exactly one of these
  std::vector<TaggedSchema> tags{};     // kTags: one of these, or free text with them where
  std::vector<std::string> triggers{};  // one of these opens them
};

// The front end's rules for `source` (throws kiln::Error naming the place of a mistake).
RuleSet source_rules(const GrammarSource& source);

// A constraint written as text with the name of its kind, as the mask goldens and the grammar
// bench hold them: "json_schema", "regex", "gbnf", "choice" (a JSON array of strings) or "tags"
// ({"triggers": [...], "tags": [{"begin", "schema", "end"}, ...]}). Throws kiln::Error naming an
// unknown kind or malformed JSON.
GrammarSource source_from_text(std::string_view kind, const std::string& text);

}  // namespace kiln::grammar
