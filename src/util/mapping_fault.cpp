#include "util/mapping_fault.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace kiln {
namespace {

// Read by the signal handler, so fixed storage and atomics only: a slot is free while `begin`
// is 0; its path is written before `begin` is published and read after `begin` is seen.
struct Slot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  char path[1024] = {};
};

std::array<Slot, 256> g_slots;
std::mutex g_registering;  // writers only; the handler never takes it
struct sigaction g_previous {};

void write_all(const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

void on_bus_error(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const Slot& slot : g_slots) {
    const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= slot.end.load(std::memory_order_relaxed)) continue;
    write_all("kiln: ");
    write_all(slot.path);
    write_all(
        ": the file changed size while kiln was reading it (truncated or rewritten in place by another "
        "program); stopping. Replace model files by renaming a new copy into place, never in place.\n");
    break;
  }
  // The earlier handler, or the default action: that one runs when the faulting read is retried.
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(signal, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != nullptr) {
    g_previous.sa_handler(signal);
    return;
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  ::sigaction(SIGBUS, &fallback, nullptr);
  if (info->si_code <= 0) ::raise(signal);  // sent, not a fault: nothing retries it (it is delivered on return)
}

void install_handler() {
  struct sigaction action {};
  action.sa_sigaction = on_bus_error;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous);
}

}  // namespace

void register_mapping(const void* begin, std::size_t size, const std::filesystem::path& path) {
  static std::once_flag installed;
  std::call_once(installed, install_handler);
  const std::lock_guard lock(g_registering);
  for (Slot& slot : g_slots) {
    if (slot.begin.load(std::memory_order_relaxed) != 0) continue;
    const std::string text = path.string();
    const std::size_t n = std::min(text.size(), sizeof slot.path - 1);
    std::memcpy(slot.path, text.data(), n);
    slot.path[n] = '\0';
    const auto address = reinterpret_cast<std::uintptr_t>(begin);
    slot.end.store(address + size, std::memory_order_relaxed);
    slot.begin.store(address, std::memory_order_release);
    return;
  }
}

void unregister_mapping(const void* begin) {
  const std::lock_guard lock(g_registering);
  for (Slot& slot : g_slots) {
    if (slot.begin.load(std::memory_order_relaxed) == reinterpret_cast<std::uintptr_t>(begin)) {
      slot.begin.store(0, std::memory_order_release);
      return;
    }
  }
}

}  // namespace kiln
