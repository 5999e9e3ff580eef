// Ctrl-C, SIGTERM and SIGHUP for commands that write large outputs (export, synth): while a guard
// lives, those signals only set a flag; the library polls it between pieces of work and throws, so
// unwinding removes the staging directory and no half-written output is left (a `kill` or a closed
// terminal as much as Ctrl-C). The previous handlers come back after.
#pragma once

#include <array>
#include <atomic>
#include <csignal>

namespace kiln::cli {

class InterruptGuard {
 public:
  InterruptGuard() {
    flag().store(false);
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      previous_[i] = std::signal(kSignals[i], &InterruptGuard::on_signal);
      // A signal the caller ignores (`nohup` ignores SIGHUP) stays ignored.
      if (previous_[i] == SIG_IGN) std::signal(kSignals[i], SIG_IGN);
    }
  }
  ~InterruptGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) std::signal(kSignals[i], previous_[i]);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  const std::atomic<bool>* cancel() const { return &flag(); }

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};

  static std::atomic<bool>& flag() {
    static std::atomic<bool> interrupted{false};
    return interrupted;
  }
  static void on_signal(int) { flag().store(true); }

  std::array<void (*)(int), kSignals.size()> previous_{};
};

}  // namespace kiln::cli
