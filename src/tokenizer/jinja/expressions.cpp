// Expression evaluation. The innermost node an error passes through stamps its offset on it,
// so a runtime error names the line and column of the expression that failed.
#include "tokenizer/jinja/filters.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/tests.hpp"

namespace kiln::jinja {

Value Interpreter::eval(const ast::Expr& expr, Scope* scope) {
  count_step();
  check_stack();
  try {
    return eval_inner(expr, scope);
  } catch (Exception& e) {
    if (e.offset == kNoOffset) e.offset = expr.offset;
    throw;
  }
}

Value Interpreter::eval_inner(const ast::Expr& expr, Scope* scope) {
  using ast::ExprKind;
  switch (expr.kind) {
    case ExprKind::kConst: return static_cast<const ast::Const&>(expr).value;
    case ExprKind::kName: return eval_name(static_cast<const ast::Name&>(expr), scope);
    case ExprKind::kGetattr: {
      const auto& node = static_cast<const ast::Getattr&>(expr);
      return getattr(eval(*node.object, scope), node.attribute);
    }
    case ExprKind::kGetitem: return eval_getitem(static_cast<const ast::Getitem&>(expr), scope);
    case ExprKind::kSlice:
      // A slice inside a tuple subscript (x[1:2, 3]): Python's lookup fails and Jinja2
      // turns the failure into an undefined value.
      return Value::undefined("slices inside a tuple subscript are not supported");
    case ExprKind::kCall: return eval_call(static_cast<const ast::Call&>(expr), scope);
    case ExprKind::kFilter: return eval_filter(static_cast<const ast::Filter&>(expr), scope);
    case ExprKind::kTest: return eval_test(static_cast<const ast::Test&>(expr), scope);
    case ExprKind::kUnary: {
      const auto& node = static_cast<const ast::Unary&>(expr);
      return unary_op(node.op, eval(*node.operand, scope));
    }
    case ExprKind::kBinary: {
      const auto& node = static_cast<const ast::Binary&>(expr);
      const Value left = eval(*node.left, scope);
      return binary_op(*this, node.op, left, eval(*node.right, scope));
    }
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      const auto& node = static_cast<const ast::Logical&>(expr);
      Value left = eval(*node.left, scope);
      if (truthy(left) == (expr.kind == ExprKind::kOr)) return left;
      return eval(*node.right, scope);
    }
    case ExprKind::kNot: return Value::boolean(!truthy(eval(*static_cast<const ast::Not&>(expr).operand, scope)));
    case ExprKind::kCompare: return eval_compare(static_cast<const ast::Compare&>(expr), scope);
    case ExprKind::kConcat: return eval_concat(static_cast<const ast::Concat&>(expr), scope);
    case ExprKind::kCondExpr: return eval_cond(static_cast<const ast::CondExpr&>(expr), scope);
    case ExprKind::kList:
    case ExprKind::kTuple: {
      const auto& node = static_cast<const ast::Sequence&>(expr);
      ValueList items;
      items.reserve(node.items.size());
      for (const auto& item : node.items) items.push_back(eval(*item, scope));
      return expr.kind == ExprKind::kList ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case ExprKind::kDict: return eval_dict(static_cast<const ast::DictLiteral&>(expr), scope);
    case ExprKind::kNsRef: break;
  }
  raise(ErrorType::kTemplateSyntaxError, "a namespace reference can only be assigned to");
}

Value Interpreter::eval_name(const ast::Name& node, Scope* scope) {
  if (Value* found = scope->find(node.name)) return *found;
  return Value::undefined_name(node.name);
}

CallArgs Interpreter::eval_args(const ast::Arguments& args, Scope* scope) {
  CallArgs out;
  out.positional.reserve(args.positional.size());
  for (const auto& arg : args.positional) out.positional.push_back(eval(*arg, scope));
  for (const auto& kw : args.keyword) out.keyword.emplace_back(kw.name, eval(*kw.value, scope));
  if (args.dyn_args != nullptr) {
    for (Value& v : iterate(eval(*args.dyn_args, scope))) out.positional.push_back(std::move(v));
  }
  if (args.dyn_kwargs != nullptr) {
    const Value mapping = eval(*args.dyn_kwargs, scope);
    if (!mapping.is_dict()) {
      raise(ErrorType::kTypeError, "argument after ** must be a mapping, not {}", type_name(mapping));
    }
    for (const auto& [key, value] : mapping.as_dict().entries()) {
      if (!key.is_string()) raise(ErrorType::kTypeError, "keywords must be strings");
      out.keyword.emplace_back(key.as_string(), value);
    }
  }
  return out;
}

Value Interpreter::eval_call(const ast::Call& node, Scope* scope) {
  const Value callee = eval(*node.callee, scope);
  return call(callee, eval_args(node.args, scope));
}

Value Interpreter::eval_filter(const ast::Filter& node, Scope* scope) {
  Value input;
  if (node.operand != nullptr) {
    input = eval(*node.operand, scope);
  } else if (block_input_ != nullptr) {
    input = *block_input_;
  }
  CallArgs args = eval_args(node.args, scope);
  if (node.entry == nullptr) {
    raise(ErrorType::kTemplateRuntimeError, "No filter named {} found.", repr_string(node.name));
  }
  return node.entry->fn(*this, input, args);
}

Value Interpreter::eval_filter_chain(const ast::Expr& filter, Scope* scope, const Value& input) {
  struct Restore {
    const Value*& slot;
    const Value* saved;
    ~Restore() { slot = saved; }
  } restore{block_input_, block_input_};
  block_input_ = &input;
  return eval(filter, scope);
}

Value Interpreter::eval_test(const ast::Test& node, Scope* scope) {
  const Value input = eval(*node.operand, scope);
  CallArgs args = eval_args(node.args, scope);
  if (node.entry == nullptr) {
    raise(ErrorType::kTemplateRuntimeError, "No test named {} found.", repr_string(node.name));
  }
  return Value::boolean(node.entry->fn(*this, input, args));
}

Value Interpreter::eval_compare(const ast::Compare& node, Scope* scope) {
  Value left = eval(*node.first, scope);
  for (const auto& [op, operand] : node.rest) {
    Value right = eval(*operand, scope);
    if (!compare(*this, op, left, right)) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value Interpreter::eval_concat(const ast::Concat& node, Scope* scope) {
  std::string out;
  for (const auto& part : node.parts) {
    const Value v = eval(*part, scope);
    append_str(out, v);
    check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value Interpreter::eval_cond(const ast::CondExpr& node, Scope* scope) {
  if (truthy(eval(*node.test, scope))) return eval(*node.then, scope);
  if (node.otherwise != nullptr) return eval(*node.otherwise, scope);
  return Value::undefined(
      fmt::format("the inline if-expression on line {} evaluated to false and "
                  "no else section was defined.",
                  line_of(node.offset)));
}

Value Interpreter::eval_dict(const ast::DictLiteral& node, Scope* scope) {
  Dict dict;
  for (const auto& [key, value] : node.items) {
    Value k = eval(*key, scope);
    dict.set(std::move(k), eval(*value, scope));
  }
  return Value::dict(std::move(dict));
}

}  // namespace kiln::jinja
