// Behaviour of namespaces, iterators, macros and loop contexts, following jinja2.utils and
// jinja2.runtime (Macro.__call__ for argument binding, LoopContext for loop.* attributes).
#include "tokenizer/jinja/objects.hpp"

#include <algorithm>

#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"

namespace kiln::jinja {

// ---- Namespace ----

std::string Namespace::repr() const {
  if (in_repr_) return "<Namespace {...}>";
  in_repr_ = true;
  std::string out = fmt::format("<Namespace {}>", python_repr(Value::dict(attrs_)));
  in_repr_ = false;
  return out;
}

std::optional<Value> Namespace::attribute(Interpreter&, std::string_view name) {
  if (const Value* v = attrs_.find(name)) return *v;
  return std::nullopt;
}

void Namespace::set(std::string name, Value value) { attrs_.set(Value::string(std::move(name)), std::move(value)); }

// ---- LazyIterator ----

std::optional<Value> LazyIterator::next(Interpreter& interp) {
  if (exhausted_) return std::nullopt;
  std::optional<Value> item = next_(interp);
  if (!item) exhausted_ = true;
  return item;
}

Value make_generator(std::string_view function_name, LazyIterator::NextFn next) {
  return Value::object(std::make_shared<LazyIterator>("generator", fmt::format("<generator object {}>", function_name),
                                                      std::move(next)));
}

// ---- Macro ----

std::string Macro::repr() const { return fmt::format("<Macro {}>", repr_string(name_)); }

Value Macro::call(Interpreter& interp, CallArgs args) {
  Interpreter::CallGuard guard(interp);
  const std::vector<std::string>& params = signature_.params;
  Scope* scope = interp.new_scope(scope_);
  auto take_keyword = [&](std::string_view name) -> std::optional<Value> {
    for (auto it = args.keyword.begin(); it != args.keyword.end(); ++it) {
      if (it->first == name) {
        Value v = std::move(it->second);
        args.keyword.erase(it);
        return v;
      }
    }
    return std::nullopt;
  };
  const size_t first_default = params.size() - signature_.defaults.size();
  bool found_caller = false;
  for (size_t i = 0; i < params.size(); ++i) {
    std::optional<Value> value;
    if (i < args.positional.size()) {
      value = args.positional[i];
    } else {
      value = take_keyword(params[i]);
      if (params[i] == "caller") found_caller = true;
    }
    if (!value && i >= first_default) {
      value = interp.eval(*signature_.defaults[i - first_default], scope);
    }
    if (!value) value = Value::undefined(fmt::format("parameter {} was not provided", repr_string(params[i])));
    scope->set(params[i], std::move(*value));
  }
  if (args.positional.size() >= params.size()) {
    found_caller = std::find(params.begin(), params.end(), "caller") != params.end();
  }
  if (signature_.uses_caller && !found_caller) {
    std::optional<Value> caller = take_keyword("caller");
    scope->set("caller", caller ? *caller : Value::undefined("No caller defined"));
  }
  if (signature_.uses_kwargs) {
    Dict kwargs;
    for (auto& [key, value] : args.keyword) kwargs.set(Value::string(key), std::move(value));
    scope->set("kwargs", Value::dict(std::move(kwargs)));
  } else if (!args.keyword.empty()) {
    if (take_keyword("caller")) {
      raise(ErrorType::kTypeError,
            "macro {} was invoked with two values for the special caller "
            "argument. This is most likely a bug.",
            repr_string(name_));
    }
    raise(ErrorType::kTypeError, "macro {} takes no keyword argument {}", repr_string(name_),
          repr_string(args.keyword.front().first));
  }
  if (signature_.uses_varargs) {
    ValueList extra;
    for (size_t i = params.size(); i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
    scope->set("varargs", Value::tuple(std::move(extra)));
  } else if (args.positional.size() > params.size()) {
    raise(ErrorType::kTypeError, "macro {} takes not more than {} argument(s)", repr_string(name_), params.size());
  }
  std::string out;
  interp.exec_body(body_, scope, out);
  return Value::string(std::move(out));
}

// ---- LoopContext ----

std::string LoopContext::repr() const { return fmt::format("<LoopContext {}/{}>", index_ + 1, items_.size()); }

std::optional<Value> LoopContext::attribute(Interpreter&, std::string_view name) {
  const auto length = static_cast<int64_t>(items_.size());
  const auto index0 = static_cast<int64_t>(index_);
  if (name == "index") return Value::integer(index0 + 1);
  if (name == "index0") return Value::integer(index0);
  if (name == "revindex") return Value::integer(length - index0);
  if (name == "revindex0") return Value::integer(length - index0 - 1);
  if (name == "first") return Value::boolean(index0 == 0);
  if (name == "last") return Value::boolean(index0 == length - 1);
  if (name == "length") return Value::integer(length);
  if (name == "depth") return Value::integer(depth_);
  if (name == "depth0") return Value::integer(depth_ - 1);
  if (name == "previtem") {
    return index_ > 0 ? items_[index_ - 1] : Value::undefined("there is no previous item");
  }
  if (name == "nextitem") {
    return index_ + 1 < items_.size() ? items_[index_ + 1] : Value::undefined("there is no next item");
  }
  auto self = std::static_pointer_cast<LoopContext>(shared_from_this());
  if (name == "cycle") {
    return Value::object(std::make_shared<NativeFunction>(
        "method", "<bound method LoopContext.cycle>", [self](Interpreter&, CallArgs& args) {
          if (args.positional.empty()) raise(ErrorType::kTypeError, "no items for cycling given");
          return args.positional[self->index_ % args.positional.size()];
        }));
  }
  if (name == "changed") {
    return Value::object(std::make_shared<NativeFunction>(
        "method", "<bound method LoopContext.changed>", [self](Interpreter&, CallArgs& args) {
          Value current = Value::tuple(args.positional);
          if (self->last_changed_ && equals(*self->last_changed_, current)) {
            return Value::boolean(false);
          }
          self->last_changed_ = std::move(current);
          return Value::boolean(true);
        }));
  }
  return std::nullopt;
}

Value LoopContext::call(Interpreter& interp, CallArgs args) {
  if (node_ == nullptr) {
    raise(ErrorType::kTypeError, "The loop must be marked as 'recursive' to call it recursively.");
  }
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    raise(ErrorType::kTypeError, "loop() takes exactly one argument, the items to loop over");
  }
  Interpreter::CallGuard guard(interp);
  std::string out;
  interp.run_loop(*node_, args.positional[0], scope_, out, depth_ + 1);
  return Value::string(std::move(out));
}

}  // namespace kiln::jinja
