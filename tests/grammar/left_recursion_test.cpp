// nullable_rules and find_left_recursion against the definitions run by brute force (a fixpoint
// over every rule, a search per call) on random small grammars, and on grammars of a size where
// a pass or a search per rule would take minutes.
#include "grammar/left_recursion.hpp"

#include <gtest/gtest.h>

#include <random>

#include "grammar/gbnf_parser.hpp"

namespace kiln::grammar {
namespace {

constexpr Element kByte{Element::Kind::kBytes, 0};
Element call(int rule) { return {Element::Kind::kRule, rule}; }

std::vector<bool> nullable_by_fixpoint(const RuleAlternatives& rules) {
  std::vector<bool> nullable(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t rule = 0; rule < rules.size(); ++rule) {
      for (const auto& elements : rules[rule]) {
        bool empty = !nullable[rule];
        for (const Element& e : elements) empty = empty && e.kind == Element::Kind::kRule && nullable[e.index];
        if (empty) nullable[rule] = changed = true;
      }
    }
  }
  return nullable;
}

// Whether rule `to` reaches `target` by calls made before any byte.
bool reaches_by_search(const RuleAlternatives& rules, const std::vector<bool>& nullable, int from, int target) {
  std::vector<bool> seen(rules.size(), false);
  std::vector<int> pending{from};
  while (!pending.empty()) {
    const int rule = pending.back();
    pending.pop_back();
    if (rule == target) return true;
    if (seen[rule]) continue;
    seen[rule] = true;
    for (const auto& elements : rules[rule]) {
      for (const Element& e : elements) {
        if (e.kind != Element::Kind::kRule) break;
        pending.push_back(e.index);
        if (!nullable[e.index]) break;
      }
    }
  }
  return false;
}

bool left_recursive_by_search(const RuleAlternatives& rules) {
  const std::vector<bool> nullable = nullable_by_fixpoint(rules);
  for (std::size_t rule = 0; rule < rules.size(); ++rule) {
    for (const auto& elements : rules[rule]) {
      for (std::size_t i = 0; i < elements.size(); ++i) {
        const Element& e = elements[i];
        if (e.kind != Element::Kind::kRule) break;
        const bool tail = i + 1 == elements.size();
        if (!tail && reaches_by_search(rules, nullable, e.index, static_cast<int>(rule))) return true;
        if (!nullable[e.index]) break;
      }
    }
  }
  return false;
}

RuleAlternatives random_grammar(std::mt19937& rng) {
  const int n = std::uniform_int_distribution<int>(1, 7)(rng);
  RuleAlternatives rules(n);
  for (auto& alternatives : rules) {
    const int count = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int a = 0; a < count; ++a) {
      std::vector<Element> elements;
      const int length = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int i = 0; i < length; ++i) {
        const bool byte = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
        elements.push_back(byte ? kByte : call(std::uniform_int_distribution<int>(0, n - 1)(rng)));
      }
      alternatives.push_back(std::move(elements));
    }
  }
  return rules;
}

TEST(LeftRecursion, AgreesWithTheSearchOnRandomGrammars) {
  std::mt19937 rng(20261206);
  int recursive = 0;
  for (int i = 0; i < 20000; ++i) {
    const RuleAlternatives rules = random_grammar(rng);
    ASSERT_EQ(nullable_rules(rules), nullable_by_fixpoint(rules)) << "grammar " << i;
    const std::optional<LeftRecursion> found = find_left_recursion(rules);
    ASSERT_EQ(found.has_value(), left_recursive_by_search(rules)) << "grammar " << i;
    if (!found) continue;
    ++recursive;
    const std::vector<bool> nullable = nullable_by_fixpoint(rules);
    EXPECT_TRUE(reaches_by_search(rules, nullable, found->through, found->rule)) << "grammar " << i;
  }
  EXPECT_GT(recursive, 2000);  // both outcomes are well represented
  EXPECT_LT(recursive, 18000);
}

TEST(LeftRecursion, TailCallCyclesAreAllowed) {
  // A ::= B | "x"; B ::= A: a loop of tail calls keeps the stack as it is.
  EXPECT_FALSE(find_left_recursion({{{call(1)}, {kByte}}, {{call(0)}}}));
  // A ::= A "x": the call must return, so it is refused, naming A and the call.
  const auto found = find_left_recursion({{{call(0), kByte}}});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->rule, 0);
  EXPECT_EQ(found->through, 0);
}

// 200,000 rules, each nullable only once the next one is known to be (a pass per rule would be
// quadratic), and each calling the next before a byte (a search per call would be too).
TEST(LeftRecursion, ChainsOfHundredsOfThousandsOfRulesAreLinear) {
  constexpr int kRules = 200000;
  RuleAlternatives rules(kRules);
  for (int r = 0; r + 1 < kRules; ++r) rules[r] = {{call(r + 1), call(r + 1)}, {kByte}};
  rules[kRules - 1] = {{}};
  const std::vector<bool> nullable = nullable_rules(rules);
  EXPECT_TRUE(nullable[0]);
  EXPECT_FALSE(find_left_recursion(rules));
  rules[kRules - 1] = {{call(0), kByte}};  // closes the chain into a cycle
  EXPECT_TRUE(find_left_recursion(rules));
}

// A class copied 300,000 times lowers to one shared helper, and the checks over the 300,000
// optional copies that call it finish.
TEST(LeftRecursion, RepeatedClassesLowerOnce) {
  const Grammar g = lower(parse_gbnf("root ::= (\"x\" [^ax]{0,30}){10000}"));
  EXPECT_LT(g.starts.size(), 300100u);
  EXPECT_TRUE(matches(g, std::string(10000, 'x')));
  EXPECT_FALSE(matches(g, std::string(9999, 'x')));
  EXPECT_TRUE(matches(g, std::string(9999, 'x') + "x\xc3\xa9yz"));
  EXPECT_FALSE(matches(g, std::string(9999, 'x') + "xa"));
}

}  // namespace
}  // namespace kiln::grammar
