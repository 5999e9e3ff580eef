#include "expr_reference_matcher.hpp"

#include <set>
#include <stdexcept>

#include "util/utf8.hpp"

namespace kiln::grammar::testing {
namespace {

using Positions = std::set<std::size_t>;  // byte offsets into the input

bool in_class(const Expr& e, char32_t c) {
  bool inside = false;
  for (const CodePointRange& r : e.ranges) inside = inside || (c >= r.first && c <= r.last);
  return inside != e.negated;
}

Positions advance(const Expr& e, std::string_view text, const Positions& from) {
  Positions out;
  switch (e.kind) {
    case Expr::Kind::kLiteral:
      for (std::size_t p : from) {
        if (text.substr(p).substr(0, e.text.size()) == e.text) out.insert(p + e.text.size());
      }
      return out;
    case Expr::Kind::kCharClass:
      for (std::size_t p : from) {
        if (p >= text.size()) continue;
        std::size_t next = p;
        if (in_class(e, next_code_point(text, next))) out.insert(next);
      }
      return out;
    case Expr::Kind::kRuleRef: throw std::logic_error("reference_matches: rule references are not followed");
    case Expr::Kind::kSequence: {
      Positions current = from;
      for (const ExprPtr& child : e.children) current = advance(*child, text, current);
      return current;
    }
    case Expr::Kind::kAlternation:
      for (const ExprPtr& child : e.children) out.merge(advance(*child, text, from));
      return out;
    case Expr::Kind::kRepeat: {
      Positions current = from;
      for (std::int64_t i = 0; i < e.min; ++i) current = advance(*e.children[0], text, current);
      out = current;
      // Each further copy is optional; stop at max or when no new position appears.
      for (std::int64_t i = e.min; e.max == Expr::kUnbounded || i < e.max; ++i) {
        const std::size_t before = out.size();
        current = advance(*e.children[0], text, current);
        out.insert(current.begin(), current.end());
        if (current.empty() || (out.size() == before && e.max == Expr::kUnbounded)) break;
      }
      return out;
    }
  }
  return out;
}

}  // namespace

bool reference_matches(const ExprPtr& expr, std::string_view utf8) {
  return advance(*expr, utf8, {0}).count(utf8.size()) > 0;
}

}  // namespace kiln::grammar::testing
