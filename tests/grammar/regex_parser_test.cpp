// regex_to_expr: oracle is the canonical print of the expression (rule_set_printer), written by
// hand from Python's `re` documentation (with re.ASCII); every refusal names its position (code
// points, as Python counts) and the construct. Whether the grammar accepts the same strings as
// Python is regex_golden_test's job.
#include "grammar/regex_parser.hpp"

#include <gtest/gtest.h>

#include "rule_set_printer.hpp"
#include "support/test_support.hpp"

namespace kiln::grammar {
namespace {

std::string parsed(std::string_view pattern) { return testing::print_expr(regex_to_expr(pattern)); }

TEST(RegexParser, RunsOfCharactersAreOneLiteral) {
  const ExprPtr expr = regex_to_expr("hello");
  EXPECT_EQ(expr->kind, Expr::Kind::kLiteral);
  EXPECT_EQ(expr->text, "hello");
  EXPECT_EQ(parsed(""), "\"\"");
}

TEST(RegexParser, QuantifierTakesOnlyTheLastCharacter) {
  EXPECT_EQ(parsed("ab*c"), "\"a\" \"b\"* \"c\"");
  EXPECT_EQ(parsed("caf\xC3\xA9+"), "\"caf\" \"\xC3\xA9\"+");
}

TEST(RegexParser, Quantifiers) {
  EXPECT_EQ(parsed("a*b+c?d{3}e{2,}f{2,5}g{,4}h{,}"),
            "\"a\"* \"b\"+ \"c\"? \"d\"{3} \"e\"{2,} \"f\"{2,5} \"g\"{0,4} \"h\"*");
}

TEST(RegexParser, LazyQuantifiersDescribeTheSameLanguage) {
  EXPECT_EQ(parsed("a*?b+?c??d{3}?e{2,}?f{2,5}?"), parsed("a*b+c?d{3}e{2,}f{2,5}"));
}

TEST(RegexParser, BracesThatAreNotQuantifiersAreLiterals) {
  EXPECT_EQ(parsed("{a}x{}y{,z}{1,2"), "\"{a}x{}y{,z}{1,2\"");
  EXPECT_EQ(parsed("]}"), "\"]}\"");
}

TEST(RegexParser, AlternationAndGroups) {
  EXPECT_EQ(parsed("a|bc|"), "\"a\" | \"bc\" | \"\"");
  EXPECT_EQ(parsed("((a|b)c)*"), "((\"a\" | \"b\") \"c\")*");
  EXPECT_EQ(parsed("x(?:y|z)?(?P<year>\\d{4})(?<m>w)()"), "\"x\" (\"y\" | \"z\")? [0-9]{4} \"w\" \"\"");
}

TEST(RegexParser, DotIsAnyCodePointButNewline) { EXPECT_EQ(parsed("."), "[^\\n]"); }

TEST(RegexParser, ShorthandClassesAreAscii) {
  EXPECT_EQ(parsed("\\d\\D\\w\\W\\s\\S"), "[0-9] [^0-9] [0-9A-Z_a-z] [^0-9A-Z_a-z] [\\t-\\r ] [^\\t-\\r ]");
}

TEST(RegexParser, CharacterClasses) {
  EXPECT_EQ(parsed("[a-z0-9_-]"), "[a-z0-9_\\-]");
  EXPECT_EQ(parsed("[-a]"), "[\\-a]");
  EXPECT_EQ(parsed("[^\\d\\s]"), "[^0-9\\t-\\r ]");
  EXPECT_EQ(parsed("[]a]"), "[\\]a]");
  EXPECT_EQ(parsed("[^]a]"), "[^\\]a]");
  EXPECT_EQ(parsed("[.*+?(){}|$^]"), "[.*+?(){}|$\\^]");
  EXPECT_EQ(parsed("[\\]\\\\\\-\\b\\n\\x41\\u00e9]"), "[\\]\\\\\\-\\x08\\nA\\xE9]");
  EXPECT_EQ(parsed("[\\u4e00-\\u9fff]+"), "[\\u4E00-\\u9FFF]+");
}

TEST(RegexParser, NegatedShorthandInsideAClassIsItsComplement) {
  EXPECT_EQ(parsed("[\\D]"), "[\\x00-/:-\\U0010FFFF]");
  EXPECT_EQ(parsed("[^\\W]"), "[^\\x00-/:-@\\[-\\^`{-\\U0010FFFF]");
}

TEST(RegexParser, Escapes) {
  EXPECT_EQ(regex_to_expr("\\.\\\\\\n\\t\\r\\f\\v\\a\\0\\x41\\u00e9\\U0001F600\\-\\{\\*\\/\\ ")->text,
            ".\\\n\t\r\f\v\a" + std::string(1, '\0') + "A\xC3\xA9\xF0\x9F\x98\x80-{*/ ");
  EXPECT_EQ(regex_to_expr("\\101\\0101")->text, "A\b1");  // octal: three digits, or \0 and up to two more
  EXPECT_EQ(parsed("[\\1\\07]"), "[\\x01\\x07]");
}

TEST(RegexParser, AnchorsThatFullmatchImpliesAreDropped) {
  EXPECT_EQ(parsed("^abc$"), "\"abc\"");
  EXPECT_EQ(parsed("\\Aabc\\Z"), "\"abc\"");
  EXPECT_EQ(parsed("^a$|^b$|c"), "\"a\" | \"b\" | \"c\"");
  EXPECT_EQ(parsed("^$"), "\"\"");
  EXPECT_EQ(parsed("^(a|b)$"), "\"a\" | \"b\"");
}

TEST(RegexParser, CommentsAreSkipped) { EXPECT_EQ(parsed("a(?#note)b"), "\"ab\""); }

TEST(RegexParser, RulesHaveOneRootRule) {
  const RuleSet rules = regex_to_rules("[a-z]+");
  EXPECT_EQ(rules.root, "root");
  EXPECT_EQ(testing::print_rules(rules), "root ::= [a-z]+\n");
}

TEST(RegexParser, RepeatBoundAtTheLimitIsAccepted) {
  EXPECT_EQ(parsed("a{0,10000}"), "\"a\"{0,10000}");
  EXPECT_EQ(kRegexMaxRepeat, 10000);
}

// Patterns from structured-output requests and JSON schemas seen in use.
TEST(RegexParser, RealWorldCorpus) {
  struct Case {
    const char* pattern;
    const char* expected;  // nullptr: only that it parses
  };
  const Case cases[] = {
      {"^\\d{4}-\\d{2}-\\d{2}$", "[0-9]{4} \"-\" [0-9]{2} \"-\" [0-9]{2}"},
      {"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$",
       "[a-zA-Z0-9._%+\\-]+ \"@\" [a-zA-Z0-9.\\-]+ \".\" [a-zA-Z]{2,}"},
      {"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
       "[0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12}"},
      {"^\\+?1?[-. ]?\\(?\\d{3}\\)?[-. ]?\\d{3}[-. ]?\\d{4}$",
       "\"+\"? \"1\"? [\\-. ]? \"(\"? [0-9]{3} \")\"? [\\-. ]? [0-9]{3} [\\-. ]? [0-9]{4}"},
      {"^([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?$", "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] (\":\" [0-5] [0-9])?"},
      {"^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$", nullptr},
      {"^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)"
       "(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$",
       nullptr},
      {"^#(?:[0-9a-fA-F]{3}){1,2}$", "\"#\" ([0-9a-fA-F]{3}){1,2}"},
      {"^https?://[^\\s/$.?#].[^\\s]*$", "\"http\" \"s\"? \"://\" [^\\t-\\r /$.?#] [^\\n] [^\\t-\\r ]*"},
      {"^\\d{5}(-\\d{4})?$", "[0-9]{5} (\"-\" [0-9]{4})?"},
      {"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$", nullptr},
      {"^[a-z0-9]+(?:-[a-z0-9]+)*$", "[a-z0-9]+ (\"-\" [a-z0-9]+)*"},
      {"-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?", nullptr},
      {"\\w+@\\w+\\.com\\n", "[0-9A-Z_a-z]+ \"@\" [0-9A-Z_a-z]+ \".com\\n\""},
      {"(Paris|London|Berlin)", "\"Paris\" | \"London\" | \"Berlin\""},
      {"[A-Z]{3}-\\d{3,4}", "[A-Z]{3} \"-\" [0-9]{3,4}"},
      {"\\d+(\\.\\d{1,2})?", "[0-9]+ (\".\" [0-9]{1,2})?"},
      {"(?P<year>\\d{4})-(?P<month>0[1-9]|1[0-2])", "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2])"},
      {"^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", nullptr},
      {"^\\$?\\d{1,3}(,\\d{3})*(\\.\\d{2})?$", nullptr},
      {"^[A-Z]{2}\\d{2}[A-Z0-9]{1,30}$", nullptr},                  // IBAN
      {"^(\\([0-9]{3}\\) |[0-9]{3}-)[0-9]{3}-[0-9]{4}$", nullptr},  // JSON Schema docs' phone example
      {"^[a-zA-Z_][a-zA-Z0-9_]*$", nullptr},
      {"\\{\"name\": \"[A-Za-z ]+\", \"age\": \\d+\\}",
       "\"{\\\"name\\\": \\\"\" [A-Za-z ]+ \"\\\", \\\"age\\\": \" [0-9]+ \"}\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pattern);
    const std::string printed = parsed(c.pattern);
    if (c.expected) {
      EXPECT_EQ(printed, c.expected);
    }
  }
}

TEST(RegexParserErrors, GroupsAndParentheses) {
  EXPECT_KILN_ERROR(regex_to_expr("(a"), "regex \"(a\" at position 0", "missing ')'");
  EXPECT_KILN_ERROR(regex_to_expr("a)"), "at position 1", "unbalanced parenthesis");
  EXPECT_KILN_ERROR(regex_to_expr("(?x)a"), "at position 0", "inline flags (?x");
  EXPECT_KILN_ERROR(regex_to_expr("a(?i:b)"), "at position 1", "inline flags (?i");
  EXPECT_KILN_ERROR(regex_to_expr("(?Q)"), "at position 0", "unknown group syntax");
  EXPECT_KILN_ERROR(regex_to_expr("(?>a)"), "at position 0", "atomic group");
  EXPECT_KILN_ERROR(regex_to_expr("(a)?(?(1)b|c)"), "at position 4", "conditional group");
  EXPECT_KILN_ERROR(regex_to_expr("(?P<1x>a)"), "at position 4", "bad character in the group name");
  EXPECT_KILN_ERROR(regex_to_expr("(?P<n"), "at position 0", "group name");
  EXPECT_KILN_ERROR(regex_to_expr("(?<>a)"), "at position 0", "group name");
  EXPECT_KILN_ERROR(regex_to_expr("a(?#note"), "at position 1", "comment");
}

TEST(RegexParserErrors, NotRegular) {
  EXPECT_KILN_ERROR(regex_to_expr("(a)\\1"), "at position 3", "backreference '\\1'");
  EXPECT_KILN_ERROR(regex_to_expr("(?P<n>a)(?P=n)"), "at position 8", "backreference (?P=name)");
  EXPECT_KILN_ERROR(regex_to_expr("a(?=b)"), "at position 1", "lookahead (?=");
  EXPECT_KILN_ERROR(regex_to_expr("a(?!b)"), "at position 1", "lookahead (?!");
  EXPECT_KILN_ERROR(regex_to_expr("(?<=a)b"), "at position 0", "lookbehind (?<=");
  EXPECT_KILN_ERROR(regex_to_expr("(?<!a)b"), "at position 0", "lookbehind (?<!");
  EXPECT_KILN_ERROR(regex_to_expr("\\bword"), "at position 0", "word boundary \\b");
  EXPECT_KILN_ERROR(regex_to_expr("a\\Bb"), "at position 1", "word boundary \\B");
}

TEST(RegexParserErrors, RefusalsAreUnsupportedNotInvalid) {
  try {
    regex_to_expr("a(?=b)");
    FAIL() << "lookahead accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
  try {
    regex_to_expr("a)");
    FAIL() << "unbalanced parenthesis accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
}

TEST(RegexParserErrors, AnchorsElsewhere) {
  EXPECT_KILN_ERROR(regex_to_expr("a^b"), "at position 1", "anchor '^'", "only at the start");
  EXPECT_KILN_ERROR(regex_to_expr("a$b"), "at position 1", "anchor '$'", "only at the end");
  EXPECT_KILN_ERROR(regex_to_expr("(^a)"), "at position 1", "anchor '^'");
  EXPECT_KILN_ERROR(regex_to_expr("(a$)"), "at position 2", "anchor '$'");
  EXPECT_KILN_ERROR(regex_to_expr("a\\Ab"), "at position 1", "anchor '\\A'");
  EXPECT_KILN_ERROR(regex_to_expr("a\\Zb"), "at position 1", "anchor '\\Z'");
  EXPECT_KILN_ERROR(regex_to_expr("a$?"), "at position 1", "anchor '$'");
}

TEST(RegexParserErrors, Quantifiers) {
  EXPECT_KILN_ERROR(regex_to_expr("*a"), "at position 0", "nothing to repeat");
  EXPECT_KILN_ERROR(regex_to_expr("a|+b"), "at position 2", "nothing to repeat");
  EXPECT_KILN_ERROR(regex_to_expr("(?:?a)"), "at position 3", "nothing to repeat");
  EXPECT_KILN_ERROR(regex_to_expr("{2}"), "at position 0", "nothing to repeat");
  EXPECT_KILN_ERROR(regex_to_expr("^*"), "at position 1", "nothing to repeat");
  EXPECT_KILN_ERROR(regex_to_expr("a**"), "at position 2", "multiple repeat");
  EXPECT_KILN_ERROR(regex_to_expr("a{2}{3}"), "at position 4", "multiple repeat");
  EXPECT_KILN_ERROR(regex_to_expr("a*??"), "at position 3", "multiple repeat");
  EXPECT_KILN_ERROR(regex_to_expr("a*+"), "at position 2", "possessive quantifier");
  EXPECT_KILN_ERROR(regex_to_expr("a{2}+"), "at position 4", "possessive quantifier");
  EXPECT_KILN_ERROR(regex_to_expr("a{5,2}"), "at position 1", "{5,2}", "minimum above its maximum");
  EXPECT_KILN_ERROR(regex_to_expr("a{10001}"), "at position 1", "maximum 10000");
  EXPECT_KILN_ERROR(regex_to_expr("a{2,99999999999999999999999}"), "at position 1", "maximum 10000");
}

TEST(RegexParserErrors, Classes) {
  EXPECT_KILN_ERROR(regex_to_expr("x[abc"), "at position 1", "not closed by ']'");
  EXPECT_KILN_ERROR(regex_to_expr("[]"), "at position 0", "not closed by ']'");
  EXPECT_KILN_ERROR(regex_to_expr("[az-a]"), "at position 2", "range end is below its start");
  EXPECT_KILN_ERROR(regex_to_expr("[\\d-z]"), "at position 1", "class escape cannot end a range");
  EXPECT_KILN_ERROR(regex_to_expr("[a-\\w]"), "at position 3", "class escape cannot end a range");
  EXPECT_KILN_ERROR(regex_to_expr("[\\A]"), "at position 1", "bad escape '\\A'");
}

TEST(RegexParserErrors, Escapes) {
  EXPECT_KILN_ERROR(regex_to_expr("a\\q"), "at position 1", "bad escape '\\q'");
  EXPECT_KILN_ERROR(regex_to_expr("ab\\"), "at position 2", "lone '\\'");
  EXPECT_KILN_ERROR(regex_to_expr("\\x4"), "at position 0", "2 hex digits");
  EXPECT_KILN_ERROR(regex_to_expr("..\\u12"), "at position 2", "4 hex digits");
  EXPECT_KILN_ERROR(regex_to_expr("\\U00110000"), "at position 0", "beyond the last code point");
  EXPECT_KILN_ERROR(regex_to_expr("\\uD800"), "at position 0", "surrogate");
  EXPECT_KILN_ERROR(regex_to_expr("\\N{DIGIT ONE}"), "at position 0", "named characters");
  EXPECT_KILN_ERROR(regex_to_expr("^[\\p{L}]+$"), "at position 2", "Unicode property classes \\p{...}");
  EXPECT_KILN_ERROR(regex_to_expr("[\\8]"), "at position 1", "bad escape '\\8'");
  EXPECT_KILN_ERROR(regex_to_expr("\\477"), "at position 0", "octal escape above");
}

TEST(RegexParserErrors, PositionsCountCodePoints) {
  EXPECT_KILN_ERROR(regex_to_expr("\xC3\xA9\xC3\xA9)"), "at position 2", "unbalanced");
  EXPECT_KILN_ERROR(regex_to_expr("ab\xFF"), "at position 2", "invalid UTF-8");
}

TEST(RegexParserErrors, LongPatternsAreShortenedInTheMessage) {
  std::string pattern(200, 'a');  // not std::string(200, 'a') + ")": gcc 12 warns falsely (-Warray-bounds)
  pattern += ')';
  EXPECT_KILN_ERROR(regex_to_expr(pattern), "regex \"...aaa", "aaa)\" at position 200");
}

TEST(RegexParserErrors, DeepNestingIsRefusedNotACrash) {
  EXPECT_KILN_ERROR(regex_to_expr(std::string(100000, '(')), "nest deeper than");
}

}  // namespace
}  // namespace kiln::grammar
