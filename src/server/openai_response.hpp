// The pieces of OpenAI's response bodies that chunks and whole responses share: log-probability
// objects (chat's `content` list and completions' parallel arrays), finish reasons, usage, and
// the SSE framing.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/decoded_results.hpp"
#include "kiln/tokenizer.hpp"
#include "server/json_text.hpp"

namespace kiln::server {

// "stop", "length", or "abort" (cancelled: the client left or the server stopped waiting).
const char* finish_reason_name(GenerationFinishReason reason);

// Chat: [{"token", "logprob", "bytes", "top_logprobs": [top of them]}] for each token.
nlohmann::json chat_logprobs(std::span<const TokenLogprob> logprobs, std::int64_t top, const Tokenizer& tokenizer);

// Completions: {"tokens", "token_logprobs", "top_logprobs", "text_offset"}; the offsets count
// from `text_offset` (the length of the text this choice has sent before these tokens).
nlohmann::json completion_logprobs(std::span<const TokenLogprob> logprobs, std::int64_t top, const Tokenizer& tokenizer,
                                   std::size_t text_offset);

nlohmann::json usage(std::int64_t prompt_tokens, std::int64_t completion_tokens);

// One server-sent event: "data: <json>\n\n".
std::string sse_event(const nlohmann::json& data);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace kiln::server
