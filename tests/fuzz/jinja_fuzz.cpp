// libFuzzer target for the chat-template engine: the input is a template, parsed and rendered
// against a fixed chat context under tight limits. A kiln::Error (syntax, runtime or limit
// error) is the expected outcome for bad templates; a crash, a sanitizer report or any other
// exception is a bug. Run: jinja_fuzz -dict=tests/fuzz/jinja.dict -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.hpp"
#include "util/error.hpp"

namespace {

const nlohmann::ordered_json& chat_context() {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Hi <there> & 'friends' 👋"},
      {"role": "assistant", "content": "<think>\nhmm\n</think>\nHello!",
       "tool_calls": [{"id": "call_1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "content": "{\"temp\": 21.5}"}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "n": 3, "f": 2.5, "nothing": null
  })");
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  kiln::jinja::RenderOptions options;
  options.limits.max_output_bytes = size_t{1} << 20;
  options.limits.max_memory_bytes = size_t{16} << 20;
  options.limits.max_steps = 200000;
  options.limits.max_call_depth = 32;
  options.local_time = [] { return kiln::jinja::make_local_time(2026, 12, 2, 13, 0, 0); };
  try {
    const kiln::jinja::Template tmpl(source, "fuzz");
    tmpl.render(chat_context(), options);
  } catch (const kiln::Error&) {
    // Expected for malformed or failing templates.
  }
  return 0;
}
