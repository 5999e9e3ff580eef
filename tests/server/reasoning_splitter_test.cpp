// Oracle: the split of the whole text at its tags, done by hand; every way of cutting the same
// text into streamed pieces must give the same reasoning and content.
#include "server/reasoning_splitter.hpp"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

SplitText split_in_pieces(const std::string& text, std::size_t piece, bool in_reasoning = false) {
  ReasoningSplitter splitter(in_reasoning);
  SplitText all;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    const SplitText s = splitter.push(std::string_view(text).substr(at, piece));
    EXPECT_EQ(s.content.find("<"), std::string::npos) << "half a tag leaked: " << s.content;
    all.reasoning += s.reasoning;
    all.content += s.content;
  }
  const SplitText last = splitter.flush();
  all.reasoning += last.reasoning;
  all.content += last.content;
  return all;
}

TEST(ReasoningSplitter, EveryCutGivesTheSameSplit) {
  const std::string text = "<think>Let me see: 2 + 2.</think>The answer is 4.";
  for (std::size_t piece = 1; piece <= text.size(); ++piece) {
    const SplitText s = split_in_pieces(text, piece);
    EXPECT_EQ(s.reasoning, "Let me see: 2 + 2.") << piece;
    EXPECT_EQ(s.content, "The answer is 4.") << piece;
  }
}

TEST(ReasoningSplitter, PromptThatOpenedTheBlock) {
  for (std::size_t piece = 1; piece <= 8; ++piece) {
    const SplitText s = split_in_pieces("hmm, four.</think>4", piece, true);
    EXPECT_EQ(s.reasoning, "hmm, four.");
    EXPECT_EQ(s.content, "4");
  }
}

TEST(ReasoningSplitter, NoTagsIsAllContentAndAnUnfinishedTagIsText) {
  EXPECT_EQ(split_in_pieces("plain answer", 3).content, "plain answer");
  const SplitText cut = split_in_pieces("answer <thi", 2);
  EXPECT_EQ(cut.content, "answer <thi");
  EXPECT_EQ(cut.reasoning, "");
  const SplitText unclosed = split_in_pieces("<think>still thinking", 4);
  EXPECT_EQ(unclosed.reasoning, "still thinking");
  EXPECT_EQ(unclosed.content, "");
}

}  // namespace
}  // namespace kiln::server
