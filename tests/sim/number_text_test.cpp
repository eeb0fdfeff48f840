// The shortest text of a double, against the standard library's own std::to_chars where it has
// one (libstdc++, which the native builds use): the same characters for every value tried, so
// that a build whose library lacks it (libc++ 14, WebAssembly) prints what the native one prints.
#include <catch2/catch.hpp>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/number_text.hpp"
#include "sim/rng.hpp"

using namespace electsim::sim;

namespace {
std::string library_text(double x) {
  char buffer[400];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), x);
  REQUIRE(result.ec == std::errc());
  return std::string(buffer, result.ptr);
}
}  // namespace

TEST_CASE("shortest number: values a scenario writes read as they were written") {
  CHECK(shortest_number(0.5) == "0.5");
  CHECK(shortest_number(1.25) == "1.25");
  CHECK(shortest_number(2) == "2");
  CHECK(shortest_number(0.1) == "0.1");
  CHECK(shortest_number(1e-5) == "1e-05");
  CHECK(shortest_number(1e15) == "1e+15");
  CHECK(shortest_number(1234567) == "1234567");
  CHECK(shortest_number(-0.75) == "-0.75");
  CHECK(shortest_number(0) == "0");
  CHECK(shortest_number(-0.0) == "-0");
}

TEST_CASE("shortest number: the same characters as std::to_chars over every kind of double") {
  std::vector<double> values = {
      5e-324,
      2.2250738585072014e-308,
      std::numeric_limits<double>::max(),
      0.30000000000000004,
      123456789012345680.0,
      12345678901234567890.0,
      1e21,
      1e22,
      1e23,
      9007199254740993.0,
      0.001,
      0.0001,
      100,
      1e16,
      2.5e-7,
      1.5,
      3.0,
      7.0 / 3.0,
  };
  // Every power of two, where the gap to the double below halves (the hard case for choosing
  // the shortest digits), and its neighbours.
  for (int e = -1074; e <= 1023; ++e) {
    const double p = std::ldexp(1.0, e);
    values.push_back(p);
    values.push_back(std::nextafter(p, 0.0));
    values.push_back(std::nextafter(p, INFINITY));
  }
  // Short decimals, as files hold them, at every scale.
  for (int k = 0; k < 2000; ++k) {
    values.push_back(k / 1000.0);
    values.push_back(k * 1e-9);
    values.push_back(k * 1e12);
  }
  // Random bit patterns: every exponent and mantissa.
  Rng rng(42, StreamPurpose::bench, 7);
  for (int k = 0; k < 50000; ++k) {
    const std::uint64_t bits = (static_cast<std::uint64_t>(rng.below(1u << 31)) << 33) ^
                               (static_cast<std::uint64_t>(rng.below(1u << 31)) << 2) ^
                               rng.below(4);
    const double x = std::bit_cast<double>(bits);
    if (std::isfinite(x)) values.push_back(x);
  }
  std::size_t differing = 0;
  for (const double x : values) {
    for (const double v : {x, -x}) {
      if (shortest_number(v) != library_text(v)) {
        if (++differing <= 5) {
          INFO("value " << library_text(v));
          CHECK(shortest_number(v) == library_text(v));
        }
      }
    }
  }
  CHECK(differing == 0);
}
