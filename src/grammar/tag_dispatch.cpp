#include "grammar/tag_dispatch.hpp"

#include <deque>
#include <map>
#include <set>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace kiln::grammar {
namespace {

// Aho-Corasick over code points: a state is the longest suffix of the text read that is a prefix
// of a trigger.
class TriggerAutomaton {
 public:
  explicit TriggerAutomaton(const std::vector<std::string>& triggers) {
    nodes_.emplace_back();
    for (std::size_t i = 0; i < triggers.size(); ++i) insert(triggers, i);
    link_failures();
  }

  int step(int state, char32_t c) const {
    while (true) {
      const auto it = nodes_[state].next.find(c);
      if (it != nodes_[state].next.end()) return it->second;
      if (state == 0) return 0;
      state = nodes_[state].fail;
    }
  }
  // The trigger complete in `state` (the longest, when several end there), or -1.
  int completed(int state) const { return nodes_[state].completed; }
  int length(int trigger) const { return lengths_[trigger]; }  // in code points
  int size() const { return static_cast<int>(nodes_.size()); }
  const std::set<char32_t>& alphabet() const { return alphabet_; }

 private:
  struct Node {
    std::map<char32_t, int> next;
    int fail = 0;
    int completed = -1;
    int depth = 0;
  };

  void insert(const std::vector<std::string>& triggers, std::size_t index) {
    const std::string& text = triggers[index];
    if (text.empty()) fail("triggers[{}] is empty", index);
    if (!is_valid_utf8(text)) fail("triggers[{}] is not valid UTF-8", index);
    int state = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      const char32_t c = next_code_point(text, pos);
      alphabet_.insert(c);
      const auto [it, added] = nodes_[state].next.try_emplace(c, size());
      const int child = it->second;  // read before push_back moves the map
      if (added) {
        const int depth = nodes_[state].depth + 1;
        nodes_.emplace_back().depth = depth;
      }
      state = child;
    }
    if (nodes_[state].completed >= 0) fail("triggers[{}] repeats triggers[{}]", index, nodes_[state].completed);
    nodes_[state].completed = static_cast<int>(index);
    lengths_.push_back(nodes_[state].depth);
  }

  // Breadth first, so a node's failure state (shallower) is linked before the node.
  void link_failures() {
    std::deque<int> queue;
    for (const auto& [c, child] : nodes_[0].next) queue.push_back(child);
    while (!queue.empty()) {
      const int node = queue.front();
      queue.pop_front();
      for (const auto& [c, child] : nodes_[node].next) {
        Node& n = nodes_[child];
        n.fail = step(nodes_[node].fail, c);
        if (n.completed < 0) n.completed = nodes_[n.fail].completed;
        queue.push_back(child);
      }
    }
  }

  std::vector<Node> nodes_;
  std::vector<int> lengths_;
  std::set<char32_t> alphabet_;
};

std::vector<CodePointRange> ranges_of(const std::vector<char32_t>& sorted) {
  std::vector<CodePointRange> ranges;
  for (const char32_t c : sorted) {
    if (!ranges.empty() && ranges.back().last + 1 == c) {
      ranges.back().last = c;
    } else {
      ranges.push_back({c, c});
    }
  }
  return ranges;
}

std::vector<std::string> texts_of(const std::vector<Trigger>& triggers) {
  std::vector<std::string> texts;
  for (const Trigger& t : triggers) texts.push_back(t.text);
  return texts;
}

}  // namespace

std::vector<Rule> tag_dispatch_rules(const std::vector<Trigger>& triggers, const std::string& prefix) {
  const TriggerAutomaton automaton(texts_of(triggers));
  const auto name = [&](int state) { return prefix + "free-" + std::to_string(state); };
  // Reading into `state`: dispatch when it completes a trigger, else go on as free text there.
  const auto then = [&](int state) {
    const int trigger = automaton.completed(state);
    if (trigger < 0) return rule_ref(name(state));
    return sequence({triggers[trigger].continuation, rule_ref(name(0))});
  };
  std::vector<Rule> rules;
  for (int state = 0; state < automaton.size(); ++state) {
    if (automaton.completed(state) >= 0) continue;
    std::map<int, std::vector<char32_t>> by_target;  // code points that lead past the start state
    std::vector<char32_t> leading;
    for (const char32_t c : automaton.alphabet()) {
      const int target = automaton.step(state, c);
      if (target == 0) continue;
      by_target[target].push_back(c);
      leading.push_back(c);
    }
    std::vector<ExprPtr> alternatives{literal("")};
    for (const auto& [target, code_points] : by_target) {
      alternatives.push_back(sequence({char_class(ranges_of(code_points)), then(target)}));
    }
    alternatives.push_back(sequence({char_class(ranges_of(leading), true), rule_ref(name(0))}));
    rules.push_back({name(state), alternation(std::move(alternatives))});
  }
  return rules;
}

std::optional<std::size_t> opening_trigger(const std::vector<std::string>& triggers, std::string_view text) {
  const TriggerAutomaton automaton(triggers);
  if (!is_valid_utf8(text)) return std::nullopt;
  int state = 0;
  int read = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    state = automaton.step(state, next_code_point(text, pos));
    ++read;
    const int trigger = automaton.completed(state);
    if (trigger < 0) continue;
    if (automaton.length(trigger) != read) return std::nullopt;
    return static_cast<std::size_t>(trigger);
  }
  return std::nullopt;
}

}  // namespace kiln::grammar
