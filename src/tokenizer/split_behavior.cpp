// NormalizedString::split of HF `tokenizers` (tokenizer/normalizer.rs), streaming where the
// behaviour allows it (Removed, Isolated) so a 10 MB text never materializes its span list.
#include "tokenizer/split_behavior.hpp"

#include "tokenizer/unicode.hpp"

namespace kiln::tok {

SplitBehavior parse_split_behavior(const Json& value, const std::string& origin) {
  const std::string name = value.is_string() ? value.get<std::string>() : "";
  if (name == "Removed" || name == "removed") return SplitBehavior::kRemoved;
  if (name == "Isolated" || name == "isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious" || name == "merged_with_previous") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext" || name == "merged_with_next") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous" || name == "contiguous") return SplitBehavior::kContiguous;
  fail(
      "{}: behavior must be one of Removed, Isolated, MergedWithPrevious, MergedWithNext, "
      "Contiguous; got {}",
      origin, value.dump());
}

void regex_spans(const Regex& regex, std::string_view text, FunctionRef<void(Span)> on_span) {
  std::size_t previous = 0;
  regex.for_each_match(text, [&](std::size_t start, std::size_t end) {
    if (previous != start) on_span({previous, start, false});
    on_span({start, end, true});
    previous = end;
  });
  if (previous != text.size()) on_span({previous, text.size(), false});
}

void char_spans(std::string_view text, FunctionRef<bool(char32_t)> predicate, FunctionRef<void(Span)> on_span) {
  std::size_t last_offset = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t begin = pos;
    if (predicate(next_code_point(text, pos))) {
      if (last_offset < begin) on_span({last_offset, begin, false});
      on_span({begin, pos, true});
      last_offset = pos;
    }
  }
  if (text.size() > last_offset) on_span({last_offset, text.size(), false});
}

namespace {

struct Folded {
  std::size_t begin, end;
};

// The merging behaviours, as the folds in normalizer.rs compute them.
std::vector<Folded> fold_spans(const std::vector<Span>& spans, SplitBehavior behavior) {
  std::vector<Folded> out;
  bool previous_match = false;
  if (behavior == SplitBehavior::kMergedWithNext) {
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      if (it->is_match && !previous_match && !out.empty()) {
        out.back().begin = it->begin;
      } else {
        out.push_back({it->begin, it->end});
      }
      previous_match = it->is_match;
    }
    return {out.rbegin(), out.rend()};
  }
  for (const Span& span : spans) {
    const bool merge = behavior == SplitBehavior::kContiguous
                           ? span.is_match == previous_match
                           : span.is_match && !previous_match;  // kMergedWithPrevious
    if (merge && !out.empty()) {
      out.back().end = span.end;
    } else {
      out.push_back({span.begin, span.end});
    }
    previous_match = span.is_match;
  }
  return out;
}

}  // namespace

void split_into_pieces(std::string_view text, bool at_start, SplitBehavior behavior, bool invert,
                       FunctionRef<void(FunctionRef<void(Span)>)> produce_spans, PieceSink sink) {
  auto emit = [&](std::size_t begin, std::size_t end) {
    if (end > begin) sink(text.substr(begin, end - begin), at_start && begin == 0);
  };
  if (behavior == SplitBehavior::kIsolated || behavior == SplitBehavior::kRemoved) {
    const bool keep_non_matches = behavior == SplitBehavior::kIsolated || !invert;
    const bool keep_matches = behavior == SplitBehavior::kIsolated || invert;
    produce_spans([&](Span span) {
      if (span.is_match ? keep_matches : keep_non_matches) emit(span.begin, span.end);
    });
    return;
  }
  std::vector<Span> spans;
  produce_spans([&](Span span) {
    span.is_match = span.is_match != invert;
    spans.push_back(span);
  });
  for (const Folded& piece : fold_spans(spans, behavior)) emit(piece.begin, piece.end);
}

}  // namespace kiln::tok
