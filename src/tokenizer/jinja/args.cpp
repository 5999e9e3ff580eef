// Argument binding for built-ins; messages follow CPython's wording for C functions.
#include "tokenizer/jinja/args.hpp"

#include "tokenizer/jinja/operators.hpp"

namespace kiln::jinja {

BoundArgs::BoundArgs(std::string_view function, const CallArgs& args, std::initializer_list<std::string_view> params,
                     size_t required)
    : function_(function), names_(params), slots_(params.size(), nullptr) {
  if (args.positional.size() > names_.size()) {
    raise(ErrorType::kTypeError, "{}() takes at most {} argument{} ({} given)", function_, names_.size(),
          names_.size() == 1 ? "" : "s", args.positional.size());
  }
  for (size_t i = 0; i < args.positional.size(); ++i) slots_[i] = &args.positional[i];
  for (const auto& [name, value] : args.keyword) {
    size_t i = 0;
    while (i < names_.size() && names_[i] != name) ++i;
    if (i == names_.size()) {
      raise(ErrorType::kTypeError, "{}() got an unexpected keyword argument '{}'", function_, name);
    }
    if (slots_[i] != nullptr) {
      raise(ErrorType::kTypeError, "{}() got multiple values for argument '{}'", function_, name);
    }
    slots_[i] = &value;
  }
  for (size_t i = 0; i < required; ++i) {
    if (slots_[i] == nullptr) {
      raise(ErrorType::kTypeError, "{}() missing required argument '{}' (pos {})", function_, names_[i], i + 1);
    }
  }
}

int64_t BoundArgs::get_int(size_t i, int64_t fallback) const {
  if (!has(i) || slots_[i]->is_none()) return fallback;
  const Value& v = *slots_[i];
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_integral()) {
    raise(ErrorType::kTypeError, "'{}' object cannot be interpreted as an integer", type_name(v));
  }
  return v.as_int();
}

bool BoundArgs::get_bool(size_t i, bool fallback) const { return has(i) ? truthy(*slots_[i]) : fallback; }

std::string BoundArgs::get_string(size_t i, std::string fallback) const {
  if (!has(i)) return fallback;
  return expect_string(*slots_[i], function_);
}

const std::string& expect_string(const Value& v, std::string_view what) {
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_string()) {
    raise(ErrorType::kTypeError, "{}() argument must be str, not {}", what, type_name(v));
  }
  return v.as_string();
}

}  // namespace kiln::jinja
