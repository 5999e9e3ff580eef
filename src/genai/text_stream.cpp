#include "genai/text_stream.hpp"

#include <algorithm>

namespace kiln::genai {
namespace {

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

TextStream::TextStream(const Tokenizer& tokenizer, const std::set<std::string>& stop_strings, bool include_stop_string,
                       bool skip_special_tokens)
    : detokenizer_(tokenizer, DecodeOptions{.skip_special_tokens = skip_special_tokens,
                                            .clean_up_tokenization_spaces = std::nullopt}),
      stop_strings_(stop_strings.begin(), stop_strings.end()),
      include_stop_string_(include_stop_string) {}

std::string TextStream::release(std::size_t count) {
  std::string out = pending_.substr(0, count);
  pending_.erase(0, count);
  emitted_ += out;
  return out;
}

std::size_t TextStream::ambiguous_tail_start() const {
  for (std::size_t start = 0; start < pending_.size(); ++start) {
    if (is_utf8_continuation(pending_[start])) continue;  // stop strings start on a character
    const std::string_view tail = std::string_view(pending_).substr(start);
    for (const std::string& stop : stop_strings_) {
      if (stop.size() > tail.size() && stop.compare(0, tail.size(), tail) == 0) return start;
    }
  }
  return pending_.size();
}

TextStream::Delta TextStream::push(std::int32_t id) {
  if (stopped_) return {};
  pending_ += detokenizer_.push(id);
  return scan();
}

TextStream::Delta TextStream::scan() {
  // The earliest stop string to complete wins; it can only start inside pending_, since the
  // emitted text never ends with the beginning of one.
  std::size_t match = std::string::npos;
  std::size_t match_length = 0;
  for (const std::string& stop : stop_strings_) {
    const std::size_t at = pending_.find(stop);
    if (at < match || (at == match && stop.size() > match_length)) {
      match = at;
      match_length = stop.size();
    }
  }
  if (match != std::string::npos) {
    stopped_ = true;
    Delta delta{release(match + (include_stop_string_ ? match_length : 0)), true};
    pending_.clear();
    return delta;
  }
  return {release(ambiguous_tail_start()), false};
}

std::string TextStream::finish() {
  if (stopped_) return {};
  pending_ += detokenizer_.flush();
  Delta last = scan();
  if (!last.stopped) last.text += release(pending_.size());
  return last.text;
}

}  // namespace kiln::genai
