// Method lookup for built-in types, and the list, tuple and dict methods. Which methods exist
// and which the immutable sandbox refuses follows CPython and jinja2.sandbox._mutable_spec.
#include "tokenizer/jinja/methods.hpp"

#include <algorithm>

#include "tokenizer/jinja/args.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/objects.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"

namespace kiln::jinja {
namespace {

Value seq_index(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("index", args, {"value", "start", "stop"}, 1);
  const ValueList& items = self.items();
  const auto n = static_cast<int64_t>(items.size());
  auto norm = [&](int64_t x) { return x < 0 ? std::max<int64_t>(0, x + n) : std::min(x, n); };
  for (int64_t i = norm(a.get_int(1, 0)); i < norm(a.get_int(2, n)); ++i) {
    if (equals(items[static_cast<size_t>(i)], a[0])) return Value::integer(i);
  }
  if (self.is_tuple()) raise(ErrorType::kValueError, "tuple.index(x): x not in tuple");
  raise(ErrorType::kValueError, "{} is not in list", python_repr(a[0]));
}

Value seq_count(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("count", args, {"value"}, 1);
  const ValueList& items = self.items();
  return Value::integer(std::count_if(items.begin(), items.end(), [&](const Value& x) { return equals(x, a[0]); }));
}

Value seq_copy(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("copy", args, {});
  return Value::list(self.items());
}

Value dict_get(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("get", args, {"key", "default"}, 1);
  if (const Value* v = self.as_dict().find(a[0])) return *v;
  return a.get(1, Value::none());
}

Value dict_keys(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("keys", args, {});
  ValueList out;
  for (const auto& entry : self.as_dict().entries()) out.push_back(entry.first);
  return Value::list(std::move(out));
}

Value dict_values(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("values", args, {});
  ValueList out;
  for (const auto& entry : self.as_dict().entries()) out.push_back(entry.second);
  return Value::list(std::move(out));
}

Value dict_items(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("items", args, {});
  ValueList out;
  for (const auto& [key, value] : self.as_dict().entries()) out.push_back(Value::tuple({key, value}));
  return Value::list(std::move(out));
}

Value dict_copy(Interpreter&, const Value& self, CallArgs& args) {
  BoundArgs a("copy", args, {});
  return self;
}

struct MethodEntry {
  std::string_view name;
  MethodFn fn;
};

constexpr MethodEntry kListMethods[] = {{"index", seq_index}, {"count", seq_count}, {"copy", seq_copy}};
constexpr MethodEntry kTupleMethods[] = {{"index", seq_index}, {"count", seq_count}};
constexpr MethodEntry kDictMethods[] = {
    {"get", dict_get}, {"keys", dict_keys}, {"values", dict_values}, {"items", dict_items}, {"copy", dict_copy}};

// Methods that would modify the object: they exist, but the sandbox refuses them.
constexpr std::string_view kListMutators[] = {"append", "clear",  "extend",  "insert",
                                              "pop",    "remove", "reverse", "sort"};
constexpr std::string_view kDictMutators[] = {"clear", "pop", "popitem", "setdefault", "update"};

template <size_t N>
MethodFn lookup(const MethodEntry (&table)[N], std::string_view name) {
  for (const MethodEntry& e : table) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Value bind(const Value& self, std::string_view name, MethodFn fn) {
  const std::string repr = fmt::format("<built-in method {} of {} object>", name, type_name(self));
  return Value::object(std::make_shared<NativeFunction>(
      "builtin_function_or_method", repr,
      [self, fn](Interpreter& interp, CallArgs& args) { return fn(interp, self, args); }));
}

Value refused(const Value& self, std::string_view name) {
  return Value::undefined(fmt::format("access to attribute '{}' of '{}' object is unsafe.", name, type_name(self)),
                          ErrorType::kSecurityError);
}

}  // namespace

std::optional<Value> find_method(const Value& self, std::string_view name) {
  if (name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__") {
    // Python's dunder attributes exist on every object; the sandbox refuses them all.
    return refused(self, name);
  }
  MethodFn fn = nullptr;
  switch (self.kind()) {
    case Value::Kind::kString: fn = find_string_method(name); break;
    case Value::Kind::kList:
      if (listed(kListMutators, name)) return refused(self, name);
      fn = lookup(kListMethods, name);
      break;
    case Value::Kind::kTuple: fn = lookup(kTupleMethods, name); break;
    case Value::Kind::kDict:
      if (listed(kDictMutators, name)) return refused(self, name);
      fn = lookup(kDictMethods, name);
      break;
    default: break;
  }
  if (fn == nullptr) return std::nullopt;
  return bind(self, name, fn);
}

}  // namespace kiln::jinja
