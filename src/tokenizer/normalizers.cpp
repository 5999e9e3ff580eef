// The normalizers of HF `tokenizers` (normalizers/*.rs), without offset alignment.
#include "tokenizer/normalizers.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <vector>

#include "tokenizer/byte_level_alphabet.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/unicode.hpp"

namespace kiln::tok {
namespace {

bool is_ascii(const std::string& text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Applies a function to every code point, appending its output to a new string.
template <typename F>
void rewrite_chars(std::string& text, F&& rewrite) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) rewrite(next_code_point(text, pos), out);
  text.swap(out);
}

// Code points that can change under a normalization form or interact with their neighbours:
// a non-zero combining class, any (compatibility) decomposition, or a place as the second half of
// a canonical composition. Every other code point is left alone by NFC/NFD/NFKC/NFKD and cuts
// the text into pieces that normalize independently. 136 KB, built once (~15 ms).
const std::vector<bool>& unstable_code_points() {
  static const std::vector<bool> table = [] {
    std::vector<bool> unstable(0x110000, false);
    utf8proc_int32_t buffer[32];
    for (utf8proc_int32_t c = 0; c < 0x110000; ++c) {
      const utf8proc_property_t* property = utf8proc_get_property(c);
      if (property->category == UTF8PROC_CATEGORY_CN) continue;
      int boundary = 0;
      const auto compat = utf8proc_decompose_char(
          c, buffer, 32, static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT), &boundary);
      if (property->combining_class != 0 || compat != 1 || buffer[0] != c) unstable[static_cast<std::size_t>(c)] = true;
      const auto canonical = utf8proc_decompose_char(c, buffer, 32, UTF8PROC_DECOMPOSE, &boundary);
      for (utf8proc_ssize_t i = 1; i < canonical; ++i) unstable[static_cast<std::size_t>(buffer[i])] = true;
    }
    for (char32_t c = 0x1161; c <= 0x1175; ++c) unstable[c] = true;  // Hangul vowels and finals
    for (char32_t c = 0x11A8; c <= 0x11C2; ++c) unstable[c] = true;  // compose algorithmically
    return unstable;
  }();
  return table;
}

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(int options) : options_(options), unstable_(unstable_code_points()) {}

  // Only the stretches around unstable code points go through utf8proc: each starts at the last
  // stable code point before them (which they may compose with) and ends before the next stable
  // one. Characters HF's tables do not know are copied as they are and end a stretch too.
  void normalize(std::string& text) const override {
    if (is_ascii(text)) return;
    constexpr std::size_t kNone = std::string::npos;
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    std::size_t flushed = 0, last_stable = kNone, stretch = kNone, pos = 0;
    auto close_stretch = [&](std::size_t end) {
      if (stretch == kNone) return;
      append_normalized(std::string_view(text).substr(stretch, end - stretch), out);
      flushed = end;
      stretch = kNone;
    };
    while (pos < text.size()) {
      const std::size_t begin = pos;
      const char32_t c = next_code_point(text, pos);
      if (is_normalization_opaque(c)) {
        close_stretch(begin);
        out.append(text, flushed, pos - flushed);
        flushed = pos;
        last_stable = kNone;
      } else if (!unstable_[c]) {
        close_stretch(begin);
        last_stable = begin;
      } else if (stretch == kNone) {
        stretch = last_stable != kNone && last_stable >= flushed ? last_stable : begin;
        out.append(text, flushed, stretch - flushed);
        flushed = stretch;
      }
    }
    if (stretch != kNone) {
      close_stretch(text.size());
    } else {
      out.append(text, flushed, std::string::npos);
    }
    text.swap(out);
  }

 private:
  void append_normalized(std::string_view run, std::string& out) const {
    if (run.empty()) return;
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t n =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(run.data()), static_cast<utf8proc_ssize_t>(run.size()),
                     &result, static_cast<utf8proc_option_t>(options_));
    if (n < 0) fail("unicode normalization failed: {}", utf8proc_errmsg(n));
    out.append(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
    std::free(result);
  }

  int options_;
  const std::vector<bool>& unstable_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    rewrite_chars(text, [](char32_t c, std::string& out) { append_lowercase(out, c); });
  }
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class Replace final : public Normalizer {
 public:
  Replace(Regex pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& text) const override {
    std::string out;
    std::size_t last = 0;
    bool matched = false;
    pattern_.for_each_match(text, [&](std::size_t start, std::size_t end) {
      out.append(text, last, start - last);
      out += content_;
      last = end;
      matched = true;
    });
    if (!matched) return;
    out.append(text, last, std::string::npos);
    text.swap(out);
  }

 private:
  Regex pattern_;
  std::string content_;
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    std::size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        std::size_t next = begin;
        if (!is_white_space(next_code_point(text, next))) break;
        begin = next;
      }
    }
    if (right_) {
      while (end > begin) {
        std::size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        std::size_t probe = start;
        if (!is_white_space(next_code_point(text, probe))) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class StripAccents final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    rewrite_chars(text, [](char32_t c, std::string& out) {
      if (!is_combining_mark(c)) append_utf8(out, c);
    });
  }
};

// SentencePiece's NMT normalization: drop control characters, map odd spaces to ' '.
class Nmt final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    rewrite_chars(text, [](char32_t c, std::string& out) {
      if ((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F || c == 0x9F) {
        return;
      }
      const bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                         (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF ||
                         c == 0xFFFD;
      append_utf8(out, space ? U' ' : c);
    });
  }
};

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool chinese, bool strip_accents, bool lowercase)
      : clean_text_(clean_text),
        chinese_(chinese),
        strip_accents_(strip_accents),
        lowercase_(lowercase),
        nfd_(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE) {}

  void normalize(std::string& text) const override {
    if (clean_text_) {
      rewrite_chars(text, [](char32_t c, std::string& out) {
        const bool tab_or_newline = c == '\t' || c == '\n' || c == '\r';
        if (c == 0 || c == kReplacementChar || (!tab_or_newline && is_bert_control(c))) return;
        append_utf8(out, tab_or_newline || is_white_space(c) ? U' ' : c);
      });
    }
    if (chinese_) {
      rewrite_chars(text, [](char32_t c, std::string& out) {
        if (!is_chinese_char(c)) return append_utf8(out, c);
        out += ' ';
        append_utf8(out, c);
        out += ' ';
      });
    }
    if (strip_accents_) {
      nfd_.normalize(text);
      rewrite_chars(text, [](char32_t c, std::string& out) {
        if (!is_bert_accent_mark(c)) append_utf8(out, c);
      });
    }
    if (lowercase_) Lowercase().normalize(text);
  }

 private:
  bool clean_text_, chinese_, strip_accents_, lowercase_;
  UnicodeNormalizer nfd_;
};

class ByteLevelNormalizer final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    ByteLevelAlphabet::get().encode(text, out);
    text.swap(out);
  }
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

std::unique_ptr<Normalizer> make_sequence(const JsonFields& fields, const std::string& origin) {
  const Json& list = fields.object().at("normalizers");
  if (!list.is_array()) fields.fail_field("normalizers", "must be an array");
  std::vector<std::unique_ptr<Normalizer>> steps;
  for (std::size_t i = 0; i < list.size(); ++i) {
    steps.push_back(make_normalizer(list[i], fmt::format("{}.normalizers[{}]", origin, i)));
  }
  return std::make_unique<Sequence>(std::move(steps));
}

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const Json& spec, const std::string& origin) {
  const JsonFields fields(spec, origin);
  const auto type = fields.get<std::string>("type");
  if (type == "Sequence") return make_sequence(fields, origin);
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
  if (type == "NFKC") {
    return std::make_unique<UnicodeNormalizer>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  }
  if (type == "NFKD") {
    return std::make_unique<UnicodeNormalizer>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "Prepend") return std::make_unique<Prepend>(fields.get<std::string>("prepend"));
  if (type == "Replace") {
    return std::make_unique<Replace>(Regex::from_pattern_json(fields.object().at("pattern"), origin + ".pattern"),
                                     fields.get<std::string>("content"));
  }
  if (type == "Strip") {
    return std::make_unique<Strip>(fields.get<bool>("strip_left"), fields.get<bool>("strip_right"));
  }
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Nmt") return std::make_unique<Nmt>();
  if (type == "BertNormalizer") {
    const bool lowercase = fields.get_or<bool>("lowercase", true);
    return std::make_unique<BertNormalizer>(fields.get_or<bool>("clean_text", true),
                                            fields.get_or<bool>("handle_chinese_chars", true),
                                            fields.get_or<bool>("strip_accents", lowercase), lowercase);
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
  fail(ErrorKind::kUnsupported,
       "{}: normalizer type '{}' is not supported (supported: Sequence, NFC, NFD, NFKC, NFKD, "
       "Lowercase, Prepend, Replace, Strip, StripAccents, Nmt, BertNormalizer, ByteLevel)",
       origin, type);
}

}  // namespace kiln::tok
