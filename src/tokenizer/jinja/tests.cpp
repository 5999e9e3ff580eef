// Jinja2's tests (jinja2/tests.py) with Python's semantics: `is number` is true for bools,
// `is sequence` and `is iterable` are true for undefined values, `is sameas` is identity.
#include "tokenizer/jinja/tests.hpp"

#include <unordered_map>

#include "tokenizer/jinja/args.hpp"
#include "tokenizer/jinja/filters.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

template <bool (*Pred)(const Value&)>
bool unary(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("test", args, {});
  return Pred(v);
}

bool is_defined(const Value& v) { return !v.is_undefined(); }
bool is_undefined(const Value& v) { return v.is_undefined(); }
bool is_none(const Value& v) { return v.is_none(); }
bool is_boolean(const Value& v) { return v.is_bool(); }
bool is_false(const Value& v) { return v.is_bool() && !v.as_bool(); }
bool is_true(const Value& v) { return v.is_bool() && v.as_bool(); }
bool is_integer(const Value& v) { return v.is_int(); }
bool is_float(const Value& v) { return v.is_float(); }
bool is_string(const Value& v) { return v.is_string(); }
bool is_mapping(const Value& v) { return v.is_dict(); }
bool is_number(const Value& v) { return v.is_number(); }
bool is_escaped(const Value& v) { return v.is_safe(); }
// Undefined defines __call__ (to raise), so Python's callable() is true for it.
bool is_callable(const Value& v) { return v.is_undefined() || (v.is_object() && v.as_object().is_callable()); }
bool is_sequence(const Value& v) { return v.is_undefined() || v.is_string() || v.is_sequence() || v.is_dict(); }
bool is_iterable(const Value& v) { return is_sequence(v) || (v.is_object() && v.as_object().is_iterator()); }

bool case_test(const Value& v, bool lower) {
  bool cased = false;
  const std::string s = python_str(v);
  for (size_t i = 0; i < s.size();) {
    const char32_t c = next_code_point(s, i);
    if (lower ? unicode::is_upper(c) : unicode::is_lower(c)) return false;
    if (unicode::is_cased(c)) cased = true;
  }
  return cased;
}
bool is_lower(const Value& v) { return case_test(v, true); }
bool is_upper(const Value& v) { return case_test(v, false); }

bool parity(Interpreter& interp, const Value& v, CallArgs& args, int64_t want) {
  BoundArgs a("test", args, {});
  const Value r = binary_op(interp, ast::BinaryOp::kMod, v, Value::integer(2));
  return equals(r, Value::integer(want));
}
bool t_odd(Interpreter& i, const Value& v, CallArgs& a) { return parity(i, v, a, 1); }
bool t_even(Interpreter& i, const Value& v, CallArgs& a) { return parity(i, v, a, 0); }

bool t_divisibleby(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("test_divisibleby", args, {"num"}, 1);
  return equals(binary_op(interp, ast::BinaryOp::kMod, v, a[0]), Value::integer(0));
}

bool t_sameas(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("test_sameas", args, {"other"}, 1);
  const Value& other = a[0];
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::kNone: return true;
    case Value::Kind::kBool: return v.as_bool() == other.as_bool();
    case Value::Kind::kInt:
      // CPython caches the small integers, so equal ones are the same object.
      return v.as_int() == other.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    default: return v.identity() != nullptr && v.identity() == other.identity();
  }
}

bool t_in(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("test_in", args, {"seq"}, 1);
  return contains(interp, a[0], v);
}

bool t_filter(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("test_filter", args, {});
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}

bool t_test(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("test_test", args, {});
  return v.is_string() && find_test(v.as_string()) != nullptr;
}

template <ast::CompareOp Op>
bool comparison(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("test", args, {"b"}, 1);
  return compare(interp, Op, v, a[0]);
}

const std::unordered_map<std::string_view, TestFn>& all_tests() {
  using ast::CompareOp;
  static const std::unordered_map<std::string_view, TestFn> kTests = {
      {"odd", t_odd},
      {"even", t_even},
      {"divisibleby", t_divisibleby},
      {"defined", unary<is_defined>},
      {"undefined", unary<is_undefined>},
      {"filter", t_filter},
      {"test", t_test},
      {"none", unary<is_none>},
      {"boolean", unary<is_boolean>},
      {"false", unary<is_false>},
      {"true", unary<is_true>},
      {"integer", unary<is_integer>},
      {"float", unary<is_float>},
      {"lower", unary<is_lower>},
      {"upper", unary<is_upper>},
      {"string", unary<is_string>},
      {"mapping", unary<is_mapping>},
      {"number", unary<is_number>},
      {"sequence", unary<is_sequence>},
      {"iterable", unary<is_iterable>},
      {"callable", unary<is_callable>},
      {"sameas", t_sameas},
      {"escaped", unary<is_escaped>},
      {"in", t_in},
      {"==", comparison<CompareOp::kEq>},
      {"eq", comparison<CompareOp::kEq>},
      {"equalto", comparison<CompareOp::kEq>},
      {"!=", comparison<CompareOp::kNe>},
      {"ne", comparison<CompareOp::kNe>},
      {">", comparison<CompareOp::kGt>},
      {"gt", comparison<CompareOp::kGt>},
      {"greaterthan", comparison<CompareOp::kGt>},
      {">=", comparison<CompareOp::kGtEq>},
      {"ge", comparison<CompareOp::kGtEq>},
      {"<", comparison<CompareOp::kLt>},
      {"lt", comparison<CompareOp::kLt>},
      {"lessthan", comparison<CompareOp::kLt>},
      {"<=", comparison<CompareOp::kLtEq>},
      {"le", comparison<CompareOp::kLtEq>},
  };
  return kTests;
}

}  // namespace

const TestEntry* find_test(std::string_view name) {
  static std::unordered_map<std::string_view, TestEntry> entries = [] {
    std::unordered_map<std::string_view, TestEntry> out;
    for (const auto& [n, fn] : all_tests()) out.emplace(n, TestEntry{n, fn});
    return out;
  }();
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

}  // namespace kiln::jinja
