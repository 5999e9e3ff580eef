// The parser's state, shared by its two halves: parser_statements.cpp (tags and bodies) and
// parser_expressions.cpp (the expression grammar). Private to the engine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/jinja/ast.hpp"
#include "tokenizer/jinja/error.hpp"
#include "tokenizer/jinja/lexer.hpp"

namespace kiln::jinja {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  ast::Body parse_template();

 private:
  using EndTokens = std::vector<std::string_view>;  // tag names that end a body

  // Token stream.
  const Token& current() const { return tokens_[pos_]; }
  const Token& look() const;  // the token after current()
  const Token& next();        // returns the token it moves past
  static void raise_if_error(const Token& token);
  bool is_name(std::string_view name) const;
  bool skip_if(TokenType type);
  bool skip_if_name(std::string_view name);
  const Token& expect(TokenType type);
  const Token& expect_name(std::string_view name);
  [[noreturn]] void fail(std::string message, uint32_t offset) const;
  [[noreturn]] void fail(std::string message) const { fail(std::move(message), current().offset); }
  std::string describe_current() const;

  // Statements (parser_statements.cpp).
  ast::Body subparse(const EndTokens* end_tokens);
  ast::Body parse_statements(const EndTokens& end_tokens, bool drop_needle);
  void parse_statement(ast::Body& body);
  ast::StmtPtr parse_set();
  ast::StmtPtr parse_for();
  ast::StmtPtr parse_if();
  ast::StmtPtr parse_with();
  ast::StmtPtr parse_macro();
  ast::StmtPtr parse_call_block();
  ast::StmtPtr parse_filter_block();
  ast::StmtPtr parse_print();
  ast::StmtPtr parse_loop_control();
  ast::StmtPtr parse_generation();
  void parse_signature(ast::Signature& signature);
  ast::Body parse_macro_body(ast::Signature& signature, const EndTokens& end);
  ast::ExprPtr parse_assign_target(bool with_tuple, bool name_only, bool with_namespace);
  [[noreturn]] void fail_unknown_tag(const std::string& name, uint32_t offset) const;
  [[noreturn]] void fail_eof(const EndTokens* end_tokens) const;
  [[noreturn]] void fail_ut_eof(const std::string* name, const std::vector<EndTokens>& stack, uint32_t offset) const;

  // Expressions (parser_expressions.cpp).
  ast::ExprPtr parse_expression(bool with_condexpr = true);
  ast::ExprPtr parse_condexpr();
  ast::ExprPtr parse_or();
  ast::ExprPtr parse_and();
  ast::ExprPtr parse_not();
  ast::ExprPtr parse_compare();
  ast::ExprPtr parse_math1();
  ast::ExprPtr parse_concat();
  ast::ExprPtr parse_math2();
  ast::ExprPtr parse_pow();
  ast::ExprPtr parse_unary(bool with_filter = true);
  ast::ExprPtr parse_primary(bool with_namespace = false);
  ast::ExprPtr parse_tuple(bool simplified = false, bool with_condexpr = true, bool explicit_parens = false,
                           bool with_namespace = false);
  bool is_tuple_end() const;
  ast::ExprPtr parse_list();
  ast::ExprPtr parse_dict();
  ast::ExprPtr parse_postfix(ast::ExprPtr node);
  ast::ExprPtr parse_filter_expr(ast::ExprPtr node);
  ast::ExprPtr parse_subscript(ast::ExprPtr node);
  ast::ExprPtr parse_subscribed();
  ast::Arguments parse_call_args();
  ast::ExprPtr parse_call(ast::ExprPtr node);
  ast::ExprPtr parse_filter(ast::ExprPtr node, bool start_inline);
  ast::ExprPtr parse_test(ast::ExprPtr node);
  std::string parse_dotted_name();
  void note_name_load(const std::string& name);
  void note_unknown(bool is_filter, const std::string& name, uint32_t offset);

  // Bounds recursion: every nested expression or block passes through one of these.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p);
    ~DepthGuard() { --parser_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& parser_;
  };

  // Saves and restores the per-frame flags when a body opens a new Jinja frame.
  struct FrameState {
    bool soft;
    int loop_depth;
  };
  FrameState enter_inner_frame(bool keeps_loop);
  void leave_inner_frame(FrameState saved) {
    soft_ = saved.soft;
    loop_depth_ = saved.loop_depth;
  }

  struct UnknownName {
    bool is_filter;
    std::string name;
    uint32_t offset;
  };

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::string> tag_stack_;
  std::vector<EndTokens> end_token_stack_;
  // Signatures of the macro and call-block bodies being parsed, innermost last: a read of
  // `caller`, `varargs` or `kwargs` anywhere inside marks all of them, as Jinja2 does.
  std::vector<ast::Signature*> macro_stack_;
  // Inside if tests/bodies and inline if-expressions an unknown filter or test is an error only
  // when it runs (Jinja2's "soft" frames); elsewhere it fails the whole template.
  bool soft_ = false;
  std::vector<UnknownName> unknown_;
  int loop_depth_ = 0;
};

}  // namespace kiln::jinja
