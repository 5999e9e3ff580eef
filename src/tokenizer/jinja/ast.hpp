// The syntax tree the parser builds and the interpreter walks: expressions and statements of
// Jinja2's node set (jinja2/nodes.py) that chat templates use. Every node keeps the byte offset
// of its first token, so errors can name a line and column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

struct FilterEntry;
struct TestEntry;

namespace ast {

enum class ExprKind : uint8_t {
  kConst,
  kName,
  kGetattr,
  kGetitem,
  kSlice,
  kCall,
  kFilter,
  kTest,
  kUnary,
  kBinary,
  kAnd,
  kOr,
  kNot,
  kCompare,
  kConcat,
  kCondExpr,
  kList,
  kTuple,
  kDict,
  kNsRef,
};

struct Expr {
  Expr(ExprKind k, uint32_t o) : kind(k), offset(o) {}
  virtual ~Expr() = default;
  ExprKind kind;
  uint32_t offset;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Const : Expr {
  Const(uint32_t o, Value v) : Expr(ExprKind::kConst, o), value(std::move(v)) {}
  Value value;
};

struct Name : Expr {
  Name(uint32_t o, std::string n) : Expr(ExprKind::kName, o), name(std::move(n)) {}
  std::string name;
};

struct Getattr : Expr {
  Getattr(uint32_t o, ExprPtr obj, std::string attr)
      : Expr(ExprKind::kGetattr, o), object(std::move(obj)), attribute(std::move(attr)) {}
  ExprPtr object;
  std::string attribute;
};

struct Getitem : Expr {
  Getitem(uint32_t o, ExprPtr obj, ExprPtr idx)
      : Expr(ExprKind::kGetitem, o), object(std::move(obj)), index(std::move(idx)) {}
  ExprPtr object;
  ExprPtr index;  // may be a Slice
};

struct Slice : Expr {
  explicit Slice(uint32_t o) : Expr(ExprKind::kSlice, o) {}
  ExprPtr start, stop, step;  // each may be null
};

struct Keyword {
  std::string name;
  ExprPtr value;
};

struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<Keyword> keyword;
  ExprPtr dyn_args;    // *args
  ExprPtr dyn_kwargs;  // **kwargs
};

struct Call : Expr {
  Call(uint32_t o, ExprPtr c) : Expr(ExprKind::kCall, o), callee(std::move(c)) {}
  ExprPtr callee;
  Arguments args;
};

// `operand|name(args)`. The operand is null inside {% filter %} and {% set x | f %} blocks,
// where the rendered body is the input. `entry` is null for a filter unknown at parse time
// inside a conditional, which Jinja2 reports only if it runs.
struct Filter : Expr {
  Filter(uint32_t o, ExprPtr op, std::string n)
      : Expr(ExprKind::kFilter, o), operand(std::move(op)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  Arguments args;
  const FilterEntry* entry = nullptr;
};

struct Test : Expr {
  Test(uint32_t o, ExprPtr op, std::string n) : Expr(ExprKind::kTest, o), operand(std::move(op)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  Arguments args;
  const TestEntry* entry = nullptr;
};

enum class UnaryOp : uint8_t { kNeg, kPos };
struct Unary : Expr {
  Unary(uint32_t o, UnaryOp p, ExprPtr x) : Expr(ExprKind::kUnary, o), op(p), operand(std::move(x)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow };
struct Binary : Expr {
  Binary(uint32_t o, BinaryOp p, ExprPtr l, ExprPtr r)
      : Expr(ExprKind::kBinary, o), op(p), left(std::move(l)), right(std::move(r)) {}
  BinaryOp op;
  ExprPtr left, right;
};

// `and` / `or` (kind kAnd or kOr), short-circuiting and returning an operand as Python does.
struct Logical : Expr {
  Logical(ExprKind k, uint32_t o, ExprPtr l, ExprPtr r) : Expr(k, o), left(std::move(l)), right(std::move(r)) {}
  ExprPtr left, right;
};

struct Not : Expr {
  Not(uint32_t o, ExprPtr x) : Expr(ExprKind::kNot, o), operand(std::move(x)) {}
  ExprPtr operand;
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLtEq, kGt, kGtEq, kIn, kNotIn };
struct Compare : Expr {
  Compare(uint32_t o, ExprPtr f) : Expr(ExprKind::kCompare, o), first(std::move(f)) {}
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;  // a < b < c chains
};

struct Concat : Expr {
  explicit Concat(uint32_t o) : Expr(ExprKind::kConcat, o) {}
  std::vector<ExprPtr> parts;
};

struct CondExpr : Expr {
  CondExpr(uint32_t o, ExprPtr t, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::kCondExpr, o), test(std::move(t)), then(std::move(a)), otherwise(std::move(b)) {}
  ExprPtr test, then, otherwise;  // otherwise may be null
};

// List and tuple literals (kind kList or kTuple); a tuple is also an unpacking target.
struct Sequence : Expr {
  Sequence(ExprKind k, uint32_t o) : Expr(k, o) {}
  std::vector<ExprPtr> items;
};

struct DictLiteral : Expr {
  explicit DictLiteral(uint32_t o) : Expr(ExprKind::kDict, o) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

// `ns.attr` as an assignment target.
struct NsRef : Expr {
  NsRef(uint32_t o, std::string n, std::string a)
      : Expr(ExprKind::kNsRef, o), name(std::move(n)), attribute(std::move(a)) {}
  std::string name, attribute;
};

enum class StmtKind : uint8_t {
  kOutput,
  kIf,
  kFor,
  kAssign,
  kAssignBlock,
  kMacro,
  kCallBlock,
  kFilterBlock,
  kWith,
  kBreak,
  kContinue,
  kScope,
};

struct Stmt {
  Stmt(StmtKind k, uint32_t o) : kind(k), offset(o) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  uint32_t offset;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// Template text and {{ expressions }}, in order; a part is text when `expr` is null.
struct OutputPart {
  std::string text;
  ExprPtr expr;
};
struct Output : Stmt {
  explicit Output(uint32_t o) : Stmt(StmtKind::kOutput, o) {}
  std::vector<OutputPart> parts;
};

struct If : Stmt {
  explicit If(uint32_t o) : Stmt(StmtKind::kIf, o) {}
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, elif...
  Body else_body;
};

struct For : Stmt {
  explicit For(uint32_t o) : Stmt(StmtKind::kFor, o) {}
  ExprPtr target;
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`; may be null
  bool recursive = false;
  Body body;
  Body else_body;
};

struct Assign : Stmt {
  explicit Assign(uint32_t o) : Stmt(StmtKind::kAssign, o) {}
  ExprPtr target;  // Name, Sequence of names, or NsRef
  ExprPtr value;
};

struct AssignBlock : Stmt {
  explicit AssignBlock(uint32_t o) : Stmt(StmtKind::kAssignBlock, o) {}
  ExprPtr target;
  ExprPtr filter;  // a Filter chain whose innermost operand is null; may be null
  Body body;
};

// Parameters of a macro or of a call block's caller. Defaults align with the last parameters.
struct Signature {
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;
  bool uses_caller = false;  // the body reads `caller`, `varargs` or `kwargs`
  bool uses_varargs = false;
  bool uses_kwargs = false;
};

struct Macro : Stmt {
  explicit Macro(uint32_t o) : Stmt(StmtKind::kMacro, o) {}
  std::string name;
  Signature signature;
  Body body;
};

struct CallBlock : Stmt {
  explicit CallBlock(uint32_t o) : Stmt(StmtKind::kCallBlock, o) {}
  ExprPtr call;  // a Call expression; the body becomes its `caller`
  Signature signature;
  Body body;
};

struct FilterBlock : Stmt {
  explicit FilterBlock(uint32_t o) : Stmt(StmtKind::kFilterBlock, o) {}
  ExprPtr filter;
  Body body;
};

struct With : Stmt {
  explicit With(uint32_t o) : Stmt(StmtKind::kWith, o) {}
  std::vector<ExprPtr> targets;
  std::vector<ExprPtr> values;
  Body body;
};

// break / continue: kind kBreak or kContinue.
struct LoopControl : Stmt {
  LoopControl(StmtKind k, uint32_t o) : Stmt(k, o) {}
};

// A body rendered in its own scope: transformers' {% generation %} block.
struct Scope : Stmt {
  explicit Scope(uint32_t o) : Stmt(StmtKind::kScope, o) {}
  Body body;
};

}  // namespace ast
}  // namespace kiln::jinja
