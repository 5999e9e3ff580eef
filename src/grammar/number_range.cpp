#include "grammar/number_range.hpp"

#include <algorithm>
#include <charconv>

#include "util/error.hpp"

namespace kiln::grammar {
namespace {

// A value times 10^scale, where scale is the number of fraction digits the language allows:
// every string of the language is a whole number of units. With at most 16 digits on each side
// of the point a value is below 10^32 units, well inside __int128.
using Units = __int128;

// Bounds whose magnitude passes 10^kClampDigits units are clamped there: still beyond anything
// the language holds, and far from overflow.
constexpr int kClampDigits = 34;

Units pow10(int n) {
  Units p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

Units digits_value(std::string_view digits) {
  if (digits.size() > kClampDigits) return pow10(kClampDigits);
  Units v = 0;
  for (const char c : digits) v = v * 10 + (c - '0');
  return v;
}

enum class Rounding : std::uint8_t { kFloor, kCeil };

// `text` (a bound's decimal text) times 10^scale, rounded to a whole number of units.
Units scaled(std::string_view text, int scale, Rounding rounding) {
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  std::string digits;
  int exponent = scale;  // value = digits * 10^exponent
  std::size_t i = 0;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') continue;
    digits += text[i];
  }
  if (const std::size_t point = text.find('.'); point != std::string_view::npos && point < i) {
    exponent -= static_cast<int>(i - point - 1);
  }
  if (i < text.size()) {
    std::string_view e = text.substr(i + 1);
    if (e.starts_with('+')) e.remove_prefix(1);
    int e_value = 0;
    if (std::from_chars(e.data(), e.data() + e.size(), e_value).ec != std::errc())
      fail("number_range: bound '{}' is not a JSON number", text);
    exponent += std::clamp(e_value, -1000, 1000);  // a double's exponent is within ±400
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  Units magnitude = 0;
  bool inexact = false;  // a fraction of a unit was dropped
  if (exponent >= 0) {
    magnitude = digits.empty() ? 0
                : digits.size() + static_cast<std::size_t>(exponent) > kClampDigits
                    ? pow10(kClampDigits)
                    : digits_value(digits) * pow10(exponent);
  } else {
    const std::size_t dropped = std::min(digits.size(), static_cast<std::size_t>(-exponent));
    const std::string_view kept = std::string_view(digits).substr(0, digits.size() - dropped);
    magnitude = digits_value(kept);
    inexact = digits.find_first_not_of('0', kept.size()) != std::string::npos;
  }
  const bool away_from_zero = inexact && (negative ? rounding == Rounding::kFloor : rounding == Rounding::kCeil);
  if (away_from_zero) ++magnitude;
  return negative ? -magnitude : magnitude;
}

// The bounds as whole units, inclusive, within the digit limit; nullopt when they cross.
std::optional<std::pair<Units, Units>> units_between(const NumberRange& range, int scale, int max_digits) {
  const Units limit = pow10(max_digits + scale) - 1;
  Units low = -limit;
  Units high = limit;
  if (range.minimum) low = std::max(low, scaled(*range.minimum, scale, Rounding::kCeil));
  if (range.exclusive_minimum) low = std::max(low, scaled(*range.exclusive_minimum, scale, Rounding::kFloor) + 1);
  if (range.maximum) high = std::min(high, scaled(*range.maximum, scale, Rounding::kFloor));
  if (range.exclusive_maximum) high = std::min(high, scaled(*range.exclusive_maximum, scale, Rounding::kCeil) - 1);
  if (low > high) return std::nullopt;
  return std::pair{low, high};
}

std::string padded(Units v, std::size_t width) {
  std::string s;
  for (; v > 0; v /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  return std::string(width - s.size(), '0') + s;
}

ExprPtr one_of(std::vector<ExprPtr> options) {
  return options.size() == 1 ? std::move(options[0]) : alternation(std::move(options));
}

// The strings with an integer part of int_digits digits whose digits, the fraction padded with
// zeros to `scale` digits, lie between `low` and `high` (equal length): the classic range
// decomposition, digit by digit. A string may stop anywhere in its fraction, and stopping reads
// as the rest being zeros; the point is written before the first fraction digit.
class PaddedRange {
 public:
  PaddedRange(std::string low, std::string high, std::size_t int_digits, int scale)
      : low_(std::move(low)), high_(std::move(high)), int_digits_(int_digits), scale_(scale) {}

  // Digits from position i on, when those before equal both bounds'.
  ExprPtr between(std::size_t i) const {
    if (zeros_from(i) && nines_from(i)) return any(i);
    std::vector<ExprPtr> options;
    if (i >= int_digits_ && zeros_from(i)) options.push_back(literal(""));
    const char a = low_[i];
    const char b = high_[i];
    if (a == b) {
      options.push_back(digit_then(i, a, a, between(i + 1)));
      return one_of(std::move(options));
    }
    options.push_back(digit_then(i, a, a, at_least(i + 1)));
    if (a + 1 < b) options.push_back(digit_then(i, a + 1, b - 1, any(i + 1)));
    options.push_back(digit_then(i, b, b, at_most(i + 1)));
    return one_of(std::move(options));
  }

 private:
  // Digits from position i on, when those before equal the low bound's (and are below high's).
  ExprPtr at_least(std::size_t i) const {
    if (zeros_from(i)) return any(i);
    const char a = low_[i];
    std::vector<ExprPtr> options = {digit_then(i, a, a, at_least(i + 1))};
    if (a < '9') options.push_back(digit_then(i, a + 1, '9', any(i + 1)));
    return one_of(std::move(options));
  }

  ExprPtr at_most(std::size_t i) const {
    if (nines_from(i)) return any(i);
    const char b = high_[i];
    std::vector<ExprPtr> options;
    if (i >= int_digits_) options.push_back(literal(""));
    options.push_back(digit_then(i, b, b, at_most(i + 1)));
    if (b > '0') options.push_back(digit_then(i, '0', b - 1, any(i + 1)));
    return one_of(std::move(options));
  }

  ExprPtr any(std::size_t i) const {
    const ExprPtr digit = char_class({{'0', '9'}});
    if (i > int_digits_) return repeat(digit, 0, static_cast<std::int64_t>(low_.size() - i));
    const ExprPtr fraction = scale_ > 0 ? optional(sequence({literal("."), repeat(digit, 1, scale_)})) : literal("");
    if (i == int_digits_) return fraction;
    const auto n = static_cast<std::int64_t>(int_digits_ - i);
    return sequence({repeat(digit, n, n), fraction});
  }

  ExprPtr digit_then(std::size_t i, char first, char last, ExprPtr rest) const {
    ExprPtr digit = char_class({{static_cast<char32_t>(first), static_cast<char32_t>(last)}});
    if (i == int_digits_) return sequence({literal("."), std::move(digit), std::move(rest)});
    return sequence({std::move(digit), std::move(rest)});
  }

  bool zeros_from(std::size_t i) const { return low_.find_first_not_of('0', i) == std::string::npos; }
  bool nines_from(std::size_t i) const { return high_.find_first_not_of('9', i) == std::string::npos; }

  std::string low_;
  std::string high_;
  std::size_t int_digits_;
  int scale_;
};

// Unsigned decimals from low to high units (0 <= low <= high), one integer-part length at a
// time, so that the integer part has no leading zero.
ExprPtr magnitudes(Units low, Units high, int scale, int max_digits) {
  std::vector<ExprPtr> options;
  for (int length = 1; length <= max_digits; ++length) {
    const Units first = std::max(low, length == 1 ? Units{0} : pow10(length - 1 + scale));
    const Units last = std::min(high, pow10(length + scale) - 1);
    if (first > last) continue;
    const auto width = static_cast<std::size_t>(length + scale);
    options.push_back(PaddedRange(padded(first, width), padded(last, width), length, scale).between(0));
  }
  return one_of(std::move(options));
}

std::optional<ExprPtr> in_range(const NumberRange& range, int scale, int max_digits) {
  const auto units = units_between(range, scale, max_digits);
  if (!units) return std::nullopt;
  const auto [low, high] = *units;
  std::vector<ExprPtr> options;
  // Negatives start one unit below zero: "-0" is left out.
  if (low < 0)
    options.push_back(sequence({literal("-"), magnitudes(std::max<Units>(-high, 1), -low, scale, max_digits)}));
  if (high >= 0) options.push_back(magnitudes(std::max<Units>(low, 0), high, scale, max_digits));
  return one_of(std::move(options));
}

}  // namespace

std::optional<ExprPtr> integer_in_range(const NumberRange& range, int max_digits) {
  return in_range(range, 0, max_digits);
}

std::optional<ExprPtr> decimal_in_range(const NumberRange& range, int max_digits) {
  return in_range(range, max_digits, max_digits);
}

}  // namespace kiln::grammar
