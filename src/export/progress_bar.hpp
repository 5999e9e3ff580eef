// A one-line progress bar on stderr for long exports: redrawn in place on a terminal, silent
// when stderr is not one (logs and CI stay clean).
#pragma once

#include <cstdint>
#include <string>

#include "util/clock.hpp"

namespace kiln::exporter {

class ProgressBar {
 public:
  // `enabled` false (or stderr not a terminal) makes every call a no-op.
  ProgressBar(std::int64_t total, bool enabled);
  ~ProgressBar();

  // Advances to `done` of total with a short label ("layers.3.mlp.up_proj.weight").
  void update(std::int64_t done, const std::string& label);
  // Ends the line.
  void finish();

 private:
  std::int64_t total_;
  bool active_;
  bool drawn_ = false;
  double last_draw_ms_ = -1e9;
  Stopwatch clock_;
};

}  // namespace kiln::exporter
