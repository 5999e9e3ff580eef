#include "server/completion_job.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "server/openai_response.hpp"

namespace kiln::server {

using json = nlohmann::json;

namespace {

// A stream ends in error as vLLM's do: an event holding the OpenAI error object.
std::string error_event(const ApiError& error) { return "data: " + error.to_json() + "\n\n"; }

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
  if (request_.stream) chunk += choice_chunk(index, part, delta.logprobs);
  c.text += part.content;
  c.reasoning += part.reasoning;
  c.logprobs.insert(c.logprobs.end(), delta.logprobs.begin(), delta.logprobs.end());
  c.tokens += static_cast<std::int64_t>(delta.generated_ids.size());
  if (delta.finish_reason != GenerationFinishReason::NONE) c.finish = delta.finish_reason;
  if (request_.stream && c.finish != GenerationFinishReason::NONE && !c.closed) chunk += close_chunk(index);
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

std::string CompletionJob::choice_chunk(std::size_t index, const SplitText& text,
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
    if (text.content.empty() && text.reasoning.empty() && logprobs.empty()) return out;
    choice["delta"] = json::object();
    if (!text.reasoning.empty()) choice["delta"]["reasoning_content"] = text.reasoning;
    if (!text.content.empty() || text.reasoning.empty()) choice["delta"]["content"] = text.content;
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
  json choice = {{"index", index}, {"logprobs", nullptr}, {"finish_reason", finish_reason_name(c.finish)}};
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
    json choice = {{"index", i}, {"logprobs", nullptr}, {"finish_reason", finish_reason_name(c.finish)}};
    if (chat()) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
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
