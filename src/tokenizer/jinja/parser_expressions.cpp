// Expression half of the parser, one function per precedence level of Jinja2's grammar:
// condexpr < or < and < not < compare < + - < ~ < * / // % < ** < unary < postfix/filters.
#include <algorithm>
#include <optional>

#include "tokenizer/jinja/filters.hpp"
#include "tokenizer/jinja/parser_impl.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/tests.hpp"

namespace kiln::jinja {

using ast::ExprPtr;

ExprPtr Parser::parse_expression(bool with_condexpr) {
  DepthGuard guard(*this);
  return with_condexpr ? parse_condexpr() : parse_or();
}

ExprPtr Parser::parse_condexpr() {
  uint32_t offset = current().offset;
  const size_t unknown_mark = unknown_.size();
  ExprPtr expr1 = parse_or();
  while (skip_if_name("if")) {
    // The whole inline if is a soft frame: unknown filters in it fail only when they run.
    unknown_.resize(unknown_mark);
    const bool saved_soft = soft_;
    soft_ = true;
    ExprPtr expr2 = parse_or();
    ExprPtr expr3 = skip_if_name("else") ? parse_condexpr() : nullptr;
    soft_ = saved_soft;
    expr1 = std::make_unique<ast::CondExpr>(offset, std::move(expr2), std::move(expr1), std::move(expr3));
    offset = current().offset;
  }
  return expr1;
}

ExprPtr Parser::parse_or() {
  uint32_t offset = current().offset;
  ExprPtr left = parse_and();
  while (skip_if_name("or")) {
    ExprPtr right = parse_and();
    left = std::make_unique<ast::Logical>(ast::ExprKind::kOr, offset, std::move(left), std::move(right));
    offset = current().offset;
  }
  return left;
}

ExprPtr Parser::parse_and() {
  uint32_t offset = current().offset;
  ExprPtr left = parse_not();
  while (skip_if_name("and")) {
    ExprPtr right = parse_not();
    left = std::make_unique<ast::Logical>(ast::ExprKind::kAnd, offset, std::move(left), std::move(right));
    offset = current().offset;
  }
  return left;
}

ExprPtr Parser::parse_not() {
  DepthGuard guard(*this);
  if (is_name("not")) {
    const uint32_t offset = next().offset;
    return std::make_unique<ast::Not>(offset, parse_not());
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  const uint32_t offset = current().offset;
  ExprPtr expr = parse_math1();
  auto current_op = [&]() -> std::optional<ast::CompareOp> {
    switch (current().type) {
      case TokenType::kEq: return ast::CompareOp::kEq;
      case TokenType::kNe: return ast::CompareOp::kNe;
      case TokenType::kLt: return ast::CompareOp::kLt;
      case TokenType::kLtEq: return ast::CompareOp::kLtEq;
      case TokenType::kGt: return ast::CompareOp::kGt;
      case TokenType::kGtEq: return ast::CompareOp::kGtEq;
      default: break;
    }
    if (is_name("in")) return ast::CompareOp::kIn;
    if (is_name("not") && look().type == TokenType::kName && look().text == "in") {
      return ast::CompareOp::kNotIn;
    }
    return std::nullopt;
  };
  std::vector<std::pair<ast::CompareOp, ExprPtr>> ops;
  while (auto op = current_op()) {
    if (*op == ast::CompareOp::kNotIn) next();  // `not` of `not in`
    next();
    ops.emplace_back(*op, parse_math1());
  }
  if (ops.empty()) return expr;
  auto node = std::make_unique<ast::Compare>(offset, std::move(expr));
  node->rest = std::move(ops);
  return node;
}

ExprPtr Parser::parse_math1() {
  uint32_t offset = current().offset;
  ExprPtr left = parse_concat();
  while (current().type == TokenType::kAdd || current().type == TokenType::kSub) {
    const auto op = next().type == TokenType::kAdd ? ast::BinaryOp::kAdd : ast::BinaryOp::kSub;
    ExprPtr right = parse_concat();
    left = std::make_unique<ast::Binary>(offset, op, std::move(left), std::move(right));
    offset = current().offset;
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  const uint32_t offset = current().offset;
  ExprPtr first = parse_math2();
  if (current().type != TokenType::kTilde) return first;
  auto node = std::make_unique<ast::Concat>(offset);
  node->parts.push_back(std::move(first));
  while (skip_if(TokenType::kTilde)) node->parts.push_back(parse_math2());
  return node;
}

ExprPtr Parser::parse_math2() {
  uint32_t offset = current().offset;
  ExprPtr left = parse_pow();
  while (true) {
    ast::BinaryOp op;
    switch (current().type) {
      case TokenType::kMul: op = ast::BinaryOp::kMul; break;
      case TokenType::kDiv: op = ast::BinaryOp::kDiv; break;
      case TokenType::kFloorDiv: op = ast::BinaryOp::kFloorDiv; break;
      case TokenType::kMod: op = ast::BinaryOp::kMod; break;
      default: return left;
    }
    next();
    ExprPtr right = parse_pow();
    left = std::make_unique<ast::Binary>(offset, op, std::move(left), std::move(right));
    offset = current().offset;
  }
}

ExprPtr Parser::parse_pow() {
  uint32_t offset = current().offset;
  ExprPtr left = parse_unary();
  while (skip_if(TokenType::kPow)) {
    ExprPtr right = parse_unary();
    left = std::make_unique<ast::Binary>(offset, ast::BinaryOp::kPow, std::move(left), std::move(right));
    offset = current().offset;
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard guard(*this);
  const uint32_t offset = current().offset;
  ExprPtr node;
  if (skip_if(TokenType::kSub)) {
    node = std::make_unique<ast::Unary>(offset, ast::UnaryOp::kNeg, parse_unary(false));
  } else if (skip_if(TokenType::kAdd)) {
    node = std::make_unique<ast::Unary>(offset, ast::UnaryOp::kPos, parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expr(std::move(node));
  return node;
}

void Parser::note_name_load(const std::string& name) {
  if (name != "caller" && name != "varargs" && name != "kwargs") return;
  for (ast::Signature* signature : macro_stack_) {
    if (name == "caller") signature->uses_caller = true;
    if (name == "varargs") signature->uses_varargs = true;
    if (name == "kwargs") signature->uses_kwargs = true;
  }
}

ExprPtr Parser::parse_primary(bool with_namespace) {
  const Token& token = current();
  switch (token.type) {
    case TokenType::kName: {
      next();
      if (token.text == "true" || token.text == "True") {
        return std::make_unique<ast::Const>(token.offset, Value::boolean(true));
      }
      if (token.text == "false" || token.text == "False") {
        return std::make_unique<ast::Const>(token.offset, Value::boolean(false));
      }
      if (token.text == "none" || token.text == "None") {
        return std::make_unique<ast::Const>(token.offset, Value::none());
      }
      if (with_namespace && current().type == TokenType::kDot) {
        next();
        const Token& attr = expect(TokenType::kName);
        return std::make_unique<ast::NsRef>(token.offset, token.text, attr.text);
      }
      note_name_load(token.text);
      return std::make_unique<ast::Name>(token.offset, token.text);
    }
    case TokenType::kString: {
      std::string text;
      while (current().type == TokenType::kString) text += next().text;
      return std::make_unique<ast::Const>(token.offset, Value::string(std::move(text)));
    }
    case TokenType::kInteger:
      next();
      return std::make_unique<ast::Const>(token.offset, Value::integer(token.int_value));
    case TokenType::kFloat: next(); return std::make_unique<ast::Const>(token.offset, Value::number(token.float_value));
    case TokenType::kLParen: {
      next();
      ExprPtr node = parse_tuple(false, true, true);
      expect(TokenType::kRParen);
      return node;
    }
    case TokenType::kLBracket: return parse_list();
    case TokenType::kLBrace: return parse_dict();
    default: fail(fmt::format("unexpected {}", repr_string(describe_current())), token.offset);
  }
}

bool Parser::is_tuple_end() const {
  // NOTE: Jinja2 3.1 also takes "extra end rules" (`in` after a for target), but passes them to
  // test_any as one tuple, so they never match: "for a, in x" is a syntax error there, and here.
  const TokenType type = current().type;
  return type == TokenType::kVariableEnd || type == TokenType::kBlockEnd || type == TokenType::kRParen;
}

ExprPtr Parser::parse_tuple(bool simplified, bool with_condexpr, bool explicit_parens, bool with_namespace) {
  uint32_t offset = current().offset;
  std::vector<ExprPtr> args;
  bool is_tuple = false;
  while (true) {
    if (!args.empty()) expect(TokenType::kComma);
    if (is_tuple_end()) break;
    args.push_back(simplified ? parse_primary(with_namespace) : parse_expression(with_condexpr));
    if (current().type != TokenType::kComma) break;
    is_tuple = true;
    offset = current().offset;
  }
  if (!is_tuple) {
    if (!args.empty()) return std::move(args.front());
    if (!explicit_parens) {
      fail(fmt::format("Expected an expression, got {}", repr_string(describe_current())));
    }
  }
  auto node = std::make_unique<ast::Sequence>(ast::ExprKind::kTuple, offset);
  node->items = std::move(args);
  return node;
}

ExprPtr Parser::parse_list() {
  auto node = std::make_unique<ast::Sequence>(ast::ExprKind::kList, expect(TokenType::kLBracket).offset);
  while (current().type != TokenType::kRBracket) {
    if (!node->items.empty()) expect(TokenType::kComma);
    if (current().type == TokenType::kRBracket) break;
    node->items.push_back(parse_expression());
  }
  expect(TokenType::kRBracket);
  return node;
}

ExprPtr Parser::parse_dict() {
  auto node = std::make_unique<ast::DictLiteral>(expect(TokenType::kLBrace).offset);
  while (current().type != TokenType::kRBrace) {
    if (!node->items.empty()) expect(TokenType::kComma);
    if (current().type == TokenType::kRBrace) break;
    ExprPtr key = parse_expression();
    expect(TokenType::kColon);
    node->items.emplace_back(std::move(key), parse_expression());
  }
  expect(TokenType::kRBrace);
  return node;
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  while (true) {
    const TokenType type = current().type;
    if (type == TokenType::kDot || type == TokenType::kLBracket) {
      node = parse_subscript(std::move(node));
    } else if (type == TokenType::kLParen) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    const TokenType type = current().type;
    if (type == TokenType::kPipe) {
      node = parse_filter(std::move(node), false);
    } else if (is_name("is")) {
      node = parse_test(std::move(node));
    } else if (type == TokenType::kLParen) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  // Errors point at the start of the whole `a.b[c]` chain, where the reader looks first.
  const uint32_t offset = node->offset;
  const Token& token = next();
  if (token.type == TokenType::kDot) {
    const Token& attr = next();
    if (attr.type == TokenType::kName) {
      return std::make_unique<ast::Getattr>(offset, std::move(node), attr.text);
    }
    if (attr.type != TokenType::kInteger) fail("expected name or number", attr.offset);
    return std::make_unique<ast::Getitem>(offset, std::move(node),
                                          std::make_unique<ast::Const>(attr.offset, Value::integer(attr.int_value)));
  }
  std::vector<ExprPtr> args;
  while (current().type != TokenType::kRBracket) {
    if (!args.empty()) expect(TokenType::kComma);
    args.push_back(parse_subscribed());
  }
  expect(TokenType::kRBracket);
  ExprPtr index;
  if (args.size() == 1) {
    index = std::move(args.front());
  } else {
    auto tuple = std::make_unique<ast::Sequence>(ast::ExprKind::kTuple, token.offset);
    tuple->items = std::move(args);
    index = std::move(tuple);
  }
  return std::make_unique<ast::Getitem>(offset, std::move(node), std::move(index));
}

ExprPtr Parser::parse_subscribed() {
  auto slice = std::make_unique<ast::Slice>(current().offset);
  auto at_slice_end = [&] { return current().type == TokenType::kRBracket || current().type == TokenType::kComma; };
  if (!skip_if(TokenType::kColon)) {
    ExprPtr node = parse_expression();
    if (current().type != TokenType::kColon) return node;
    next();
    slice->start = std::move(node);
  }
  if (current().type != TokenType::kColon && !at_slice_end()) slice->stop = parse_expression();
  if (skip_if(TokenType::kColon) && !at_slice_end()) slice->step = parse_expression();
  return slice;
}

ast::Arguments Parser::parse_call_args() {
  const Token& token = expect(TokenType::kLParen);
  ast::Arguments args;
  bool require_comma = false;
  auto ensure = [&](bool ok) {
    if (!ok) fail("invalid syntax for function call expression", token.offset);
  };
  while (current().type != TokenType::kRParen) {
    if (require_comma) {
      expect(TokenType::kComma);
      if (current().type == TokenType::kRParen) break;  // trailing comma
    }
    if (skip_if(TokenType::kMul)) {
      ensure(!args.dyn_args && !args.dyn_kwargs);
      args.dyn_args = parse_expression();
    } else if (skip_if(TokenType::kPow)) {
      ensure(!args.dyn_kwargs);
      args.dyn_kwargs = parse_expression();
    } else if (current().type == TokenType::kName && look().type == TokenType::kAssign) {
      ensure(!args.dyn_kwargs);
      std::string key = next().text;
      next();
      args.keyword.push_back(ast::Keyword{std::move(key), parse_expression()});
    } else {
      ensure(!args.dyn_args && !args.dyn_kwargs && args.keyword.empty());
      args.positional.push_back(parse_expression());
    }
    require_comma = true;
  }
  expect(TokenType::kRParen);
  return args;
}

ExprPtr Parser::parse_call(ExprPtr node) {
  const uint32_t offset = node->offset;  // errors point at the callee, not at "("
  auto call = std::make_unique<ast::Call>(offset, std::move(node));
  call->args = parse_call_args();
  return call;
}

std::string Parser::parse_dotted_name() {
  std::string name = expect(TokenType::kName).text;
  while (skip_if(TokenType::kDot)) name += fmt::format(".{}", expect(TokenType::kName).text);
  return name;
}

void Parser::note_unknown(bool is_filter, const std::string& name, uint32_t offset) {
  if (!soft_) unknown_.push_back(UnknownName{is_filter, name, offset});
}

ExprPtr Parser::parse_filter(ExprPtr node, bool start_inline) {
  while (current().type == TokenType::kPipe || start_inline) {
    if (!start_inline) next();
    const uint32_t offset = current().offset;
    auto filter = std::make_unique<ast::Filter>(offset, std::move(node), parse_dotted_name());
    if (current().type == TokenType::kLParen) filter->args = parse_call_args();
    filter->entry = find_filter(filter->name);
    if (filter->entry == nullptr) note_unknown(true, filter->name, offset);
    node = std::move(filter);
    start_inline = false;
  }
  return node;
}

ExprPtr Parser::parse_test(ExprPtr node) {
  const uint32_t offset = next().offset;  // `is`
  const bool negated = skip_if_name("not");
  auto test = std::make_unique<ast::Test>(offset, std::move(node), parse_dotted_name());
  const TokenType type = current().type;
  if (type == TokenType::kLParen) {
    test->args = parse_call_args();
  } else if ((type == TokenType::kName || type == TokenType::kString || type == TokenType::kInteger ||
              type == TokenType::kFloat || type == TokenType::kLBracket || type == TokenType::kLBrace) &&
             !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) fail("You cannot chain multiple tests with is");
    test->args.positional.push_back(parse_postfix(parse_primary()));
  }
  test->entry = find_test(test->name);
  if (test->entry == nullptr) note_unknown(false, test->name, offset);
  if (negated) return std::make_unique<ast::Not>(offset, std::move(test));
  return test;
}

}  // namespace kiln::jinja
