#include "server/openai_request.hpp"

#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln::server {
namespace {

using OrderedJson = nlohmann::ordered_json;

// NOTE: request JSON nests at most this deep, half the limit for files: nlohmann's copy and dump
// recurse once per level, and a field of 100,000 '[' (200 KB, well under the body limit) once
// overflowed the stack of the thread that read the request (guided_json is dumped,
// chat_template_kwargs copied): a crash of the whole server. Real schemas and arguments nest a
// few dozen levels at most.
constexpr int kMaxRequestJsonDepth = 128;

// `text` parsed; text that is not JSON, or nests past kMaxRequestJsonDepth, is a 400 naming
// `field` ("" for the body).
OrderedJson parse_json_text(const std::string& text, const std::string& field) {
  try {
    return parse_ordered_json_text(text, field.empty() ? "the request body" : "'" + field + "'", kMaxRequestJsonDepth);
  } catch (const Error& e) {
    throw ApiError::bad_request(e.what(), field);
  }
}

// The field, or nullptr when absent or null (OpenAI clients send null for "not set").
const OrderedJson* find(const OrderedJson& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad(const std::string& field, const std::string& problem) {
  throw ApiError::bad_request("'" + field + "' " + problem, field);
}

double number(const OrderedJson& body, const char* name, double fallback, double lo, double hi) {
  const OrderedJson* v = find(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_number()) bad(name, "must be a number");
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) bad(name, fmt::format("must be in [{}, {}], got {}", lo, hi, x));
  return x;
}

std::int64_t integer(const OrderedJson& body, const char* name, std::int64_t fallback, std::int64_t lo,
                     std::int64_t hi) {
  const OrderedJson* v = find(body, name);
  if (v == nullptr) return fallback;
  const std::optional<std::int64_t> x = json_integer(*v);
  if (!x) bad(name, "must be an integer");
  if (*x < lo || *x > hi) bad(name, fmt::format("must be in [{}, {}], got {}", lo, hi, *x));
  return *x;
}

bool boolean(const OrderedJson& body, const char* name, bool fallback) {
  const OrderedJson* v = find(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) bad(name, "must be true or false");
  return v->get<bool>();
}

std::string text(const OrderedJson& v, const std::string& name) {
  if (!v.is_string()) bad(name, "must be a string");
  return v.get<std::string>();
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string message_content(const OrderedJson& content, const std::string& name) {
  if (content.is_null()) return {};
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad(name, "must be a string or an array of content parts");
  std::string out;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const OrderedJson& part = content[i];
    const std::string where = fmt::format("{}[{}]", name, i);
    if (!part.is_object()) bad(where, "must be an object");
    const OrderedJson* type = find(part, "type");
    if (type == nullptr || text(*type, where + ".type") != "text") {
      bad(where + ".type", "must be \"text\" (kiln serves text-only models)");
    }
    const OrderedJson* t = find(part, "text");
    if (t == nullptr) bad(where + ".text", "is required");
    out += text(*t, where + ".text");
  }
  return out;
}

// A tool or function name as OpenAI allows it: 1 to 64 of [a-zA-Z0-9_-].
bool is_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

std::string function_name(const OrderedJson& v, const std::string& where) {
  std::string name = text(v, where);
  if (!is_function_name(name)) bad(where, "must be 1 to 64 letters, digits, '_' or '-' (got '" + name + "')");
  return name;
}

// An assistant message's tool_calls, for the template: arguments, a JSON string in the API, as
// the object it holds (templates print it with tojson, as vLLM hands them over).
OrderedJson read_tool_calls(const OrderedJson& calls, const std::string& where) {
  if (!calls.is_array()) bad(where, "must be an array");
  OrderedJson out = OrderedJson::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const OrderedJson& call = calls[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    if (!call.is_object()) bad(at, "must be an object");
    const OrderedJson* id = find(call, "id");
    if (id == nullptr) bad(at + ".id", "is required");
    const OrderedJson* type = find(call, "type");
    if (type != nullptr && text(*type, at + ".type") != "function") bad(at + ".type", "must be \"function\"");
    const OrderedJson* function = find(call, "function");
    if (function == nullptr || !function->is_object()) bad(at + ".function", "must be an object");
    const OrderedJson* name = find(*function, "name");
    if (name == nullptr) bad(at + ".function.name", "is required");
    const OrderedJson* arguments = find(*function, "arguments");
    if (arguments == nullptr) bad(at + ".function.arguments", "is required");
    OrderedJson args = parse_json_text(text(*arguments, at + ".function.arguments"), at + ".function.arguments");
    out.push_back(
        {{"id", text(*id, at + ".id")},
         {"type", "function"},
         {"function", {{"name", function_name(*name, at + ".function.name")}, {"arguments", std::move(args)}}}});
  }
  return out;
}

OrderedJson read_messages(const OrderedJson& body) {
  const OrderedJson* messages = find(body, "messages");
  if (messages == nullptr) bad("messages", "is required");
  if (!messages->is_array() || messages->empty()) bad("messages", "must be a non-empty array");
  OrderedJson out = OrderedJson::array();
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const OrderedJson& m = (*messages)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) bad(where, "must be an object");
    const OrderedJson* role = find(m, "role");
    if (role == nullptr) bad(where + ".role", "is required");
    const std::string r = text(*role, where + ".role");
    if (r != "system" && r != "user" && r != "assistant" && r != "developer" && r != "tool") {
      bad(where + ".role", "must be system, developer, user, assistant or tool (got '" + r + "')");
    }
    const OrderedJson* content = find(m, "content");
    OrderedJson message = {
        {"role", r == "developer" ? "system" : r},
        {"content", content == nullptr ? std::string() : message_content(*content, where + ".content")}};
    if (const OrderedJson* name = find(m, "name")) message["name"] = text(*name, where + ".name");
    if (const OrderedJson* calls = find(m, "tool_calls")) {
      if (r != "assistant") bad(where + ".tool_calls", "belongs to assistant messages only");
      message["tool_calls"] = read_tool_calls(*calls, where + ".tool_calls");
    }
    if (r == "tool") {
      const OrderedJson* id = find(m, "tool_call_id");
      if (id == nullptr) bad(where + ".tool_call_id", "is required in a tool message");
      message["tool_call_id"] = text(*id, where + ".tool_call_id");
    }
    out.push_back(std::move(message));
  }
  return out;
}

// tools: [{"type": "function", "function": {"name", "description"?, "parameters"?, "strict"?}}],
// passed to the template as sent. null when there are none.
OrderedJson read_tools(const OrderedJson& body) {
  const OrderedJson* tools = find(body, "tools");
  if (tools == nullptr || (tools->is_array() && tools->empty())) return nullptr;
  if (!tools->is_array()) bad("tools", "must be an array of function tools");
  for (std::size_t i = 0; i < tools->size(); ++i) {
    const OrderedJson& tool = (*tools)[i];
    const std::string where = fmt::format("tools[{}]", i);
    if (!tool.is_object()) bad(where, "must be an object");
    const OrderedJson* type = find(tool, "type");
    if (type == nullptr || text(*type, where + ".type") != "function") bad(where + ".type", "must be \"function\"");
    const OrderedJson* function = find(tool, "function");
    if (function == nullptr || !function->is_object()) bad(where + ".function", "must be an object");
    const OrderedJson* name = find(*function, "name");
    if (name == nullptr) bad(where + ".function.name", "is required");
    function_name(*name, where + ".function.name");
    if (const OrderedJson* d = find(*function, "description")) text(*d, where + ".function.description");
    if (const OrderedJson* p = find(*function, "parameters"); p != nullptr && !p->is_object()) {
      bad(where + ".function.parameters", "must be a JSON Schema object");
    }
    if (const OrderedJson* strict = find(*function, "strict"); strict != nullptr && !strict->is_boolean()) {
      bad(where + ".function.strict", "must be true or false");
    }
  }
  return *tools;
}

// tool_choice: "none", "auto", "required" or {"type": "function", "function": {"name"}}, which
// must name one of `tools`. Without tools only "none" (or "auto") makes sense.
ToolChoice read_tool_choice(const OrderedJson& body, const OrderedJson& tools) {
  const OrderedJson* choice = find(body, "tool_choice");
  ToolChoice out;
  out.mode = tools.is_null() ? ToolChoice::Mode::kNone : ToolChoice::Mode::kAuto;
  if (choice == nullptr) return out;
  if (choice->is_string()) {
    const std::string mode = choice->get<std::string>();
    if (mode == "none") {
      out.mode = ToolChoice::Mode::kNone;
    } else if (mode == "required") {
      out.mode = ToolChoice::Mode::kRequired;
    } else if (mode != "auto") {
      bad("tool_choice", "must be none, auto, required or a named function (got '" + mode + "')");
    }
  } else if (choice->is_object()) {
    const OrderedJson* type = find(*choice, "type");
    const OrderedJson* function = find(*choice, "function");
    if (type == nullptr || !type->is_string() || type->get<std::string>() != "function" || function == nullptr ||
        !function->is_object() || find(*function, "name") == nullptr) {
      bad("tool_choice", "must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    out.mode = ToolChoice::Mode::kNamed;
    out.name = text(*find(*function, "name"), "tool_choice.function.name");
  } else {
    bad("tool_choice", "must be a string or an object");
  }
  if (out.mode == ToolChoice::Mode::kNone) return out;
  if (tools.is_null()) bad("tool_choice", "needs tools");
  if (out.mode == ToolChoice::Mode::kNamed) {
    bool known = false;
    for (const OrderedJson& tool : tools) known = known || tool["function"]["name"] == out.name;
    if (!known) bad("tool_choice.function.name", "names '" + out.name + "', which is not among the tools");
  }
  return out;
}

std::vector<std::int32_t> token_ids(const OrderedJson& v, const std::string& name) {
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::optional<std::int64_t> id = json_integer(v[i]);
    if (!id || *id < 0 || *id > std::numeric_limits<std::int32_t>::max()) {
      bad(fmt::format("{}[{}]", name, i), "must be a token id (an integer >= 0)");
    }
    ids.push_back(static_cast<std::int32_t>(*id));
  }
  return ids;
}

// "prompt": a string, an array of strings, an array of token ids, or an array of such arrays.
std::vector<Prompt> read_prompts(const OrderedJson& body) {
  const OrderedJson* prompt = find(body, "prompt");
  if (prompt == nullptr) bad("prompt", "is required");
  if (prompt->is_string()) return {prompt->get<std::string>()};
  if (!prompt->is_array() || prompt->empty()) bad("prompt", "must be a string or a non-empty array");
  if ((*prompt)[0].is_number()) return {token_ids(*prompt, "prompt")};
  std::vector<Prompt> prompts;
  for (std::size_t i = 0; i < prompt->size(); ++i) {
    const OrderedJson& p = (*prompt)[i];
    const std::string where = fmt::format("prompt[{}]", i);
    if (p.is_string()) {
      prompts.emplace_back(p.get<std::string>());
    } else if (p.is_array() && !p.empty()) {
      prompts.emplace_back(token_ids(p, where));
    } else {
      bad(where, "must be a string or a non-empty array of token ids");
    }
  }
  return prompts;
}

std::set<std::string> read_stop(const OrderedJson& body) {
  const OrderedJson* stop = find(body, "stop");
  if (stop == nullptr) return {};
  if (stop->is_string()) {
    if (stop->get<std::string>().empty()) bad("stop", "must not be empty");
    return {stop->get<std::string>()};
  }
  if (!stop->is_array()) bad("stop", "must be a string or an array of strings");
  std::set<std::string> out;
  for (std::size_t i = 0; i < stop->size(); ++i) {
    std::string s = text((*stop)[i], fmt::format("stop[{}]", i));
    if (s.empty()) bad(fmt::format("stop[{}]", i), "must not be empty");
    out.insert(std::move(s));
  }
  return out;
}

// {"token id as a string": bias in [-100, 100]}, as OpenAI takes it.
std::map<std::int32_t, float> read_logit_bias(const OrderedJson& body) {
  const OrderedJson* bias = find(body, "logit_bias");
  if (bias == nullptr) return {};
  if (!bias->is_object()) bad("logit_bias", "must be an object mapping token ids to biases");
  std::map<std::int32_t, float> out;
  for (const auto& [key, value] : bias->items()) {
    const std::string where = "logit_bias." + key;
    // A token id in decimal, as OpenAI writes them: digits, no sign or leading zero.
    const bool decimal = !key.empty() && key.size() <= 10 && (key == "0" || key[0] != '0') &&
                         key.find_first_not_of("0123456789") == std::string::npos;
    const std::int64_t id = decimal ? std::stoll(key) : -1;
    if (id < 0 || id > std::numeric_limits<std::int32_t>::max()) bad(where, "must be keyed by a token id");
    if (!value.is_number()) bad(where, "must be a number");
    const double b = value.get<double>();
    if (!(b >= -100 && b <= 100)) bad(where, fmt::format("must be in [-100, 100], got {}", b));
    out[static_cast<std::int32_t>(id)] = static_cast<float>(b);
  }
  return out;
}

void refuse_unsupported(const OrderedJson& body) {
  if (find(body, "functions") != nullptr) bad("functions", "is deprecated and not supported (use tools)");
  if (find(body, "function_call") != nullptr) bad("function_call", "is deprecated and not supported (use tool_choice)");
  if (const OrderedJson* best = find(body, "best_of");
      best != nullptr && !(best->is_number_integer() && best->get<int>() == 1)) {
    bad("best_of", "is not supported (use n)");
  }
  if (const OrderedJson* suffix = find(body, "suffix"); suffix != nullptr) bad("suffix", "is not supported");
}

// OpenAI's response_format (text, json_object, json_schema) and vLLM's guided_json,
// guided_regex, guided_choice and guided_grammar: at most one constraint.
std::optional<StructuredOutputConfig> read_structured_output(const OrderedJson& body) {
  std::vector<std::pair<std::string, StructuredOutputConfig>> found;
  if (const OrderedJson* rf = find(body, "response_format")) {
    if (!rf->is_object()) bad("response_format", "must be an object");
    const OrderedJson* type = find(*rf, "type");
    if (type == nullptr) bad("response_format.type", "is required");
    const std::string kind = text(*type, "response_format.type");
    StructuredOutputConfig s;
    if (kind == "json_object") {
      s.json_object = true;
      found.emplace_back("response_format", s);
    } else if (kind == "json_schema") {
      const OrderedJson* spec = find(*rf, "json_schema");
      if (spec == nullptr || !spec->is_object()) bad("response_format.json_schema", "must be an object");
      if (const OrderedJson* name = find(*spec, "name")) text(*name, "response_format.json_schema.name");
      if (const OrderedJson* strict = find(*spec, "strict"); strict != nullptr && !strict->is_boolean()) {
        bad("response_format.json_schema.strict", "must be true or false");
      }
      const OrderedJson* schema = find(*spec, "schema");
      if (schema == nullptr) bad("response_format.json_schema.schema", "is required");
      if (!schema->is_object() && !schema->is_boolean()) bad("response_format.json_schema.schema", "must be an object");
      s.json_schema = schema->dump();
      found.emplace_back("response_format", s);
    } else if (kind != "text") {
      bad("response_format.type", "must be text, json_object or json_schema (got '" + kind + "')");
    }
  }
  if (const OrderedJson* schema = find(body, "guided_json")) {
    // A schema sent as text is held to the body's depth limit too: the grammar compiler recurses
    // once per level of it, and 10,000 levels overflowed its stack.
    if (schema->is_string()) (void)parse_json_text(schema->get<std::string>(), "guided_json");
    StructuredOutputConfig s;
    s.json_schema = schema->is_string() ? schema->get<std::string>() : schema->dump();
    found.emplace_back("guided_json", s);
  }
  if (const OrderedJson* regex = find(body, "guided_regex")) {
    StructuredOutputConfig s;
    s.regex = text(*regex, "guided_regex");
    found.emplace_back("guided_regex", s);
  }
  if (const OrderedJson* grammar = find(body, "guided_grammar")) {
    StructuredOutputConfig s;
    s.grammar = text(*grammar, "guided_grammar");
    found.emplace_back("guided_grammar", s);
  }
  if (const OrderedJson* choice = find(body, "guided_choice")) {
    if (!choice->is_array() || choice->empty()) bad("guided_choice", "must be a non-empty array of strings");
    StructuredOutputConfig s;
    for (std::size_t i = 0; i < choice->size(); ++i)
      s.choice.push_back(text((*choice)[i], fmt::format("guided_choice[{}]", i)));
    found.emplace_back("guided_choice", s);
  }
  if (found.empty()) return std::nullopt;
  if (found.size() > 1) bad(found[1].first, "cannot be combined with '" + found[0].first + "': give one constraint");
  return found.front().second;
}

void read_template_extras(const OrderedJson& body, CompletionRequest& r) {
  if (const OrderedJson* kwargs = find(body, "chat_template_kwargs")) {
    if (!kwargs->is_object()) bad("chat_template_kwargs", "must be an object of template variables");
    for (const char* own : {"messages", "tools", "documents", "add_generation_prompt"}) {
      if (kwargs->contains(own))
        bad("chat_template_kwargs", fmt::format("must not set '{}' (it is a field of its own)", own));
    }
    r.template_variables = *kwargs;
  }
  if (const OrderedJson* documents = find(body, "documents")) {
    if (!documents->is_array()) bad("documents", "must be an array of objects");
    for (std::size_t i = 0; i < documents->size(); ++i) {
      if (!(*documents)[i].is_object()) bad(fmt::format("documents[{}]", i), "must be an object");
    }
    r.documents = *documents;
  }
  r.continue_final_message = boolean(body, "continue_final_message", false);
  r.add_generation_prompt = boolean(body, "add_generation_prompt", !r.continue_final_message);
  if (r.continue_final_message) {
    if (r.add_generation_prompt) bad("continue_final_message", "cannot be combined with add_generation_prompt: true");
    if (r.messages.back()["role"] != "assistant") {
      bad("continue_final_message", "needs the last message to be the assistant's");
    }
    if (r.tool_choice.mode == ToolChoice::Mode::kRequired || r.tool_choice.mode == ToolChoice::Mode::kNamed) {
      bad("continue_final_message", "cannot be combined with a required or named tool_choice");
    }
  }
}

// Sampling as OpenAI defines it: temperature 1 unless given (the model's own sampling settings
// when its generation config samples), 0 is greedy.
void read_sampling(const OrderedJson& body, const GenerationConfig& defaults, GenerationConfig& c) {
  const double temperature = number(body, "temperature", defaults.do_sample ? defaults.temperature : 1.0, 0.0, 2.0);
  // Below 1e-5 (vLLM's bound) the softmax of logits / temperature overflows: that is greedy.
  c.do_sample = temperature >= 1e-5;
  c.temperature = c.do_sample ? temperature : 1.0;
  c.top_p = number(body, "top_p", defaults.do_sample ? defaults.top_p : 1.0, 0.0, 1.0);
  if (c.top_p == 0) bad("top_p", "must be greater than 0");
  c.top_k =
      integer(body, "top_k", defaults.do_sample ? defaults.top_k : 0, -1, std::numeric_limits<std::int32_t>::max());
  if (c.top_k == -1) c.top_k = 0;  // vLLM's "off"
  c.min_p = number(body, "min_p", defaults.do_sample ? defaults.min_p : 0.0, 0.0, 1.0);
  c.presence_penalty = number(body, "presence_penalty", 0.0, -2.0, 2.0);
  c.frequency_penalty = number(body, "frequency_penalty", 0.0, -2.0, 2.0);
  c.repetition_penalty = number(body, "repetition_penalty", defaults.repetition_penalty, 1e-6, 1e6);
  if (const OrderedJson* seed = find(body, "seed"); seed != nullptr) {
    // Any 64-bit integer, signed or not: the generator takes its bits.
    const std::optional<std::int64_t> x = seed->is_number_unsigned() ? std::nullopt : json_integer(*seed);
    if (!seed->is_number_unsigned() && !x) bad("seed", "must be an integer");
    c.rng_seed = seed->is_number_unsigned() ? seed->get<std::uint64_t>() : static_cast<std::uint64_t>(*x);
  }
  c.logit_bias = read_logit_bias(body);
}

}  // namespace

std::optional<std::int64_t> json_integer(const OrderedJson& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return u > std::uint64_t(std::numeric_limits<std::int64_t>::max()) ? std::numeric_limits<std::int64_t>::max()
                                                                       : std::int64_t(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 9.2e18) return static_cast<std::int64_t>(x);
  }
  return std::nullopt;
}

nlohmann::ordered_json parse_json_body(const std::string& body) {
  OrderedJson parsed = parse_json_text(body, "");
  if (!parsed.is_object()) throw ApiError::bad_request("the request body must be a JSON object");
  return parsed;
}

CompletionRequest parse_completion_request(Endpoint endpoint, const nlohmann::ordered_json& body,
                                           const GenerationConfig& defaults, const RequestLimits& limits) {
  refuse_unsupported(body);
  CompletionRequest r;
  r.endpoint = endpoint;
  const bool chat = endpoint == Endpoint::kChat;
  if (chat) {
    r.messages = read_messages(body);
    r.tools = read_tools(body);
    r.tool_choice = read_tool_choice(body, r.tools);
    r.parallel_tool_calls = boolean(body, "parallel_tool_calls", true);
    read_template_extras(body, r);
  } else {
    r.prompts = read_prompts(body);
    r.echo = boolean(body, "echo", false);
  }
  if (const OrderedJson* user = find(body, "user")) text(*user, "user");  // OpenAI's end-user id: checked, unused
  r.stream = boolean(body, "stream", false);
  if (const OrderedJson* options = find(body, "stream_options")) {
    if (!options->is_object()) bad("stream_options", "must be an object");
    const bool include_usage = boolean(*options, "include_usage", false);
    r.include_usage = r.stream && include_usage;
  }

  GenerationConfig& c = r.config;
  c = defaults;
  c.apply_chat_template = chat;
  read_sampling(body, defaults, c);
  r.n = integer(body, "n", 1, 1, GenerationConfig::kMaxSequences);
  c.num_return_sequences = c.do_sample ? r.n : 1;
  const std::int64_t token_cap = limits.max_tokens > 0 ? limits.max_tokens : std::numeric_limits<std::int32_t>::max();
  const char* max_name =
      chat && find(body, "max_completion_tokens") != nullptr ? "max_completion_tokens" : "max_tokens";
  // Completions default to 16 tokens as OpenAI's do; chat runs to the end of the context.
  const std::int64_t max_tokens = integer(body, max_name, chat ? 0 : 16, 1, std::numeric_limits<std::int64_t>::max());
  if (max_tokens > token_cap) {
    bad(max_name, fmt::format("is {}, above this server's limit of {}", max_tokens, token_cap));
  }
  c.max_length.reset();  // an HF generation config's max_length would cut max_tokens short
  if (max_tokens > 0) {
    c.max_new_tokens = max_tokens;
  } else {  // chat without max_tokens
    c.max_new_tokens = limits.max_tokens > 0 ? std::optional<std::int64_t>(limits.max_tokens) : std::nullopt;
  }
  // At least min_tokens, unless max_tokens allows fewer (vLLM refuses the pair; a cap is kinder).
  c.min_new_tokens = std::min(integer(body, "min_tokens", 0, 0, std::numeric_limits<std::int64_t>::max()),
                              max_tokens > 0 ? max_tokens : token_cap);
  c.stop_strings = read_stop(body);
  c.ignore_eos = boolean(body, "ignore_eos", false);
  c.include_stop_str_in_output = boolean(body, "include_stop_str_in_output", false);
  c.skip_special_tokens = boolean(body, "skip_special_tokens", true);
  c.structured_output_config = read_structured_output(body);

  if (chat) {
    r.logprobs = boolean(body, "logprobs", false);
    r.top_logprobs = integer(body, "top_logprobs", 0, 0, GenerationConfig::kMaxLogprobs);
    if (r.top_logprobs > 0 && !r.logprobs) bad("top_logprobs", "needs logprobs: true");
  } else if (find(body, "logprobs") != nullptr) {
    r.logprobs = true;
    r.top_logprobs = integer(body, "logprobs", 0, 0, GenerationConfig::kMaxLogprobs);
  }
  // The engine reports alternatives only when asked for at least one; extra ones are trimmed.
  c.logprobs = r.logprobs ? std::max<std::int64_t>(1, r.top_logprobs) : 0;
  try {
    c.validate();
  } catch (const Error& e) {
    throw ApiError::bad_request(e.what());
  }
  return r;
}

}  // namespace kiln::server
