// Free text that hands over to a grammar where a trigger appears: xgrammar's and OpenVINO
// GenAI's triggered structural tags, with which a model writes prose and "<tool_call>" in it
// opens a tool call that must parse. As rules: an Aho-Corasick automaton over the triggers' code
// points, one rule per state that has not completed a trigger. Outside a tag any UTF-8 text is
// allowed and may end anywhere; when a trigger is complete its continuation must follow, and
// then free text again.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar {

struct Trigger {
  std::string text;      // non-empty UTF-8
  ExprPtr continuation;  // what must follow once `text` is written
};

// The free text's rules, named `prefix`free-<state>; the first is the one an output starts in.
// Throws kiln::Error for an empty, repeated or invalid-UTF-8 trigger.
std::vector<Rule> tag_dispatch_rules(const std::vector<Trigger>& triggers, const std::string& prefix);

// Which trigger the free text dispatches on when it reads `text`: the first to be complete (the
// longest of those complete at the same place); nullopt when none is, or when that one is not a
// prefix of `text` (a tag opened by `text` could never be written).
std::optional<std::size_t> opening_trigger(const std::vector<std::string>& triggers, std::string_view text);

}  // namespace kiln::grammar
