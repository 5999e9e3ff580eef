#include "server/openai_response.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;

std::string token_text(const Tokenizer& tokenizer, std::int32_t id) {
  return tokenizer.decode(std::span<const std::int32_t>(&id, 1));
}

json utf8_bytes(const std::string& text) {
  json bytes = json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

}  // namespace

const char* finish_reason_name(GenerationFinishReason reason) {
  switch (reason) {
    case GenerationFinishReason::STOP: return "stop";
    case GenerationFinishReason::LENGTH: return "length";
    case GenerationFinishReason::CANCEL:
    case GenerationFinishReason::NONE: return "abort";
  }
  return "abort";
}

json chat_logprobs(std::span<const TokenLogprob> logprobs, std::int64_t top, const Tokenizer& tokenizer) {
  json content = json::array();
  for (const TokenLogprob& lp : logprobs) {
    const std::string token = token_text(tokenizer, lp.token);
    json alternatives = json::array();
    for (std::size_t i = 0; i < lp.top.size() && static_cast<std::int64_t>(i) < top; ++i) {
      const std::string alt = token_text(tokenizer, lp.top[i].first);
      alternatives.push_back({{"token", alt}, {"logprob", lp.top[i].second}, {"bytes", utf8_bytes(alt)}});
    }
    content.push_back(
        {{"token", token}, {"logprob", lp.logprob}, {"bytes", utf8_bytes(token)}, {"top_logprobs", alternatives}});
  }
  return {{"content", content}};
}

json completion_logprobs(std::span<const TokenLogprob> logprobs, std::int64_t top, const Tokenizer& tokenizer,
                         std::size_t text_offset) {
  json tokens = json::array(), token_logprobs = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprob& lp : logprobs) {
    const std::string token = token_text(tokenizer, lp.token);
    tokens.push_back(token);
    token_logprobs.push_back(lp.logprob);
    json alternatives = json::object();
    for (std::size_t i = 0; i < lp.top.size() && static_cast<std::int64_t>(i) < top; ++i) {
      alternatives[token_text(tokenizer, lp.top[i].first)] = lp.top[i].second;
    }
    tops.push_back(top > 0 ? alternatives : json(nullptr));
    offsets.push_back(text_offset);
    text_offset += token.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json usage(std::int64_t prompt_tokens, std::int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

std::string sse_event(const json& data) { return "data: " + dump(data) + "\n\n"; }

}  // namespace kiln::server
