// JSON text as the server sends it, safe for every client that reads it: invalid UTF-8 (a token
// can end inside a character) is replaced, and U+0085, U+2028 and U+2029 are written as \u
// escapes. JSON allows them raw, but line readers that split like Python's str.splitlines (httpx's
// aiter_lines, under many SSE clients) would cut an event in two; vLLM's ASCII-only JSON never
// shows them either.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kiln::server {

std::string dump(const nlohmann::json& value);

}  // namespace kiln::server
