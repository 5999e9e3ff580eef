// Attribute access, subscription, slicing and iteration with the rules of Jinja2's immutable
// sandbox (jinja2/sandbox.py): `x.name` tries the Python attribute, then the item; `x[key]`
// tries the item, then the attribute; a miss is an undefined value that says what was missing.
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/methods.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

// jinja2.utils.object_type_repr.
std::string object_type_repr(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_object()) return v.as_object().object_type_repr();
  if (v.is_safe()) return "markupsafe.Markup object";
  return type_name(v) + " object";
}

Value missing_attribute(const Value& object, std::string_view name) {
  return Value::undefined(
      fmt::format("{} has no attribute {}", repr_string(object_type_repr(object)), repr_string(name)));
}

Value missing_item(const Value& object, const Value& key) {
  if (key.is_string()) return missing_attribute(object, key.as_string());
  return Value::undefined(fmt::format("{} has no element {}", object_type_repr(object), python_repr(key)));
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

// Python's index normalisation; nullopt when out of range.
std::optional<size_t> normalize_index(int64_t index, size_t size) {
  const auto n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<size_t>(index);
}

Value string_item(const Value& s, int64_t index) {
  const std::string& text = s.as_string();
  if (is_ascii(text)) {
    auto i = normalize_index(index, text.size());
    if (!i) return missing_item(s, Value::integer(index));
    return Value::string(text.substr(*i, 1), s.is_safe());
  }
  const std::u32string cps = unicode::decode(text);
  auto i = normalize_index(index, cps.size());
  if (!i) return missing_item(s, Value::integer(index));
  std::string out;
  append_utf8(out, cps[*i]);
  return Value::string(std::move(out), s.is_safe());
}

// CPython's PySlice_AdjustIndices over `length` elements; returns the selected indices.
std::vector<size_t> slice_indices(size_t length, const Value& start_v, const Value& stop_v, const Value& step_v) {
  const auto len = static_cast<int64_t>(length);
  const int64_t step = step_v.is_none() ? 1 : step_v.as_int();
  if (step == 0) raise(ErrorType::kValueError, "slice step cannot be zero");
  auto adjust = [&](const Value& v, bool is_start) {
    if (v.is_none()) {
      if (step < 0) return is_start ? len - 1 : int64_t{-1};
      return is_start ? int64_t{0} : len;
    }
    int64_t x = v.as_int();
    if (x < 0) {
      x += len;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= len) {
      x = step < 0 ? len - 1 : len;
    }
    return x;
  };
  const int64_t start = adjust(start_v, true);
  const int64_t stop = adjust(stop_v, false);
  // CPython's PySlice_AdjustIndices length, in 128 bits so huge steps cannot overflow.
  const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 stride = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  const __int128 count = span > 0 ? (span - 1) / stride + 1 : 0;
  std::vector<size_t> out;
  for (__int128 k = 0; k < count; ++k) out.push_back(static_cast<size_t>(start + k * step));
  return out;
}

// NOTE: Jinja2 compiles `x[a:b]` to Python's own subscription, bypassing the sandbox's getitem,
// so slicing errors are raised, not turned into undefined values.
Value slice_value(const Value& object, const Value& start, const Value& stop, const Value& step) {
  if (object.is_dict()) raise(ErrorType::kTypeError, "unhashable type: 'slice'");
  if (!object.is_string() && !object.is_sequence()) {
    raise(ErrorType::kTypeError, "'{}' object is not subscriptable", type_name(object));
  }
  for (const Value* bound : {&start, &stop, &step}) {
    if (!bound->is_none() && !bound->is_integral()) {
      raise(ErrorType::kTypeError, "slice indices must be integers or None or have an __index__ method");
    }
  }
  if (object.is_string()) {
    const std::u32string cps = unicode::decode(object.as_string());
    std::u32string out;
    for (size_t i : slice_indices(cps.size(), start, stop, step)) out.push_back(cps[i]);
    return Value::string(unicode::encode(out), object.is_safe());
  }
  if (object.is_sequence()) {
    const ValueList& items = object.items();
    ValueList out;
    for (size_t i : slice_indices(items.size(), start, stop, step)) out.push_back(items[i]);
    return object.is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
  }
  return object;  // unreachable: the kinds were checked above
}

}  // namespace

Value Interpreter::getattr(const Value& object, std::string_view name) {
  if (object.is_undefined()) raise_undefined(object);
  if (object.is_object()) {
    if (auto v = object.as_object().attribute(*this, name)) return *v;
    return missing_attribute(object, name);
  }
  if (auto method = find_method(object, name)) return *method;
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().find(name)) return *v;
  }
  return missing_attribute(object, name);
}

Value Interpreter::getitem(const Value& object, const Value& key) {
  if (object.is_undefined()) raise_undefined(object);
  switch (object.kind()) {
    case Value::Kind::kDict:
      if (hash_key(key)) {
        if (const Value* v = object.as_dict().find(key)) return *v;
      }
      break;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      if (key.is_integral()) {
        auto i = normalize_index(key.as_int(), object.items().size());
        return i ? object.items()[*i] : missing_item(object, key);
      }
      break;
    case Value::Kind::kString:
      if (key.is_integral()) return string_item(object, key.as_int());
      break;
    case Value::Kind::kObject:
      if (key.is_string()) {
        if (auto v = object.as_object().attribute(*this, key.as_string())) return *v;
      }
      return missing_item(object, key);
    default: break;
  }
  if (key.is_string()) {
    if (auto method = find_method(object, key.as_string())) return *method;
  }
  return missing_item(object, key);
}

Value Interpreter::eval_getitem(const ast::Getitem& node, Scope* scope) {
  const Value object = eval(*node.object, scope);
  if (node.index->kind != ast::ExprKind::kSlice) return getitem(object, eval(*node.index, scope));
  const auto& slice = static_cast<const ast::Slice&>(*node.index);
  auto bound = [&](const ast::ExprPtr& e) { return e ? eval(*e, scope) : Value::none(); };
  const Value start = bound(slice.start);
  const Value stop = bound(slice.stop);
  const Value step = bound(slice.step);
  if (object.is_undefined()) raise_undefined(object);
  return slice_value(object, start, stop, step);
}

ValueList Interpreter::iterate(const Value& iterable) {
  switch (iterable.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList:
    case Value::Kind::kTuple: return iterable.items();
    case Value::Kind::kDict: {
      ValueList keys;
      keys.reserve(iterable.as_dict().size());
      for (const auto& entry : iterable.as_dict().entries()) keys.push_back(entry.first);
      return keys;
    }
    case Value::Kind::kString: {
      ValueList chars;
      const std::string& s = iterable.as_string();
      check_items(s.size());  // at most one character a byte
      for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        next_code_point(s, i);
        chars.push_back(Value::string(s.substr(start, i - start)));
      }
      return chars;
    }
    case Value::Kind::kObject:
      if (iterable.as_object().is_iterator()) {
        ValueList items;
        while (auto item = iterable.as_object().next(*this)) {
          count_step();
          items.push_back(std::move(*item));
        }
        return items;
      }
      break;
    default: break;
  }
  raise(ErrorType::kTypeError, "'{}' object is not iterable", type_name(iterable));
}

}  // namespace kiln::jinja
