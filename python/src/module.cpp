// The extension module kiln._kiln; the package `kiln` (kiln/__init__.py) re-exports it.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "kiln/error.hpp"

namespace kiln::python {

py::str utf8_text(const std::string& text) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(text.data(), text.size(), "replace"));
}

void set_attributes(py::object self, const py::dict& values) {
  const std::string type = py::str(py::type::of(self).attr("__name__"));
  for (const auto& [key, value] : values) {
    const std::string name = py::str(key);
    if (name.starts_with("_") || !py::hasattr(self, name.c_str())) {
      throw py::type_error(type + " has no field '" + name + "'");
    }
    py::setattr(self, name.c_str(), value);
  }
}

}  // namespace kiln::python

PYBIND11_MODULE(_kiln, m) {
  using namespace kiln::python;
  m.doc() = "kiln: LLM inference with OpenVINO GenAI's Python API";
  m.attr("__version__") = KILN_VERSION;
  // kiln::Error carries the message a user needs (the file, field or limit); in Python it is a
  // RuntimeError, as OpenVINO GenAI's errors are, so existing handlers catch it.
  py::register_exception<kiln::Error>(m, "Error", PyExc_RuntimeError);
  bind_config(m);
  bind_results(m);
  bind_tokenizer(m);
  bind_streamers(m);
  bind_pipelines(m);
}
