// GenerationConfig, StructuredOutputConfig and SchedulerConfig: every field an attribute, keyword
// construction, and update_generation_config(**kwargs), as openvino_genai has them.
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/scheduler_config.hpp"

namespace kiln::python {
namespace {

// A set field that takes any iterable (a list as well as a set), as a Python user expects.
template <typename Config, typename Value>
void def_set(py::class_<Config>& cls, const char* name, std::set<Value> Config::*field) {
  cls.def_property(
      name, [field](const Config& c) { return c.*field; },
      [field](Config& c, const py::iterable& values) {
        std::set<Value> out;
        for (const py::handle v : values) out.insert(v.cast<Value>());
        c.*field = std::move(out);
      });
}

// early_stopping as Hugging Face spells it (True, False, "never") or as a StopCriteria.
StopCriteria to_stop_criteria(const py::object& value) {
  if (py::isinstance<StopCriteria>(value)) return value.cast<StopCriteria>();
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? StopCriteria::EARLY : StopCriteria::HEURISTIC;
  if (py::isinstance<py::str>(value)) return parse_stop_criteria(value.cast<std::string>());
  throw py::type_error("early_stopping: expected True, False, \"never\" or a StopCriteria");
}

std::string repr(const GenerationConfig& c) {
  std::ostringstream out;
  out << "GenerationConfig(max_new_tokens=" << (c.max_new_tokens ? std::to_string(*c.max_new_tokens) : "None")
      << ", do_sample=" << (c.do_sample ? "True" : "False") << ", temperature=" << c.temperature
      << ", top_k=" << c.top_k << ", top_p=" << c.top_p << ", num_beams=" << c.num_beams
      << ", num_return_sequences=" << c.num_return_sequences << ")";
  return out.str();
}

void bind_structured_output(py::module_& m) {
  py::class_<StructuralTag>(m, "StructuralTag", "A tagged JSON value: begin, JSON valid against json_schema, end.")
      .def(py::init([](std::string begin, std::string json_schema, std::string end) {
             return StructuralTag{std::move(begin), std::move(json_schema), std::move(end)};
           }),
           py::arg("begin"), py::arg("json_schema"), py::arg("end"))
      .def_readwrite("begin", &StructuralTag::begin)
      .def_readwrite("json_schema", &StructuralTag::json_schema)
      .def_readwrite("end", &StructuralTag::end);

  py::class_<StructuredOutputConfig> cls(m, "StructuredOutputConfig",
                                         "Constrained generation: exactly one of json_schema, regex, grammar, "
                                         "choice, json_object or structural_tags.");
  cls.def(py::init([](const py::kwargs& kwargs) { return with_fields(StructuredOutputConfig{}, kwargs); }))
      .def_readwrite("json_schema", &StructuredOutputConfig::json_schema)
      .def_readwrite("regex", &StructuredOutputConfig::regex)
      .def_readwrite("grammar", &StructuredOutputConfig::grammar)
      .def_readwrite("choice", &StructuredOutputConfig::choice)
      .def_readwrite("json_object", &StructuredOutputConfig::json_object)
      .def_readwrite("structural_tags", &StructuredOutputConfig::structural_tags)
      .def_readwrite("triggers", &StructuredOutputConfig::triggers)
      .def("validate", &StructuredOutputConfig::validate);
}

void bind_generation_config(py::module_& m) {
  py::enum_<StopCriteria>(m, "StopCriteria", "When beam search stops (Hugging Face's early_stopping).")
      .value("EARLY", StopCriteria::EARLY)
      .value("HEURISTIC", StopCriteria::HEURISTIC)
      .value("NEVER", StopCriteria::NEVER);

  using C = GenerationConfig;
  py::class_<C> cls(m, "GenerationConfig",
                    "How to generate: lengths, stopping, sampling, beam search and speculative decoding. "
                    "GenerationConfig(**fields) sets fields by name.");
  cls.def(py::init([](const py::kwargs& kwargs) { return with_fields(C{}, kwargs); }));
  cls.def_readwrite("max_new_tokens", &C::max_new_tokens)
      .def_readwrite("max_length", &C::max_length)
      .def_readwrite("min_new_tokens", &C::min_new_tokens)
      .def_readwrite("ignore_eos", &C::ignore_eos)
      .def_readwrite("include_stop_str_in_output", &C::include_stop_str_in_output)
      .def_readwrite("skip_special_tokens", &C::skip_special_tokens)
      .def_readwrite("do_sample", &C::do_sample)
      .def_readwrite("temperature", &C::temperature)
      .def_readwrite("top_k", &C::top_k)
      .def_readwrite("top_p", &C::top_p)
      .def_readwrite("min_p", &C::min_p)
      .def_readwrite("repetition_penalty", &C::repetition_penalty)
      .def_readwrite("presence_penalty", &C::presence_penalty)
      .def_readwrite("frequency_penalty", &C::frequency_penalty)
      .def_readwrite("logit_bias", &C::logit_bias)
      .def_readwrite("no_repeat_ngram_size", &C::no_repeat_ngram_size)
      .def_readwrite("rng_seed", &C::rng_seed)
      .def_readwrite("num_return_sequences", &C::num_return_sequences)
      .def_readwrite("num_beams", &C::num_beams)
      .def_readwrite("length_penalty", &C::length_penalty)
      .def_readwrite("logprobs", &C::logprobs)
      .def_readwrite("apply_chat_template", &C::apply_chat_template)
      .def_readwrite("num_assistant_tokens", &C::num_assistant_tokens)
      .def_readwrite("assistant_confidence_threshold", &C::assistant_confidence_threshold)
      .def_readwrite("max_ngram_size", &C::max_ngram_size)
      .def_readwrite("structured_output_config", &C::structured_output_config);
  def_set(cls, "eos_token_ids", &C::eos_token_ids);
  def_set(cls, "stop_token_ids", &C::stop_token_ids);
  def_set(cls, "stop_strings", &C::stop_strings);
  const auto get_stop = [](const C& c) { return c.early_stopping; };
  const auto set_stop = [](C& c, const py::object& v) { c.early_stopping = to_stop_criteria(v); };
  cls.def_property("early_stopping", get_stop, set_stop)
      .def_property("stop_criteria", get_stop, set_stop)  // OpenVINO GenAI's name
      // OpenVINO GenAI's single EOS id: -1 when none is set.
      .def_property(
          "eos_token_id", [](const C& c) { return c.eos_token_ids.empty() ? -1 : *c.eos_token_ids.begin(); },
          [](C& c, std::int32_t id) { c.eos_token_ids = {id}; });
  cls.def("validate", &C::validate)
      .def("is_beam_search", &C::is_beam_search)
      .def("is_greedy_decoding", [](const C& c) { return !c.do_sample && !c.is_beam_search(); })
      .def("is_multinomial", [](const C& c) { return c.do_sample; })
      .def("is_speculative_decoding",
           [](const C& c) { return c.num_assistant_tokens > 0 || c.assistant_confidence_threshold > 0; })
      .def("is_prompt_lookup", &C::is_prompt_lookup)
      .def(
          "update_generation_config",
          [](py::object self, const py::kwargs& kwargs) {
            set_attributes(self, kwargs);
            self.cast<const C&>().validate();
          },
          "Sets the given fields by name and validates the result.")
      .def("__repr__", &repr)
      .def("__copy__", [](const C& c) { return c; })
      .def(
          "__deepcopy__", [](const C& c, const py::dict&) { return c; }, py::arg("memo"));
}

void bind_scheduler_config(py::module_& m) {
  using S = SchedulerConfig;
  py::class_<S>(m, "SchedulerConfig",
                "How the engine shares each step and the KV cache between sequences; cache_size is in GB.")
      .def(py::init([](const py::kwargs& kwargs) { return with_fields(S{}, kwargs); }))
      .def_readwrite("max_num_batched_tokens", &S::max_num_batched_tokens)
      .def_readwrite("max_num_seqs", &S::max_num_seqs)
      .def_readwrite("num_kv_blocks", &S::num_kv_blocks)
      .def_readwrite("cache_size", &S::cache_size)
      .def_readwrite("dynamic_split_fuse", &S::dynamic_split_fuse)
      .def_readwrite("enable_prefix_caching", &S::enable_prefix_caching);
}

}  // namespace

void bind_config(py::module_& m) {
  bind_structured_output(m);
  bind_generation_config(m);
  bind_scheduler_config(m);
}

}  // namespace kiln::python
