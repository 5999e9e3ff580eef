// Oracles: without stop strings the streamed pieces concatenate to the tokenizer's decode of the
// same ids (skip_special_tokens), in whole UTF-8 characters; with stop strings the output is that
// text cut at the first stop string (kept with include_stop_str_in_output), and at no point has
// the stream shown a part of a stop string: what was emitted never contains one, and ends with
// the start of one only when the text decoded after it already rules the stop string out.
#include "genai/text_stream.hpp"

#include <gtest/gtest.h>

#include "../models/golden_checkpoint.hpp"
#include "test_models.hpp"

namespace kiln::genai {
namespace {

Tokenizer tokenizer() { return Tokenizer::from_dir(testing::checkpoint_dir("llama3_tiny")); }

bool is_valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

struct Streamed {
  std::string text;
  bool stopped = false;
  std::size_t stop_token = 0;  // index of the token that completed the stop string
};

// Streams `ids`, checking after every token that no emitted text shows part of a stop string.
Streamed stream(const Tokenizer& tok, const std::vector<std::int32_t>& ids, const std::set<std::string>& stops,
                bool include) {
  TextStream ts(tok, stops, include);
  Streamed out;
  for (std::size_t i = 0; i < ids.size() && !out.stopped; ++i) {
    const TextStream::Delta d = ts.push(ids[i]);
    EXPECT_TRUE(is_valid_utf8(d.text)) << "piece " << i;
    out.text += d.text;
    if (d.stopped) {
      out.stopped = true;
      out.stop_token = i;
    } else {
      // Text decoded so far but not shown: what the stream still holds back.
      const std::string held =
          tok.decode(std::vector(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(i) + 1), true)
              .substr(out.text.size());
      for (const std::string& s : stops) {
        EXPECT_EQ(out.text.find(s), std::string::npos) << "stop string '" << s << "' leaked at token " << i;
        // Shown text may end with the start of a stop string only if the held text already rules
        // it out.
        for (std::size_t n = 1; n < s.size(); ++n) {
          if (out.text.ends_with(s.substr(0, n))) {
            EXPECT_FALSE(s.substr(n).starts_with(held)) << "part of '" << s << "' leaked at token " << i;
          }
        }
      }
    }
  }
  out.text += ts.finish();
  EXPECT_EQ(out.text, ts.text());
  return out;
}

TEST(TextStream, KeepsSpecialTokensWhenAsked) {
  // Oracle: decode(ids, skip_special_tokens=false), which shows <|begin_of_text|>.
  const Tokenizer tok = tokenizer();
  const std::vector<std::int32_t> ids = tok.encode("Hello world", true);
  TextStream ts(tok, {}, false, /*skip_special_tokens=*/false);
  std::string text;
  for (std::int32_t id : ids) text += ts.push(id).text;
  text += ts.finish();
  EXPECT_EQ(text, tok.decode(ids, false));
  EXPECT_TRUE(text.starts_with("<|begin_of_text|>")) << text;
}

TEST(TextStream, WithoutStopStringsEqualsDecode) {
  const Tokenizer tok = tokenizer();
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  for (const auto& p : g.prompts) {
    std::vector<std::int32_t> ids = p.ids;  // the BOS special token is skipped
    ids.insert(ids.end(), p.greedy_ids.begin(), p.greedy_ids.end());
    EXPECT_EQ(stream(tok, ids, {}, false).text, tok.decode(ids, true)) << p.prompt;
  }
}

TEST(TextStream, StopStringsMatchAcrossTokensAndNeverLeak) {
  const Tokenizer tok = tokenizer();
  const std::string text = "Licensed under the Apache License, Version 2.0 (the \"License\"); you may not use";
  const std::vector<std::int32_t> ids = tok.encode(text, false);
  ASSERT_EQ(tok.decode(ids), text);
  // Stop strings that start and end inside tokens, and one that never completes.
  for (const std::string stop : {"se, Ver", "icen", "e \"Lic", "; you m", "2.0 (t"}) {
    const std::size_t at = text.find(stop);
    for (const bool include : {false, true}) {
      const Streamed s = stream(tok, ids, {stop, "License, Version 3"}, include);
      EXPECT_TRUE(s.stopped) << stop;
      EXPECT_EQ(s.text, text.substr(0, at + (include ? stop.size() : 0))) << stop;
      // It stopped at the token that completed the stop string, not later.
      EXPECT_LT(tok.decode(std::vector(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(s.stop_token))).size(),
                at + stop.size())
          << stop;
    }
  }
}

TEST(TextStream, EarliestStopStringWinsAndUnmatchedTailIsReleasedAtTheEnd) {
  const Tokenizer tok = tokenizer();
  const std::string text = "for (int i = 0; i < 10; ++i) { sum += i; }";
  const std::vector<std::int32_t> ids = tok.encode(text, false);
  EXPECT_EQ(stream(tok, ids, {"++i", "i < 1"}, false).text, "for (int i = 0; ");
  // "}}" never completes; the final "}" it held back comes out when the stream finishes.
  const Streamed s = stream(tok, ids, {"}}", "sum -="}, false);
  EXPECT_FALSE(s.stopped);
  EXPECT_EQ(s.text, text);
}

TEST(TextStream, MultibyteCharactersAreEmittedWhole) {
  const Tokenizer tok = tokenizer();
  const std::string text = "Numbers 12345 and unicode: café, naïve, 日本語";
  const std::vector<std::int32_t> ids = tok.encode(text, false);
  EXPECT_EQ(stream(tok, ids, {"本"}, false).text, "Numbers 12345 and unicode: café, naïve, 日");
  EXPECT_EQ(stream(tok, ids, {}, false).text, text);
}

}  // namespace
}  // namespace kiln::genai
