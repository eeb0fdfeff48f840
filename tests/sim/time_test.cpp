// Duration text: what parse_duration accepts and refuses, how format_duration and format_seconds
// write durations, and that formatting then parsing gives back every duration exactly.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "sim/rng.hpp"
#include "sim/time.hpp"

using namespace electsim::sim;

namespace {
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
}  // namespace

TEST_CASE("time: parse_duration reads each unit, decimals, compounds and a bare zero") {
  auto [text, ns] = GENERATE(table<std::string, std::int64_t>({
      {"0", 0},
      {"-0", 0},
      {"0s", 0},
      {"7ns", 7},
      {"250us", 250'000},
      {"150ms", 150'000'000},
      {"5s", 5'000'000'000},
      {"2m", 120'000'000'000},
      {"1h", 3'600'000'000'000},
      {"1.5s", 1'500'000'000},
      {"0.25ms", 250'000},
      {"0.05s", 50'000'000},
      {"1.000000001s", 1'000'000'001},
      {"1.50000000000000000000s", 1'500'000'000},
      {"1.5m", 90'000'000'000},
      {"0.1h", 360'000'000'000},
      {"0.0000000000025h", 9},
      {"1.5us", 1'500},
      {"2m30s", 150'000'000'000},
      {"1h30m", 5'400'000'000'000},
      {"1m1.5s", 61'500'000'000},
      {"1h2m3s4ms5us6ns", 3'723'004'005'006},
      {"-500ms", -500'000'000},
      {"-2m30s", -150'000'000'000},
      {"007ms", 7'000'000},
      {"9223372036854775807ns", kInt64Max},
      {"-9223372036854775808ns", kInt64Min},
      {"2562047h47m16.854775807s", kInt64Max},
  }));
  INFO("text=" << text);
  const std::optional<Duration> d = parse_duration(text);
  REQUIRE(d.has_value());
  CHECK(d->count() == ns);
}

TEST_CASE("time: parse_duration refuses malformed, unknown, too fine and overflowing text") {
  auto text = GENERATE(as<std::string>{}, "", "-", "--1s", "+1s", " 1s", "1s ", "1 s", "1", "00",
                       "1x", "1S", "1sec", "1µs", "s", "1.s", ".5s", "1..5s", "1.5.5s",
                       "1.0000000001s", "1.5ns", "0.0001us", "0.00000000000001h", "1ns5ms", "1s1s",
                       "30s2m", "1ms-", "1s-2ms", "9223372036854775808ns", "-9223372036854775809ns",
                       "3000000h", "99999999999999999999ns", "2562047h47m16.854775808s");
  INFO("text=" << text);
  CHECK_FALSE(parse_duration(text).has_value());
}

TEST_CASE("time: format_duration writes the shortest natural text") {
  auto [ns, text] = GENERATE(table<std::int64_t, std::string>({
      {0, "0s"},
      {7, "7ns"},
      {250'000, "250us"},
      {1'500, "1.5us"},
      {1'500'000, "1.5ms"},
      {150'000'000, "150ms"},
      {5'000'000'000, "5s"},
      {1'250'000'000, "1.25s"},
      {1'000'000'001, "1.000000001s"},
      {150'000'000'000, "2m30s"},
      {120'000'000'000, "2m"},
      {3'600'000'000'000, "1h"},
      {5'400'000'000'000, "1h30m"},
      {3'600'500'000'000, "1h500ms"},
      {61'500'000'000, "1m1.5s"},
      {-500'000'000, "-500ms"},
      {-150'000'000'000, "-2m30s"},
      {kInt64Max, "2562047h47m16.854775807s"},
      {kInt64Min, "-2562047h47m16.854775808s"},
  }));
  INFO("ns=" << ns);
  CHECK(format_duration(Duration(ns)) == text);
}

TEST_CASE("time: parse_duration(format_duration(d)) == d for many seeded durations") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  INFO("seed=" << seed);
  Rng rng(seed, StreamPurpose::bench, 0);
  // Whole multiples of each unit, and arbitrary values across the full range, so that both the
  // short forms and the long compound forms are exercised.
  constexpr std::int64_t kUnits[] = {
      1, 1'000, 1'000'000, 1'000'000'000, 60'000'000'000, 3'600'000'000'000};
  for (int i = 0; i < 20'000; ++i) {
    std::int64_t ns = 0;
    switch (rng.below(4)) {
      case 0:
        ns = rng.between(kInt64Min, kInt64Max);
        break;
      case 1:
        ns = rng.between(-1'000'000'000'000, 1'000'000'000'000);
        break;
      case 2: {
        const std::int64_t unit = kUnits[rng.below(6)];
        ns = rng.between(-10'000, 10'000) * unit;
        break;
      }
      default:
        ns = rng.between(-2'000, 2'000) * 500'000;  // half milliseconds: "1.5ms", "-2.5ms"
        break;
    }
    const std::string text = format_duration(Duration(ns));
    INFO("ns=" << ns << " text=" << text);
    const std::optional<Duration> back = parse_duration(text);
    REQUIRE(back.has_value());
    REQUIRE(back->count() == ns);
  }
}

TEST_CASE("time: format_seconds writes three decimals rounded half away from zero") {
  auto [ns, text] = GENERATE(table<std::int64_t, std::string>({
      {0, "0.000s"},
      {12'345'000'000, "12.345s"},
      {12'344'500'000, "12.345s"},
      {12'344'499'999, "12.344s"},
      {499'999, "0.000s"},
      {500'000, "0.001s"},
      {-500'000, "-0.001s"},
      {-499'999, "0.000s"},
      {-1'234'500'000, "-1.235s"},
      {61'500'000'000, "61.500s"},
      {999'500'000, "1.000s"},
      {kInt64Max, "9223372036.855s"},
      {kInt64Min, "-9223372036.855s"},
  }));
  INFO("ns=" << ns);
  CHECK(format_seconds(Duration(ns)) == text);
}
