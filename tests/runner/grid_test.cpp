// Sweep axes, seed ranges, shards and percentiles: what a user types and what it means.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "analysis/stats.hpp"
#include "runner/grid.hpp"

using namespace electsim;
using Values = std::vector<std::string>;

TEST_CASE("grid: lists and ranges expand to the values a user means") {
  const auto [text, path, values, kind] =
      GENERATE(table<std::string, std::string, Values, runner::AxisKind>({
          {"protocol.ttl=1s,2s,5s", "protocol.ttl", {"1s", "2s", "5s"}, runner::AxisKind::duration},
          {"protocol.ttl=1s..3s:500ms",
           "protocol.ttl",
           {"1s", "1.5s", "2s", "2.5s", "3s"},
           runner::AxisKind::duration},
          {"protocol.ttl=1s..30s:10s",
           "protocol.ttl",
           {"1s", "11s", "21s"},
           runner::AxisKind::duration},
          {"protocol.ttl=500ms,1s..2s:1s",
           "protocol.ttl",
           {"500ms", "1s", "2s"},
           runner::AxisKind::duration},
          {"nodes=3..9:2", "nodes", {"3", "5", "7", "9"}, runner::AxisKind::number},
          {"nodes=1..4", "nodes", {"1", "2", "3", "4"}, runner::AxisKind::number},
          {"network.loss=0.1..0.3:0.1",
           "network.loss",
           {"0.1", "0.2", "0.3"},
           runner::AxisKind::number},
          {"protocol.jitter=0..1:0.25",
           "protocol.jitter",
           {"0", "0.25", "0.5", "0.75", "1"},
           runner::AxisKind::number},
          {"protocol.fencing=true,false",
           "protocol.fencing",
           {"true", "false"},
           runner::AxisKind::category},
          {"faults.0.groups=[[0],[1,2]],[[0,1],[2]]",
           "faults.0.groups",
           {"[[0],[1,2]]", "[[0,1],[2]]"},
           runner::AxisKind::category},
          {"clocks.default.offset=-1s..1s:1s",
           "clocks.default.offset",
           {"-1s", "0s", "1s"},
           runner::AxisKind::duration},
          // Near the largest duration: stepping from the last value would overflow and wrap
          // below the end, and the range would never end.
          {"protocol.ttl=0s..2562047h:1500000h",
           "protocol.ttl",
           {"0s", "1500000h"},
           runner::AxisKind::duration},
          {"nodes=-922337203685477..922337203685477:922337203685477",
           "nodes",
           {"-922337203685477", "0", "922337203685477"},
           runner::AxisKind::number},
      }));
  INFO(text);
  const auto parsed = runner::parse_grid_axis(text);
  INFO(parsed.error);
  REQUIRE(parsed.value);
  CHECK(parsed.value->path == path);
  CHECK(parsed.value->values == values);
  CHECK(parsed.value->kind == kind);
  if (kind != runner::AxisKind::category) CHECK(parsed.value->numeric.size() == values.size());
}

TEST_CASE("grid: a duration axis keeps its values in nanoseconds for plotting") {
  const auto parsed = runner::parse_grid_axis("protocol.ttl=250ms,2s");
  REQUIRE(parsed.value);
  CHECK(parsed.value->numeric == std::vector<double>{250e6, 2e9});
}

TEST_CASE("grid: malformed axes are refused with what was expected") {
  const auto [text, expected] = GENERATE(table<std::string, std::string>({
      {"protocol.ttl", "expected path=values"},
      {"=1s,2s", "expected a scenario path"},
      {"protocol.ttl=1s..30s", "needs a step"},
      {"protocol.ttl=30s..1s:1s", "from <= to"},
      {"protocol.ttl=1s..3s:0s", "step above 0"},
      {"protocol.ttl=1s..3s:fast", "a duration as the step"},
      {"protocol.ttl=1s,,2s", "empty one"},
      {"protocol.ttl=1s,1s", "each value once"},
      {"network.loss=0.1..0.5", "needs a step"},
      {"nodes=a..b:1", "two durations"},
      {"protocol.ttl=1ns..1s:1ns", "the limit on grid values"},
      {"protocol.ttl=1s..2562047h:1ns", "the limit on grid values"},
      {"protocol.ttl=0..999999999999999:0.00000000000001", "fit 64 bits"},
  }));
  INFO(text);
  const auto parsed = runner::parse_grid_axis(text);
  CHECK_FALSE(parsed.value);
  CHECK_THAT(parsed.error, Catch::Contains(expected));
}

TEST_CASE("grid: seeds are a count from 1 or an inclusive range") {
  auto a = runner::parse_seed_range("200");
  REQUIRE(a.value);
  CHECK(a.value->first == 1);
  CHECK(a.value->last == 200);
  CHECK(a.value->count() == 200);
  auto b = runner::parse_seed_range("1000..1009");
  REQUIRE(b.value);
  CHECK(b.value->first == 1000);
  CHECK(b.value->count() == 10);
  for (const char* bad : {"0", "9..5", "x", "", "1..", "-3"}) {
    INFO(bad);
    const auto r = runner::parse_seed_range(bad);
    CHECK_FALSE(r.value);
    CHECK_FALSE(r.error.empty());
  }
}

TEST_CASE("grid: shard i of n owns every n-th run and the shards cover each run once") {
  const auto s = runner::parse_shard("2/3");
  REQUIRE(s.value);
  std::vector<int> owners(10, 0);
  for (std::uint64_t i = 1; i <= 3; ++i) {
    const runner::Shard shard{i, 3};
    for (std::uint64_t run = 0; run < owners.size(); ++run) owners[run] += shard.owns(run) ? 1 : 0;
  }
  CHECK(owners == std::vector<int>(10, 1));
  CHECK(s.value->owns(1));
  CHECK(s.value->owns(4));
  CHECK_FALSE(s.value->owns(0));
  for (const char* bad : {"0/4", "5/4", "4", "a/b", "1/0", ""}) {
    INFO(bad);
    CHECK_FALSE(runner::parse_shard(bad).value);
  }
}

TEST_CASE("stats: nearest-rank percentiles on known inputs") {
  using Samples = std::vector<std::int64_t>;
  const auto [samples, percent, expected] = GENERATE(table<Samples, int, std::int64_t>({
      {{1, 2, 3, 4}, 50, 2},
      {{1, 2, 3, 4}, 51, 3},
      {{1, 2, 3, 4}, 100, 4},
      {{1, 2, 3, 4}, 1, 1},
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 91, 10},
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
      {{7}, 50, 7},
      {{7}, 99, 7},
      {{15, 20, 35, 40, 50}, 30, 20},
      {{15, 20, 35, 40, 50}, 40, 20},
      {{15, 20, 35, 40, 50}, 50, 35},
  }));
  INFO("p" << percent);
  CHECK(analysis::nearest_rank_percentile(samples, percent) == expected);
}

TEST_CASE("stats: a percentile of nothing is no value") {
  CHECK_FALSE(analysis::nearest_rank_percentile({}, 50));
  CHECK_FALSE(analysis::nearest_rank_percentile({1, 2}, 0));
  CHECK_FALSE(analysis::nearest_rank_percentile({1, 2}, 101));
}

TEST_CASE("stats: p99 of 1000 samples is the 990th smallest") {
  std::vector<std::int64_t> samples;
  for (std::int64_t i = 1; i <= 1000; ++i) samples.push_back(i * 10);
  CHECK(analysis::nearest_rank_percentile(samples, 99) == 9900);
  CHECK(analysis::nearest_rank_percentile(samples, 50) == 5000);
}
