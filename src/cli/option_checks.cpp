#include "cli/option_checks.hpp"

#include <fmt/format.h>

#include <charconv>

namespace kiln::cli {

CLI::Validator at_least(double minimum) {
  const std::string bound = fmt::format("{}", minimum);
  return CLI::Validator(
      [minimum, bound](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error != std::errc() || stop != end) return fmt::format("{} is not a number", text);
        if (!(value >= minimum)) return fmt::format("must be at least {}, got {}", bound, text);
        return {};
      },
      ">=" + bound);
}

}  // namespace kiln::cli
