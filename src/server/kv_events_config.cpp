#include "server/kv_events_config.hpp"

#include <set>

#include "util/error.hpp"

namespace kiln::server {

KvEventsConfig read_kv_events_config(const Json& object, const std::string& origin) {
  static const std::set<std::string> kFields = {
      "enable_kv_cache_events", "publisher", "endpoint", "replay_endpoint", "topic", "buffer_steps", "hwm"};
  if (!object.is_object()) fail("{}: must be a JSON object such as {{\"enable_kv_cache_events\": true}}", origin);
  const JsonFields f(object, origin);
  for (const auto& [key, value] : object.items()) {
    if (key == "max_queue_size") f.fail_field(key, "is not supported: kiln bounds its event queue itself");
    if (!kFields.contains(key)) f.fail_field(key, "is not a field of the KV events config");
  }
  KvEventsConfig c;
  const std::string publisher = f.get_or<std::string>("publisher", "zmq");
  if (publisher != "zmq" && publisher != "null") f.fail_field("publisher", "must be \"zmq\" or \"null\"");
  c.enabled = f.get_or<bool>("enable_kv_cache_events", false) && publisher == "zmq";
  c.endpoint = f.get_or<std::string>("endpoint", c.endpoint);
  c.replay_endpoint = f.get_or<std::string>("replay_endpoint", c.replay_endpoint);
  c.topic = f.get_or<std::string>("topic", c.topic);
  c.buffer_steps = f.get_or<std::int64_t>("buffer_steps", c.buffer_steps);
  c.hwm = f.get_or<std::int32_t>("hwm", c.hwm);
  if (c.endpoint.empty()) f.fail_field("endpoint", "must not be empty");
  if (c.buffer_steps < 0) f.fail_field("buffer_steps", "must be at least 0");
  if (c.hwm < 0) f.fail_field("hwm", "must be at least 0");
  return c;
}

}  // namespace kiln::server
