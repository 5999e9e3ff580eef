#include "cli/standard_streams.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "util/error.hpp"

namespace kiln::cli {
namespace {

bool g_stdin_closed = false;

bool is_closed(int fd) { return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF; }

}  // namespace

void reserve_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (!is_closed(fd)) continue;
    if (fd == STDIN_FILENO) g_stdin_closed = true;
    // The lowest free number is `fd` itself (those below it are open by now), but dup2 makes it so
    // whatever the system hands out.
    const int null = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (null < 0) continue;  // nothing better to do: no message can be written either
    if (null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

void require_open_stdin(std::string_view reader) {
  if (g_stdin_closed) {
    fail(
        "{}: standard input is closed, so there is nothing to read (start kiln with a terminal, a pipe or a "
        "file on descriptor 0)",
        reader);
  }
}

}  // namespace kiln::cli
