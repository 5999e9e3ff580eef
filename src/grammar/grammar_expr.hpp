// The grammar front ends' common language: each (GBNF text, a regex, a JSON schema) becomes a
// list of named rules whose bodies are expressions over Unicode code points, and one lowering
// (grammar.hpp: lower()) turns that into the byte-level grammar the matcher runs. Keeping the
// front ends on code points and the matcher on bytes means UTF-8 is handled in one place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::grammar {

struct CodePointRange {
  char32_t first = 0;
  char32_t last = 0;  // inclusive
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind : std::uint8_t {
    kLiteral,      // `text` (UTF-8), matched byte for byte; empty matches the empty string
    kCharClass,    // one code point in `ranges` (or, when `negated`, any valid code point outside them)
    kRuleRef,      // the rule named `text`
    kSequence,     // `children` one after another
    kAlternation,  // one of `children`
    kRepeat,       // `children[0]` between min and max times (max = kUnbounded: no limit)
  };
  static constexpr std::int64_t kUnbounded = -1;

  Kind kind = Kind::kLiteral;
  std::string text;
  std::vector<CodePointRange> ranges;
  bool negated = false;
  std::vector<ExprPtr> children;
  std::int64_t min = 0;
  std::int64_t max = 0;
};

ExprPtr literal(std::string text);
ExprPtr char_class(std::vector<CodePointRange> ranges, bool negated = false);
ExprPtr rule_ref(std::string name);
ExprPtr sequence(std::vector<ExprPtr> children);
ExprPtr alternation(std::vector<ExprPtr> children);
ExprPtr repeat(ExprPtr child, std::int64_t min, std::int64_t max);
inline ExprPtr optional(ExprPtr child) { return repeat(std::move(child), 0, 1); }
inline ExprPtr star(ExprPtr child) { return repeat(std::move(child), 0, Expr::kUnbounded); }
inline ExprPtr plus(ExprPtr child) { return repeat(std::move(child), 1, Expr::kUnbounded); }

struct Rule {
  std::string name;
  ExprPtr body;
};

// What a front end produces: rules by name, and which one a whole output must match.
struct RuleSet {
  std::vector<Rule> rules;
  std::string root;
};

}  // namespace kiln::grammar
