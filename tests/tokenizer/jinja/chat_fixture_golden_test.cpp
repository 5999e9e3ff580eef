// Oracle: $KILN_EXTERNAL_FIXTURES/chat_templates/chat_golden.jsonl, 196 renderings of 15 real
// chat templates made with Python Jinja2 3.1.6 as transformers configures it (see its SOURCE.md),
// including the errors the templates raise. Each must match exactly: the rendered string, or the
// error as "<Python exception type>: <message>" (TemplateError from raise_exception, TypeError
// and UndefinedError from Python itself). The clock is fixed at 2026-12-02 13:00:00.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
#include "tokenizer/jinja/template.hpp"
#include "util/file_io.hpp"

namespace kiln::jinja {
namespace {

using Json = nlohmann::ordered_json;

TEST(ChatTemplateFixtures, AllGoldenRenderingsMatch) {
  const auto fixtures = testing::external_fixtures_dir();
  if (!fixtures) GTEST_SKIP() << "KILN_EXTERNAL_FIXTURES is not set: shared chat-template goldens skipped";
  const auto dir = *fixtures / "chat_templates";
  const auto lines = testing::read_lines(dir / "chat_golden.jsonl");
  ASSERT_EQ(lines.size(), 196u);

  RenderOptions options;
  options.local_time = [] { return make_local_time(2026, 12, 2, 13, 0, 0); };
  std::map<std::string, std::unique_ptr<Template>> templates;
  size_t rendered = 0;
  size_t errors = 0;
  for (const std::string& line : lines) {
    const Json record = Json::parse(line);
    const std::string name = record.at("template").get<std::string>();
    auto& tmpl = templates[name];
    if (!tmpl) tmpl = std::make_unique<Template>(read_file(dir / (name + ".jinja")), name);
    Json context = Json::object();
    for (const char* key : {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"}) {
      context[key] = record.at(key);
    }
    const std::string label = name + " / " + record.at("conversation").get<std::string>() +
                              (record.at("tools").is_null() ? "" : " / tools") +
                              (record.at("add_generation_prompt").get<bool>() ? " / gen" : "");
    if (record.contains("rendered")) {
      ++rendered;
      try {
        EXPECT_EQ(tmpl->render(context, options), record.at("rendered").get<std::string>()) << label;
      } catch (const TemplateError& e) {
        ADD_FAILURE() << label << ": unexpected " << e.what();
      }
    } else {
      ++errors;
      try {
        tmpl->render(context, options);
        ADD_FAILURE() << label << ": expected " << record.at("error");
      } catch (const TemplateError& e) {
        EXPECT_EQ(e.python_message(), record.at("error").get<std::string>()) << label;
        EXPECT_GT(e.line(), 0) << label << ": the error names no line";
      }
    }
  }
  EXPECT_EQ(rendered, 158u);
  EXPECT_EQ(errors, 38u);
}

}  // namespace
}  // namespace kiln::jinja
