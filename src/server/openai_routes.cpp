#include "server/openai_routes.hpp"

#include <cctype>
#include <chrono>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "server/api_error.hpp"
#include "server/chat_prompt.hpp"
#include "server/completion_job.hpp"
#include "server/openai_response.hpp"
#include "server/openapi_spec.hpp"
#include "server/random_id.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

HttpResponse json_response(const json& body, int status = 200) {
  HttpResponse r;
  r.status = status;
  r.body = dump(body);
  return r;
}

// Compares digests without an early exit, so response time reveals neither how much of a key
// matched nor its length.
bool same_secret(const std::string& a, const std::string& b) {
  const std::string da = sha256_hex(a), db = sha256_hex(b);
  unsigned char diff = 0;
  for (std::size_t i = 0; i < da.size(); ++i) diff |= static_cast<unsigned char>(da[i] ^ db[i]);
  return diff == 0;
}

// A kiln::Error from the pipeline: the caller's fault unless it is a broken invariant.
ApiError from_error(const Error& e) {
  return e.kind() == ErrorKind::kInternal ? ApiError::internal(e.what()) : ApiError::bad_request(e.what());
}

// A regular expression for the decimal numbers 0 .. n without leading zeros: shorter numbers,
// then for each digit of n the numbers that match it so far and are smaller at that digit.
std::string decimal_at_most(std::int64_t n) {
  const std::string digits = std::to_string(n);
  std::vector<std::string> forms = {"0"};
  if (digits.size() > 1) forms.push_back(fmt::format("[1-9][0-9]{{0,{}}}", digits.size() - 2));
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const char low = i == 0 ? '1' : '0';
    if (digits[i] > low) {
      forms.push_back(
          fmt::format("{}[{}-{}][0-9]{{{}}}", digits.substr(0, i), low, char(digits[i] - 1), digits.size() - i - 1));
    }
  }
  if (n > 0) forms.push_back(digits);
  std::string pattern = "^(";
  for (std::size_t i = 0; i < forms.size(); ++i) pattern += (i ? "|" : "") + forms[i];
  return pattern + ")$";
}

// tool_choice auto's calls are enforced where kiln's grammar covers the tools' parameters. One
// it cannot compile (a schema keyword it does not support) leaves them unenforced, as other
// servers leave all of them, instead of refusing a request they would serve; a forced call, which
// needs the grammar, is refused instead.
GenerationHandle add_with_tool_call_grammar(ContinuousBatchingPipeline& pipeline, std::uint64_t id,
                                            const std::vector<std::int32_t>& ids, GenerationConfig& config) {
  try {
    return pipeline.add_request(id, ids, config);
  } catch (const Error& grammar_error) {
    config.structured_output_config.reset();
    GenerationHandle handle = pipeline.add_request(id, ids, config);  // a problem besides the grammar throws here
    spdlog::warn("serve: the tool calls of request {} are not enforced: {}", id, grammar_error.what());
    return handle;
  }
}

}  // namespace

OpenAiRoutes::OpenAiRoutes(RouteOptions options) : options_(std::move(options)), started_(unix_seconds()) {
  for (const ModelRoute& m : options_.models) {
    served_.push_back({m.name, m.parsers, std::make_shared<ServerMetrics>(m.name), nullptr, nullptr, {}});
  }
}

void OpenAiRoutes::set_pipeline(const std::string& name, std::shared_ptr<ContinuousBatchingPipeline> pipeline) {
  const bool first = !options_.models.empty() && name == options_.models.front().name;
  std::string spec = first && pipeline ? model_spec(*pipeline) : std::string();
  // A template that does not parse fails chat requests, not the model: completions still work.
  std::shared_ptr<const ChatTemplate> chat_template;
  std::string problem = "the model '" + name + "' has no chat template: use /v1/completions";
  if (pipeline && !pipeline->get_tokenizer().chat_template().empty()) {
    try {
      chat_template = std::make_shared<const ChatTemplate>(pipeline->get_tokenizer());
    } catch (const Error& e) {
      problem = "the model '" + name + "' has a chat template that does not parse: " + e.what();
    }
  }
  std::lock_guard lock(mutex_);
  for (Served& s : served_) {
    if (s.name == name) {
      s.pipeline = std::move(pipeline);
      s.chat_template = std::move(chat_template);
      s.chat_template_problem = s.chat_template ? std::string() : problem;
    }
  }
  if (first) spec_ = std::move(spec);
}

std::vector<OpenAiRoutes::Served> OpenAiRoutes::served() const {
  std::lock_guard lock(mutex_);
  return served_;
}

OpenAiRoutes::Served OpenAiRoutes::target(const nlohmann::ordered_json& body) const {
  const std::vector<Served> all = served();
  const auto model = body.find("model");
  std::optional<Served> found;
  if (model == body.end() || model->is_null()) {
    if (all.size() != 1) {
      std::vector<std::string> names;
      for (const Served& s : all) names.push_back(s.name);
      throw ApiError::bad_request(fmt::format("'model' is required: this server serves {}", fmt::join(names, ", ")),
                                  "model");
    }
    found = all.front();
  } else {
    if (!model->is_string()) throw ApiError::bad_request("'model' must be a string", "model");
    for (const Served& s : all) {
      if (s.name == model->get<std::string>()) found = s;
    }
    if (!found) throw ApiError::model_not_found(model->get<std::string>());
  }
  if (!found->pipeline) throw ApiError::unavailable("the model '" + found->name + "' is still loading");
  return *found;
}

// The OpenAPI document with the served model's limits filled in: its largest token id and the
// largest max_tokens, so that a schema-valid request is one this server accepts.
std::string OpenAiRoutes::model_spec(const ContinuousBatchingPipeline& pipeline) const {
  json spec = json::parse(openapi_spec());
  json& schemas = spec["components"]["schemas"];
  const std::int64_t largest_id = pipeline.get_tokenizer().vocab_size() - 1;
  schemas["TokenId"]["maximum"] = largest_id;
  std::int64_t max_tokens = pipeline.get_max_context_tokens();
  if (options_.limits.max_tokens > 0) max_tokens = std::min(max_tokens, options_.limits.max_tokens);
  for (const char* request : {"ChatCompletionRequest", "CompletionRequest"}) {
    for (const char* field : {"max_tokens", "max_completion_tokens"}) {
      json& properties = schemas[request]["properties"];
      if (properties.contains(field)) properties[field]["maximum"] = max_tokens;
    }
    schemas[request]["properties"]["logit_bias"]["propertyNames"]["pattern"] = decimal_at_most(largest_id);
  }
  // A prompt of ids leaves room for at least one new token.
  const auto is_ids = [](const json& form) {
    return form.value("type", json()) == "array" && form["items"].contains("$ref");
  };
  for (json& form : schemas["CompletionRequest"]["properties"]["prompt"]["oneOf"]) {
    if (form.value("type", json()) != "array") continue;
    if (is_ids(form)) form["maxItems"] = pipeline.get_max_context_tokens() - 1;
    if (is_ids(form["items"])) form["items"]["maxItems"] = pipeline.get_max_context_tokens() - 1;
  }
  return dump(spec);
}

std::string OpenAiRoutes::spec() const {
  std::lock_guard lock(mutex_);
  return spec_.empty() ? std::string(openapi_spec()) : spec_;
}

Reply OpenAiRoutes::handle(const HttpRequest& request) {
  try {
    const std::string& path = request.path;
    const auto route = [&](const char* method, const char* route_path) {
      if (path != route_path) return false;
      if (request.method != method) throw ApiError::method_not_allowed(request.method, method);
      return true;
    };
    if (path.rfind("/v1/", 0) == 0) check_api_key(request);
    if (route("GET", "/health")) return health();
    if (route("GET", "/v1/models")) return models();
    if (route("POST", "/v1/chat/completions")) return completion(Endpoint::kChat, request);
    if (route("POST", "/v1/completions")) return completion(Endpoint::kCompletions, request);
    if (route("POST", "/tokenize")) return tokenize(request);
    if (route("POST", "/detokenize")) return detokenize(request);
    if (route("GET", "/metrics")) return metrics();
    if (route("GET", "/openapi.json")) return HttpResponse{.body = spec()};
    throw ApiError::not_found("no route " + request.method + " " + path);
  } catch (const ApiError& e) {
    return error_response(e);
  } catch (const Error& e) {
    return error_response(from_error(e));
  }
}

void OpenAiRoutes::check_api_key(const HttpRequest& request) const {
  if (options_.api_key.empty()) return;
  const std::string given = request.header("authorization");
  const std::string prefix = "Bearer ";
  if (given.rfind(prefix, 0) != 0 || !same_secret(given.substr(prefix.size()), options_.api_key)) {
    throw ApiError::unauthorized();
  }
}

HttpResponse OpenAiRoutes::health() const {
  for (const Served& s : served()) {
    if (!s.pipeline) return json_response({{"status", "loading"}}, 503);
  }
  return json_response({{"status", "ok"}});
}

HttpResponse OpenAiRoutes::models() const {
  json data = json::array();
  for (const Served& s : served()) {
    if (!s.pipeline) continue;
    data.push_back({{"id", s.name},
                    {"object", "model"},
                    {"created", started_},
                    {"owned_by", "kiln"},
                    {"max_model_len", s.pipeline->get_max_context_tokens()}});
  }
  if (data.empty()) throw ApiError::unavailable("the models are still loading");
  return json_response({{"object", "list"}, {"data", data}});
}

Reply OpenAiRoutes::completion(Endpoint endpoint, const HttpRequest& request) {
  const nlohmann::ordered_json body = parse_json_body(request.body);
  const Served model = target(body);
  const auto& p = model.pipeline;
  RequestLimits limits = options_.limits;  // max_tokens: at most the context
  const std::int64_t context_tokens = p->get_max_context_tokens();
  if (limits.max_tokens == 0 || limits.max_tokens > context_tokens) limits.max_tokens = context_tokens;
  CompletionRequest r = parse_completion_request(endpoint, body, p->get_config(), limits);
  for (const auto& [id, bias] : r.config.logit_bias) {
    if (!p->get_tokenizer().has_id(id)) {
      throw ApiError::bad_request(fmt::format("'logit_bias' names {}, which is not a token id of this model", id),
                                  "logit_bias");
    }
  }
  if (options_.max_waiting > 0 && p->get_metrics().waiting_requests >= options_.max_waiting) {
    throw ApiError::overloaded(
        fmt::format("{} requests are waiting already (the limit); retry later", options_.max_waiting));
  }
  JobContext context{.id = (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + random_hex(24),
                     .model = model.name,
                     .created = unix_seconds(),
                     .tokenizer = p->get_tokenizer(),
                     .metrics = model.metrics,
                     .reasoning_starts_open = std::nullopt,
                     .tools = std::nullopt};
  std::vector<GenerationHandle> handles;  // a failure below cancels the ones already added
  std::vector<std::string> echo;
  if (endpoint == Endpoint::kChat) {
    bool tool_calls_enforced = false;  // tool_choice auto's grammar, which may be dropped
    if (r.tool_choice.mode != ToolChoice::Mode::kNone && !model.parsers.tool_call_format) {
      throw ApiError::bad_request(
          "'tools' need a tool-call parser: serve the model with --tool-call-parser hermes, llama3_json or mistral "
          "(or send tool_choice: \"none\")",
          "tools");
    }
    const ChatPrompt prompt = chat_prompt(model, r);
    if (r.tool_choice.mode != ToolChoice::Mode::kNone) {
      const ToolCallFormat format = *model.parsers.tool_call_format;
      // Mistral's [TOOL_CALLS] is a special token: the parser must see it.
      if (format == ToolCallFormat::kMistral) r.config.skip_special_tokens = false;
      const bool named = r.tool_choice.mode == ToolChoice::Mode::kNamed;
      context.tools = ToolCalling{format, named || !r.parallel_tool_calls, named, prompt.prefill};
      tool_calls_enforced = constrain_tool_calls(format, prompt, r);
    }
    if (model.parsers.split_reasoning) {
      // A template that ends its generation prompt in <think> (DeepSeek-R1's) opens the block.
      std::string rendered = prompt.rendered;
      while (!rendered.empty() && std::isspace(static_cast<unsigned char>(rendered.back()))) rendered.pop_back();
      context.reasoning_starts_open = rendered.ends_with("<think>");
    }
    const std::vector<std::int32_t> ids = p->get_tokenizer().encode(prompt.rendered + prompt.prefill, false);
    handles.push_back(tool_calls_enforced ? add_with_tool_call_grammar(*p, next_request_id_++, ids, r.config)
                                          : p->add_request(next_request_id_++, ids, r.config));
    echo.emplace_back();
  } else {
    for (const Prompt& prompt : r.prompts) {
      if (const auto* text = std::get_if<std::string>(&prompt)) {
        handles.push_back(p->add_request(next_request_id_++, *text, r.config));
        echo.push_back(r.echo ? *text : std::string());
      } else {
        const auto& ids = std::get<std::vector<std::int32_t>>(prompt);
        handles.push_back(p->add_request(next_request_id_++, ids, r.config));
        echo.push_back(r.echo ? p->get_tokenizer().decode(ids) : std::string());
      }
    }
  }
  return std::make_shared<CompletionJob>(std::move(r), std::move(handles), std::move(echo), std::move(context));
}

ChatPrompt OpenAiRoutes::chat_prompt(const Served& model, const CompletionRequest& request) const {
  if (!model.chat_template) throw ApiError::bad_request(model.chat_template_problem, "messages");
  return render_chat_prompt(*model.chat_template, request, model.parsers.tool_call_format);
}

HttpResponse OpenAiRoutes::tokenize(const HttpRequest& request) const {
  const nlohmann::ordered_json body = parse_json_body(request.body);
  const Served model = target(body);
  const auto& p = model.pipeline;
  const Tokenizer& tokenizer = p->get_tokenizer();
  const auto flag = [&](const char* name) -> std::optional<bool> {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) throw ApiError::bad_request(fmt::format("'{}' must be true or false", name), name);
    return it->get<bool>();
  };
  const std::optional<bool> add_special_tokens = flag("add_special_tokens");
  std::vector<std::int32_t> ids;
  const auto prompt = body.find("prompt");
  if (prompt != body.end() && !prompt->is_string()) {
    throw ApiError::bad_request("'prompt' must be a string", "prompt");
  }
  if (body.contains("messages")) {
    // The messages as a chat request renders them (the template adds its own special tokens).
    nlohmann::ordered_json chat = body;
    chat.erase("prompt");
    const CompletionRequest r = parse_completion_request(Endpoint::kChat, chat, p->get_config(), {});
    const ChatPrompt prompt = chat_prompt(model, r);
    ids = tokenizer.encode(prompt.rendered + prompt.prefill, add_special_tokens.value_or(false));
  } else {
    if (prompt == body.end() || !prompt->is_string()) {
      throw ApiError::bad_request("'prompt' (a string) or 'messages' is required", "prompt");
    }
    for (const char* chat_only :
         {"tools", "tool_choice", "chat_template_kwargs", "documents", "continue_final_message"}) {
      const auto it = body.find(chat_only);
      if (it != body.end() && !it->is_null()) {
        throw ApiError::bad_request(fmt::format("'{}' applies to 'messages', not to a 'prompt'", chat_only), chat_only);
      }
    }
    ids = tokenizer.encode(prompt->get<std::string>(), add_special_tokens.value_or(true));
  }
  return json_response({{"tokens", ids}, {"count", ids.size()}, {"max_model_len", p->get_max_context_tokens()}});
}

HttpResponse OpenAiRoutes::detokenize(const HttpRequest& request) const {
  const nlohmann::ordered_json body = parse_json_body(request.body);
  const auto p = target(body).pipeline;
  const auto tokens = body.find("tokens");
  if (tokens == body.end() || !tokens->is_array()) {
    throw ApiError::bad_request("'tokens' (an array of token ids) is required", "tokens");
  }
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    const std::optional<std::int64_t> id = json_integer((*tokens)[i]);
    if (!id || *id < 0 || *id > std::numeric_limits<std::int32_t>::max() ||
        !p->get_tokenizer().has_id(static_cast<std::int32_t>(*id))) {
      throw ApiError::bad_request(fmt::format("'tokens[{}]' is not a token id of this model", i), "tokens");
    }
    ids.push_back(static_cast<std::int32_t>(*id));
  }
  return json_response({{"prompt", p->get_tokenizer().decode(ids)}});
}

HttpResponse OpenAiRoutes::metrics() const {
  std::vector<ModelSample> samples;
  const std::vector<Served> all = served();
  for (const Served& s : all)
    samples.push_back({s.metrics.get(), s.pipeline ? s.pipeline->get_metrics() : PipelineMetrics{}});
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = prometheus_text(samples);
  return r;
}

}  // namespace kiln::server
