// The HTTP server's view of a request and its reply, free of any HTTP library: routes and the
// OpenAI layer see only these, and http_server.cpp alone speaks the wire protocol.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kiln::server {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // the target without its query
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  // The header's value, "" when absent; `name` in lower case.
  std::string header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers{};  // extra ones (Retry-After, ...)
};

// What a pending response has for the client now.
struct Progress {
  std::string chunk;                     // a stream's bytes to send now
  std::optional<HttpResponse> response;  // a non-streaming reply, once it is ready
  bool done = false;                     // nothing more will come
};

// A reply that is not ready when its route returns: a generation in flight. The server polls it
// on the connection's thread each time its wakeup runs, sends what it gives, and abandons it when
// the client goes away, so the work it stands for stops and frees what it held.
class PendingResponse {
 public:
  virtual ~PendingResponse() = default;
  // Streams send `head` (status, type, headers) at once and then Progress::chunk as it comes;
  // others send Progress::response when it is done.
  virtual std::optional<HttpResponse> stream_head() const = 0;
  // `wake` may run on any thread whenever poll() may have something new. Set once, before polling.
  virtual void set_wakeup(std::function<void()> wake) = 0;
  virtual Progress poll() = 0;  // never blocks
  virtual void abandon() = 0;   // the client disconnected, or the server stops waiting
  // The request ran past the server's time limit: stop the work and say so (the last bytes of a
  // stream, or the whole response); done is true.
  virtual Progress expire() = 0;
};

using Reply = std::variant<HttpResponse, std::shared_ptr<PendingResponse>>;
using Handler = std::function<Reply(const HttpRequest&)>;

}  // namespace kiln::server
