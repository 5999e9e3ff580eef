#include "server/serve.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "kiln/continuous_batching_pipeline.hpp"
#include "server/kv_event_publisher.hpp"

namespace kiln::server {

void serve(const ServeOptions& options) {
  RouteOptions route_options = options.routes;
  route_options.models.clear();
  for (const ServedModelOptions& m : options.models) route_options.models.push_back({m.name, m.parsers});
  OpenAiRoutes routes(route_options);
  HttpServer http(options.http, [&routes](const HttpRequest& request) { return routes.handle(request); });
  const std::uint16_t port = http.listen();
  http.stop_on_signals();
  if (options.on_listening) options.on_listening(port);

  std::exception_ptr load_error;
  std::atomic<bool> stopped{false};                           // a drain ended: the models not loaded yet are not needed
  std::vector<std::unique_ptr<KvEventPublisher>> publishers;  // the loader's until it is joined
  std::thread loader([&] {
    try {
      for (const ServedModelOptions& m : options.models) {
        if (stopped) break;
        PipelineProperties properties = m.properties;
        properties.kv_cache_events = m.kv_events.enabled;
        auto pipeline = std::make_shared<ContinuousBatchingPipeline>(m.dir, m.scheduler, m.device, properties);
        if (m.kv_events.enabled) {
          publishers.push_back(std::make_unique<KvEventPublisher>(pipeline, m.kv_events));
        }
        routes.set_pipeline(m.name, std::move(pipeline));
        if (options.on_ready) options.on_ready(m.name);
      }
    } catch (...) {
      load_error = std::current_exception();
      http.stop();
    }
  });
  http.run();
  stopped = true;
  loader.join();  // waits for a load in progress (a pipeline cannot stop half-built)
  // The engines stop; requests still in flight end as cancelled.
  for (const ServedModelOptions& m : options.models) routes.set_pipeline(m.name, nullptr);
  publishers.clear();  // each publishes its engine's last events; the last pipelines go with them
  if (load_error) std::rethrow_exception(load_error);
}

}  // namespace kiln::server
