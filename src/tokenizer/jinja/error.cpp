// Names of the Python exception types and the public TemplateError's message.
#include "tokenizer/jinja/error.hpp"

namespace kiln::jinja {

std::string_view error_type_name(ErrorType type) {
  switch (type) {
    case ErrorType::kTemplateSyntaxError: return "TemplateSyntaxError";
    case ErrorType::kTemplateAssertionError: return "TemplateAssertionError";
    case ErrorType::kTemplateError: return "TemplateError";
    case ErrorType::kTemplateRuntimeError: return "TemplateRuntimeError";
    case ErrorType::kUndefinedError: return "UndefinedError";
    case ErrorType::kSecurityError: return "SecurityError";
    case ErrorType::kTypeError: return "TypeError";
    case ErrorType::kValueError: return "ValueError";
    case ErrorType::kZeroDivisionError: return "ZeroDivisionError";
    case ErrorType::kOverflowError: return "OverflowError";
    case ErrorType::kKeyError: return "KeyError";
    case ErrorType::kIndexError: return "IndexError";
    case ErrorType::kFilterArgumentError: return "FilterArgumentError";
    case ErrorType::kRecursionError: return "RecursionError";
    case ErrorType::kLimitError: return "LimitError";
  }
  return "Error";
}

namespace {

std::string compose(ErrorType type, const std::string& detail, const std::string& source_name, int line, int column) {
  const std::string where = line > 0 ? fmt::format("{}:{}:{}", source_name, line, column) : source_name;
  return fmt::format("{}: {}: {}", where, error_type_name(type), detail);
}

}  // namespace

TemplateError::TemplateError(ErrorType type, std::string detail, std::string source_name, int line, int column)
    : Error(ErrorKind::kInvalidInput, compose(type, detail, source_name, line, column)),
      type_(type),
      detail_(std::move(detail)),
      line_(line),
      column_(column) {}

std::string TemplateError::python_message() const { return fmt::format("{}: {}", error_type_name(type_), detail_); }

}  // namespace kiln::jinja
