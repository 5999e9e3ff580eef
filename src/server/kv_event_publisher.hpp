// Publishes a served model's KV cache events over ZeroMQ as vLLM does, for KV-aware routers:
// every batch goes out on a PUB socket as three frames (topic, sequence number as 8 bytes big
// endian, MessagePack payload: kv_event_encoding.hpp), and the last `buffer_steps` batches stay
// for replay: a subscriber that missed some sends the first sequence number it lacks (8 bytes,
// big endian) to the ROUTER socket at replay_endpoint and gets back (sequence, payload) pairs
// from there on, then (-1, empty). One thread of its own takes the batches from the pipeline and
// owns both sockets.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "kiln/continuous_batching_pipeline.hpp"
#include "server/kv_events_config.hpp"

namespace kiln::server {

class KvEventPublisher {
 public:
  // Opens the sockets here, so an address in use is an error at start (kiln::Error naming the
  // endpoint), then publishes until destroyed. Blocks are named by vLLM's sha256_cbor chain
  // seeded with $PYTHONHASHSEED ("0" when unset), as a vLLM replica with that seed names them.
  KvEventPublisher(std::shared_ptr<ContinuousBatchingPipeline> pipeline, const KvEventsConfig& config);
  ~KvEventPublisher();  // publishes what the engine recorded last, then closes the sockets
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

 private:
  struct State;
  void run();

  std::shared_ptr<ContinuousBatchingPipeline> pipeline_;
  std::unique_ptr<State> state_;  // the sockets and the replay buffer: the publishing thread's
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace kiln::server
