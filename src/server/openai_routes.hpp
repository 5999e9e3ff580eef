// The server's routes: the OpenAI API (/v1/models, /v1/chat/completions, /v1/completions), the
// vLLM-style extras (/tokenize, /detokenize), /health and /metrics. An edge: it checks the API
// key and the limits, reads the request, hands it to the pipeline and maps errors to
// OpenAI-style bodies; scheduling and sampling are the engine's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kiln/continuous_batching_pipeline.hpp"
#include "server/http_message.hpp"
#include "server/openai_request.hpp"
#include "server/server_metrics.hpp"

namespace kiln::server {

struct RouteOptions {
  std::string served_model_name;
  std::string api_key;           // "" : no key needed
  std::int64_t max_waiting = 0;  // requests waiting beyond this get 429 (0: no limit)
  RequestLimits limits;
};

class OpenAiRoutes {
 public:
  explicit OpenAiRoutes(RouteOptions options);

  // The loaded pipeline (any thread). Until then /health and the /v1 routes answer 503.
  void set_pipeline(std::shared_ptr<ContinuousBatchingPipeline> pipeline);
  Reply handle(const HttpRequest& request);

 private:
  std::shared_ptr<ContinuousBatchingPipeline> pipeline() const;  // null while loading
  std::shared_ptr<ContinuousBatchingPipeline> ready() const;     // throws 503 while loading
  void check_api_key(const HttpRequest& request) const;
  void check_model(const nlohmann::json& body) const;  // 400 when not a string, 404 when not ours
  std::string model_spec(const ContinuousBatchingPipeline& pipeline) const;
  std::string spec() const;  // GET /openapi.json
  HttpResponse models() const;
  Reply completion(Endpoint endpoint, const HttpRequest& request);
  HttpResponse tokenize(const HttpRequest& request) const;
  HttpResponse detokenize(const HttpRequest& request) const;
  HttpResponse metrics() const;

  const RouteOptions options_;
  const std::shared_ptr<ServerMetrics> metrics_;
  const std::int64_t started_;  // Unix seconds: the models' "created"
  mutable std::mutex mutex_;
  std::shared_ptr<ContinuousBatchingPipeline> pipeline_;
  std::string spec_;  // model_spec() of pipeline_
  std::atomic<std::uint64_t> next_request_id_{1};
};

}  // namespace kiln::server
