#include "cli/interruptible_stdin.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "util/error.hpp"

namespace kiln::cli {
namespace {

std::atomic<bool> g_interrupted{false};
int g_pipe[2] = {-1, -1};  // [read end, write end], both non-blocking

void on_sigint(int) {
  g_interrupted.store(true);
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);  // a full pipe already says it
}

void drain_pipe() {
  char bytes[64];
  while (::read(g_pipe[0], bytes, sizeof bytes) > 0) {}
}

}  // namespace

InterruptibleStdin::InterruptibleStdin() {
  if (g_pipe[0] < 0) {
    if (::pipe(g_pipe) != 0) fail("kiln chat: cannot create the Ctrl-C pipe (errno {})", errno);
    for (int fd : g_pipe) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  // No SA_RESTART: a blocked read returns at once (the pipe makes that belt and braces).
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
}

bool InterruptibleStdin::interrupted() const { return g_interrupted.load(); }

void InterruptibleStdin::clear() {
  drain_pipe();
  g_interrupted.store(false);
}

InterruptibleStdin::Result InterruptibleStdin::read_line(std::string& line) {
  while (true) {
    if (const std::size_t eol = buffer_.find('\n'); eol != std::string::npos) {
      line = buffer_.substr(0, eol);
      buffer_.erase(0, eol + 1);
      return Result::kLine;
    }
    if (at_end_) {
      if (buffer_.empty()) return Result::kEnd;
      line = std::move(buffer_);  // a last line without a newline
      buffer_.clear();
      return Result::kLine;
    }
    pollfd fds[2] = {{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0},
                     {.fd = g_pipe[0], .events = POLLIN, .revents = 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;  // the pipe is readable now
      fail("kiln chat: waiting for input failed (errno {})", errno);
    }
    if (fds[1].revents & POLLIN) {
      drain_pipe();
      return Result::kInterrupted;
    }
    char chunk[4096];
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      at_end_ = true;  // end of input (or an unreadable stdin: nothing more will come)
    } else {
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
}

}  // namespace kiln::cli
