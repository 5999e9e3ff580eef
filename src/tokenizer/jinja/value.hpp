// The engine's value type: the Python objects a chat template can see (None, bool, int, float,
// str, list, tuple, dict) plus Jinja's Undefined and opaque objects (namespaces, macros, loop
// contexts, generators). Lists, tuples and dicts are immutable once built, as the immutable
// sandbox requires, so copies share their storage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/jinja/error.hpp"
#include "tokenizer/jinja/render_memory.hpp"

namespace kiln::jinja {

class Value;
class Dict;
class Object;
class Interpreter;

using ValueList = std::vector<Value>;

// Arguments of a call, as Python splits them.
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Why a value is undefined: the message an UndefinedError (or SecurityError, for attributes the
// sandbox refuses) carries when the value is used for anything but printing, testing or looping.
struct UndefinedInfo {
  std::string message;
  ErrorType error = ErrorType::kUndefinedError;
};

class Value {
 public:
  enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict, kObject };

  Value();  // undefined, without a name
  // A copy copies the string and weighs it against the running render's memory (RenderMemory).
  Value(const Value& other);
  Value(Value&& other) noexcept;
  Value& operator=(const Value& other);
  Value& operator=(Value&& other) noexcept;
  ~Value();

  static Value undefined(std::string message, ErrorType error = ErrorType::kUndefinedError);
  static Value undefined_name(std::string_view name);  // "'name' is undefined"
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s, bool safe = false);  // safe: a Markup string
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value dict(Dict d);
  static Value object(std::shared_ptr<Object> o);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_integral() const { return kind_ == Kind::kInt || kind_ == Kind::kBool; }  // int or bool
  bool is_number() const { return is_integral() || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_sequence() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_object() const { return kind_ == Kind::kObject; }

  bool as_bool() const { return scalar_.int_ != 0; }
  int64_t as_int() const { return scalar_.int_; }  // int or bool
  double as_float() const;                         // any number
  const std::string& as_string() const { return string_; }
  bool is_safe() const { return safe_; }
  const ValueList& items() const { return *items_; }  // list or tuple
  const Dict& as_dict() const { return *dict_; }
  Object& as_object() const { return *object_; }
  const std::shared_ptr<Object>& object_ptr() const { return object_; }
  const UndefinedInfo& undefined_info() const;

  // Address of the shared payload, for `is sameas` on containers and objects.
  const void* identity() const;

 private:
  Kind kind_ = Kind::kUndefined;
  bool safe_ = false;
  uint32_t weighed_ = 0;  // the RenderMemory ticket string_'s bytes are weighed under; 0: none
  union {
    int64_t int_;
    double float_;
  } scalar_{0};
  std::string string_;
  std::shared_ptr<const ValueList> items_;
  std::shared_ptr<const Dict> dict_;
  std::shared_ptr<Object> object_;
  std::shared_ptr<const UndefinedInfo> undefined_;
};

// Copies and moves inline: they run for every value the interpreter passes around (a call each
// cost 7% of a render's instructions).
inline Value::Value(const Value& other)
    : kind_(other.kind_),
      safe_(other.safe_),
      weighed_(other.string_.empty() ? 0 : RenderMemory::acquire(other.string_.size())),
      scalar_(other.scalar_),
      string_(other.string_),
      items_(other.items_),
      dict_(other.dict_),
      object_(other.object_),
      undefined_(other.undefined_) {}

inline Value::Value(Value&& other) noexcept
    : kind_(other.kind_),
      safe_(other.safe_),
      weighed_(std::exchange(other.weighed_, 0)),
      scalar_(other.scalar_),
      string_(std::move(other.string_)),
      items_(std::move(other.items_)),
      dict_(std::move(other.dict_)),
      object_(std::move(other.object_)),
      undefined_(std::move(other.undefined_)) {}

inline Value& Value::operator=(const Value& other) {
  if (this != &other) *this = Value(other);
  return *this;
}

inline Value& Value::operator=(Value&& other) noexcept {
  if (this == &other) return *this;
  if (weighed_ != 0) RenderMemory::release(weighed_, string_.size());
  kind_ = other.kind_;
  safe_ = other.safe_;
  weighed_ = std::exchange(other.weighed_, 0);
  scalar_ = other.scalar_;
  string_ = std::move(other.string_);
  items_ = std::move(other.items_);
  dict_ = std::move(other.dict_);
  object_ = std::move(other.object_);
  undefined_ = std::move(other.undefined_);
  return *this;
}

inline Value::~Value() {
  if (weighed_ != 0) RenderMemory::release(weighed_, string_.size());
}

// Python's hash equality: equal keys (1, 1.0, True) map to the same string; nullopt when the
// value is unhashable (list, dict, objects other than the hashable ones).
std::optional<std::string> hash_key(const Value& key);

// An insertion-ordered dict with Python key semantics.
class Dict {
 public:
  using Entry = std::pair<Value, Value>;

  // nullptr when absent; a TypeError for unhashable keys.
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(Value key, Value value);

  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// Jinja and Python objects other than plain data: namespaces, macros, loop contexts, methods,
// generators. Each says how Python names and prints it and what its attributes are.
class Object : public std::enable_shared_from_this<Object> {
 public:
  virtual ~Object() = default;

  // type(x).__name__, as TypeError messages print it.
  virtual std::string_view type_name() const = 0;
  // jinja2's object_type_repr, used in "'X object' has no attribute 'y'".
  virtual std::string object_type_repr() const;
  virtual std::string repr() const;
  // obj.name; nullopt when the object has no such attribute.
  virtual std::optional<Value> attribute(Interpreter& interp, std::string_view name);

  virtual bool is_callable() const { return false; }
  virtual Value call(Interpreter& interp, CallArgs args);

  // Single-pass iterators (generators): the next item, or nullopt once exhausted.
  virtual bool is_iterator() const { return false; }
  virtual std::optional<Value> next(Interpreter& interp);
};

// Python's type(x).__name__ for any value.
std::string type_name(const Value& v);

}  // namespace kiln::jinja
