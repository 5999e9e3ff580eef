// Ctrl-C for commands that write large outputs (export, synth): while a guard lives, SIGINT only
// sets a flag; the library polls it between pieces of work and throws, so unwinding removes the
// staging directory and no half-written output is left. The previous handler comes back after.
#pragma once

#include <atomic>
#include <csignal>

namespace kiln::cli {

class InterruptGuard {
 public:
  InterruptGuard() : previous_(std::signal(SIGINT, &InterruptGuard::on_interrupt)) { flag().store(false); }
  ~InterruptGuard() { std::signal(SIGINT, previous_); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  const std::atomic<bool>* cancel() const { return &flag(); }

 private:
  static std::atomic<bool>& flag() {
    static std::atomic<bool> interrupted{false};
    return interrupted;
  }
  static void on_interrupt(int) { flag().store(true); }

  void (*previous_)(int);
};

}  // namespace kiln::cli
