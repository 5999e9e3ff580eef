// Python streamers as kiln's StreamerVariant; see streamer_bridge.hpp.
#include "streamer_bridge.hpp"

#include <memory>

#include "bindings.hpp"

namespace kiln::python {

namespace {

// A Python object that kiln's threads may copy and drop without holding the GIL: the last copy
// takes the GIL to release it.
class PyRef {
 public:
  explicit PyRef(py::object object)
      : object_(new py::object(std::move(object)), [](py::object* o) {
          py::gil_scoped_acquire gil;
          delete o;
        }) {}
  const py::object& get() const { return *object_; }

 private:
  std::shared_ptr<py::object> object_;
};

// The base class Python streamers derive from; write() falls back to the older put().
class PythonStreamerBase {
 public:
  virtual ~PythonStreamerBase() = default;
};

StreamingStatus to_status(const py::object& result) {
  if (result.is_none()) return StreamingStatus::RUNNING;
  if (py::isinstance<py::bool_>(result)) return result.cast<bool>() ? StreamingStatus::STOP : StreamingStatus::RUNNING;
  if (py::isinstance<StreamingStatus>(result)) return result.cast<StreamingStatus>();
  throw py::type_error("a streamer returns a bool, None or a StreamingStatus, not " +
                       std::string(py::str(py::type::of(result).attr("__name__"))));
}

// Token ids to a StreamerBase subclass.
class TokenStreamer final : public StreamerBase {
 public:
  explicit TokenStreamer(PyRef streamer) : streamer_(std::move(streamer)) {}

  StreamingStatus write(std::int32_t token) override {
    py::gil_scoped_acquire gil;
    return to_status(streamer_.get().attr("write")(token));
  }

  void end() override {
    py::gil_scoped_acquire gil;
    streamer_.get().attr("end")();
  }

 private:
  PyRef streamer_;
};

}  // namespace

StreamerVariant to_streamer(const py::object& streamer) {
  if (streamer.is_none()) return std::monostate{};
  if (py::isinstance<PythonStreamerBase>(streamer)) {
    return std::shared_ptr<StreamerBase>(std::make_shared<TokenStreamer>(PyRef(streamer)));
  }
  if (!PyCallable_Check(streamer.ptr())) {
    throw py::type_error("streamer: expected a callable taking text, or a StreamerBase");
  }
  return TextStreamerCallback([callback = PyRef(streamer)](const std::string& piece) {
    py::gil_scoped_acquire gil;
    return to_status(callback.get()(utf8_text(piece)));
  });
}

void bind_streamers(py::module_& m) {
  py::enum_<StreamingStatus>(m, "StreamingStatus", "What a streamer tells the generation after each piece.")
      .value("RUNNING", StreamingStatus::RUNNING)
      .value("STOP", StreamingStatus::STOP)
      .value("CANCEL", StreamingStatus::CANCEL);

  py::class_<PythonStreamerBase>(m, "StreamerBase",
                                 "Token streaming: subclass it and override write(token) (returning a "
                                 "StreamingStatus, or True to stop) and end().")
      .def(py::init<>())
      .def("write",
           [](py::object self, py::object token) -> py::object {
             if (py::hasattr(self, "put")) return self.attr("put")(token);
             const std::string message =
                 std::string(py::str(py::type::of(self).attr("__name__"))) + " must override StreamerBase.write(token)";
             PyErr_SetString(PyExc_NotImplementedError, message.c_str());
             throw py::error_already_set();
           })
      .def("end", [](py::object) {});
}

}  // namespace kiln::python
