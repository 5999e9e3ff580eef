// Value construction, Python hashing for dict keys, and the default behaviour of objects.
#include "tokenizer/jinja/value.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "tokenizer/jinja/render_memory.hpp"

namespace kiln::jinja {

namespace {

// A payload shared by copies, weighed against the running render's memory while it lives.
template <typename T>
struct Weighed {
  Weighed(T p, uint32_t t, size_t b) : payload(std::move(p)), ticket(t), bytes(b) {}
  ~Weighed() {
    if (ticket != 0) RenderMemory::release(ticket, bytes);
  }
  Weighed(const Weighed&) = delete;
  Weighed& operator=(const Weighed&) = delete;

  T payload;
  uint32_t ticket;
  size_t bytes;
};

// One allocation, as make_shared makes: the pointer aliases the payload inside its Weighed.
template <typename T>
std::shared_ptr<const T> weighed_payload(T payload, size_t bytes) {
  auto weighed = std::make_shared<Weighed<T>>(std::move(payload), RenderMemory::acquire(bytes), bytes);
  return std::shared_ptr<const T>(weighed, &weighed->payload);
}

// A dict entry's slot and its node in the key index (key string, position, link, hash).
constexpr size_t kDictEntryBytes = sizeof(Dict::Entry) + 64;

}  // namespace

Value::Value() = default;

Value Value::undefined(std::string message, ErrorType error) {
  Value v;
  const size_t bytes = message.size();
  v.undefined_ = weighed_payload(UndefinedInfo{std::move(message), error}, bytes);
  return v;
}

Value Value::undefined_name(std::string_view name) { return undefined(fmt::format("'{}' is undefined", name)); }

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::boolean(bool b) {
  Value v = none();
  v.kind_ = Kind::kBool;
  v.scalar_.int_ = b ? 1 : 0;
  return v;
}

Value Value::integer(int64_t i) {
  Value v = none();
  v.kind_ = Kind::kInt;
  v.scalar_.int_ = i;
  return v;
}

Value Value::number(double d) {
  Value v = none();
  v.kind_ = Kind::kFloat;
  v.scalar_.float_ = d;
  return v;
}

Value Value::string(std::string s, bool safe) {
  Value v = none();
  v.kind_ = Kind::kString;
  if (!s.empty()) v.weighed_ = RenderMemory::acquire(s.size());
  v.string_ = std::move(s);
  v.safe_ = safe;
  return v;
}

Value Value::list(ValueList items) {
  Value v = none();
  v.kind_ = Kind::kList;
  const size_t bytes = items.size() * sizeof(Value);
  v.items_ = weighed_payload(std::move(items), bytes);
  return v;
}

Value Value::tuple(ValueList items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::kTuple;
  return v;
}

Value Value::dict(Dict d) {
  Value v = none();
  v.kind_ = Kind::kDict;
  const size_t bytes = d.size() * kDictEntryBytes;
  v.dict_ = weighed_payload(std::move(d), bytes);
  return v;
}

Value Value::object(std::shared_ptr<Object> o) {
  Value v = none();
  v.kind_ = Kind::kObject;
  v.object_ = std::move(o);
  return v;
}

double Value::as_float() const { return kind_ == Kind::kFloat ? scalar_.float_ : static_cast<double>(scalar_.int_); }

const UndefinedInfo& Value::undefined_info() const {
  static const UndefinedInfo kUnnamed;
  return undefined_ ? *undefined_ : kUnnamed;
}

const void* Value::identity() const {
  switch (kind_) {
    case Kind::kList:
    case Kind::kTuple: return items_.get();
    case Kind::kDict: return dict_.get();
    case Kind::kObject: return object_.get();
    case Kind::kUndefined: return undefined_.get();
    default: return nullptr;
  }
}

std::optional<std::string> hash_key(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kNone: return "N";
    case Value::Kind::kUndefined: return "U";  // Undefined hashes by its type: all undefined values are one key
    case Value::Kind::kBool:
    case Value::Kind::kInt: return fmt::format("i{}", key.as_int());
    case Value::Kind::kFloat: {
      const double d = key.as_float();
      // 2.0 == 2 in Python, so integral floats share the int's key.
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
        return fmt::format("i{}", static_cast<int64_t>(d));
      }
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return fmt::format("f{}", bits);
    }
    case Value::Kind::kString: return fmt::format("s{}", key.as_string());
    case Value::Kind::kTuple: {
      std::string out = "t";
      for (const Value& item : key.items()) {
        auto inner = hash_key(item);
        if (!inner) return std::nullopt;
        out += fmt::format("{}:{}", inner->size(), *inner);
      }
      return out;
    }
    case Value::Kind::kObject: return fmt::format("o{}", static_cast<const void*>(key.object_ptr().get()));
    case Value::Kind::kList:
    case Value::Kind::kDict: return std::nullopt;
  }
  return std::nullopt;
}

const Value* Dict::find(const Value& key) const {
  auto hashed = hash_key(key);
  if (!hashed) raise(ErrorType::kTypeError, "unhashable type: '{}'", type_name(key));
  auto it = index_.find(*hashed);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value* Dict::find(std::string_view key) const {
  std::string hashed = "s";
  hashed += key;
  auto it = index_.find(hashed);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void Dict::set(Value key, Value value) {
  auto hashed = hash_key(key);
  if (!hashed) raise(ErrorType::kTypeError, "unhashable type: '{}'", type_name(key));
  auto [it, inserted] = index_.emplace(std::move(*hashed), entries_.size());
  if (inserted) {
    entries_.emplace_back(std::move(key), std::move(value));
  } else {
    entries_[it->second].second = std::move(value);  // Python keeps the first key object
  }
}

std::string Object::object_type_repr() const { return fmt::format("{} object", type_name()); }

std::string Object::repr() const { return fmt::format("<{} object>", type_name()); }

std::optional<Value> Object::attribute(Interpreter&, std::string_view) { return std::nullopt; }

Value Object::call(Interpreter&, CallArgs) { raise(ErrorType::kTypeError, "'{}' object is not callable", type_name()); }

std::optional<Value> Object::next(Interpreter&) {
  raise(ErrorType::kTypeError, "'{}' object is not an iterator", type_name());
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return v.is_safe() ? "Markup" : "str";
    case Value::Kind::kList: return "list";
    case Value::Kind::kTuple: return "tuple";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kObject: return std::string(v.as_object().type_name());
  }
  return "object";
}

}  // namespace kiln::jinja
