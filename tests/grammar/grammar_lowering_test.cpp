// lower() and matches(): UTF-8 classes, repetition bounds, and the grammars it refuses.
#include <gtest/gtest.h>

#include "grammar/grammar.hpp"
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
}

}  // namespace
}  // namespace kiln::grammar
