#include "cli/option_checks.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <limits>

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

namespace {

template <typename T>
std::string fits(const std::string& text) {
  T value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc::result_out_of_range) {
    return fmt::format("{} is out of range (at most {})", text, std::numeric_limits<T>::max());
  }
  return {};  // anything else is CLI11's to judge
}

}  // namespace

void refuse_out_of_range_integers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type.starts_with("UINT")) {
      option->check(CLI::Validator([](std::string& text) { return fits<std::uint64_t>(text); }, ""));
    } else if (type.starts_with("INT")) {
      option->check(CLI::Validator([](std::string& text) { return fits<std::int64_t>(text); }, ""));
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_out_of_range_integers(*sub);
}

}  // namespace kiln::cli
