// libFuzzer target for GGUF import: the input is a whole file, read by GgufFile, imported as a
// model (config, tensors re-laid out and re-quantised) and its tokenizer rebuilt and loaded into
// kiln's tokenizer. A kiln::Error is the expected outcome for a bad file; a crash, a sanitizer
// report, any other exception or an allocation past -rss_limit_mb is a bug. The seeds are the
// committed fixtures (tests/data/gguf). Run: gguf_fuzz -dict=tests/fuzz/gguf.dict CORPUS SEEDS
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz_scratch.hpp"
#include "ir/gguf_model.hpp"
#include "ir/gguf_vocab.hpp"
#include "kiln/tokenizer.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace {

// GgufFile maps a file: each input is written to one in memory-backed storage first.
const std::filesystem::path& input_path() {
  static const std::filesystem::path path = kiln::fuzz::scratch_dir("gguf") / "input.gguf";
  return path;
}

template <typename F>
void expect_kiln_errors_only(F&& f) {
  try {
    f();
  } catch (const kiln::Error&) {}
}

}  // namespace

// Warnings (a missing pre-tokenizer, a re-quantised type) are expected of fuzzed files: unlogged.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KILN_LOG_LEVEL", "off", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::write_file_atomic(input_path(), std::string_view(reinterpret_cast<const char*>(data), size));
  expect_kiln_errors_only([] {
    const kiln::ir::GgufFile file(input_path());
    expect_kiln_errors_only([&] {
      const kiln::ir::GgufTokenizerFiles t = kiln::ir::tokenizer_files_from_gguf(file);
      const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_json(t.tokenizer.dump(), t.tokenizer_config.dump());
      const std::vector<std::int32_t> ids = tokenizer.encode("Hello, world! <s> 12345 ünïcödé", true);
      tokenizer.decode(ids);
    });
    expect_kiln_errors_only([] { kiln::ir::GgufModel model(input_path()); });
  });
  return 0;
}
