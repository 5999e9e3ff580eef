#include "util/json.hpp"

#include "util/file_io.hpp"

namespace kiln {

Json read_json_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    fail("{}: invalid JSON at byte {}: {}", path.string(), e.byte, e.what());
  } catch (const Json::exception& e) {  // a number too large for a double (out_of_range 406)
    fail("{}: invalid JSON: {}", path.string(), e.what());
  }
}

nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::parse_error& e) {
    fail("{}: invalid JSON at byte {}: {}", path.string(), e.byte, e.what());
  } catch (const nlohmann::ordered_json::exception& e) {  // a number too large for a double (out_of_range 406)
    fail("{}: invalid JSON: {}", path.string(), e.what());
  }
}

JsonFields::JsonFields(const Json& object, std::string origin) : object_(object), origin_(std::move(origin)) {
  if (!object_.is_object()) fail("{}: expected a JSON object, got {}", origin_, object_.type_name());
}

bool JsonFields::has(std::string_view key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const Json& JsonFields::require(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) fail("{}: missing required field '{}'", origin_, key);
  return *it;
}

void JsonFields::fail_field(std::string_view key, std::string_view problem) const {
  fail("{}: field '{}' {}", origin_, key, problem);
}

void JsonFields::fail_type(std::string_view key, std::string_view expected, const Json& value) const {
  fail("{}: field '{}' must be {}, got {} ({})", origin_, key, expected, value.type_name(), value.dump());
}

}  // namespace kiln
