// JSON Schema to grammar: the outputs a schema accepts, as a RuleSet. Properties come in the
// schema's order (required ones always, optional ones when the model writes them), whitespace
// between tokens is [ \n\r\t]{0,20}, and any keyword that would change what is valid but is not
// supported is an error naming it and where it is: never silently ignored. Annotations (title,
// description, examples, ...) are ignored. oneOf is treated as anyOf: a grammar cannot check
// that exactly one branch matches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar {

// From the schema's text (read in order: properties come as written; a parse error names the
// position).
RuleSet json_schema_rules(std::string_view schema_text);
// Any JSON object (OpenAI's response_format json_object).
RuleSet json_object_rules();

// Tagged values: each its `begin` text, JSON valid against its schema, its `end` text (a tool
// call among the tools). Without triggers the output is exactly one of them. With triggers it is
// free text in which a trigger opens one of the tags whose begin starts with it, any number of
// times (tag_dispatch.hpp). Errors name the tag ("structural_tags[1]#/properties/x").
struct TaggedSchema {
  std::string begin;
  std::string schema;
  std::string end;
};
RuleSet tagged_schema_rules(const std::vector<TaggedSchema>& tags, const std::vector<std::string>& triggers = {});

}  // namespace kiln::grammar
