// tests/data/grammar/regex_goldens.json (tools/make_regex_goldens.py): for each pattern, strings
// Python's re.fullmatch (re.ASCII) accepts and rejects.
#pragma once

#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln::grammar::testing {

struct RegexGolden {
  std::string pattern;
  std::vector<std::string> accept;
  std::vector<std::string> reject;
};

inline std::vector<RegexGolden> load_regex_goldens() {
  const Json document = read_json_file(kiln::testing::test_data_dir() / "grammar" / "regex_goldens.json");
  std::vector<RegexGolden> goldens;
  for (const Json& c : document.at("cases")) {
    goldens.push_back({c.at("pattern").get<std::string>(), c.at("accept").get<std::vector<std::string>>(),
                       c.at("reject").get<std::vector<std::string>>()});
  }
  return goldens;
}

}  // namespace kiln::grammar::testing
