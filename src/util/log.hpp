// Logging through spdlog to stderr. The level comes from KILN_LOG_LEVEL (trace, debug, info,
// warn, error, off; default warn) so stdout stays clean for generated text and JSON.
#pragma once

#include <spdlog/spdlog.h>

namespace kiln {

// Configures the default logger once; safe to call more than once.
void init_logging();

}  // namespace kiln
