#include "genai/chat_session.hpp"

namespace kiln::genai {

std::vector<std::int32_t> encode_chat(const Tokenizer& tokenizer, const ChatTemplate& chat_template,
                                      const ChatHistory& history) {
  return tokenizer.encode(chat_template.apply(history, /*add_generation_prompt=*/true), /*add_special_tokens=*/false);
}

ChatSession::ChatSession(const Tokenizer& tokenizer, const std::string& system_message)
    : tokenizer_(tokenizer), template_(tokenizer), system_message_(system_message) {
  reset();
}

std::vector<std::int32_t> ChatSession::render_turn(const std::string& user_message) const {
  ChatHistory turn = history_;
  turn.push_back({"user", user_message});
  return encode_chat(tokenizer_, template_, turn);
}

void ChatSession::commit_turn(const std::string& user_message, const std::string& answer) {
  history_.push_back({"user", user_message});
  history_.push_back({"assistant", answer});
}

void ChatSession::reset() {
  history_.clear();
  if (!system_message_.empty()) history_.push_back({"system", system_message_});
}

}  // namespace kiln::genai
