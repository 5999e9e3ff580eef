// Shared helpers for kiln's tests: where fixtures live, running the kiln binary, temporary
// directories, and checking that a call throws a kiln::Error whose message names the culprit.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace kiln::testing {

// tests/data in the source tree.
std::filesystem::path test_data_dir();

// models/kiln-tiny in the source tree: the embedded default model.
std::filesystem::path embedded_model_dir();

// n token ids counting up from first.
std::vector<std::int32_t> consecutive_ids(std::int32_t first, std::int32_t n);

// $KILN_EXTERNAL_FIXTURES (fixtures under licences that forbid committing them), or nullopt.
// Tests that need it call GTEST_SKIP() with a message naming the variable when it is absent.
std::optional<std::filesystem::path> external_fixtures_dir();

// A fresh empty directory removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The kiln binary of this build tree. Only test_support.cpp knows the path, so that the other test
// files compile to the same objects in every tree (the ASan tree links the plain tree's).
std::string kiln_binary();

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the kiln binary with `args` (no shell involved) and optional stdin text.
CommandResult run_kiln(const std::vector<std::string>& args, const std::string& stdin_text = "");
// Runs the kiln binary with descriptor 0 closed (not redirected: closed, as some supervisors and
// CI runners start processes), killing it if it still runs after `limit`: then exit_code is -1
// and err ends by saying so.
CommandResult run_kiln_without_stdin(const std::vector<std::string>& args, std::chrono::seconds limit);
// The same for any program, named by its path, then its arguments.
CommandResult run_program(const std::vector<std::string>& program_and_args, const std::string& stdin_text = "");

// Reads a JSON-lines file into its lines.
std::vector<std::string> read_lines(const std::filesystem::path& path);

}  // namespace kiln::testing

// Asserts that `statement` throws kiln::Error and that its message contains every one of the
// given substrings: the test's oracle for "a clear error that names the file and field".
#define EXPECT_KILN_ERROR(statement, ...)                                          \
  do {                                                                             \
    bool kiln_thrown_ = false;                                                     \
    try {                                                                          \
      statement;                                                                   \
    } catch (const ::kiln::Error& kiln_e_) {                                       \
      kiln_thrown_ = true;                                                         \
      for (const char* kiln_part_ : {__VA_ARGS__}) {                               \
        EXPECT_NE(std::string(kiln_e_.what()).find(kiln_part_), std::string::npos) \
            << "error message lacks \"" << kiln_part_ << "\": " << kiln_e_.what(); \
      }                                                                            \
    }                                                                              \
    EXPECT_TRUE(kiln_thrown_) << #statement " did not throw kiln::Error";          \
  } while (0)
