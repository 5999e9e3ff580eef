#include "util/json.hpp"

#include "util/file_io.hpp"

namespace kiln {

namespace {

template <typename J>
J parse_limited(std::string_view text, std::string_view origin, int max_depth) {
  const auto limit_depth = [&](int depth, typename J::parse_event_t event, J&) {
    const bool opens = event == J::parse_event_t::object_start || event == J::parse_event_t::array_start;
    if (opens && depth >= max_depth) fail("{}: JSON nests deeper than {} levels", origin, max_depth);
    return true;
  };
  try {
    return J::parse(text, limit_depth);
  } catch (const typename J::parse_error& e) {
    fail("{}: invalid JSON at byte {}: {}", origin, e.byte, e.what());
  } catch (const typename J::exception& e) {  // a number too large for a double (out_of_range 406)
    fail("{}: invalid JSON: {}", origin, e.what());
  }
}

}  // namespace

Json parse_json_text(std::string_view text, std::string_view origin, int max_depth) {
  return parse_limited<Json>(text, origin, max_depth);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, std::string_view origin, int max_depth) {
  return parse_limited<nlohmann::ordered_json>(text, origin, max_depth);
}

Json read_json_file(const std::filesystem::path& path) { return parse_json_text(read_file(path), path.string()); }

nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& path) {
  return parse_ordered_json_text(read_file(path), path.string());
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
