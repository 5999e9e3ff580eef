// The Python module's parts, one file each; module.cpp binds them in dependency order. Each
// mirrors a public header of include/kiln/ under OpenVINO GenAI's Python names and call shapes,
// so code written for `openvino_genai` runs on `kiln` with the import changed.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace kiln::python {

namespace py = pybind11;

void bind_config(py::module_& m);     // GenerationConfig, StructuredOutputConfig, SchedulerConfig
void bind_results(py::module_& m);    // PerfMetrics, DecodedResults, GenerationOutput, ...
void bind_tokenizer(py::module_& m);  // Tokenizer, TokenizedInputs, ChatHistory
void bind_streamers(py::module_& m);  // StreamingStatus, StreamerBase
void bind_pipelines(py::module_& m);  // LLMPipeline, ContinuousBatchingPipeline, GenerationHandle

// Text from kiln as a Python str; a byte sequence that is not UTF-8 (never expected: kiln's text
// is whole characters) becomes U+FFFD instead of an exception in the middle of a result.
py::str utf8_text(const std::string& text);

// Sets each keyword argument as an attribute of `self`, as OpenVINO GenAI's constructors and
// update_generation_config() do; a name `self` lacks is a TypeError naming it.
void set_attributes(py::object self, const py::dict& values);

// `value` with the given fields set by name (as set_attributes does); T is a bound class.
template <typename T>
T with_fields(T value, const py::dict& fields) {
  if (fields.empty()) return value;
  py::object object = py::cast(std::move(value));
  set_attributes(object, fields);
  return object.cast<T>();
}

}  // namespace kiln::python
