// Python streamers as kiln's StreamerVariant, and Ctrl-C while kiln works with the GIL released.
#pragma once

#include <pybind11/pybind11.h>

#include "kiln/streamer.hpp"

namespace kiln::python {

namespace py = pybind11;

// The streamer a Python caller gave as kiln's: None, a callable taking each new piece of text, or
// a StreamerBase subclass taking token ids. A callable or write() returns True to stop (False or
// None go on) or a StreamingStatus. Every call into Python takes the GIL and first checks for
// signals, so Ctrl-C raises KeyboardInterrupt out of the streamer: the request ends and the
// exception surfaces in the caller, as any exception a streamer raises does. With
// `watch_interrupts` and no streamer, the result is a token streamer that only checks for
// signals, so that Ctrl-C stops every generation that can stream.
StreamerVariant to_streamer(const py::object& streamer, bool watch_interrupts);

// Raises the pending KeyboardInterrupt (or whatever a signal handler raised), if any. Needs the
// GIL; does nothing off the main thread, where Python never handles signals.
void raise_if_interrupted();

}  // namespace kiln::python
