#include "server/zmq_socket.hpp"

#include <zmq.h>

#include "util/error.hpp"

namespace kiln::server {

ZmqContext::ZmqContext() : context_(zmq_ctx_new()) {
  if (context_ == nullptr) fail("ZeroMQ: cannot make a context: {}", zmq_strerror(zmq_errno()));
}

ZmqContext::~ZmqContext() { zmq_ctx_term(context_); }

ZmqSocket::ZmqSocket(const ZmqContext& context, int type, std::string role)
    : socket_(zmq_socket(context.handle(), type)), role_(std::move(role)) {
  if (socket_ == nullptr) fail("ZeroMQ: cannot make the {} socket: {}", role_, zmq_strerror(zmq_errno()));
}

ZmqSocket::~ZmqSocket() { zmq_close(socket_); }

void ZmqSocket::set(int option, int value) { zmq_setsockopt(socket_, option, &value, sizeof value); }

void ZmqSocket::set(int option, std::string_view value) { zmq_setsockopt(socket_, option, value.data(), value.size()); }

void ZmqSocket::bind(const std::string& endpoint) {
  if (zmq_bind(socket_, endpoint.c_str()) != 0) {
    fail("ZeroMQ: cannot bind the {} socket to {}: {}", role_, endpoint, zmq_strerror(zmq_errno()));
  }
}

void ZmqSocket::connect(const std::string& endpoint) {
  if (zmq_connect(socket_, endpoint.c_str()) != 0) {
    fail("ZeroMQ: cannot connect the {} socket to {}: {}", role_, endpoint, zmq_strerror(zmq_errno()));
  }
}

bool ZmqSocket::send(std::initializer_list<std::string_view> frames) {
  std::size_t i = 0;
  for (const std::string_view frame : frames) {
    const int more = ++i < frames.size() ? ZMQ_SNDMORE : 0;
    if (zmq_send(socket_, frame.data(), frame.size(), more | ZMQ_DONTWAIT) < 0) return false;
  }
  return true;
}

bool ZmqSocket::readable(std::chrono::milliseconds wait) {
  zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
  return zmq_poll(&item, 1, static_cast<long>(wait.count())) > 0;
}

std::vector<std::string> ZmqSocket::receive() {
  std::vector<std::string> frames;
  int more = 1;
  while (more != 0) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, socket_, 0) < 0) {
      zmq_msg_close(&msg);
      break;
    }
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
  }
  return frames;
}

std::array<char, 8> big_endian(std::int64_t value) {
  std::array<char, 8> bytes{};
  for (int i = 7; i >= 0; --i, value >>= 8) bytes[static_cast<std::size_t>(i)] = static_cast<char>(value & 0xff);
  return bytes;
}

std::int64_t from_big_endian(std::string_view bytes) {
  std::uint64_t value = 0;
  for (const char c : bytes) value = value << 8 | static_cast<unsigned char>(c);
  return static_cast<std::int64_t>(value);
}

}  // namespace kiln::server
