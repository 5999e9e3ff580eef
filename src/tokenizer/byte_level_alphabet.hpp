// GPT-2's byte-level alphabet: each of the 256 byte values maps to one printable code point
// (printable Latin-1 bytes map to themselves, the rest to U+0100..U+0143), so any byte string
// becomes a string of visible characters and back. Byte-level BPE vocabularies are written in it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::tok {

class ByteLevelAlphabet {
 public:
  static const ByteLevelAlphabet& get();

  // UTF-8 encoding of the character that stands for `byte`.
  std::string_view utf8_of(std::uint8_t byte) const { return utf8_[byte]; }
  // The byte a code point stands for, or nullopt if it is not in the alphabet.
  std::optional<std::uint8_t> byte_of(char32_t c) const;

  // Appends the alphabet form of `bytes`.
  void encode(std::string_view bytes, std::string& out) const;
  // The bytes `text` stands for when every character is in the alphabet; nullopt otherwise.
  std::optional<std::string> decode(std::string_view text) const;

 private:
  ByteLevelAlphabet();
  std::array<std::string, 256> utf8_{};
  std::array<std::int16_t, 0x144> byte_of_char_{};  // -1 where the code point is not used
};

}  // namespace kiln::tok
