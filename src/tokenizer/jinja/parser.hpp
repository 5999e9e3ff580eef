// Builds the syntax tree from tokens with Jinja2's grammar (jinja2/parser.py), including the
// loopcontrols extension (break/continue) and transformers' {% generation %} block.
// Syntax errors throw jinja::Exception (TemplateSyntaxError) with the offending offset, worded
// as Jinja2 words them.
#pragma once

#include <vector>

#include "tokenizer/jinja/ast.hpp"
#include "tokenizer/jinja/lexer.hpp"

namespace kiln::jinja {

// Deepest nesting of expressions and blocks the parser accepts; deeper templates are rejected
// with a clear error instead of exhausting the stack.
inline constexpr int kMaxParseDepth = 100;

ast::Body parse(const std::vector<Token>& tokens);

}  // namespace kiln::jinja
