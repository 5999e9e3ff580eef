// A request in flight on a ContinuousBatchingPipeline, as OpenVINO GenAI names it: the caller's
// end of the request's output channel. The engine thread appends each step's tokens; the caller
// reads them at its own pace, from any thread, and can stop or cancel the request. A handle
// outlives its pipeline safely: after the pipeline is gone, reads return what was produced and
// stop()/cancel() do nothing. Destroying the last reference to a running request's handle cancels
// the request (nobody could read it), as in OpenVINO GenAI.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/api.hpp"
#include "kiln/decoded_results.hpp"

namespace kiln {

namespace genai {
class GenerationChannel;
}

enum class GenerationStatus : std::uint8_t {
  RUNNING,   // waiting for its turn or generating
  FINISHED,  // ended by itself: EOS, a stop token or string, or a length limit
  STOP,      // ended by stop(): what was generated is kept
  CANCEL,    // ended by cancel() (or its pipeline was destroyed first)
  FAILED,    // ended by an error; GenerationHandleImpl::error() says which
};

KILN_API const char* to_string(GenerationStatus status);

// One sequence's output: in read(), the part produced since the previous read; in read_all(),
// all of it.
struct GenerationOutput {
  std::vector<std::int32_t> generated_ids;
  // When GenerationConfig::logprobs > 0: one per id, with its most likely alternatives.
  std::vector<TokenLogprob> logprobs;
  // The sequence's text for those ids: whole UTF-8 characters, stop strings cut (a tail that might
  // still become a stop string is held back until the next tokens decide it).
  std::string text;
  float score = 0;  // summed log-probabilities (beam search: the length-penalised score)
  GenerationFinishReason finish_reason = GenerationFinishReason::NONE;
};

// By sequence index: 0 .. num_return_sequences - 1 (beam search: best first, reported at the end).
using GenerationOutputs = std::map<std::size_t, GenerationOutput>;

class KILN_API GenerationHandleImpl {
 public:
  explicit GenerationHandleImpl(std::shared_ptr<genai::GenerationChannel> channel);
  ~GenerationHandleImpl();
  GenerationHandleImpl(const GenerationHandleImpl&) = delete;
  GenerationHandleImpl& operator=(const GenerationHandleImpl&) = delete;

  std::uint64_t request_id() const;
  GenerationStatus get_status() const;
  // The reason of a FAILED request (empty otherwise).
  std::string error() const;
  // Once the request has ended (empty before): its token counts (num_prefilled_tokens is the
  // prompt less what the prefix cache held), its time to first token, inter-token latencies and
  // duration from add_request, and speculative decoding's counts.
  PerfMetrics get_perf_metrics() const;
  // True when read() would return at once with something new.
  bool can_read() const;
  // Blocks until there is output not yet read or the request has ended, and returns the new
  // output of each sequence that has any (empty once the request has ended and all was read).
  GenerationOutputs read();
  // As read(), waiting at most `timeout`: empty when nothing came.
  GenerationOutputs read_for(std::chrono::milliseconds timeout);
  // Blocks until the request has ended; every sequence's whole output, best first.
  std::vector<GenerationOutput> read_all();
  // Ends the request after its current step; what it generated is kept (status STOP).
  void stop();
  // Ends the request after its current step and frees its KV cache (status CANCEL).
  void cancel();
  void drop() { cancel(); }  // OpenVINO GenAI's older name
  // kiln's addition for event-loop callers (the HTTP server): `callback` runs whenever read() may
  // return something new or the request has ended, on the engine thread (or at once, here, when
  // that is already so). It must return at once: post to your own loop, never read or block in
  // it. {} removes it; a call already under way may still finish, so capture what it needs by
  // weak_ptr.
  void set_on_output(std::function<void()> callback);

 private:
  std::shared_ptr<genai::GenerationChannel> channel_;
};

using GenerationHandle = std::shared_ptr<GenerationHandleImpl>;

}  // namespace kiln
