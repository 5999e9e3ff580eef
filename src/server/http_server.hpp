// HTTP/1.1 over Boost.Beast on one event-loop thread: every connection is a coroutine, so open
// streams cost a coroutine frame and a socket, never a thread, and 256 streams progress together.
// Requests go to one Handler; a PendingResponse is polled when its wakeup runs, and a client that
// disconnects mid-way (noticed by a wait for readability on its socket) has its reply abandoned.
//
// A pending reply that runs past the request timeout expires (PendingResponse::expire). With
// allowed origins, responses carry CORS headers and OPTIONS preflights are answered here.
//
// Shutdown drains: stop() closes the listener and idle keep-alive connections, lets replies in
// flight finish, abandons them after the drain timeout, and run() returns when none is left.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/http_message.hpp"

namespace kiln::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;  // 0: any free port (listen() says which)
  std::size_t max_body_bytes = 8u << 20;
  std::chrono::seconds drain_timeout{30};
  std::chrono::seconds request_timeout{0};  // a pending reply past this expires (0: never)
  // A connection that takes longer to send a whole request (or idles longer between requests)
  // is closed, so slow or silent clients cannot hold every socket (0: never).
  std::chrono::seconds read_timeout{60};
  // Origins allowed to call from a browser (CORS), "*" for any; none: CORS off (no headers, and
  // OPTIONS goes to the handler like any method).
  std::vector<std::string> allowed_origins;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port (the one chosen when options.port is 0). Throws
  // kiln::Error naming the address when it cannot bind.
  std::uint16_t listen();
  // Serves on the calling thread until stop() has drained every connection.
  void run();
  // From any thread (or a signal watcher): begin the drain described above.
  void stop();
  // stop() when the process gets SIGINT or SIGTERM (call before run()).
  void stop_on_signals();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::server
