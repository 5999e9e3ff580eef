// A conversation as chat templates take it: messages in order, each a role and its content
// (OpenVINO GenAI's ChatHistory). Tokenizer::apply_chat_template renders one into a prompt;
// LLMPipeline::generate answers one.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", ...
  std::string content;
};

// Messages in order; explicit so that generate({"a", "b"}) means two prompts.
class ChatHistory {
 public:
  ChatHistory() = default;
  explicit ChatHistory(std::vector<ChatMessage> messages) : messages_(std::move(messages)) {}
  void push_back(ChatMessage message) { messages_.push_back(std::move(message)); }
  void pop_back() { messages_.pop_back(); }
  void clear() { messages_.clear(); }
  std::size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  const ChatMessage& operator[](std::size_t i) const { return messages_[i]; }
  const ChatMessage& back() const { return messages_.back(); }
  auto begin() const { return messages_.begin(); }
  auto end() const { return messages_.end(); }

 private:
  std::vector<ChatMessage> messages_;
};

}  // namespace kiln
