// How a pre-tokenizer turns the matches of a pattern into pieces: HF's SplitDelimiterBehavior
// (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous) applied to the list of
// (range, is_match) spans that covers a text. Empty pieces are never emitted.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/function_ref.hpp"
#include "tokenizer/regex.hpp"
#include "util/json.hpp"

namespace kiln::tok {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

SplitBehavior parse_split_behavior(const Json& value, const std::string& origin);

// A piece handed down the pre-tokenizer chain. at_start: the piece begins at the first byte of
// the input text (what HF checks with offsets_original().0 == 0, e.g. Metaspace "first").
using PieceSink = FunctionRef<void(std::string_view piece, bool at_start)>;

// One span of a text: [begin, end), and whether it was matched by the pattern.
struct Span {
  std::size_t begin;
  std::size_t end;
  bool is_match;
};

// The spans of `text` cut by the matches of `regex` (HF Pattern::find_matches for a regex).
void regex_spans(const Regex& regex, std::string_view text, FunctionRef<void(Span)> on_span);

// The spans of `text` cut by every code point satisfying `predicate` (one span per such char).
void char_spans(std::string_view text, FunctionRef<bool(char32_t)> predicate, FunctionRef<void(Span)> on_span);

// Folds spans into pieces by `behavior` (with `invert` flipping is_match first) and emits them.
// `produce_spans` is called once with a callback receiving the spans in order.
void split_into_pieces(std::string_view text, bool at_start, SplitBehavior behavior, bool invert,
                       FunctionRef<void(FunctionRef<void(Span)>)> produce_spans, PieceSink sink);

}  // namespace kiln::tok
