#include "genai/structured_output.hpp"

#include "grammar/grammar_cache.hpp"

namespace kiln::genai {
namespace {

grammar::GrammarSource grammar_source(const StructuredOutputConfig& c) {
  using Kind = grammar::GrammarSource::Kind;
  if (c.json_schema) return {.kind = Kind::kJsonSchema, .text = *c.json_schema};
  if (c.regex) return {.kind = Kind::kRegex, .text = *c.regex};
  if (c.grammar) return {.kind = Kind::kGbnf, .text = *c.grammar};
  if (!c.choice.empty()) return {.kind = Kind::kChoice, .choices = c.choice};
  if (!c.structural_tags.empty()) {
    grammar::GrammarSource source{.kind = Kind::kTags, .triggers = c.triggers};
    for (const StructuralTag& tag : c.structural_tags) source.tags.push_back({tag.begin, tag.json_schema, tag.end});
    return source;
  }
  return {.kind = Kind::kJsonObject};
}

}  // namespace

std::unique_ptr<grammar::GrammarMatcher> make_grammar_matcher(const GenerationConfig& config,
                                                              const Tokenizer& tokenizer) {
  if (!config.structured_output_config) return nullptr;
  config.structured_output_config->validate();
  // With ignore_eos the model's EOS is no stop; the grammar's own end still ends the output.
  std::set<std::int32_t> stops = config.ignore_eos ? std::set<std::int32_t>{} : config.eos_token_ids;
  stops.insert(config.stop_token_ids.begin(), config.stop_token_ids.end());
  return std::make_unique<grammar::GrammarMatcher>(
      grammar::compile_cached(grammar_source(*config.structured_output_config), tokenizer), std::move(stops));
}

}  // namespace kiln::genai
