// UTF-8 coding shared by the tokenizer and the template engine: decoding, encoding, validation,
// repairing invalid input the way Python's bytes.decode("utf-8", "replace") does, and the
// incomplete tail a streaming decoder must hold back.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

inline constexpr char32_t kMaxCodePoint = 0x10FFFF;  // Unicode's last code point
inline constexpr char32_t kReplacementChar = 0xFFFD;
inline constexpr const char* kSentencePieceSpace = "\xe2\x96\x81";  // U+2581 "▁" in UTF-8

// Length of the UTF-8 sequence that starts with `lead` (1 for a continuation or invalid byte, so
// a scan over arbitrary bytes always advances).
inline std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// Decodes the code point at text[pos] (text must be valid UTF-8) and advances pos past it.
char32_t next_code_point(std::string_view text, std::size_t& pos);

// Appends the UTF-8 encoding of `c`.
void append_utf8(std::string& out, char32_t c);

// Length of the longest prefix of `bytes` that is well-formed UTF-8.
std::size_t valid_utf8_prefix(std::string_view bytes);

// True when the whole of `bytes` is well-formed UTF-8.
inline bool is_valid_utf8(std::string_view bytes) { return valid_utf8_prefix(bytes) == bytes.size(); }

// Appends `bytes` to `out`, replacing each maximal ill-formed subpart with U+FFFD. This is the
// Unicode "best practice" both Python (errors="replace") and Rust (from_utf8_lossy) follow, so a
// byte string repaired here equals what those languages would see.
void append_utf8_lossy(std::string& out, std::string_view bytes);

// Length of a trailing incomplete (but so far well-formed) UTF-8 sequence in `bytes`: the bytes a
// streaming decoder must hold back until more input arrives. 0 when `bytes` ends on a boundary.
std::size_t incomplete_utf8_suffix(std::string_view bytes);

}  // namespace kiln
