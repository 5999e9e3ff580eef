// libFuzzer target for the model-directory parsers: the input's first byte picks one file of a
// valid model directory and the rest replaces that file; then the directory is opened by the
// loader that reads it, so each parser runs together with what consumes its result. Directories:
// a Hugging Face checkpoint (config.json, generation_config.json, model.safetensors), a sharded
// one (model.safetensors.index.json and its shards) and kiln's IR (model.json, model.bin,
// generation_config.json, manifest.json). A kiln::Error is the expected outcome of a bad file; a
// crash, a sanitizer report, any other exception or an allocation past -rss_limit_mb is a bug,
// and so is a config that loads but does not load again from its own model.json form.
// Seeds: tests/data/fuzz/model_files (KILN_FUZZ_WRITE_SEEDS=DIR model_files_fuzz -runs=0 writes
// them). Run: model_files_fuzz -dict=tests/fuzz/model_files.dict -max_len=65536 CORPUS SEEDS
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_scratch.hpp"
#include "ir/hf_checkpoint.hpp"
#include "ir/ir_model.hpp"
#include "ir/manifest.hpp"
#include "ir/tensor_convert.hpp"
#include "model_files_base.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::fuzz::ModelFile;
using kiln::fuzz::ModelKind;

// A broken invariant of what a loader handed out: reported like a crash.
[[noreturn]] void fail_invariant(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

// Reads every byte a view hands out (a view outside its mapping faults here) and converts its
// first and last elements as the weight packer would, quantised matrices through their scales.
void touch(const kiln::ir::TensorView& t) {
  for (std::int64_t d : t.shape) {
    if (d < 0) fail_invariant("tensor '" + t.name + "' has shape " + kiln::ir::format_shape(t.shape));
  }
  unsigned sum = 0;
  for (std::uint8_t b : t.bytes) sum += b;
  [[maybe_unused]] volatile unsigned read_all = sum;  // keeps the loop
  const std::int64_t n = t.num_elements();            // every consumer asks (UBSan: no int64 overflow)
  const bool is_float =
      t.dtype == kiln::ElementType::kF32 || t.dtype == kiln::ElementType::kF16 || t.dtype == kiln::ElementType::kBf16;
  if (!is_float && !t.is_quantized()) return;
  std::array<float, 8> out{};  // [count]
  const std::int64_t count = std::min<std::int64_t>(n, out.size());
  if (count <= 0) return;
  kiln::ir::convert_to_f32(t, 0, count, out.data());
  kiln::ir::convert_to_f32(t, n - count, count, out.data());
}

void touch_all(const kiln::ir::TensorSource& source) {
  for (const std::string& name : source.names()) touch(*source.find(name));
}

// A config that loaded must load again, unchanged, from the form model.json stores it in: an
// export that cannot be opened, or opens as another model, is a bug whatever the input.
void check_config_round_trip(const kiln::ir::ModelConfig& config) {
  const kiln::Json stored = kiln::ir::to_json(config);
  try {
    const kiln::Json again = kiln::ir::to_json(kiln::ir::parse_model_config(stored, "round trip"));
    if (again != stored) fail_invariant("config " + stored.dump() + " reads back as " + again.dump());
  } catch (const kiln::Error& e) {
    fail_invariant("config accepted, but its model.json form is rejected: " + std::string(e.what()));
  }
}

void open_directory(ModelKind kind, const fs::path& dir) {
  if (kind == ModelKind::kIr) {
    kiln::ir::verify_manifest(dir);  // its problems are a report, not an exception
    const kiln::ir::IrModel model(dir);
    check_config_round_trip(model.config());
    touch_all(model);
  } else {
    const kiln::ir::HfCheckpoint checkpoint(dir);
    check_config_round_trip(checkpoint.config());
    touch_all(checkpoint);
  }
}

const std::vector<ModelFile>& files() {
  static const std::vector<ModelFile> f = kiln::fuzz::make_model_files(kiln::fuzz::scratch_dir("model-files"));
  return f;
}

}  // namespace

// Sanitizer reports end the run like a crash (by default UBSan prints and goes on, unnoticed).
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KILN_LOG_LEVEL", "off", 1);
  files();
  if (const char* seeds = std::getenv("KILN_FUZZ_WRITE_SEEDS")) kiln::fuzz::write_model_file_seeds(files(), seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ModelFile& file = files()[data[0] % files().size()];
  kiln::write_file_atomic(file.path, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  try {
    open_directory(file.kind, file.path.parent_path());
  } catch (const kiln::Error&) {}
  kiln::write_file_atomic(file.path, file.base);  // the next input starts from the valid directory
  return 0;
}
