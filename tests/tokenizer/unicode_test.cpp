// Oracle: Python 3's bytes.decode("utf-8", errors="replace"), as util/utf8's own test pins it:
// the tokenizer encodes invalid input as exactly that repaired string.
#include "util/utf8.hpp"

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

TEST(Utf8Repair, EncodeSeesTheRepairedString) {
  testing::TempDir scratch;
  const auto dir = testing::usable_tokenizer_dir(testing::test_data_dir() / "tokenizers" / "gpt2_style", scratch);
  const Tokenizer tokenizer = Tokenizer::from_dir(dir);
  EXPECT_EQ(tokenizer.encode("caf\xC3\xA9 \xFF\xFE x\xE2\x82"),
            tokenizer.encode(lossy("caf\xC3\xA9 \xFF\xFE x\xE2\x82")));
  // Byte-level BPE is lossless on valid UTF-8, so the repair is exactly what comes back.
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("a\xFF"
                                              "b\xED\xA0\x80")),
            lossy("a\xFF"
                  "b\xED\xA0\x80"));
}

}  // namespace
}  // namespace kiln::tok
