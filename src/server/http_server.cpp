#include "server/http_server.hpp"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cctype>
#include <list>

#include <fmt/format.h>

#include "server/api_error.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace kiln::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;

constexpr std::uint32_t kMaxHeaderBytes = 8192;  // request line and headers (Beast's default)

// A wakeup a coroutine can wait for: fire() (on the server's thread) ends the current wait, or
// the next one at once, so a fire between two waits is never lost.
class Wakeup {
 public:
  explicit Wakeup(const asio::any_io_executor& executor) : timer_(executor) {}
  void fire() {
    fired_ = true;
    timer_.cancel();
  }
  awaitable<void> wait() {
    if (!fired_) {
      timer_.expires_at(asio::steady_timer::time_point::max());
      beast::error_code ignored;
      co_await timer_.async_wait(asio::redirect_error(use_awaitable, ignored));
    }
    fired_ = false;
  }

 private:
  asio::steady_timer timer_;
  bool fired_ = false;
};

std::string_view view(beast::string_view text) { return {text.data(), text.size()}; }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

HttpRequest to_request(const http::request<http::string_body>& message) {
  HttpRequest request;
  request.method = std::string(view(message.method_string()));
  const std::string_view target = view(message.target());
  request.path = std::string(target.substr(0, target.find('?')));
  for (const auto& field : message)
    request.headers[lower(view(field.name_string()))] = std::string(view(field.value()));
  request.body = message.body();
  return request;
}

http::response<http::string_body> to_message(const HttpResponse& response, unsigned version, bool keep_alive) {
  http::response<http::string_body> message{static_cast<http::status>(response.status), version};
  message.set(http::field::server, "kiln");
  message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.set(name, value);
  message.keep_alive(keep_alive);
  message.body() = response.body;
  message.prepare_payload();
  return message;
}

// The Access-Control-Allow-Origin value for `origin`, "" when it is not allowed.
std::string allowed_origin(const std::vector<std::string>& allowed, const std::string& origin) {
  if (origin.empty()) return {};
  for (const std::string& a : allowed) {
    if (a == "*") return "*";
    if (a == origin) return origin;
  }
  return {};
}

void add_cors(HttpResponse& response, const std::string& origin) {
  if (origin.empty()) return;
  response.headers.emplace_back("Access-Control-Allow-Origin", origin);
  if (origin != "*") response.headers.emplace_back("Vary", "Origin");
}

HttpResponse preflight(const HttpRequest& request, const std::string& origin) {
  HttpResponse r;
  r.status = 204;
  r.content_type = "text/plain";
  add_cors(r, origin);
  r.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  const std::string asked = request.header("access-control-request-headers");
  r.headers.emplace_back("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked);
  r.headers.emplace_back("Access-Control-Max-Age", "600");
  return r;
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, Handler handler)
      : options_(std::move(options)), handler_(std::move(handler)), acceptor_(io_), signals_(io_) {}

  std::uint16_t listen() {
    beast::error_code ec;
    const auto address = asio::ip::make_address(options_.host, ec);
    if (ec) throw Error("serve: --host '" + options_.host + "' is not an IP address: " + ec.message());
    const tcp::endpoint endpoint{address, options_.port};
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      throw Error(ErrorKind::kIo, "serve: cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                                      ": " + ec.message());
    }
    return acceptor_.local_endpoint().port();
  }

  void run() {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    io_.run();
  }

  void stop() {
    asio::post(io_, [this] { begin_drain(); });
  }

  void stop_on_signals() {
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.async_wait([this](const beast::error_code& ec, int signal) {
      if (ec) return;
      spdlog::info("serve: signal {}: draining", signal);
      begin_drain();
    });
  }

 private:
  // One client connection; lives as long as its coroutine.
  struct Connection {
    explicit Connection(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    bool idle = true;                // waiting for a request (closed at once by a drain)
    std::shared_ptr<Wakeup> wakeup;  // set while a pending reply waits
    bool abandon = false;            // the drain timed out: give up the pending reply
  };

  awaitable<void> accept_loop() {
    for (;;) {
      beast::error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (draining_) co_return;
        // Out of file descriptors (or the like): wait a moment instead of spinning on the error.
        spdlog::warn("serve: accept failed: {}", ec.message());
        asio::steady_timer pause(io_, std::chrono::milliseconds(100));
        co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      auto connection = std::make_shared<Connection>(std::move(socket));
      connections_.push_back(connection);
      asio::co_spawn(io_, serve(connection), asio::detached);
    }
  }

  // Closes the connection's socket unless cancelled within the read timeout: the reads waiting
  // on it end with operation_aborted, and the connection with them.
  asio::steady_timer read_deadline(const std::shared_ptr<Connection>& connection) {
    asio::steady_timer timer(io_);
    if (options_.read_timeout.count() == 0) return timer;
    timer.expires_after(options_.read_timeout);
    timer.async_wait([connection](const beast::error_code& ec) {
      if (ec) return;  // cancelled: the request arrived in time
      beast::error_code ignored;
      connection->socket.close(ignored);
    });
    return timer;
  }

  awaitable<void> serve(std::shared_ptr<Connection> connection) {
    beast::flat_buffer buffer;
    for (bool keep_alive = true; keep_alive && !draining_;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(options_.max_body_bytes);
      parser.header_limit(kMaxHeaderBytes);
      connection->idle = true;
      beast::error_code ec;
      asio::steady_timer deadline = read_deadline(connection);
      co_await http::async_read_header(connection->socket, buffer, parser, asio::redirect_error(use_awaitable, ec));
      connection->idle = false;
      if (!ec && parser.get()[http::field::expect] == "100-continue") {
        http::response<http::empty_body> go_on{http::status::continue_, 11};
        co_await http::async_write(connection->socket, go_on, asio::redirect_error(use_awaitable, ec));
      }
      if (!ec) co_await http::async_read(connection->socket, buffer, parser, asio::redirect_error(use_awaitable, ec));
      deadline.cancel();
      if (ec == http::error::header_limit) {
        co_await send(
            *connection,
            error_response(
                ApiError(431, fmt::format("the request headers are larger than the limit of {} bytes", kMaxHeaderBytes),
                         "invalid_request_error")),
            11, false);
        break;
      }
      if (ec == http::error::body_limit) {
        co_await send(*connection,
                      error_response(ApiError::too_large("the request body is larger than the limit of " +
                                                         std::to_string(options_.max_body_bytes) + " bytes")),
                      11, false);
        break;
      }
      if (ec) {
        if (!connection->socket.is_open()) break;  // closed by the read deadline
        if (ec != http::error::end_of_stream && ec != asio::error::eof && ec != asio::error::operation_aborted &&
            ec != asio::error::connection_reset) {
          co_await send(*connection, error_response(ApiError::bad_request("malformed HTTP request: " + ec.message())),
                        11, false);
        }
        break;
      }
      const auto& message = parser.get();
      keep_alive = message.keep_alive();
      const HttpRequest request = to_request(message);
      const std::string origin = allowed_origin(options_.allowed_origins, request.header("origin"));
      const bool is_preflight = !options_.allowed_origins.empty() && request.method == "OPTIONS";
      Reply reply = is_preflight ? Reply(preflight(request, origin)) : handle(request);
      if (auto* response = std::get_if<HttpResponse>(&reply)) {
        keep_alive = keep_alive && !draining_;
        add_cors(*response, origin);
        if (!co_await send(*connection, *response, message.version(), keep_alive)) break;
      } else if (!co_await serve_pending(*connection, std::get<std::shared_ptr<PendingResponse>>(reply),
                                         message.version(), keep_alive && !draining_, origin)) {
        break;
      }
    }
    beast::error_code ignored;
    connection->socket.shutdown(tcp::socket::shutdown_both, ignored);
    connection->socket.close(ignored);
    connections_.remove(connection);
    if (draining_ && connections_.empty()) io_.stop();
  }

  Reply handle(const HttpRequest& request) {
    try {
      return handler_(request);
    } catch (const std::exception& e) {
      spdlog::error("serve: {} {}: {}", request.method, request.path, e.what());
      return error_response(ApiError::internal(e.what()));
    }
  }

  awaitable<bool> send(Connection& connection, const HttpResponse& response, unsigned version, bool keep_alive) {
    auto message = to_message(response, version, keep_alive);
    beast::error_code ec;
    co_await http::async_write(connection.socket, message, asio::redirect_error(use_awaitable, ec));
    co_return !ec;
  }

  // Sends a reply that arrives over time; false when the connection is done (the client left).
  awaitable<bool> serve_pending(Connection& connection, std::shared_ptr<PendingResponse> pending, unsigned version,
                                bool keep_alive, const std::string& origin) {
    auto wakeup = std::make_shared<Wakeup>(io_.get_executor());
    connection.wakeup = wakeup;
    connection.abandon = false;
    pending->set_wakeup([weak = std::weak_ptr<Wakeup>(wakeup), executor = io_.get_executor()] {
      asio::post(executor, [weak] {
        if (auto w = weak.lock()) w->fire();
      });
    });
    // A readable socket with nothing to read is a closed one: the client went away.
    auto watch = std::make_shared<bool>(true);  // false once this reply is done
    auto disconnected = std::make_shared<bool>(false);
    connection.socket.async_wait(tcp::socket::wait_read, [&socket = connection.socket, watch, disconnected,
                                                          weak = std::weak_ptr<Wakeup>(wakeup)](beast::error_code ec) {
      if (!*watch || ec == asio::error::operation_aborted) return;
      beast::error_code available_error;
      if (ec || socket.available(available_error) == 0 || available_error) {
        *disconnected = true;
        if (auto w = weak.lock()) w->fire();
      }
    });

    // The request timeout, when there is one, fires the same wakeup.
    auto expired = std::make_shared<bool>(false);
    asio::steady_timer deadline(io_);
    if (options_.request_timeout.count() > 0) {
      deadline.expires_after(options_.request_timeout);
      deadline.async_wait([expired, weak = std::weak_ptr<Wakeup>(wakeup)](beast::error_code ec) {
        if (ec) return;
        *expired = true;
        if (auto w = weak.lock()) w->fire();
      });
    }

    bool ok = true;
    std::optional<HttpResponse> head = pending->stream_head();
    if (head) add_cors(*head, origin);
    std::optional<http::response<http::empty_body>> head_message;
    beast::error_code ec;
    if (head) {
      head_message.emplace(static_cast<http::status>(head->status), version);
      head_message->set(http::field::server, "kiln");
      head_message->set(http::field::content_type, head->content_type);
      for (const auto& [name, value] : head->headers) head_message->set(name, value);
      head_message->keep_alive(keep_alive);
      head_message->chunked(true);
      http::response_serializer<http::empty_body> serializer{*head_message};
      co_await http::async_write_header(connection.socket, serializer, asio::redirect_error(use_awaitable, ec));
      ok = !ec;
    }
    while (ok) {
      Progress progress = *expired ? pending->expire() : pending->poll();
      if (progress.response) add_cors(*progress.response, origin);
      if (!progress.chunk.empty()) {
        co_await asio::async_write(connection.socket, http::make_chunk(asio::buffer(progress.chunk)),
                                   asio::redirect_error(use_awaitable, ec));
        if (ec) ok = false;
      }
      if (ok && progress.done) {
        if (head) {
          co_await asio::async_write(connection.socket, http::make_chunk_last(),
                                     asio::redirect_error(use_awaitable, ec));
          ok = !ec;
        } else if (progress.response) {
          ok = co_await send(connection, *progress.response, version, keep_alive);
        }
        break;
      }
      if (*disconnected || connection.abandon) ok = false;
      if (ok) co_await wakeup->wait();
    }
    *watch = false;
    deadline.cancel();
    beast::error_code ignored;
    connection.socket.cancel(ignored);
    connection.wakeup.reset();
    if (!ok) pending->abandon();
    co_return ok&& keep_alive && !*disconnected;
  }

  void begin_drain() {
    if (draining_) return;
    draining_ = true;
    beast::error_code ignored;
    acceptor_.close(ignored);
    signals_.cancel(ignored);
    for (const auto& connection : connections_) {
      if (connection->idle) connection->socket.cancel(ignored);
    }
    if (connections_.empty()) {
      io_.stop();
      return;
    }
    // Replies still in flight after the drain timeout are abandoned (their generations cancelled).
    drain_timer_ = std::make_unique<asio::steady_timer>(io_, options_.drain_timeout);
    drain_timer_->async_wait([this](beast::error_code ec) {
      if (ec) return;
      for (const auto& connection : connections_) {
        connection->abandon = true;
        if (connection->wakeup) connection->wakeup->fire();
        beast::error_code ignored;
        if (connection->idle) connection->socket.cancel(ignored);
      }
    });
  }

  HttpServerOptions options_;
  Handler handler_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  std::list<std::shared_ptr<Connection>> connections_;
  bool draining_ = false;
  std::unique_ptr<asio::steady_timer> drain_timer_;
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}
HttpServer::~HttpServer() = default;
std::uint16_t HttpServer::listen() { return impl_->listen(); }
void HttpServer::run() { impl_->run(); }
void HttpServer::stop() { impl_->stop(); }
void HttpServer::stop_on_signals() { impl_->stop_on_signals(); }

}  // namespace kiln::server
