// libFuzzer target for the server's own readers of untrusted bytes. The first byte picks a mode:
//   0  a request body (the byte's higher bits: the model's tool-call format): parse_json_body,
//      parse_completion_request for both endpoints, and for a chat request that parses, its
//      prompt rendered by Qwen3's chat template and the tool-call grammar built as the chat route
//      builds it (stopping before the engine). An ApiError (400) is the expected outcome of a bad
//      body; another exception is a bug.
//   1  model output (byte 1: tool-call format, single call, reasoning open; byte 2: chunking
//      seed): the reasoning splitter then the tool-call parser, as a completion job chains them,
//      fed the text whole, byte by byte and in random pieces; all three must agree, every delta
//      must name a call that exists, and text without a marker must come back unchanged.
//   2  SSE framing: the text as a chunk's content and as an error's message; each event must be
//      one "data: <one line>\n\n" whose JSON parses back, equal to the text where it was UTF-8.
//   3  routes (no model loaded, an API key set): method, path, authorization, content-type and
//      body on lines of their own; /v1/ without the key is a 401, no reply is a 500, every JSON
//      reply parses.
// Seeds: tests/data/server/fuzz_seeds. Run: server_fuzz -dict=tests/fuzz/server.dict CORPUS
// tests/data/server/fuzz_seeds
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/error.hpp"
#include "kiln/tokenizer.hpp"
#include "server/api_error.hpp"
#include "server/chat_prompt.hpp"
#include "server/openai_request.hpp"
#include "server/openai_response.hpp"
#include "server/openai_routes.hpp"
#include "server/reasoning_splitter.hpp"
#include "server/tool_call_parser.hpp"
#include "util/file_io.hpp"

namespace {

using namespace kiln::server;
using json = nlohmann::json;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "server_fuzz: invariant failed: %s\n", what);
    std::abort();
  }
}

// Qwen3's tokenizer is the committed one with a chat template (tool calls, <think>); it is
// gzipped, and loaded once per process.
const kiln::ChatTemplate& qwen3_template() {
  static const kiln::ChatTemplate chat_template = [] {
    const std::string dir = std::string(KILN_FUZZ_TOKENIZERS_DIR) + "/qwen3";
    gzFile file = gzopen((dir + "/tokenizer.json.gz").c_str(), "rb");
    check(file != nullptr, "the qwen3 tokenizer fixture is missing");
    std::string text;
    char buffer[1 << 16];
    for (int n; (n = gzread(file, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    gzclose(file);
    const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_json(text, kiln::read_file(dir + "/tokenizer_config.json"));
    return kiln::ChatTemplate(tokenizer);
  }();
  return chat_template;
}

constexpr ToolCallFormat kFormats[] = {ToolCallFormat::kHermes, ToolCallFormat::kLlama3Json, ToolCallFormat::kMistral};

// What OpenAiRoutes::completion does with a parsed chat request before it tokenizes the prompt:
// the prompt, and for tools the grammar that enforces a forced call or checks an optional one
// (validated as the engine would first).
void prepare_chat(CompletionRequest r, ToolCallFormat format) {
  const ChatPrompt prompt = render_chat_prompt(qwen3_template(), r, format);
  constrain_tool_calls(format, prompt, r);
  try {
    r.config.validate();  // the engine's first check; its errors become 400s, not 500s
  } catch (const kiln::Error& e) {
    check(e.kind() != kiln::ErrorKind::kInternal, "a chat request's config failed as an internal error");
  }
}

void fuzz_request(ToolCallFormat format, const std::string& body) {
  nlohmann::ordered_json parsed;
  try {
    parsed = parse_json_body(body);
  } catch (const ApiError& e) {
    check(e.status() == 400, "a bad body was not a 400");
    return;
  }
  RequestLimits limits;
  limits.max_tokens = 4096;
  for (const Endpoint endpoint : {Endpoint::kChat, Endpoint::kCompletions}) {
    try {
      const CompletionRequest r = parse_completion_request(endpoint, parsed, kiln::GenerationConfig{}, limits);
      if (endpoint != Endpoint::kChat) continue;
      prepare_chat(r, format);
    } catch (const ApiError& e) {
      check(e.status() == 400, "a bad request was not a 400");
    }
  }
}

// One output as a completion job reads it: the reasoning split first, its content then parsed
// for tool calls; deltas gathered into whole calls.
struct Reading {
  std::string reasoning;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments

  void add(const SplitText& split, const ParsedOutput& parsed) {
    reasoning += split.reasoning;
    content += parsed.content;
    for (const ToolCallDelta& d : parsed.calls) {
      if (!d.name.empty()) {
        check(d.index == calls.size() && !d.id.empty(), "a new call's delta has the wrong index or no id");
        calls.emplace_back(d.name, "");
      }
      check(d.index < calls.size(), "a delta names a call that was not started");
      calls[d.index].second += d.arguments;
    }
  }
  bool operator==(const Reading&) const = default;
};

Reading read_output(std::string_view text, const std::vector<std::size_t>& cuts, std::uint8_t options) {
  const std::optional<ToolCallFormat> format =
      options % 4 == 3 ? std::nullopt : std::optional<ToolCallFormat>(kFormats[options % 4]);
  std::unique_ptr<ToolCallParser> parser = format ? make_tool_call_parser(*format, options & 4) : nullptr;
  ReasoningSplitter splitter((options & 8) != 0);
  Reading reading;
  const auto step = [&](SplitText split, bool last) {
    if (last) {
      SplitText rest = splitter.flush();
      split.reasoning += rest.reasoning;
      split.content += rest.content;
    }
    ParsedOutput parsed{split.content, {}};
    if (parser) {
      parsed = parser->push(split.content);
      if (last) {
        ParsedOutput rest = parser->finish();
        parsed.content += rest.content;
        parsed.calls.insert(parsed.calls.end(), rest.calls.begin(), rest.calls.end());
      }
    }
    reading.add(split, parsed);
  };
  std::size_t at = 0;
  for (const std::size_t cut : cuts) {
    step(splitter.push(text.substr(at, cut - at)), false);
    at = cut;
  }
  step(splitter.push(text.substr(at)), true);
  return reading;
}

void fuzz_output(std::uint8_t options, std::uint8_t seed, std::string_view text) {
  std::vector<std::size_t> bytes;  // a piece per byte: every marker and character split
  for (std::size_t i = 1; i < text.size(); ++i) bytes.push_back(i);
  std::vector<std::size_t> pieces;  // pieces of 1 to 8 bytes, as tokens come
  std::minstd_rand random(seed + 1u);
  for (std::size_t i = 1 + random() % 8; i < text.size(); i += 1 + random() % 8) pieces.push_back(i);
  const Reading whole = read_output(text, {}, options);
  const auto same = [&](const Reading& other) {
    if (other == whole) return true;
    for (const Reading* r : {&whole, &other}) {
      std::fprintf(stderr, "reasoning [%s] content [%s] calls", r->reasoning.c_str(), r->content.c_str());
      for (const auto& [name, arguments] : r->calls) std::fprintf(stderr, " [%s](%s)", name.c_str(), arguments.c_str());
      std::fprintf(stderr, "\n");
    }
    return false;
  };
  check(same(read_output(text, bytes, options)), "byte-by-byte pieces read differently from the whole text");
  check(same(read_output(text, pieces, options)), "random pieces read differently from the whole text");
  const bool has_marker = text.find('<') != std::string_view::npos || text.find('[') != std::string_view::npos ||
                          text.find('{') != std::string_view::npos;
  if (!has_marker && !(options & 8)) check(whole.content == text, "text without a marker was not kept as content");
}

// One event: "data: " + one line of JSON + a blank line.
json event_payload(const std::string& event) {
  check(event.starts_with("data: ") && event.ends_with("\n\n"), "an SSE event is not framed as data: ...\\n\\n");
  const std::string payload = event.substr(6, event.size() - 8);
  for (const std::string_view breaker : {"\n", "\r", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    check(payload.find(breaker) == std::string::npos, "an SSE payload holds a line break");
  }
  const json parsed = json::parse(payload, nullptr, false);
  check(!parsed.is_discarded(), "an SSE payload is not JSON");
  return parsed;
}

void fuzz_sse(const std::string& text) {
  bool utf8 = true;  // nlohmann's own dump refuses invalid UTF-8; kiln's replaces it
  try {
    (void)json(text).dump();
  } catch (const json::type_error&) {
    utf8 = false;
  }
  const json chunk = {{"choices", json::array({{{"index", 0}, {"delta", {{"content", text}}}}})}};
  const json back = event_payload(sse_event(chunk));
  const std::string content = back["choices"][0]["delta"]["content"];
  check(!utf8 || content == text, "an SSE chunk's UTF-8 content did not come back unchanged");
  // completion_job.cpp's error event: the error object on a data line of its own.
  const ApiError error = ApiError::internal(text);
  const json error_back = event_payload("data: " + error.to_json() + "\n\n");
  // An exception's message is a C string: it ends at the first NUL.
  const std::string message = text.substr(0, text.find('\0'));
  check(!utf8 || error_back["error"]["message"] == message, "an error event's message did not come back unchanged");
}

std::string next_line(std::string_view& text) {
  const std::size_t end = text.find('\n');
  const std::string line(text.substr(0, end));
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

void fuzz_routes(std::string_view text) {
  static OpenAiRoutes routes(RouteOptions{.models = {{"m", {}}}, .api_key = "sk-fuzz", .max_waiting = 0, .limits = {}});
  HttpRequest request;
  request.method = next_line(text);
  request.path = next_line(text);
  request.headers["authorization"] = next_line(text);
  request.headers["content-type"] = next_line(text);
  request.body = std::string(text);
  const Reply reply = routes.handle(request);
  // With no model loaded every route answers at once.
  const auto* response = std::get_if<HttpResponse>(&reply);
  check(response != nullptr, "a route answered later although no model is loaded");
  check(response->status != 500, "a request was answered with a 500");
  if (request.path.starts_with("/v1/") && request.headers["authorization"] != "Bearer sk-fuzz") {
    check(response->status == 401, "a /v1/ request without the API key was not a 401");
  }
  if (response->content_type == "application/json") {
    check(!json::parse(response->body, nullptr, false).is_discarded(), "a JSON reply does not parse");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0: fuzz_request(kFormats[data[0] / 4 % 3], text); break;
    case 1:
      if (text.size() >= 2) fuzz_output(data[1], data[2], std::string_view(text).substr(2));
      break;
    case 2: fuzz_sse(text); break;
    case 3: fuzz_routes(text); break;
  }
  return 0;
}
