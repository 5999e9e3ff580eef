// Descriptors 0, 1 and 2 as kiln's commands expect them. A process started with one of them
// closed (as some supervisors and CI runners start them) would hand that number to the next
// open(): the Ctrl-C pipe of `kiln chat` would become "standard input" and wait forever, and a
// closed stdout would make the log or the output land in a model file kiln opened. So the first
// thing the binary does is put /dev/null on each closed one and remember that standard input was
// closed, so that a command that reads it can refuse with a message instead of waiting.
#pragma once

#include <string_view>

namespace kiln::cli {

// Opens /dev/null on each of descriptors 0, 1 and 2 that is closed. Call before anything opens a
// file (first in main).
void reserve_standard_streams();

// Fails with a kiln::Error naming `reader` when standard input was closed at start.
void require_open_stdin(std::string_view reader);

}  // namespace kiln::cli
