// One request's output channel between the engine thread (the only writer) and the request's
// GenerationHandle (any reader thread). The writer never waits on a reader: each sequence's
// output accumulates here and read() takes what is new since the last read, so a reader that
// never reads costs memory bounded by the request's own length (max_new_tokens and the
// context), never a stalled step. One mutex guards the state; it is held only to copy in or out.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/generation_handle.hpp"
#include "util/clock.hpp"

namespace kiln::genai {

// How a handle's stop() / cancel() reach the engine thread (EngineLoop implements it).
class RequestControl {
 public:
  virtual ~RequestControl() = default;
  virtual void end_request(std::uint64_t request_id, GenerationStatus status) = 0;
};

class GenerationChannel {
 public:
  GenerationChannel(std::uint64_t request_id, std::weak_ptr<RequestControl> control);

  std::uint64_t request_id() const { return request_id_; }

  // Writer side (the engine thread).
  // New output of sequence `index`: ids (and their log-probabilities, when asked for) and text.
  void append(std::size_t index, std::span<const std::int32_t> ids, std::span<const TokenLogprob> logprobs,
              std::string_view text);
  // Sequence `index` ended: its reason and score.
  void finish_sequence(std::size_t index, GenerationFinishReason reason, float score);
  // Every sequence's output at once, replacing what was appended (beam search reports its
  // hypotheses only at the end, best first).
  void replace(std::vector<GenerationOutput> outputs);
  // The request has its first token, though it outputs none yet (beam search): the time to
  // first token is now.
  void note_first_token();
  // The request ended; readers wake up. Only the first call counts. `metrics` holds what the
  // engine counted (tokens, inter-token latencies, detokenization, speculation); the channel adds
  // the times it saw itself, from its creation (add_request): the first token, the end.
  void end(GenerationStatus status, std::string error = {}, PerfMetrics metrics = {});

  // Reader side (any thread).
  GenerationStatus status() const;
  std::string error() const;
  PerfMetrics perf_metrics() const;  // empty until the request has ended
  bool can_read() const;
  // Waits until something is unread or the request has ended (or `timeout` passes).
  GenerationOutputs read(std::optional<std::chrono::milliseconds> timeout);
  std::vector<GenerationOutput> read_all();
  // stop() / cancel() from the handle: passed to the engine thread if it still runs.
  void request_end(GenerationStatus status);
  // `callback` runs whenever read() may have something new or the request ended: on the engine
  // thread, or here at once when that is already so. {} removes it (a call already under way may
  // still finish, so the callback must not own what its caller frees).
  void set_on_change(std::function<void()> callback);

 private:
  struct Cursor {
    std::size_t ids = 0;
    std::size_t text_bytes = 0;
    bool end_reported = false;  // the sequence's finish reason was returned once
  };
  bool has_unread() const;  // mutex_ held
  // mutex_ not held: wakes readers and runs `callback` (on_change_ as copied under the lock).
  void notify_changed(const std::shared_ptr<const std::function<void()>>& callback);
  GenerationOutput& output(std::size_t index);  // mutex_ held; grows the sequences as needed

  const std::uint64_t request_id_;
  const std::weak_ptr<RequestControl> control_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::shared_ptr<const std::function<void()>> on_change_;  // shared: a copy is one count, not an allocation
  std::vector<GenerationOutput> outputs_;                   // [sequences] everything produced so far
  std::vector<Cursor> read_;                                // [sequences] how much of it read() has returned
  GenerationStatus status_ = GenerationStatus::RUNNING;
  std::string error_;
  const Stopwatch created_;
  double first_output_ms_ = 0;  // since creation; 0 until a token arrived
  PerfMetrics metrics_;
};

}  // namespace kiln::genai
