// Every command that reads standard input ends, with a message, when descriptor 0 is closed (as
// some supervisors and CI runners start processes) or at its end. Oracle: the exit code and the
// message; a command that waits instead is killed after a limit far above its run time and fails.
// Before kiln reserved descriptors 0-2, `kiln chat` took the closed 0 for its Ctrl-C pipe and
// waited forever.
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace kiln {
namespace {

using testing::run_kiln;
using testing::run_kiln_without_stdin;

constexpr std::chrono::seconds kLimit{60};

std::string model() { return (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string(); }

TEST(ClosedStdin, CommandsThatReadItRefuseWithAMessage) {
  const std::vector<std::vector<std::string>> readers{
      {"chat", "-m", model(), "-n", "4"},
      {"run", "-m", model(), "-p", "-", "-n", "4"},
      {"tokenize", "--model", model()},
      {"tokenize", "--model", model(), "-"},
  };
  for (const auto& args : readers) {
    const auto result = run_kiln_without_stdin(args, kLimit);
    EXPECT_EQ(result.exit_code, 1) << args[0] << ": " << result.err;
    EXPECT_NE(result.err.find("standard input is closed"), std::string::npos) << args[0] << ": " << result.err;
  }
}

TEST(ClosedStdin, CommandsThatDoNotReadItRunAsUsual) {
  // The same text through an argument, with descriptor 0 closed, gives the same ids as with it open.
  const auto closed = run_kiln_without_stdin({"tokenize", "--model", model(), "Hello world"}, kLimit);
  const auto open = run_kiln({"tokenize", "--model", model(), "Hello world"});
  ASSERT_EQ(closed.exit_code, 0) << closed.err;
  EXPECT_EQ(closed.out, open.out);
  const auto run =
      run_kiln_without_stdin({"run", "-m", model(), "-p", "Hello", "-n", "3", "--temperature", "0"}, kLimit);
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(ClosedStdin, ChatEndsAtEndOfInputWithAMessage) {
  // An empty pipe, closed at once: end of input, not an error.
  const auto chat = run_kiln({"chat", "-m", model(), "-n", "4"}, "");
  EXPECT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_NE(chat.err.find("(end of input)"), std::string::npos) << chat.err;
}

}  // namespace
}  // namespace kiln
