// Decoder steps that edit each token string (Strip, Replace, WordPiece, BPEDecoder, CTC), as
// HF decoders/*.rs do, with streaming forms of Strip and literal Replace for fused text.
#include <optional>

#include "tokenizer/decoders.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/unicode.hpp"

namespace kiln::tok {
namespace {

// ---- Strip: remove up to `start` leading and `stop` trailing `content` characters. ----

std::string strip_token(std::string_view token, char32_t content, std::size_t start, std::size_t stop) {
  std::vector<std::pair<std::size_t, char32_t>> chars;  // (byte offset, code point)
  for (std::size_t pos = 0; pos < token.size();) {
    const std::size_t begin = pos;
    chars.emplace_back(begin, next_code_point(token, pos));
  }
  std::size_t start_cut = 0;
  for (std::size_t i = 0; i < std::min(start, chars.size()) && chars[i].second == content; ++i) {
    start_cut = i + 1;
  }
  std::size_t stop_cut = chars.size();
  for (std::size_t i = 0; i < std::min(stop, chars.size()); ++i) {
    const std::size_t index = chars.size() - i - 1;
    if (chars[index].second != content) break;
    stop_cut = index;
  }
  // HF panics when the two cuts cross (a token made only of `content`); kiln returns "".
  if (stop_cut <= start_cut) return {};
  const std::size_t begin = chars[start_cut].first;
  const std::size_t end = stop_cut == chars.size() ? token.size() : chars[stop_cut].first;
  return std::string(token.substr(begin, end - begin));
}

class StripStage final : public DecodeStage {
 public:
  StripStage(DecodeStage* next, char32_t content, std::size_t start, std::size_t stop)
      : DecodeStage(next), content_(content), start_(start), stop_(stop) {
    append_utf8(content_utf8_, content);
  }
  void on_token(std::string_view token) override { next_->on_token(strip_token(token, content_, start_, stop_)); }
  // Streaming over the fused string: leading characters are dropped while the budget lasts;
  // trailing `content` characters are held back (at most `stop`) until text follows them.
  void on_text(std::string_view text) override {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t begin = pos;
      const char32_t c = next_code_point(text, pos);
      if (leading_ && stripped_ < start_ && c == content_) {
        ++stripped_;
        continue;
      }
      leading_ = false;
      if (stop_ > 0 && c == content_) {
        if (held_ == stop_) {
          out += content_utf8_;
        } else {
          ++held_;
        }
        continue;
      }
      for (; held_ > 0; --held_) out += content_utf8_;
      out.append(text.substr(begin, pos - begin));
    }
    if (!out.empty()) next_->on_text(out);
  }
  void finish() override {
    held_ = 0;  // the held characters are the trailing ones Strip removes
    next_->finish();
  }

 private:
  char32_t content_;
  std::string content_utf8_;
  std::size_t start_, stop_;
  bool leading_ = true;
  std::size_t stripped_ = 0, held_ = 0;
};

class StripStep final : public DecoderStep {
 public:
  StripStep(char32_t content, std::size_t start, std::size_t stop) : content_(content), start_(start), stop_(stop) {}
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<StripStage>(&next, content_, start_, stop_);
  }
  std::unique_ptr<DecodeStage> text_stage(DecodeStage& next) const override {
    return std::make_unique<StripStage>(&next, content_, start_, stop_);
  }
  // Strip trims the ends of the whole text, not of a token in the middle of it.
  bool to_token_bytes(std::string&) const override { return true; }

 private:
  char32_t content_;
  std::size_t start_, stop_;
};

// ---- Replace: every match of the pattern in a token becomes `content`. ----

class ReplaceStage final : public DecodeStage {
 public:
  ReplaceStage(DecodeStage* next, const Regex& pattern, std::optional<std::string> literal, const std::string& content)
      : DecodeStage(next), pattern_(pattern), literal_(std::move(literal)), content_(content) {}
  void on_token(std::string_view token) override {
    std::string out;
    std::size_t last = 0;
    if (!token.empty()) {  // HF's find_matches gives no match in an empty token
      pattern_.for_each_match(token, [&](std::size_t start, std::size_t end) {
        out.append(token.substr(last, start - last));
        out += content_;
        last = end;
      });
    }
    out.append(token.substr(last));
    next_->on_token(out);
  }
  // Streaming literal replacement: hold back the longest tail that may begin a match.
  void on_text(std::string_view text) override {
    pending_ += text;
    std::string out;
    std::size_t pos = 0;
    for (std::size_t found; (found = pending_.find(*literal_, pos)) != std::string::npos;) {
      out.append(pending_, pos, found - pos);
      out += content_;
      pos = found + literal_->size();
    }
    std::size_t keep = std::min(literal_->size() - 1, pending_.size() - pos);
    while (keep > 0 &&
           !std::string_view(*literal_).starts_with(std::string_view(pending_).substr(pending_.size() - keep))) {
      --keep;
    }
    out.append(pending_, pos, pending_.size() - keep - pos);
    pending_.erase(0, pending_.size() - keep);
    if (!out.empty()) next_->on_text(out);
  }
  void finish() override {
    if (!pending_.empty()) next_->on_text(pending_);
    pending_.clear();
    next_->finish();
  }

 private:
  const Regex& pattern_;
  std::optional<std::string> literal_;
  const std::string& content_;
  std::string pending_;
};

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t pos = 0;
  for (std::size_t found; (found = text.find(from, pos)) != std::string::npos;) {
    out.append(text, pos, found - pos);
    out += to;
    pos = found + from.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

class ReplaceStep final : public DecoderStep {
 public:
  ReplaceStep(Regex pattern, std::optional<std::string> literal, std::string content)
      : pattern_(std::move(pattern)), literal_(std::move(literal)), content_(std::move(content)) {}
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<ReplaceStage>(&next, pattern_, literal_, content_);
  }
  std::unique_ptr<DecodeStage> text_stage(DecodeStage& next) const override {
    // A regex, or an empty literal (which matches between every two characters), cannot be
    // streamed by the literal search; the pipeline buffers the text for it instead.
    if (!literal_ || literal_->empty()) return nullptr;
    return std::make_unique<ReplaceStage>(&next, pattern_, literal_, content_);
  }
  bool to_token_bytes(std::string& token) const override {
    if (!literal_ || literal_->empty()) return false;
    token = replace_all(std::move(token), *literal_, content_);
    return true;
  }

 private:
  Regex pattern_;
  std::optional<std::string> literal_;
  std::string content_;
};

// ---- WordPiece: "##" continuations glued, others preceded by a space; optional cleanup. ----

std::string wordpiece_cleanup(std::string text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) text = replace_all(std::move(text), from, to);
  return text;
}

class WordPieceStage final : public DecodeStage {
 public:
  WordPieceStage(DecodeStage* next, const std::string& prefix, bool cleanup)
      : DecodeStage(next), prefix_(prefix), cleanup_(cleanup) {}
  void on_token(std::string_view token) override {
    std::string out;
    if (first_ || token.starts_with(prefix_)) {
      out = first_ ? std::string(token) : std::string(token.substr(prefix_.size()));
    } else {
      out.reserve(token.size() + 1);
      out += ' ';
      out += token;
    }
    first_ = false;
    next_->on_token(cleanup_ ? wordpiece_cleanup(std::move(out)) : out);
  }

 private:
  const std::string& prefix_;
  bool cleanup_;
  bool first_ = true;
};

class WordPieceStep final : public DecoderStep {
 public:
  WordPieceStep(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<WordPieceStage>(&next, prefix_, cleanup_);
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

// ---- BPEDecoder: the end-of-word suffix becomes a space, except in the last token. ----

class BpeSuffixStage final : public DecodeStage {
 public:
  BpeSuffixStage(DecodeStage* next, const std::string& suffix) : DecodeStage(next), suffix_(suffix) {}
  void on_token(std::string_view token) override {
    if (held_) next_->on_token(replace_all(std::move(*held_), suffix_, " "));
    held_ = std::string(token);  // the last token is only known at finish()
  }
  void finish() override {
    if (held_) next_->on_token(replace_all(std::move(*held_), suffix_, ""));
    held_.reset();
    next_->finish();
  }

 private:
  const std::string& suffix_;
  std::optional<std::string> held_;
};

class BpeSuffixStep final : public DecoderStep {
 public:
  explicit BpeSuffixStep(std::string suffix) : suffix_(std::move(suffix)) {}
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<BpeSuffixStage>(&next, suffix_);
  }

 private:
  std::string suffix_;
};

// ---- CTC: repeated tokens collapsed, padding removed, word delimiters to spaces. ----

class CtcStage final : public DecodeStage {
 public:
  CtcStage(DecodeStage* next, const std::string& pad, const std::string& delimiter, bool cleanup)
      : DecodeStage(next), pad_(pad), delimiter_(delimiter), cleanup_(cleanup) {}
  void on_token(std::string_view token) override {
    if (previous_ && *previous_ == token) return;
    previous_ = std::string(token);
    std::string out = replace_all(std::string(token), pad_, "");
    if (cleanup_) out = replace_all(wordpiece_cleanup(std::move(out)), delimiter_, " ");
    if (!out.empty()) next_->on_token(out);
  }

 private:
  const std::string& pad_;
  const std::string& delimiter_;
  bool cleanup_;
  std::optional<std::string> previous_;
};

class CtcStep final : public DecoderStep {
 public:
  CtcStep(std::string pad, std::string delimiter, bool cleanup)
      : pad_(std::move(pad)), delimiter_(std::move(delimiter)), cleanup_(cleanup) {}
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<CtcStage>(&next, pad_, delimiter_, cleanup_);
  }

 private:
  std::string pad_, delimiter_;
  bool cleanup_;
};

char32_t single_char_field(const JsonFields& fields, std::string_view key) {
  const auto text = fields.get<std::string>(key);
  std::size_t pos = 0;
  const char32_t c = text.empty() ? 0 : next_code_point(text, pos);
  if (text.empty() || pos != text.size()) fields.fail_field(key, "must be a single character");
  return c;
}

std::size_t count_field(const JsonFields& fields, std::string_view key) {
  const auto n = fields.get_or<std::int64_t>(key, 0);
  if (n < 0) fields.fail_field(key, "must not be negative");
  return static_cast<std::size_t>(n);
}

}  // namespace

std::unique_ptr<DecoderStep> make_editing_decoder_step(const JsonFields& fields, const std::string& type,
                                                       const std::string& origin) {
  if (type == "Strip") {
    return std::make_unique<StripStep>(single_char_field(fields, "content"), count_field(fields, "start"),
                                       count_field(fields, "stop"));
  }
  if (type == "Replace") {
    const Json& pattern = fields.object().at("pattern");
    std::optional<std::string> literal;
    if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string()) {
      literal = pattern["String"].get<std::string>();
    }
    return std::make_unique<ReplaceStep>(Regex::from_pattern_json(pattern, origin + ".pattern"), std::move(literal),
                                         fields.get<std::string>("content"));
  }
  if (type == "WordPiece") {
    return std::make_unique<WordPieceStep>(fields.get_or<std::string>("prefix", "##"),
                                           fields.get_or<bool>("cleanup", true));
  }
  if (type == "BPEDecoder") return std::make_unique<BpeSuffixStep>(fields.get_or<std::string>("suffix", "</w>"));
  if (type == "CTC") {
    return std::make_unique<CtcStep>(fields.get_or<std::string>("pad_token", "<pad>"),
                                     fields.get_or<std::string>("word_delimiter_token", "|"),
                                     fields.get_or<bool>("cleanup", true));
  }
  fail(ErrorKind::kUnsupported,
       "{}: decoder type '{}' is not supported (supported: Sequence, ByteLevel, Metaspace, "
       "ByteFallback, Fuse, Strip, Replace, WordPiece, BPEDecoder, CTC)",
       origin, type);
}

}  // namespace kiln::tok
