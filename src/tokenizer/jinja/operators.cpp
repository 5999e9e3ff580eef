// Python operator semantics. Float floor division and modulo follow CPython's float_divmod;
// Markup strings escape the plain operand they are added to, as markupsafe does.
#include "tokenizer/jinja/operators.hpp"

#include <cmath>

#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/string_format.hpp"

namespace kiln::jinja {

using ast::BinaryOp;

void raise_undefined(const Value& v) {
  const UndefinedInfo& info = v.undefined_info();
  throw Exception{info.error, info.message, kNoOffset};
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool:
    case Value::Kind::kInt: return v.as_int() != 0;
    case Value::Kind::kFloat: return v.as_float() != 0.0;
    case Value::Kind::kString: return !v.as_string().empty();
    case Value::Kind::kList:
    case Value::Kind::kTuple: return !v.items().empty();
    case Value::Kind::kDict: return !v.as_dict().empty();
    case Value::Kind::kObject: return true;
  }
  return true;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      const ValueList& x = a.items();
      const ValueList& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.find(key);
        if (other == nullptr || !equals(value, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kObject: return a.object_ptr() == b.object_ptr();
    default: return false;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_undefined()) raise_undefined(a);
  if (b.is_undefined()) raise_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_int() < b.as_int();
    return a.as_float() < b.as_float();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order
  if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
    const ValueList& x = a.items();
    const ValueList& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  raise(ErrorType::kTypeError, "'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b));
}

bool contains(Interpreter& interp, const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;  // Undefined iterates as empty
    case Value::Kind::kString:
      if (!item.is_string()) {
        raise(ErrorType::kTypeError, "'in <string>' requires string as left operand, not {}", type_name(item));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      for (const Value& x : container.items()) {
        if (equals(x, item)) return true;
      }
      return false;
    case Value::Kind::kDict: return container.as_dict().find(item) != nullptr;
    case Value::Kind::kObject:
      if (container.as_object().is_iterator()) {
        while (auto x = container.as_object().next(interp)) {
          if (equals(*x, item)) return true;
        }
        return false;
      }
      [[fallthrough]];
    default: raise(ErrorType::kTypeError, "argument of type '{}' is not iterable", type_name(container));
  }
}

bool compare(Interpreter& interp, ast::CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case ast::CompareOp::kEq: return equals(a, b);
    case ast::CompareOp::kNe: return !equals(a, b);
    case ast::CompareOp::kLt: return less_than(a, b);
    case ast::CompareOp::kGt: return less_than(b, a);
    case ast::CompareOp::kLtEq: return less_than(a, b) || equals(a, b);
    case ast::CompareOp::kGtEq: return less_than(b, a) || equals(a, b);
    case ast::CompareOp::kIn: return contains(interp, b, a);
    case ast::CompareOp::kNotIn: return !contains(interp, b, a);
  }
  return false;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    raise(ErrorType::kLimitError, "integer result of {} + {} exceeds kiln's 64-bit integers", a, b);
  }
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    raise(ErrorType::kLimitError, "integer result of {} * {} exceeds kiln's 64-bit integers", a, b);
  }
  return r;
}

namespace {

std::string_view symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "//";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kPow: return "** or pow()";
  }
  return "?";
}

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
  raise(ErrorType::kTypeError, "unsupported operand type(s) for {}: '{}' and '{}'", symbol(op), type_name(a),
        type_name(b));
}

Value add_strings(const Value& a, const Value& b) {
  if (a.is_safe() == b.is_safe()) return Value::string(a.as_string() + b.as_string(), a.is_safe());
  if (a.is_safe()) return Value::string(a.as_string() + html_escape(b.as_string()), true);
  return Value::string(html_escape(a.as_string()) + b.as_string(), true);
}

Value add(Interpreter& interp, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return Value::integer(checked_add(a.as_int(), b.as_int()));
    return Value::number(a.as_float() + b.as_float());
  }
  if (a.is_string() && b.is_string()) {
    interp.check_size(a.as_string().size() + b.as_string().size());
    return add_strings(a, b);
  }
  if (a.is_string() && !a.is_safe() && !b.is_safe()) {
    raise(ErrorType::kTypeError, "can only concatenate str (not \"{}\") to str", type_name(b));
  }
  if (a.is_sequence() && a.kind() == b.kind()) {
    interp.check_items(a.items().size() + b.items().size());
    ValueList items = a.items();
    items.insert(items.end(), b.items().begin(), b.items().end());
    return a.is_list() ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (a.is_sequence()) {
    const char* name = a.is_list() ? "list" : "tuple";
    raise(ErrorType::kTypeError, "can only concatenate {} (not \"{}\") to {}", name, type_name(b), name);
  }
  unsupported(BinaryOp::kAdd, a, b);
}

Value repeat(Interpreter& interp, const Value& seq, int64_t times) {
  const size_t unit = seq.is_string() ? seq.as_string().size() : seq.items().size();
  if (times <= 0 || unit == 0) {  // empty at once, however many times (not that many turns of a loop)
    if (seq.is_string()) return Value::string("", seq.is_safe());
    return seq.is_list() ? Value::list({}) : Value::tuple({});
  }
  if (static_cast<uint64_t>(times) > interp.limits().max_output_bytes / unit) {
    interp.check_size(interp.limits().max_output_bytes + 1);
  }
  const auto n = static_cast<size_t>(times);
  if (!seq.is_string()) interp.check_items(unit * n);
  if (seq.is_string()) {
    std::string out;
    out.reserve(unit * n);
    for (size_t i = 0; i < n; ++i) out += seq.as_string();
    return Value::string(std::move(out), seq.is_safe());
  }
  ValueList items;
  items.reserve(unit * n);
  for (size_t i = 0; i < n; ++i) items.insert(items.end(), seq.items().begin(), seq.items().end());
  return seq.is_list() ? Value::list(std::move(items)) : Value::tuple(std::move(items));
}

Value multiply(Interpreter& interp, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return Value::integer(checked_mul(a.as_int(), b.as_int()));
    return Value::number(a.as_float() * b.as_float());
  }
  const bool a_seq = a.is_string() || a.is_sequence();
  const bool b_seq = b.is_string() || b.is_sequence();
  if (a_seq && b.is_integral()) return repeat(interp, a, b.as_int());
  if (b_seq && a.is_integral()) return repeat(interp, b, a.as_int());
  if (a_seq || b_seq) {
    raise(ErrorType::kTypeError, "can't multiply sequence by non-int of type '{}'", type_name(a_seq ? b : a));
  }
  unsupported(BinaryOp::kMul, a, b);
}

Value floor_divide(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) {
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    if (y == 0) raise(ErrorType::kZeroDivisionError, "integer division or modulo by zero");
    if (x == INT64_MIN && y == -1) {
      raise(ErrorType::kLimitError, "integer result of {} // -1 exceeds kiln's 64-bit integers", x);
    }
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0))) --q;
    return Value::integer(q);
  }
  const double vx = a.as_float();
  const double wx = b.as_float();
  if (wx == 0.0) raise(ErrorType::kZeroDivisionError, "float floor division by zero");
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0 && ((wx < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return Value::number(std::copysign(0.0, vx / wx));
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return Value::number(floordiv);
}

Value modulo(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) {
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    if (y == 0) raise(ErrorType::kZeroDivisionError, "integer modulo by zero");
    if (y == -1) return Value::integer(0);
    int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Value::integer(r);
  }
  const double wx = b.as_float();
  if (wx == 0.0) raise(ErrorType::kZeroDivisionError, "float modulo");
  double mod = std::fmod(a.as_float(), wx);
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) mod += wx;
  } else {
    mod = std::copysign(0.0, wx);
  }
  return Value::number(mod);
}

Value power(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral() && b.as_int() >= 0) {
    int64_t base = a.as_int();
    int64_t exp = b.as_int();
    int64_t result = 1;
    while (exp > 0) {
      if (exp & 1) result = checked_mul(result, base);
      exp >>= 1;
      if (exp > 0) base = checked_mul(base, base);
    }
    return Value::integer(result);
  }
  const double x = a.as_float();
  const double y = b.as_float();
  if (x == 0.0 && y < 0) raise(ErrorType::kZeroDivisionError, "0.0 cannot be raised to a negative power");
  if (x < 0 && y != std::floor(y)) {
    raise(ErrorType::kLimitError, "{} ** {} is a complex number, which kiln templates do not support", x, y);
  }
  const double r = std::pow(x, y);
  if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) {
    raise(ErrorType::kOverflowError, "(34, 'Numerical result out of range')");
  }
  return Value::number(r);
}

}  // namespace

Value binary_op(Interpreter& interp, BinaryOp op, const Value& a, const Value& b) {
  if (a.is_undefined()) raise_undefined(a);
  // str.__mod__ formats before Python would try Undefined.__rmod__, so '%s' % missing is ''.
  if (op == BinaryOp::kMod && a.is_string()) {
    return Value::string(percent_format(interp, a.as_string(), b), a.is_safe());
  }
  if (b.is_undefined()) raise_undefined(b);
  switch (op) {
    case BinaryOp::kAdd: return add(interp, a, b);
    case BinaryOp::kMul: return multiply(interp, a, b);
    default: break;
  }
  if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
  switch (op) {
    case BinaryOp::kSub:
      if (a.is_integral() && b.is_integral()) {
        int64_t r;
        if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) {
          raise(ErrorType::kLimitError, "integer result of {} - {} exceeds kiln's 64-bit integers", a.as_int(),
                b.as_int());
        }
        return Value::integer(r);
      }
      return Value::number(a.as_float() - b.as_float());
    case BinaryOp::kDiv:
      if (b.as_float() == 0.0) {
        raise(ErrorType::kZeroDivisionError, "{}",
              a.is_integral() && b.is_integral() ? "division by zero" : "float division by zero");
      }
      return Value::number(a.as_float() / b.as_float());
    case BinaryOp::kFloorDiv: return floor_divide(a, b);
    case BinaryOp::kMod: return modulo(a, b);
    case BinaryOp::kPow: return power(a, b);
    default: unsupported(op, a, b);
  }
}

Value unary_op(ast::UnaryOp op, const Value& v) {
  if (v.is_undefined()) raise_undefined(v);
  const char* symbol = op == ast::UnaryOp::kNeg ? "-" : "+";
  if (!v.is_number()) {
    raise(ErrorType::kTypeError, "bad operand type for unary {}: '{}'", symbol, type_name(v));
  }
  if (v.is_float()) return Value::number(op == ast::UnaryOp::kNeg ? -v.as_float() : v.as_float());
  if (op == ast::UnaryOp::kPos) return Value::integer(v.as_int());
  if (v.as_int() == INT64_MIN) {
    raise(ErrorType::kLimitError, "integer result of -({}) exceeds kiln's 64-bit integers", v.as_int());
  }
  return Value::integer(-v.as_int());
}

}  // namespace kiln::jinja
