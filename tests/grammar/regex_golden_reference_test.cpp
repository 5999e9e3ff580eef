// regex_to_expr against Python: each golden string is accepted by the expression exactly when
// re.fullmatch (re.ASCII) accepted it. The expression is run by the test-only reference matcher
// (expr_reference_matcher), so this checks the front end alone; regex_golden_test checks the
// same goldens through the real lowering and matcher.
#include <gtest/gtest.h>

#include "expr_reference_matcher.hpp"
#include "grammar/regex_parser.hpp"
#include "regex_goldens.hpp"

namespace kiln::grammar {
namespace {

TEST(RegexGoldenReference, ExpressionsAgreeWithPythonFullmatch) {
  const std::vector<testing::RegexGolden> goldens = testing::load_regex_goldens();
  ASSERT_GE(goldens.size(), 50u);
  std::size_t num_checked = 0;
  for (const testing::RegexGolden& golden : goldens) {
    SCOPED_TRACE(golden.pattern);
    const ExprPtr expr = regex_to_expr(golden.pattern);
    for (const std::string& s : golden.accept) {
      EXPECT_TRUE(testing::reference_matches(expr, s)) << "Python accepts \"" << s << "\"";
      ++num_checked;
    }
    for (const std::string& s : golden.reject) {
      EXPECT_FALSE(testing::reference_matches(expr, s)) << "Python rejects \"" << s << "\"";
      ++num_checked;
    }
  }
  EXPECT_GE(num_checked, 2000u);
}

}  // namespace
}  // namespace kiln::grammar
