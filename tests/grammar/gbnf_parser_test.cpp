// parse_gbnf: oracle is the canonical print of the parsed rules (rule_set_printer), written out
// by hand from the GBNF meaning in llama.cpp's grammars/README.md; every error names its place.
#include "grammar/gbnf_parser.hpp"

#include <gtest/gtest.h>

#include "rule_set_printer.hpp"
#include "support/test_support.hpp"

namespace kiln::grammar {
namespace {

using testing::print_expr;
using testing::print_rules;

std::string parsed(std::string_view text) { return print_rules(parse_gbnf(text)); }

TEST(GbnfParser, RulesInOrderWithRootNamed) {
  const RuleSet rules = parse_gbnf("root ::= greeting \" world\"\ngreeting ::= \"hello\" | \"hi\"\n");
  EXPECT_EQ(rules.root, "root");
  ASSERT_EQ(rules.rules.size(), 2u);
  EXPECT_EQ(rules.rules[0].name, "root");
  EXPECT_EQ(rules.rules[1].name, "greeting");
  EXPECT_EQ(print_rules(rules), "root ::= greeting \" world\"\ngreeting ::= \"hello\" | \"hi\"\n");
}

TEST(GbnfParser, OneItemIsTheItemItself) {
  const RuleSet rules = parse_gbnf("root ::= \"x\"");
  EXPECT_EQ(rules.rules[0].body->kind, Expr::Kind::kLiteral);
  EXPECT_EQ(rules.rules[0].body->text, "x");
}

TEST(GbnfParser, StringEscapesDecodeToUtf8) {
  const RuleSet rules = parse_gbnf(R"(root ::= "a\n\t\r\\\"\[\]\x41\u00e9\U0001F600")");
  EXPECT_EQ(rules.rules[0].body->text, "a\n\t\r\\\"[]A\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(GbnfParser, RawUtf8InStringsAndClasses) {
  const RuleSet rules = parse_gbnf("root ::= \"caf\xC3\xA9\" [\xC3\xA0-\xC3\xBF]");
  EXPECT_EQ(print_rules(rules), "root ::= \"caf\xC3\xA9\" [\\xE0-\\xFF]\n");
}

TEST(GbnfParser, EmptyStringMatchesEmpty) { EXPECT_EQ(parsed(R"(root ::= "")"), "root ::= \"\"\n"); }

TEST(GbnfParser, CharacterClasses) {
  EXPECT_EQ(parsed(R"(root ::= [a-zA-Z_] [^"\\] [-a] [a-] [\x00-\x1F] [\]\[] [\u0100-\U0010FFFF])"),
            "root ::= [a-zA-Z_] [^\"\\\\] [\\-a] [a\\-] [\\x00-\\x1F] [\\]\\[] [\\u0100-\\U0010FFFF]\n");
}

TEST(GbnfParser, DotIsAnyCodePoint) {
  const ExprPtr dot = parse_gbnf("root ::= .").rules[0].body;
  EXPECT_EQ(dot->kind, Expr::Kind::kCharClass);
  EXPECT_TRUE(dot->negated);
  EXPECT_TRUE(dot->ranges.empty());
}

TEST(GbnfParser, PostfixOperators) {
  EXPECT_EQ(parsed(R"(root ::= "a"* "b"+ "c"? "d"{3} "e"{2,} "f"{2,5} "g"{,4} "h"{0,1} ("i" "j")*)"),
            "root ::= \"a\"* \"b\"+ \"c\"? \"d\"{3} \"e\"{2,} \"f\"{2,5} \"g\"{0,4} \"h\"? (\"i\" \"j\")*\n");
}

TEST(GbnfParser, SpacesInsideBracesAndBeforePostfix) {
  EXPECT_EQ(parsed("root ::= \"a\" { 1 , 3 } [0-9] *"), "root ::= \"a\"{1,3} [0-9]*\n");
}

TEST(GbnfParser, PostfixOperatorsStack) { EXPECT_EQ(parsed(R"(root ::= "a"*?)"), "root ::= (\"a\"*)?\n"); }

TEST(GbnfParser, GroupsAndAlternation) {
  EXPECT_EQ(parsed(R"(root ::= "a" ("b" | "c" "d") | ("e" | ("f" | "g")) | )"),
            "root ::= \"a\" (\"b\" | \"c\" \"d\") | (\"e\" | (\"f\" | \"g\")) | \"\"\n");
}

TEST(GbnfParser, RulesSpanLinesUntilTheNextDefinition) {
  const char* text =
      "# a comment line\n"
      "root ::= item\n"
      "    (\",\" item)*   # trailing comment\n"
      "  | \"none\"\n"
      "\n"
      "item ::=\n"
      "  [a-z]+\n"
      "  \"!\"\n";
  EXPECT_EQ(parsed(text), "root ::= item (\",\" item)* | \"none\"\nitem ::= [a-z]+ \"!\"\n");
}

TEST(GbnfParser, GroupsSpanLines) {
  EXPECT_EQ(parsed("root ::= (\n  \"a\" |\n  \"b\"\n)\n"), "root ::= \"a\" | \"b\"\n");
}

TEST(GbnfParser, ForwardAndRecursiveReferences) {
  EXPECT_EQ(parsed("root ::= list\nlist ::= \"[\" (value (\",\" value)*)? \"]\"\nvalue ::= [0-9]+ | list\n"),
            "root ::= list\nlist ::= \"[\" (value (\",\" value)*)? \"]\"\nvalue ::= [0-9]+ | list\n");
}

TEST(GbnfParser, CrlfLineEndings) { EXPECT_EQ(parsed("root ::= a\r\na ::= \"x\"\r\n"), "root ::= a\na ::= \"x\"\n"); }

// llama.cpp's grammars/json.gbnf, as users copy it.
TEST(GbnfParser, LlamaCppJsonGrammar) {
  const char* text = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)";
  const RuleSet rules = parse_gbnf(text);
  ASSERT_EQ(rules.rules.size(), 7u);
  EXPECT_EQ(print_rules(rules),
            "root ::= object\n"
            "value ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
            "object ::= \"{\" ws (string \":\" ws value (\",\" ws string \":\" ws value)*)? \"}\" ws\n"
            "array ::= \"[\" ws (value (\",\" ws value)*)? \"]\" ws\n"
            "string ::= \"\\\"\" ([^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}))* "
            "\"\\\"\" ws\n"
            "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [\\-+]? [0-9] [1-9]{0,15})? ws\n"
            "ws ::= \"\" | \" \" | \"\\n\" [ \\t]{0,20}\n");
}

// The printer's output is GBNF: parsing it again gives the same rules.
TEST(GbnfParser, PrintedRulesParseToThemselves) {
  const char* texts[] = {
      R"(root ::= "a" ("b" | "c")* [^x-z\]] . item{2,3} | "" item ::= "q" ("r" ("s" "t"))+)",
      "root ::= [\\x00-\\x1F\\u00e9] \"\\x7f\" (\"a\" | (\"b\" | \"c\"))",
  };
  for (const char* text : texts) {
    const std::string once = parsed(text);
    EXPECT_EQ(parsed(once), once) << text;
  }
}

TEST(GbnfParser, RepeatBoundAtTheLimitIsAccepted) {
  EXPECT_EQ(parsed("root ::= \"a\"{10000}"), "root ::= \"a\"{10000}\n");
  EXPECT_EQ(kGbnfMaxRepeat, 10000);
}

// Every error names line:column (1-based, code points) and what was expected there.
TEST(GbnfParserErrors, NameThePlace) {
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"\n  \"b\" )"), "GBNF grammar at 2:7", "')' closes no group");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= (\"a\" | \"b\""), "at 1:20", "expected ')'", "opened at 1:10");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= (\"a\"\nx ::= \"b\""), "at 2:1", "expected ')'", "next rule 'x'");
  EXPECT_KILN_ERROR(parse_gbnf("root = \"a\""), "at 1:6", "expected '::='", "'root'", "found '='");
  EXPECT_KILN_ERROR(parse_gbnf("::= \"a\""), "at 1:1", "expected a rule name");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"abc"), "at 1:10", "not closed by '\"'");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= [abc"), "at 1:10", "not closed by ']'");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\" ;"), "at 1:14", "found ';'");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= * \"a\""), "at 1:10", "'*' must follow an item");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= <think>"), "at 1:10", "token references");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= ( \"a\" |"), "at 1:17", "expected ')'", "the end of the grammar");
}

TEST(GbnfParserErrors, ColumnsCountCodePoints) {
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"\xC3\xA9\xC3\xA9\" )"), "at 1:15");
}

TEST(GbnfParserErrors, Escapes) {
  EXPECT_KILN_ERROR(parse_gbnf(R"(root ::= "\q")"), "at 1:11", "unknown escape '\\q'");
  EXPECT_KILN_ERROR(parse_gbnf(R"(root ::= "\x4")"), "at 1:14", "expected 2 hex digits", "escape at 1:11");
  EXPECT_KILN_ERROR(parse_gbnf(R"(root ::= "\u12G4")"), "at 1:15", "expected 4 hex digits");
  EXPECT_KILN_ERROR(parse_gbnf(R"(root ::= "\U00110000")"), "at 1:11", "beyond the last code point");
  EXPECT_KILN_ERROR(parse_gbnf(R"(root ::= "\uD800")"), "at 1:11", "surrogate");
}

TEST(GbnfParserErrors, Classes) {
  EXPECT_KILN_ERROR(parse_gbnf("root ::= []"), "at 1:10", "empty character class");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= [^]"), "at 1:10", "empty character class");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= [a-c z-a]"), "at 1:15", "range 'z'-'a' ends before it starts");
}

TEST(GbnfParserErrors, Repetitions) {
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{5,2}"), "at 1:13", "{5,2}", "minimum above its maximum");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{10001}"), "at 1:14", "maximum 10000");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{0,99999999999999999999}"), "at 1:16", "maximum 10000");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{}"), "at 1:14", "expected a repetition count");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{,}"), "at 1:13", "names no bound");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{2"), "at 1:15", "expected '}'", "opened at 1:13");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"a\"{x}"), "at 1:14", "expected a repetition count");
}

TEST(GbnfParserErrors, Rules) {
  EXPECT_KILN_ERROR(parse_gbnf("root ::= a b\na ::= \"x\""), "at 1:12", "rule 'b' is referenced but never defined");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"x\"\nitem ::= \"a\"\nitem ::= \"b\""), "at 3:1",
                    "rule 'item' is defined twice", "first at 2:1");
  EXPECT_KILN_ERROR(parse_gbnf("item ::= \"x\""), "no rule 'root'");
  EXPECT_KILN_ERROR(parse_gbnf(""), "no rule 'root'");
  EXPECT_KILN_ERROR(parse_gbnf("# only a comment\n"), "no rule 'root'");
}

TEST(GbnfParserErrors, InvalidUtf8) {
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"ok\"\nx ::= \"\xC3\x28\""), "at 2:8", "invalid UTF-8", "0xC3");
  EXPECT_KILN_ERROR(parse_gbnf("root ::= \"\xFF\""), "at 1:11", "invalid UTF-8");
}

TEST(GbnfParserErrors, DeepNestingIsRefusedNotACrash) {
  const std::string text = "root ::= " + std::string(100000, '(');
  EXPECT_KILN_ERROR(parse_gbnf(text), "nest deeper than");
}

}  // namespace
}  // namespace kiln::grammar
