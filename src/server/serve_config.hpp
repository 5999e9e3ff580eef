// The models one `kiln serve` serves. From the command line it is one; `--config FILE` names
// several, each with its own pipeline (engine thread, scheduler and KV cache), chosen by the
// request's `model` field:
//   {"models": [{"name": "chat", "model": "DIR", "device": "CPU", "draft": "DIR",
//                "context": 4096, "max_num_seqs": 64, "max_num_batched_tokens": 2048,
//                "cache_size": 0, "num_kv_blocks": 0, "enable_prefix_caching": true,
//                "properties": {"KV_CACHE_PRECISION": "u8"},
//                "reasoning_parser": "qwen3", "tool_call_parser": "hermes",
//                "kv_events_config": {"enable_kv_cache_events": true, ...}}, ...]}
// Only "name" and "model" are required; a relative path is relative to the file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/llm_pipeline.hpp"
#include "kiln/scheduler_config.hpp"
#include "server/answer_parsers.hpp"
#include "server/kv_events_config.hpp"

namespace kiln::server {

struct ServedModelOptions {
  std::string name;  // in the API (`model`, GET /v1/models)
  std::filesystem::path dir;
  std::string device = "CPU";
  SchedulerConfig scheduler;
  PipelineProperties properties;
  AnswerParsers parsers;
  KvEventsConfig kv_events;  // when enabled, serve() has the pipeline record the events
};

// `default_parsers` serve the models that name no parser of their own. Throws kiln::Error naming
// the file and the field (an unknown field too: a typo must not pass as a default).
std::vector<ServedModelOptions> read_models_config(const std::filesystem::path& file,
                                                   const AnswerParsers& default_parsers = {});

}  // namespace kiln::server
