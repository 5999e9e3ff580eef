// `kiln serve` as a library call: listen at once (so /health answers 503 while the models load),
// load them on a second thread, serve until SIGINT or SIGTERM, then drain.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "kiln/llm_pipeline.hpp"
#include "kiln/scheduler_config.hpp"
#include "server/http_server.hpp"
#include "server/openai_routes.hpp"
#include "server/serve_config.hpp"

namespace kiln::server {

struct ServeOptions {
  std::vector<ServedModelOptions> models;  // loaded in order; the routes' model names are theirs
  HttpServerOptions http;
  RouteOptions routes;
  // Called once the socket listens, with its port (the one chosen when http.port is 0).
  std::function<void(std::uint16_t port)> on_listening;
  std::function<void(const std::string& name)> on_ready;  // called as each model has loaded
};

// Returns after a drain. Throws kiln::Error when the address cannot be bound or the model does
// not load (the message names which).
void serve(const ServeOptions& options);

}  // namespace kiln::server
