// One conversation: its history, rendered by the tokenizer's chat template for every turn, and
// the KV cache the previous turns left behind. A new turn's prompt is the whole rendered
// conversation, but the engine computes only the tokens after the longest common prefix with the
// cached ones (chat templates render earlier turns identically, so that is the new turn; where
// a template re-renders differently, computation resumes at the first differing token).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "genai/request_state.hpp"
#include "kiln/llm_pipeline.hpp"
#include "kiln/tokenizer.hpp"
#include "tokenizer/chat_template.hpp"

namespace kiln::genai {

// The conversation rendered for the assistant's next answer, as token ids (the template writes
// the special tokens itself, so none are added).
std::vector<std::int32_t> encode_chat(const Tokenizer& tokenizer, const ChatTemplate& chat_template,
                                      const ChatHistory& history);

class ChatSession {
 public:
  // Throws kiln::Error when the tokenizer has no chat template.
  ChatSession(const Tokenizer& tokenizer, const std::string& system_message);

  // The prompt for the assistant's answer to `user_message` after the history so far.
  std::vector<std::int32_t> render_turn(const std::string& user_message) const;
  // The turn happened: both messages join the history.
  void commit_turn(const std::string& user_message, const std::string& answer);

  const ChatHistory& history() const { return history_; }
  // The previous turns' KV cache, handed to the next request (empty on the first turn).
  std::optional<CachedPrefix> take_cache();
  void keep_cache(CachedPrefix cache) { cache_.emplace(std::move(cache)); }
  // Forgets everything but the system message; the cache is freed.
  void reset();

 private:
  Tokenizer tokenizer_;
  ChatTemplate template_;
  std::string system_message_;
  ChatHistory history_;
  std::optional<CachedPrefix> cache_;
};

}  // namespace kiln::genai
