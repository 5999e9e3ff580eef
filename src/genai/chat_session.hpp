// One conversation: its history, rendered by the tokenizer's chat template for every turn. A new
// turn's prompt is the whole rendered conversation, but the engine's prefix cache still holds
// the previous turns' keys and values, so it computes only the new turn (from the block where
// the cached tokens end; where a template re-renders an earlier turn differently, from the block
// where the two first differ).
#pragma once

#include <string>
#include <vector>

#include "kiln/chat_history.hpp"
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
  // Forgets everything but the system message.
  void reset();

 private:
  Tokenizer tokenizer_;
  ChatTemplate template_;
  std::string system_message_;
  ChatHistory history_;
};

}  // namespace kiln::genai
