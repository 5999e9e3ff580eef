// Structural tags with triggers: free text in which a trigger opens a tag. The free text's
// language is checked against the plainest oracle there is (no trigger occurs in it: a substring
// search) on every string of a small alphabet; masks against xgrammar's are in mask_golden_test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "grammar/grammar.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/tag_dispatch.hpp"
#include "kiln/error.hpp"

namespace kiln::grammar {
namespace {

const std::string kCallBegin = "<tool_call>\n{\"name\": \"";
const std::string kCallEnd = "}\n</tool_call>";

Grammar tool_calls() {
  return lower(tagged_schema_rules(
      {{kCallBegin + "add\", \"arguments\": ",
        R"({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})", kCallEnd},
       {kCallBegin + "now\", \"arguments\": ", R"({"type": "object", "properties": {}})", kCallEnd}},
      {"<tool_call>"}));
}

std::string error_of(const std::vector<TaggedSchema>& tags, const std::vector<std::string>& triggers) {
  try {
    tagged_schema_rules(tags, triggers);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TagDispatch, FreeTextWithToolCallsInside) {
  const Grammar g = tool_calls();
  const std::string add = kCallBegin + "add\", \"arguments\": {\"x\": 4}" + kCallEnd;
  const std::string now = kCallBegin + "now\", \"arguments\": {}" + kCallEnd;
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "Let me look: café, 日本語 < tool_call > <tool"));  // ends inside a trigger
  EXPECT_TRUE(matches(g, add));
  EXPECT_TRUE(matches(g, "First " + add + " then " + now + now + "\ndone."));
  EXPECT_TRUE(matches(g, "<<tool_cal<" + now));  // the trigger found after false starts
  EXPECT_FALSE(matches(g, "text <tool_call>"));  // a trigger must go on as a tag
  EXPECT_FALSE(matches(g, "<tool_call>\n{\"name\": \"sub\", \"arguments\": {}" + kCallEnd));  // no such tool
  EXPECT_FALSE(matches(g, kCallBegin + "add\", \"arguments\": {\"x\": \"4\"}" + kCallEnd));   // x is an integer
  EXPECT_FALSE(matches(g, kCallBegin + "add\", \"arguments\": {\"x\": 4}"));                  // no end
  EXPECT_FALSE(matches(g, "\xff"));                                                           // not UTF-8
}

// Overlapping triggers ("ab" inside "cab", "bc" across "ab"): over the alphabet {a, b, c, x}
// (no tag can start, as every tag goes on with '#'), a string is free text exactly when no
// trigger occurs in it.
TEST(TagDispatch, FreeTextIsEveryStringWithoutATrigger) {
  const std::vector<std::string> triggers = {"ab", "bc", "cab"};
  const Grammar g = lower(tagged_schema_rules(
      {{"ab#", "{\"type\": \"null\"}", ""}, {"bc#", "{\"type\": \"null\"}", ""}, {"cab#", "{\"type\": \"null\"}", ""}},
      triggers));
  const std::string alphabet = "abcx";
  int checked = 0;
  for (int length = 0; length <= 7; ++length) {
    std::vector<int> digits(static_cast<std::size_t>(length), 0);
    while (true) {
      std::string text;
      for (const int d : digits) text += alphabet[static_cast<std::size_t>(d)];
      bool has_trigger = false;
      for (const std::string& t : triggers) has_trigger = has_trigger || text.find(t) != std::string::npos;
      EXPECT_EQ(matches(g, text), !has_trigger) << text;
      ++checked;
      std::size_t i = 0;
      while (i < digits.size() && ++digits[i] == static_cast<int>(alphabet.size())) digits[i++] = 0;
      if (i == digits.size()) break;
    }
  }
  EXPECT_EQ(checked, 21845);  // 4^0 + ... + 4^7
  EXPECT_TRUE(matches(g, "xab#null"));
  EXPECT_TRUE(matches(g, "xbc#nullx"));
  EXPECT_TRUE(matches(g, "cab#nullab#null"));  // "ab" and "cab" end together: the longest opens
  EXPECT_FALSE(matches(g, "bcab#null"));       // "bc" is complete first, and '#' must follow it
}

TEST(TagDispatch, TheOpeningTriggerIsTheFirstCompleteAndAPrefix) {
  EXPECT_EQ(opening_trigger({"<tool_call>"}, "<tool_call>\n{"), 0u);
  EXPECT_EQ(opening_trigger({"ab", "abcd"}, "abcdX"), 0u);   // "ab" is complete first
  EXPECT_EQ(opening_trigger({"bc", "abc"}, "abcX"), 1u);     // both end at c: the longest
  EXPECT_EQ(opening_trigger({"bc"}, "abcX"), std::nullopt);  // "bc" is not where it starts
  EXPECT_EQ(opening_trigger({"<tool_call>"}, "<tool"), std::nullopt);
}

TEST(TagDispatch, MistakesAreNamed) {
  const TaggedSchema call{"<f>", "{}", "</f>"};
  EXPECT_NE(error_of({call}, {""}).find("triggers[0] is empty"), std::string::npos);
  EXPECT_NE(error_of({call}, {"<f>", "<f>"}).find("triggers[1] repeats triggers[0]"), std::string::npos);
  EXPECT_NE(error_of({call}, {"f>"}).find("structural_tags[0].begin '<f>' does not start with"), std::string::npos);
  EXPECT_NE(error_of({call}, {"<f>", "<g>"}).find("triggers[1] '<g>' opens no structural tag"), std::string::npos);
  EXPECT_NE(error_of({call}, {"\xc3"}).find("triggers[0] is not valid UTF-8"), std::string::npos);
}

}  // namespace
}  // namespace kiln::grammar
