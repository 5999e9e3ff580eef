#include "cli/text_argument.hpp"

#include <iostream>
#include <iterator>

#include "cli/standard_streams.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace kiln::cli {

std::string text_argument(std::string value, std::string_view option) {
  const bool from_stdin = value == "-";
  if (from_stdin) {
    require_open_stdin(option);
    value.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  if (const std::size_t valid = valid_utf8_prefix(value); valid != value.size()) {
    fail("{}{}: not UTF-8 text: byte {} (0x{:02x}) is not part of a valid character", option,
         from_stdin ? " (standard input)" : "", valid, static_cast<unsigned char>(value[valid]));
  }
  return value;
}

}  // namespace kiln::cli
