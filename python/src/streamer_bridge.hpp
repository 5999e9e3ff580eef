// Python streamers as kiln's StreamerVariant.
#pragma once

#include <pybind11/pybind11.h>

#include "kiln/streamer.hpp"

namespace kiln::python {

namespace py = pybind11;

// The streamer a Python caller gave as kiln's: None, a callable taking each new piece of text, or a
// StreamerBase subclass taking token ids. A callable or write() returns True to stop (False or
// None go on) or a StreamingStatus. Each call into Python takes the GIL, so the result may run on
// any thread; what the streamer raises propagates out of the generation, which ends it.
StreamerVariant to_streamer(const py::object& streamer);

}  // namespace kiln::python
