// JSON in and out of the engine: context values from parsed JSON (key order kept, as Python's
// json.loads keeps it), and Python's json.dumps for the tojson filter transformers defines.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

// Objects become dicts in document order; integers beyond 64 bits are a kiln::Error.
Value value_from_json(const nlohmann::ordered_json& json);

// Plain data back to JSON: tuples become arrays, dict keys become strings as json.dumps writes
// them; a kiln::Error for values JSON cannot hold (undefined, macros, namespaces, ...).
nlohmann::ordered_json value_to_json(const Value& value);

struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};

// json.dumps(value, ...): TypeError for values JSON cannot hold ("Object of type Undefined is
// not JSON serializable").
std::string dump_json(Interpreter& interp, const Value& value, const JsonDumpOptions& options);

}  // namespace kiln::jinja
