// Parsing and rendering entry points: validate the text, run the engine, and turn an internal
// failure into a TemplateError with the line and column of the node that failed.
#include "tokenizer/jinja/template.hpp"

#include "tokenizer/jinja/json_codec.hpp"
#include "tokenizer/jinja/lexer.hpp"
#include "tokenizer/jinja/parser.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {

std::tm make_local_time(int year, int month, int day, int hour, int minute, int second) {
  std::tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = second;
  std::tm normalized = t;
  const time_t as_utc = timegm(&normalized);  // fills tm_wday and tm_yday, no time zone involved
  gmtime_r(&as_utc, &normalized);
  t.tm_wday = normalized.tm_wday;
  t.tm_yday = normalized.tm_yday;
  t.tm_isdst = -1;
  return t;
}

namespace {

std::tm system_local_time() {
  const time_t now = std::time(nullptr);
  std::tm t{};
  localtime_r(&now, &t);
  return t;
}

}  // namespace

Template::Template(std::string_view source, std::string name) : name_(std::move(name)) {
  size_t bad = 0;
  if (!unicode::is_valid(source, &bad)) {
    throw TemplateError(ErrorType::kTemplateSyntaxError, fmt::format("template is not valid UTF-8 (byte {})", bad),
                        name_, 0, 0);
  }
  source_ = normalize_newlines(source);
  if (source_.size() >= kNoOffset) {
    throw TemplateError(ErrorType::kLimitError, "template is larger than 4 GiB", name_, 0, 0);
  }
  try {
    body_ = parse(tokenize(source_));
  } catch (const Exception& e) {
    rethrow(e);
  }
}

std::string Template::render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  if (!context.is_object()) {
    fail("{}: the render context must be a JSON object, got {}", name_, context.type_name());
  }
  const Value value = value_from_json(context);
  return render(value.as_dict(), options);
}

std::string Template::render(const Dict& context, const RenderOptions& options) const {
  Interpreter interp(source_, options.limits,
                     options.local_time ? options.local_time : LocalTimeSource(system_local_time));
  try {
    return interp.render(body_, context);
  } catch (const Exception& e) {
    rethrow(e);
  }
}

void Template::rethrow(const Exception& e) const {
  int line = 0;
  int column = 0;
  if (e.offset != kNoOffset && e.offset <= source_.size()) {
    line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < e.offset; ++i) {
      if (source_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    column = static_cast<int>(unicode::length(std::string_view(source_).substr(line_start, e.offset - line_start))) + 1;
  }
  throw TemplateError(e.type, e.message, name_, line, column);
}

}  // namespace kiln::jinja
