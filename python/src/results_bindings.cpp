// What generation returns: DecodedResults / EncodedResults, PerfMetrics with its statistics, the
// per-request GenerationOutput and GenerationResult, and the engine's PipelineMetrics.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <cmath>
#include <numeric>

#include "bindings.hpp"
#include "kiln/continuous_batching_pipeline.hpp"
#include "kiln/perf_metrics.hpp"
#include "results.hpp"

namespace kiln::python {
namespace {

py::list texts(const std::vector<std::string>& all) {
  py::list out;
  for (const std::string& s : all) out.append(utf8_text(s));
  return out;
}

// openvino_genai's str(results): the text alone, or "score: text" lines for several.
py::str results_str(const std::vector<std::string>& all, const std::vector<float>& scores) {
  if (all.size() == 1) return utf8_text(all.front());
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += '\n';
    out += std::to_string(i < scores.size() ? scores[i] : 0.0f) + ": " + all[i];
  }
  return utf8_text(out);
}

std::int64_t total(const std::vector<double>& samples) {
  return static_cast<std::int64_t>(std::llround(std::accumulate(samples.begin(), samples.end(), 0.0)));
}

void bind_perf_metrics(py::module_& m) {
  py::class_<MeanStd>(m, "MeanStdPair", "A statistic over samples: mean and population standard deviation.")
      .def_readonly("mean", &MeanStd::mean)
      .def_readonly("std", &MeanStd::std)
      .def("__iter__", [](const MeanStd& p) { return py::iter(py::make_tuple(p.mean, p.std)); })
      .def("__repr__", [](const MeanStd& p) {
        return "MeanStdPair(mean=" + std::to_string(p.mean) + ", std=" + std::to_string(p.std) + ")";
      });

  using R = RawPerfMetrics;
  py::class_<R>(m, "RawPerfMetrics", "The samples behind PerfMetrics' statistics (durations in ms).")
      .def_readonly("generate_durations", &R::generate_durations_ms)
      .def_readonly("tokenization_durations", &R::tokenization_durations_ms)
      .def_readonly("detokenization_durations", &R::detokenization_durations_ms)
      .def_readonly("times_to_first_token", &R::ttfts_ms)
      .def_readonly("queue_times", &R::queue_times_ms)
      .def_readonly("throughputs", &R::throughputs)
      .def_readonly("token_latencies", &R::token_latencies_ms)
      .def_readonly("num_input_tokens", &R::num_input_tokens)
      .def_readonly("num_prefilled_tokens", &R::num_prefilled_tokens)
      .def_readonly("num_generated_tokens", &R::num_generated_tokens)
      .def_readonly("acceptance_rates", &R::acceptance_rates)
      .def_readonly("num_proposed_tokens", &R::num_proposed_tokens)
      .def_readonly("num_accepted_tokens", &R::num_accepted_tokens);

  using P = PerfMetrics;
  py::class_<P>(m, "PerfMetrics",
                "Performance of generate() calls; durations in ms, statistics as mean and std over calls.")
      .def(py::init<>())
      .def("get_load_time", [](const P& p) { return p.load_time_ms; })
      .def("get_ttft", &P::get_ttft)
      .def("get_tpot", &P::get_tpot)
      .def("get_throughput", &P::get_throughput)
      .def("get_generate_duration", &P::get_generate_duration)
      .def("get_tokenization_duration", &P::get_tokenization_duration)
      .def("get_detokenization_duration", &P::get_detokenization_duration)
      .def("get_acceptance_rate", &P::get_acceptance_rate)
      // Token counts are totals over the calls, as openvino_genai gives them.
      .def("get_num_input_tokens", [](const P& p) { return total(p.raw.num_input_tokens); })
      .def("get_num_generated_tokens", [](const P& p) { return total(p.raw.num_generated_tokens); })
      .def("get_num_prefilled_tokens", [](const P& p) { return total(p.raw.num_prefilled_tokens); })
      .def("num_calls", &P::num_calls)
      .def_readonly("raw_metrics", &P::raw)
      .def(py::self + py::self)
      .def(py::self += py::self);
}

void bind_decoded(py::module_& m) {
  py::enum_<GenerationFinishReason>(m, "GenerationFinishReason", "Why a sequence ended.")
      .value("NONE", GenerationFinishReason::NONE)
      .value("STOP", GenerationFinishReason::STOP)
      .value("LENGTH", GenerationFinishReason::LENGTH)
      .value("CANCEL", GenerationFinishReason::CANCEL);

  py::class_<TokenLogprob>(m, "TokenLogprob", "A generated token's log-probability and the most likely alternatives.")
      .def_readonly("token", &TokenLogprob::token)
      .def_readonly("logprob", &TokenLogprob::logprob)
      .def_readonly("top", &TokenLogprob::top);

  py::class_<DecodedResults>(m, "DecodedResults", "Texts generated for text prompts, with scores and metrics.")
      .def_property_readonly("texts", [](const DecodedResults& r) { return texts(r.texts); })
      .def_readonly("scores", &DecodedResults::scores)
      .def_readonly("tokens", &DecodedResults::tokens)
      .def_readonly("finish_reasons", &DecodedResults::finish_reasons)
      .def_readonly("logprobs", &DecodedResults::logprobs)
      .def_readonly("perf_metrics", &DecodedResults::perf_metrics)
      .def("__str__", [](const DecodedResults& r) { return results_str(r.texts, r.scores); });

  py::class_<EncodedResults>(m, "EncodedResults", "Token ids generated for token-id prompts, with scores and metrics.")
      .def_readonly("tokens", &EncodedResults::tokens)
      .def_readonly("scores", &EncodedResults::scores)
      .def_readonly("finish_reasons", &EncodedResults::finish_reasons)
      .def_readonly("perf_metrics", &EncodedResults::perf_metrics);
}

void bind_requests(py::module_& m) {
  py::enum_<GenerationStatus>(m, "GenerationStatus", "Where a request of a ContinuousBatchingPipeline stands.")
      .value("RUNNING", GenerationStatus::RUNNING)
      .value("FINISHED", GenerationStatus::FINISHED)
      .value("STOP", GenerationStatus::STOP)
      .value("CANCEL", GenerationStatus::CANCEL)
      .value("FAILED", GenerationStatus::FAILED);

  using O = GenerationOutput;
  py::class_<O>(m, "GenerationOutput", "One sequence's output (read(): what is new; read_all(): all of it).")
      .def_readonly("generated_ids", &O::generated_ids)
      .def_property_readonly("generated_log_probs",
                             [](const O& o) {
                               std::vector<float> out;
                               for (const TokenLogprob& t : o.logprobs) out.push_back(t.logprob);
                               return out;
                             })
      .def_readonly("logprobs", &O::logprobs)
      .def_property_readonly("text", [](const O& o) { return utf8_text(o.text); })
      .def_readonly("score", &O::score)
      .def_readonly("finish_reason", &O::finish_reason);

  using G = GenerationResult;
  py::class_<G>(m, "GenerationResult", "One request's result from ContinuousBatchingPipeline.generate().")
      .def_readonly("request_id", &G::request_id)
      .def_readonly("m_request_id", &G::request_id)
      .def_property_readonly("texts", [](const G& g) { return texts(g.texts); })
      .def_property_readonly("m_generation_ids", [](const G& g) { return texts(g.texts); })
      .def("get_generation_ids", [](const G& g) { return texts(g.texts); })
      .def_readonly("tokens", &G::tokens)
      .def_readonly("scores", &G::scores)
      .def_readonly("m_scores", &G::scores)
      .def_readonly("finish_reasons", &G::finish_reasons)
      .def_readonly("logprobs", &G::logprobs)
      .def_readonly("status", &G::status)
      .def_readonly("m_status", &G::status)
      .def_readonly("error", &G::error)
      .def_readonly("perf_metrics", &G::perf_metrics)
      .def("__str__", [](const G& g) { return results_str(g.texts, g.scores); });

  using PM = PipelineMetrics;
  py::class_<PM>(m, "PipelineMetrics", "The engine's state after its latest step (cache usage in %).")
      .def_readonly("requests", &PM::requests)
      .def_readonly("scheduled_requests", &PM::scheduled_requests)
      .def_readonly("waiting_requests", &PM::waiting_requests)
      .def_readonly("cache_usage", &PM::cache_usage)
      .def_readonly("max_cache_usage", &PM::max_cache_usage)
      .def_readonly("avg_cache_usage", &PM::avg_cache_usage)
      .def_readonly("num_kv_blocks", &PM::num_kv_blocks)
      .def_readonly("num_steps", &PM::num_steps)
      .def_readonly("num_preemptions", &PM::num_preemptions)
      .def_readonly("prefix_cache_queries", &PM::prefix_cache_queries)
      .def_readonly("prefix_cache_hits", &PM::prefix_cache_hits)
      .def_readonly("num_prompt_tokens", &PM::num_prompt_tokens)
      .def_readonly("num_computed_prompt_tokens", &PM::num_computed_prompt_tokens)
      .def_readonly("num_generated_tokens", &PM::num_generated_tokens)
      .def_readonly("inference_duration", &PM::inference_duration_ms);
}

}  // namespace

void bind_results(py::module_& m) {
  bind_perf_metrics(m);
  bind_decoded(m);
  bind_requests(m);
}

}  // namespace kiln::python
