#include "server/kv_event_publisher.hpp"

#include <zmq.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "server/kv_event_encoding.hpp"
#include "server/zmq_socket.hpp"
#include "util/log.hpp"

namespace kiln::server {
namespace {

// How long the thread waits for events before it looks at the replay socket again.
constexpr std::chrono::milliseconds kReplayPollInterval{50};

// vLLM's rule: an address other processes connect to (a wildcard host, ipc, inproc) is bound;
// any other names a proxy to connect to.
void open(ZmqSocket& socket, const std::string& endpoint) {
  const bool bind = endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
                    endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://");
  bind ? socket.bind(endpoint) : socket.connect(endpoint);
}

// vLLM seeds its hash chain with PYTHONHASHSEED (random when unset; routers that compute hashes
// need it set, to 0 by default): replicas of kiln and of vLLM under one setting name blocks alike.
std::string block_hash_seed() {
  const char* seed = std::getenv("PYTHONHASHSEED");
  return seed != nullptr && *seed != '\0' ? seed : "0";
}

}  // namespace

struct KvEventPublisher::State {
  explicit State(std::string_view hash_seed) : names(hash_seed) {}

  ZmqContext context;  // the sockets live in it, and close before it
  ZmqSocket pub{context, ZMQ_PUB, "KV events publishing"};
  std::unique_ptr<ZmqSocket> replay;
  std::string topic;
  VllmBlockHashes names;
  std::size_t buffer_steps = 0;
  std::int64_t next_seq = 0;
  std::deque<std::pair<std::int64_t, std::string>> buffer;  // the last buffer_steps (seq, payload)

  void publish(const KvCacheEventBatch& batch) {
    const std::int64_t seq = next_seq++;
    std::string payload = encode_kv_event_batch(batch, names);
    const std::array<char, 8> seq_bytes = big_endian(seq);
    // A PUB socket drops what a slow subscriber cannot take (past the high-water mark): replay
    // is how such a subscriber catches up.
    pub.send({topic, {seq_bytes.data(), seq_bytes.size()}, payload});
    if (buffer_steps == 0) return;
    if (buffer.size() == buffer_steps) buffer.pop_front();
    buffer.emplace_back(seq, std::move(payload));
  }

  void serve_replays() {
    while (replay && replay->readable()) {
      const std::vector<std::string> request = replay->receive();  // identity, empty, start sequence
      if (request.size() != 3 || request[2].size() != 8) {
        spdlog::warn("KV events: a replay request of {} frames was ignored (expected the first sequence number)",
                     request.size());
        continue;
      }
      const std::int64_t start = from_big_endian(request[2]);
      for (const auto& [seq, payload] : buffer) {
        if (seq < start) continue;
        const std::array<char, 8> seq_bytes = big_endian(seq);
        replay->send({request[0], "", {seq_bytes.data(), seq_bytes.size()}, payload});
      }
      const std::array<char, 8> end = big_endian(-1);
      replay->send({request[0], "", {end.data(), end.size()}, ""});
    }
  }
};

KvEventPublisher::KvEventPublisher(std::shared_ptr<ContinuousBatchingPipeline> pipeline, const KvEventsConfig& config)
    : pipeline_(std::move(pipeline)), state_(std::make_unique<State>(block_hash_seed())) {
  State& s = *state_;
  s.topic = config.topic;
  s.buffer_steps = static_cast<std::size_t>(config.buffer_steps);
  s.pub.set(ZMQ_SNDHWM, config.hwm);
  s.pub.set(ZMQ_LINGER, 200);  // the last events of a clean shutdown still leave
  open(s.pub, config.endpoint);
  if (!config.replay_endpoint.empty()) {
    s.replay = std::make_unique<ZmqSocket>(s.context, ZMQ_ROUTER, "KV events replay");
    s.replay->set(ZMQ_LINGER, 0);
    open(*s.replay, config.replay_endpoint);
  }
  // The events name the tokens of every cached block: whoever can subscribe reads the prompts.
  spdlog::log(config.endpoint.find('*') != std::string::npos ? spdlog::level::warn : spdlog::level::info,
              "KV events on {}{}{}: they carry the token ids of cached prompts", config.endpoint,
              config.replay_endpoint.empty() ? "" : ", replay on ", config.replay_endpoint);
  thread_ = std::thread([this] { run(); });  // the sockets move to it (thread start is a full barrier)
}

KvEventPublisher::~KvEventPublisher() {
  stopping_ = true;
  thread_.join();
}

void KvEventPublisher::run() {
  while (!stopping_) {
    state_->serve_replays();
    for (const KvCacheEventBatch& batch : pipeline_->wait_kv_cache_events(kReplayPollInterval)) {
      state_->publish(batch);
    }
  }
  for (const KvCacheEventBatch& batch : pipeline_->wait_kv_cache_events(std::chrono::milliseconds(0))) {
    state_->publish(batch);
  }
}

}  // namespace kiln::server
