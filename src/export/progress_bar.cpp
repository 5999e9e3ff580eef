#include "export/progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace kiln::exporter {

ProgressBar::ProgressBar(std::int64_t total, bool enabled) : total_(total), active_(enabled && isatty(STDERR_FILENO)) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::int64_t done, const std::string& label) {
  if (!active_) return;
  const double now = clock_.elapsed_ms();
  // Redrawing costs a write per call; ten times a second is enough for the eye.
  if (done < total_ && now - last_draw_ms_ < 100) return;
  last_draw_ms_ = now;
  constexpr int kWidth = 30;
  const double fraction = total_ > 0 ? std::clamp(double(done) / double(total_), 0.0, 1.0) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string shown = label.size() > 48 ? "..." + label.substr(label.size() - 45) : label;
  fmt::print(stderr, "\r[{}{}] {:3.0f}% {:6.1f}s {:<48}", std::string(filled, '#'), std::string(kWidth - filled, ' '),
             100.0 * fraction, now / 1000.0, shown);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (active_ && drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace kiln::exporter
