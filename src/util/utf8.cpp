// UTF-8 decoding follows the Unicode "maximal subpart" rule for ill-formed input (what Python's
// errors="replace" and Rust's from_utf8_lossy do).
#include "util/utf8.hpp"

#include <cstdint>

namespace kiln {
namespace {

// One step of a UTF-8 decoder over arbitrary bytes. `length` is the number of bytes consumed:
// the whole sequence when valid, else the maximal ill-formed subpart (at least 1 byte).
// `complete` is false when the bytes end inside a sequence that is well-formed so far.
struct DecodeStep {
  char32_t code_point = 0;
  std::size_t length = 1;
  bool valid = false;
  bool complete = true;
};

DecodeStep decode_step(std::string_view bytes, std::size_t pos) {
  const auto b0 = static_cast<unsigned char>(bytes[pos]);
  if (b0 < 0x80) return {b0, 1, true, true};
  std::size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  char32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2, cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3, cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {0, 1, false, true};
  }
  std::size_t i = 1;
  for (; i <= need; ++i) {
    if (pos + i >= bytes.size()) return {0, i, false, false};
    const auto b = static_cast<unsigned char>(bytes[pos + i]);
    const unsigned char low = i == 1 ? lo : 0x80, high = i == 1 ? hi : 0xBF;
    if (b < low || b > high) return {0, i, false, true};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, need + 1, true, true};
}

}  // namespace

char32_t next_code_point(std::string_view text, std::size_t& pos) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  const std::size_t n = utf8_sequence_length(b0);
  char32_t cp = n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (std::size_t i = 1; i < n && pos + i < text.size(); ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  }
  pos += n;
  return cp;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::size_t valid_utf8_prefix(std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    // ASCII fast path, eight bytes at a time.
    while (pos + 8 <= bytes.size()) {
      std::uint64_t word;
      __builtin_memcpy(&word, bytes.data() + pos, 8);
      if (word & 0x8080808080808080ULL) break;
      pos += 8;
    }
    if (pos >= bytes.size()) break;
    const DecodeStep step = decode_step(bytes, pos);
    if (!step.valid) return pos;
    pos += step.length;
  }
  return pos;
}

void append_utf8_lossy(std::string& out, std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::size_t valid = valid_utf8_prefix(bytes.substr(pos));
    out.append(bytes.substr(pos, valid));
    pos += valid;
    if (pos >= bytes.size()) break;
    const DecodeStep step = decode_step(bytes, pos);
    append_utf8(out, kReplacementChar);
    pos += step.length;
  }
}

std::size_t incomplete_utf8_suffix(std::string_view bytes) {
  // A sequence is at most 4 bytes, so only the last 3 bytes can start an incomplete one.
  const std::size_t first = bytes.size() > 3 ? bytes.size() - 3 : 0;
  for (std::size_t start = first; start < bytes.size(); ++start) {
    const auto b = static_cast<unsigned char>(bytes[start]);
    if (b < 0xC0) continue;  // not a lead byte
    const DecodeStep step = decode_step(bytes, start);
    if (!step.complete) return bytes.size() - start;
  }
  return 0;
}

}  // namespace kiln
