// Statement half of the parser: template bodies, tags ({% for %}, {% if %}, {% set %}, macros,
// call and filter blocks), and Jinja2's wording for unknown tags and early ends.
#include <algorithm>

#include "tokenizer/jinja/parser.hpp"
#include "tokenizer/jinja/parser_impl.hpp"
#include "tokenizer/jinja/python_repr.hpp"

namespace kiln::jinja {

ast::Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_template(); }

ast::Body Parser::parse_template() {
  raise_if_error(current());
  ast::Body body = subparse(nullptr);
  if (!unknown_.empty()) {
    const UnknownName& first = unknown_.front();
    throw Exception{ErrorType::kTemplateAssertionError,
                    fmt::format("No {} named {}.", first.is_filter ? "filter" : "test", repr_string(first.name)),
                    first.offset};
  }
  return body;
}

// ---- token stream ----

const Token& Parser::next() {
  const Token& token = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  raise_if_error(tokens_[pos_]);
  return token;
}

const Token& Parser::look() const {
  const Token& token = tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_];
  raise_if_error(token);
  return token;
}

void Parser::raise_if_error(const Token& token) {
  if (token.type == TokenType::kError) {
    throw Exception{static_cast<ErrorType>(token.int_value), token.text, token.offset};
  }
}

bool Parser::is_name(std::string_view name) const {
  return current().type == TokenType::kName && current().text == name;
}

bool Parser::skip_if(TokenType type) {
  if (current().type != type) return false;
  next();
  return true;
}

bool Parser::skip_if_name(std::string_view name) {
  if (!is_name(name)) return false;
  next();
  return true;
}

std::string Parser::describe_current() const {
  if (current().type == TokenType::kName) return current().text;
  return std::string(describe_token_type(current().type));
}

const Token& Parser::expect(TokenType type) {
  if (current().type == type) return next();
  const std::string expected = repr_string(describe_token_type(type));
  if (current().type == TokenType::kEof) {
    fail(fmt::format("unexpected end of template, expected {}.", expected));
  }
  fail(fmt::format("expected token {}, got {}", expected, repr_string(describe_current())));
}

const Token& Parser::expect_name(std::string_view name) {
  if (is_name(name)) return next();
  if (current().type == TokenType::kEof) {
    fail(fmt::format("unexpected end of template, expected {}.", repr_string(name)));
  }
  fail(fmt::format("expected token {}, got {}", repr_string(name), repr_string(describe_current())));
}

void Parser::fail(std::string message, uint32_t offset) const {
  throw Exception{ErrorType::kTemplateSyntaxError, std::move(message), offset};
}

Parser::DepthGuard::DepthGuard(Parser& p) : parser_(p) {
  if (++parser_.depth_ > kMaxParseDepth) {
    --parser_.depth_;
    parser_.fail(
        fmt::format("template nests expressions or blocks deeper than kiln's limit of "
                    "{} levels",
                    kMaxParseDepth));
  }
}

Parser::FrameState Parser::enter_inner_frame(bool keeps_loop) {
  FrameState saved{soft_, loop_depth_};
  soft_ = false;
  if (!keeps_loop) loop_depth_ = 0;
  return saved;
}

// ---- errors for unknown tags and early ends ----

void Parser::fail_ut_eof(const std::string* name, const std::vector<EndTokens>& stack, uint32_t offset) const {
  std::string message =
      name == nullptr ? "Unexpected end of template." : fmt::format("Encountered unknown tag {}.", repr_string(*name));
  if (!stack.empty()) {
    std::string looking;
    for (std::string_view tag : stack.back()) {
      if (!looking.empty()) looking += " or ";
      looking += repr_string(tag);
    }
    bool expected = false;
    for (const EndTokens& tokens : stack) {
      if (name != nullptr && std::find(tokens.begin(), tokens.end(), *name) != tokens.end()) {
        expected = true;
      }
    }
    if (expected) {
      message += fmt::format(
          " You probably made a nesting mistake. Jinja is expecting this tag, "
          "but currently looking for {}.",
          looking);
    } else {
      message += fmt::format(" Jinja was looking for the following tags: {}.", looking);
    }
  }
  if (!tag_stack_.empty()) {
    message += fmt::format(" The innermost block that needs to be closed is {}.", repr_string(tag_stack_.back()));
  }
  fail(std::move(message), offset);
}

void Parser::fail_unknown_tag(const std::string& name, uint32_t offset) const {
  fail_ut_eof(&name, end_token_stack_, offset);
}

void Parser::fail_eof(const EndTokens* end_tokens) const {
  std::vector<EndTokens> stack = end_token_stack_;
  if (end_tokens != nullptr) stack.push_back(*end_tokens);
  fail_ut_eof(nullptr, stack, current().offset);
}

// ---- bodies ----

ast::Body Parser::subparse(const EndTokens* end_tokens) {
  ast::Body body;
  std::unique_ptr<ast::Output> output;
  auto flush = [&] {
    if (output) body.push_back(std::move(output));
    output.reset();
  };
  auto add_part = [&](uint32_t offset, std::string text, ast::ExprPtr expr) {
    if (!output) output = std::make_unique<ast::Output>(offset);
    output->parts.push_back(ast::OutputPart{std::move(text), std::move(expr)});
  };
  if (end_tokens != nullptr) end_token_stack_.push_back(*end_tokens);
  while (current().type != TokenType::kEof) {
    const Token& token = current();
    if (token.type == TokenType::kData) {
      add_part(token.offset, token.text, nullptr);
      next();
    } else if (token.type == TokenType::kVariableBegin) {
      next();
      add_part(token.offset, {}, parse_tuple(false, true));
      expect(TokenType::kVariableEnd);
    } else if (token.type == TokenType::kBlockBegin) {
      flush();
      next();
      if (end_tokens != nullptr && current().type == TokenType::kName &&
          std::find(end_tokens->begin(), end_tokens->end(), current().text) != end_tokens->end()) {
        end_token_stack_.pop_back();
        return body;
      }
      parse_statement(body);
      expect(TokenType::kBlockEnd);
    } else {
      fail("internal parsing error");
    }
  }
  flush();
  if (end_tokens != nullptr) end_token_stack_.pop_back();
  return body;
}

ast::Body Parser::parse_statements(const EndTokens& end_tokens, bool drop_needle) {
  skip_if(TokenType::kColon);
  expect(TokenType::kBlockEnd);
  ast::Body body = subparse(&end_tokens);
  if (current().type == TokenType::kEof) fail_eof(&end_tokens);
  if (drop_needle) next();
  return body;
}

void Parser::parse_statement(ast::Body& body) {
  DepthGuard guard(*this);
  const Token& token = current();
  if (token.type != TokenType::kName) fail("tag name expected");
  const std::string name = token.text;
  static constexpr std::string_view kUnsupported[] = {"block", "extends", "include", "import", "from", "autoescape"};
  if (std::find(std::begin(kUnsupported), std::end(kUnsupported), name) != std::end(kUnsupported)) {
    fail(
        fmt::format("tag {} is not supported by kiln's chat-template engine (templates cannot "
                    "load or extend other templates)",
                    repr_string(name)));
  }
  tag_stack_.push_back(name);
  ast::StmtPtr stmt;
  if (name == "for") {
    stmt = parse_for();
  } else if (name == "if") {
    stmt = parse_if();
  } else if (name == "set") {
    stmt = parse_set();
  } else if (name == "with") {
    stmt = parse_with();
  } else if (name == "macro") {
    stmt = parse_macro();
  } else if (name == "call") {
    stmt = parse_call_block();
  } else if (name == "filter") {
    stmt = parse_filter_block();
  } else if (name == "print") {
    stmt = parse_print();
  } else if (name == "break" || name == "continue") {
    stmt = parse_loop_control();
  } else if (name == "generation") {
    stmt = parse_generation();
  } else {
    tag_stack_.pop_back();
    fail_unknown_tag(name, token.offset);
  }
  tag_stack_.pop_back();
  body.push_back(std::move(stmt));
}

// ---- tags ----

ast::StmtPtr Parser::parse_set() {
  auto node = std::make_unique<ast::Assign>(next().offset);
  ast::ExprPtr target = parse_assign_target(true, false, true);
  if (skip_if(TokenType::kAssign)) {
    node->target = std::move(target);
    node->value = parse_tuple();
    return node;
  }
  auto block = std::make_unique<ast::AssignBlock>(node->offset);
  block->target = std::move(target);
  const FrameState saved = enter_inner_frame(true);
  block->filter = parse_filter(nullptr, false);
  block->body = parse_statements({"endset"}, true);
  leave_inner_frame(saved);
  return block;
}

ast::StmtPtr Parser::parse_for() {
  auto node = std::make_unique<ast::For>(expect_name("for").offset);
  node->target = parse_assign_target(true, false, false);
  expect_name("in");
  node->iterable = parse_tuple(false, false);
  const FrameState saved = enter_inner_frame(true);
  if (skip_if_name("if")) node->filter = parse_expression();
  node->recursive = skip_if_name("recursive");
  ++loop_depth_;
  node->body = parse_statements({"endfor", "else"}, false);
  --loop_depth_;
  leave_inner_frame(saved);
  if (next().text != "endfor") {
    const FrameState saved_else = enter_inner_frame(true);
    node->else_body = parse_statements({"endfor"}, true);
    leave_inner_frame(saved_else);
  }
  return node;
}

ast::StmtPtr Parser::parse_if() {
  auto node = std::make_unique<ast::If>(expect_name("if").offset);
  const bool saved_soft = soft_;
  soft_ = true;
  while (true) {
    ast::ExprPtr test = parse_tuple(false, false);
    ast::Body body = parse_statements({"elif", "else", "endif"}, false);
    node->branches.emplace_back(std::move(test), std::move(body));
    const Token& token = next();
    if (token.type == TokenType::kName && token.text == "elif") continue;
    if (token.type == TokenType::kName && token.text == "else") {
      node->else_body = parse_statements({"endif"}, true);
    }
    break;
  }
  soft_ = saved_soft;
  return node;
}

ast::StmtPtr Parser::parse_with() {
  auto node = std::make_unique<ast::With>(next().offset);
  while (current().type != TokenType::kBlockEnd) {
    if (!node->targets.empty()) expect(TokenType::kComma);
    node->targets.push_back(parse_assign_target(true, false, false));
    expect(TokenType::kAssign);
    node->values.push_back(parse_expression());
  }
  const FrameState saved = enter_inner_frame(true);
  node->body = parse_statements({"endwith"}, true);
  leave_inner_frame(saved);
  return node;
}

void Parser::parse_signature(ast::Signature& signature) {
  expect(TokenType::kLParen);
  while (current().type != TokenType::kRParen) {
    if (!signature.params.empty()) expect(TokenType::kComma);
    const Token& name = expect(TokenType::kName);
    if (skip_if(TokenType::kAssign)) {
      signature.defaults.push_back(parse_expression());
    } else if (!signature.defaults.empty()) {
      fail("non-default argument follows default argument");
    }
    signature.params.push_back(name.text);
  }
  expect(TokenType::kRParen);
}

ast::Body Parser::parse_macro_body(ast::Signature& signature, const EndTokens& end) {
  const FrameState saved = enter_inner_frame(false);
  macro_stack_.push_back(&signature);
  ast::Body body = parse_statements(end, true);
  macro_stack_.pop_back();
  leave_inner_frame(saved);
  return body;
}

ast::StmtPtr Parser::parse_macro() {
  auto node = std::make_unique<ast::Macro>(next().offset);
  node->name = expect(TokenType::kName).text;
  parse_signature(node->signature);
  node->body = parse_macro_body(node->signature, {"endmacro"});
  return node;
}

ast::StmtPtr Parser::parse_call_block() {
  auto node = std::make_unique<ast::CallBlock>(next().offset);
  if (current().type == TokenType::kLParen) parse_signature(node->signature);
  node->call = parse_expression();
  if (node->call->kind != ast::ExprKind::kCall) fail("expected call", node->offset);
  node->body = parse_macro_body(node->signature, {"endcall"});
  return node;
}

ast::StmtPtr Parser::parse_filter_block() {
  auto node = std::make_unique<ast::FilterBlock>(next().offset);
  const FrameState saved = enter_inner_frame(true);
  node->filter = parse_filter(nullptr, true);
  node->body = parse_statements({"endfilter"}, true);
  leave_inner_frame(saved);
  return node;
}

ast::StmtPtr Parser::parse_print() {
  auto node = std::make_unique<ast::Output>(next().offset);
  while (current().type != TokenType::kBlockEnd) {
    if (!node->parts.empty()) expect(TokenType::kComma);
    node->parts.push_back(ast::OutputPart{{}, parse_expression()});
  }
  return node;
}

ast::StmtPtr Parser::parse_loop_control() {
  const Token& token = next();
  const bool is_break = token.text == "break";
  if (loop_depth_ == 0) {
    fail(is_break ? "'break' outside loop" : "'continue' not properly in loop", token.offset);
  }
  return std::make_unique<ast::LoopControl>(is_break ? ast::StmtKind::kBreak : ast::StmtKind::kContinue, token.offset);
}

ast::StmtPtr Parser::parse_generation() {
  auto node = std::make_unique<ast::Scope>(next().offset);
  const FrameState saved = enter_inner_frame(false);
  node->body = parse_statements({"endgeneration"}, true);
  leave_inner_frame(saved);
  return node;
}

ast::ExprPtr Parser::parse_assign_target(bool with_tuple, bool name_only, bool with_namespace) {
  if (name_only) {
    const Token& token = expect(TokenType::kName);
    return std::make_unique<ast::Name>(token.offset, token.text);
  }
  ast::ExprPtr target = with_tuple ? parse_tuple(true, true, false, with_namespace) : parse_primary(with_namespace);
  auto can_assign = [](const ast::Expr& e, auto& self) -> bool {
    if (e.kind == ast::ExprKind::kName || e.kind == ast::ExprKind::kNsRef) return true;
    if (e.kind != ast::ExprKind::kTuple) return false;
    for (const auto& item : static_cast<const ast::Sequence&>(e).items) {
      if (!self(*item, self)) return false;
    }
    return true;
  };
  if (!can_assign(*target, can_assign)) {
    static constexpr std::string_view kNames[] = {
        "const", "name", "getattr", "getitem", "slice",  "call",     "filter", "test",  "neg",  "add",
        "and",   "or",   "not",     "compare", "concat", "condexpr", "list",   "tuple", "dict", "nsref"};
    std::string_view kind = kNames[static_cast<size_t>(target->kind)];
    fail(fmt::format("can't assign to {}", repr_string(kind)), target->offset);
  }
  return target;
}

}  // namespace kiln::jinja
