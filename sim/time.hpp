// Time in the simulation: integer nanoseconds in strong types.
// True time (`Time`) and what a node's clock reads (`LocalTime`) are different types; only the
// clock model (sim/clock.hpp) converts between them. Durations are std::chrono::nanoseconds so that
// literals such as 150ms work in code. No floating point anywhere in the kernel's notion of time.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace electsim::sim {

using Duration = std::chrono::nanoseconds;
using namespace std::chrono_literals;

// A point on an axis measured in integer nanoseconds from the run's start. `Tag` keeps the true
// axis and a node's local axis apart at compile time.
template <typename Tag>
struct TimePoint {
  std::int64_t ns = 0;

  constexpr TimePoint() = default;
  constexpr explicit TimePoint(std::int64_t n) : ns(n) {}
  constexpr explicit TimePoint(Duration d) : ns(d.count()) {}

  constexpr Duration since_start() const { return Duration(ns); }
  constexpr auto operator<=>(const TimePoint&) const = default;
  constexpr TimePoint operator+(Duration d) const { return TimePoint(ns + d.count()); }
  constexpr TimePoint operator-(Duration d) const { return TimePoint(ns - d.count()); }
  constexpr Duration operator-(TimePoint o) const { return Duration(ns - o.ns); }
  constexpr TimePoint& operator+=(Duration d) {
    ns += d.count();
    return *this;
  }
  static constexpr TimePoint max() { return TimePoint(INT64_MAX); }
};

struct TrueTag {};
struct LocalTag {};
using Time = TimePoint<TrueTag>;        // true (simulation) time
using LocalTime = TimePoint<LocalTag>;  // what a node's clock reads

// Parses "150ms", "5s", "1.5s", "2m", "1h", "250us", "10ns", "0". Returns nullopt when the text is
// not a duration; negative values parse (callers decide whether they are allowed).
std::optional<Duration> parse_duration(std::string_view text);

// Formats a duration the way a person writes it: "150ms", "5s", "1.25s", "2m30s", "0s".
std::string format_duration(Duration d);

// Seconds with millisecond precision, "12.345s", for human reports.
std::string format_seconds(Duration d);

}  // namespace electsim::sim
