#include "server/openai_request.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "util/error.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;

// The field, or nullptr when absent or null (OpenAI clients send null for "not set").
const json* find(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad(const std::string& field, const std::string& problem) {
  throw ApiError::bad_request("'" + field + "' " + problem, field);
}

double number(const json& body, const char* name, double fallback, double lo, double hi) {
  const json* v = find(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_number()) bad(name, "must be a number");
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) bad(name, fmt::format("must be in [{}, {}], got {}", lo, hi, x));
  return x;
}

std::int64_t integer(const json& body, const char* name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  const json* v = find(body, name);
  if (v == nullptr) return fallback;
  const std::optional<std::int64_t> x = json_integer(*v);
  if (!x) bad(name, "must be an integer");
  if (*x < lo || *x > hi) bad(name, fmt::format("must be in [{}, {}], got {}", lo, hi, *x));
  return *x;
}

bool boolean(const json& body, const char* name, bool fallback) {
  const json* v = find(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) bad(name, "must be true or false");
  return v->get<bool>();
}

std::string text(const json& v, const std::string& name) {
  if (!v.is_string()) bad(name, "must be a string");
  return v.get<std::string>();
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string message_content(const json& content, const std::string& name) {
  if (content.is_null()) return {};
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad(name, "must be a string or an array of content parts");
  std::string out;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string where = fmt::format("{}[{}]", name, i);
    if (!part.is_object()) bad(where, "must be an object");
    const json* type = find(part, "type");
    if (type == nullptr || text(*type, where + ".type") != "text") {
      bad(where + ".type", "must be \"text\" (kiln serves text-only models)");
    }
    const json* t = find(part, "text");
    if (t == nullptr) bad(where + ".text", "is required");
    out += text(*t, where + ".text");
  }
  return out;
}

ChatHistory read_messages(const json& body) {
  const json* messages = find(body, "messages");
  if (messages == nullptr) bad("messages", "is required");
  if (!messages->is_array() || messages->empty()) bad("messages", "must be a non-empty array");
  ChatHistory history;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) bad(where, "must be an object");
    const json* role = find(m, "role");
    if (role == nullptr) bad(where + ".role", "is required");
    const std::string r = text(*role, where + ".role");
    if (r != "system" && r != "user" && r != "assistant" && r != "developer") {
      bad(where + ".role", "must be system, developer, user or assistant (got '" + r + "')");
    }
    if (find(m, "tool_calls") != nullptr) bad(where + ".tool_calls", "is not supported yet");
    if (const json* name = find(m, "name")) text(*name, where + ".name");
    const json* content = find(m, "content");
    history.push_back({r == "developer" ? "system" : r,
                       content == nullptr ? std::string() : message_content(*content, where + ".content")});
  }
  return history;
}

std::vector<std::int32_t> token_ids(const json& v, const std::string& name) {
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
std::vector<Prompt> read_prompts(const json& body) {
  const json* prompt = find(body, "prompt");
  if (prompt == nullptr) bad("prompt", "is required");
  if (prompt->is_string()) return {prompt->get<std::string>()};
  if (!prompt->is_array() || prompt->empty()) bad("prompt", "must be a string or a non-empty array");
  if ((*prompt)[0].is_number()) return {token_ids(*prompt, "prompt")};
  std::vector<Prompt> prompts;
  for (std::size_t i = 0; i < prompt->size(); ++i) {
    const json& p = (*prompt)[i];
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

std::set<std::string> read_stop(const json& body) {
  const json* stop = find(body, "stop");
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
std::map<std::int32_t, float> read_logit_bias(const json& body) {
  const json* bias = find(body, "logit_bias");
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

void refuse_unsupported(const json& body) {
  if (const json* tools = find(body, "tools"); tools != nullptr && !(tools->is_array() && tools->empty())) {
    bad("tools", "is not supported yet");
  }
  if (find(body, "functions") != nullptr) bad("functions", "is not supported");
  if (const json* tc = find(body, "tool_choice");
      tc != nullptr && !(tc->is_string() && tc->get<std::string>() == "none")) {
    if (!(tc->is_string() && tc->get<std::string>() == "auto"))
      bad("tool_choice", "needs tools, which are not supported yet");
  }
  if (const json* rf = find(body, "response_format"); rf != nullptr) {
    const json* type = rf->is_object() ? find(*rf, "type") : nullptr;
    if (type == nullptr || !type->is_string() || type->get<std::string>() != "text") {
      bad("response_format", "only {\"type\": \"text\"} is supported yet");
    }
  }
  if (const json* best = find(body, "best_of");
      best != nullptr && !(best->is_number_integer() && best->get<int>() == 1)) {
    bad("best_of", "is not supported (use n)");
  }
  if (const json* suffix = find(body, "suffix"); suffix != nullptr) bad("suffix", "is not supported");
}

// Sampling as OpenAI defines it: temperature 1 unless given (the model's own sampling settings
// when its generation config samples), 0 is greedy.
void read_sampling(const json& body, const GenerationConfig& defaults, GenerationConfig& c) {
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
  if (const json* seed = find(body, "seed"); seed != nullptr) {
    // Any 64-bit integer, signed or not: the generator takes its bits.
    const std::optional<std::int64_t> x = seed->is_number_unsigned() ? std::nullopt : json_integer(*seed);
    if (!seed->is_number_unsigned() && !x) bad("seed", "must be an integer");
    c.rng_seed = seed->is_number_unsigned() ? seed->get<std::uint64_t>() : static_cast<std::uint64_t>(*x);
  }
  c.logit_bias = read_logit_bias(body);
}

}  // namespace

std::optional<std::int64_t> json_integer(const json& v) {
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

nlohmann::json parse_json_body(const std::string& body) {
  json parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) throw ApiError::bad_request("the request body is not valid JSON");
  if (!parsed.is_object()) throw ApiError::bad_request("the request body must be a JSON object");
  return parsed;
}

CompletionRequest parse_completion_request(Endpoint endpoint, const nlohmann::json& body,
                                           const GenerationConfig& defaults, const RequestLimits& limits) {
  refuse_unsupported(body);
  CompletionRequest r;
  r.endpoint = endpoint;
  const bool chat = endpoint == Endpoint::kChat;
  if (chat) {
    r.messages = read_messages(body);
  } else {
    r.prompts = read_prompts(body);
    r.echo = boolean(body, "echo", false);
  }
  if (const json* user = find(body, "user")) text(*user, "user");  // OpenAI's end-user id: checked, unused
  r.stream = boolean(body, "stream", false);
  if (const json* options = find(body, "stream_options")) {
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
