// The server's routes: the OpenAI API (/v1/models, /v1/chat/completions, /v1/completions), the
// vLLM-style extras (/tokenize, /detokenize), /health and /metrics. An edge: it checks the API
// key and the limits, reads the request, hands it to the pipeline and maps errors to
// OpenAI-style bodies; scheduling and sampling are the engine's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/continuous_batching_pipeline.hpp"
#include "server/answer_parsers.hpp"
#include "server/chat_prompt.hpp"
#include "server/http_message.hpp"
#include "server/openai_request.hpp"
#include "server/server_metrics.hpp"
#include "server/tool_call_parser.hpp"
#include "tokenizer/chat_template.hpp"

namespace kiln::server {

// A served model as the routes know it.
struct ModelRoute {
  std::string name;
  AnswerParsers parsers;
};

struct RouteOptions {
  std::vector<ModelRoute> models;  // the served models; a request without `model` needs one
  std::string api_key{};           // "" : no key needed
  std::int64_t max_waiting = 0;    // requests waiting beyond this get 429 (0: no limit)
  RequestLimits limits{};
};

class OpenAiRoutes {
 public:
  explicit OpenAiRoutes(RouteOptions options);

  // A model of options.models, loaded (any thread); null unloads it. Until all are loaded
  // /health answers 503, and so do requests for a model still loading.
  void set_pipeline(const std::string& name, std::shared_ptr<ContinuousBatchingPipeline> pipeline);
  Reply handle(const HttpRequest& request);

 private:
  struct Served {
    std::string name;
    AnswerParsers parsers;
    std::shared_ptr<ServerMetrics> metrics;
    std::shared_ptr<ContinuousBatchingPipeline> pipeline;  // null while loading
    std::shared_ptr<const ChatTemplate> chat_template;     // null without a usable one
    std::string chat_template_problem;                     // why it is null, for the 400
  };
  std::vector<Served> served() const;  // a copy, under the lock
  // The model a request body names (the only one when it names none), loaded: 400 for a
  // `model` that is not a string or missing among several, 404 unknown, 503 still loading.
  Served target(const nlohmann::ordered_json& body) const;
  void check_api_key(const HttpRequest& request) const;
  std::string model_spec(const ContinuousBatchingPipeline& pipeline) const;
  std::string spec() const;  // GET /openapi.json
  HttpResponse health() const;
  HttpResponse models() const;
  Reply completion(Endpoint endpoint, const HttpRequest& request);
  // A chat request's prompt with its model's template (400 without one).
  ChatPrompt chat_prompt(const Served& model, const CompletionRequest& request) const;
  HttpResponse tokenize(const HttpRequest& request) const;
  HttpResponse detokenize(const HttpRequest& request) const;
  HttpResponse metrics() const;

  const RouteOptions options_;
  const std::int64_t started_;  // Unix seconds: the models' "created"
  mutable std::mutex mutex_;
  std::vector<Served> served_;  // in options_.models order
  std::string spec_;            // model_spec() of the first model, once loaded
  std::atomic<std::uint64_t> next_request_id_{1};
};

}  // namespace kiln::server
