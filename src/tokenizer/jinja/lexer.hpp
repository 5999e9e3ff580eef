// Splits a template into tokens exactly as Jinja2's lexer does with trim_blocks=True and
// lstrip_blocks=True: data between tags (after whitespace control), and the tokens inside
// {{ ... }} and {% ... %}. Comments vanish; {% raw %} bodies become data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jinja {

enum class TokenType : uint8_t {
  kData,
  kVariableBegin,
  kVariableEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInteger,
  kFloat,
  kAdd,        // +
  kSub,        // -
  kMul,        // *
  kDiv,        // /
  kFloorDiv,   // //
  kPow,        // **
  kMod,        // %
  kTilde,      // ~
  kLBracket,   // [
  kRBracket,   // ]
  kLParen,     // (
  kRParen,     // )
  kLBrace,     // {
  kRBrace,     // }
  kEq,         // ==
  kNe,         // !=
  kGt,         // >
  kGtEq,       // >=
  kLt,         // <
  kLtEq,       // <=
  kAssign,     // =
  kDot,        // .
  kColon,      // :
  kPipe,       // |
  kComma,      // ,
  kSemicolon,  // ;
  kError,      // a lexical error, raised when the parser reaches it (text holds the message)
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  uint32_t offset = 0;  // byte offset in the normalized source
  std::string text;     // data, name, or the decoded string literal
  int64_t int_value = 0;
  double float_value = 0;
};

// How Jinja2 describes a token type in syntax errors ("end of print statement", "+").
std::string_view describe_token_type(TokenType type);

// Jinja2's preprocessing: \r\n and \r become \n and one trailing newline is dropped.
std::string normalize_newlines(std::string_view source);

// Tokenizes a normalized source. The list always ends with kEof. A lexical error ends it with a
// kError token: Jinja2 lexes lazily, so a syntax error the parser meets before that point is
// the one reported, and the parser raises the lexical error only when it gets there.
std::vector<Token> tokenize(std::string_view source);

}  // namespace kiln::jinja
