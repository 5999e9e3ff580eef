#include "server/completion_job.hpp"

#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "server/openai_response.hpp"

namespace kiln::server {

using json = nlohmann::json;

namespace {

// A stream ends in error as vLLM's do: an event holding the OpenAI error object.
std::string error_event(const ApiError& error) { return "data: " + error.to_json() + "\n\n"; }

void append(ParsedOutput& into, ParsedOutput more) {
  into.content += more.content;
  for (ToolCallDelta& d : more.calls) into.calls.push_back(std::move(d));
}

// A delta as OpenAI streams it: a call's first says its id, type and name.
json tool_call_delta(const ToolCallDelta& d) {
  json function = {{"arguments", d.arguments}};
  if (d.name.empty()) return {{"index", d.index}, {"function", function}};
  function = {{"name", d.name}, {"arguments", d.arguments}};
  return {{"index", d.index}, {"id", d.id}, {"type", "function"}, {"function", function}};
}

}  // namespace

CompletionJob::CompletionJob(CompletionRequest request, std::vector<GenerationHandle> handles,
                             std::vector<std::string> echo_texts, JobContext context)
    : request_(std::move(request)),
      handles_(std::move(handles)),
      echo_texts_(std::move(echo_texts)),
      context_(std::move(context)),
      n_(static_cast<std::size_t>(request_.n)),
      choices_(handles_.size() * n_) {
  if (context_.reasoning_starts_open && chat()) {
    for (Choice& c : choices_) c.splitter.emplace(*context_.reasoning_starts_open);
  }
  if (context_.tools && chat()) {
    for (Choice& c : choices_) {
      c.tool_parser = make_tool_call_parser(context_.tools->format, context_.tools->single_call);
      c.prefilled = c.tool_parser->push(context_.tools->prefill);
    }
  }
}

CompletionJob::~CompletionJob() {
  // The handles cancel what still runs when they go; the wakeup must not outlive this job.
  for (const GenerationHandle& h : handles_) h->set_on_output({});
}

std::optional<HttpResponse> CompletionJob::stream_head() const {
  if (!request_.stream) return std::nullopt;
  HttpResponse head;
  head.content_type = "text/event-stream";
  head.headers = {{"Cache-Control", "no-cache"}};
  return head;
}

void CompletionJob::set_wakeup(std::function<void()> wake) {
  for (const GenerationHandle& h : handles_) h->set_on_output(wake);
}

void CompletionJob::abandon() {
  if (abandoned_) return;
  abandoned_ = true;
  for (const GenerationHandle& h : handles_) {
    h->set_on_output({});
    if (h->get_status() == GenerationStatus::RUNNING) {
      h->cancel();
      context_.metrics->record({}, "abort");
    }
  }
}

Progress CompletionJob::expire() {
  Progress progress;
  collect(progress.chunk);  // what was made in time is still sent
  abandon();
  const ApiError error = ApiError::timeout("the request ran past this server's time limit and was cancelled");
  progress.done = true;
  if (!request_.stream) {
    progress.response = error_response(error);
    return progress;
  }
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    if (!choices_[i].closed) progress.chunk += close_chunk(i);
  }
  progress.chunk += error_event(error);
  progress.chunk += kSseDone;
  return progress;
}

bool CompletionJob::all_ended() const {
  for (const GenerationHandle& h : handles_) {
    if (h->get_status() == GenerationStatus::RUNNING) return false;
  }
  return true;
}

Progress CompletionJob::poll() {
  Progress progress;
  // Whether they had all ended is read first: then this collect() gets their last output.
  const bool ended = all_ended();
  collect(progress.chunk);
  if (!ended) return progress;
  finish();
  progress.done = true;
  if (!request_.stream) {
    progress.response = failure_.empty() ? whole_response() : error_response(ApiError::internal(failure_));
    return progress;
  }
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    if (!choices_[i].closed) progress.chunk += close_chunk(i);
  }
  if (!failure_.empty()) progress.chunk += error_event(ApiError::internal(failure_));
  if (request_.include_usage) {
    json last = chunk_base();
    last["choices"] = json::array();
    std::int64_t completion = 0;
    for (const Choice& c : choices_) completion += c.tokens;
    last["usage"] = usage(prompt_tokens(), completion);
    progress.chunk += sse_event(last);
  }
  progress.chunk += kSseDone;
  return progress;
}

void CompletionJob::collect(std::string& chunk) {
  for (std::size_t p = 0; p < handles_.size(); ++p) {
    GenerationOutputs outputs = handles_[p]->read_for(std::chrono::milliseconds(0));
    for (const auto& [sequence, delta] : outputs) {
      // A greedy request's one sequence stands for all n of its choices.
      const bool copied = request_.config.num_return_sequences == 1;
      for (std::size_t j = copied ? 0 : sequence; j < (copied ? n_ : sequence + 1) && j < n_; ++j) {
        add_output(p * n_ + j, delta, chunk);
      }
    }
  }
}

void CompletionJob::add_output(std::size_t index, const GenerationOutput& delta, std::string& chunk) {
  Choice& c = choices_[index];
  SplitText part{{}, delta.text};
  if (c.splitter) {
    part = c.splitter->push(delta.text);
    if (delta.finish_reason != GenerationFinishReason::NONE) {
      const SplitText rest = c.splitter->flush();
      part.reasoning += rest.reasoning;
      part.content += rest.content;
    }
  }
  const bool last = delta.finish_reason != GenerationFinishReason::NONE;
  ParsedOutput parsed = parse_tools(c, std::move(part.content), last);
  part.content = std::move(parsed.content);
  for (const ToolCallDelta& d : parsed.calls) {
    if (!d.name.empty()) c.calls.push_back({d.id, d.name, {}});
    c.calls[d.index].arguments += d.arguments;
  }
  if (request_.stream) chunk += choice_chunk(index, part, parsed.calls, delta.logprobs);
  c.text += part.content;
  c.reasoning += part.reasoning;
  c.logprobs.insert(c.logprobs.end(), delta.logprobs.begin(), delta.logprobs.end());
  c.tokens += static_cast<std::int64_t>(delta.generated_ids.size());
  if (delta.finish_reason != GenerationFinishReason::NONE) c.finish = delta.finish_reason;
  if (request_.stream && c.finish != GenerationFinishReason::NONE && !c.closed) chunk += close_chunk(index);
}

ParsedOutput CompletionJob::parse_tools(Choice& c, std::string content, bool last) {
  if (!c.tool_parser) return {std::move(content), {}};
  ParsedOutput parsed = std::exchange(c.prefilled, {});
  append(parsed, c.tool_parser->push(content));
  if (last) append(parsed, c.tool_parser->finish());
  return parsed;
}

std::string CompletionJob::finish_reason(const Choice& c) const {
  const bool called = !c.calls.empty() && c.finish == GenerationFinishReason::STOP;
  return called && !context_.tools->named ? "tool_calls" : finish_reason_name(c.finish);
}

void CompletionJob::finish() {
  if (finished_) return;
  finished_ = true;
  for (std::size_t p = 0; p < handles_.size(); ++p) {
    const GenerationHandle& h = handles_[p];
    const GenerationStatus status = h->get_status();
    std::string reason = finish_reason_name(choices_[p * n_].finish);
    if (status == GenerationStatus::FAILED) {
      failure_ = h->error();
      reason = "error";
    }
    context_.metrics->record(h->get_perf_metrics(), reason);
  }
}

json CompletionJob::chunk_base() const {
  json base = {{"id", context_.id},
               {"object", chat() ? "chat.completion.chunk" : "text_completion"},
               {"created", context_.created},
               {"model", context_.model}};
  if (request_.include_usage) base["usage"] = nullptr;
  return base;
}

std::string CompletionJob::choice_chunk(std::size_t index, const SplitText& text, std::span<const ToolCallDelta> calls,
                                        std::span<const TokenLogprob> logprobs) {
  Choice& c = choices_[index];
  std::string out;
  json choice = {{"index", index}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  if (chat()) {
    if (!c.started) {
      c.started = true;
      json first = chunk_base();
      choice["delta"] = {{"role", "assistant"}, {"content", ""}};
      first["choices"] = json::array({choice});
      out += sse_event(first);
    }
    if (text.content.empty() && text.reasoning.empty() && calls.empty() && logprobs.empty()) return out;
    choice["delta"] = json::object();
    if (!text.reasoning.empty()) choice["delta"]["reasoning_content"] = text.reasoning;
    if (!text.content.empty() || (text.reasoning.empty() && calls.empty())) {
      choice["delta"]["content"] = text.content;
    }
    if (!calls.empty()) {
      json deltas = json::array();
      for (const ToolCallDelta& d : calls) deltas.push_back(tool_call_delta(d));
      choice["delta"]["tool_calls"] = std::move(deltas);
    }
    if (request_.logprobs) choice["logprobs"] = chat_logprobs(logprobs, request_.top_logprobs, context_.tokenizer);
  } else {
    std::string piece = text.content;
    std::size_t offset = c.text.size() + echo_texts_[index / n_].size();
    if (!c.started) {
      c.started = true;
      piece = echo_texts_[index / n_] + piece;
    }
    if (piece.empty() && logprobs.empty()) return out;
    choice["text"] = piece;
    if (request_.logprobs) {
      choice["logprobs"] = completion_logprobs(logprobs, request_.top_logprobs, context_.tokenizer, offset);
    }
  }
  json event = chunk_base();
  event["choices"] = json::array({choice});
  out += sse_event(event);
  return out;
}

std::string CompletionJob::close_chunk(std::size_t index) {
  Choice& c = choices_[index];
  c.closed = true;
  json choice = {{"index", index}, {"logprobs", nullptr}, {"finish_reason", finish_reason(c)}};
  if (chat()) {
    choice["delta"] = json::object();
  } else {
    choice["text"] = "";
  }
  json event = chunk_base();
  event["choices"] = json::array({choice});
  return sse_event(event);
}

std::int64_t CompletionJob::prompt_tokens() const {
  double total = 0;
  for (const GenerationHandle& h : handles_) {
    for (double n : h->get_perf_metrics().raw.num_input_tokens) total += n;
  }
  return static_cast<std::int64_t>(total);
}

HttpResponse CompletionJob::whole_response() const {
  json choices = json::array();
  std::int64_t completion = 0;
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    completion += c.tokens;
    json choice = {{"index", i}, {"logprobs", nullptr}, {"finish_reason", finish_reason(c)}};
    if (chat()) {
      // With tool calls and nothing else to say, content is null (as OpenAI sends it).
      choice["message"] = {{"role", "assistant"},
                           {"content", c.text.empty() && !c.calls.empty() ? json(nullptr) : json(c.text)}};
      if (!c.calls.empty()) {
        json calls = json::array();
        for (const ToolCall& call : c.calls) {
          calls.push_back({{"id", call.id},
                           {"type", "function"},
                           {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
        }
        choice["message"]["tool_calls"] = std::move(calls);
      }
      if (c.splitter) choice["message"]["reasoning_content"] = c.reasoning;
      if (request_.logprobs) choice["logprobs"] = chat_logprobs(c.logprobs, request_.top_logprobs, context_.tokenizer);
    } else {
      const std::string& echo = echo_texts_[i / n_];
      choice["text"] = echo + c.text;
      if (request_.logprobs) {
        choice["logprobs"] = completion_logprobs(c.logprobs, request_.top_logprobs, context_.tokenizer, echo.size());
      }
    }
    choices.push_back(std::move(choice));
  }
  const json body = {{"id", context_.id},           {"object", chat() ? "chat.completion" : "text_completion"},
                     {"created", context_.created}, {"model", context_.model},
                     {"choices", choices},          {"usage", usage(prompt_tokens(), completion)}};
  HttpResponse response;
  response.body = dump(body);
  return response;
}

}  // namespace kiln::server
