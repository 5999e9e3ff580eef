// Assembling the decode stages: token stages up to the first fusing step, text stages after it
// (or a buffering stand-in for steps that cannot stream), then clean-up and the output buffer.
#include "tokenizer/decode_pipeline.hpp"

#include <functional>

namespace kiln::tok {
namespace {

class OutputStage final : public DecodeStage {
 public:
  OutputStage() : DecodeStage(nullptr) {}
  void on_token(std::string_view token) override { text_ += token; }  // chain ended unfused
  void on_text(std::string_view text) override { text_ += text; }
  void finish() override {}
  std::string take() { return std::exchange(text_, std::string()); }

 private:
  std::string text_;
};

// Tokens to text: plain concatenation (the end of HF's decode) or, with no decoder at all,
// tokens joined by a space.
class JoinStage final : public DecodeStage {
 public:
  JoinStage(DecodeStage* next, std::string_view separator) : DecodeStage(next), separator_(separator) {}
  void on_token(std::string_view token) override {
    std::string text;
    if (!first_) text += separator_;
    text += token;
    first_ = false;
    if (!text.empty()) next_->on_text(text);
  }
  void on_text(std::string_view text) override { next_->on_text(text); }

 private:
  std::string_view separator_;
  bool first_ = true;
};

// Runs a step that cannot stream over the fused string: buffers it all, then runs the step's
// token stage on it as the single token it is in HF.
class BufferAllStage final : public DecodeStage {
 public:
  BufferAllStage(DecodeStage* next, const DecoderStep& step) : DecodeStage(next), step_(step) {}
  void on_text(std::string_view text) override { buffer_ += text; }
  void finish() override {
    JoinStage joiner(next_, "");
    const auto stage = step_.token_stage(joiner);
    stage->on_token(buffer_);
    buffer_.clear();
    stage->finish();  // finishes joiner, which finishes next_
  }

 private:
  const DecoderStep& step_;
  std::string buffer_;
};

// A character the clean-up rules never touch: no rule's match can contain it, so a cut next to
// it separates the text into halves that clean up independently.
bool is_cleanup_neutral(char c) {
  switch (c) {
    case ' ':
    case '.':
    case '?':
    case '!':
    case ',':
    case '\'':
    case 'n':
    case 't':
    case 'm':
    case 's':
    case 'v':
    case 'e':
    case 'r': return false;
    default: return true;
  }
}

class CleanupStage final : public DecodeStage {
 public:
  using DecodeStage::DecodeStage;
  void on_text(std::string_view text) override {
    pending_ += text;
    std::size_t cut = pending_.size();
    while (cut > 0 && !is_cleanup_neutral(pending_[cut - 1])) --cut;
    if (cut == 0) return;
    const std::string out = clean_up_tokenization(std::string_view(pending_).substr(0, cut));
    pending_.erase(0, cut);
    if (!out.empty()) next_->on_text(out);
  }
  void finish() override {
    const std::string out = clean_up_tokenization(pending_);
    pending_.clear();
    if (!out.empty()) next_->on_text(out);
    next_->finish();
  }

 private:
  std::string pending_;
};

}  // namespace

std::string clean_up_tokenization(std::string_view text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  std::string current(text), next;
  for (const auto& [from, to] : kRules) {
    if (current.find(from) == std::string::npos) continue;
    next.clear();
    std::size_t pos = 0;
    for (std::size_t found; (found = current.find(from, pos)) != std::string::npos;) {
      next.append(current, pos, found - pos);
      next += to;
      pos = found + from.size();
    }
    next.append(current, pos, std::string::npos);
    current.swap(next);
  }
  return current;
}

struct DecodePipeline::Stages {
  std::vector<std::unique_ptr<DecodeStage>> owned;  // last stage first
  OutputStage output;
  DecodeStage* head = nullptr;
};

DecodePipeline::DecodePipeline(const std::vector<std::unique_ptr<DecoderStep>>& steps, bool clean_up_spaces)
    : stages_(std::make_unique<Stages>()) {
  // Decide each step's mode front to back, then build back to front (each stage needs its next).
  std::vector<std::function<std::unique_ptr<DecodeStage>(DecodeStage&)>> makers;
  bool fused = false;
  for (const auto& step : steps) {
    const DecoderStep* s = step.get();
    if (!fused) {
      makers.emplace_back([s](DecodeStage& next) { return s->token_stage(next); });
      fused = s->fuses();
    } else {
      makers.emplace_back([s](DecodeStage& next) {
        auto stage = s->text_stage(next);
        return stage ? std::move(stage) : std::make_unique<BufferAllStage>(&next, *s);
      });
    }
  }
  if (!fused) {
    makers.emplace_back([no_decoder = steps.empty()](DecodeStage& next) {
      return std::make_unique<JoinStage>(&next, no_decoder ? " " : "");
    });
  }
  if (clean_up_spaces) {
    makers.emplace_back([](DecodeStage& next) { return std::make_unique<CleanupStage>(&next); });
  }
  DecodeStage* next = &stages_->output;
  for (auto it = makers.rbegin(); it != makers.rend(); ++it) {
    stages_->owned.push_back((*it)(*next));
    next = stages_->owned.back().get();
  }
  stages_->head = next;
}

DecodePipeline::~DecodePipeline() = default;
DecodePipeline::DecodePipeline(DecodePipeline&&) noexcept = default;
DecodePipeline& DecodePipeline::operator=(DecodePipeline&&) noexcept = default;

void DecodePipeline::push_token(std::string_view token) { stages_->head->on_token(token); }

void DecodePipeline::finish() { stages_->head->finish(); }

std::string DecodePipeline::take_output() { return stages_->output.take(); }

}  // namespace kiln::tok
