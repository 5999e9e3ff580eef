// The decoders of HF `tokenizers` (decoders/*.rs, pre_tokenizers/{byte_level,metaspace}.rs) as
// streaming stages. Each token stage reproduces decode_chain on the token list; each text stage
// reproduces it on the single fused string, holding back only what later text could change.
#include "tokenizer/decoders.hpp"

#include "tokenizer/byte_level_alphabet.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/unicode.hpp"

namespace kiln::tok {

void DecodeStage::on_token(std::string_view) {
  fail(ErrorKind::kInternal, "decoder stage received a token after the text was fused");
}

void DecodeStage::on_text(std::string_view) {
  fail(ErrorKind::kInternal, "decoder stage received text before the tokens were fused");
}

namespace {

// ---- ByteLevel: token chars -> bytes, all tokens fused, then lossy UTF-8. ----

class ByteLevelStage final : public DecodeStage {
 public:
  using DecodeStage::DecodeStage;
  void on_token(std::string_view token) override {
    // A token whose every char is in the alphabet stands for bytes; any other token is kept
    // as its own UTF-8 (e.g. an added token such as "<|eot_id|>" written in plain text).
    if (auto bytes = ByteLevelAlphabet::get().decode(token)) {
      pending_ += *bytes;
    } else {
      pending_ += token;
    }
    const std::size_t hold = incomplete_utf8_suffix(pending_);
    std::string text;
    append_utf8_lossy(text, std::string_view(pending_).substr(0, pending_.size() - hold));
    pending_.erase(0, pending_.size() - hold);
    if (!text.empty()) next_->on_text(text);
  }
  void finish() override {
    std::string text;
    append_utf8_lossy(text, pending_);
    pending_.clear();
    if (!text.empty()) next_->on_text(text);
    next_->finish();
  }

 private:
  std::string pending_;  // bytes of a character that later tokens may complete
};

class ByteLevelStep final : public DecoderStep {
 public:
  bool fuses() const override { return true; }
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<ByteLevelStage>(&next);
  }
  bool to_token_bytes(std::string& token) const override {
    if (auto bytes = ByteLevelAlphabet::get().decode(token)) token = std::move(*bytes);
    return true;
  }
};

// ---- Fuse: all tokens into one string. ----

class FuseStage final : public DecodeStage {
 public:
  using DecodeStage::DecodeStage;
  void on_token(std::string_view token) override {
    if (!token.empty()) next_->on_text(token);
  }
  void on_text(std::string_view text) override { next_->on_text(text); }
};

class FuseStep final : public DecoderStep {
 public:
  bool fuses() const override { return true; }
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<FuseStage>(&next);
  }
  std::unique_ptr<DecodeStage> text_stage(DecodeStage& next) const override {
    return std::make_unique<FuseStage>(&next);
  }
  bool to_token_bytes(std::string&) const override { return true; }
};

// ---- ByteFallback: runs of <0xXX> tokens become the UTF-8 they spell, or one U+FFFD per
// byte when they do not spell valid UTF-8. ----

std::optional<std::uint8_t> byte_token_value(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token.back() != '>') return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // Rust's u8::from_str_radix also accepts a leading '+'.
  if (token[3] == '+') {
    const int low = hex(token[4]);
    return low < 0 ? std::nullopt : std::optional<std::uint8_t>(static_cast<std::uint8_t>(low));
  }
  const int high = hex(token[3]), low = hex(token[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<std::uint8_t>(high * 16 + low);
}

class ByteFallbackStage final : public DecodeStage {
 public:
  using DecodeStage::DecodeStage;
  void on_token(std::string_view token) override {
    if (const auto byte = byte_token_value(token)) {
      run_.push_back(static_cast<char>(*byte));
      return;
    }
    flush_run();
    next_->on_token(token);
  }
  void finish() override {
    flush_run();
    next_->finish();
  }

 private:
  void flush_run() {
    if (run_.empty()) return;
    if (is_valid_utf8(run_)) {
      next_->on_token(run_);
    } else {
      for (std::size_t i = 0; i < run_.size(); ++i) next_->on_token("\xEF\xBF\xBD");
    }
    run_.clear();
  }
  std::string run_;
};

class ByteFallbackStep final : public DecoderStep {
 public:
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<ByteFallbackStage>(&next);
  }
  bool to_token_bytes(std::string& token) const override {
    if (const auto byte = byte_token_value(token)) token.assign(1, static_cast<char>(*byte));
    return true;
  }
};

// ---- Metaspace: the replacement character back to a space; dropped in the first token when
// the encoder prepended it. ----

class MetaspaceStage final : public DecodeStage {
 public:
  MetaspaceStage(DecodeStage* next, char32_t replacement, bool drop_in_first)
      : DecodeStage(next), replacement_(replacement), drop_in_first_(drop_in_first) {}
  void on_token(std::string_view token) override {
    next_->on_token(rewrite(token, drop_in_first_ && first_));
    first_ = false;
  }
  // After fusion the whole text is the first (and only) token.
  void on_text(std::string_view text) override { next_->on_text(rewrite(text, drop_in_first_)); }

 private:
  std::string rewrite(std::string_view token, bool drop) const {
    std::string out;
    out.reserve(token.size());
    std::size_t pos = 0;
    while (pos < token.size()) {
      const std::size_t begin = pos;
      if (next_code_point(token, pos) != replacement_) {
        out.append(token.substr(begin, pos - begin));
      } else if (!drop) {
        out += ' ';
      }
    }
    return out;
  }
  char32_t replacement_;
  bool drop_in_first_;
  bool first_ = true;
};

class MetaspaceStep final : public DecoderStep {
 public:
  MetaspaceStep(char32_t replacement, bool drop_in_first) : replacement_(replacement), drop_in_first_(drop_in_first) {}
  std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const override {
    return std::make_unique<MetaspaceStage>(&next, replacement_, drop_in_first_);
  }
  std::unique_ptr<DecodeStage> text_stage(DecodeStage& next) const override {
    return std::make_unique<MetaspaceStage>(&next, replacement_, drop_in_first_);
  }
  // Mid-text, the replacement character is always a space (the first token's drop aside).
  bool to_token_bytes(std::string& token) const override {
    std::string out;
    for (std::size_t pos = 0; pos < token.size();) {
      const std::size_t begin = pos;
      if (next_code_point(token, pos) == replacement_) {
        out += ' ';
      } else {
        out.append(token, begin, pos - begin);
      }
    }
    token = std::move(out);
    return true;
  }

 private:
  char32_t replacement_;
  bool drop_in_first_;
};

}  // namespace

std::vector<std::unique_ptr<DecoderStep>> make_decoder_steps(const Json& spec, const std::string& origin) {
  const JsonFields fields(spec, origin);
  const auto type = fields.get<std::string>("type");
  std::vector<std::unique_ptr<DecoderStep>> steps;
  if (type == "Sequence") {
    const Json& list = spec.at("decoders");
    if (!list.is_array()) fields.fail_field("decoders", "must be an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      for (auto& step : make_decoder_steps(list[i], fmt::format("{}.decoders[{}]", origin, i))) {
        steps.push_back(std::move(step));
      }
    }
  } else if (type == "ByteLevel") {
    steps.push_back(std::make_unique<ByteLevelStep>());
  } else if (type == "Fuse") {
    steps.push_back(std::make_unique<FuseStep>());
  } else if (type == "ByteFallback") {
    steps.push_back(std::make_unique<ByteFallbackStep>());
  } else if (type == "Metaspace") {
    const auto replacement = fields.get<std::string>("replacement");
    std::size_t pos = 0;
    const char32_t c = replacement.empty() ? 0 : next_code_point(replacement, pos);
    if (replacement.empty() || pos != replacement.size()) {
      fields.fail_field("replacement", "must be a single character");
    }
    const bool never = (fields.has("add_prefix_space") && !fields.get<bool>("add_prefix_space")) ||
                       fields.get_or<std::string>("prepend_scheme", "always") == "never";
    steps.push_back(std::make_unique<MetaspaceStep>(c, !never));
  } else {
    steps.push_back(make_editing_decoder_step(fields, type, origin));
  }
  return steps;
}

}  // namespace kiln::tok
