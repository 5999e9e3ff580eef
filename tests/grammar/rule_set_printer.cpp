#include "rule_set_printer.hpp"

#include <fmt/format.h>

#include "util/utf8.hpp"

namespace kiln::grammar {
namespace {

void print_code_point(std::string& out, char32_t c, bool in_class) {
  if (c >= 0x20 && c < 0x7F) {
    const bool special =
        in_class ? (c == ']' || c == '\\' || c == '-' || c == '^' || c == '[') : (c == '"' || c == '\\');
    if (special) out += '\\';
    out += static_cast<char>(c);
  } else if (c == '\n') {
    out += "\\n";
  } else if (c == '\t') {
    out += "\\t";
  } else if (c == '\r') {
    out += "\\r";
  } else if (c < 0x80 || (in_class && c < 0x100)) {
    out += fmt::format("\\x{:02X}", static_cast<unsigned>(c));
  } else if (!in_class) {
    append_utf8(out, c);
  } else if (c < 0x10000) {
    out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
  } else {
    out += fmt::format("\\U{:08X}", static_cast<unsigned>(c));
  }
}

enum class Parent { kNone, kSequence, kAlternation };

void print(std::string& out, const Expr& e, Parent parent) {
  switch (e.kind) {
    case Expr::Kind::kLiteral: {
      out += '"';
      std::size_t pos = 0;
      while (pos < e.text.size()) print_code_point(out, next_code_point(e.text, pos), false);
      out += '"';
      return;
    }
    case Expr::Kind::kCharClass:
      if (e.negated && e.ranges.empty()) {
        out += '.';  // any code point
        return;
      }
      out += e.negated ? "[^" : "[";
      for (const CodePointRange& r : e.ranges) {
        print_code_point(out, r.first, true);
        if (r.last != r.first) out += '-', print_code_point(out, r.last, true);
      }
      out += ']';
      return;
    case Expr::Kind::kRuleRef: out += e.text; return;
    case Expr::Kind::kSequence:
    case Expr::Kind::kAlternation: {
      const bool parens =
          parent == Parent::kSequence || (e.kind == Expr::Kind::kAlternation && parent == Parent::kAlternation);
      if (parens) out += '(';
      const char* separator = e.kind == Expr::Kind::kSequence ? " " : " | ";
      for (std::size_t i = 0; i < e.children.size(); ++i) {
        if (i > 0) out += separator;
        print(out, *e.children[i], e.kind == Expr::Kind::kSequence ? Parent::kSequence : Parent::kAlternation);
      }
      if (parens) out += ')';
      return;
    }
    case Expr::Kind::kRepeat: {
      const Expr& child = *e.children.at(0);
      const bool parens = child.kind == Expr::Kind::kSequence || child.kind == Expr::Kind::kAlternation ||
                          child.kind == Expr::Kind::kRepeat;
      if (parens) out += '(';
      print(out, child, Parent::kNone);
      if (parens) out += ')';
      if (e.min == 0 && e.max == 1) {
        out += '?';
      } else if (e.min == 0 && e.max == Expr::kUnbounded) {
        out += '*';
      } else if (e.min == 1 && e.max == Expr::kUnbounded) {
        out += '+';
      } else if (e.max == Expr::kUnbounded) {
        out += fmt::format("{{{},}}", e.min);
      } else if (e.min == e.max) {
        out += fmt::format("{{{}}}", e.min);
      } else {
        out += fmt::format("{{{},{}}}", e.min, e.max);
      }
      return;
    }
  }
}

}  // namespace

}  // namespace kiln::grammar

namespace kiln::testing {

std::string print_expr(const grammar::ExprPtr& expr) {
  std::string out;
  grammar::print(out, *expr, grammar::Parent::kNone);
  return out;
}

std::string print_rules(const grammar::RuleSet& rules) {
  std::string out;
  for (const grammar::Rule& rule : rules.rules) out += rule.name + " ::= " + print_expr(rule.body) + "\n";
  return out;
}

}  // namespace kiln::testing
