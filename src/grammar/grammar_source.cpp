#include "grammar/grammar_source.hpp"

#include "grammar/gbnf_parser.hpp"
#include "grammar/regex_parser.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln::grammar {

RuleSet source_rules(const GrammarSource& source) {
  switch (source.kind) {
    case GrammarSource::Kind::kJsonSchema: return json_schema_rules(std::string_view(source.text));
    case GrammarSource::Kind::kJsonObject: return json_object_rules();
    case GrammarSource::Kind::kRegex: return regex_to_rules(source.text);
    case GrammarSource::Kind::kGbnf: return parse_gbnf(source.text);
    case GrammarSource::Kind::kTags: return tagged_schema_rules(source.tags, source.triggers);
    case GrammarSource::Kind::kChoice: {
      if (source.choices.empty()) fail("choice: at least one choice is needed");
      std::vector<ExprPtr> alternatives;
      for (const std::string& choice : source.choices) alternatives.push_back(literal(choice));
      return {{{"root", alternation(std::move(alternatives))}}, "root"};
    }
  }
  fail(ErrorKind::kInternal, "unknown grammar source kind");
}

GrammarSource source_from_text(std::string_view kind, const std::string& text) {
  using Kind = GrammarSource::Kind;
  if (kind == "json_schema") return {.kind = Kind::kJsonSchema, .text = text};
  if (kind == "regex") return {.kind = Kind::kRegex, .text = text};
  if (kind == "gbnf") return {.kind = Kind::kGbnf, .text = text};
  try {
    const Json parsed = parse_json_text(text, kind);
    if (kind == "choice") return {.kind = Kind::kChoice, .choices = parsed.get<std::vector<std::string>>()};
    if (kind == "tags") {
      GrammarSource source{.kind = Kind::kTags, .triggers = parsed.at("triggers")};
      for (const Json& t : parsed.at("tags")) source.tags.push_back({t.at("begin"), t.at("schema"), t.at("end")});
      return source;
    }
  } catch (const Json::exception& e) {
    fail("grammar source of kind '{}': {}", kind, e.what());
  }
  fail("grammar source: unknown kind '{}'", kind);
}

}  // namespace kiln::grammar
