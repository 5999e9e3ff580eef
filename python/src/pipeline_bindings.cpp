// LLMPipeline, draft_model, ContinuousBatchingPipeline and GenerationHandle. Every call that
// generates, loads or waits releases the GIL; waits wake every 100 ms to let Ctrl-C through.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "bindings.hpp"
#include "kiln/continuous_batching_pipeline.hpp"
#include "kiln/llm_pipeline.hpp"
#include "results.hpp"
#include "streamer_bridge.hpp"
#include "tokenized_inputs.hpp"

namespace kiln::python {
namespace {

constexpr std::chrono::milliseconds kInterruptPoll{100};

// Raises the pending KeyboardInterrupt (or whatever a signal handler raised), if any. Needs the
// GIL; does nothing off the main thread, where Python never handles signals.
void raise_if_interrupted() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// A property value as kiln's device properties take it: text, with True/False as OpenVINO
// spells them.
std::string property_text(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "YES" : "NO";
  return py::str(value);
}

// The constructor's keyword arguments (and openvino_genai's positional `config` dict): the
// scheduler and draft model by their openvino_genai names, kiln's PipelineProperties by their
// field names, and everything else a device property ("CACHE_DIR", "KV_CACHE_PRECISION", ...).
PipelineProperties to_properties(const py::dict& config, const py::kwargs& kwargs) {
  PipelineProperties p;
  for (const py::dict& source : {config, static_cast<const py::dict&>(kwargs)}) {
    for (const auto& [key, value] : source) {
      const std::string name = py::str(key);
      if (name == "scheduler_config") {
        p.scheduler = value.cast<SchedulerConfig>();
      } else if (name == "draft_model") {
        p.draft = value.cast<DraftModel>();
      } else if (name == "context_tokens") {
        p.context_tokens = value.cast<std::int64_t>();
      } else if (name == "kv_cache_sequences") {
        p.kv_cache_sequences = value.cast<std::int64_t>();
      } else if (name == "kv_block_size") {
        p.kv_block_size = value.cast<std::int64_t>();
      } else if (name == "adaptive_speculation") {
        p.adaptive_speculation = value.cast<bool>();
      } else {
        p.device_properties[name] = property_text(value);
      }
    }
  }
  return p;
}

// The call's config: the given one (or the pipeline's), with keyword arguments set on it.
GenerationConfig call_config(std::optional<GenerationConfig> given, const GenerationConfig& fallback,
                             const py::kwargs& kwargs) {
  return with_fields(given.value_or(fallback), kwargs);
}

// Runs a generation (`call`) on a thread of its own while this one waits with the GIL released,
// checking for Ctrl-C every 100 ms, so that a signal stops any generation at once, prefill
// included. On a signal, `cancel` ends the generation (again at each poll, in case it had not yet
// begun) and the signal's exception is raised once `call` has returned. A streamer runs on the
// generation's thread, taking the GIL for each piece; what it raises comes out of `call`.
template <typename Call, typename Cancel>
auto run_interruptibly(Call call, Cancel cancel) {
  auto done = std::async(std::launch::async, std::move(call));
  const auto wait = [&] {
    py::gil_scoped_release release;
    return done.wait_for(kInterruptPoll) == std::future_status::ready;
  };
  while (!wait()) {
    try {
      raise_if_interrupted();
    } catch (const py::error_already_set&) {
      py::gil_scoped_release release;
      while (done.wait_for(kInterruptPoll) != std::future_status::ready) cancel();
      throw;
    }
  }
  return done.get();  // ready: does not wait
}

// LLMPipeline is one caller's; Python threads that share one take turns. The mutex is only ever
// waited for with the GIL released: its holder may be running a streamer that needs the GIL.
struct PyLLMPipeline {
  LLMPipeline pipe;
  std::mutex mutex;
};

template <typename F>
auto locked(PyLLMPipeline& self, F f) {
  py::gil_scoped_release release;
  std::lock_guard lock(self.mutex);
  return f();
}

py::object llm_generate(PyLLMPipeline& self, const py::object& inputs, std::optional<GenerationConfig> given,
                        const py::object& streamer, const py::kwargs& kwargs) {
  const GenerationConfig fallback = locked(self, [&] { return self.pipe.get_generation_config(); });
  const GenerationConfig config = call_config(std::move(given), fallback, kwargs);
  const StreamerVariant s = to_streamer(streamer);
  std::atomic<bool> started{false};
  const auto run = [&](const auto& prompts) {
    return run_interruptibly(
        [&] {
          std::lock_guard lock(self.mutex);
          started = true;
          return self.pipe.generate(prompts, config, s);
        },
        // Only once this call holds the pipeline: before, a cancel would end another thread's call.
        [&] {
          if (started) self.pipe.cancel();
        });
  };
  if (py::isinstance<py::str>(inputs)) return py::cast(run(inputs.cast<std::string>()));
  if (py::isinstance<ChatHistory>(inputs)) return py::cast(run(inputs.cast<ChatHistory>()));
  if (py::isinstance<TokenizedInputs>(inputs)) {
    DecodedResults r = run(prompts_of(inputs.cast<const TokenizedInputs&>()));
    return py::cast(EncodedResults{std::move(r.tokens), std::move(r.scores), std::move(r.finish_reasons),
                                   std::move(r.perf_metrics)});
  }
  if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs)) {
    return py::cast(run(inputs.cast<std::vector<std::string>>()));
  }
  throw py::type_error("generate: inputs are a str, a list of str, a ChatHistory or TokenizedInputs");
}

void bind_llm_pipeline(py::module_& m) {
  py::class_<DraftModel>(m, "DraftModel", "The draft model for speculative decoding.")
      .def_readonly("models_path", &DraftModel::dir)
      .def_readonly("device", &DraftModel::device);
  m.def(
      "draft_model",
      [](const std::filesystem::path& models_path, const std::string& device, const py::kwargs& kwargs) {
        if (!kwargs.empty()) {
          throw py::value_error("draft_model: kiln compiles the draft with the pipeline's properties; give them there");
        }
        return draft_model(models_path, device);
      },
      py::arg("models_path"), py::arg("device") = "CPU",
      "The draft model for speculative decoding; it must share the main model's tokenizer.");

  const char* generate_doc =
      "generate(inputs, generation_config=None, streamer=None, **kwargs): inputs are a prompt, a list of prompts, "
      "a ChatHistory or TokenizedInputs (which return EncodedResults); kwargs set GenerationConfig fields.";
  py::class_<PyLLMPipeline>(m, "LLMPipeline", "Text generation with one model (and optionally a draft model).")
      .def(py::init([](const std::filesystem::path& models_path, const std::string& device, const py::dict& config,
                       const py::kwargs& kwargs) {
             PipelineProperties properties = to_properties(config, kwargs);
             py::gil_scoped_release release;
             return new PyLLMPipeline{LLMPipeline(models_path, device, properties), {}};
           }),
           py::arg("models_path"), py::arg("device") = "CPU", py::arg("config") = py::dict())
      .def("generate", &llm_generate, py::arg("inputs"), py::arg("generation_config") = py::none(),
           py::arg("streamer") = py::none(), generate_doc)
      .def("__call__", &llm_generate, py::arg("inputs"), py::arg("generation_config") = py::none(),
           py::arg("streamer") = py::none(), generate_doc)
      .def("get_generation_config",
           [](PyLLMPipeline& self) { return locked(self, [&] { return self.pipe.get_generation_config(); }); })
      .def(
          "set_generation_config",
          [](PyLLMPipeline& self, const GenerationConfig& c) {
            locked(self, [&] { self.pipe.set_generation_config(c); });
          },
          py::arg("config"))
      .def("get_tokenizer", [](PyLLMPipeline& self) { return locked(self, [&] { return self.pipe.get_tokenizer(); }); })
      .def(
          "start_chat",
          [](PyLLMPipeline& self, const std::string& system) { locked(self, [&] { self.pipe.start_chat(system); }); },
          py::arg("system_message") = "")
      .def("finish_chat", [](PyLLMPipeline& self) { locked(self, [&] { self.pipe.finish_chat(); }); })
      .def("in_chat", [](PyLLMPipeline& self) { return locked(self, [&] { return self.pipe.in_chat(); }); })
      .def("get_chat_history",
           [](PyLLMPipeline& self) { return locked(self, [&] { return ChatHistory(self.pipe.get_chat_history()); }); })
      .def("get_perf_metrics",
           [](PyLLMPipeline& self) { return locked(self, [&] { return PerfMetrics(self.pipe.get_perf_metrics()); }); })
      .def("reset_perf_metrics", [](PyLLMPipeline& self) { locked(self, [&] { self.pipe.reset_perf_metrics(); }); });
}

// read() that waits with the GIL released and lets Ctrl-C through.
GenerationOutputs read_interruptibly(GenerationHandleImpl& handle) {
  for (;;) {
    GenerationOutputs outs;
    {
      py::gil_scoped_release release;
      outs = handle.read_for(kInterruptPoll);
    }
    if (!outs.empty() || (handle.get_status() != GenerationStatus::RUNNING && !handle.can_read())) return outs;
    raise_if_interrupted();
  }
}

std::vector<GenerationOutput> read_all_interruptibly(GenerationHandleImpl& handle) {
  while (handle.get_status() == GenerationStatus::RUNNING) {
    {
      py::gil_scoped_release release;
      handle.read_for(kInterruptPoll);  // read_all() returns all output, read or not
    }
    raise_if_interrupted();
  }
  py::gil_scoped_release release;
  return handle.read_all();
}

void bind_handle(py::module_& m) {
  using H = GenerationHandleImpl;
  py::class_<H, std::shared_ptr<H>>(m, "GenerationHandle",
                                    "A request in flight: read its output as it comes, stop or cancel it.")
      .def_property_readonly("request_id", &H::request_id)
      .def("get_status", &H::get_status)
      .def("error", &H::error)
      .def("get_perf_metrics", &H::get_perf_metrics)
      .def("can_read", &H::can_read)
      .def("read", &read_interruptibly)
      .def("read_all", &read_all_interruptibly)
      .def("stop", &H::stop)
      .def("cancel", &H::cancel)
      .def("drop", &H::drop);
}

// A request's prompt as add_request takes it: text, token ids (a list or a one-row Tensor) or a
// ChatHistory.
GenerationHandle add_request(ContinuousBatchingPipeline& pipe, std::uint64_t id, const py::object& prompt,
                             const GenerationConfig& config) {
  if (py::isinstance<py::str>(prompt)) {
    const auto text = prompt.cast<std::string>();
    py::gil_scoped_release release;
    return pipe.add_request(id, text, config);
  }
  if (py::isinstance<ChatHistory>(prompt)) {
    const auto history = prompt.cast<ChatHistory>();
    py::gil_scoped_release release;
    return pipe.add_request(id, history, config);
  }
  std::vector<std::int32_t> ids;
  if (py::isinstance<IdTensor>(prompt)) {
    const auto rows = prompts_of({prompt.cast<IdTensor>(), {}});
    if (rows.size() != 1) throw py::value_error("add_request: a Tensor of input ids has one row");
    ids = rows.front();
  } else {
    ids = prompt.cast<std::vector<std::int32_t>>();
  }
  py::gil_scoped_release release;
  return pipe.add_request(id, std::move(ids), config);
}

std::vector<GenerationResult> cb_generate(ContinuousBatchingPipeline& pipe, const py::list& prompts,
                                          const py::object& configs, const py::object& streamer) {
  std::vector<GenerationConfig> all;
  if (py::isinstance<GenerationConfig>(configs)) {
    all.push_back(configs.cast<GenerationConfig>());
  } else {
    all = configs.cast<std::vector<GenerationConfig>>();
  }
  const StreamerVariant s = to_streamer(streamer);
  const auto run = [&](const auto& inputs) {
    std::promise<std::thread::id> worker;
    auto worker_id = worker.get_future().share();
    return run_interruptibly(
        [&] {
          worker.set_value(std::this_thread::get_id());
          return pipe.generate(inputs, all, s);
        },
        // Other Python threads' calls on this pipeline go on: only this call's thread is cancelled.
        [&] { pipe.cancel_generate(worker_id.get()); });
  };
  if (prompts.empty() || py::isinstance<py::str>(prompts[0])) return run(prompts.cast<std::vector<std::string>>());
  if (py::isinstance<ChatHistory>(prompts[0])) return run(prompts.cast<std::vector<ChatHistory>>());
  return run(prompts.cast<std::vector<std::vector<std::int32_t>>>());
}

void bind_continuous_batching(py::module_& m) {
  using CB = ContinuousBatchingPipeline;
  py::class_<CB>(m, "ContinuousBatchingPipeline",
                 "Many requests at once, stepped together by one engine thread; every method is thread-safe.")
      .def(py::init([](const std::filesystem::path& models_path, const SchedulerConfig& scheduler,
                       const std::string& device, const py::dict& properties, const py::dict& tokenizer_properties,
                       const py::kwargs& kwargs) {
             if (!tokenizer_properties.empty()) throw py::value_error("tokenizer_properties: kiln takes none");
             PipelineProperties p = to_properties(properties, kwargs);
             py::gil_scoped_release release;
             return std::make_unique<CB>(models_path, scheduler, device, std::move(p));
           }),
           py::arg("models_path"), py::arg("scheduler_config"), py::arg("device") = "CPU",
           py::arg("properties") = py::dict(), py::arg("tokenizer_properties") = py::dict())
      .def("add_request", &add_request, py::arg("request_id"), py::arg("prompt"), py::arg("generation_config"))
      .def("step", &CB::step, py::call_guard<py::gil_scoped_release>())
      .def("has_non_finished_requests", &CB::has_non_finished_requests)
      .def("generate", &cb_generate, py::arg("prompts"), py::arg("generation_config"), py::arg("streamer") = py::none())
      .def("start_chat", &CB::start_chat, py::arg("system_message") = "")
      .def("finish_chat", &CB::finish_chat)
      .def("get_chat_history", &CB::get_chat_history)
      .def("get_tokenizer", &CB::get_tokenizer)
      .def("get_config", &CB::get_config)
      .def("get_max_context_tokens", &CB::get_max_context_tokens)
      .def("get_metrics", &CB::get_metrics);
}

}  // namespace

void bind_pipelines(py::module_& m) {
  bind_llm_pipeline(m);
  bind_handle(m);
  bind_continuous_batching(m);
}

}  // namespace kiln::python
