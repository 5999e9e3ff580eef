// JSON Schema to grammar: which texts a schema's grammar accepts, and the errors for what it
// cannot express. (Masks against xgrammar: mask_golden_test; outputs against the jsonschema
// package: tests/server/test_structured_output.py.)
#include <gtest/gtest.h>

#include "grammar/grammar.hpp"
#include "grammar/json_schema.hpp"
#include "kiln/error.hpp"

namespace kiln::grammar {
namespace {

Grammar schema_grammar(const char* schema) { return lower(json_schema_rules(std::string_view(schema))); }

std::string error_of(const char* schema) {
  try {
    schema_grammar(schema);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kPerson = R"({"type": "object", "properties": {
    "name": {"type": "string"}, "age": {"type": "integer"}, "email": {"type": "string", "format": "email"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}, "required": ["name", "age"]})";

TEST(JsonSchema, ObjectPropertiesInOrderWithOptionalOnes) {
  const Grammar g = schema_grammar(kPerson);
  EXPECT_TRUE(matches(g, R"({"name": "Ann", "age": 30})"));
  EXPECT_TRUE(matches(g, "{\n  \"name\":\"A\\\"nn\\u00e9\",\n  \"age\": -4, \"tags\": [\"x\", \"y\"]\n}"));
  EXPECT_TRUE(matches(g, R"({"name": "", "age": 0, "email": "a.b@c.org"})"));
  EXPECT_FALSE(matches(g, R"({"age": 30, "name": "Ann"})"));                          // out of order
  EXPECT_FALSE(matches(g, R"({"name": "Ann"})"));                                     // age is required
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 30, "x": 1})"));                  // no additional properties
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 03})"));                          // leading zero
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 1.5})"));                         // not an integer
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 1, "tags": ["a", "b", "c"]})"));  // maxItems
  EXPECT_FALSE(matches(g, "{\"name\": \"A\nn\", \"age\": 1}"));                       // raw control character
  EXPECT_FALSE(matches(g, R"({"name": "Ann", "age": 1, "email": "nope"})"));
}

TEST(JsonSchema, RefsEnumsConstsAndBranches) {
  const Grammar tree = schema_grammar(R"({"$defs": {"node": {"type": "object", "properties": {
      "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"]}},
      "$ref": "#/$defs/node"})");
  EXPECT_TRUE(matches(tree, R"({"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": []}]})"));
  EXPECT_FALSE(matches(tree, R"({"v": 1, "kids": [{}]})"));
  const Grammar choice = schema_grammar(R"({"anyOf": [{"enum": ["a", 1, null]}, {"const": {"k": [true]}}]})");
  for (const char* yes : {R"("a")", "1", "null", R"({"k":[true]})"}) EXPECT_TRUE(matches(choice, yes)) << yes;
  for (const char* no : {R"("b")", "2", R"({"k": [true]})"}) EXPECT_FALSE(matches(choice, no)) << no;
}

TEST(JsonSchema, UntypedAndBareObjectAcceptAnyJson) {
  const Grammar any = schema_grammar("{}");
  for (const char* yes : {"1e-3", R"("x")", "[1, [true, null], {}]", R"({"a": {"b": []}})", "-0.5"}) {
    EXPECT_TRUE(matches(any, yes)) << yes;
  }
  EXPECT_FALSE(matches(any, "[1,]"));
  const Grammar object = schema_grammar(R"({"type": "object"})");
  EXPECT_TRUE(matches(object, R"({"anything": [1, 2]})"));
  EXPECT_FALSE(matches(object, "[]"));
}

TEST(JsonSchema, StringLengthsAndPatterns) {
  const Grammar g = schema_grammar(R"({"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 3}})");
  EXPECT_TRUE(matches(g, R"(["ab", "a\"c"])"));
  EXPECT_FALSE(matches(g, R"(["a"])"));
  EXPECT_FALSE(matches(g, R"(["abcd"])"));
  const Grammar pattern = schema_grammar(R"({"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"})");
  EXPECT_TRUE(matches(pattern, R"("AB-123")"));
  EXPECT_FALSE(matches(pattern, R"("AB-12")"));
}

TEST(JsonSchema, TaggedSchemasAreOneOfTheirTags) {
  const Grammar g = lower(tagged_schema_rules(
      {{"a\", \"arguments\": ", R"({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})",
        "}\n</tool_call>"},
       {"b\", \"arguments\": ", R"({"$defs": {"n": {"type": "null"}}, "$ref": "#/$defs/n"})", "}\n</tool_call>"}}));
  EXPECT_TRUE(matches(g, "a\", \"arguments\": {\"x\": 1}}\n</tool_call>"));
  EXPECT_TRUE(matches(g, "b\", \"arguments\": null}\n</tool_call>"));
  EXPECT_FALSE(matches(g, "a\", \"arguments\": null}\n</tool_call>"));
  EXPECT_FALSE(matches(g, "b\", \"arguments\": {\"x\": 1}}\n</tool_call>"));
  EXPECT_FALSE(matches(g, "a\", \"arguments\": {\"x\": 1}}"));
  try {
    tagged_schema_rules({{"", R"({"type": "object"})", ""}, {"", R"({"type": "number", "multipleOf": 2})", ""}});
    ADD_FAILURE() << "multipleOf accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'multipleOf' at structural_tags[1]#"), std::string::npos) << e.what();
  }
}

TEST(JsonSchema, ErrorsNameTheKeywordAndWhere) {
  EXPECT_NE(error_of(R"({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 3}}})")
                .find("keyword 'multipleOf' at #/properties/a is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "object", "patternProperties": {}})").find("'patternProperties' at #"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"not": {"type": "null"}})").find("keyword 'not' at #"), std::string::npos);
  EXPECT_NE(error_of(R"({"$ref": "#/$defs/missing"})").find("'#/$defs/missing' is not defined"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "strin"})").find("unknown type 'strin'"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "object", "properties": {}, "required": ["a"]})").find("'a' is not among"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "string", "format": "hostname"})").find("format 'hostname'"), std::string::npos);
  EXPECT_NE(error_of("{\"type\": ").find("invalid JSON"), std::string::npos);
  // Found by grammar_fuzz: a number past double's range is a JSON error too, not a crash.
  EXPECT_NE(error_of("99999999999999999999999998E99999999999999").find("invalid JSON"), std::string::npos);
}

}  // namespace
}  // namespace kiln::grammar
