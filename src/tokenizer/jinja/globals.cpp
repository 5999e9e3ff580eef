// Built-in global functions. range is jinja2.sandbox.safe_range; raise_exception and
// strftime_now are transformers' (chat_template_utils._compile_jinja_template).
#include "tokenizer/jinja/globals.hpp"

#include <ctime>

#include "tokenizer/jinja/args.hpp"
#include "tokenizer/jinja/objects.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"

namespace kiln::jinja {
namespace {

Value range_fn(Interpreter&, CallArgs& args) {
  if (!args.keyword.empty()) raise(ErrorType::kTypeError, "range() takes no keyword arguments");
  const size_t n = args.positional.size();
  if (n == 0) raise(ErrorType::kTypeError, "range expected at least 1 argument, got 0");
  if (n > 3) raise(ErrorType::kTypeError, "range expected at most 3 arguments, got {}", n);
  int64_t bounds[3] = {0, 0, 1};
  for (size_t i = 0; i < n; ++i) {
    const Value& v = args.positional[i];
    if (!v.is_integral()) {
      raise(ErrorType::kTypeError, "'{}' object cannot be interpreted as an integer", type_name(v));
    }
    bounds[n == 1 ? 1 : i] = v.as_int();
  }
  const int64_t start = bounds[0], stop = bounds[1], step = bounds[2];
  if (step == 0) raise(ErrorType::kValueError, "range() arg 3 must not be zero");
  const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 stride = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  const __int128 count = span <= 0 ? 0 : (span - 1) / stride + 1;
  if (count > kMaxRange) {
    raise(ErrorType::kOverflowError, "Range too big. The sandbox blocks ranges larger than MAX_RANGE ({}).", kMaxRange);
  }
  ValueList items;
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) items.push_back(Value::integer(start + i * step));
  return Value::list(std::move(items));
}

// dict(*args, **kwargs): a mapping or an iterable of pairs, then the keywords.
Dict build_dict(Interpreter& interp, const CallArgs& args, std::string_view name) {
  if (args.positional.size() > 1) {
    raise(ErrorType::kTypeError, "{} expected at most 1 argument, got {}", name, args.positional.size());
  }
  Dict out;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      out = source.as_dict();
    } else {
      const ValueList elements = interp.iterate(source);
      for (size_t i = 0; i < elements.size(); ++i) {
        const Value& e = elements[i];
        if (!(e.is_sequence() || e.is_string() || e.is_dict())) {
          raise(ErrorType::kTypeError, "cannot convert dictionary update sequence element #{} to a sequence", i);
        }
        ValueList pair = interp.iterate(e);
        if (pair.size() != 2) {
          raise(ErrorType::kValueError, "dictionary update sequence element #{} has length {}; 2 is required", i,
                pair.size());
        }
        out.set(std::move(pair[0]), std::move(pair[1]));
      }
    }
  }
  for (const auto& [key, value] : args.keyword) out.set(Value::string(key), value);
  return out;
}

Value namespace_fn(Interpreter& interp, CallArgs& args) {
  auto ns = interp.make_namespace();
  const Dict attrs = build_dict(interp, args, "namespace");
  for (const auto& [key, value] : attrs.entries()) {
    if (!key.is_string()) raise(ErrorType::kTypeError, "keywords must be strings");
    ns->set(key.as_string(), value);
  }
  return Value::object(ns);
}

// jinja2.utils.Cycler.
class Cycler : public Object {
 public:
  explicit Cycler(ValueList items) : items_(std::move(items)) {}
  std::string_view type_name() const override { return "Cycler"; }
  std::string object_type_repr() const override { return "jinja2.utils.Cycler object"; }
  std::string repr() const override { return "<jinja2.utils.Cycler object>"; }

  std::optional<Value> attribute(Interpreter&, std::string_view name) override {
    if (name == "current") return items_[pos_];
    auto self = std::static_pointer_cast<Cycler>(shared_from_this());
    if (name == "next") {
      return Value::object(std::make_shared<NativeFunction>("method", "<bound method Cycler.next>",
                                                            [self](Interpreter&, CallArgs& args) {
                                                              BoundArgs a("next", args, {});
                                                              Value out = self->items_[self->pos_];
                                                              self->pos_ = (self->pos_ + 1) % self->items_.size();
                                                              return out;
                                                            }));
    }
    if (name == "reset") {
      return Value::object(std::make_shared<NativeFunction>("method", "<bound method Cycler.reset>",
                                                            [self](Interpreter&, CallArgs& args) {
                                                              BoundArgs a("reset", args, {});
                                                              self->pos_ = 0;
                                                              return Value::none();
                                                            }));
    }
    if (name == "items") return Value::tuple(items_);
    return std::nullopt;
  }

 private:
  ValueList items_;
  size_t pos_ = 0;
};

// jinja2.utils.Joiner: "" the first time it is called, then the separator.
class Joiner : public Object {
 public:
  explicit Joiner(std::string sep) : sep_(std::move(sep)) {}
  std::string_view type_name() const override { return "Joiner"; }
  std::string object_type_repr() const override { return "jinja2.utils.Joiner object"; }
  std::string repr() const override { return "<jinja2.utils.Joiner object>"; }
  bool is_callable() const override { return true; }
  Value call(Interpreter&, CallArgs args) override {
    BoundArgs a("__call__", args, {});
    if (!used_) {
      used_ = true;
      return Value::string("");
    }
    return Value::string(sep_);
  }

 private:
  std::string sep_;
  bool used_ = false;
};

// datetime.strftime: %f, %z and %Z are Python's own (a naive datetime has no zone); the rest
// is the C library's, as CPython passes it on.
std::string python_strftime(std::string_view format, const std::tm& time) {
  std::string c_format;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      c_format.push_back(format[i]);
      continue;
    }
    const char c = format[++i];
    if (c == 'f') {
      c_format += "000000";
    } else if (c == 'z' || c == 'Z') {
      // empty for a naive datetime
    } else {
      c_format.push_back('%');
      c_format.push_back(c);
    }
  }
  if (c_format.empty()) return "";
  std::string out(c_format.size() * 8 + 64, '\0');
  for (int attempt = 0; attempt < 6; ++attempt) {
    const size_t n = std::strftime(out.data(), out.size(), c_format.c_str(), &time);
    if (n > 0) {
      out.resize(n);
      return out;
    }
    out.resize(out.size() * 4);
  }
  return "";  // the format produces empty output, e.g. "%p" in a locale without AM/PM
}

Value function(std::string name, NativeFunction::Fn fn) {
  const std::string repr = fmt::format("<function {}>", name);
  return Value::object(std::make_shared<NativeFunction>("function", repr, std::move(fn)));
}

Value type_object(std::string qualified_name, NativeFunction::Fn fn) {
  const std::string repr = fmt::format("<class '{}'>", qualified_name);
  return Value::object(std::make_shared<NativeFunction>("type", repr, std::move(fn)));
}

}  // namespace

void install_globals(Scope& scope) {
  scope.set("range", function("safe_range", range_fn));
  scope.set("dict", type_object("dict", [](Interpreter& interp, CallArgs& args) {
              return Value::dict(build_dict(interp, args, "dict"));
            }));
  scope.set("namespace", type_object("jinja2.utils.Namespace", namespace_fn));
  scope.set("cycler", type_object("jinja2.utils.Cycler", [](Interpreter&, CallArgs& args) {
              if (!args.keyword.empty()) raise(ErrorType::kTypeError, "Cycler() takes no keyword arguments");
              if (args.positional.empty())
                raise(ErrorType::kTemplateRuntimeError, "at least one item has to be provided");
              return Value::object(std::make_shared<Cycler>(args.positional));
            }));
  scope.set("joiner", type_object("jinja2.utils.Joiner", [](Interpreter&, CallArgs& args) {
              BoundArgs a("Joiner", args, {"sep"});
              return Value::object(std::make_shared<Joiner>(a.has(0) ? python_str(a[0]) : ", "));
            }));
  scope.set("raise_exception", function("raise_exception", [](Interpreter&, CallArgs& args) -> Value {
              BoundArgs a("raise_exception", args, {"message"}, 1);
              raise(ErrorType::kTemplateError, "{}", python_str(a[0]));
            }));
  scope.set("strftime_now", function("strftime_now", [](Interpreter& interp, CallArgs& args) {
              BoundArgs a("strftime_now", args, {"format"}, 1);
              const std::string& format = expect_string(a[0], "strftime");
              return Value::string(python_strftime(format, interp.local_time()));
            }));
}

}  // namespace kiln::jinja
