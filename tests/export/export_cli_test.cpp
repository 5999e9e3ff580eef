// End to end through the kiln binary. Oracles: exit codes and messages; kiln verify against a
// file corrupted by hand; the synthesised checkpoint read back by the checkpoint reader and its
// generated tokenizer round-tripping text (decode(encode(x)) == x); same seed, same bytes; a signal
// in the middle of writing leaves the output folder's parent as it was (empty).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "../cli/interactive_kiln.hpp"
#include "../models/golden_checkpoint.hpp"
#include "ir/hf_checkpoint.hpp"
#include "kiln/tokenizer.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::run_kiln;

TEST(ExportCli, ExportVerifyInspectRun) {
  testing::TempDir tmp;
  const fs::path out = tmp.path() / "int4";
  const auto model = testing::golden_checkpoint_dir("llama3_tiny").string();
  auto r =
      run_kiln({"export", "--model", model, "--weight-format", "int4", "--sym", "--group-size", "32", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exported"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("\r"), std::string::npos) << "progress bar drawn on a non-terminal";
  const Json manifest = read_json_file(out / "manifest.json");
  EXPECT_EQ(manifest["command_line"][1], "export");
  EXPECT_EQ(manifest["command_line"].back(), out.string());

  r = run_kiln({"verify", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OK"), std::string::npos);

  r = run_kiln({"inspect", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("int4_sym g32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kiln IR"), std::string::npos);

  r = run_kiln({"run", "--model", out.string(), "--prompt", "The", "-n", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  {
    std::fstream f(out / "model.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x42');
  }
  r = run_kiln({"verify", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.bin"), std::string::npos) << r.out;
}

TEST(ExportCli, BadInputIsAClearError) {
  testing::TempDir tmp;
  const auto model = testing::golden_checkpoint_dir("llama3_tiny").string();
  auto r = run_kiln({"export", "--model", model, "--weight-format", "int3", (tmp.path() / "o").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--weight-format 'int3'"), std::string::npos) << r.err;
  r = run_kiln({"export", "--model", model, "--weight-format", "int4", "--awq", (tmp.path() / "o").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--awq needs --dataset"), std::string::npos) << r.err;
  r = run_kiln({"export", "--model", tmp.path().string(), (tmp.path() / "o").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.path() / "o"));
}

TEST(ExportCli, SynthWritesALoadableCheckpoint) {
  testing::TempDir tmp;
  const Json config = {{"architectures", {"LlamaForCausalLM"}},
                       {"hidden_size", 32},
                       {"num_hidden_layers", 2},
                       {"num_attention_heads", 4},
                       {"num_key_value_heads", 2},
                       {"intermediate_size", 48},
                       {"vocab_size", 700},
                       {"bos_token_id", 600},
                       {"eos_token_id", 601},
                       {"tie_word_embeddings", false},
                       {"torch_dtype", "bfloat16"}};
  write_file_atomic(tmp.path() / "config.json", config.dump());
  for (const char* out : {"a", "b"}) {
    const auto r = run_kiln(
        {"synth", "--like", (tmp.path() / "config.json").string(), (tmp.path() / out).string(), "--seed", "7"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(sha256_file(tmp.path() / "a" / "model.safetensors"), sha256_file(tmp.path() / "b" / "model.safetensors"));
  const ir::HfCheckpoint ckpt(tmp.path() / "a");
  EXPECT_EQ(ckpt.find("lm_head.weight")->dtype, ElementType::kBf16);
  const Tokenizer tokenizer = Tokenizer::from_dir(tmp.path() / "a");
  EXPECT_EQ(tokenizer.vocab_size(), 700);
  EXPECT_EQ(tokenizer.bos_token_id(), 600);
  const std::string text = "mmap() creates a new mapping — ünïcödé, 数字 and\ttabs.\n";
  EXPECT_EQ(tokenizer.decode(tokenizer.encode(text, false)), text);
  // A synthesised checkpoint exports like a real one.
  const auto r = run_kiln({"export", "--model", (tmp.path() / "a").string(), "--weight-format", "nf4", "--group-size",
                           "16", (tmp.path() / "ir").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A 1B checkpoint takes many seconds to write; the signal goes out as soon as its staging folder
// exists, so the command is stopped part-way and must leave nothing behind.
TEST(ExportCli, SignalledWriteLeavesNothing) {
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    testing::TempDir tmp;
    testing::InteractiveKiln kiln({"synth", "--like", "llama-3.2-1b", (tmp.path() / "out").string()});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (fs::is_empty(tmp.path()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_FALSE(fs::is_empty(tmp.path())) << "no staging folder appeared";
    kiln.signal(sig);
    EXPECT_EQ(kiln.finish(), 1) << "signal " << sig << ": " << kiln.err_text;
    EXPECT_NE(kiln.err_text.find("interrupted"), std::string::npos) << kiln.err_text;
    EXPECT_TRUE(fs::is_empty(tmp.path())) << "signal " << sig << " left " << fs::directory_iterator(tmp.path())->path();
  }
}

// A file-size limit stands for a full disk (writes past it fail as ENOSPC would, with EFBIG):
// export fails naming the file and the system's reason, and leaves the parent as it was. Root
// ignores permissions, so a read-only folder cannot be tested this way; this can.
TEST(ExportCli, AFullDiskFailsWithTheReasonAndLeavesNothing) {
  testing::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 64 << 10;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // inherited by the child, as the limit
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto r = run_kiln({"export", "--model", testing::golden_checkpoint_dir("llama3_tiny").string(),
                           "--weight-format", "int8", out.string()});
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << fs::directory_iterator(tmp.path())->path();
}

// A folder the user may not write to: export fails naming the path and the system's reason, and
// leaves the folder as it was. Root may write anywhere, so as root (CI) kiln runs as nobody.
TEST(ExportCli, AReadOnlyFolderFailsWithTheReasonAndLeavesNothing) {
  testing::TempDir tmp;
  const fs::path folder = tmp.path() / "read-only";
  fs::create_directory(folder);
  fs::permissions(tmp.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  std::vector<std::string> as_user;
  if (geteuid() == 0) {
    as_user = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    const auto probe = testing::run_program([&] {
      auto argv = as_user;
      argv.insert(argv.end(), {testing::kiln_binary(), "--version"});
      return argv;
    }());
    if (probe.exit_code != 0) GTEST_SKIP() << "the kiln binary cannot run as nobody here: " << probe.err;
  }
  std::vector<std::string> argv = as_user;
  argv.insert(argv.end(),
              {testing::kiln_binary(), "export", "--model", testing::golden_checkpoint_dir("llama3_tiny").string(),
               "--weight-format", "int8", (folder / "out").string()});
  const auto r = testing::run_program(argv);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(folder.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(folder)) << fs::directory_iterator(folder)->path();
}

// SIGKILL gives the command no chance to clean up: its staging folder stays, and the next run
// for the same output removes it, saying so, and writes the output.
TEST(ExportCli, KilledWriteIsCleanedByTheNextRun) {
  testing::TempDir tmp;
  const std::string out = (tmp.path() / "out").string();
  {
    testing::InteractiveKiln kiln({"synth", "--like", "llama-3.2-1b", out});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (fs::is_empty(tmp.path()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_FALSE(fs::is_empty(tmp.path())) << "no staging folder appeared";
    kiln.signal(SIGKILL);
    kiln.finish();
  }
  ASSERT_FALSE(fs::is_empty(tmp.path())) << "SIGKILL left nothing: the test proves nothing";
  const auto tiny = testing::embedded_model_dir() / "config.json";
  setenv("KILN_LOG_LEVEL", "warn", 1);  // the suite runs at "error"; this test reads a warning
  const auto r = run_kiln({"synth", "--like", tiny.string(), out});
  setenv("KILN_LOG_LEVEL", "error", 1);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed, the unfinished output of a run"), std::string::npos) << r.err;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(tmp.path())) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"out"});
}

}  // namespace
}  // namespace kiln
