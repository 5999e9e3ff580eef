// libFuzzer target for the tokenizer. The first byte picks what the rest of the input is:
//   even: text (any bytes, invalid UTF-8 included) encoded and decoded by one of the committed
//         tokenizers; checked: no crash, every id known, streaming decode == decode, each
//         streamed piece valid UTF-8, and decode(encode(x)) == x where the tokenizer is lossless
//   odd:  a tokenizer.json to load (and, if it loads, to encode a fixed text with); anything
//         but a kiln::Error is a failure
// Run: tokenizer_fuzz -max_total_time=60 (from a KILN_BUILD_FUZZERS=ON clang build).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/tokenizer.hpp"
#include "tokenizer/unicode.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace {

struct Fixture {
  kiln::Tokenizer tokenizer;
  bool round_trips;                   // decode(encode(x)) == x for text free of `breakers`
  std::vector<std::string> breakers;  // substrings whose presence lifts the round-trip check
};

// The committed fixtures keep tokenizer.json gzipped, except mistral7b.
std::string gunzip_or_read(const std::string& dir) {
  gzFile file = gzopen((dir + "/tokenizer.json.gz").c_str(), "rb");
  if (file == nullptr) return kiln::read_file(dir + "/tokenizer.json");
  std::string out;
  char buffer[1 << 16];
  for (int n; (n = gzread(file, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  gzclose(file);
  return out;
}

const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> all = [] {
    const std::string root = KILN_FUZZ_TOKENIZERS_DIR;
    std::vector<Fixture> out;
    auto add = [&](const std::string& name, bool round_trips, std::vector<std::string> breakers) {
      const std::string dir = root + "/" + name;
      std::string config;
      try {
        config = kiln::read_file(dir + "/tokenizer_config.json");
      } catch (const kiln::Error&) {}
      out.push_back({kiln::Tokenizer::from_json(gunzip_or_read(dir), config), round_trips, std::move(breakers)});
    };
    // Added tokens with lstrip / rstrip swallow spaces, and "▁" decodes to a space: text with
    // them does not round-trip in HF either.
    const std::vector<std::string> stripping = {"<mask>", "<|im_start|>", "<|im_end|>"};
    add("gpt2_style", true, stripping);
    add("llama3_style", true, stripping);
    add("mistral7b", true, {"\xE2\x96\x81", "<s>", "</s>", "<unk>"});
    add("llama2_style", false, {});
    add("zoo_split", false, {});
    add("zoo_bert", false, {});
    add("metaspace_first", false, {});
    return out;
  }();
  return all;
}

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "tokenizer_fuzz: invariant failed: %s\n", what);
    std::abort();
  }
}

void fuzz_text(const Fixture& fixture, const std::string& text) {
  const auto ids = fixture.tokenizer.encode(text, false);
  for (const std::int32_t id : ids) check(fixture.tokenizer.has_id(id), "encode produced an unknown id");
  kiln::DecodeOptions raw;
  raw.clean_up_tokenization_spaces = false;
  const std::string decoded = fixture.tokenizer.decode(ids, raw);
  kiln::IncrementalDetokenizer stream(fixture.tokenizer, raw);
  std::string streamed;
  for (const std::int32_t id : ids) {
    const std::string piece = stream.push(id);
    check(kiln::is_valid_utf8(piece), "streamed piece is not valid UTF-8");
    streamed += piece;
  }
  streamed += stream.flush();
  check(streamed == decoded, "streamed decode differs from decode");
  if (!fixture.round_trips) return;
  std::string repaired;
  kiln::append_utf8_lossy(repaired, text);
  for (const std::string& breaker : fixture.breakers) {
    if (repaired.find(breaker) != std::string::npos) return;
  }
  check(decoded == repaired, "decode(encode(text)) != text");
}

void fuzz_tokenizer_json(const std::string& json) {
  try {
    const auto tokenizer = kiln::Tokenizer::from_json(json);
    const auto ids = tokenizer.encode("Hello, world! \xF0\x9F\x98\x80 <s>  x\xFF", true);
    (void)tokenizer.decode(ids);
  } catch (const kiln::Error&) {
    // Bad input must be reported this way, and only this way.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 1) {
    fuzz_tokenizer_json(rest);
  } else {
    const auto& all = fixtures();
    fuzz_text(all[(data[0] / 2) % all.size()], rest);
  }
  return 0;
}
