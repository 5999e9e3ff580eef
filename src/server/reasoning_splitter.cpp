#include "server/reasoning_splitter.hpp"

#include "server/literal_match.hpp"

namespace kiln::server {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

}  // namespace

SplitText ReasoningSplitter::push(std::string_view piece) {
  std::string text = held_ + std::string(piece);
  held_.clear();
  SplitText out;
  for (;;) {
    const std::string_view tag = in_reasoning_ ? kClose : kOpen;
    std::string& target = in_reasoning_ ? out.reasoning : out.content;
    const std::size_t at = text.find(tag);
    if (at == std::string::npos) {
      const std::size_t keep = partial_marker_length(text, tag);
      target += text.substr(0, text.size() - keep);
      held_ = text.substr(text.size() - keep);
      return out;
    }
    target += text.substr(0, at);
    text.erase(0, at + tag.size());
    in_reasoning_ = !in_reasoning_;
  }
}

SplitText ReasoningSplitter::flush() {
  SplitText out;
  (in_reasoning_ ? out.reasoning : out.content) = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace kiln::server
