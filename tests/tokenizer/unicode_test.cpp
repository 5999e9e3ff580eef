// Oracle: Python 3's bytes.decode("utf-8", errors="replace") on the same bytes (values copied
// from CPython 3.11), which is how kiln documents its repair of invalid input; and the UTF-8
// definition for the streaming helper.
#include "tokenizer/unicode.hpp"

#include <gtest/gtest.h>

#include "kiln/tokenizer.hpp"
#include "tokenizer_fixtures.hpp"

namespace kiln::tok {
namespace {

std::string lossy(std::string_view bytes) {
  std::string out;
  append_utf8_lossy(out, bytes);
  return out;
}

TEST(Utf8Repair, MatchesPythonReplaceErrors) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(lossy("a\xFF" "b"), "a" + fffd + "b");
  EXPECT_EQ(lossy("\xE2\x82"), fffd);                      // truncated: one replacement
  EXPECT_EQ(lossy("\xF0\x9F\x98x"), fffd + "x");           // maximal subpart then ASCII
  EXPECT_EQ(lossy("\xED\xA0\x80"), fffd + fffd + fffd);    // a surrogate: three
  EXPECT_EQ(lossy("\xC0\xAF"), fffd + fffd);               // overlong
  EXPECT_EQ(lossy("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(lossy("\xE0\x80\xAF"), fffd + fffd + fffd);
  EXPECT_EQ(lossy("ok\xF0\x9F\x98\x80"), "ok\xF0\x9F\x98\x80");
}

TEST(Utf8Repair, IncompleteSuffixIsWhatAStreamMustHoldBack) {
  EXPECT_EQ(incomplete_utf8_suffix("ab"), 0u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xF0\x9F\x98"), 3u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xE2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xE2\x41"), 0u);      // already ill-formed: nothing to wait for
  EXPECT_EQ(incomplete_utf8_suffix("\xF0\x9F\xE2"), 1u);   // F0 9F is broken by E2; E2 may go on
}

TEST(Utf8Repair, EncodeSeesTheRepairedString) {
  testing::TempDir scratch;
  const auto dir = testing::usable_tokenizer_dir(testing::test_data_dir() / "tokenizers" / "gpt2_style", scratch);
  const Tokenizer tokenizer = Tokenizer::from_dir(dir);
  EXPECT_EQ(tokenizer.encode("caf\xC3\xA9 \xFF\xFE x\xE2\x82"), tokenizer.encode(lossy("caf\xC3\xA9 \xFF\xFE x\xE2\x82")));
  // Byte-level BPE is lossless on valid UTF-8, so the repair is exactly what comes back.
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("a\xFF" "b\xED\xA0\x80")), lossy("a\xFF" "b\xED\xA0\x80"));
}

}  // namespace
}  // namespace kiln::tok
