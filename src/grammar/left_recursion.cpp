#include "grammar/left_recursion.hpp"

#include <algorithm>
#include <cstddef>

namespace kiln::grammar {

std::vector<bool> nullable_rules(const RuleAlternatives& rules) {
  // Each alternative counts its elements not yet known to be nullable; a rule becomes nullable
  // when one of its alternatives reaches 0, and that is propagated to the alternatives calling it.
  struct Alternative {
    std::int32_t rule;
    std::size_t unknown;
  };
  std::vector<Alternative> alternatives;
  std::vector<std::vector<std::size_t>> callers(rules.size());  // rule → alternatives calling it
  std::vector<bool> nullable(rules.size(), false);
  std::vector<std::int32_t> found;
  for (std::size_t rule = 0; rule < rules.size(); ++rule) {
    for (const std::vector<Element>& elements : rules[rule]) {
      const bool has_bytes = std::any_of(elements.begin(), elements.end(),
                                         [](const Element& e) { return e.kind != Element::Kind::kRule; });
      if (has_bytes) continue;
      const std::size_t id = alternatives.size();
      alternatives.push_back({static_cast<std::int32_t>(rule), elements.size()});
      for (const Element& e : elements) callers[e.index].push_back(id);
      if (elements.empty() && !nullable[rule]) {
        nullable[rule] = true;
        found.push_back(static_cast<std::int32_t>(rule));
      }
    }
  }
  while (!found.empty()) {
    const std::int32_t rule = found.back();
    found.pop_back();
    for (const std::size_t id : callers[rule]) {
      Alternative& a = alternatives[id];
      if (--a.unknown != 0 || nullable[a.rule]) continue;
      nullable[a.rule] = true;
      found.push_back(a.rule);
    }
  }
  return nullable;
}

namespace {

struct Edge {
  std::int32_t to;
  bool tail;  // the call is the last element of its alternative
};

// Each rule's calls made before any byte is matched.
std::vector<std::vector<Edge>> left_calls(const RuleAlternatives& rules) {
  const std::vector<bool> nullable = nullable_rules(rules);
  std::vector<std::vector<Edge>> edges(rules.size());
  for (std::size_t rule = 0; rule < rules.size(); ++rule) {
    for (const std::vector<Element>& elements : rules[rule]) {
      for (std::size_t i = 0; i < elements.size(); ++i) {
        const Element& e = elements[i];
        if (e.kind != Element::Kind::kRule) break;
        edges[rule].push_back({e.index, i + 1 == elements.size()});
        if (!nullable[e.index]) break;
      }
    }
  }
  return edges;
}

// Strongly connected components (Tarjan's, with an explicit stack): rule → component. An edge
// lies on a cycle exactly when both its ends are in one component.
std::vector<std::int32_t> components(const std::vector<std::vector<Edge>>& edges) {
  constexpr std::int32_t kUnvisited = -1;
  const std::size_t n = edges.size();
  std::vector<std::int32_t> index(n, kUnvisited), low(n, 0), component(n, kUnvisited);
  std::vector<std::int32_t> stack;
  struct Frame {
    std::int32_t rule;
    std::size_t next_edge;
  };
  std::vector<Frame> frames;
  std::int32_t next_index = 0, next_component = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    frames.push_back({static_cast<std::int32_t>(root), 0});
    index[root] = low[root] = next_index++;
    stack.push_back(static_cast<std::int32_t>(root));
    while (!frames.empty()) {
      Frame& f = frames.back();
      const std::int32_t v = f.rule;
      if (f.next_edge < edges[v].size()) {
        const std::int32_t w = edges[v][f.next_edge++].to;
        if (index[w] == kUnvisited) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          frames.push_back({w, 0});
        } else if (component[w] == kUnvisited) {
          low[v] = std::min(low[v], index[w]);  // w is on the stack
        }
        continue;
      }
      if (low[v] == index[v]) {
        std::int32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          component[w] = next_component;
        } while (w != v);
        ++next_component;
      }
      frames.pop_back();
      if (!frames.empty()) low[frames.back().rule] = std::min(low[frames.back().rule], low[v]);
    }
  }
  return component;
}

}  // namespace

std::optional<LeftRecursion> find_left_recursion(const RuleAlternatives& rules) {
  const std::vector<std::vector<Edge>> edges = left_calls(rules);
  const std::vector<std::int32_t> component = components(edges);
  for (std::size_t rule = 0; rule < edges.size(); ++rule) {
    for (const Edge& edge : edges[rule]) {
      if (!edge.tail && component[edge.to] == component[rule]) {
        return LeftRecursion{static_cast<std::int32_t>(rule), edge.to};
      }
    }
  }
  return std::nullopt;
}

}  // namespace kiln::grammar
