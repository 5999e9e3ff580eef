// libFuzzer target for OpenVINO IR import: the input is an openvino_model.xml, read as a graph
// and imported as a model against one fixture's config.json and openvino_model.bin (so offsets,
// sizes and element types meet real bytes). A kiln::Error is the expected outcome for a bad
// graph; a crash, a sanitizer report, any other exception or an allocation past -rss_limit_mb is
// a bug. Seeds: the fixtures' XML files (tests/data/openvino/models).
// Run: openvino_fuzz -dict=tests/fuzz/openvino.dict -max_len=400000 CORPUS SEEDS
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz_scratch.hpp"
#include "ir/openvino_model.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace {

namespace fs = std::filesystem;

// The model directory each input is written into, in memory-backed storage, beside a copy of
// the fixture's config.json and .bin.
const fs::path& model_dir() {
  static const fs::path dir = [] {
    const fs::path& d = kiln::fuzz::scratch_dir("openvino");
    const fs::path fixture = fs::path(KILN_FUZZ_OPENVINO_FIXTURE);
    for (const char* name : {"config.json", "openvino_model.bin"}) {
      fs::copy_file(fixture / name, d / name, fs::copy_options::overwrite_existing);
    }
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KILN_LOG_LEVEL", "off", 1);
  model_dir();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::write_file_atomic(model_dir() / "openvino_model.xml",
                          std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const kiln::ir::OpenVinoModel model(model_dir());
    for (const std::string& name : model.names()) model.find(name);
  } catch (const kiln::Error&) {}
  return 0;
}
