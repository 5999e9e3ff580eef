// The pre-tokenizers of HF `tokenizers` (pre_tokenizers/*.rs). Each emits pieces depth-first;
// HF applies each step to all pieces before the next step, which yields the same pieces because
// every step looks at one piece at a time.
#include "tokenizer/pre_tokenizers.hpp"

#include <vector>

#include "tokenizer/byte_level_alphabet.hpp"
#include "tokenizer/unicode.hpp"

namespace kiln::tok {
namespace {

// Rust regex classes, written out for PCRE2: \w (Alphabetic, M, Nd, Pc, Join_Control) and
// \s (White_Space).
constexpr std::string_view kWhitespacePattern =
    "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]+"
    "|[^\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}\\t\\n\\x0B\\f\\r\\x{85}\\p{Z}]+";
constexpr std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

class Split final : public PreTokenizer {
 public:
  Split(Regex regex, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    split_into_pieces(
        text, at_start, behavior_, invert_,
        [&](FunctionRef<void(Span)> on_span) { regex_spans(regex_, text, on_span); }, sink);
  }

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
};

// Splits on every code point matching a predicate (Punctuation, Digits, WhitespaceSplit, ...).
class CharSplit final : public PreTokenizer {
 public:
  using Predicate = bool (*)(char32_t);
  CharSplit(Predicate predicate, SplitBehavior behavior) : predicate_(predicate), behavior_(behavior) {}
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    split_into_pieces(
        text, at_start, behavior_, false,
        [&](FunctionRef<void(Span)> on_span) { char_spans(text, predicate_, on_span); }, sink);
  }

 private:
  Predicate predicate_;
  SplitBehavior behavior_;
};

class CharDelimiterSplit final : public PreTokenizer {
 public:
  explicit CharDelimiterSplit(char32_t delimiter) : delimiter_(delimiter) {}
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    auto is_delimiter = [this](char32_t c) { return c == delimiter_; };
    split_into_pieces(
        text, at_start, SplitBehavior::kRemoved, false,
        [&](FunctionRef<void(Span)> on_span) { char_spans(text, is_delimiter, on_span); }, sink);
  }

 private:
  char32_t delimiter_;
};

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex, bool map_bytes)
      : add_prefix_space_(add_prefix_space), map_bytes_(map_bytes) {
    if (use_regex) regex_ = std::make_unique<Regex>(Regex::from_oniguruma(kGpt2Pattern, "ByteLevel"));
  }
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    std::string prefixed;
    if (add_prefix_space_ && !text.empty() && text.front() != ' ') {
      prefixed.reserve(text.size() + 1);
      prefixed += ' ';
      prefixed += text;
      text = prefixed;
    }
    auto emit = [&](std::string_view piece, bool piece_at_start) {
      if (!map_bytes_) return sink(piece, piece_at_start);
      std::string mapped;
      ByteLevelAlphabet::get().encode(piece, mapped);
      sink(mapped, piece_at_start);
    };
    if (!regex_) return emit(text, at_start);
    split_into_pieces(
        text, at_start, SplitBehavior::kIsolated, false,
        [&](FunctionRef<void(Span)> on_span) { regex_spans(*regex_, text, on_span); }, emit);
  }

 private:
  bool add_prefix_space_;
  bool map_bytes_;
  std::unique_ptr<Regex> regex_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(replacement), scheme_(scheme), split_(split) {
    append_utf8(replacement_utf8_, replacement);
  }
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    std::string replaced;
    replaced.reserve(text.size() + replacement_utf8_.size());
    const bool starts_with_replacement = text.starts_with(replacement_utf8_) || text.starts_with(' ');
    const bool prepend = !text.empty() && !starts_with_replacement &&
                         (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && at_start));
    if (prepend) replaced += replacement_utf8_;
    for (const char c : text) {
      if (c == ' ') {
        replaced += replacement_utf8_;
      } else {
        replaced += c;
      }
    }
    if (!split_) {
      if (!replaced.empty()) sink(replaced, at_start);
      return;
    }
    auto is_replacement = [this](char32_t c) { return c == replacement_; };
    split_into_pieces(
        replaced, at_start, SplitBehavior::kMergedWithNext, false,
        [&](FunctionRef<void(Span)> on_span) { char_spans(replaced, is_replacement, on_span); }, sink);
  }

 private:
  char32_t replacement_;
  std::string replacement_utf8_;
  PrependScheme scheme_;
  bool split_;
};

class FixedLength final : public PreTokenizer {
 public:
  explicit FixedLength(std::size_t length) : length_(length) {}
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    std::size_t begin = 0;
    while (begin < text.size()) {
      std::size_t end = begin;
      for (std::size_t n = 0; n < length_ && end < text.size(); ++n) {
        end += utf8_sequence_length(static_cast<unsigned char>(text[end]));
      }
      sink(text.substr(begin, end - begin), at_start && begin == 0);
      begin = end;
    }
  }

 private:
  std::size_t length_;
};

class PreTokenizerSequence final : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const override {
    run_from(0, text, at_start, sink);
  }

 private:
  void run_from(std::size_t step, std::string_view text, bool at_start, PieceSink sink) const {
    if (step == steps_.size()) return sink(text, at_start);
    steps_[step]->pre_tokenize(text, at_start, [&](std::string_view piece, bool piece_at_start) {
      run_from(step + 1, piece, piece_at_start, sink);
    });
  }

  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// Two steps in a row: BertPreTokenizer is "split on whitespace, then isolate punctuation".
std::unique_ptr<PreTokenizer> make_bert() {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  steps.push_back(std::make_unique<CharSplit>(&is_white_space, SplitBehavior::kRemoved));
  steps.push_back(std::make_unique<CharSplit>(&is_punctuation_or_ascii_punctuation, SplitBehavior::kIsolated));
  return std::make_unique<PreTokenizerSequence>(std::move(steps));
}

char32_t single_char(const JsonFields& fields, std::string_view key) {
  const auto text = fields.get<std::string>(key);
  std::size_t pos = 0;
  const char32_t c = text.empty() ? 0 : next_code_point(text, pos);
  if (text.empty() || pos != text.size()) fields.fail_field(key, "must be a single character");
  return c;
}

PrependScheme parse_prepend_scheme(const JsonFields& fields) {
  // Older files have only add_prefix_space; false there means "never".
  if (fields.has("add_prefix_space") && !fields.get<bool>("add_prefix_space")) return PrependScheme::kNever;
  const auto scheme = fields.get_or<std::string>("prepend_scheme", "always");
  if (scheme == "always") return PrependScheme::kAlways;
  if (scheme == "first") return PrependScheme::kFirst;
  if (scheme == "never") return PrependScheme::kNever;
  fields.fail_field("prepend_scheme", "must be one of always, first, never");
}

std::unique_ptr<PreTokenizer> make_sequence(const JsonFields& fields, const std::string& origin,
                                            const PreTokenizerOptions& options) {
  const Json& list = fields.object().at("pretokenizers");
  if (!list.is_array()) fields.fail_field("pretokenizers", "must be an array");
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const bool last = i + 1 == list.size();
    steps.push_back(make_pre_tokenizer(list[i], fmt::format("{}.pretokenizers[{}]", origin, i),
                                       last ? options : PreTokenizerOptions{}));
  }
  return std::make_unique<PreTokenizerSequence>(std::move(steps));
}

}  // namespace

bool ends_with_byte_level(const Json& spec) {
  if (!spec.is_object()) return false;
  const auto type = spec.value("type", std::string());
  if (type == "ByteLevel") return true;
  if (type != "Sequence") return false;
  const auto it = spec.find("pretokenizers");
  return it != spec.end() && it->is_array() && !it->empty() && ends_with_byte_level(it->back());
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& spec, const std::string& origin,
                                                 const PreTokenizerOptions& options) {
  const JsonFields fields(spec, origin);
  const auto type = fields.get<std::string>("type");
  if (type == "Sequence") return make_sequence(fields, origin, options);
  if (type == "Split") {
    return std::make_unique<Split>(Regex::from_pattern_json(spec.at("pattern"), origin + ".pattern"),
                                   parse_split_behavior(spec.at("behavior"), origin + ".behavior"),
                                   fields.get_or<bool>("invert", false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevel>(fields.get_or<bool>("add_prefix_space", true),
                                       fields.get_or<bool>("use_regex", true), !options.defer_final_byte_level_mapping);
  }
  if (type == "Metaspace") {
    return std::make_unique<Metaspace>(single_char(fields, "replacement"), parse_prepend_scheme(fields),
                                       fields.get_or<bool>("split", true));
  }
  if (type == "Whitespace") {
    return std::make_unique<Split>(Regex::from_pcre2(kWhitespacePattern, origin), SplitBehavior::kRemoved, true);
  }
  if (type == "WhitespaceSplit") return std::make_unique<CharSplit>(&is_white_space, SplitBehavior::kRemoved);
  if (type == "BertPreTokenizer") return make_bert();
  if (type == "Punctuation") {
    const auto behavior = fields.has("behavior") ? parse_split_behavior(spec.at("behavior"), origin + ".behavior")
                                                 : SplitBehavior::kIsolated;
    return std::make_unique<CharSplit>(&is_punctuation_or_ascii_punctuation, behavior);
  }
  if (type == "Digits") {
    return std::make_unique<CharSplit>(&is_numeric, fields.get_or<bool>("individual_digits", false)
                                                        ? SplitBehavior::kIsolated
                                                        : SplitBehavior::kContiguous);
  }
  if (type == "CharDelimiterSplit") return std::make_unique<CharDelimiterSplit>(single_char(fields, "delimiter"));
  if (type == "FixedLength") {
    const auto length = fields.get_or<std::int64_t>("length", 5);
    if (length <= 0) fields.fail_field("length", "must be positive");
    return std::make_unique<FixedLength>(static_cast<std::size_t>(length));
  }
  fail(ErrorKind::kUnsupported,
       "{}: pre-tokenizer type '{}' is not supported (supported: Sequence, Split, ByteLevel, "
       "Metaspace, Whitespace, WhitespaceSplit, BertPreTokenizer, Punctuation, Digits, "
       "CharDelimiterSplit, FixedLength)",
       origin, type);
}

}  // namespace kiln::tok
