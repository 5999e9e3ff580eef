#include "server/serve.hpp"

#include <exception>
#include <memory>
#include <thread>

#include "kiln/continuous_batching_pipeline.hpp"

namespace kiln::server {

void serve(const ServeOptions& options) {
  OpenAiRoutes routes(options.routes);
  HttpServer http(options.http, [&routes](const HttpRequest& request) { return routes.handle(request); });
  const std::uint16_t port = http.listen();
  http.stop_on_signals();
  if (options.on_listening) options.on_listening(port);

  std::exception_ptr load_error;
  std::thread loader([&] {
    try {
      routes.set_pipeline(std::make_shared<ContinuousBatchingPipeline>(options.model_dir, options.scheduler,
                                                                       options.device, options.properties));
      if (options.on_ready) options.on_ready();
    } catch (...) {
      load_error = std::current_exception();
      http.stop();
    }
  });
  http.run();
  loader.join();
  routes.set_pipeline(nullptr);  // the engine stops; requests still in flight end as cancelled
  if (load_error) std::rethrow_exception(load_error);
}

}  // namespace kiln::server
