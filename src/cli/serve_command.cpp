// `kiln serve`: the OpenAI-compatible HTTP server (src/server/) on one model. Flags map onto the
// scheduler, the pipeline and the server's limits; the library does the rest.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/generation_flags.hpp"
#include "cli/option_checks.hpp"
#include "server/serve.hpp"
#include "server/serve_config.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln::cli {
namespace {

struct ServeFlags {
  PipelineFlags pipeline;
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;
  std::string api_key;
  std::string api_key_file;
  std::string served_model_name;
  std::string config;
  std::int64_t max_waiting = 1024;
  std::size_t max_body_bytes = 8u << 20;
  std::int64_t max_tokens_limit = 0;
  std::int64_t drain_timeout_s = 30;
  std::int64_t request_timeout_s = 0;
  std::int64_t read_timeout_s = 60;
  std::vector<std::string> allowed_origins;
  std::string reasoning_parser;
  std::string tool_call_parser;
  SchedulerConfig scheduler;
  bool no_prefix_caching = false;
  std::string kv_events_config;
};

std::string read_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("serve: --api-key-file {}: cannot read it", path);
  std::stringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty()) fail("serve: --api-key-file {}: the file is empty", path);
  return key;
}

void run(const ServeFlags& f) {
  server::ServeOptions o;
  const server::AnswerParsers parsers =
      server::answer_parsers(f.reasoning_parser, f.tool_call_parser, "serve: --reasoning-parser / --tool-call-parser");
  if (!f.config.empty()) {
    o.models = server::read_models_config(f.config, parsers);
  } else {
    server::ServedModelOptions m;
    m.dir = model_dir(f.pipeline);
    // A directory's name, or a GGUF file's without the extension.
    const std::filesystem::path path = m.dir.lexically_normal();
    m.name = !f.served_model_name.empty()  ? f.served_model_name
             : path.extension() == ".gguf" ? path.stem().string()
                                           : path.filename().string();
    if (m.name.empty()) m.name = m.dir.lexically_normal().parent_path().filename().string();  // "DIR/"
    m.device = f.pipeline.device.device;
    m.properties = pipeline_properties(f.pipeline);
    m.scheduler = f.scheduler;
    m.scheduler.enable_prefix_caching = !f.no_prefix_caching;
    m.parsers = parsers;
    if (!f.kv_events_config.empty()) {
      const std::string origin = "serve: --kv-events-config";
      m.kv_events = server::read_kv_events_config(parse_json_text(f.kv_events_config, origin), origin);
    }
    o.models.push_back(std::move(m));
  }
  o.http.host = f.host;
  o.http.port = f.port;
  o.http.max_body_bytes = f.max_body_bytes;
  o.http.drain_timeout = std::chrono::seconds(f.drain_timeout_s);
  o.http.request_timeout = std::chrono::seconds(f.request_timeout_s);
  o.http.read_timeout = std::chrono::seconds(f.read_timeout_s);
  o.http.allowed_origins = f.allowed_origins;
  o.routes.api_key = f.api_key_file.empty() ? f.api_key : read_key_file(f.api_key_file);
  o.routes.max_waiting = f.max_waiting;
  o.routes.limits.max_tokens = f.max_tokens_limit;
  std::string names;
  for (const auto& m : o.models) names += (names.empty() ? "" : ", ") + m.name;
  o.on_listening = [&](std::uint16_t port) {
    std::cerr << "kiln serve: listening on http://" << f.host << ":" << port << " (loading " << names << ")"
              << std::endl;
  };
  o.on_ready = [](const std::string& name) { std::cerr << "kiln serve: model " << name << " ready" << std::endl; };
  server::serve(o);
  std::cerr << "kiln serve: stopped" << std::endl;
}

}  // namespace

void register_serve_command(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  auto* cmd = app.add_subcommand("serve", "Serve the model over an OpenAI-compatible HTTP API");
  add_pipeline_flags(*cmd, f->pipeline);
  cmd->add_option("--host", f->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", f->port, "Port to listen on (0: any free one, printed at start)")->capture_default_str();
  auto* key = cmd->add_option("--api-key", f->api_key, "Require 'Authorization: Bearer KEY' on the /v1 routes");
  cmd->add_option("--api-key-file", f->api_key_file, "Read the API key from this file")->excludes(key);
  auto* name = cmd->add_option("--served-model-name", f->served_model_name,
                               "The model's name in the API (default: the model directory's name)");
  cmd->add_option("--config", f->config,
                  "Serve the models this JSON file lists, each with its own scheduler (see docs/SERVING.md)")
      ->excludes(name)
      ->excludes("--model")
      ->excludes("--draft");
  cmd->add_option("--max-waiting", f->max_waiting, "Answer 429 when this many requests wait already (0: no limit)")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--max-body-bytes", f->max_body_bytes, "Largest request body (413 above it)")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--max-tokens-limit", f->max_tokens_limit,
                  "Largest max_tokens a request may ask for (0: the context)")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--drain-timeout", f->drain_timeout_s,
                  "On SIGTERM, seconds to let requests in flight finish before cancelling them")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--request-timeout", f->request_timeout_s,
                  "Cancel a generation that runs longer than this many seconds (504, or an error event; 0: never)")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--read-timeout", f->read_timeout_s,
                  "Close a connection that takes longer than this many seconds to send a request, or idles "
                  "longer between requests (0: never)")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--allowed-origins", f->allowed_origins,
                  "Browser origins allowed to call the API (CORS), or *; repeatable (default: CORS off)");
  cmd->add_option("--reasoning-parser", f->reasoning_parser,
                  "Split <think> reasoning out of chat answers into reasoning_content (vLLM's names accepted; "
                  "with --config, for the models that name none)")
      ->check(CLI::IsMember({"think", "deepseek_r1", "qwen3"}));
  cmd->add_option("--tool-call-parser", f->tool_call_parser,
                  "Read tool calls out of chat answers in this model family's format (vLLM's names); without it "
                  "requests with tools are refused (with --config, for the models that name none)")
      ->check(CLI::IsMember({"hermes", "llama3_json", "mistral"}));
  cmd->add_option("--max-num-seqs", f->scheduler.max_num_seqs, "Sequences one engine step may run")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--max-num-batched-tokens", f->scheduler.max_num_batched_tokens, "Tokens one engine step may compute")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--cache-size", f->scheduler.cache_size, "KV cache size in GiB (0: derived from free memory)")
      ->capture_default_str();
  cmd->add_option("--num-kv-blocks", f->scheduler.num_kv_blocks, "KV cache size in blocks (overrides --cache-size)")
      ->check(at_least(0));
  cmd->add_flag("--no-prefix-caching", f->no_prefix_caching, "Turn the prefix cache off");
  cmd->add_option("--kv-events-config", f->kv_events_config,
                  "Publish the prefix cache's KV events over ZeroMQ for KV-aware routers: vLLM's JSON, e.g. "
                  "'{\"enable_kv_cache_events\": true, \"endpoint\": \"tcp://*:5557\"}' (see docs/DEPLOY.md; "
                  "with --config, set per model)")
      ->excludes("--config");
  cmd->callback([f] { run(*f); });
}

}  // namespace kiln::cli
