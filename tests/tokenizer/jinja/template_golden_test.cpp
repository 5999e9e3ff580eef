// Oracle: Python Jinja2 3.1.6 configured as transformers' apply_chat_template (tools/jinja/
// make_goldens.py). Every committed case must render to exactly the same string, or fail with
// exactly the same "<Python exception type>: <message>".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
#include "tokenizer/jinja/template.hpp"

namespace kiln::jinja {
namespace {

using Json = nlohmann::ordered_json;

RenderOptions fixed_clock() {
  RenderOptions options;
  options.local_time = [] { return make_local_time(2026, 12, 2, 13, 0, 0); };
  return options;
}

// Renders `source`, returning the output or "<Type>: <message>" as Python would print it.
std::string render_or_error(const std::string& source, const Json& context) {
  try {
    return "OK:" + Template(source, "case").render(context, fixed_clock());
  } catch (const TemplateError& e) {
    return "ERR:" + e.python_message();
  }
}

TEST(TemplateGolden, EveryCaseMatchesPythonJinja2) {
  const auto lines = testing::read_lines(testing::test_data_dir() / "jinja" / "template_goldens.jsonl");
  ASSERT_GT(lines.size(), 200u);
  const Json base = Json::parse(lines.front()).at("base_context");
  size_t cases = 0;
  size_t errors = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const Json record = Json::parse(lines[i]);
    const std::string name = record.at("name").get<std::string>();
    const Json& context = record.contains("context") ? record.at("context") : base;
    const std::string expected = record.contains("rendered") ? "OK:" + record.at("rendered").get<std::string>()
                                                             : "ERR:" + record.at("error").get<std::string>();
    errors += record.contains("error");
    EXPECT_EQ(render_or_error(record.at("template").get<std::string>(), context), expected)
        << "case " << name << ": " << record.at("template").get<std::string>();
    ++cases;
  }
  EXPECT_EQ(cases, lines.size() - 1);
  EXPECT_GT(errors, 50u);  // the error cases are part of the oracle, not skipped
}

}  // namespace
}  // namespace kiln::jinja
