// Lines from standard input for `kiln chat`, with Ctrl-C as an event instead of the end of the
// program. Invariant: a SIGINT is never lost, even one that lands just before the read blocks,
// because the handler also writes a byte to a self-pipe that the reader polls with stdin.
#pragma once

#include <atomic>
#include <string>

namespace kiln::cli {

class InterruptibleStdin {
 public:
  enum class Result { kLine, kInterrupted, kEnd };

  // Installs the SIGINT handler (one reader per process).
  InterruptibleStdin();
  InterruptibleStdin(const InterruptibleStdin&) = delete;
  InterruptibleStdin& operator=(const InterruptibleStdin&) = delete;

  // The next line without its newline; kInterrupted when Ctrl-C came since the last clear().
  Result read_line(std::string& line);
  // Whether Ctrl-C came since the last clear() (polled by the streamer during an answer).
  bool interrupted() const;
  // Forgets earlier Ctrl-Cs (before a prompt).
  void clear();

 private:
  std::string buffer_;  // read from stdin, not yet returned
  bool at_end_ = false;
};

}  // namespace kiln::cli
