// A ZeroMQ socket with kiln's errors, and the 8-byte big-endian sequence numbers of vLLM's KV
// event wire (kv_event_publisher.hpp). One thread uses a socket at a time; it may move to
// another thread across a full barrier (starting the thread), as ZeroMQ allows.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::server {

// A ZeroMQ context: its sockets must be closed before it ends.
class ZmqContext {
 public:
  ZmqContext();
  ~ZmqContext();
  ZmqContext(const ZmqContext&) = delete;
  ZmqContext& operator=(const ZmqContext&) = delete;
  void* handle() const { return context_; }

 private:
  void* context_;
};

class ZmqSocket {
 public:
  // `role` names the socket in errors ("publishing", "replay").
  ZmqSocket(const ZmqContext& context, int type, std::string role);
  ~ZmqSocket();
  ZmqSocket(const ZmqSocket&) = delete;
  ZmqSocket& operator=(const ZmqSocket&) = delete;

  void set(int option, int value);
  void set(int option, std::string_view value);
  // Throw kiln::Error naming the role, the endpoint and ZeroMQ's reason.
  void bind(const std::string& endpoint);
  void connect(const std::string& endpoint);
  // Sends the frames as one message without waiting; false when the socket refused it.
  bool send(std::initializer_list<std::string_view> frames);
  // Whether a message can be received, waiting up to `wait` for one.
  bool readable(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Every frame of the next message (waits for one).
  std::vector<std::string> receive();

 private:
  void* socket_;
  std::string role_;
};

std::array<char, 8> big_endian(std::int64_t value);
std::int64_t from_big_endian(std::string_view bytes);

}  // namespace kiln::server
