// Oracles: the checkpoint's own reference forward (itself within 1e-3 of transformers) for float
// exports, which must reproduce its logits exactly; an independent decoder of model.bin written
// here from docs/FORMAT.md for the packed layouts; sha256 equality for determinism; the file
// system for "no half-written output".
#include "export/exporter.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "export_test_util.hpp"
#include "ir/ir_model.hpp"
#include "ir/manifest.hpp"
#include "ir/tensor_convert.hpp"
#include "util/half.hpp"
#include "util/sha256.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;
using testing::export_options;
using testing::golden_checkpoint_dir;

TEST(Export, Fp32ReproducesTheCheckpointExactly) {
  for (const std::string& name : testing::golden_checkpoint_names()) {
    testing::TempDir tmp;
    ExportOptions o = export_options(golden_checkpoint_dir(name), tmp.path() / "ir");
    o.weight_format = WeightScheme::kF32;
    export_model(o);
    const auto golden = testing::load_golden_checkpoint(name);
    for (const auto& prompt : golden.prompts) {
      const auto ir_logits = testing::forward_logits(tmp.path() / "ir", prompt.ids);
      EXPECT_EQ(ir_logits, testing::forward_logits(golden.dir, prompt.ids)) << name;
      float worst = 0;
      for (std::size_t i = 0; i < ir_logits.size(); ++i)
        worst = std::max(worst, std::fabs(ir_logits[i] - prompt.logits[i]));
      EXPECT_LT(worst, 1e-3f) << name << ": against transformers";
    }
  }
}

TEST(Export, SamePrecisionCopiesBytes) {
  // llama_bias_tiny is stored in f16 and llama2_tiny in bf16: exporting to that precision must
  // give the checkpoint's logits bit for bit.
  for (auto [name, format] : {std::pair{"llama_bias_tiny", WeightScheme::kF16}, {"llama2_tiny", WeightScheme::kBf16}}) {
    testing::TempDir tmp;
    ExportOptions o = export_options(golden_checkpoint_dir(name), tmp.path() / "ir");
    o.weight_format = format;
    export_model(o);
    const auto ids = testing::load_golden_checkpoint(name).prompts[1].ids;
    EXPECT_EQ(testing::forward_logits(tmp.path() / "ir", ids),
              testing::forward_logits(golden_checkpoint_dir(name), ids))
        << name;
  }
}

TEST(Export, Int8LogitsStayClose) {
  testing::TempDir tmp;
  ExportOptions o = export_options(golden_checkpoint_dir("llama3_tiny"), tmp.path() / "ir");
  o.weight_format = WeightScheme::kInt8Asym;
  const ExportResult r = export_model(o);
  EXPECT_EQ(r.tensors_by_scheme.at("int8_asym"), 1 + 2 * 7);  // tied embedding + 7 matrices per layer
  const auto ids = testing::heldout_ids(golden_checkpoint_dir("llama3_tiny"), 96);
  const auto full = testing::forward_logits(golden_checkpoint_dir("llama3_tiny"), ids);
  const auto int8 = testing::forward_logits(tmp.path() / "ir", ids);
  // The golden weights are large (|w| up to ~1), so int8 moves the distribution measurably; the
  // quality tests check it stays far below int4's (quality_ordering_test.cpp).
  EXPECT_LT(testing::mean_kl(full, int8, 512), 1e-2);
  EXPECT_GT(testing::mean_kl(full, int8, 512), 0.0);  // it did quantise
}

TEST(Export, IsDeterministic) {
  testing::TempDir tmp;
  std::vector<std::string> digests;
  for (const char* out : {"a", "b"}) {
    ExportOptions o = export_options(golden_checkpoint_dir("llama2_tiny"), tmp.path() / out);
    o.weight_format = WeightScheme::kInt4Asym;
    o.group_size = 32;
    o.awq = o.scale_estimation = o.gptq = true;
    o.dataset = "builtin";
    o.num_samples = 4;
    o.sample_tokens = 48;
    export_model(o);
    digests.push_back(sha256_file(tmp.path() / out / "model.bin"));
  }
  EXPECT_EQ(digests[0], digests[1]);
}

TEST(Export, ManifestRecordsWhatWasDone) {
  testing::TempDir tmp;
  ExportOptions o = export_options(golden_checkpoint_dir("llama3_tiny"), tmp.path() / "ir");
  o.weight_format = WeightScheme::kInt4Asym;
  o.sym = true;
  o.group_size = 32;
  o.scale_estimation = true;
  o.dataset = "builtin";
  o.num_samples = 3;
  o.sample_tokens = 40;
  export_model(o);
  const Json m = read_json_file(tmp.path() / "ir" / "manifest.json");
  EXPECT_EQ(m["command_line"], Json(o.command_line));
  EXPECT_EQ(m["kiln_version"], "test");
  EXPECT_EQ(m["calibration"]["num_samples"], 3);
  EXPECT_EQ(m["calibration"]["tokens"], 120);
  EXPECT_EQ(m["calibration"]["sha256"], sha256_hex(builtin_calibration_text()));
  EXPECT_EQ(m["source"]["files"]["model.safetensors"],
            sha256_file(golden_checkpoint_dir("llama3_tiny") / "model.safetensors"));
  EXPECT_EQ(m["tensors"]["model.layers.1.mlp.down_proj.weight"]["scheme"], "int4_sym");
  EXPECT_EQ(m["tensors"]["model.layers.1.mlp.down_proj.weight"]["method"], "scale_estimation");
  EXPECT_EQ(m["tensors"]["model.embed_tokens.weight"]["scheme"], "int8_asym");
  EXPECT_EQ(m["tensors"]["model.norm.weight"]["scheme"], "f32");
  EXPECT_GT(m["duration_s"].get<double>(), 0.0);
  EXPECT_TRUE(m["files"].contains("tokenizer.json"));
  EXPECT_TRUE(ir::verify_manifest(tmp.path() / "ir").ok());
}

// docs/FORMAT.md, implemented again without the kernels: codes, f16 scales, packed zero points.
float decode_independently(const Json& entry, const Json& table, const std::string& bin, std::size_t row,
                           std::size_t col) {
  const auto find = [&](const std::string& name) -> const Json& {
    for (const Json& e : table) {
      if (e["name"] == name) return e;
    }
    throw std::runtime_error("no " + name);
  };
  const Json& q = entry["quantization"];
  const std::string scheme = q["scheme"];
  const std::size_t in = entry["shape"][1], gs = q["group_size"];
  const std::size_t groups = (in + gs - 1) / gs;
  const auto byte_at = [&](const Json& e, std::size_t i) {
    return static_cast<std::uint8_t>(bin[e["offset"].get<std::size_t>() + i]);
  };
  const auto nibble_at = [&](const Json& e, std::size_t i) { return (byte_at(e, i / 2) >> (4 * (i % 2))) & 0xF; };
  const std::size_t flat = row * in + col, g = row * groups + col / gs;
  std::uint16_t scale_bits = 0;
  scale_bits =
      static_cast<std::uint16_t>(byte_at(find(q["scale"]), 2 * g) | (byte_at(find(q["scale"]), 2 * g + 1) << 8));
  const float scale = f16_to_f32(scale_bits);
  if (scheme == "int8_sym") return float(static_cast<std::int8_t>(byte_at(entry, flat))) * scale;
  if (scheme == "int8_asym") return float(int(byte_at(entry, flat)) - int(byte_at(find(q["zero_point"]), g))) * scale;
  if (scheme == "int4_sym") {
    const int v = nibble_at(entry, flat);
    return float(v >= 8 ? v - 16 : v) * scale;
  }
  if (scheme == "int4_asym") return float(nibble_at(entry, flat) - nibble_at(find(q["zero_point"]), g)) * scale;
  return kNf4Levels[nibble_at(entry, flat)] * scale;  // nf4
}

TEST(Export, PackedLayoutsDecodeIndependently) {
  const fs::path source = golden_checkpoint_dir("llama_bias_tiny");
  const ir::HfCheckpoint ckpt(source);
  for (auto [format, sym] : {std::pair{WeightScheme::kInt4Asym, false},
                             {WeightScheme::kInt4Asym, true},
                             {WeightScheme::kNf4, false},
                             {WeightScheme::kInt8Asym, true}}) {
    testing::TempDir tmp;
    ExportOptions o = export_options(source, tmp.path() / "ir");
    o.weight_format = format;
    o.sym = sym;
    if (format != WeightScheme::kInt8Asym) {
      o.group_size = 24;  // hidden 64: two whole groups and a partial one
      o.all_layers = true;
    }
    export_model(o);
    const Json table = read_json_file(tmp.path() / "ir" / "model.json")["tensors"];
    const std::string bin = read_file(tmp.path() / "ir" / "model.bin");
    const ir::IrModel ir_model(tmp.path() / "ir");
    int checked = 0;
    for (const Json& e : table) {
      if (!e.contains("quantization")) continue;
      const std::string name = e["name"];
      const std::vector<float> original = ir::to_f32(*ckpt.find(name));
      const std::vector<float> kernel = ir::to_f32(*ir_model.find(name));
      const std::size_t in = e["shape"][1];
      const std::string scheme = e["quantization"]["scheme"];
      const std::size_t gs = e["quantization"]["group_size"];
      const Json& scale_entry = [&]() -> const Json& {
        for (const Json& t : table) {
          if (t["name"] == e["quantization"]["scale"]) return t;
        }
        throw std::runtime_error("no scale");
      }();
      for (std::size_t i = 0; i < original.size(); ++i) {
        const std::size_t row = i / in, col = i % in, g = col / gs, groups = (in + gs - 1) / gs;
        const float mine = decode_independently(e, table, bin, row, col);
        ASSERT_EQ(mine, kernel[i]) << name << " element " << i;
        const std::size_t at = scale_entry["offset"].get<std::size_t>() + 2 * (row * groups + g);
        const float scale =
            std::fabs(f16_to_f32(static_cast<std::uint16_t>(std::uint8_t(bin[at]) | (std::uint8_t(bin[at + 1]) << 8))));
        float lo = 0, hi = 0;  // the group's range (always spanning 0)
        for (std::size_t c = g * gs; c < std::min(in, (g + 1) * gs); ++c) {
          lo = std::min(lo, original[row * in + c]);
          hi = std::max(hi, original[row * in + c]);
        }
        // The scale fits the group's range (NNCF's conventions, weight_format.hpp), up to f16 rounding...
        const double amax = std::max(-lo, hi);
        const double expected_scale = scheme == "nf4"         ? amax
                                      : scheme == "int8_sym"  ? amax / 128
                                      : scheme == "int4_sym"  ? amax / 8
                                      : scheme == "int8_asym" ? (hi - lo) / 255.0
                                                              : (hi - lo) / 15.0;
        EXPECT_NEAR(scale, expected_scale, 1e-3 * expected_scale + 1e-7) << name << " row " << row << " group " << g;
        // ...and each weight decodes within half a step of it (a whole step where the symmetric
        // range clips its one extra positive code; NF4: half its widest level gap, 1 - 0.696).
        const double bound = scheme == "nf4" ? 0.5 * 0.3039 * scale : scheme.ends_with("_sym") ? scale : 0.5 * scale;
        // 1% slack: the quantiser divides and rounds in f32.
        EXPECT_LE(std::fabs(mine - original[i]), bound * 1.01 + 1e-6) << name << " element " << i << " " << scheme;
      }
      ++checked;
    }
    EXPECT_GT(checked, 10);
  }
}

TEST(Export, InterruptedExportLeavesNothing) {
  testing::TempDir tmp;
  std::atomic<bool> cancel{true};
  ExportOptions o = export_options(golden_checkpoint_dir("llama3_tiny"), tmp.path() / "ir");
  o.weight_format = WeightScheme::kInt8Asym;
  o.cancel = &cancel;
  EXPECT_KILN_ERROR(export_model(o), "interrupted");
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "a partial output directory was left behind";
  ExportOptions exists = export_options(golden_checkpoint_dir("llama3_tiny"), tmp.path());
  EXPECT_KILN_ERROR(export_model(exists), "already exists");
}

}  // namespace
}  // namespace kiln::exporter
