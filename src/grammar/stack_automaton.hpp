// The grammar's pushdown automaton, run as a lazily built deterministic automaton.
//
// A parse position is a stack of frames; each frame is the element its rule matches next. The
// stacks are interned as (element, parent) nodes, so equal stacks are equal ids, and a frame
// whose rule would end right after a call is dropped (tail calls keep loops at constant depth).
// A state is the sorted set of stacks that the bytes so far leave possible, normalised so that
// every stack's top is a byte element; states are interned too, and each state's transition
// on a byte is computed once and remembered. After warm-up, advancing a state is one array load:
// that is what makes walking a 128k-token trie per step affordable.
//
// An ambiguous grammar (a repetition of a repetition such as (a+)+) can make the stacks of one
// position exponential in its size. A transition is therefore held to kMaxStacks stacks and
// kMaxClosureSteps steps: explore() refuses a grammar that passes them within its first states,
// and a transition that passes them later is treated as rejected (the output stays a prefix of
// a sentence; a warning says so).
//
// Not thread-safe: one owner (a CompiledGrammar behind its lock).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/grammar.hpp"

namespace kiln::grammar {

class StackAutomaton {
 public:
  using State = std::int32_t;
  static constexpr State kDead = -1;  // no stack survives: the bytes are not a prefix of a sentence

  static constexpr std::size_t kMaxStacks = 1 << 12;
  static constexpr std::size_t kMaxClosureSteps = 1 << 16;  // frames visited for one transition

  // `grammar` must outlive the automaton. Throws kiln::Error when the start is too ambiguous.
  explicit StackAutomaton(const Grammar& grammar);

  // Computes every transition of the states reachable from the start, breadth first, until
  // `max_states` states exist; throws kiln::Error naming the limits when one passes them.
  void explore(std::size_t max_states);

  State start() const { return start_; }
  State advance(State state, std::uint8_t byte) {
    if (state == kDead) return kDead;
    const State next = states_[state].next[byte];
    return next != kUnknown ? next : compute_next(state, byte);
  }
  State advance(State state, std::string_view bytes);
  // Whether the bytes that led to `state` are a whole sentence.
  bool accepts_end(State state) const { return state != kDead && states_[state].accepts_end; }
  // Whether any further byte could be accepted.
  bool can_continue(State state) const { return state != kDead && !states_[state].stacks.empty(); }

  std::size_t num_states() const { return states_.size(); }

 private:
  static constexpr State kUnknown = -2;
  static constexpr std::int32_t kBottom = -1;  // the parent of a root frame

  struct Node {
    std::int32_t element;
    std::int32_t parent;
  };
  struct StateInfo {
    std::vector<std::int32_t> stacks;  // node ids, sorted, each with a byte element on top
    bool accepts_end = false;
    std::array<State, 256> next;
  };
  struct StacksHash {
    std::size_t operator()(const std::vector<std::int32_t>& v) const;
  };

  std::int32_t intern_node(std::int32_t element, std::int32_t parent);
  // The frame that resumes at `element` under `parent`, or `parent` itself when the rule ends
  // there (a tail call).
  std::int32_t continuation(std::int32_t element, std::int32_t parent);
  // Adds to `out` every normalised stack reachable from matching `element` under `parent`
  // without consuming a byte; `accepts` is set when the whole stack can end.
  void close(std::int32_t element, std::int32_t parent, std::vector<std::int32_t>& out, bool& accepts);
  State intern_state(std::vector<std::int32_t> stacks, bool accepts);
  State compute_next(State state, std::uint8_t byte);

  const Grammar& grammar_;
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::int32_t> node_ids_;
  std::vector<StateInfo> states_;
  std::unordered_map<std::vector<std::int32_t>, State, StacksHash> state_ids_;
  State start_ = kDead;
  std::unordered_set<std::uint64_t> closing_;  // scratch: (element, parent) pairs closed in this call
  std::size_t closure_steps_ = 0;              // scratch: close() calls in this transition
  bool pruned_ = false;                        // a transition passed the limits and was dropped
};

}  // namespace kiln::grammar
