#include "server/serve.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <thread>

#include "kiln/continuous_batching_pipeline.hpp"

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
  std::atomic<bool> stopped{false};  // a drain ended: the models not loaded yet are not needed
  std::thread loader([&] {
    try {
      for (const ServedModelOptions& m : options.models) {
        if (stopped) break;
        routes.set_pipeline(m.name,
                            std::make_shared<ContinuousBatchingPipeline>(m.dir, m.scheduler, m.device, m.properties));
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
  if (load_error) std::rethrow_exception(load_error);
}

}  // namespace kiln::server
