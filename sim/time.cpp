// Duration text: parsing "150ms", "1.5s", "2m30s" exactly with integers and formatting durations
// back in the shortest natural form, so that parse_duration(format_duration(d)) == d for every d.
// The grammar follows Go's time.ParseDuration, narrowed: units ns, us, ms, s, m, h, each at most
// once and largest first, and no fraction finer than a nanosecond.
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.hpp"

namespace electsim::sim {
namespace {

struct Unit {
  std::string_view name;
  std::uint64_t ns;
};

// Largest first: a compound duration must list its units in this order.
constexpr Unit kUnits[] = {
    {"h", 3'600'000'000'000}, {"m", 60'000'000'000}, {"s", 1'000'000'000},
    {"ms", 1'000'000},        {"us", 1'000},         {"ns", 1},
};
constexpr std::size_t kUnitCount = sizeof(kUnits) / sizeof(kUnits[0]);

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The fractional digits `frac` (value) with `digits` digits, times `unit_ns`, if that is a whole
// number of nanoseconds. The result is below unit_ns, so it never overflows.
std::optional<std::uint64_t> fraction_in_ns(std::uint64_t frac, int digits, std::uint64_t unit_ns) {
  std::uint64_t scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  const std::uint64_t g = std::gcd(unit_ns, scale);
  const std::uint64_t unit_reduced = unit_ns / g;
  const std::uint64_t scale_reduced = scale / g;
  // unit_reduced and scale_reduced are coprime: the product is whole only if scale_reduced | frac.
  if (frac % scale_reduced != 0) return std::nullopt;
  return frac / scale_reduced * unit_reduced;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text == "0") return Duration(0);
  if (text.empty()) return std::nullopt;

  // Accumulate the magnitude unsigned: -9223372036854775808ns must parse.
  const std::uint64_t limit =
      negative ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
               : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t total = 0;
  std::size_t next_unit = 0;  // units must come largest first, each at most once
  std::size_t pos = 0;
  while (pos < text.size()) {
    // Whole part: at least one digit.
    if (!is_digit(text[pos])) return std::nullopt;
    std::uint64_t whole = 0;
    while (pos < text.size() && is_digit(text[pos])) {
      if (__builtin_mul_overflow(whole, 10u, &whole)) return std::nullopt;
      if (__builtin_add_overflow(whole, static_cast<std::uint64_t>(text[pos] - '0'), &whole)) {
        return std::nullopt;
      }
      ++pos;
    }
    // Fraction: a '.' needs at least one digit after it.
    std::uint64_t frac = 0;
    int frac_digits = 0;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      const std::size_t frac_start = pos;
      while (pos < text.size() && is_digit(text[pos])) ++pos;
      std::string_view digits = text.substr(frac_start, pos - frac_start);
      if (digits.empty()) return std::nullopt;
      while (!digits.empty() && digits.back() == '0') digits.remove_suffix(1);
      // Trailing zeros carry no value. Beyond 13 significant places no unit gives whole
      // nanoseconds (an hour is 2^13 * 3^2 * 5^11 ns), so longer fractions are finer than a ns.
      if (digits.size() > 13) return std::nullopt;
      for (char c : digits) frac = frac * 10 + static_cast<std::uint64_t>(c - '0');
      frac_digits = static_cast<int>(digits.size());
    }
    // Unit.
    const std::size_t unit_start = pos;
    while (pos < text.size() && !is_digit(text[pos]) && text[pos] != '.') ++pos;
    const std::string_view unit_name = text.substr(unit_start, pos - unit_start);
    std::size_t u = next_unit;
    while (u < kUnitCount && kUnits[u].name != unit_name) ++u;
    if (u >= kUnitCount) return std::nullopt;  // unknown, repeated or out of order
    next_unit = u + 1;

    std::uint64_t part = 0;
    if (__builtin_mul_overflow(whole, kUnits[u].ns, &part)) return std::nullopt;
    if (frac != 0) {
      const std::optional<std::uint64_t> frac_ns = fraction_in_ns(frac, frac_digits, kUnits[u].ns);
      if (!frac_ns) return std::nullopt;
      if (__builtin_add_overflow(part, *frac_ns, &part)) return std::nullopt;
    }
    if (__builtin_add_overflow(total, part, &total)) return std::nullopt;
    if (total > limit) return std::nullopt;
  }
  // Two's complement: negating the unsigned magnitude gives the negative value, INT64_MIN included.
  const std::uint64_t bits = negative ? 0 - total : total;
  return Duration(static_cast<std::int64_t>(bits));
}

namespace {

// `value` in a unit of `unit_ns` (a power of ten), as "12.5" with trailing zeros trimmed.
void append_decimal(std::string& out, std::uint64_t value, std::uint64_t unit_ns) {
  out += std::to_string(value / unit_ns);
  std::uint64_t rest = value % unit_ns;
  if (rest == 0) return;
  out += '.';
  for (std::uint64_t place = unit_ns / 10; place > 0 && rest > 0; place /= 10) {
    out += static_cast<char>('0' + rest / place);
    rest %= place;
  }
}

// Below one minute: seconds, milliseconds, microseconds or nanoseconds, whichever is the largest
// unit that keeps a whole part ("1.25s", "150ms", "1.5ms", "250us", "7ns").
void append_below_minute(std::string& out, std::uint64_t ns) {
  if (ns >= 1'000'000'000) {
    append_decimal(out, ns, 1'000'000'000);
    out += 's';
  } else if (ns >= 1'000'000) {
    append_decimal(out, ns, 1'000'000);
    out += "ms";
  } else if (ns >= 1'000) {
    append_decimal(out, ns, 1'000);
    out += "us";
  } else {
    out += std::to_string(ns);
    out += "ns";
  }
}

}  // namespace

std::string format_duration(Duration d) {
  const std::int64_t n = d.count();
  if (n == 0) return "0s";
  std::string out;
  // Unsigned magnitude: the negation of INT64_MIN is representable only there.
  std::uint64_t magnitude = static_cast<std::uint64_t>(n);
  if (n < 0) {
    out += '-';
    magnitude = 0 - magnitude;
  }
  constexpr std::uint64_t kHour = 3'600'000'000'000;
  constexpr std::uint64_t kMinute = 60'000'000'000;
  if (magnitude >= kHour) {
    out += std::to_string(magnitude / kHour);
    out += 'h';
    magnitude %= kHour;
  }
  if (magnitude >= kMinute) {
    out += std::to_string(magnitude / kMinute);
    out += 'm';
    magnitude %= kMinute;
  }
  if (magnitude > 0) append_below_minute(out, magnitude);
  return out;
}

std::string format_seconds(Duration d) {
  const std::int64_t n = d.count();
  std::uint64_t magnitude = static_cast<std::uint64_t>(n);
  if (n < 0) magnitude = 0 - magnitude;
  // Milliseconds rounded half away from zero; the sign is applied to the magnitude afterwards.
  const std::uint64_t ms = magnitude / 1'000'000 + (magnitude % 1'000'000 >= 500'000 ? 1 : 0);
  std::string out;
  if (n < 0 && ms > 0) out += '-';
  out += std::to_string(ms / 1000);
  out += '.';
  const std::uint64_t millis = ms % 1000;
  out += static_cast<char>('0' + millis / 100);
  out += static_cast<char>('0' + millis / 10 % 10);
  out += static_cast<char>('0' + millis % 10);
  out += 's';
  return out;
}

}  // namespace electsim::sim
