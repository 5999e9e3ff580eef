// Oracle: HTTP/1.1 as RFC 9112 frames it (Content-Length and chunked bodies, keep-alive), read
// back by a plain socket client written here; and the server's promises: open streams never wait
// for a thread (256 at once all progress), a client that disconnects has its reply abandoned,
// and stop() lets replies in flight finish before run() returns.
#include "server/http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace kiln::server {
namespace {

using namespace std::chrono_literals;

// A stream whose chunks a test pushes from its own thread, as the engine does.
class FakeStream : public PendingResponse {
 public:
  std::optional<HttpResponse> stream_head() const override {
    HttpResponse head;
    head.content_type = "text/event-stream";
    return head;
  }
  void set_wakeup(std::function<void()> wake) override {
    std::lock_guard lock(mutex_);
    wake_ = std::move(wake);
  }
  Progress poll() override {
    std::lock_guard lock(mutex_);
    Progress p;
    for (; !chunks_.empty(); chunks_.pop_front()) p.chunk += chunks_.front();
    p.done = ended_;
    return p;
  }
  void abandon() override { abandoned = true; }
  Progress expire() override {
    expired = true;
    return {.chunk = "data: expired\n\n", .response = std::nullopt, .done = true};
  }
  void push(std::string chunk, bool end = false) {
    std::function<void()> wake;
    {
      std::lock_guard lock(mutex_);
      chunks_.push_back(std::move(chunk));
      ended_ = end;
      wake = wake_;
    }
    if (wake) wake();
  }
  std::atomic<bool> abandoned{false};
  std::atomic<bool> expired{false};

 private:
  std::mutex mutex_;
  std::deque<std::string> chunks_;
  bool ended_ = false;
  std::function<void()> wake_;
};

class Client {
 public:
  explicit Client(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Client() { close(); }
  bool connected() const { return connected_; }
  void send(const std::string& text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL), ssize_t(text.size()));
  }
  void post(const std::string& path, const std::string& body, bool keep_alive = false) {
    send("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
         (keep_alive ? "" : "\r\nConnection: close") + "\r\n\r\n" + body);
  }
  // Reads until `needle` has arrived (true) or the peer closes or times out (false).
  bool read_until(const std::string& needle) {
    while (received.find(needle) == std::string::npos) {
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return false;
      received.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
  }
  // Whether the server closes the connection (recv sees the end) before the receive timeout.
  bool closed_by_server() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return true;
      if (n < 0) return false;
      received.append(buffer, static_cast<std::size_t>(n));
    }
  }
  std::string read_all() {
    read_until(std::string(1, '\0'));  // never arrives: reads to the end
    return received;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  std::string received;

 private:
  int fd_;
  bool connected_ = false;
};

// The body of a chunked response: the chunks' payloads joined.
std::string dechunk(const std::string& response) {
  std::size_t at = response.find("\r\n\r\n");
  if (at == std::string::npos) return {};
  at += 4;
  std::string body;
  for (;;) {
    const std::size_t eol = response.find("\r\n", at);
    if (eol == std::string::npos) return body;
    const std::size_t size = std::stoul(response.substr(at, eol - at), nullptr, 16);
    if (size == 0) return body;
    body += response.substr(eol + 2, size);
    at = eol + 2 + size + 2;
  }
}

// A server on a free port, run on its own thread; the handler is the test's.
class Running {
 public:
  explicit Running(Handler handler, HttpServerOptions options = {}) {
    options.port = 0;
    server_ = std::make_unique<HttpServer>(options, std::move(handler));
    port = server_->listen();
    thread_ = std::thread([this] {
      server_->run();
      stopped = true;
    });
  }
  ~Running() {
    server_->stop();
    thread_.join();
  }
  void stop() { server_->stop(); }
  std::uint16_t port = 0;
  std::atomic<bool> stopped{false};

 private:
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 5s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

HttpResponse echo(const HttpRequest& request) {
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = request.method + " " + request.path + " " + request.header("x-test") + " " + request.body;
  return r;
}

TEST(HttpServer, PlainRepliesKeepTheConnection) {
  Running server(echo);
  Client client(server.port);
  ASSERT_TRUE(client.connected());
  client.send("GET /a?q=1 HTTP/1.1\r\nHost: x\r\nX-Test: one\r\n\r\n");
  ASSERT_TRUE(client.read_until("GET /a one "));
  client.post("/b", "body", false);
  const std::string all = client.read_all();
  EXPECT_NE(all.find("HTTP/1.1 200 OK"), std::string::npos);
  EXPECT_NE(all.find("POST /b  body"), std::string::npos) << all;
}

TEST(HttpServer, BodyOverTheLimitIs413) {
  HttpServerOptions options;
  options.max_body_bytes = 10;
  Running server(echo, options);
  Client client(server.port);
  client.post("/x", std::string(11, 'a'));
  const std::string all = client.read_all();
  EXPECT_EQ(all.rfind("HTTP/1.1 413", 0), 0u) << all;
  EXPECT_NE(all.find("limit of 10 bytes"), std::string::npos) << all;
}

// A client that sends half a request and stops, and one that connects and sends nothing, are
// closed after the read timeout; a client that sends its request in time is answered.
TEST(HttpServer, SlowAndSilentClientsAreClosedAfterTheReadTimeout) {
  HttpServerOptions options;
  options.read_timeout = 1s;
  Running server(echo, options);
  Client slow(server.port), silent(server.port), prompt(server.port);
  slow.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf");
  prompt.send("GET /a HTTP/1.1\r\nHost: x\r\nX-Test: one\r\n\r\n");
  ASSERT_TRUE(prompt.read_until("GET /a one "));
  EXPECT_TRUE(slow.closed_by_server());
  EXPECT_EQ(slow.received, "") << "no reply to half a request";
  EXPECT_TRUE(silent.closed_by_server());
  EXPECT_TRUE(prompt.closed_by_server()) << "an idle keep-alive connection is closed too";
  Client after(server.port);
  after.post("/b", "body");
  EXPECT_NE(after.read_all().find("POST /b  body"), std::string::npos) << "the server goes on";
}

TEST(HttpServer, HeadersOverTheLimitAre431) {
  Running server(echo);
  Client client(server.port);
  client.send("GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n");
  const std::string all = client.read_all();
  EXPECT_EQ(all.rfind("HTTP/1.1 431", 0), 0u) << all;
  EXPECT_NE(all.find("limit of 8192 bytes"), std::string::npos) << all;
}

TEST(HttpServer, HandlerExceptionIs500AndTheServerGoesOn) {
  Running server([](const HttpRequest& r) -> Reply {
    if (r.path == "/boom") throw std::runtime_error("boom");
    return echo(r);
  });
  Client bad(server.port);
  bad.post("/boom", "");
  EXPECT_EQ(bad.read_all().rfind("HTTP/1.1 500", 0), 0u);
  Client good(server.port);
  good.post("/fine", "");
  EXPECT_EQ(good.read_all().rfind("HTTP/1.1 200", 0), 0u);
}

TEST(HttpServer, StreamsChunksAsTheyCome) {
  auto stream = std::make_shared<FakeStream>();
  Running server([&](const HttpRequest&) -> Reply { return stream; });
  Client client(server.port);
  client.post("/s", "");
  stream->push("data: 1\n\n");
  ASSERT_TRUE(client.read_until("data: 1\n\n"));  // sent before the stream ends
  stream->push("data: 2\n\n", true);
  const std::string all = client.read_all();
  EXPECT_NE(all.find("Transfer-Encoding: chunked"), std::string::npos) << all;
  EXPECT_NE(all.find("Content-Type: text/event-stream"), std::string::npos) << all;
  EXPECT_EQ(dechunk(all), "data: 1\n\ndata: 2\n\n");
  EXPECT_FALSE(stream->abandoned);
}

TEST(HttpServer, ClientThatLeavesAbandonsItsReply) {
  auto stream = std::make_shared<FakeStream>();
  Running server([&](const HttpRequest&) -> Reply { return stream; });
  Client client(server.port);
  client.post("/s", "");
  stream->push("data: 1\n\n");
  ASSERT_TRUE(client.read_until("data: 1"));
  client.close();
  EXPECT_TRUE(eventually([&] { return stream->abandoned.load(); }));
}

TEST(HttpServer, TwoHundredFiftySixStreamsAllProgressAtOnce) {
  constexpr int kStreams = 256;
  std::mutex mutex;
  std::vector<std::shared_ptr<FakeStream>> streams;
  Running server([&](const HttpRequest&) -> Reply {
    auto s = std::make_shared<FakeStream>();
    s->push("first\n");
    std::lock_guard lock(mutex);
    streams.push_back(s);
    return s;
  });
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kStreams; ++i) {
    clients.push_back(std::make_unique<Client>(server.port));
    clients.back()->post("/s", "");
  }
  // Every stream has sent its first chunk while none has ended.
  for (auto& c : clients) ASSERT_TRUE(c->read_until("first\n"));
  {
    std::lock_guard lock(mutex);
    ASSERT_EQ(streams.size(), std::size_t(kStreams));
    for (auto& s : streams) s->push("last\n", true);
  }
  for (auto& c : clients) EXPECT_EQ(dechunk(c->read_all()), "first\nlast\n");
}

TEST(HttpServer, StopDrainsRepliesInFlight) {
  auto stream = std::make_shared<FakeStream>();
  Running server([&](const HttpRequest& r) -> Reply {
    if (r.path == "/s") return stream;
    return echo(r);
  });
  Client idle(server.port);  // a keep-alive connection between requests
  idle.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(idle.read_until("GET /a"));
  Client busy(server.port);
  busy.post("/s", "");
  stream->push("data: 1\n\n");
  ASSERT_TRUE(busy.read_until("data: 1"));
  server.stop();
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(server.stopped);                                             // the stream in flight holds the drain
  EXPECT_EQ(idle.read_all().find("GET /a"), idle.received.find("GET /a"));  // closed without more
  stream->push("data: 2\n\n", true);
  EXPECT_EQ(dechunk(busy.read_all()), "data: 1\n\ndata: 2\n\n");
  EXPECT_TRUE(eventually([&] { return server.stopped.load(); }));
  EXPECT_FALSE(Client(server.port).connected());  // no longer listening
}

TEST(HttpServer, DrainTimeoutAbandonsWhatIsLeft) {
  auto stream = std::make_shared<FakeStream>();
  HttpServerOptions options;
  options.drain_timeout = std::chrono::seconds(0);
  Running server([&](const HttpRequest&) -> Reply { return stream; }, options);
  Client client(server.port);
  client.post("/s", "");
  stream->push("data: 1\n\n");
  ASSERT_TRUE(client.read_until("data: 1"));
  server.stop();
  EXPECT_TRUE(eventually([&] { return server.stopped.load(); }));
  EXPECT_TRUE(stream->abandoned);
}

TEST(HttpServer, AReplyPastTheRequestTimeoutExpires) {
  auto stream = std::make_shared<FakeStream>();
  HttpServerOptions options;
  options.request_timeout = std::chrono::seconds(1);
  Running server([&](const HttpRequest&) -> Reply { return stream; }, options);
  Client client(server.port);
  client.post("/s", "");
  stream->push("data: 1\n\n");  // then nothing: the generation never ends by itself
  EXPECT_EQ(dechunk(client.read_all()), "data: 1\n\ndata: expired\n\n");
  EXPECT_TRUE(stream->expired);
}

TEST(HttpServer, CorsOnlyForAllowedOrigins) {
  HttpServerOptions options;
  options.allowed_origins = {"https://app.example"};
  Running server(echo, options);
  Client preflight(server.port);
  preflight.send(
      "OPTIONS /v1/models HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n"
      "Access-Control-Request-Headers: authorization\r\nConnection: close\r\n\r\n");
  const std::string answer = preflight.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 204", 0), 0u) << answer;
  EXPECT_NE(answer.find("Access-Control-Allow-Origin: https://app.example"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Access-Control-Allow-Headers: authorization"), std::string::npos) << answer;
  Client allowed(server.port);
  allowed.send("GET /a HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n");
  EXPECT_NE(allowed.read_all().find("Access-Control-Allow-Origin: https://app.example"), std::string::npos);
  Client other(server.port);
  other.send("GET /a HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(other.read_all().find("Access-Control-Allow-Origin"), std::string::npos);
}

TEST(HttpServer, NoCorsUnlessAsked) {
  Running server(echo);
  Client client(server.port);
  client.send("OPTIONS /a HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n");
  const std::string answer = client.read_all();
  EXPECT_NE(answer.find("OPTIONS /a"), std::string::npos) << answer;  // the handler's, not a preflight
  EXPECT_EQ(answer.find("Access-Control-Allow-Origin"), std::string::npos) << answer;
}

}  // namespace
}  // namespace kiln::server
