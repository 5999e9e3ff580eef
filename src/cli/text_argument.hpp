// Text options that take TEXT or "-" (standard input): the prompt of `kiln run`, the text of
// `kiln tokenize`. Tokenizers take Unicode text, as Hugging Face's do, so bytes that are not
// UTF-8 are an error naming the option and the first bad byte, never silently repaired.
#pragma once

#include <string>
#include <string_view>

namespace kiln::cli {

std::string text_argument(std::string value, std::string_view option);

}  // namespace kiln::cli
