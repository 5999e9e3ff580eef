#include "server/api_error.hpp"

#include <nlohmann/json.hpp>

#include "server/json_text.hpp"

namespace kiln::server {

ApiError::ApiError(int status, std::string message, std::string type, std::string param, std::string code)
    : std::runtime_error(std::move(message)),
      status_(status),
      type_(std::move(type)),
      param_(std::move(param)),
      code_(std::move(code)) {}

ApiError ApiError::bad_request(std::string message, std::string param) {
  return {400, std::move(message), "invalid_request_error", std::move(param)};
}
ApiError ApiError::unauthorized() {
  return {401,
          "Incorrect API key provided: send it as 'Authorization: Bearer <key>'",
          "invalid_request_error",
          {},
          "invalid_api_key"};
}
ApiError ApiError::not_found(std::string message) { return {404, std::move(message), "invalid_request_error"}; }
ApiError ApiError::model_not_found(const std::string& model) {
  return {404, "The model '" + model + "' does not exist (GET /v1/models lists the served ones)",
          "invalid_request_error", "model", "model_not_found"};
}
ApiError ApiError::method_not_allowed(const std::string& method, const std::string& allowed) {
  ApiError e{405, "Method " + method + " is not allowed on this route (" + allowed + " is)", "invalid_request_error"};
  e.headers_ = {{"Allow", allowed}};
  return e;
}
ApiError ApiError::too_large(std::string message) { return {413, std::move(message), "invalid_request_error"}; }
ApiError ApiError::overloaded(std::string message) {
  ApiError e{429, std::move(message), "rate_limit_error"};
  e.headers_ = {{"Retry-After", "1"}};
  return e;
}
ApiError ApiError::internal(std::string message) { return {500, std::move(message), "server_error"}; }
ApiError ApiError::unavailable(std::string message) { return {503, std::move(message), "server_error"}; }
ApiError ApiError::timeout(std::string message) { return {504, std::move(message), "server_error", {}, "timeout"}; }

std::string ApiError::to_json() const {
  const auto nullable = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  const nlohmann::json body = {
      {"error", {{"message", what()}, {"type", type_}, {"param", nullable(param_)}, {"code", nullable(code_)}}}};
  return dump(body);
}

HttpResponse error_response(const ApiError& error) {
  HttpResponse response;
  response.status = error.status();
  response.body = error.to_json();
  response.headers = error.headers();
  return response;
}

}  // namespace kiln::server
