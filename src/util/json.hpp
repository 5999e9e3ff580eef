// JSON helpers over nlohmann::json that turn a missing field or a wrong type into a kiln::Error
// naming the file and the field, instead of nlohmann's generic type_error.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace kiln {

using Json = nlohmann::json;

// Nesting deeper than this is refused wherever JSON comes from outside kiln: nlohmann's copy and
// dump, and kiln's walks over schemas and configs, recurse once per level, so 100,000 '[' (200 KB)
// would overflow the stack. Real files nest a few dozen levels at most.
inline constexpr int kMaxJsonDepth = 256;

// Parses JSON text that came from outside kiln. Malformed text, a number past a double and
// nesting past `max_depth` are each a kiln::Error naming `origin` (and the byte, for syntax).
Json parse_json_text(std::string_view text, std::string_view origin, int max_depth = kMaxJsonDepth);
nlohmann::ordered_json parse_ordered_json_text(std::string_view text, std::string_view origin,
                                               int max_depth = kMaxJsonDepth);

// Parses a JSON file, as parse_json_text with the file as origin.
Json read_json_file(const std::filesystem::path& path);

// The same, keeping object keys in document order as Python's json.load does: for data a
// template prints back, such as chat messages and tool schemas.
nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& path);

// A JSON object together with where it came from, for error messages: "config.json: field
// 'hidden_size' must be an integer, got string".
class JsonFields {
 public:
  JsonFields(const Json& object, std::string origin);

  bool has(std::string_view key) const;
  const Json& object() const { return object_; }
  const std::string& origin() const { return origin_; }

  // Required fields: throw when missing or of the wrong type.
  template <typename T>
  T get(std::string_view key) const {
    const Json& value = require(key);
    return convert<T>(key, value);
  }

  // Optional fields: the fallback when missing or null; an error when of the wrong type.
  template <typename T>
  T get_or(std::string_view key, T fallback) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    return convert<T>(key, *it);
  }

  template <typename T>
  std::optional<T> get_optional(std::string_view key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    return convert<T>(key, *it);
  }

  [[noreturn]] void fail_field(std::string_view key, std::string_view problem) const;

 private:
  const Json& require(std::string_view key) const;

  template <typename T>
  T convert(std::string_view key, const Json& value) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) fail_type(key, "a boolean", value);
    } else if constexpr (std::is_integral_v<T>) {
      if (!value.is_number_integer()) fail_type(key, "an integer", value);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!value.is_number()) fail_type(key, "a number", value);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!value.is_string()) fail_type(key, "a string", value);
    }
    return value.get<T>();
  }

  [[noreturn]] void fail_type(std::string_view key, std::string_view expected, const Json& value) const;

  const Json& object_;
  std::string origin_;
};

}  // namespace kiln
