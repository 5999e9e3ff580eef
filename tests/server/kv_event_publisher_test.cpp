// The KV events publisher on a real pipeline while threads generate, read over ZeroMQ as a
// router reads it. Oracles: the stream's own contract (sequence numbers from 0 without a gap,
// "all blocks cleared" first, a removed block was stored, a stored block's parent is cached, no
// block stored twice), transformers' greedy tokens for every request, and replay handing back
// byte for byte the batches that went out live. The tsan test runs it under ThreadSanitizer:
// the engine thread, the publisher's thread, the generating threads and a replaying client.
#include "server/kv_event_publisher.hpp"

#include <gtest/gtest.h>
#include <zmq.h>

#include <atomic>
#include <map>
#include <msgpack.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../models/golden_checkpoint.hpp"
#include "server/zmq_socket.hpp"
#include "support/test_support.hpp"

namespace kiln::server {
namespace {

using namespace std::chrono_literals;

// Asks the replay socket for every batch from `start` on: (sequence number, payload) in order.
std::map<std::int64_t, std::string> replay_from(const std::string& endpoint, std::int64_t start) {
  const ZmqContext context;
  ZmqSocket dealer(context, ZMQ_DEALER, "test replay");
  dealer.set(ZMQ_LINGER, 0);
  dealer.connect(endpoint);
  const std::array<char, 8> first = big_endian(start);
  EXPECT_TRUE(dealer.send({"", {first.data(), first.size()}}));
  std::map<std::int64_t, std::string> batches;
  while (true) {
    // empty, sequence, payload
    const std::vector<std::string> frames = dealer.readable(30s) ? dealer.receive() : std::vector<std::string>{};
    if (frames.size() != 3) {
      ADD_FAILURE() << "a replay ended without its end marker (" << frames.size() << " frames)";
      break;
    }
    const std::int64_t seq = from_big_endian(frames[1]);
    if (seq == -1) break;
    EXPECT_TRUE(batches.empty() || seq == batches.rbegin()->first + 1) << "replay skipped to " << seq;
    batches.emplace(seq, frames[2]);
  }
  return batches;
}

const msgpack::object* field(const msgpack::object& map, std::string_view key) {
  for (const msgpack::object_kv& kv : std::span(map.via.map.ptr, map.via.map.size)) {
    if (kv.key.type == msgpack::type::STR && kv.key.as<std::string_view>() == key) return &kv.val;
  }
  return nullptr;
}

std::vector<std::string> hashes(const msgpack::object& event) {
  std::vector<std::string> out;
  for (const msgpack::object& h :
       std::span(field(event, "block_hashes")->via.array.ptr, field(event, "block_hashes")->via.array.size)) {
    out.emplace_back(h.via.bin.ptr, h.via.bin.size);
  }
  return out;
}

// What a subscriber knows is cached, rebuilt event by event; every event is checked against it.
struct CacheView {
  std::set<std::string> cached;
  bool cleared_first = false;
  std::size_t events = 0, stored = 0, removed = 0;

  void apply(const std::string& payload) {
    const msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size());
    const msgpack::object& batch = handle.get();
    ASSERT_EQ(batch.type, msgpack::type::ARRAY);
    ASSERT_EQ(batch.via.array.size, 3u);
    for (const msgpack::object& event :
         std::span(batch.via.array.ptr[1].via.array.ptr, batch.via.array.ptr[1].via.array.size)) {
      const auto type = field(event, "type")->as<std::string>();
      if (events++ == 0) cleared_first = type == "AllBlocksCleared";
      if (type == "AllBlocksCleared") {
        cached.clear();
      } else if (type == "BlockStored") {
        const msgpack::object* parent = field(event, "parent_block_hash");
        if (parent->type != msgpack::type::NIL) {
          EXPECT_TRUE(cached.contains(std::string(parent->via.bin.ptr, parent->via.bin.size)))
              << "a stored block's parent is not cached";
        }
        for (const std::string& h : hashes(event)) EXPECT_TRUE(cached.insert(h).second) << "a block stored twice";
        stored += hashes(event).size();
      } else {
        ASSERT_EQ(type, "BlockRemoved");
        for (const std::string& h : hashes(event)) EXPECT_EQ(cached.erase(h), 1u) << "a block removed uncached";
        removed += hashes(event).size();
      }
    }
  }
};

TEST(KvEventPublisher, ASubscriberFollowsTheCacheWhileThreadsGenerateAndReplayAgrees) {
  const auto golden = testing::load_golden_checkpoint("llama3_tiny");
  PipelineProperties properties;
  properties.context_tokens = 128;
  properties.kv_cache_sequences = 8;
  properties.kv_block_size = 4;
  properties.kv_cache_events = true;
  auto pipeline = std::make_shared<ContinuousBatchingPipeline>(
      golden.dir, SchedulerConfig{.max_num_batched_tokens = 64, .max_num_seqs = 8, .num_kv_blocks = 40}, "REFERENCE",
      properties);

  testing::TempDir dir;
  const KvEventsConfig config{.enabled = true,
                              .endpoint = "ipc://" + (dir.path() / "events").string(),
                              .replay_endpoint = "ipc://" + (dir.path() / "replay").string(),
                              .topic = "kv",
                              .buffer_steps = 100'000};
  const ZmqContext context;
  ZmqSocket subscriber(context, ZMQ_SUB, "test subscriber");
  subscriber.set(ZMQ_LINGER, 0);
  subscriber.set(ZMQ_RCVHWM, 0);  // unlimited: the test reads everything, however far behind TSan makes it
  subscriber.set(ZMQ_SUBSCRIBE, config.topic);

  std::map<std::int64_t, std::string> live;  // sequence number → payload, as it arrived
  std::vector<std::map<std::int64_t, std::string>> replays;
  std::atomic<bool> generating{true};
  std::thread reader;
  {
    KvEventPublisher publisher(pipeline, config);
    subscriber.connect(config.endpoint);
    reader = std::thread([&] {
      for (bool more = true; more;) {
        const bool was_generating = generating;
        if (!subscriber.readable(was_generating ? 100ms : 2s)) {
          more = was_generating;  // once the publisher has flushed, silence is the end
          continue;
        }
        const std::vector<std::string> frames = subscriber.receive();
        ASSERT_EQ(frames.size(), 3u);
        EXPECT_EQ(frames[0], config.topic);
        const std::int64_t seq = from_big_endian(frames[1]);
        EXPECT_TRUE(live.empty() || seq == live.rbegin()->first + 1) << "live stream skipped to " << seq;
        live.emplace(seq, frames[2]);
      }
    });
    std::thread replayer([&] {  // a router catching up from the start, again and again, meanwhile
      while (generating) {
        replays.push_back(replay_from(config.replay_endpoint, 0));
        std::this_thread::sleep_for(10ms);
      }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (std::size_t i = 0; i < 3 * golden.prompts.size(); ++i) {
          const auto& p = golden.prompts[(i + static_cast<std::size_t>(t)) % golden.prompts.size()];
          GenerationConfig greedy;
          greedy.max_new_tokens = 12;
          greedy.ignore_eos = true;
          const auto out =
              pipeline->add_request(static_cast<std::uint64_t>(t * 1000 + static_cast<int>(i)), p.ids, greedy)
                  ->read_all()[0];
          EXPECT_EQ(out.generated_ids, std::vector<std::int32_t>(p.greedy_ids.begin(), p.greedy_ids.begin() + 12));
        }
      });
    }
    for (std::thread& t : threads) t.join();
    generating = false;
    replayer.join();
  }  // the publisher sends what the engine recorded last as it goes
  reader.join();

  // The subscriber joined a moment after the publisher started: the replays fill in what it
  // missed, and wherever they overlap the live stream they must agree byte for byte.
  ASSERT_FALSE(live.empty());
  ASSERT_FALSE(replays.empty());
  std::map<std::int64_t, std::string> stream = live;
  std::size_t full_replays = 0;
  for (const auto& replay : replays) {
    if (replay.empty()) continue;  // asked before the first batch went out
    ++full_replays;
    EXPECT_EQ(replay.begin()->first, 0);
    for (const auto& [seq, payload] : replay) {
      const auto [at, inserted] = stream.emplace(seq, payload);
      EXPECT_TRUE(inserted || at->second == payload) << "replay differs from the live stream at " << seq;
    }
  }
  EXPECT_GT(full_replays, 0u);
  EXPECT_EQ(stream.rbegin()->first, live.rbegin()->first) << "the live stream ended early";
  ASSERT_EQ(stream.rbegin()->first + 1, static_cast<std::int64_t>(stream.size())) << "batches missing";

  CacheView view;
  for (const auto& [seq, payload] : stream) view.apply(payload);
  EXPECT_TRUE(view.cleared_first);
  EXPECT_GT(view.stored, 0u);
  EXPECT_GT(view.removed, 0u) << "the cache never evicted: the test's pool is too large";
  EXPECT_LE(view.cached.size(), 40u);
}

}  // namespace
}  // namespace kiln::server
