// Oracles: a compile with CACHE_DIR writes an entry (missing), the next one maps it (hit) and
// both give exactly the logits of a compile without a cache (the blob holds the same bytes);
// an entry with a flipped payload byte, a cut-off tail or a damaged header is reported corrupt,
// one built from other weights stale, and each is rebuilt into a valid entry, never used.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../models/golden_checkpoint.hpp"
#include "runtime/core.hpp"
#include "runtime_test_util.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_dir_ = tmp_.path() / "model";
    fs::copy(kiln::testing::golden_checkpoint_dir("llama3_tiny"), model_dir_);
    cache_dir_ = tmp_.path() / "cache";
    ids_ = kiln::testing::load_golden_checkpoint("llama3_tiny").prompts.front().ids;
  }

  // Compiles the copied checkpoint with the cache and returns its logits on the prompt.
  std::vector<float> run(CompileReport* report) {
    auto checkpoint = std::make_shared<ir::HfCheckpoint>(model_dir_);
    CompiledModel m = testing::compile_cpu(checkpoint, {.cache_dir = cache_dir_});
    *report = m.info.compile;
    return testing::full_forward(*m.model, ids_);
  }

  std::vector<float> uncached_logits() {
    auto checkpoint = std::make_shared<ir::HfCheckpoint>(model_dir_);
    CompiledModel m = testing::compile_cpu(checkpoint, {});
    return testing::full_forward(*m.model, ids_);
  }

  void expect_rebuilt(CacheLookup lookup, const std::string& reason_part, const std::vector<float>& want) {
    CompileReport r;
    EXPECT_EQ(run(&r), want);
    EXPECT_EQ(r.lookup, lookup) << cache_lookup_name(r.lookup);
    EXPECT_NE(r.reason.find(reason_part), std::string::npos) << r.reason;
    EXPECT_EQ(run(&r), want);
    EXPECT_EQ(r.lookup, CacheLookup::kHit) << "the rebuilt entry is valid";
  }

  kiln::testing::TempDir tmp_;
  fs::path model_dir_, cache_dir_;
  std::vector<std::int32_t> ids_;
};

TEST_F(CompileCacheTest, MissThenHitGiveTheSameLogitsAsNoCache) {
  const std::vector<float> want = uncached_logits();
  CompileReport first, second;
  EXPECT_EQ(run(&first), want);
  EXPECT_TRUE(first.cache_enabled);
  EXPECT_EQ(first.lookup, CacheLookup::kMissing);
  ASSERT_TRUE(fs::exists(first.entry));
  EXPECT_EQ(first.entry.parent_path(), cache_dir_);
  EXPECT_EQ(run(&second), want);
  EXPECT_EQ(second.lookup, CacheLookup::kHit);
  EXPECT_EQ(second.entry, first.entry);
  // No temporary files are left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(cache_dir_), fs::directory_iterator()), 1);
}

TEST_F(CompileCacheTest, CorruptEntriesAreDetectedAndRebuilt) {
  const std::vector<float> want = uncached_logits();
  CompileReport r;
  run(&r);
  const fs::path entry = r.entry;
  const auto size = fs::file_size(entry);
  {  // one flipped bit in the last payload byte
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 1));
    const char c = static_cast<char>(f.get() ^ 0x10);
    f.seekp(static_cast<std::streamoff>(size - 1));
    f.put(c);
  }
  expect_rebuilt(CacheLookup::kCorrupt, "payload hash", want);
  fs::resize_file(entry, size - 4096);
  expect_rebuilt(CacheLookup::kCorrupt, "bytes, expected", want);
  {  // a damaged header
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('#');
  }
  expect_rebuilt(CacheLookup::kCorrupt, "header hash", want);
  {
    std::ofstream f(entry, std::ios::binary | std::ios::trunc);
    f << "not a cache file";
  }
  expect_rebuilt(CacheLookup::kCorrupt, "not a kiln compile-cache file", want);
}

// Rewrites one byte of a tensor's data in a safetensors file (the header gives its offsets).
void perturb_tensor(const fs::path& file, const std::string& tensor) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  std::uint64_t header_bytes = 0;
  f.read(reinterpret_cast<char*>(&header_bytes), 8);
  std::string header(header_bytes, '\0');
  f.read(header.data(), static_cast<std::streamsize>(header_bytes));
  const auto begin = Json::parse(header).at(tensor).at("data_offsets")[0].get<std::uint64_t>();
  const auto at = static_cast<std::streamoff>(8 + header_bytes + begin + 1);
  f.seekg(at);
  const char c = static_cast<char>(f.get() ^ 0x40);
  f.seekp(at);
  f.put(c);
}

TEST_F(CompileCacheTest, EntriesBuiltFromOtherWeightsAreStale) {
  CompileReport r;
  run(&r);
  perturb_tensor(model_dir_ / "model.safetensors", "model.layers.0.mlp.down_proj.weight");
  expect_rebuilt(CacheLookup::kStale, "another model", uncached_logits());
}

TEST_F(CompileCacheTest, UnwritableCacheDirIsAnError) {
  std::ofstream(tmp_.path() / "file") << "x";
  auto checkpoint = std::make_shared<ir::HfCheckpoint>(model_dir_);
  EXPECT_KILN_ERROR(testing::compile_cpu(checkpoint, {.cache_dir = tmp_.path() / "file"}), "CACHE_DIR", "file");
}

// A file-size limit stands for a full disk: the entry cannot be reserved (posix_fallocate fails
// as it would with ENOSPC), so the load packs into memory instead, and gives the same logits.
TEST_F(CompileCacheTest, AnEntryThatCannotBeWrittenFallsBackToMemory) {
  const std::vector<float> want = uncached_logits();
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  CompileReport r;
  std::vector<float> got;
  EXPECT_NO_THROW(got = run(&r));
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(got, want);
  EXPECT_FALSE(r.cache_enabled);
  EXPECT_TRUE(fs::is_empty(cache_dir_)) << "the failed entry's temporary is removed";
  EXPECT_EQ(run(&r), want);
  EXPECT_EQ(r.lookup, CacheLookup::kMissing) << "written by the next load";
}

}  // namespace
}  // namespace kiln::runtime
