// `kiln chat` end to end. Oracles: a first turn is the model's greedy answer to the prompt
// rendered by the chat template — exactly what `kiln run --apply-chat-template true` prints for
// it; commands change the conversation as documented (/stats reports the turns, /system and
// /reset clear the history, a bad turn reports an error and the chat goes on); Ctrl-C at the
// prompt does not end the program, and Ctrl-C during an answer ends only that answer; --system
// is the /system command given before the first turn; with a draft model both KV caches carry
// over between turns.
#include <gtest/gtest.h>

#include "cli/interactive_kiln.hpp"
#include "support/test_support.hpp"

namespace kiln {
namespace {

using testing::run_kiln;

std::string model(const std::string& name = "llama3_tiny") {
  return (testing::test_data_dir() / "checkpoints" / name).string();
}

TEST(ChatCommand, FirstTurnEqualsTheTemplatedRunAndCommandsWork) {
  const auto run = run_kiln(
      {"run", "-m", model(), "-p", "Hello world", "-n", "8", "--temperature", "0", "--apply-chat-template", "true"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto chat =
      run_kiln({"chat", "-m", model(), "-n", "8", "--temperature", "0"},
               "Hello world\n/stats\n/system Be brief.\nHello world\n/nonsense\n/reset\n/exit\nnot read\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_TRUE(chat.out.starts_with(run.out)) << chat.out;
  EXPECT_NE(chat.err.find("turns 1"), std::string::npos) << chat.err;
  EXPECT_NE(chat.err.find("TTFT"), std::string::npos);
  EXPECT_NE(chat.err.find("(system message set; history cleared)"), std::string::npos);
  EXPECT_NE(chat.err.find("unknown command /nonsense"), std::string::npos);
  EXPECT_NE(chat.err.find("(history cleared)"), std::string::npos);
}

TEST(ChatCommand, SystemFlagEqualsTheSystemCommand) {
  // Oracle: --system TEXT starts the conversation as /system TEXT does (the same greedy answer),
  // and the system message is rendered: without it the answer differs.
  const std::vector<std::string> args{"chat", "-m", model(), "-n", "8", "--temperature", "0"};
  auto with_flag = args;
  with_flag.insert(with_flag.end(), {"--system", "Be brief."});
  const auto flag = run_kiln(with_flag, "Hello world\n");
  const auto command = run_kiln(args, "/system Be brief.\nHello world\n");
  const auto none = run_kiln(args, "Hello world\n");
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, command.out);
  EXPECT_NE(flag.out, none.out);
}

TEST(ChatCommand, SecondTurnReusesTheKvCache) {
  const auto chat =
      run_kiln({"chat", "-m", model(), "-n", "6", "--temperature", "0"}, "Hello world\nHello again\n/stats\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  // Two turns; the second computed only part of its prompt, so the mean of computed prompt
  // tokens is below the mean of input tokens.
  const auto value = [&](const std::string& row) {
    const std::size_t at = chat.err.find(row);
    EXPECT_NE(at, std::string::npos) << chat.err;
    return std::stod(chat.err.substr(at + row.size()));
  };
  EXPECT_NE(chat.err.find("turns 2"), std::string::npos) << chat.err;
  EXPECT_LT(value("computed prompt tokens"), value("input tokens"));
}

TEST(ChatCommand, WithADraftTheSecondTurnReusesBothKvCaches) {
  // Oracle: the answers are those of the chat without the draft (speculation is exact), and the
  // draft's cache carries over like the main model's: over the two turns it computed no more
  // prompt tokens than the main model did (beside the one it may lag), below the input tokens.
  const std::string draft = (testing::test_data_dir() / "genai" / "llama3_tiny_draft").string();
  const std::string turns = "Hello world\nHello again\n/stats\n";
  const auto plain = run_kiln({"chat", "-m", model(), "-n", "6", "--temperature", "0"}, turns);
  const auto chat = run_kiln({"chat", "-m", model(), "-n", "6", "--temperature", "0", "--draft", draft,
                              "--num-assistant-tokens", "3", "--no-adaptive-draft"},
                             turns);
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_EQ(chat.out, plain.out);
  const auto value = [&](const std::string& row) {
    const std::size_t at = chat.err.find(row);
    EXPECT_NE(at, std::string::npos) << chat.err;
    return at == std::string::npos ? 0.0 : std::stod(chat.err.substr(at + row.size()));
  };
  EXPECT_LT(value("draft prompt tokens"), value("input tokens"));
  EXPECT_LE(value("draft prompt tokens"), value("computed prompt tokens") + 1);
}

TEST(ChatCommand, AnErrorEndsTheTurnNotTheChat) {
  // A 96-token context: the second long turn no longer fits, the chat says so and goes on.
  std::string long_line;  // 40 words, about 40 tokens
  for (int i = 0; i < 40; ++i) long_line += "the ";
  const auto chat = run_kiln({"chat", "-m", model(), "-n", "4", "--temperature", "0", "--context", "96"},
                             long_line + "\n" + long_line + "\n/reset\nHello\n/stats\n");
  EXPECT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_NE(chat.err.find("context holds"), std::string::npos) << chat.err;
  EXPECT_NE(chat.err.find("turns 2"), std::string::npos) << chat.err;  // the first and the last turn
}

TEST(ChatCommand, CtrlCAtThePromptDoesNotEndTheProgram) {
  testing::InteractiveKiln kiln({"chat", "-m", model(), "-n", "4", "--temperature", "0"});
  kiln.write_line("Hello world");
  ASSERT_TRUE(kiln.wait_for("> ", true, 2)) << kiln.err_text;  // answered, waiting for the next line
  kiln.signal(SIGINT);
  ASSERT_TRUE(kiln.wait_for("(type /exit", true)) << kiln.err_text;
  kiln.write_line("/stats");
  ASSERT_TRUE(kiln.wait_for("turns 1", true)) << kiln.err_text;
  EXPECT_EQ(kiln.finish(), 0) << kiln.err_text;
}

TEST(ChatCommand, CtrlCDuringAnAnswerStopsOnlyThatAnswer) {
  const auto embedded = testing::embedded_model_dir();
  // The embedded model needs about half a second for 400 tokens on the CPU device; the signal
  // follows the first words within microseconds, so it lands mid-answer.
  testing::InteractiveKiln kiln({"chat", "-m", embedded.string(), "-n", "400", "--temperature", "0", "--ignore-eos"});
  kiln.write_line("Explain mmap in detail.");
  ASSERT_TRUE(kiln.wait_for(" ", false, 3)) << kiln.err_text;  // a few words of the answer
  kiln.signal(SIGINT);
  ASSERT_TRUE(kiln.wait_for("(interrupted)", true)) << kiln.err_text;
  kiln.write_line("/stats");
  ASSERT_TRUE(kiln.wait_for("turns 1", true)) << kiln.err_text;
  EXPECT_EQ(kiln.finish(), 0);
  const std::size_t at = kiln.err_text.find("generated tokens");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(std::stod(kiln.err_text.substr(at + 16)), 400.0);  // the answer was cut short
}

}  // namespace
}  // namespace kiln
