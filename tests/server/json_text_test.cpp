// Oracle: Python's str.splitlines, which httpx's aiter_lines (under GuideLLM and other SSE
// clients) follows: none of its line boundaries may appear raw in the server's JSON, and the text
// must still parse back (nlohmann::json) to the same strings, invalid UTF-8 as U+FFFD.
#include "server/json_text.hpp"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

TEST(JsonText, NoLineBoundaryOfSplitlinesAppearsRaw) {
  const std::string separators = "\n\r\x0b\x0c\x1c\x1d\x1e";
  const std::string text =
      "a\xC2\x85"
      "b\xE2\x80\xA8"
      "c\xE2\x80\xA9"
      "d" +
      separators + "\xC3\xA9\xE2\x80\xA7";
  const nlohmann::json value = {{"text", text}, {"key \xE2\x80\xA8", 1}};
  const std::string out = dump(value);
  for (char c : separators) EXPECT_EQ(out.find(c), std::string::npos) << int(c);
  for (const char* raw : {"\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9"}) EXPECT_EQ(out.find(raw), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(out), value);
  EXPECT_NE(out.find("\xC3\xA9\xE2\x80\xA7"), std::string::npos) << "other characters stay as they are";
}

TEST(JsonText, InvalidUtf8IsReplaced) {
  const std::string out = dump({{"text", std::string("ok \xFF")}});
  EXPECT_EQ(nlohmann::json::parse(out)["text"], "ok \xEF\xBF\xBD");
}

}  // namespace
}  // namespace kiln::server
