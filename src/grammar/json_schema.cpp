#include "grammar/json_schema.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "grammar/number_range.hpp"
#include "grammar/regex_parser.hpp"
#include "grammar/tag_dispatch.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln::grammar {
namespace {

using Schema = nlohmann::ordered_json;  // properties keep the schema's order

// Keywords that describe and do not constrain.
const std::set<std::string, std::less<>> kAnnotations = {
    "title",    "description", "default", "examples",         "$schema",        "$id", "$comment", "deprecated",
    "readOnly", "writeOnly",   "$anchor", "contentMediaType", "contentEncoding"};

// Whitespace between tokens: at most this many characters (xgrammar's max_whitespace_cnt, and
// llama.cpp's bound of 20), so a model cannot loop on newlines forever under greedy decoding.
constexpr std::int64_t kMaxWhitespace = 20;
constexpr std::int64_t kMaxDigits = 16;         // in a number's integer part, and in its fraction
constexpr std::int64_t kMaxExponentDigits = 3;  // enough for any double

ExprPtr ws() { return rule_ref("json-ws"); }

// Regexes for the string formats kiln checks (RFC 3339 date-time, RFC 4122 uuid, a plain
// local@domain email).
const std::map<std::string, std::string, std::less<>> kFormats = {
    {"date", R"([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]))"},
    {"time", R"(([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))"},
    {"date-time",
     R"([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))"},
    {"uuid", R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"},
    {"email", R"([a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+)"},
    {"ipv4", R"(((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))"},
};

class SchemaConverter {
 public:
  SchemaConverter() {
    add("json-ws", repeat(char_class({{' ', ' '}, {'\n', '\n'}, {'\r', '\r'}, {'\t', '\t'}}), 0, kMaxWhitespace));
  }

  // The rule `scope`root for `schema`, whose own $refs ("#", "#/$defs/...") resolve within it;
  // errors name places as `where`#/... (the schemas of one grammar get different scopes).
  ExprPtr schema_rule(const Schema& schema, const std::string& scope, const std::string& where) {
    root_ = &schema;
    scope_ = scope;
    add(scope + "root", value(schema, where + "#"));
    return rule_ref(scope + "root");
  }

  RuleSet finish(ExprPtr root) && {
    add("output", std::move(root));
    rules_.root = "output";
    return std::move(rules_);
  }

  RuleSet any_object() && {
    add_json_value_rules();
    return std::move(*this).finish(rule_ref("json-object"));
  }

 private:
  void add(std::string name, ExprPtr body) { rules_.rules.push_back({std::move(name), std::move(body)}); }

  [[noreturn]] static void unsupported(std::string_view keyword, const std::string& path) {
    fail(ErrorKind::kUnsupported, "json_schema: keyword '{}' at {} is not supported", keyword, path);
  }
  [[noreturn]] static void invalid(const std::string& path, std::string_view why) {
    fail("json_schema: {}: {}", path, why);
  }

  std::int64_t count_field(const Schema& schema, const char* key, const std::string& path) {
    const Schema& v = schema.at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      invalid(path + "/" + key, "must be a non-negative integer");
    return v.get<std::int64_t>();
  }

  // The generic value rules (any JSON), added once.
  void add_json_value_rules() {
    if (have_json_value_) return;
    have_json_value_ = true;
    const ExprPtr member = sequence({rule_ref("json-string"), ws(), literal(":"), ws(), rule_ref("json-value")});
    const ExprPtr comma = sequence({ws(), literal(","), ws()});
    add("json-value", alternation({rule_ref("json-object"), rule_ref("json-array"), rule_ref("json-string"),
                                   rule_ref("json-number"), literal("true"), literal("false"), literal("null")}));
    add("json-object", sequence({literal("{"), ws(),
                                 optional(sequence({member, star(sequence({comma, member})), ws()})), literal("}")}));
    add("json-array",
        sequence({literal("["), ws(),
                  optional(sequence({rule_ref("json-value"), star(sequence({comma, rule_ref("json-value")})), ws()})),
                  literal("]")}));
    add("json-string", sequence({literal("\""), star(rule_ref("json-char")), literal("\"")}));
    add("json-char",
        alternation({char_class({{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}, true),
                     sequence({literal("\\"), alternation({char_class({{'"', '"'},
                                                                       {'\\', '\\'},
                                                                       {'/', '/'},
                                                                       {'b', 'b'},
                                                                       {'f', 'f'},
                                                                       {'n', 'n'},
                                                                       {'r', 'r'},
                                                                       {'t', 't'}}),
                                                           sequence({literal("u"), repeat(hex(), 4, 4)})})})}));
    // As xgrammar spells them (an integer has no "-0", a number may: "-0.5"), with digit runs
    // bounded as llama.cpp bounds them: 16 digits hold any double, and a model cannot write
    // digits forever.
    const ExprPtr natural = sequence({char_class({{'1', '9'}}), repeat(digit(), 0, kMaxDigits - 1)});
    add("json-integer", alternation({literal("0"), sequence({optional(literal("-")), natural})}));
    add("json-number", sequence({optional(literal("-")), alternation({literal("0"), natural}),
                                 optional(sequence({literal("."), repeat(digit(), 1, kMaxDigits)})),
                                 optional(sequence({char_class({{'e', 'e'}, {'E', 'E'}}),
                                                    optional(char_class({{'+', '+'}, {'-', '-'}})),
                                                    repeat(digit(), 1, kMaxExponentDigits)}))}));
  }

  static ExprPtr digit() { return char_class({{'0', '9'}}); }
  static ExprPtr hex() { return char_class({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}); }

  ExprPtr value(const Schema& schema, const std::string& path) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) invalid(path, "the schema false accepts nothing");
      add_json_value_rules();
      return rule_ref("json-value");
    }
    if (!schema.is_object()) invalid(path, "a schema must be an object or a boolean");
    for (const auto& [key, unused] : schema.items()) {
      if (!kHandled.contains(key) && !kAnnotations.contains(key)) unsupported(key, path);
    }
    if (schema.contains("$ref")) return reference(schema.at("$ref"), path);
    if (schema.contains("const")) return literal(schema.at("const").dump());
    if (schema.contains("enum")) return enumeration(schema.at("enum"), path + "/enum");
    for (const char* key : {"anyOf", "oneOf"}) {
      if (schema.contains(key)) return branches(schema.at(key), path + "/" + key);
    }
    if (schema.contains("allOf")) {
      const Schema& all = schema.at("allOf");
      if (!all.is_array() || all.size() != 1) unsupported("allOf (with more than one schema)", path);
      return value(all[0], path + "/allOf/0");
    }
    if (!schema.contains("type")) {
      add_json_value_rules();
      return rule_ref("json-value");
    }
    const Schema& type = schema.at("type");
    if (type.is_string()) return typed(schema, type.get<std::string>(), path);
    if (!type.is_array() || type.empty()) invalid(path + "/type", "must be a type name or a non-empty array of them");
    std::vector<ExprPtr> alternatives;
    for (const Schema& t : type) {
      if (!t.is_string()) invalid(path + "/type", "must hold type names");
      alternatives.push_back(typed(schema, t.get<std::string>(), path));
    }
    return alternation(std::move(alternatives));
  }

  ExprPtr typed(const Schema& schema, const std::string& type, const std::string& path) {
    add_json_value_rules();
    if (type == "string") return string(schema, path);
    if (type == "integer") return integer(schema, path);
    if (type == "number") return number(schema, path);
    if (type == "boolean") return alternation({literal("true"), literal("false")});
    if (type == "null") return literal("null");
    if (type == "object") return object(schema, path);
    if (type == "array") return array(schema, path);
    invalid(path + "/type", fmt::format("unknown type '{}'", type));
  }

  ExprPtr reference(const Schema& ref, const std::string& path) {
    if (!ref.is_string()) invalid(path + "/$ref", "must be a string");
    const std::string target = ref.get<std::string>();
    if (target == "#") return rule_ref(scope_ + "root");
    for (const std::string prefix : {"#/$defs/", "#/definitions/"}) {
      if (!target.starts_with(prefix)) continue;
      const std::string name = target.substr(prefix.size());
      const std::string rule = scope_ + "def-" + name;
      if (!defined_.insert(rule).second) return rule_ref(rule);
      const std::string section = prefix.substr(2, prefix.size() - 3);
      const Schema& root = *root_;
      if (!root.contains(section) || !root.at(section).is_object() || !root.at(section).contains(name)) {
        invalid(path + "/$ref", fmt::format("'{}' is not defined", target));
      }
      add(rule, value(root.at(section).at(name), target));
      return rule_ref(rule);
    }
    unsupported("$ref (other than #, #/$defs/... and #/definitions/...)", path);
  }

  ExprPtr enumeration(const Schema& values, const std::string& path) {
    if (!values.is_array() || values.empty()) invalid(path, "must be a non-empty array");
    std::vector<ExprPtr> alternatives;
    for (const Schema& v : values) alternatives.push_back(literal(v.dump()));
    return alternation(std::move(alternatives));
  }

  ExprPtr branches(const Schema& schemas, const std::string& path) {
    if (!schemas.is_array() || schemas.empty()) invalid(path, "must be a non-empty array of schemas");
    std::vector<ExprPtr> alternatives;
    for (std::size_t i = 0; i < schemas.size(); ++i)
      alternatives.push_back(value(schemas[i], fmt::format("{}/{}", path, i)));
    return alternation(std::move(alternatives));
  }

  ExprPtr string(const Schema& schema, const std::string& path) {
    if (schema.contains("pattern")) {
      if (!schema.at("pattern").is_string()) invalid(path + "/pattern", "must be a string");
      return sequence({literal("\""), regex_to_expr(schema.at("pattern").get<std::string>()), literal("\"")});
    }
    if (schema.contains("format")) {
      const std::string format = schema.at("format").get<std::string>();
      const auto it = kFormats.find(format);
      if (it == kFormats.end()) unsupported(fmt::format("format '{}'", format), path);
      return sequence({literal("\""), regex_to_expr(it->second), literal("\"")});
    }
    const std::int64_t min = schema.contains("minLength") ? count_field(schema, "minLength", path) : 0;
    const std::int64_t max = schema.contains("maxLength") ? count_field(schema, "maxLength", path) : Expr::kUnbounded;
    if (max != Expr::kUnbounded && max < min) invalid(path, "maxLength is below minLength");
    if (min == 0 && max == Expr::kUnbounded) return rule_ref("json-string");
    return sequence({literal("\""), repeat(rule_ref("json-char"), min, max), literal("\"")});
  }

  ExprPtr integer(const Schema& schema, const std::string& path) {
    const std::optional<NumberRange> range = number_range(schema, path);
    if (!range) return rule_ref("json-integer");
    const std::optional<ExprPtr> in_range = integer_in_range(*range, kMaxDigits);
    if (!in_range) invalid(path, fmt::format("no integer of at most {} digits lies within the bounds", kMaxDigits));
    return *in_range;
  }

  // NOTE: a bounded number is written without an exponent, so that its bound can be checked
  // digit by digit.
  ExprPtr number(const Schema& schema, const std::string& path) {
    const std::optional<NumberRange> range = number_range(schema, path);
    if (!range) return rule_ref("json-number");
    const std::optional<ExprPtr> in_range = decimal_in_range(*range, kMaxDigits);
    if (!in_range) invalid(path, fmt::format("no number of at most {} digits lies within the bounds", kMaxDigits));
    return *in_range;
  }

  // The bounds of an integer or number schema, or nullopt when it has none.
  static std::optional<NumberRange> number_range(const Schema& schema, const std::string& path) {
    if (schema.contains("multipleOf")) unsupported("multipleOf", path);
    NumberRange range;
    const auto read = [&](std::optional<std::string>& bound, const char* key) {
      if (schema.contains(key)) bound = bound_text(schema.at(key), path + "/" + key);
    };
    read(range.minimum, "minimum");
    read(range.exclusive_minimum, "exclusiveMinimum");
    read(range.maximum, "maximum");
    read(range.exclusive_maximum, "exclusiveMaximum");
    if (!range.minimum && !range.exclusive_minimum && !range.maximum && !range.exclusive_maximum) return std::nullopt;
    return range;
  }

  // A bound's decimal text: an integer exactly as written, a fraction as its double's shortest
  // form (the digits the schema's author wrote, when they fit a double).
  static std::string bound_text(const Schema& bound, const std::string& path) {
    if (bound.is_number_integer()) return bound.dump();
    if (bound.is_number_float()) return fmt::format("{}", bound.get<double>());
    invalid(path, "must be a number");
  }

  ExprPtr member(const std::string& name, ExprPtr value_expr) {
    return sequence({literal(Schema(name).dump()), ws(), literal(":"), ws(), std::move(value_expr)});
  }

  // Properties in the schema's order, each optional one present or not. first_i: a non-empty
  // member list whose first member is property k >= i (no required property skipped);
  // rest_j: what may follow once properties before j are decided.
  ExprPtr object(const Schema& schema, const std::string& path) {
    for (const char* key :
         {"minProperties", "maxProperties", "patternProperties", "propertyNames", "dependentRequired"}) {
      if (schema.contains(key)) unsupported(key, path);
    }
    if (!schema.contains("properties") && !schema.contains("additionalProperties")) return rule_ref("json-object");
    std::vector<std::pair<std::string, ExprPtr>> properties;
    if (schema.contains("properties")) {
      const Schema& props = schema.at("properties");
      if (!props.is_object()) invalid(path + "/properties", "must be an object");
      for (const auto& [name, sub] : props.items())
        properties.emplace_back(name, member(name, value(sub, path + "/properties/" + name)));
    }
    std::set<std::string> required;
    if (schema.contains("required")) {
      for (const Schema& name : schema.at("required")) {
        if (!name.is_string()) invalid(path + "/required", "must hold property names");
        const bool listed =
            std::any_of(properties.begin(), properties.end(), [&](const auto& p) { return p.first == name; });
        if (!listed)
          invalid(path + "/required", fmt::format("'{}' is not among the properties", name.get<std::string>()));
        required.insert(name.get<std::string>());
      }
    }
    std::optional<ExprPtr> additional;
    if (schema.contains("additionalProperties")) {
      const Schema& extra = schema.at("additionalProperties");
      if (!(extra.is_boolean() && !extra.get<bool>())) {
        additional =
            sequence({rule_ref("json-string"), ws(), literal(":"), ws(), value(extra, path + "/additionalProperties")});
      }
    }
    const ExprPtr comma = sequence({ws(), literal(","), ws()});
    const std::string base = fmt::format("object-{}", ++objects_);
    const std::size_t n = properties.size();
    std::vector<bool> is_required(n);
    for (std::size_t i = 0; i < n; ++i) is_required[i] = required.contains(properties[i].first);
    const auto rest_name = [&](std::size_t j) { return fmt::format("{}-rest-{}", base, j); };
    // rest_j for j = n .. 0 (only those reachable are referenced; unreferenced ones are harmless).
    for (std::size_t j = n + 1; j-- > 0;) {
      std::vector<ExprPtr> choices;
      bool required_ahead = false;
      for (std::size_t k = j; k < n && !required_ahead; ++k) {
        choices.push_back(sequence({comma, properties[k].second, rule_ref(rest_name(k + 1))}));
        required_ahead = is_required[k];
      }
      if (!required_ahead) choices.push_back(additional ? star(sequence({comma, *additional})) : literal(""));
      add(rest_name(j), alternation(std::move(choices)));
    }
    std::vector<ExprPtr> firsts;
    bool required_ahead = false;
    for (std::size_t k = 0; k < n && !required_ahead; ++k) {
      firsts.push_back(sequence({properties[k].second, rule_ref(rest_name(k + 1))}));
      required_ahead = is_required[k];
    }
    if (!required_ahead && additional) firsts.push_back(sequence({*additional, star(sequence({comma, *additional}))}));
    if (firsts.empty()) return sequence({literal("{"), ws(), literal("}")});
    ExprPtr members = sequence({alternation(std::move(firsts)), ws()});
    return sequence({literal("{"), ws(), required_ahead ? members : optional(members), literal("}")});
  }

  ExprPtr array(const Schema& schema, const std::string& path) {
    const std::int64_t min = schema.contains("minItems") ? count_field(schema, "minItems", path) : 0;
    const std::int64_t max = schema.contains("maxItems") ? count_field(schema, "maxItems", path) : Expr::kUnbounded;
    if (max != Expr::kUnbounded && max < min) invalid(path, "maxItems is below minItems");
    for (const char* key :
         {"prefixItems", "contains", "uniqueItems", "minContains", "maxContains", "unevaluatedItems"}) {
      if (schema.contains(key)) unsupported(key, path);
    }
    ExprPtr item;
    if (schema.contains("items")) {
      item = value(schema.at("items"), path + "/items");
    } else {
      item = rule_ref("json-value");
    }
    if (max == 0) return sequence({literal("["), ws(), literal("]")});
    const ExprPtr comma = sequence({ws(), literal(","), ws()});
    const ExprPtr more = repeat(sequence({comma, item}), std::max<std::int64_t>(min - 1, 0),
                                max == Expr::kUnbounded ? Expr::kUnbounded : max - 1);
    ExprPtr items = sequence({item, more, ws()});
    if (min == 0) items = optional(items);
    return sequence({literal("["), ws(), items, literal("]")});
  }

  static inline const std::set<std::string, std::less<>> kHandled = {"type",
                                                                     "properties",
                                                                     "required",
                                                                     "additionalProperties",
                                                                     "enum",
                                                                     "const",
                                                                     "anyOf",
                                                                     "oneOf",
                                                                     "allOf",
                                                                     "$ref",
                                                                     "$defs",
                                                                     "definitions",
                                                                     "items",
                                                                     "minItems",
                                                                     "maxItems",
                                                                     "minLength",
                                                                     "maxLength",
                                                                     "pattern",
                                                                     "format",
                                                                     "minimum",
                                                                     "maximum",
                                                                     "exclusiveMinimum",
                                                                     "exclusiveMaximum",
                                                                     "multipleOf",
                                                                     "minProperties",
                                                                     "maxProperties",
                                                                     "patternProperties",
                                                                     "propertyNames",
                                                                     "dependentRequired",
                                                                     "prefixItems",
                                                                     "contains",
                                                                     "uniqueItems",
                                                                     "minContains",
                                                                     "maxContains",
                                                                     "unevaluatedItems"};

  const Schema* root_ = nullptr;
  std::string scope_;
  RuleSet rules_;
  std::set<std::string> defined_;
  bool have_json_value_ = false;
  int objects_ = 0;
};

Schema parse_schema(std::string_view text, std::string_view where) {
  return parse_ordered_json_text(text, fmt::format("json_schema{}", where));
}

}  // namespace

RuleSet json_schema_rules(std::string_view schema_text) {
  const Schema schema = parse_schema(schema_text, "");
  SchemaConverter converter;
  ExprPtr root = converter.schema_rule(schema, "", "");
  return std::move(converter).finish(std::move(root));
}

RuleSet tagged_schema_rules(const std::vector<TaggedSchema>& tags, const std::vector<std::string>& triggers) {
  if (tags.empty()) fail("structural_tags: at least one tag is needed");
  std::vector<Schema> schemas;
  for (std::size_t i = 0; i < tags.size(); ++i) {
    schemas.push_back(parse_schema(tags[i].schema, fmt::format(" of structural_tags[{}]", i)));
  }
  SchemaConverter converter;
  std::vector<ExprPtr> tagged;                                       // each tag whole: begin, value, end
  std::vector<std::vector<ExprPtr>> after_trigger(triggers.size());  // each tag past its trigger
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const std::string where = fmt::format("structural_tags[{}]", i);
    ExprPtr value = converter.schema_rule(schemas[i], fmt::format("tag{}-", i), where);
    if (triggers.empty()) {
      tagged.push_back(sequence({literal(tags[i].begin), std::move(value), literal(tags[i].end)}));
      continue;
    }
    const std::optional<std::size_t> trigger = opening_trigger(triggers, tags[i].begin);
    if (!trigger) fail("{}.begin '{}' does not start with the first trigger it contains", where, tags[i].begin);
    const std::string rest = tags[i].begin.substr(triggers[*trigger].size());
    after_trigger[*trigger].push_back(sequence({literal(rest), std::move(value), literal(tags[i].end)}));
  }
  if (triggers.empty()) return std::move(converter).finish(alternation(std::move(tagged)));
  std::vector<Trigger> dispatch;
  for (std::size_t t = 0; t < triggers.size(); ++t) {
    if (after_trigger[t].empty()) fail("triggers[{}] '{}' opens no structural tag", t, triggers[t]);
    dispatch.push_back({triggers[t], alternation(std::move(after_trigger[t]))});
  }
  std::vector<Rule> free_text = tag_dispatch_rules(dispatch, "");
  const std::string start = free_text.front().name;
  RuleSet rules = std::move(converter).finish(rule_ref(start));
  std::move(free_text.begin(), free_text.end(), std::back_inserter(rules.rules));
  return rules;
}

RuleSet json_object_rules() { return SchemaConverter().any_object(); }

}  // namespace kiln::grammar
