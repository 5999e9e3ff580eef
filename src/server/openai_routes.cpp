#include "server/openai_routes.hpp"

#include <chrono>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "server/completion_job.hpp"
#include "server/openai_response.hpp"
#include "util/error.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_hex(std::size_t digits) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  while (out.size() < digits) out += fmt::format("{:016x}", rng());
  return out.substr(0, digits);
}

HttpResponse json_response(const json& body, int status = 200) {
  HttpResponse r;
  r.status = status;
  r.body = dump(body);
  return r;
}

// Compares without an early exit, so response time does not reveal how much of a key matched.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// A kiln::Error from the pipeline: the caller's fault unless it is a broken invariant.
ApiError from_error(const Error& e) {
  return e.kind() == ErrorKind::kInternal ? ApiError::internal(e.what()) : ApiError::bad_request(e.what());
}

}  // namespace

OpenAiRoutes::OpenAiRoutes(RouteOptions options)
    : options_(std::move(options)),
      metrics_(std::make_shared<ServerMetrics>(options_.served_model_name)),
      started_(unix_seconds()) {}

void OpenAiRoutes::set_pipeline(std::shared_ptr<ContinuousBatchingPipeline> pipeline) {
  std::lock_guard lock(mutex_);
  pipeline_ = std::move(pipeline);
}

std::shared_ptr<ContinuousBatchingPipeline> OpenAiRoutes::pipeline() const {
  std::lock_guard lock(mutex_);
  return pipeline_;
}

std::shared_ptr<ContinuousBatchingPipeline> OpenAiRoutes::ready() const {
  auto p = pipeline();
  if (!p) throw ApiError::unavailable("the model is still loading");
  return p;
}

Reply OpenAiRoutes::handle(const HttpRequest& request) {
  try {
    const std::string& path = request.path;
    const auto route = [&](const char* method, const char* route_path) {
      if (path != route_path) return false;
      if (request.method != method) throw ApiError::method_not_allowed(request.method);
      return true;
    };
    if (path.rfind("/v1/", 0) == 0) check_api_key(request);
    if (route("GET", "/health")) {
      if (!pipeline()) return json_response({{"status", "loading"}}, 503);
      return json_response({{"status", "ok"}});
    }
    if (route("GET", "/v1/models")) return models();
    if (route("POST", "/v1/chat/completions")) return completion(Endpoint::kChat, request);
    if (route("POST", "/v1/completions")) return completion(Endpoint::kCompletions, request);
    if (route("POST", "/tokenize")) return tokenize(request);
    if (route("POST", "/detokenize")) return detokenize(request);
    if (route("GET", "/metrics")) return metrics();
    throw ApiError::not_found("no route " + request.method + " " + path);
  } catch (const ApiError& e) {
    return error_response(e);
  } catch (const Error& e) {
    return error_response(from_error(e));
  }
}

void OpenAiRoutes::check_api_key(const HttpRequest& request) const {
  if (options_.api_key.empty()) return;
  const std::string given = request.header("authorization");
  const std::string prefix = "Bearer ";
  if (given.rfind(prefix, 0) != 0 || !same_secret(given.substr(prefix.size()), options_.api_key)) {
    throw ApiError::unauthorized();
  }
}

HttpResponse OpenAiRoutes::models() const {
  const auto p = ready();
  const json model = {{"id", options_.served_model_name},
                      {"object", "model"},
                      {"created", started_},
                      {"owned_by", "kiln"},
                      {"max_model_len", p->get_max_context_tokens()}};
  return json_response({{"object", "list"}, {"data", json::array({model})}});
}

Reply OpenAiRoutes::completion(Endpoint endpoint, const HttpRequest& request) {
  const auto p = ready();
  const json body = parse_json_body(request.body);
  RequestLimits limits = options_.limits;  // max_tokens: at most the context
  const std::int64_t context_tokens = p->get_max_context_tokens();
  if (limits.max_tokens == 0 || limits.max_tokens > context_tokens) limits.max_tokens = context_tokens;
  CompletionRequest r = parse_completion_request(endpoint, body, p->get_config(), limits);
  if (!r.model.empty() && r.model != options_.served_model_name) throw ApiError::model_not_found(r.model);
  for (const auto& [id, bias] : r.config.logit_bias) {
    if (!p->get_tokenizer().has_id(id)) {
      throw ApiError::bad_request(fmt::format("'logit_bias' names {}, which is not a token id of this model", id),
                                  "logit_bias");
    }
  }
  if (options_.max_waiting > 0 && p->get_metrics().waiting_requests >= options_.max_waiting) {
    throw ApiError::overloaded(
        fmt::format("{} requests are waiting already (the limit); retry later", options_.max_waiting));
  }
  std::vector<GenerationHandle> handles;  // a failure below cancels the ones already added
  std::vector<std::string> echo;
  if (endpoint == Endpoint::kChat) {
    handles.push_back(p->add_request(next_request_id_++, r.messages, r.config));
    echo.emplace_back();
  } else {
    for (const Prompt& prompt : r.prompts) {
      if (const auto* text = std::get_if<std::string>(&prompt)) {
        handles.push_back(p->add_request(next_request_id_++, *text, r.config));
        echo.push_back(r.echo ? *text : std::string());
      } else {
        const auto& ids = std::get<std::vector<std::int32_t>>(prompt);
        handles.push_back(p->add_request(next_request_id_++, ids, r.config));
        echo.push_back(r.echo ? p->get_tokenizer().decode(ids) : std::string());
      }
    }
  }
  JobContext context{.id = (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + random_hex(24),
                     .model = options_.served_model_name,
                     .created = unix_seconds(),
                     .tokenizer = p->get_tokenizer(),
                     .metrics = metrics_};
  return std::make_shared<CompletionJob>(std::move(r), std::move(handles), std::move(echo), std::move(context));
}

HttpResponse OpenAiRoutes::tokenize(const HttpRequest& request) const {
  const auto p = ready();
  const json body = parse_json_body(request.body);
  const Tokenizer& tokenizer = p->get_tokenizer();
  const auto flag = [&](const char* name, bool fallback) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw ApiError::bad_request(fmt::format("'{}' must be true or false", name), name);
    return it->get<bool>();
  };
  std::vector<std::int32_t> ids;
  if (body.contains("messages")) {
    // The messages as a chat request renders them (the template adds its own special tokens).
    json chat = body;
    chat.erase("prompt");
    const CompletionRequest r = parse_completion_request(Endpoint::kChat, chat, p->get_config(), {});
    const std::string text = tokenizer.apply_chat_template(r.messages, flag("add_generation_prompt", true));
    ids = tokenizer.encode(text, flag("add_special_tokens", false));
  } else {
    const auto prompt = body.find("prompt");
    if (prompt == body.end() || !prompt->is_string()) {
      throw ApiError::bad_request("'prompt' (a string) or 'messages' is required", "prompt");
    }
    ids = tokenizer.encode(prompt->get<std::string>(), flag("add_special_tokens", true));
  }
  return json_response({{"tokens", ids}, {"count", ids.size()}, {"max_model_len", p->get_max_context_tokens()}});
}

HttpResponse OpenAiRoutes::detokenize(const HttpRequest& request) const {
  const auto p = ready();
  const json body = parse_json_body(request.body);
  const auto tokens = body.find("tokens");
  if (tokens == body.end() || !tokens->is_array()) {
    throw ApiError::bad_request("'tokens' (an array of token ids) is required", "tokens");
  }
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    const json& id = (*tokens)[i];
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || !p->get_tokenizer().has_id(id.get<std::int32_t>())) {
      throw ApiError::bad_request(fmt::format("'tokens[{}]' is not a token id of this model", i), "tokens");
    }
    ids.push_back(id.get<std::int32_t>());
  }
  return json_response({{"prompt", p->get_tokenizer().decode(ids)}});
}

HttpResponse OpenAiRoutes::metrics() const {
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4";
  const auto p = pipeline();
  r.body = metrics_->prometheus(p ? p->get_metrics() : PipelineMetrics{});
  return r;
}

}  // namespace kiln::server
