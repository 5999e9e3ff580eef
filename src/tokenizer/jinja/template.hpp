// The engine's entry point: a parsed Jinja2 template that renders as transformers'
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) + loopcontrols does,
// with transformers' tojson, raise_exception and strftime_now. A Template is immutable after
// construction; render() may run on many threads at once. Templates cannot touch files, the
// environment or the network: no such functions exist inside them.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <string>
#include <string_view>

#include "tokenizer/jinja/ast.hpp"
#include "tokenizer/jinja/error.hpp"
#include "tokenizer/jinja/interpreter.hpp"

namespace kiln::jinja {

struct RenderOptions {
  RenderLimits limits;
  // What strftime_now() formats; the machine's local time when empty.
  LocalTimeSource local_time;
};

// A broken-down local time for a fixed clock (weekday and day of year filled in).
std::tm make_local_time(int year, int month, int day, int hour, int minute, int second);

class Template {
 public:
  // Throws TemplateError (TemplateSyntaxError, ...) naming `name`, line and column.
  explicit Template(std::string_view source, std::string name = "template");

  // `context` must be a JSON object; its keys become the template's variables.
  std::string render(const nlohmann::ordered_json& context, const RenderOptions& options = {}) const;
  std::string render(const Dict& context, const RenderOptions& options = {}) const;

  const std::string& name() const { return name_; }

 private:
  [[noreturn]] void rethrow(const Exception& e) const;

  std::string name_;
  std::string source_;  // newline-normalized; node offsets point into it
  ast::Body body_;
};

}  // namespace kiln::jinja
