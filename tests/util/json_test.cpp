// Oracle: the messages name the origin and the field, and the typed getters reject wrong types.
#include "util/json.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln {
namespace {

TEST(JsonFields, TypedAccess) {
  const Json j = Json::parse(R"({"a": 3, "b": 2.5, "c": "x", "d": true, "e": null})");
  JsonFields f(j, "config.json");
  EXPECT_EQ(f.get<int>("a"), 3);
  EXPECT_DOUBLE_EQ(f.get<double>("b"), 2.5);
  EXPECT_DOUBLE_EQ(f.get<double>("a"), 3.0);  // an integer is a valid number
  EXPECT_EQ(f.get<std::string>("c"), "x");
  EXPECT_TRUE(f.get<bool>("d"));
  EXPECT_EQ(f.get_or<int>("e", 7), 7);  // null counts as absent
  EXPECT_EQ(f.get_or<int>("zz", 9), 9);
  EXPECT_FALSE(f.get_optional<int>("zz").has_value());
}

TEST(JsonFields, ErrorsNameOriginAndField) {
  const Json j = Json::parse(R"({"hidden_size": "big", "x": 1.5})");
  JsonFields f(j, "config.json");
  EXPECT_KILN_ERROR(f.get<int>("hidden_size"), "config.json", "hidden_size", "integer", "string");
  EXPECT_KILN_ERROR(f.get<int>("x"), "config.json", "'x'", "integer");
  EXPECT_KILN_ERROR(f.get<int>("num_layers"), "config.json", "missing", "num_layers");
}

TEST(ReadJsonFile, SyntaxErrorNamesFileAndOffset) {
  testing::TempDir dir;
  const auto path = dir.path() / "bad.json";
  write_file_atomic(path, "{\"a\": 1,,}");
  EXPECT_KILN_ERROR(read_json_file(path), "bad.json", "invalid JSON at byte");
}

// Found by model_files_fuzz: nlohmann reports a number past a double as out_of_range, not as a
// parse_error, and that escaped as a non-kiln exception.
TEST(ReadJsonFile, NumberTooLargeForADoubleIsAKilnError) {
  testing::TempDir dir;
  const auto path = dir.path() / "generation_config.json";
  write_file_atomic(path, "{\"bos_token_id\": 311e400}");
  EXPECT_KILN_ERROR(read_json_file(path), "generation_config.json", "invalid JSON", "311e400");
  EXPECT_KILN_ERROR(read_ordered_json_file(path), "generation_config.json", "invalid JSON", "311e400");
}

// 100,000 '[' parse without recursion, but a copy or a dump of the result would overflow the stack.
TEST(ParseJsonText, NestingPastTheLimitIsAKilnError) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_KILN_ERROR(parse_json_text(deep, "tokenizer_config.json"), "tokenizer_config.json", "nests deeper than 256");
  EXPECT_KILN_ERROR(parse_ordered_json_text(deep, "schema"), "schema", "nests deeper than 256");
  const std::string at_limit = std::string(256, '[') + std::string(256, ']');
  EXPECT_EQ(parse_json_text(at_limit, "x").dump(), at_limit);
  const std::string past = "{\"a\": " + std::string(256, '[') + std::string(256, ']') + "}";
  EXPECT_KILN_ERROR(parse_json_text(past, "x"), "nests deeper");
}

}  // namespace
}  // namespace kiln
