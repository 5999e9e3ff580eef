// OpenAI-style errors: {"error": {"message", "type", "param", "code"}} with the HTTP status real
// clients map to exception types (the openai package raises BadRequestError for 400,
// AuthenticationError for 401, NotFoundError for 404, RateLimitError for 429). Thrown by the
// request parsers and routes; the router turns it into the response.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "server/http_message.hpp"

namespace kiln::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string type, std::string param = {}, std::string code = {});

  // 400: the request is wrong; `param` names the field at fault.
  static ApiError bad_request(std::string message, std::string param = {});
  static ApiError unauthorized();                             // 401, code invalid_api_key
  static ApiError not_found(std::string message);             // 404 (a route)
  static ApiError model_not_found(const std::string& model);  // 404, code model_not_found
  static ApiError method_not_allowed(const std::string& method, const std::string& allowed);  // 405 (Allow)
  static ApiError too_large(std::string message);                                             // 413
  static ApiError overloaded(std::string message);                                            // 429 (with Retry-After)
  static ApiError internal(std::string message);                                              // 500
  static ApiError unavailable(std::string message);                                           // 503
  static ApiError timeout(std::string message);                                               // 504, code timeout

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  std::string to_json() const;  // the body, without a trailing newline
  // Headers the status calls for (Allow on 405, Retry-After on 429).
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }

 private:
  int status_;
  std::string type_;
  std::string param_;  // "" is null
  std::string code_;   // "" is null
  std::vector<std::pair<std::string, std::string>> headers_;
};

HttpResponse error_response(const ApiError& error);

}  // namespace kiln::server
