#include "server/http_message.hpp"

namespace kiln::server {

std::string HttpRequest::header(std::string_view name) const {
  const auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string() : it->second;
}

}  // namespace kiln::server
