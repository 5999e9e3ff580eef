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
#include "server/tool_call_parser.hpp"

namespace kiln::server {

// A chat request with tools: how its answers' calls are read.
struct ToolCalling {
  ToolCallFormat format = ToolCallFormat::kHermes;
  bool single_call = false;  // a named tool_choice, or parallel_tool_calls: false
  bool named = false;        // its finish reason is "stop", as OpenAI's is for a named choice
  std::string prefill;       // the start of a forced call, written by the prompt: read first
};

struct JobContext {
  std::string id;  // "chatcmpl-..." or "cmpl-..."
  std::string model;
  std::int64_t created = 0;  // Unix seconds
  Tokenizer tokenizer;
  std::shared_ptr<ServerMetrics> metrics;
  // Chat with a reasoning parser: split <think> blocks into reasoning_content; true when the
  // prompt itself opened one. nullopt: no split.
  std::optional<bool> reasoning_starts_open;
  std::optional<ToolCalling> tools;  // nullopt: the answer is content only
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
  struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;
  };
  struct Choice {
    std::string text;
    std::string reasoning;  // with a reasoning parser
    std::optional<ReasoningSplitter> splitter;
    std::unique_ptr<ToolCallParser> tool_parser;  // with tools
    ParsedOutput prefilled;                       // the forced call's start, sent with the first output
    std::vector<ToolCall> calls;
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
  std::string choice_chunk(std::size_t index, const SplitText& text, std::span<const ToolCallDelta> calls,
                           std::span<const TokenLogprob> logprobs);
  // The content of this output and its tool-call deltas, with the tool parser when there is one.
  ParsedOutput parse_tools(Choice& c, std::string content, bool last);
  std::string finish_reason(const Choice& c) const;
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
