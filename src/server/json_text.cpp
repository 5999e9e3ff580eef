#include "server/json_text.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace kiln::server {

std::string dump(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // These bytes occur only inside JSON strings (keys and values), where an escape means the same.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kSeparators = {
      {{"\xC2\x85", "\\u0085"}, {"\xE2\x80\xA8", "\\u2028"}, {"\xE2\x80\xA9", "\\u2029"}}};
  for (const auto& [raw, escaped] : kSeparators) {
    for (std::size_t at = text.find(raw); at != std::string::npos; at = text.find(raw, at + escaped.size())) {
      text.replace(at, raw.size(), escaped);
    }
  }
  return text;
}

}  // namespace kiln::server
