#include "grammar/stack_automaton.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "util/error.hpp"

namespace kiln::grammar {
namespace {

std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
  return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
}

[[noreturn]] void too_ambiguous() {
  fail(ErrorKind::kUnsupported,
       "grammar: over {} parse stacks (or {} steps to find them) at one position: the grammar is too "
       "ambiguous (a repetition of a repetition such as (a+)+, or alternatives that match the same text)",
       StackAutomaton::kMaxStacks, StackAutomaton::kMaxClosureSteps);
}

}  // namespace

std::size_t StackAutomaton::StacksHash::operator()(const std::vector<std::int32_t>& v) const {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::int32_t x : v) h = (h ^ std::uint32_t(x)) * 0x100000001b3ULL;
  return static_cast<std::size_t>(h);
}

StackAutomaton::StackAutomaton(const Grammar& grammar) : grammar_(grammar) {
  std::vector<std::int32_t> stacks;
  bool accepts = false;
  for (const std::int32_t start : grammar_.starts[grammar_.root]) close(start, kBottom, stacks, accepts);
  closing_.clear();
  if (stacks.size() > kMaxStacks || closure_steps_ > kMaxClosureSteps) too_ambiguous();
  start_ = intern_state(std::move(stacks), accepts);
}

void StackAutomaton::explore(std::size_t max_states) {
  for (State state = start_;
       state != kDead && state < static_cast<State>(states_.size()) && states_.size() < max_states; ++state) {
    for (int byte = 0; byte < 256; ++byte) {
      advance(state, static_cast<std::uint8_t>(byte));
      if (pruned_) too_ambiguous();
    }
  }
}

StackAutomaton::State StackAutomaton::advance(State state, std::string_view bytes) {
  for (const char c : bytes) {
    state = advance(state, static_cast<std::uint8_t>(c));
    if (state == kDead) break;
  }
  return state;
}

std::int32_t StackAutomaton::intern_node(std::int32_t element, std::int32_t parent) {
  const auto [it, added] = node_ids_.emplace(pair_key(element, parent), static_cast<std::int32_t>(nodes_.size()));
  if (added) nodes_.push_back({element, parent});
  return it->second;
}

std::int32_t StackAutomaton::continuation(std::int32_t element, std::int32_t parent) {
  return grammar_.elements[element].kind == Element::Kind::kEnd ? parent : intern_node(element, parent);
}

void StackAutomaton::close(std::int32_t element, std::int32_t parent, std::vector<std::int32_t>& out, bool& accepts) {
  if (out.size() > kMaxStacks || ++closure_steps_ > kMaxClosureSteps) return;  // the caller drops it
  // An empty loop body can bring the same frame back without consuming a byte: once is enough.
  if (!closing_.insert(pair_key(element, parent)).second) return;
  const Element& e = grammar_.elements[element];
  switch (e.kind) {
    case Element::Kind::kBytes: out.push_back(intern_node(element, parent)); return;
    case Element::Kind::kRule: {
      const std::int32_t resume = continuation(element + 1, parent);
      for (const std::int32_t start : grammar_.starts[e.index]) close(start, resume, out, accepts);
      return;
    }
    case Element::Kind::kEnd:
      if (parent == kBottom) {
        accepts = true;
      } else {
        const Node frame = nodes_[parent];
        close(frame.element, frame.parent, out, accepts);
      }
      return;
  }
}

StackAutomaton::State StackAutomaton::intern_state(std::vector<std::int32_t> stacks, bool accepts) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.empty() && !accepts) return kDead;
  // The end marker is part of the key: the same stacks with and without it are different states.
  if (accepts) stacks.push_back(kBottom);
  const auto [it, added] = state_ids_.emplace(stacks, static_cast<State>(states_.size()));
  if (added) {
    if (accepts) stacks.pop_back();
    StateInfo info{std::move(stacks), accepts, {}};
    info.next.fill(kUnknown);
    states_.push_back(std::move(info));
  }
  return it->second;
}

StackAutomaton::State StackAutomaton::compute_next(State state, std::uint8_t byte) {
  std::vector<std::int32_t> stacks;
  bool accepts = false;
  closing_.clear();
  closure_steps_ = 0;
  for (const std::int32_t id : states_[state].stacks) {
    const Node node = nodes_[id];
    if (contains(grammar_.byte_sets[grammar_.elements[node.element].index], byte)) {
      close(node.element + 1, node.parent, stacks, accepts);
    }
  }
  closing_.clear();
  if (stacks.size() > kMaxStacks || closure_steps_ > kMaxClosureSteps) {
    if (!pruned_) spdlog::warn("structured output: the grammar is too ambiguous here; a continuation is refused");
    pruned_ = true;
    states_[state].next[byte] = kDead;
    return kDead;
  }
  const State next = intern_state(std::move(stacks), accepts);
  states_[state].next[byte] = next;
  return next;
}

}  // namespace kiln::grammar
