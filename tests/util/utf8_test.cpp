// Oracle: Python 3's bytes.decode("utf-8", errors="replace") on the same bytes (values copied
// from CPython 3.11), which is how kiln documents its repair of invalid input; the UTF-8
// definition (RFC 3629) for encoding, validation and the streaming helper.
#include "util/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace kiln {
namespace {

std::string lossy(std::string_view bytes) {
  std::string out;
  append_utf8_lossy(out, bytes);
  return out;
}

TEST(Utf8Repair, MatchesPythonReplaceErrors) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(lossy("a\xFF"
                  "b"),
            "a" + fffd + "b");
  EXPECT_EQ(lossy("\xE2\x82"), fffd);                               // truncated: one replacement
  EXPECT_EQ(lossy("\xF0\x9F\x98x"), fffd + "x");                    // maximal subpart then ASCII
  EXPECT_EQ(lossy("\xED\xA0\x80"), fffd + fffd + fffd);             // a surrogate: three
  EXPECT_EQ(lossy("\xC0\xAF"), fffd + fffd);                        // overlong
  EXPECT_EQ(lossy("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(lossy("\xE0\x80\xAF"), fffd + fffd + fffd);
  EXPECT_EQ(lossy("ok\xF0\x9F\x98\x80"), "ok\xF0\x9F\x98\x80");
}

TEST(Utf8Repair, IncompleteSuffixIsWhatAStreamMustHoldBack) {
  EXPECT_EQ(incomplete_utf8_suffix("ab"), 0u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xF0\x9F\x98"), 3u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xE2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xE2\x41"), 0u);     // already ill-formed: nothing to wait for
  EXPECT_EQ(incomplete_utf8_suffix("\xF0\x9F\xE2"), 1u);  // F0 9F is broken by E2; E2 may go on
}

TEST(Utf8Coding, EncodeThenDecodeIsTheIdentityAtEveryLengthBoundary) {
  for (char32_t cp : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    std::string bytes;
    append_utf8(bytes, cp);
    const std::size_t expected_length = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    ASSERT_EQ(bytes.size(), expected_length) << std::hex << static_cast<std::uint32_t>(cp);
    EXPECT_EQ(utf8_sequence_length(static_cast<unsigned char>(bytes[0])), expected_length);
    EXPECT_TRUE(is_valid_utf8(bytes));
    std::size_t pos = 0;
    EXPECT_EQ(static_cast<std::uint32_t>(next_code_point(bytes, pos)), static_cast<std::uint32_t>(cp));
    EXPECT_EQ(pos, bytes.size());
  }
}

TEST(Utf8Coding, ValidPrefixStopsAtTheFirstIllFormedByte) {
  EXPECT_EQ(valid_utf8_prefix("plain ascii text, longer than eight"), 35u);
  EXPECT_EQ(valid_utf8_prefix("caf\xC3\xA9\xFF"
                              "x"),
            5u);
  EXPECT_EQ(valid_utf8_prefix("ab\xED\xA0\x80"), 2u);  // surrogate
  EXPECT_EQ(valid_utf8_prefix("ab\xC0\xAF"), 2u);      // overlong
  EXPECT_EQ(valid_utf8_prefix("ab\xF0\x9F\x98"), 2u);  // truncated
}

}  // namespace
}  // namespace kiln
