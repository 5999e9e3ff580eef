// Python's operators over template values: truthiness, ==, <, `in`, + - * / // % ** and unary
// minus, with CPython's results and TypeError texts ("can only concatenate str (not "int") to
// str"). An undefined operand raises its UndefinedError, as Jinja2's Undefined does.
#pragma once

#include "tokenizer/jinja/ast.hpp"
#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
bool less_than(const Value& a, const Value& b);  // a < b, or a TypeError
bool compare(Interpreter& interp, ast::CompareOp op, const Value& a, const Value& b);
bool contains(Interpreter& interp, const Value& container, const Value& item);
Value binary_op(Interpreter& interp, ast::BinaryOp op, const Value& a, const Value& b);
Value unary_op(ast::UnaryOp op, const Value& v);

// Raises the error an undefined value carries (UndefinedError, or SecurityError).
[[noreturn]] void raise_undefined(const Value& v);

// Checked 64-bit integer arithmetic: Python integers are unbounded, kiln's are not, so an
// overflow is a LimitError rather than a wrong number.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);

}  // namespace kiln::jinja
