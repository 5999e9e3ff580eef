// The regex goldens through the whole pipeline: regex_to_rules -> lower -> matches accepts each
// golden string exactly when Python's re.fullmatch (re.ASCII) did.
#include <gtest/gtest.h>

#include "grammar/grammar.hpp"
#include "grammar/regex_parser.hpp"
#include "regex_goldens.hpp"

namespace kiln::grammar {
namespace {

TEST(RegexGolden, MatcherAgreesWithPythonFullmatch) {
  const std::vector<testing::RegexGolden> goldens = testing::load_regex_goldens();
  ASSERT_GE(goldens.size(), 50u);
  for (const testing::RegexGolden& golden : goldens) {
    SCOPED_TRACE(golden.pattern);
    const Grammar grammar = lower(regex_to_rules(golden.pattern));
    for (const std::string& s : golden.accept) EXPECT_TRUE(matches(grammar, s)) << "Python accepts \"" << s << "\"";
    for (const std::string& s : golden.reject) EXPECT_FALSE(matches(grammar, s)) << "Python rejects \"" << s << "\"";
  }
}

}  // namespace
}  // namespace kiln::grammar
