// Issue 6 asks for no allocation on the token path. Oracle: a count of every operator new, on
// every thread, while the compiled model decodes after a warm-up: it must not change. The model
// is llama3_tiny's shape with 1024 positions (random weights from `kiln synth`), so decode
// crosses KV block boundaries (blocks of 4 positions) and the attention splits a row's context
// into more tasks as it grows (one range per 256 positions). Cases: float weights (f32
// activations) and an int4 export (int8 dynamic activations, the int8 head), each with an f16
// and a u8 KV cache. Its own binary: it replaces the global operator new.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>

#include "../models/golden_checkpoint.hpp"  // golden_checkpoint_dir, TempDir
#include "export/exporter.hpp"
#include "export/synthetic_checkpoint.hpp"
#include "genai/model_loader.hpp"
#include "util/file_io.hpp"

namespace {
std::atomic<std::size_t> g_allocations{0};

void* counted_allocation(std::size_t size, std::size_t alignment) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t bytes = (std::max<std::size_t>(size, 1) + alignment - 1) / alignment * alignment;
  if (void* p = std::aligned_alloc(alignment, bytes)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return counted_allocation(size, std::max(static_cast<std::size_t>(alignment), alignof(std::max_align_t)));
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every allocation is
// counted, and each is freed by the free() that matches it.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(size, alignof(std::max_align_t));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(size, std::max(static_cast<std::size_t>(alignment), alignof(std::max_align_t)));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace kiln {
namespace {

struct TokenPathCase {
  bool int4;  // an int4 export of the checkpoint, else the float checkpoint itself
  ElementType kv;
};

class TokenPath : public ::testing::TestWithParam<TokenPathCase> {};

TEST_P(TokenPath, DecodeStepsAllocateNothing) {
  constexpr std::int64_t kContext = 1024;
  const std::filesystem::path golden = testing::golden_checkpoint_dir("llama3_tiny");
  testing::TempDir tmp;
  Json config = read_json_file(golden / "config.json");
  config["max_position_embeddings"] = kContext;
  write_file_atomic(tmp.path() / "config.json", config.dump());
  std::filesystem::path dir = tmp.path() / "float";
  exporter::synthesize_checkpoint({.like = (tmp.path() / "config.json").string(),
                                   .out_dir = dir,
                                   .seed = 7,
                                   .tokenizer_dir = golden,
                                   .show_progress = false});
  if (GetParam().int4) {
    exporter::ExportOptions o;
    o.model_dir = dir;
    dir = tmp.path() / "int4";
    o.out_dir = dir;
    o.show_progress = false;
    o.kiln_version = "test";
    o.weight_format = WeightScheme::kInt4Asym;
    o.sym = true;
    o.group_size = 32;
    exporter::export_model(o);
  }
  runtime::DeviceProperties properties;
  properties.inference_num_threads = 2;
  properties.kv_cache_precision = GetParam().kv;
  genai::LoadedModel loaded =
      genai::load_model(dir, {.context_tokens = kContext, .block_size = 4, .device = "CPU", .properties = properties});
  models::LanguageModel& model = *loaded.model;

  std::vector<std::int32_t> blocks(static_cast<std::size_t>(model.kv_cache_layout().num_blocks));
  std::iota(blocks.begin(), blocks.end(), 0);
  std::vector<std::int32_t> tokens = loaded.tokenizer.encode("The quick brown fox");
  tokens.reserve(kContext);
  models::StepOutput out;
  const auto step = [&](std::span<const std::int32_t> ids, std::int64_t start) {
    const models::SequenceChunk chunk{ids, start, blocks, models::LogitsMode::kLast};
    model.step({&chunk, 1}, out);
    const std::span<const float> row = out.row(0);
    tokens.push_back(static_cast<std::int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
  };
  const auto decode = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      step(std::span<const std::int32_t>(tokens).last(1), static_cast<std::int64_t>(tokens.size()) - 1);
    }
  };
  step(tokens, 0);
  decode(8);  // warm-up: buffers sized by the first decode steps

  const std::size_t before = g_allocations.load();
  decode(kContext - tokens.size() - 1);  // to the end of the context: attention splits grow with it
  EXPECT_EQ(g_allocations.load(), before) << "operator new calls during " << tokens.size() << " positions of decode";
}

INSTANTIATE_TEST_SUITE_P(
    Runtime, TokenPath,
    ::testing::Values(TokenPathCase{false, ElementType::kF16}, TokenPathCase{false, ElementType::kU8},
                      TokenPathCase{true, ElementType::kF16}, TokenPathCase{true, ElementType::kU8}),
    [](const auto& info) {
      return std::string(info.param.int4 ? "int4" : "float") + "_kv_" + std::string(kv_precision_name(info.param.kv));
    });

}  // namespace
}  // namespace kiln
