// Where a served model publishes its KV cache events (kiln/kv_cache_events.hpp), read from the
// JSON object vLLM's --kv-events-config takes, with its names and defaults, so a router set up
// for vLLM replicas subscribes to kiln's unchanged:
//   {"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:5557",
//    "replay_endpoint": "tcp://*:5558", "topic": "kv-events", "buffer_steps": 10000, "hwm": 100000}
#pragma once

#include <cstdint>
#include <string>

#include "util/json.hpp"

namespace kiln::server {

struct KvEventsConfig {
  bool enabled = false;
  // A ZeroMQ address: one with "*", "::", ipc:// or inproc:// is bound, any other is connected to
  // (vLLM's rule: a stable publisher binds, a volatile one connects to a proxy).
  std::string endpoint = "tcp://*:5557";
  std::string replay_endpoint;         // empty: no replay socket
  std::string topic;                   // the first frame of every message ("" matches every subscriber)
  std::int64_t buffer_steps = 10'000;  // batches kept for replay
  std::int32_t hwm = 100'000;          // the publishing socket's send high-water mark (messages)
};

// Throws kiln::Error naming `origin` and the field: an unknown one, a wrong type or a bad value.
KvEventsConfig read_kv_events_config(const Json& object, const std::string& origin);

}  // namespace kiln::server
