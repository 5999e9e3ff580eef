// The names every template sees besides its context, as transformers' environment defines
// them: Jinja2's range (sandbox-limited), dict, namespace, cycler and joiner, and transformers'
// raise_exception and strftime_now.
#pragma once

#include "tokenizer/jinja/interpreter.hpp"

namespace kiln::jinja {

// Jinja2's sandbox refuses ranges longer than this (jinja2.sandbox.MAX_RANGE).
inline constexpr int64_t kMaxRange = 100000;

void install_globals(Scope& scope);

}  // namespace kiln::jinja
