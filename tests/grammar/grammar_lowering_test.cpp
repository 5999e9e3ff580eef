// lower() and matches(): UTF-8 classes, repetition bounds, and the grammars it refuses.
#include <gtest/gtest.h>

#include "grammar/gbnf_parser.hpp"
#include "grammar/grammar.hpp"
#include "grammar/stack_automaton.hpp"
#include "kiln/error.hpp"

namespace kiln::grammar {
namespace {

RuleSet one_rule(ExprPtr body) { return {{{"root", std::move(body)}}, "root"}; }

std::string error_of(const RuleSet& rules) {
  try {
    lower(rules);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GrammarLowering, NegatedClassMatchesEveryEncodableCodePointOutsideIt) {
  const Grammar g = lower(one_rule(char_class({{'a', 'a'}}, true)));
  for (const char* yes :
       {"b", "\x7f", "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_TRUE(matches(g, yes)) << yes;
  }
  for (const char* no : {"a", "", "\xc3", "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80", "bb", "\xe6\x97"}) {
    EXPECT_FALSE(matches(g, no)) << no;
  }
}

TEST(GrammarLowering, RangesAcrossEncodingLengths) {
  const Grammar g = lower(one_rule(plus(char_class({{0x70, 0x800}}))));  // 1-, 2- and 3-byte code points
  EXPECT_TRUE(matches(g, "p\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80"));
  EXPECT_FALSE(matches(g, "o"));
  EXPECT_FALSE(matches(g, "\xe0\xa0\x81"));
}

TEST(GrammarLowering, RepetitionBounds) {
  const Grammar g = lower(one_rule(sequence({repeat(literal("ab"), 2, 3), literal("!")})));
  EXPECT_FALSE(matches(g, "ab!"));
  EXPECT_TRUE(matches(g, "abab!"));
  EXPECT_TRUE(matches(g, "ababab!"));
  EXPECT_FALSE(matches(g, "abababab!"));
  const Grammar star_of_optional = lower(one_rule(star(alternation({literal("x"), literal("yz"), literal("")}))));
  EXPECT_TRUE(matches(star_of_optional, ""));
  EXPECT_TRUE(matches(star_of_optional, "xyzx"));
  EXPECT_FALSE(matches(star_of_optional, "xy"));
}

TEST(GrammarLowering, RecursionOnTheRightRuns) {
  // nested ::= "(" nested ")" | ""
  const RuleSet rules{
      {{"root", rule_ref("nested")},
       {"nested", alternation({sequence({literal("("), rule_ref("nested"), literal(")")}), literal("")})}},
      "root"};
  const Grammar g = lower(rules);
  EXPECT_TRUE(matches(g, "((()))"));
  EXPECT_FALSE(matches(g, "(()"));
}

TEST(GrammarLowering, RefusesLeftRecursionNamingTheCycle) {
  const RuleSet rules{
      {{"root", rule_ref("list")}, {"list", alternation({sequence({rule_ref("list"), literal(",x")}), literal("x")})}},
      "root"};
  const std::string error = error_of(rules);
  EXPECT_NE(error.find("rule 'list' is left-recursive"), std::string::npos) << error;
}

TEST(GrammarLowering, RefusesUndefinedRulesAndMissingRoot) {
  EXPECT_NE(error_of(one_rule(rule_ref("value"))).find("refers to undefined rule 'value'"), std::string::npos);
  EXPECT_NE(error_of({{{"start", literal("x")}}, "root"}).find("root rule 'root' is not defined"), std::string::npos);
  EXPECT_NE(error_of({{{"root", literal("x")}, {"root", literal("y")}}, "root"}).find("defined twice"),
            std::string::npos);
}

TEST(GrammarLowering, RefusesRepetitionsPastTheElementLimit) {
  const std::string error = error_of(one_rule(repeat(repeat(literal("abcdefgh"), 5000, 5000), 200, 200)));
  EXPECT_NE(error.find("more than"), std::string::npos) << error;
  // A copied alternation is a helper rule per copy: its rules and alternative ends count too
  // (before they did, this one lowered to 5M elements and 1M rules, about 300 MB).
  const std::string helpers = error_of({parse_gbnf("root ::= (\"a\" | \"b\"){1000}{1000}")});
  EXPECT_NE(helpers.find("more than"), std::string::npos) << helpers;
}

// (item+)+...: the stacks of a position double with each nesting.
Grammar nested_repetition(const std::string& prefix, int depth) {
  return lower(parse_gbnf("root ::= \"" + prefix + "\" item " + std::string(static_cast<std::size_t>(depth), '+') +
                          "\nitem ::= [a-z]\n"));
}

TEST(StackAutomatonLimit, AGrammarTooAmbiguousIsRefusedWithinItsFirstStates) {
  const Grammar six = nested_repetition("", 6);
  StackAutomaton fine(six);
  fine.explore(32);
  EXPECT_TRUE(fine.accepts_end(fine.advance(fine.start(), "abc")));
  const Grammar fourteen = nested_repetition("", 14);
  StackAutomaton hostile(fourteen);
  try {
    hostile.explore(32);
    ADD_FAILURE() << "14 nested repetitions explored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too ambiguous"), std::string::npos) << e.what();
  }
}

TEST(StackAutomatonLimit, AmbiguityPastTheExploredStatesRefusesThatContinuationOnly) {
  const std::string prefix(40, 'x');  // 40 states of literal before the ambiguity
  const Grammar grammar = nested_repetition(prefix, 14);
  StackAutomaton automaton(grammar);
  automaton.explore(32);
  const StackAutomaton::State after_prefix = automaton.advance(automaton.start(), prefix);
  ASSERT_NE(after_prefix, StackAutomaton::kDead);
  StackAutomaton::State state = after_prefix;
  int letters = 0;
  while (state != StackAutomaton::kDead && letters < 64) {
    state = automaton.advance(state, 'a');
    ++letters;
  }
  EXPECT_EQ(state, StackAutomaton::kDead) << "the stacks passed the limit after a few letters";
  EXPECT_EQ(automaton.advance(automaton.start(), "y"), StackAutomaton::kDead);  // and the rest still works
  EXPECT_NE(automaton.advance(automaton.start(), "xx"), StackAutomaton::kDead);
}

}  // namespace
}  // namespace kiln::grammar
