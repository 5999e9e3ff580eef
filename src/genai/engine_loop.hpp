// The engine thread: the one owner of an Engine (model, KV pool, scheduler, requests). It steps
// while work exists and sleeps when there is none. Other threads reach it only through its
// command queue (add a request, end one) and read results from each request's
// GenerationChannel, so no caller ever runs inside a step and a slow reader never delays one.
// No callback runs on this thread: text and tokens go to the channels, and streamers run on
// their callers' threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "genai/engine.hpp"
#include "genai/generation_channel.hpp"
#include "kiln/generation_handle.hpp"
#include "kiln/kv_cache_events.hpp"

namespace kiln::genai {

// What the loop reports after each step (get_metrics()).
struct LoopMetrics {
  std::int64_t requests = 0;  // not yet ended, queued ones included
  std::int64_t running = 0;   // admitted by the scheduler
  std::int64_t waiting = 0;   // queued, or not admitted yet (preempted ones too)
  std::int64_t num_kv_blocks = 0;
  std::int64_t used_kv_blocks = 0;
  std::int64_t max_used_kv_blocks = 0;
  double sum_kv_usage = 0;  // over the steps that ran the model, of used / total, for the average
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefix_cache_queries = 0;    // prompt tokens looked up
  std::int64_t prefix_cache_hits = 0;       // of those, found
  std::int64_t prompt_tokens = 0;           // of requests admitted
  std::int64_t computed_prompt_tokens = 0;  // of those, computed (the rest came from a cache)
  std::int64_t generated_tokens = 0;        // committed, over every sequence
  double step_ms = 0;                       // time inside steps
};

class EngineLoop : public RequestControl, public std::enable_shared_from_this<EngineLoop> {
 public:
  // Builds the engine and starts its thread. Make it with std::make_shared: handles reach it
  // through weak references.
  EngineLoop(models::LanguageModel& model, EngineOptions options);
  ~EngineLoop() override;  // shut_down()
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  // Stops and joins the thread; requests not yet ended end as CANCEL and free their KV blocks.
  // The owner calls it before the model goes away: a handle's stop() may briefly hold the last
  // reference to the loop, so its destructor alone could run after the model's.
  void shut_down();

  // Validates on the calling thread (throws kiln::Error naming the field or limit: the prompt
  // too long for the context, a bad config, a request id already in flight) and queues the
  // request for the engine thread.
  GenerationHandle add_request(std::uint64_t request_id, std::vector<std::int32_t> prompt,
                               const GenerationConfig& config);
  // From a handle's stop() / cancel(): ends the request at the next step boundary.
  void end_request(std::uint64_t request_id, GenerationStatus status) override;

  // Waits until the engine thread has finished one more step (returns at once when idle).
  void wait_for_step();
  // The KV cache events of the steps since the last call (EngineOptions::kv_cache_events), one
  // batch per step that had any; waits up to `timeout` for one (at once when shut down).
  std::vector<KvCacheEventBatch> wait_kv_cache_events(std::chrono::milliseconds timeout);
  bool has_non_finished_requests() const;
  LoopMetrics metrics() const;
  const Engine& engine() const { return engine_; }  // only for what construction fixed

 private:
  struct Add {
    std::uint64_t request_id = 0;
    std::vector<std::int32_t> prompt;
    GenerationConfig config;
    std::shared_ptr<GenerationChannel> channel;
  };
  struct End {
    std::uint64_t request_id = 0;
    GenerationStatus status = GenerationStatus::CANCEL;
  };
  using Command = std::variant<Add, End>;

  // The engine thread's own state about each request it admitted.
  struct Tracked {
    RequestId engine_id = 0;
    std::shared_ptr<GenerationChannel> channel;
    GenerationStatus ended_by = GenerationStatus::RUNNING;  // STOP / CANCEL when a handle asked
    std::vector<std::size_t> sent_ids;                      // [sequences] ids appended to the channel
    std::vector<std::size_t> sent_text;                     // [sequences] text bytes appended
  };

  void run();
  void apply_all(std::deque<Command>& commands);
  void apply(Command& command);
  void step_engine();
  // Appends each request's new output to its channel; ends and forgets finished requests.
  void publish();
  void fail_all(const std::string& why);
  void end_tracked(std::uint64_t request_id, GenerationStatus status, const std::string& error);
  void update_metrics(double step_ms);
  // Queues the events the engine recorded, as one batch.
  void collect_kv_cache_events();

  Engine engine_;
  std::map<std::uint64_t, Tracked> tracked_;  // engine thread only
  struct Ended {
    std::uint64_t request_id = 0;
    std::shared_ptr<GenerationChannel> channel;
    GenerationStatus status = GenerationStatus::FINISHED;
    std::string error;  // FAILED only
    PerfMetrics metrics;
  };
  std::vector<Ended> ended_;  // this step's finished requests, ended after the metrics are published

  mutable std::mutex mutex_;         // guards everything below
  std::condition_variable wake_;     // commands arrived, or shut down
  std::condition_variable stepped_;  // a step ended (steps_ grew)
  std::condition_variable kv_events_ready_;
  std::deque<Command> commands_;
  std::set<std::uint64_t> live_ids_;  // added and not yet ended: duplicate ids are refused
  bool busy_ = false;                 // the engine had unfinished requests after the last step
  bool stopping_ = false;
  std::int64_t steps_ = 0;
  LoopMetrics metrics_;
  // Bounded: a reader that stops reading loses the oldest batches, never the engine's memory.
  std::deque<KvCacheEventBatch> kv_events_;
  bool kv_events_overflowed_ = false;  // since the last read (warned once)
  std::thread thread_;
};

}  // namespace kiln::genai
