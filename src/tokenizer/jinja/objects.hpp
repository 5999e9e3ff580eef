// The non-data objects a template can hold: namespaces, built-in functions and bound methods,
// lazy iterators (what Jinja2's select/map/... filters return), macros and loop contexts.
// Each reports the type name and repr Jinja2 (3.1, under transformers) would show.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tokenizer/jinja/ast.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

// `namespace(...)`: the one mutable object, changed by {% set ns.attr = value %}.
class Namespace : public Object {
 public:
  std::string_view type_name() const override { return "Namespace"; }
  std::string object_type_repr() const override { return "jinja2.utils.Namespace object"; }
  std::string repr() const override;
  std::optional<Value> attribute(Interpreter& interp, std::string_view name) override;

  void set(std::string name, Value value);
  void clear() { attrs_ = Dict(); }

 private:
  Dict attrs_;
  mutable bool in_repr_ = false;  // a namespace holding itself prints as {...}, like Python
};

// A built-in function or a bound method (`"abc".upper`).
class NativeFunction : public Object {
 public:
  using Fn = std::function<Value(Interpreter&, CallArgs&)>;
  NativeFunction(std::string type, std::string repr, Fn fn)
      : type_(std::move(type)), repr_(std::move(repr)), fn_(std::move(fn)) {}

  std::string_view type_name() const override { return type_; }
  std::string repr() const override { return repr_; }
  bool is_callable() const override { return true; }
  Value call(Interpreter& interp, CallArgs args) override { return fn_(interp, args); }

 private:
  std::string type_;  // "builtin_function_or_method", "function", "method"
  std::string repr_;
  Fn fn_;
};

// A single-pass lazy iterator: Python generators and reversed() iterators. Items are produced
// on demand, so errors surface only for the items a template actually consumes, as in Python.
class LazyIterator : public Object {
 public:
  using NextFn = std::function<std::optional<Value>(Interpreter&)>;
  LazyIterator(std::string type, std::string repr, NextFn next)
      : type_(std::move(type)), repr_(std::move(repr)), next_(std::move(next)) {}

  std::string_view type_name() const override { return type_; }
  std::string repr() const override { return repr_; }
  bool is_iterator() const override { return true; }
  std::optional<Value> next(Interpreter& interp) override;

 private:
  std::string type_;
  std::string repr_;
  NextFn next_;
  bool exhausted_ = false;
};

// Wraps a producer as a Python generator object (`<generator object NAME>`).
Value make_generator(std::string_view function_name, LazyIterator::NextFn next);

// A {% macro %} or the `caller` of a {% call %} block, closed over the scope it was defined in.
class Macro : public Object {
 public:
  Macro(std::string name, const ast::Signature& signature, const ast::Body& body, Scope* scope)
      : name_(std::move(name)), signature_(signature), body_(body), scope_(scope) {}

  std::string_view type_name() const override { return "Macro"; }
  std::string object_type_repr() const override { return "jinja2.runtime.Macro object"; }
  std::string repr() const override;
  bool is_callable() const override { return true; }
  Value call(Interpreter& interp, CallArgs args) override;

 private:
  std::string name_;
  const ast::Signature& signature_;
  const ast::Body& body_;
  Scope* scope_;
};

// `loop` inside a for loop.
class LoopContext : public Object {
 public:
  LoopContext(ValueList items, const ast::For* recursive_node, Scope* scope, int depth)
      : items_(std::move(items)), node_(recursive_node), scope_(scope), depth_(depth) {}

  std::string_view type_name() const override { return "LoopContext"; }
  std::string object_type_repr() const override { return "jinja2.runtime.LoopContext object"; }
  std::string repr() const override;
  std::optional<Value> attribute(Interpreter& interp, std::string_view name) override;
  bool is_callable() const override { return true; }
  Value call(Interpreter& interp, CallArgs args) override;  // loop(children) when recursive

  void advance(size_t index) { index_ = index; }
  size_t size() const { return items_.size(); }
  const Value& item(size_t i) const { return items_[i]; }

 private:
  ValueList items_;
  const ast::For* node_;  // null unless the loop is `recursive`
  Scope* scope_;          // where a recursive call re-runs the loop
  int depth_;             // 1 for the outermost
  size_t index_ = 0;
  std::optional<Value> last_changed_;
};

}  // namespace kiln::jinja
