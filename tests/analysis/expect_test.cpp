// Tests of expectations: the metric catalogue, metric values read from a report, bounds, metrics
// that were not observed, and breach messages that say which bound broke, by how much and when.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analysis/expect.hpp"
#include "tests/files.hpp"

namespace {

using namespace electsim;
using analysis::Expectation;
using analysis::Failover;
using analysis::MetricUnit;
using analysis::Report;
using sim::Duration;
using sim::Time;

Time ms(std::int64_t n) {
  return Time(n * 1'000'000);
}
Duration dms(std::int64_t n) {
  return Duration(n * 1'000'000);
}

Failover failover(std::int64_t fault_ms, std::optional<std::int64_t> new_leader_ms,
                  sim::NodeId old_leader = 0) {
  Failover f;
  f.fault = sim::FaultKind::crash;
  f.fault_at = ms(fault_ms);
  f.old_leader = old_leader;
  f.old_epoch = 3;
  if (new_leader_ms) {
    f.new_leader = 2;
    f.new_leader_at = ms(*new_leader_ms);
    f.failover = *f.new_leader_at - f.fault_at;
  }
  return f;
}

Expectation bound(std::string metric, std::optional<double> min, std::optional<double> max) {
  Expectation e;
  e.metric = std::move(metric);
  e.min = min;
  e.max = max;
  e.pointer = "/expect/" + e.metric;
  return e;
}

}  // namespace

TEST_CASE("expect: the catalogue names the metrics scenario files use, with their units") {
  auto [name, unit] = GENERATE(table<std::string, MetricUnit>({
      {"split_brain_time", MetricUnit::duration},
      {"split_brain_episodes", MetricUnit::count},
      {"same_epoch_leaders", MetricUnit::count},
      {"stale_writes_accepted", MetricUnit::count},
      {"stale_writes_rejected", MetricUnit::count},
      {"writes_accepted", MetricUnit::count},
      {"writes_rejected", MetricUnit::count},
      {"failovers", MetricUnit::count},
      {"failovers_unresolved", MetricUnit::count},
      {"failover_max", MetricUnit::duration},
      {"failover_median", MetricUnit::duration},
      {"write_outage_max", MetricUnit::duration},
      {"leaderless_fraction", MetricUnit::fraction},
      {"leaderless_time", MetricUnit::duration},
      {"first_leader_at", MetricUnit::duration},
      {"elections", MetricUnit::count},
      {"messages_sent", MetricUnit::count},
      {"messages_per_election", MetricUnit::rate},
      {"store_requests_per_second", MetricUnit::rate},
      {"sink_writes", MetricUnit::count},
  }));
  INFO(name);
  const analysis::MetricInfo* m = analysis::find_metric(name);
  REQUIRE(m != nullptr);
  CHECK(m->unit == unit);
  CHECK_FALSE(m->meaning.empty());
  // Every catalogued metric has a value in a report where everything was observed.
  Report r;
  r.first_leader_at = ms(1);
  r.elections = 2;
  r.failovers = {failover(10, 20)};
  r.failovers[0].write_outage = dms(5);
  CHECK(analysis::metric_value(r, name).has_value());
}

TEST_CASE("expect: catalogue names are unique and unknown names are not found") {
  std::vector<std::string> names;
  for (const auto& m : analysis::metric_catalogue()) names.push_back(m.name);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  CHECK(analysis::find_metric("split_brain") == nullptr);
  CHECK_FALSE(analysis::metric_value(Report{}, "split_brain").has_value());
}

TEST_CASE("expect: metrics without an observation have no value") {
  const Report r;  // no leader, no failover, no election
  for (const char* name : {"failover_max", "failover_median", "write_outage_max", "first_leader_at",
                           "messages_per_election"}) {
    INFO(name);
    CHECK_FALSE(analysis::metric_value(r, name).has_value());
  }
  CHECK(analysis::metric_value(r, "failovers") == 0.0);
  CHECK(analysis::metric_value(r, "split_brain_time") == 0.0);
}

TEST_CASE("expect: failover metrics count observed and unresolved failovers") {
  Report r;
  r.failovers = {failover(100, 400), failover(1000, std::nullopt), failover(2000, 2100),
                 failover(3000, 3200), failover(4000, 4700)};
  CHECK(analysis::metric_value(r, "failovers") == 4.0);
  CHECK(analysis::metric_value(r, "failovers_unresolved") == 1.0);
  CHECK(analysis::metric_value(r, "failover_max") == static_cast<double>(dms(700).count()));
  // Observed: 300, 100, 200, 700 ms: the median of an even count is the mean of the middle two.
  CHECK(analysis::metric_value(r, "failover_median") == static_cast<double>(dms(250).count()));
  r.failovers.push_back(failover(5000, 5900));
  CHECK(analysis::metric_value(r, "failover_median") == static_cast<double>(dms(300).count()));
}

TEST_CASE("expect: messages per election divides messages by elections") {
  Report r;
  r.messages_sent = 90;
  r.elections = 4;
  CHECK(analysis::metric_value(r, "messages_per_election") == Approx(22.5));
}

TEST_CASE("expect: a bound breaks only outside [min, max], inclusive") {
  auto [value, min, max, breaks] =
      GENERATE(table<std::uint64_t, std::optional<double>, std::optional<double>, bool>({
          {5, std::nullopt, 5.0, false},
          {6, std::nullopt, 5.0, true},
          {5, 5.0, std::nullopt, false},
          {4, 5.0, std::nullopt, true},
          {3, 2.0, 4.0, false},
          {1, 2.0, 4.0, true},
          {9, 2.0, 4.0, true},
          {9, std::nullopt, std::nullopt, false},
      }));
  Report r;
  r.writes_accepted = value;
  const std::vector<Expectation> e = {bound("writes_accepted", min, max)};
  const analysis::Verdict v = analysis::check(r, e);
  CHECK(v.ok() == !breaks);
  if (breaks) {
    REQUIRE(v.breaches.size() == 1);
    CHECK(v.breaches[0].actual == static_cast<double>(value));
    CHECK(v.breaches[0].expectation.pointer == "/expect/writes_accepted");
  }
}

TEST_CASE("expect: a bound on an unobserved metric passes unless it must be observed") {
  const Report r;
  Expectation e = bound("failover_max", std::nullopt, static_cast<double>(dms(100).count()));
  CHECK(analysis::check(r, std::vector<Expectation>{e}).ok());
  e.require_observed = true;
  const analysis::Verdict v = analysis::check(r, std::vector<Expectation>{e});
  REQUIRE(v.breaches.size() == 1);
  CHECK_FALSE(v.breaches[0].actual);
  CHECK_THAT(v.breaches[0].message,
             Catch::Contains("failover_max") && Catch::Contains("not observed"));
}

TEST_CASE("expect: a split-brain breach says by how much and where it first happened") {
  Report r;
  r.split_brain_time = dms(1200);
  r.split_brain_episodes = 1;
  r.first_split_brain = analysis::SplitBrainOccurrence{ms(12'345), {0, 3}, {4, 5}};
  const analysis::Verdict v =
      analysis::check(r, std::vector<Expectation>{bound("split_brain_time", std::nullopt, 0.0)});
  REQUIRE(v.breaches.size() == 1);
  CHECK(v.breaches[0].message ==
        "split_brain_time = 1.2s, above max 0s by 1.2s; first at 12.345s "
        "(node 0 epoch 4, node 3 epoch 5)");
}

TEST_CASE("expect: a duration below its minimum reports the shortfall in the metric's unit") {
  Report r;
  r.split_brain_time = dms(250);
  const analysis::Verdict v = analysis::check(
      r, std::vector<Expectation>{
             bound("split_brain_time", static_cast<double>(dms(1000).count()), std::nullopt)});
  REQUIRE(v.breaches.size() == 1);
  CHECK_THAT(v.breaches[0].message,
             Catch::StartsWith("split_brain_time = 250ms, below min 1s by 750ms"));
}

TEST_CASE("expect: a stale-write breach names the first stale write accepted") {
  Report r;
  r.stale_writes_accepted = 2;
  r.stale_writes_rejected = 1;
  r.stale_writes = {
      {ms(900), 1, 3, 4, false}, {ms(1500), 0, 2, 4, true}, {ms(1600), 0, 2, 4, true}};
  const analysis::Verdict v = analysis::check(
      r, std::vector<Expectation>{bound("stale_writes_accepted", std::nullopt, 0.0)});
  REQUIRE(v.breaches.size() == 1);
  CHECK_THAT(v.breaches[0].message,
             Catch::StartsWith("stale_writes_accepted = 2, above max 0 by 2"));
  CHECK_THAT(v.breaches[0].message,
             Catch::Contains("first at 1.500s (node 0 wrote token 2 after epoch 4"));
}

TEST_CASE("expect: an overwrite fails the verdict unless the expect block bounds it") {
  Report r;
  r.stale_writes_accepted = 1;
  r.stale_writes_overwriting = 1;
  r.first_overwrite = Report::Overwrite{ms(10'970), 4, 1, 3};
  r.split_brain_time = dms(4000);

  SECTION("no bound: corruption fails, and says when and what it overwrote") {
    const analysis::Verdict v = analysis::check(r, std::vector<Expectation>{});
    REQUIRE(v.breaches.size() == 1);
    CHECK(v.breaches[0].expectation.metric == "stale_writes_overwriting");
    CHECK_THAT(v.breaches[0].message, Catch::StartsWith("stale_writes_overwriting = 1"));
    CHECK_THAT(v.breaches[0].message, Catch::Contains("(corruption)"));
    CHECK_THAT(v.breaches[0].message,
               Catch::Contains("first at 10.970s (node 4 wrote token 1 after the sink had "
                               "accepted 3)"));
  }
  SECTION("bounds on other harm do not excuse it") {
    const analysis::Verdict v = analysis::check(
        r, std::vector<Expectation>{bound("stale_writes_accepted", 1.0, std::nullopt)});
    REQUIRE(v.breaches.size() == 1);
    CHECK(v.breaches[0].expectation.metric == "stale_writes_overwriting");
  }
  SECTION("a lab that expects the corruption states it, and passes") {
    const analysis::Verdict v = analysis::check(
        r, std::vector<Expectation>{bound("stale_writes_overwriting", 1.0, std::nullopt)});
    CHECK(v.ok());
  }
  SECTION("split-brain and stale writes alone never fail a verdict") {
    r.stale_writes_overwriting = 0;
    r.first_overwrite.reset();
    CHECK(analysis::check(r, std::vector<Expectation>{}).ok());
  }
}

TEST_CASE("expect: a failover breach names the failover concerned") {
  Report r;
  r.failovers = {failover(1000, 1500, 1), failover(10'000, 12'700, 4)};
  const analysis::Verdict v =
      analysis::check(r, std::vector<Expectation>{bound("failover_max", std::nullopt,
                                                        static_cast<double>(dms(2000).count()))});
  REQUIRE(v.breaches.size() == 1);
  CHECK_THAT(v.breaches[0].message,
             Catch::StartsWith("failover_max = 2.7s, above max 2s by 700ms; after crash of node 4 "
                               "(epoch 3) at 10.000s, node 2 leading at 12.700s"));
}

TEST_CASE("expect: an unresolved failover breach names the first unresolved one") {
  Report r;
  r.failovers = {failover(1000, 1500, 1), failover(3000, std::nullopt, 2)};
  const analysis::Verdict v = analysis::check(
      r, std::vector<Expectation>{bound("failovers_unresolved", std::nullopt, 0.0)});
  REQUIRE(v.breaches.size() == 1);
  CHECK_THAT(v.breaches[0].message,
             Catch::Contains("crash of node 2 (epoch 3) at 3.000s, no other leader"));
}

TEST_CASE("expect: fractions and rates are shown as numbers") {
  Report r;
  r.leaderless_fraction = 0.125;
  const analysis::Verdict v =
      analysis::check(r, std::vector<Expectation>{bound("leaderless_fraction", std::nullopt, 0.1)});
  REQUIRE(v.breaches.size() == 1);
  CHECK(v.breaches[0].message == "leaderless_fraction = 0.125, above max 0.1 by 0.025");
}

TEST_CASE("expect: every broken bound is reported, in the order stated") {
  Report r;
  r.elections = 5;
  r.same_epoch_leaders_total = 1;
  r.same_epoch_leaders = {{ms(700), 2, 0, 1}};
  const analysis::Verdict v = analysis::check(
      r, std::vector<Expectation>{bound("elections", 1.0, 1.0), bound("sink_writes", 0.0, 10.0),
                                  bound("same_epoch_leaders", std::nullopt, 0.0)});
  REQUIRE(v.breaches.size() == 2);
  CHECK(v.breaches[0].expectation.metric == "elections");
  CHECK(v.breaches[0].message == "elections = 5, above max 1 by 4");
  CHECK(v.breaches[1].message ==
        "same_epoch_leaders = 1, above max 0 by 1; first at 0.700s (nodes 0 and 1 in epoch 2)");
}

TEST_CASE("expect: docs/metrics.md's table of metrics is the catalogue's") {
  // On a difference, `electsim list metrics` prints the rows to paste.
  CHECK(electsim::testing::block_at(electsim::testing::source_file("docs/metrics.md"),
                                    "| metric | unit | not observed when |") ==
        analysis::metric_table_markdown());
}

TEST_CASE("expect: every metric of the catalogue reads its value from a report") {
  const Report empty;
  for (const analysis::MetricInfo& m : analysis::metric_catalogue()) {
    INFO(m.name);
    REQUIRE(m.value != nullptr);
    // A metric without a value in an empty report says when it has none.
    if (!m.value(empty)) CHECK_FALSE(m.absent_when.empty());
    CHECK(analysis::metric_value(empty, m.name) == m.value(empty));
  }
}
