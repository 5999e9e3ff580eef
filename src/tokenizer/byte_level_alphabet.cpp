// The byte <-> character table of GPT-2 (bytes_to_unicode in openai/gpt-2 encoder.py).
#include "tokenizer/byte_level_alphabet.hpp"

#include "tokenizer/unicode.hpp"

namespace kiln::tok {

const ByteLevelAlphabet& ByteLevelAlphabet::get() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

ByteLevelAlphabet::ByteLevelAlphabet() {
  byte_of_char_.fill(-1);
  char32_t next_extra = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const char32_t c = printable ? static_cast<char32_t>(b) : next_extra++;
    append_utf8(utf8_[b], c);
    byte_of_char_[c] = static_cast<std::int16_t>(b);
  }
}

std::optional<std::uint8_t> ByteLevelAlphabet::byte_of(char32_t c) const {
  if (c >= byte_of_char_.size() || byte_of_char_[c] < 0) return std::nullopt;
  return static_cast<std::uint8_t>(byte_of_char_[c]);
}

void ByteLevelAlphabet::encode(std::string_view bytes, std::string& out) const {
  for (const char b : bytes) out += utf8_[static_cast<std::uint8_t>(b)];
}

std::optional<std::string> ByteLevelAlphabet::decode(std::string_view text) const {
  std::string bytes;
  bytes.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = byte_of(next_code_point(text, pos));
    if (!byte) return std::nullopt;
    bytes.push_back(static_cast<char>(*byte));
  }
  return bytes;
}

}  // namespace kiln::tok
