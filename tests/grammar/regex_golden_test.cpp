// The regex goldens through the whole pipeline: regex_to_rules -> lower -> matches accepts each
// golden string exactly when Python's re.fullmatch (re.ASCII) did.
#include <gtest/gtest.h>

#include "grammar/grammar.hpp"
#include "grammar/regex_parser.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln::grammar {
namespace {

struct RegexGolden {
  std::string pattern;
  std::vector<std::string> accept;
  std::vector<std::string> reject;
};

std::vector<RegexGolden> load_regex_goldens() {
  const Json document = read_json_file(testing::test_data_dir() / "grammar" / "regex_goldens.json");
  std::vector<RegexGolden> goldens;
  for (const Json& c : document.at("cases")) {
    goldens.push_back({c.at("pattern").get<std::string>(), c.at("accept").get<std::vector<std::string>>(),
                       c.at("reject").get<std::vector<std::string>>()});
  }
  return goldens;
}

TEST(RegexGolden, MatcherAgreesWithPythonFullmatch) {
  const std::vector<RegexGolden> goldens = load_regex_goldens();
  ASSERT_GE(goldens.size(), 50u);
  for (const RegexGolden& golden : goldens) {
    SCOPED_TRACE(golden.pattern);
    const Grammar grammar = lower(regex_to_rules(golden.pattern));
    for (const std::string& s : golden.accept) EXPECT_TRUE(matches(grammar, s)) << "Python accepts \"" << s << "\"";
    for (const std::string& s : golden.reject) EXPECT_FALSE(matches(grammar, s)) << "Python rejects \"" << s << "\"";
  }
}

}  // namespace
}  // namespace kiln::grammar
