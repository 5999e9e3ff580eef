// Filters over sequences. Those that are generators in Jinja2 (map, select, reject,
// selectattr, rejectattr, unique, items, batch, slice) return lazy generators here too: no
// len(), always true, consumed once, and their work (and errors) happens as they are consumed.
#include <algorithm>
#include <unordered_set>

#include "tokenizer/jinja/args.hpp"
#include "tokenizer/jinja/filters_impl.hpp"
#include "tokenizer/jinja/interpreter.hpp"
#include "tokenizer/jinja/objects.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

// Python's len().
Value f_length(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("len", args, {});
  switch (v.kind()) {
    case Value::Kind::kUndefined: return Value::integer(0);
    case Value::Kind::kString: return Value::integer(static_cast<int64_t>(unicode::length(v.as_string())));
    case Value::Kind::kList:
    case Value::Kind::kTuple: return Value::integer(static_cast<int64_t>(v.items().size()));
    case Value::Kind::kDict: return Value::integer(static_cast<int64_t>(v.as_dict().size()));
    default: raise(ErrorType::kTypeError, "object of type '{}' has no len()", type_name(v));
  }
}

// "a.b.0" -> ["a", "b", 0]: digit-only parts are item indices.
ValueList split_parts(const std::string& attribute) {
  ValueList parts;
  size_t start = 0;
  while (true) {
    const size_t dot = attribute.find('.', start);
    const std::string part = attribute.substr(start, dot == std::string::npos ? dot : dot - start);
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    parts.push_back(digits && part.size() < 18 ? Value::integer(std::stoll(part)) : Value::string(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// jinja2.filters.make_attrgetter: "a.b.0" looks up a, then b, then item 0.
std::function<Value(Interpreter&, const Value&)> attribute_getter(const Value& attribute, bool ignore_case,
                                                                  std::optional<Value> fallback = {}) {
  std::vector<Value> parts;
  if (attribute.is_string()) {
    for (const Value& part : split_parts(attribute.as_string())) parts.push_back(part);
  } else if (!attribute.is_none() && !attribute.is_undefined()) {
    parts.push_back(attribute);
  }
  return [parts, ignore_case, fallback](Interpreter& interp, const Value& item) {
    Value v = item;
    for (const Value& part : parts) {
      v = interp.getitem(v, part);
      if (fallback && v.is_undefined()) v = *fallback;
    }
    if (ignore_case && v.is_string()) v = Value::string(unicode::lower(v.as_string()));
    return v;
  };
}

// make_multi_attrgetter: "age,name" gives a list key of both attributes.
std::function<Value(Interpreter&, const Value&)> multi_attribute_getter(const Value& attribute, bool ignore_case) {
  std::vector<std::function<Value(Interpreter&, const Value&)>> getters;
  if (attribute.is_string()) {
    size_t start = 0;
    const std::string& text = attribute.as_string();
    while (true) {
      const size_t comma = text.find(',', start);
      getters.push_back(attribute_getter(
          Value::string(text.substr(start, comma == std::string::npos ? comma : comma - start)), ignore_case));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    getters.push_back(attribute_getter(attribute, ignore_case));
  }
  return [getters](Interpreter& interp, const Value& item) {
    ValueList key;
    for (const auto& g : getters) key.push_back(g(interp, item));
    return Value::list(std::move(key));
  };
}

// A generator that computes its items one at a time from a materialized source.
struct GeneratorState {
  bool started = false;
  ValueList items;
  size_t pos = 0;
};

Value f_first(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_first", args, {});
  if (v.is_object() && v.as_object().is_iterator()) {
    if (auto item = v.as_object().next(interp)) return *item;
  } else {
    ValueList items = interp.iterate(v);
    if (!items.empty()) return items.front();
  }
  return Value::undefined("No first item, sequence was empty.");
}

Value f_last(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_last", args, {});
  const bool reversible = v.is_undefined() || v.is_string() || v.is_sequence() || v.is_dict();
  if (!reversible) raise(ErrorType::kTypeError, "'{}' object is not reversible", type_name(v));
  ValueList items = interp.iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value f_join(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_join", args, {"d", "attribute"});
  const std::string separator = a.has(0) ? python_str(a[0]) : "";
  ValueList items = interp.iterate(v);
  std::string out;
  const auto getter =
      a.has(1) && !a[1].is_none() ? attribute_getter(a[1], false) : std::function<Value(Interpreter&, const Value&)>();
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    append_str(out, getter ? getter(interp, items[i]) : items[i]);
    interp.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_list(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("list", args, {});
  return Value::list(interp.iterate(v));
}

Value reverse_iterator(std::string type, ValueList items) {
  auto state = std::make_shared<ValueList>(std::move(items));
  return Value::object(std::make_shared<LazyIterator>(type, fmt::format("<{} object>", type),
                                                      [state](Interpreter&) -> std::optional<Value> {
                                                        if (state->empty()) return std::nullopt;
                                                        Value v = std::move(state->back());
                                                        state->pop_back();
                                                        return v;
                                                      }));
}

Value f_reverse(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_reverse", args, {});
  if (v.is_string()) {
    std::u32string text = unicode::decode(v.as_string());
    std::reverse(text.begin(), text.end());
    return Value::string(unicode::encode(text), v.is_safe());
  }
  if (v.is_list()) return reverse_iterator("list_reverseiterator", v.items());
  if (v.is_tuple() || v.is_undefined()) return reverse_iterator("reversed", interp.iterate(v));
  if (v.is_dict()) return reverse_iterator("dict_reversekeyiterator", interp.iterate(v));
  if (v.is_object() && v.as_object().is_iterator()) {
    ValueList items = interp.iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  raise(ErrorType::kFilterArgumentError, "argument must be iterable");
}

// sorted(reverse=x) takes x as an integer: bool or int, anything else is a TypeError.
bool reverse_flag(const BoundArgs& a, size_t i) {
  if (!a.has(i)) return false;
  if (!a[i].is_integral()) {
    raise(ErrorType::kTypeError, "'{}' object cannot be interpreted as an integer", type_name(a[i]));
  }
  return a[i].as_int() != 0;
}

Value f_sort(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_sort", args, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = reverse_flag(a, 0);
  const auto key_of = multi_attribute_getter(a.get(2, Value::none()), !a.get_bool(1, false));
  ValueList items = interp.iterate(v);
  std::vector<std::pair<Value, size_t>> keyed;
  for (size_t i = 0; i < items.size(); ++i) keyed.emplace_back(key_of(interp, items[i]), i);
  std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& x, const auto& y) {
    return reverse ? less_than(y.first, x.first) : less_than(x.first, y.first);
  });
  ValueList out;
  for (const auto& [key, i] : keyed) out.push_back(items[i]);
  return Value::list(std::move(out));
}

Value f_dictsort(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_dictsort", args, {"case_sensitive", "by", "reverse"});
  const bool case_sensitive = a.get_bool(0, false);
  const std::string by = a.get_string(1, "key");
  const bool reverse = reverse_flag(a, 2);
  if (by != "key" && by != "value") {
    raise(ErrorType::kFilterArgumentError, "You can only sort by either \"key\" or \"value\"");
  }
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_dict()) raise(ErrorType::kTypeError, "'{}' object has no attribute 'items'", type_name(v));
  ValueList pairs;
  for (const auto& [key, value] : v.as_dict().entries()) pairs.push_back(Value::tuple({key, value}));
  const size_t pos = by == "key" ? 0 : 1;
  auto key_of = [&](const Value& pair) {
    const Value& k = pair.items()[pos];
    return !case_sensitive && k.is_string() ? Value::string(unicode::lower(k.as_string())) : k;
  };
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    return reverse ? less_than(key_of(y), key_of(x)) : less_than(key_of(x), key_of(y));
  });
  return Value::list(std::move(pairs));
}

Value min_or_max(Interpreter& interp, const Value& v, CallArgs& args, bool want_max) {
  BoundArgs a(want_max ? "do_max" : "do_min", args, {"case_sensitive", "attribute"});
  const auto key_of = attribute_getter(a.get(1, Value::none()), !a.get_bool(0, false));
  ValueList items = interp.iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key = key_of(interp, items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value key = key_of(interp, items[i]);
    if (want_max ? less_than(best_key, key) : less_than(key, best_key)) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}
Value f_min(Interpreter& interp, const Value& v, CallArgs& args) { return min_or_max(interp, v, args, false); }
Value f_max(Interpreter& interp, const Value& v, CallArgs& args) { return min_or_max(interp, v, args, true); }

Value f_sum(Interpreter& interp, const Value& v, CallArgs& args) {
  BoundArgs a("do_sum", args, {"attribute", "start"});
  const auto getter = attribute_getter(a.get(0, Value::none()), false);
  Value total = a.get(1, Value::integer(0));
  for (const Value& item : interp.iterate(v)) {
    total = binary_op(interp, ast::BinaryOp::kAdd, total, getter(interp, item));
  }
  return total;
}

// select / reject / selectattr / rejectattr (jinja2.filters.select_or_reject).
Value select_or_reject(const Value& v, CallArgs args, bool select, bool lookup_attr, const char* name) {
  auto state = std::make_shared<GeneratorState>();
  std::function<bool(Interpreter&, const Value&)> predicate;
  return make_generator(name,
                        [state, v, args = std::move(args), select, lookup_attr,
                         predicate](Interpreter& interp) mutable -> std::optional<Value> {
                          if (!state->started) {
                            state->started = true;
                            if (!truthy(v)) return std::nullopt;
                            size_t offset = 0;
                            std::function<Value(Interpreter&, const Value&)> transform;
                            if (lookup_attr) {
                              if (args.positional.empty()) {
                                raise(ErrorType::kFilterArgumentError, "Missing parameter for attribute name");
                              }
                              transform = attribute_getter(args.positional[0], false);
                              offset = 1;
                            }
                            if (args.positional.size() > offset) {
                              const std::string test = python_str(args.positional[offset]);
                              CallArgs test_args;
                              test_args.positional.assign(args.positional.begin() + static_cast<long>(offset) + 1,
                                                          args.positional.end());
                              test_args.keyword = args.keyword;
                              predicate = [test, test_args, transform](Interpreter& in, const Value& item) {
                                return in.apply_test(test, transform ? transform(in, item) : item, test_args);
                              };
                            } else {
                              predicate = [transform](Interpreter& in, const Value& item) {
                                return truthy(transform ? transform(in, item) : item);
                              };
                            }
                            state->items = interp.iterate(v);
                          }
                          while (state->pos < state->items.size()) {
                            const Value& item = state->items[state->pos++];
                            if (predicate(interp, item) == select) return item;
                          }
                          return std::nullopt;
                        });
}

Value f_select(Interpreter&, const Value& v, CallArgs& args) {
  return select_or_reject(v, args, true, false, "select_or_reject");
}
Value f_reject(Interpreter&, const Value& v, CallArgs& args) {
  return select_or_reject(v, args, false, false, "select_or_reject");
}
Value f_selectattr(Interpreter&, const Value& v, CallArgs& args) {
  return select_or_reject(v, args, true, true, "select_or_reject");
}
Value f_rejectattr(Interpreter&, const Value& v, CallArgs& args) {
  return select_or_reject(v, args, false, true, "select_or_reject");
}

Value f_map(Interpreter&, const Value& v, CallArgs& args) {
  auto state = std::make_shared<GeneratorState>();
  std::function<Value(Interpreter&, const Value&)> fn;
  return make_generator("sync_do_map", [state, v, args, fn](Interpreter& interp) mutable -> std::optional<Value> {
    if (!state->started) {
      state->started = true;
      if (!truthy(v)) return std::nullopt;
      const Value* attribute = nullptr;
      for (const auto& [key, value] : args.keyword) {
        if (key == "attribute") attribute = &value;
      }
      if (args.positional.empty() && attribute != nullptr) {
        std::optional<Value> fallback;
        for (const auto& [key, value] : args.keyword) {
          if (key == "default") {
            fallback = value;
          } else if (key != "attribute") {
            raise(ErrorType::kFilterArgumentError, "Unexpected keyword argument {}", repr_string(key));
          }
        }
        fn = attribute_getter(*attribute, false, fallback);
      } else {
        if (args.positional.empty()) raise(ErrorType::kFilterArgumentError, "map requires a filter argument");
        const std::string filter = python_str(args.positional[0]);
        CallArgs filter_args;
        filter_args.positional.assign(args.positional.begin() + 1, args.positional.end());
        filter_args.keyword = args.keyword;
        fn = [filter, filter_args](Interpreter& in, const Value& item) {
          return in.apply_filter(filter, item, filter_args);
        };
      }
      state->items = interp.iterate(v);
    }
    if (state->pos >= state->items.size()) return std::nullopt;
    return fn(interp, state->items[state->pos++]);
  });
}

Value f_unique(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_unique", args, {"case_sensitive", "attribute"});
  const auto key_of = attribute_getter(a.get(1, Value::none()), !a.get_bool(0, false));
  auto state = std::make_shared<GeneratorState>();
  auto seen = std::make_shared<std::unordered_set<std::string>>();
  return make_generator("sync_do_unique", [state, seen, v, key_of](Interpreter& interp) -> std::optional<Value> {
    if (!state->started) {
      state->started = true;
      state->items = interp.iterate(v);
    }
    while (state->pos < state->items.size()) {
      const Value& item = state->items[state->pos++];
      const Value key = key_of(interp, item);
      auto hashed = hash_key(key);
      if (!hashed) raise(ErrorType::kTypeError, "unhashable type: '{}'", type_name(key));
      if (seen->insert(*hashed).second) return item;
    }
    return std::nullopt;
  });
}

Value f_items(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_items", args, {});
  auto state = std::make_shared<GeneratorState>();
  return make_generator("do_items", [state, v](Interpreter&) -> std::optional<Value> {
    if (!state->started) {
      state->started = true;
      if (v.is_undefined()) return std::nullopt;
      if (!v.is_dict()) raise(ErrorType::kTypeError, "Can only get item pairs from a mapping.");
      for (const auto& [key, value] : v.as_dict().entries()) state->items.push_back(Value::tuple({key, value}));
    }
    if (state->pos >= state->items.size()) return std::nullopt;
    return state->items[state->pos++];
  });
}

Value f_batch(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_batch", args, {"linecount", "fill_with"}, 1);
  const int64_t linecount = a.get_int(0, 0);
  const std::optional<Value> fill = a.has(1) && !a[1].is_none() ? std::optional<Value>(a[1]) : std::nullopt;
  auto state = std::make_shared<GeneratorState>();
  return make_generator("do_batch", [state, v, linecount, fill](Interpreter& interp) -> std::optional<Value> {
    if (!state->started) {
      state->started = true;
      ValueList batch;
      for (Value& item : interp.iterate(v)) {
        if (static_cast<int64_t>(batch.size()) == linecount) {
          state->items.push_back(Value::list(std::move(batch)));
          batch.clear();
        }
        batch.push_back(std::move(item));
      }
      if (!batch.empty()) {
        while (fill && static_cast<int64_t>(batch.size()) < linecount) batch.push_back(*fill);
        state->items.push_back(Value::list(std::move(batch)));
      }
    }
    if (state->pos >= state->items.size()) return std::nullopt;
    return state->items[state->pos++];
  });
}

Value f_slice(Interpreter&, const Value& v, CallArgs& args) {
  BoundArgs a("do_slice", args, {"slices", "fill_with"}, 1);
  const int64_t slices = a.get_int(0, 0);
  const std::optional<Value> fill = a.has(1) && !a[1].is_none() ? std::optional<Value>(a[1]) : std::nullopt;
  auto state = std::make_shared<GeneratorState>();
  return make_generator("sync_do_slice", [state, v, slices, fill](Interpreter& interp) -> std::optional<Value> {
    if (!state->started) {
      state->started = true;
      const ValueList seq = interp.iterate(v);
      const auto length = static_cast<int64_t>(seq.size());
      if (slices == 0) raise(ErrorType::kZeroDivisionError, "integer division or modulo by zero");
      const int64_t per_slice = length / slices;
      const int64_t with_extra = length % slices;
      int64_t offset = 0;
      for (int64_t n = 0; n < slices && slices > 0; ++n) {
        interp.count_step();
        const int64_t start = offset + n * per_slice;
        if (n < with_extra) ++offset;
        const int64_t end = offset + (n + 1) * per_slice;
        ValueList part(seq.begin() + start, seq.begin() + std::min(end, length));
        if (fill && n >= with_extra) part.push_back(*fill);
        state->items.push_back(Value::list(std::move(part)));
      }
    }
    if (state->pos >= state->items.size()) return std::nullopt;
    return state->items[state->pos++];
  });
}

}  // namespace

const std::unordered_map<std::string_view, FilterFn>& sequence_filters() {
  static const std::unordered_map<std::string_view, FilterFn> kFilters = {
      {"length", f_length},
      {"count", f_length},
      {"first", f_first},
      {"last", f_last},
      {"join", f_join},
      {"list", f_list},
      {"reverse", f_reverse},
      {"sort", f_sort},
      {"dictsort", f_dictsort},
      {"min", f_min},
      {"max", f_max},
      {"sum", f_sum},
      {"select", f_select},
      {"reject", f_reject},
      {"selectattr", f_selectattr},
      {"rejectattr", f_rejectattr},
      {"map", f_map},
      {"unique", f_unique},
      {"items", f_items},
      {"batch", f_batch},
      {"slice", f_slice},
  };
  return kFilters;
}

}  // namespace kiln::jinja
