// One /v1/chat/completions or /v1/completions request in flight: its generation handles (one
// per prompt, each with n sequences) and what has been sent. As a PendingResponse it turns each
// poll's new output into SSE chunks (stream: true) or, once every handle has ended, into the
// whole response; abandoning it cancels the generations, which frees their KV blocks at the
// engine's next step.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/generation_handle.hpp"
#include "kiln/tokenizer.hpp"
#include "server/http_message.hpp"
#include "server/openai_request.hpp"
#include "server/reasoning_splitter.hpp"
#include "server/server_metrics.hpp"

namespace kiln::server {

struct JobContext {
  std::string id;  // "chatcmpl-..." or "cmpl-..."
  std::string model;
  std::int64_t created = 0;  // Unix seconds
  Tokenizer tokenizer;
  std::shared_ptr<ServerMetrics> metrics;
  // Chat with a reasoning parser: split <think> blocks into reasoning_content; true when the
  // prompt itself opened one. nullopt: no split.
  std::optional<bool> reasoning_starts_open;
};

class CompletionJob final : public PendingResponse {
 public:
  // `echo_texts`: per prompt, the text an echoing completion starts with (empty otherwise).
  CompletionJob(CompletionRequest request, std::vector<GenerationHandle> handles, std::vector<std::string> echo_texts,
                JobContext context);
  ~CompletionJob() override;

  std::optional<HttpResponse> stream_head() const override;
  void set_wakeup(std::function<void()> wake) override;
  Progress poll() override;
  void abandon() override;
  Progress expire() override;

 private:
  struct Choice {
    std::string text;
    std::string reasoning;  // with a reasoning parser
    std::optional<ReasoningSplitter> splitter;
    std::vector<TokenLogprob> logprobs;
    std::int64_t tokens = 0;
    GenerationFinishReason finish = GenerationFinishReason::NONE;
    bool started = false;  // a stream sent its first chunk
    bool closed = false;   // a stream sent its finish_reason
  };
  bool chat() const { return request_.endpoint == Endpoint::kChat; }
  // Reads each handle's new output into choices_; appends stream chunks to `chunk`.
  void collect(std::string& chunk);
  void add_output(std::size_t index, const GenerationOutput& delta, std::string& chunk);
  bool all_ended() const;
  void finish();  // once every handle ended: records metrics, notes failure
  nlohmann::json chunk_base() const;
  std::string choice_chunk(std::size_t index, const SplitText& text, std::span<const TokenLogprob> logprobs);
  std::string close_chunk(std::size_t index);
  HttpResponse whole_response() const;
  std::int64_t prompt_tokens() const;

  CompletionRequest request_;
  std::vector<GenerationHandle> handles_;
  std::vector<std::string> echo_texts_;
  JobContext context_;
  std::size_t n_;                // sequences per prompt
  std::vector<Choice> choices_;  // [prompt * n + sequence]
  bool finished_ = false;
  std::string failure_;  // a handle's error, once finished
  bool abandoned_ = false;
};

}  // namespace kiln::server
