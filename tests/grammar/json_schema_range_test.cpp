// JSON Schema's minimum, maximum, exclusiveMinimum and exclusiveMaximum on integers and numbers.
// Oracle: a bounded schema's grammar accepts a text exactly when the text has the type's syntax
// (a regex here) and its exact decimal value, compared on digit strings in this file, is within
// the bounds; checked on seeded random bounds and texts near and far from them.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <regex>

#include "grammar/grammar.hpp"
#include "grammar/json_schema.hpp"
#include "kiln/error.hpp"

namespace kiln::grammar {
namespace {

Grammar schema_grammar(const std::string& schema) { return lower(json_schema_rules(schema)); }

std::string error_of(const std::string& schema) {
  try {
    schema_grammar(schema);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A plain decimal's exact value: integer digits without leading zeros, fraction digits without
// trailing zeros, and a sign that zero never has.
struct Decimal {
  bool negative = false;
  std::string integer;
  std::string fraction;
};

Decimal decimal_of(std::string_view text) {
  Decimal d;
  d.negative = text.starts_with('-');
  if (d.negative) text.remove_prefix(1);
  const std::size_t point = text.find('.');
  d.integer = std::string(text.substr(0, point));
  if (point != std::string_view::npos) d.fraction = std::string(text.substr(point + 1));
  d.integer.erase(0, std::min(d.integer.find_first_not_of('0'), d.integer.size()));
  d.fraction.erase(d.fraction.find_last_not_of('0') + 1);
  if (d.integer.empty() && d.fraction.empty()) d.negative = false;
  return d;
}

// <0, 0 or >0 as a is below, equal to or above b.
int compare(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  int magnitude = 0;
  if (a.integer.size() != b.integer.size()) {
    magnitude = a.integer.size() < b.integer.size() ? -1 : 1;
  } else if (const int c = a.integer.compare(b.integer); c != 0) {
    magnitude = c;
  } else {
    magnitude = a.fraction.compare(b.fraction);  // no trailing zeros: plain string order
  }
  return a.negative ? -magnitude : magnitude;
}

struct Bounds {
  std::optional<std::string> minimum, exclusive_minimum, maximum, exclusive_maximum;
};

bool within(const Bounds& b, std::string_view text) {
  const Decimal x = decimal_of(text);
  const auto cmp = [&](const std::optional<std::string>& bound) { return compare(x, decimal_of(*bound)); };
  return (!b.minimum || cmp(b.minimum) >= 0) && (!b.exclusive_minimum || cmp(b.exclusive_minimum) > 0) &&
         (!b.maximum || cmp(b.maximum) <= 0) && (!b.exclusive_maximum || cmp(b.exclusive_maximum) < 0);
}

// The syntax of a bounded integer and a bounded number: 16 digits at most on each side of the
// point, no exponent, and no negative zero.
bool valid_syntax(bool integer, const std::string& text) {
  static const std::regex kInteger("-?(0|[1-9][0-9]{0,15})");
  static const std::regex kNumber("-?(0|[1-9][0-9]{0,15})(\\.[0-9]{1,16})?");
  if (!std::regex_match(text, integer ? kInteger : kNumber)) return false;
  return !(text.starts_with('-') && text.find_first_not_of("-0.") == std::string::npos);
}

std::string schema_of(bool integer, const Bounds& b) {
  std::string schema = integer ? R"({"type": "integer")" : R"({"type": "number")";
  const auto add = [&](const char* key, const std::optional<std::string>& bound) {
    if (bound) schema += std::string(", \"") + key + "\": " + *bound;
  };
  add("minimum", b.minimum);
  add("exclusiveMinimum", b.exclusive_minimum);
  add("maximum", b.maximum);
  add("exclusiveMaximum", b.exclusive_maximum);
  return schema + "}";
}

class RandomTexts {
 public:
  explicit RandomTexts(std::uint64_t seed) : rng_(seed) {}

  int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string digits(int n, bool leading_nonzero) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((i == 0 && leading_nonzero ? '1' + below(9) : '0' + below(10)));
    return s;
  }

  // A canonical decimal with at most 15 significant digits (so that a double holds it exactly
  // as written), or an integer of up to 17 digits.
  std::string bound(bool fractional) {
    const std::string sign = below(3) == 0 ? "-" : "";
    if (!fractional) return sign + (below(4) == 0 ? std::to_string(below(30)) : digits(1 + below(17), true));
    const int int_digits = below(6);
    const std::string integer = int_digits == 0 ? "0" : digits(int_digits, true);
    return sign + integer + "." + digits(1 + below(8), false);
  }

  // Texts near `near` (itself, with trailing zeros, a digit changed, one added or dropped,
  // negated), random canonical numbers, and junk.
  std::string candidate(const std::string& near) {
    static const char* kJunk[] = {"01", "1.", "-", "1e3", "-0", "-0.0", "0.0", "00", ".5", "+1", "1.5e2", "", "--1"};
    std::string s = near;
    switch (below(9)) {
      case 0: break;
      case 1: s += s.find('.') == std::string::npos ? ".0" : "00"; break;
      case 2:
      case 3: {
        const std::size_t at = s.find_first_of("0123456789", below(static_cast<int>(s.size())));
        if (at != std::string::npos) s[at] = static_cast<char>('0' + below(10));
        break;
      }
      case 4: s += static_cast<char>('0' + below(10)); break;
      case 5: s.pop_back(); break;
      case 6: s = s.starts_with('-') ? s.substr(1) : "-" + s; break;
      case 7: s = bound(below(2) == 0); break;
      default: s = kJunk[below(std::size(kJunk))];
    }
    return s;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(JsonSchemaRange, RandomBoundsAcceptExactlyTheTextsWithin) {
  RandomTexts random(20261205);
  int accepted = 0;
  int rejected = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const bool integer = random.below(2) == 0;
    const bool fractional_bounds = random.below(2) == 0;
    Bounds b;
    std::vector<std::string> near;
    const auto maybe = [&](std::optional<std::string>& bound) {
      if (random.below(3) != 0) return;
      bound = random.bound(fractional_bounds);
      near.push_back(*bound);
    };
    maybe(b.minimum);
    maybe(b.exclusive_minimum);
    maybe(b.maximum);
    maybe(b.exclusive_maximum);
    if (near.empty()) {
      b.maximum = random.bound(fractional_bounds);
      near.push_back(*b.maximum);
    }
    const std::string schema = schema_of(integer, b);
    std::optional<Grammar> g;
    try {
      g = schema_grammar(schema);
    } catch (const Error& e) {
      // Only bounds that leave nothing are refused: check that a sweep of texts finds nothing.
      EXPECT_NE(std::string(e.what()).find("lies within the bounds"), std::string::npos) << schema << e.what();
      for (int i = 0; i < 200; ++i) {
        const std::string text = random.candidate(near[random.below(static_cast<int>(near.size()))]);
        EXPECT_FALSE(valid_syntax(integer, text) && within(b, text)) << schema << " refused, yet holds " << text;
      }
      continue;
    }
    for (int i = 0; i < 200; ++i) {
      const std::string text = random.candidate(near[random.below(static_cast<int>(near.size()))]);
      const bool expected = valid_syntax(integer, text) && within(b, text);
      EXPECT_EQ(matches(*g, text), expected) << schema << " on '" << text << "'";
      ++(expected ? accepted : rejected);
    }
  }
  // Both verdicts are common, so neither side of the comparison is vacuous.
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(rejected, 10000);
}

TEST(JsonSchemaRange, IntegerBoundsRoundInward) {
  const Grammar g = schema_grammar(R"({"type": "integer", "minimum": 0.5, "exclusiveMaximum": 3.0})");
  for (const char* yes : {"1", "2"}) EXPECT_TRUE(matches(g, yes)) << yes;
  for (const char* no : {"0", "3", "-0", "1.0", "01"}) EXPECT_FALSE(matches(g, no)) << no;
  const Grammar negative = schema_grammar(R"({"type": "integer", "minimum": -12.5, "maximum": -0.5})");
  for (const char* yes : {"-12", "-1", "-7"}) EXPECT_TRUE(matches(negative, yes)) << yes;
  for (const char* no : {"-13", "0", "-0", "1"}) EXPECT_FALSE(matches(negative, no)) << no;
}

TEST(JsonSchemaRange, NumberTrailingZerosDoNotChangeTheValue) {
  const Grammar g = schema_grammar(R"({"type": "number", "exclusiveMinimum": -1, "exclusiveMaximum": 1.5})");
  for (const char* yes : {"1.49", "1.4999999999999999", "0", "0.000", "-0.9999", "1"}) {
    EXPECT_TRUE(matches(g, yes)) << yes;
  }
  for (const char* no : {"1.5", "1.50", "1.500000", "-1", "-1.0", "-0", "-0.0", "1e0", "1.", "2"}) {
    EXPECT_FALSE(matches(g, no)) << no;
  }
  const Grammar tiny = schema_grammar(R"({"type": "number", "minimum": 0, "maximum": 1e-3})");
  for (const char* yes : {"0.001", "0.0010", "0.0009999"}) EXPECT_TRUE(matches(tiny, yes)) << yes;
  for (const char* no : {"0.0011", "1e-3", "-0.0001"}) EXPECT_FALSE(matches(tiny, no)) << no;
}

TEST(JsonSchemaRange, OneSidedAndHugeBoundsKeepTheDigitLimit) {
  const Grammar above = schema_grammar(R"({"type": "integer", "minimum": 5})");
  EXPECT_TRUE(matches(above, "9999999999999999"));
  EXPECT_FALSE(matches(above, "10000000000000000"));
  const Grammar wide = schema_grammar(R"({"type": "integer", "minimum": -1e20, "maximum": 99999999999999999999})");
  EXPECT_TRUE(matches(wide, "-9999999999999999"));
  EXPECT_FALSE(matches(wide, "-10000000000000000"));
  const Grammar number = schema_grammar(R"({"type": "number", "maximum": 1e300})");
  EXPECT_TRUE(matches(number, "-9999999999999999.9999999999999999"));
  EXPECT_FALSE(matches(number, "1.00000000000000001"));
}

TEST(JsonSchemaRange, ErrorsNameTheBoundAndWhere) {
  EXPECT_NE(error_of(R"({"type": "object", "properties": {"x": {"type": "integer", "minimum": 3, "maximum": 2}}})")
                .find("#/properties/x: no integer of at most 16 digits lies within the bounds"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "number", "exclusiveMinimum": 2, "maximum": 2.0})").find("no number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "integer", "minimum": 1e17})").find("no integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "integer", "maximum": "3"})").find("#/maximum: must be a number"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "number", "exclusiveMinimum": true})").find("#/exclusiveMinimum: must be a number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type": "number", "minimum": 0, "multipleOf": 2})").find("'multipleOf' at #"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::grammar
