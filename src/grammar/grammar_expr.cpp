// The constructors of grammar_expr.hpp: each builds one immutable Expr node.
#include "grammar/grammar_expr.hpp"

#include <utility>

namespace kiln::grammar {

ExprPtr literal(std::string text) {
  auto expr = std::make_shared<Expr>();
  expr->kind = Expr::Kind::kLiteral;
  expr->text = std::move(text);
  return expr;
}

ExprPtr char_class(std::vector<CodePointRange> ranges, bool negated) {
  auto expr = std::make_shared<Expr>();
  expr->kind = Expr::Kind::kCharClass;
  expr->ranges = std::move(ranges);
  expr->negated = negated;
  return expr;
}

ExprPtr rule_ref(std::string name) {
  auto expr = std::make_shared<Expr>();
  expr->kind = Expr::Kind::kRuleRef;
  expr->text = std::move(name);
  return expr;
}

// NOTE: a one-child sequence or alternation is the child itself, so front ends can build
// lists without special-casing the single element; an empty sequence is the empty literal.
ExprPtr sequence(std::vector<ExprPtr> children) {
  if (children.empty()) return literal("");
  if (children.size() == 1) return std::move(children.front());
  auto expr = std::make_shared<Expr>();
  expr->kind = Expr::Kind::kSequence;
  expr->children = std::move(children);
  return expr;
}

ExprPtr alternation(std::vector<ExprPtr> children) {
  if (children.size() == 1) return std::move(children.front());
  auto expr = std::make_shared<Expr>();
  expr->kind = Expr::Kind::kAlternation;
  expr->children = std::move(children);
  return expr;
}

ExprPtr repeat(ExprPtr child, std::int64_t min, std::int64_t max) {
  auto expr = std::make_shared<Expr>();
  expr->kind = Expr::Kind::kRepeat;
  expr->children.push_back(std::move(child));
  expr->min = min;
  expr->max = max;
  return expr;
}

}  // namespace kiln::grammar
