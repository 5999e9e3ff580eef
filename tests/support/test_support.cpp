#include "support/test_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>

#include "util/error.hpp"

extern char** environ;

namespace kiln::testing {

std::filesystem::path test_data_dir() { return KILN_TEST_DATA_DIR; }

std::filesystem::path embedded_model_dir() { return std::filesystem::path(KILN_SOURCE_DIR) / "models" / "kiln-tiny"; }

std::vector<std::int32_t> consecutive_ids(std::int32_t first, std::int32_t n) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = first + i;
  return ids;
}

std::optional<std::filesystem::path> external_fixtures_dir() {
  const char* env = std::getenv("KILN_EXTERNAL_FIXTURES");
  if (env == nullptr || *env == '\0') return std::nullopt;
  std::filesystem::path dir(env);
  if (!std::filesystem::is_directory(dir)) return std::nullopt;
  return dir;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ =
      std::filesystem::temp_directory_path() / ("kiln-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string kiln_binary() { return KILN_BINARY_PATH; }

namespace {

std::vector<std::string> kiln_command(const std::vector<std::string>& args) {
  std::vector<std::string> argv{kiln_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Spawns the program with stdout and stderr collected; stdin is a pipe fed `stdin_text`, or, with
// `close_stdin`, closed. A child still running after `limit` (when set) is killed.
CommandResult spawn_and_collect(const std::vector<std::string>& program_and_args, const std::string& stdin_text,
                                bool close_stdin, std::optional<std::chrono::seconds> limit) {
  ::signal(SIGPIPE, SIG_IGN);  // the child may exit before reading all of stdin
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) || pipe(out_pipe) || pipe(err_pipe)) throw std::runtime_error("pipe failed");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (close_stdin) {
    posix_spawn_file_actions_addclose(&actions, 0);
  } else {
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
    posix_spawn_file_actions_addclose(&actions, fd);
  }

  std::vector<std::string> argv_storage = program_and_args;
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) throw std::runtime_error("cannot spawn " + argv_storage[0]);

  // Feed stdin and drain both outputs together so neither side blocks on a full pipe.
  CommandResult result;
  std::size_t written = 0;
  if (stdin_text.empty()) close(in_pipe[1]);
  bool in_open = !stdin_text.empty(), out_open = true, err_open = true;
  const auto deadline = std::chrono::steady_clock::now() + limit.value_or(std::chrono::seconds(0));
  bool killed = false;
  char buffer[65536];
  while (out_open || err_open || in_open) {
    pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {in_pipe[1], POLLOUT, 0}};
    fds[0].fd = out_open ? out_pipe[0] : -1;
    fds[1].fd = err_open ? err_pipe[0] : -1;
    fds[2].fd = in_open ? in_pipe[1] : -1;
    int wait_ms = -1;
    if (limit && !killed) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = static_cast<int>(std::max<std::int64_t>(left.count(), 0));
    }
    const int ready = poll(fds, 3, wait_ms);
    if (ready < 0) break;
    if (ready == 0) {  // past the limit: kill it, then drain what it wrote until the pipes close
      ::kill(pid, SIGKILL);
      killed = true;
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP)) {
        ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
        if (n <= 0) {
          close(fds[i].fd);
          (i == 0 ? out_open : err_open) = false;
        } else {
          (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
        }
      }
    }
    if (in_open && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in_pipe[1], stdin_text.data() + written, stdin_text.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n <= 0 || written == stdin_text.size()) {
        close(in_pipe[1]);
        in_open = false;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (killed) {
    result.exit_code = -1;
    result.err += "\n(killed by the test: still running after " + std::to_string(limit->count()) + " s)";
  }
  return result;
}

}  // namespace

CommandResult run_program(const std::vector<std::string>& program_and_args, const std::string& stdin_text) {
  return spawn_and_collect(program_and_args, stdin_text, false, std::nullopt);
}

CommandResult run_kiln(const std::vector<std::string>& args, const std::string& stdin_text) {
  return run_program(kiln_command(args), stdin_text);
}

CommandResult run_kiln_without_stdin(const std::vector<std::string>& args, std::chrono::seconds limit) {
  return spawn_and_collect(kiln_command(args), "", true, limit);
}

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kNotFound, path.string() + ": cannot open");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace kiln::testing
