// The kiln binary as a live child process for interactive tests (kiln chat): write lines to its
// stdin, wait until its output shows something, send it a signal, then collect everything it
// wrote and its exit code. run_kiln (support/test_support.hpp) covers the non-interactive case.
#pragma once

#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_support.hpp"

extern char** environ;

namespace kiln::testing {

class InteractiveKiln {
 public:
  explicit InteractiveKiln(const std::vector<std::string>& args) {
    ::signal(SIGPIPE, SIG_IGN);
    int in[2], out[2], err[2];
    if (pipe(in) || pipe(out) || pipe(err)) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) posix_spawn_file_actions_addclose(&actions, fd);
    std::vector<std::string> storage{kiln_binary()};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (rc != 0) throw std::runtime_error("cannot spawn kiln");
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
  }
  ~InteractiveKiln() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      finish();
    }
  }

  void write_line(const std::string& line) {
    const std::string text = line + "\n";
    if (::write(in_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw std::runtime_error("write failed");
  }
  void close_stdin() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }
  void signal(int sig) { kill(pid_, sig); }

  // Reads until stdout (or stderr) holds `count` occurrences of `needle`; false on timeout or EOF.
  bool wait_for(const std::string& needle, bool in_stderr, int count = 1, int timeout_ms = 60000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (occurrences(in_stderr ? err_text : out_text, needle) < count) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !pump(static_cast<int>(left.count()))) return false;
    }
    return true;
  }

  // Closes stdin, drains the output and returns the exit code.
  int finish() {
    close_stdin();
    while (pump(-1)) {}
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string out_text, err_text;

 private:
  static int occurrences(const std::string& text, const std::string& needle) {
    int n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
  }
  // One poll round; false once both outputs are closed.
  bool pump(int timeout_ms) {
    if (out_ < 0 && err_ < 0) return false;
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (poll(fds, 2, timeout_ms) <= 0) return true;
    char buffer[4096];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      int& fd = i == 0 ? out_ : err_;
      if (n <= 0) {
        close(fd);
        fd = -1;
      } else {
        (i == 0 ? out_text : err_text).append(buffer, static_cast<std::size_t>(n));
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
};

}  // namespace kiln::testing
