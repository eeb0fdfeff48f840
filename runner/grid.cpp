// Parsing of sweep axes, seed ranges and shards. Ranges of decimals are stepped in scaled integers,
// so "0.1..0.3:0.1" gives exactly 0.1, 0.2, 0.3 and never 0.30000000000000004.
#include "runner/grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "sim/time.hpp"

namespace electsim::runner {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits at commas outside brackets, braces and double quotes.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A decimal number as an integer count of 10^-decimals: "-1.25" is {-125, 2}.
struct Decimal {
  std::int64_t scaled = 0;
  int decimals = 0;
};

std::optional<Decimal> parse_decimal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  if (text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && fraction.empty())) return std::nullopt;
  if (whole.size() + fraction.size() > 15) return std::nullopt;  // exact in int64 and in double
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  for (char c : fraction) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  Decimal d;
  d.decimals = static_cast<int>(fraction.size());
  for (char c : whole) d.scaled = d.scaled * 10 + (c - '0');
  for (char c : fraction) d.scaled = d.scaled * 10 + (c - '0');
  if (negative) d.scaled = -d.scaled;
  return d;
}

// `d` in units of 10^-decimals, or nullopt when that does not fit 64 bits (as 15 digits
// written with 14 decimals would not).
std::optional<std::int64_t> rescale(const Decimal& d, int decimals) {
  std::int64_t v = d.scaled;
  for (int i = d.decimals; i < decimals; ++i) {
    if (__builtin_mul_overflow(v, 10, &v)) return std::nullopt;
  }
  return v;
}

// How many values "from..to:step" holds (from <= to, step > 0), computed before any is made:
// nullopt when it passes `room`. The difference is taken in unsigned 64 bits, where it is exact
// for any two int64 values.
std::optional<std::uint64_t> range_count(std::int64_t from, std::int64_t to, std::int64_t step,
                                         std::uint64_t room) {
  const std::uint64_t span = static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from);
  const std::uint64_t steps = span / static_cast<std::uint64_t>(step);
  if (steps >= room) return std::nullopt;
  return steps + 1;
}

// The i-th value of a range, from + i*step, which lies between from and to and so cannot
// overflow; computed unsigned so that no intermediate can either.
std::int64_t range_value(std::int64_t from, std::int64_t step, std::uint64_t i) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(from) +
                                   i * static_cast<std::uint64_t>(step));
}

std::string format_decimal(std::int64_t scaled, int decimals) {
  if (decimals == 0) return fmt::format("{}", scaled);
  std::int64_t unit = 1;
  for (int i = 0; i < decimals; ++i) unit *= 10;
  const bool negative = scaled < 0;
  const std::uint64_t magnitude =
      negative ? static_cast<std::uint64_t>(-scaled) : static_cast<std::uint64_t>(scaled);
  std::string fraction =
      fmt::format("{:0{}}", magnitude % static_cast<std::uint64_t>(unit), decimals);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  std::string text =
      fmt::format("{}{}", negative ? "-" : "", magnitude / static_cast<std::uint64_t>(unit));
  if (!fraction.empty()) {
    text += ".";
    text += fraction;
  }
  return text;
}

bool is_duration_text(std::string_view text) {
  // A duration needs a unit; the bare "0" is both a duration and a number.
  return sim::parse_duration(text).has_value();
}

std::optional<double> number_value(std::string_view text) {
  const auto d = parse_decimal(text);
  if (!d) return std::nullopt;
  double v = static_cast<double>(d->scaled);
  for (int i = 0; i < d->decimals; ++i) v /= 10;
  return v;
}

// Expands "from..to:step" into `out`; returns an error message or "".
std::string expand_range(std::string_view element, std::vector<std::string>& out) {
  const std::size_t dots = element.find("..");
  const std::string_view from_text = trim(element.substr(0, dots));
  std::string_view rest = element.substr(dots + 2);
  const std::size_t colon = rest.find(':');
  const std::string_view to_text = trim(rest.substr(0, colon));
  const std::optional<std::string_view> step_text =
      colon == std::string_view::npos
          ? std::nullopt
          : std::optional<std::string_view>(trim(rest.substr(colon + 1)));
  const std::string shown(element);

  const auto from_number = parse_decimal(from_text);
  const auto to_number = parse_decimal(to_text);
  if (from_number && to_number && (!step_text || parse_decimal(*step_text))) {
    int decimals = std::max(from_number->decimals, to_number->decimals);
    Decimal step{1, 0};
    if (step_text) {
      step = *parse_decimal(*step_text);
      decimals = std::max(decimals, step.decimals);
    } else if (decimals > 0) {
      return fmt::format("range {}: a range of decimals needs a step, such as {}:0.1", shown,
                         shown);
    }
    const auto from = rescale(*from_number, decimals);
    const auto to = rescale(*to_number, decimals);
    const auto by = rescale(step, decimals);
    if (!from || !to || !by) {
      return fmt::format(
          "range {}: expected numbers that, written with the step's {} decimals, fit 64 bits",
          shown, decimals);
    }
    if (*by <= 0) return fmt::format("range {}: expected a step above 0", shown);
    if (*from > *to) return fmt::format("range {}: expected from <= to", shown);
    const auto count = range_count(*from, *to, *by, kMaxGridValues - out.size());
    if (!count) {
      return fmt::format(
          "range {}: expected at most {} values on an axis (the limit on grid values)", shown,
          kMaxGridValues);
    }
    for (std::uint64_t i = 0; i < *count; ++i) {
      out.push_back(format_decimal(range_value(*from, *by, i), decimals));
    }
    return {};
  }

  const auto from_duration = sim::parse_duration(from_text);
  const auto to_duration = sim::parse_duration(to_text);
  if (!from_duration || !to_duration) {
    return fmt::format(
        "range {}: expected two durations (\"1s..30s:1s\") or two numbers (\"1..9:2\")", shown);
  }
  if (!step_text) {
    return fmt::format("range {}: a range of durations needs a step, such as {}:1s", shown, shown);
  }
  const auto step = sim::parse_duration(*step_text);
  if (!step) {
    return fmt::format("range {}: expected a duration as the step, found \"{}\"", shown,
                       *step_text);
  }
  if (step->count() <= 0) return fmt::format("range {}: expected a step above 0", shown);
  if (*from_duration > *to_duration) return fmt::format("range {}: expected from <= to", shown);
  const auto count = range_count(from_duration->count(), to_duration->count(), step->count(),
                                 kMaxGridValues - out.size());
  if (!count) {
    return fmt::format("range {}: expected at most {} values on an axis (the limit on grid values)",
                       shown, kMaxGridValues);
  }
  // By index, never by adding the step to the last value: near the largest duration that sum
  // would overflow and wrap around below `to`, and the range would never end.
  for (std::uint64_t i = 0; i < *count; ++i) {
    out.push_back(
        sim::format_duration(sim::Duration(range_value(from_duration->count(), step->count(), i))));
  }
  return {};
}

bool looks_like_range(std::string_view element) {
  if (element.empty() || element.front() == '[' || element.front() == '{' ||
      element.front() == '"') {
    return false;
  }
  return element.find("..") != std::string_view::npos;
}

}  // namespace

Parsed<GridAxis> parse_grid_axis(std::string_view text) {
  Parsed<GridAxis> result;
  const std::string shown(text);
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    result.error = fmt::format(
        "expected path=values, such as protocol.ttl=1s,2s,5s or protocol.ttl=1s..30s:1s, found "
        "\"{}\"",
        shown);
    return result;
  }
  GridAxis axis;
  axis.path = std::string(trim(text.substr(0, eq)));
  if (axis.path.empty()) {
    result.error = fmt::format(
        "expected a scenario path before '=', such as protocol.ttl, found \"{}\"", shown);
    return result;
  }
  const std::string_view values = text.substr(eq + 1);
  for (std::string_view element : split_top_level(values)) {
    element = trim(element);
    if (element.empty()) {
      result.error = "expected a value between every two commas, found an empty one";
      return result;
    }
    if (looks_like_range(element)) {
      const std::string error = expand_range(element, axis.values);
      if (!error.empty()) {
        result.error = error;
        return result;
      }
    } else {
      axis.values.emplace_back(element);
    }
    if (axis.values.size() > kMaxGridValues) {
      result.error = fmt::format("expected at most {} values on an axis (the limit on grid values)",
                                 kMaxGridValues);
      return result;
    }
  }
  std::set<std::string> seen;
  for (const std::string& v : axis.values) {
    if (!seen.insert(v).second) {
      result.error = fmt::format("expected each value once, found \"{}\" twice", v);
      return result;
    }
  }
  classify_axis(axis);
  result.value = std::move(axis);
  return result;
}

void classify_axis(GridAxis& axis) {
  axis.numeric.clear();
  const bool all_numbers =
      std::all_of(axis.values.begin(), axis.values.end(),
                  [](const std::string& v) { return number_value(v).has_value(); });
  const bool all_durations = std::all_of(axis.values.begin(), axis.values.end(),
                                         [](const std::string& v) { return is_duration_text(v); });
  if (all_numbers) {
    axis.kind = AxisKind::number;
    for (const std::string& v : axis.values) axis.numeric.push_back(*number_value(v));
  } else if (all_durations) {
    axis.kind = AxisKind::duration;
    for (const std::string& v : axis.values) {
      axis.numeric.push_back(static_cast<double>(sim::parse_duration(v)->count()));
    }
  } else {
    axis.kind = AxisKind::category;
  }
}

Parsed<SeedRange> parse_seed_range(std::string_view text) {
  Parsed<SeedRange> result;
  text = trim(text);
  const std::size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    const auto n = parse_unsigned(text);
    if (!n || *n == 0) {
      result.error = fmt::format(
          "expected a number of seeds from 1 (\"200\" is seeds 1 to 200) or a range \"A..B\", "
          "found \"{}\"",
          text);
      return result;
    }
    result.value = SeedRange{1, *n};
  } else {
    const auto first = parse_unsigned(trim(text.substr(0, dots)));
    const auto last = parse_unsigned(trim(text.substr(dots + 2)));
    if (!first || !last || *first > *last) {
      result.error = fmt::format(
          "expected a seed range \"A..B\" with whole numbers A <= B, found \"{}\"", text);
      return result;
    }
    if (*first == 0 && *last == UINT64_MAX) {
      result.error = "expected a seed range smaller than every 64-bit seed";
      return result;
    }
    result.value = SeedRange{*first, *last};
  }
  return result;
}

Parsed<Shard> parse_shard(std::string_view text) {
  Parsed<Shard> result;
  text = trim(text);
  const std::size_t slash = text.find('/');
  const auto index =
      slash == std::string_view::npos ? std::nullopt : parse_unsigned(text.substr(0, slash));
  const auto count =
      slash == std::string_view::npos ? std::nullopt : parse_unsigned(text.substr(slash + 1));
  if (!index || !count || *count == 0 || *index == 0 || *index > *count) {
    result.error =
        fmt::format("expected a shard \"i/n\" with 1 <= i <= n, such as 3/16, found \"{}\"", text);
    return result;
  }
  result.value = Shard{*index, *count};
  return result;
}

}  // namespace electsim::runner
