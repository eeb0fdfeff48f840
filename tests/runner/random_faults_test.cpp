// Tests of random faults and clock ranges (docs/scenario-format.md, `random_faults` and `clocks`):
// each run draws its faults and clocks from its root seed through runner::world_for_seed, the same
// (scenario, seed) always gives the same world, generators never shift each other's draws, and bad
// generators or ranges are located problems.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "runner/loader.hpp"
#include "runner/run.hpp"

namespace {

// The store's clock as a run's world has it.
electsim::sim::ClockConfig store_clock(const electsim::sim::WorldConfig& w) {
  return electsim::sim::server_clock(w, electsim::sim::kStoreEndpoint);
}

using electsim::params::Problem;
using electsim::runner::LoadOptions;
using electsim::runner::LoadResult;
using electsim::runner::Override;
using electsim::runner::Scenario;
using electsim::runner::world_for_seed;
using electsim::sim::Duration;
using electsim::sim::FaultKind;
using electsim::sim::FaultSpec;
using electsim::sim::Time;
using electsim::sim::WorldConfig;
using nlohmann::json;
using namespace std::chrono_literals;

const char* const kBase = R"({
  "name": "random",
  "duration": "100s",
  "nodes": 5,
  "protocol": {"name": "lease"}
})";

// The base scenario with `fragment` merged in (RFC 7386).
json with(const std::string& fragment) {
  json document = json::parse(kBase);
  document.merge_patch(json::parse(fragment));
  return document;
}

LoadResult load_result(const json& document, const LoadOptions& options = {}) {
  return electsim::runner::load_scenario_json(document, "random.json", options);
}

Scenario load(const json& document, const LoadOptions& options = {}) {
  const LoadResult r = load_result(document, options);
  for (const std::string& m : r.messages()) UNSCOPED_INFO(m);
  REQUIRE(r.scenario.has_value());
  return *r.scenario;
}

const Problem* problem_at(const LoadResult& r, const std::string& pointer) {
  const auto it = std::find_if(r.problems.begin(), r.problems.end(),
                               [&](const Problem& p) { return p.pointer == pointer; });
  return it == r.problems.end() ? nullptr : &*it;
}

std::vector<FaultSpec> of_kind(const std::vector<FaultSpec>& faults, FaultKind kind) {
  std::vector<FaultSpec> out;
  std::copy_if(faults.begin(), faults.end(), std::back_inserter(out),
               [&](const FaultSpec& f) { return f.kind == kind; });
  return out;
}

std::vector<std::int64_t> times_ns(const std::vector<FaultSpec>& faults) {
  std::vector<std::int64_t> out;
  for (const FaultSpec& f : faults) out.push_back(f.at.ns);
  return out;
}

std::vector<std::int64_t> durations_ns(const std::vector<FaultSpec>& faults) {
  std::vector<std::int64_t> out;
  for (const FaultSpec& f : faults) out.push_back(f.duration.count());
  return out;
}

const char* const kLeaderPauses = R"({"random_faults": [
  {"kind": "pause", "target": "leader", "every": {"dist": "exponential", "mean": "10s"},
   "duration": {"dist": "uniform", "min": "1s", "max": "5s"}}]})";

}  // namespace

TEST_CASE("random faults: the same seed gives the same faults, another seed different ones") {
  const Scenario s = load(with(kLeaderPauses));
  const WorldConfig a = world_for_seed(s, 3);
  const WorldConfig b = world_for_seed(s, 3);
  const WorldConfig c = world_for_seed(s, 4);
  REQUIRE(a.faults.size() >= 2);
  CHECK(a.seed == 3);
  CHECK(times_ns(a.faults) == times_ns(b.faults));
  CHECK(durations_ns(a.faults) == durations_ns(b.faults));
  CHECK(times_ns(a.faults) != times_ns(c.faults));
  CHECK(durations_ns(a.faults) != durations_ns(c.faults));
  for (const FaultSpec& f : a.faults) {
    CHECK(f.kind == FaultKind::pause);
    CHECK(f.target.kind == electsim::sim::TargetKind::leader);
  }
  // The scenario itself keeps only the fixed faults; the draws are the run's.
  CHECK(s.world.faults.empty());
}

TEST_CASE(
    "random faults: a Poisson generator makes about (until - from) / mean faults, all at or "
    "after from and before until") {
  const auto [from, until, low, high] = GENERATE(table<std::string, std::string, int, int>({
      {"0s", "10000s", 900, 1100},
      {"1000s", "6000s", 420, 580},
  }));
  const Scenario s = load(with(R"({"duration": "10000s", "random_faults": [
    {"kind": "heal", "every": {"dist": "exponential", "mean": "10s"}, "max": 5000,
     "from": ")" + from + R"(", "until": ")" +
                               until + R"("}]})"));
  const Time lo(electsim::sim::parse_duration(from).value());
  const Time hi(electsim::sim::parse_duration(until).value());
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    INFO("seed=" << seed << " from=" << from << " until=" << until);
    const WorldConfig w = world_for_seed(s, seed);
    CHECK(static_cast<int>(w.faults.size()) >= low);
    CHECK(static_cast<int>(w.faults.size()) <= high);
    for (const FaultSpec& f : w.faults) {
      CHECK(f.at >= lo);
      CHECK(f.at < hi);
    }
    CHECK(std::is_sorted(w.faults.begin(), w.faults.end(),
                         [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; }));
  }
}

TEST_CASE("random faults: a constant every is periodic and max caps the count") {
  // Every 1s from 0 in a 100s run: faults at 1s, 2s, ..., 99s unless max stops them earlier.
  const auto [max, count] = GENERATE(table<int, std::size_t>({{7, 7}, {99, 99}, {500, 99}}));
  const Scenario s = load(with(R"({"random_faults": [{"kind": "heal", "every": "1s", "max": )" +
                               std::to_string(max) + "}]}"));
  const WorldConfig w = world_for_seed(s, 1);
  INFO("max=" << max);
  REQUIRE(w.faults.size() == count);
  for (std::size_t i = 0; i < w.faults.size(); ++i) {
    CHECK(w.faults[i].at == Time(std::chrono::seconds(static_cast<std::int64_t>(i) + 1)));
  }
}

TEST_CASE("random faults: an every of 0 puts every fault at one time, up to max") {
  const Scenario s =
      load(with(R"({"random_faults": [{"kind": "heal", "every": "0s", "from": "3s", "max": 4}]})"));
  const WorldConfig w = world_for_seed(s, 1);
  REQUIRE(w.faults.size() == 4);
  for (const FaultSpec& f : w.faults) CHECK(f.at == Time(3s));
}

TEST_CASE("random faults: without max a generator stops at 1000 faults") {
  const Scenario s = load(with(R"({"random_faults": [{"kind": "heal", "every": "1ms"}]})"));
  CHECK(world_for_seed(s, 1).faults.size() == 1000);
}

TEST_CASE("random faults: durations drawn from a distribution vary and are never 0") {
  const Scenario s = load(with(R"({"random_faults": [
    {"kind": "pause", "target": 1, "every": "1s", "duration": {"dist": "uniform", "min": "0s", "max": "3ns"}},
    {"kind": "pause", "target": 2, "every": "1s", "duration": {"dist": "uniform", "min": "1s", "max": "5s"}},
    {"kind": "pause", "target": 3, "every": "1s", "duration": {"dist": "constant", "value": "0s"}},
    {"kind": "pause", "target": 4, "every": "1s", "duration": "2s"}]})"));
  const WorldConfig w = world_for_seed(s, 9);
  std::set<std::int64_t> tiny, wide, zero, fixed;
  for (const FaultSpec& f : w.faults) {
    CHECK(f.duration > Duration(0));
    const auto d = f.duration.count();
    switch (f.target.node) {
      case 1:
        tiny.insert(d);
        break;
      case 2:
        wide.insert(d);
        break;
      case 3:
        zero.insert(d);
        break;
      default:
        fixed.insert(d);
        break;
    }
  }
  // 0..3ns with 0 raised to 1ns: 99 draws see each of 1, 2, 3 and nothing else.
  CHECK(tiny == std::set<std::int64_t>{1, 2, 3});
  CHECK(wide.size() > 50);
  CHECK(*wide.begin() >= Duration(1s).count());
  CHECK(*wide.rbegin() <= Duration(5s).count());
  CHECK(zero == std::set<std::int64_t>{1});
  CHECK(fixed == std::set<std::int64_t>{Duration(2s).count()});
}

TEST_CASE("random faults: adding a second generator does not change the first one's faults") {
  const Scenario one = load(with(kLeaderPauses));
  json two_doc = with(kLeaderPauses);
  two_doc["random_faults"].push_back(
      json::parse(R"({"kind": "crash", "target": "random", "every": {"dist": "exponential",
                      "mean": "7s"}, "duration": {"dist": "uniform", "min": "1s", "max": "2s"}})"));
  const Scenario two = load(two_doc);
  for (std::uint64_t seed : {1u, 2u, 77u}) {
    INFO("seed=" << seed);
    const WorldConfig a = world_for_seed(one, seed);
    const WorldConfig b = world_for_seed(two, seed);
    CHECK(!of_kind(b.faults, FaultKind::crash).empty());
    CHECK(times_ns(a.faults) == times_ns(of_kind(b.faults, FaultKind::pause)));
    CHECK(durations_ns(a.faults) == durations_ns(of_kind(b.faults, FaultKind::pause)));
  }
}

TEST_CASE("random faults: the run's faults are sorted by time, fixed faults first at equal times") {
  const Scenario s = load(with(R"({
    "faults": [{"at": "20s", "kind": "crash", "target": 0}, {"at": "10s", "kind": "heal"}],
    "random_faults": [{"kind": "restart", "target": 1, "every": "10s", "max": 3},
                      {"kind": "stop", "target": 2, "every": "10s", "max": 1}]})"));
  REQUIRE(s.world.faults.size() == 2);
  const WorldConfig w = world_for_seed(s, 1);
  std::vector<std::pair<std::int64_t, FaultKind>> got;
  for (const FaultSpec& f : w.faults) got.emplace_back(Duration(f.at.ns) / 1s, f.kind);
  const std::vector<std::pair<std::int64_t, FaultKind>> want = {
      {10, FaultKind::heal},  {10, FaultKind::restart}, {10, FaultKind::stop},
      {20, FaultKind::crash}, {20, FaultKind::restart}, {30, FaultKind::restart}};
  CHECK(got == want);
}

TEST_CASE("random faults: random pauses of the leader show up as failovers in a run") {
  const Scenario s = load(with(R"({"duration": "200s", "protocol": {"name": "lease", "ttl": "2s"},
    "random_faults": [{"kind": "pause", "target": "leader", "from": "10s",
      "every": {"dist": "exponential", "mean": "30s"},
      "duration": {"dist": "uniform", "min": "5s", "max": "8s"}}]})"));
  const std::uint64_t seed = 11;
  const WorldConfig w = world_for_seed(s, seed);
  REQUIRE(w.faults.size() >= 2);
  electsim::runner::RunOptions options;
  options.seed = seed;
  const auto result = electsim::runner::run_scenario(s, options);
  REQUIRE(result.errors.empty());
  std::vector<std::int64_t> paused_at;
  for (const auto& f : result.report.failovers) {
    if (f.fault == FaultKind::pause) paused_at.push_back(f.fault_at.ns);
  }
  REQUIRE(!paused_at.empty());
  // Every pause the analysis saw is one the world drew.
  const std::vector<std::int64_t> drawn = times_ns(w.faults);
  for (std::int64_t t : paused_at) {
    INFO("pause at " << t << "ns");
    CHECK(std::find(drawn.begin(), drawn.end(), t) != drawn.end());
  }
}

TEST_CASE("random faults: a run with a seed from the options is the run the loader's seed gives") {
  const json document = with(kLeaderPauses);
  const Scenario base = load(document);
  LoadOptions seeded;
  seeded.seed = 42;
  const Scenario loaded_with_seed = load(document, seeded);
  electsim::runner::RunOptions options;
  options.seed = 42;
  const auto swept = electsim::runner::run_scenario(base, options);
  const auto single = electsim::runner::run_scenario(loaded_with_seed, {});
  CHECK(swept.trace_hash == single.trace_hash);
  const auto other = electsim::runner::run_scenario(base, {});
  CHECK(other.trace_hash != single.trace_hash);
}

TEST_CASE("random faults: a scenario without generators or ranges runs the world as loaded") {
  const Scenario s = load(with(R"({
    "clocks": {"default": {"drift_ppm": 20, "offset": "-3ms"}, "nodes": {"1": {"drift_ppm": 5}}},
    "faults": [{"at": "20s", "kind": "crash", "target": 0}, {"at": "10s", "kind": "heal"}]})"));
  const WorldConfig w = world_for_seed(s, 8);
  CHECK(w.seed == 8);
  // The file's order is kept (the kernel orders by time itself; fault indexes reach the trace).
  CHECK(times_ns(w.faults) == times_ns(s.world.faults));
  REQUIRE(w.clocks.size() == s.world.clocks.size());
  for (std::size_t i = 0; i < w.clocks.size(); ++i) {
    CHECK(w.clocks[i].drift_ppb == s.world.clocks[i].drift_ppb);
    CHECK(w.clocks[i].offset == s.world.clocks[i].offset);
  }
  CHECK(w.clocks[1].drift_ppb == 5000);
  CHECK(w.clocks[2].drift_ppb == 20000);
}

TEST_CASE("clock ranges: each node draws its own drift and offset within the range") {
  const Scenario s = load(with(R"({"clocks": {
    "default": {"drift_ppm": {"min": -100, "max": 100}, "offset": {"min": "-50ms", "max": "50ms"}},
    "nodes": {"2": {"drift_ppm": 7}, "3": {"offset": {"min": "1s", "max": "2s"}}},
    "store": {"drift_ppm": {"min": 0.5, "max": 0.5}, "offset": {"min": "-1s", "max": "-500ms"}}}})"));
  const WorldConfig a = world_for_seed(s, 5);
  const WorldConfig b = world_for_seed(s, 5);
  const WorldConfig c = world_for_seed(s, 6);
  REQUIRE(a.clocks.size() == 5);
  std::set<std::int64_t> drifts, offsets;
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    const auto& clock = a.clocks[i];
    CHECK(clock.drift_ppb == b.clocks[i].drift_ppb);
    CHECK(clock.offset == b.clocks[i].offset);
    if (i == 2) {
      CHECK(clock.drift_ppb == 7000);  // its own fixed drift replaces the default's range
    } else {
      CHECK(clock.drift_ppb >= -100'000);
      CHECK(clock.drift_ppb <= 100'000);
      CHECK(clock.drift_ppb != c.clocks[i].drift_ppb);
      drifts.insert(clock.drift_ppb);
    }
    if (i == 3) {
      CHECK(clock.offset >= 1s);
      CHECK(clock.offset <= 2s);
    } else {
      CHECK(clock.offset >= -50ms);
      CHECK(clock.offset <= 50ms);
      offsets.insert(clock.offset.count());
    }
  }
  CHECK(drifts.size() == 4);
  CHECK(offsets.size() == 4);
  CHECK(store_clock(a).drift_ppb == 500);
  CHECK(store_clock(a).offset >= -1s);
  CHECK(store_clock(a).offset <= -500ms);
  CHECK(store_clock(a).offset != store_clock(c).offset);
}

TEST_CASE("clock ranges: a fixed default with a range on one node draws only that node") {
  const Scenario s = load(with(R"({"clocks": {"default": {"drift_ppm": 30},
                          "nodes": {"4": {"drift_ppm": {"min": -200000, "max": 200000}}}}})"));
  std::set<std::int64_t> node4;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const WorldConfig w = world_for_seed(s, seed);
    for (std::size_t i = 0; i < 4; ++i) CHECK(w.clocks[i].drift_ppb == 30'000);
    node4.insert(w.clocks[4].drift_ppb);
    CHECK(store_clock(w).drift_ppb == 0);
  }
  CHECK(node4.size() == 4);
}

TEST_CASE("random faults and clock ranges: each bad input is a problem at its pointer") {
  const auto [fragment, pointer, part] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"random_faults": [{"at": "5s", "kind": "heal", "every": "1s"}]})", "/random_faults/0/at",
       "draw their times from \"every\""},
      {R"({"random_faults": [{"kind": "pause", "target": 0, "duration": "1s"}]})",
       "/random_faults/0/every", "the time between faults"},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "from": "20s", "until": "20s"}]})",
       "/random_faults/0/until", "after \"from\""},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "from": "30s", "until": "10s"}]})",
       "/random_faults/0/until", "after \"from\""},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "until": "101s"}]})",
       "/random_faults/0/until", "end of the run"},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "from": "100s"}]})",
       "/random_faults/0/from", "before the end of the run"},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "max": 0}]})", "/random_faults/0/max",
       "the limit on faults"},
      {R"({"random_faults": [{"kind": "heal", "every": {"dist": "uniform", "min": "2s"}}]})",
       "/random_faults/0/every/max", ""},
      {R"({"random_faults": [{"kind": "pause", "target": 0, "every": "1s",
                              "duration": {"dist": "exponential"}}]})",
       "/random_faults/0/duration/mean", ""},
      {R"({"random_faults": [{"kind": "pause", "target": 0, "every": "1s", "duration": "0s"}]})",
       "/random_faults/0/duration", "above 0"},
      {R"({"random_faults": [{"kind": "pause", "target": 9, "every": "1s", "duration": "1s"}]})",
       "/random_faults/0/target", "node id"},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "target": 1}]})",
       "/random_faults/0/target", "\"heal\" random fault"},
      {R"({"random_faults": {"kind": "heal"}})", "/random_faults", "array"},
      {R"({"random_faults": [{"kind": "heal", "every": "1s", "max": 60000},
                             {"kind": "heal", "every": "1s", "max": 40000}],
           "faults": [{"at": "1s", "kind": "heal"}]})",
       "/random_faults", "(the limit on faults)"},
      {R"({"clocks": {"default": {"drift_ppm": {"min": 100, "max": -100}}}})",
       "/clocks/default/drift_ppm/max", "at least the min"},
      {R"({"clocks": {"nodes": {"1": {"offset": {"min": "50ms", "max": "-50ms"}}}}})",
       "/clocks/nodes/1/offset/max", "at least the min"},
      {R"({"clocks": {"store": {"drift_ppm": {"min": -600000, "max": 0}}}})",
       "/clocks/store/drift_ppm/min", "-500000 to 500000"},
      {R"({"clocks": {"default": {"offset": {"min": "-1s"}}}})", "/clocks/default/offset/max",
       "both min and max"},
      {R"({"clocks": {"default": {"drift_ppm": {"min": 1, "max": 2, "step": 1}}}})",
       "/clocks/default/drift_ppm/step", "a drift range"},
      {R"({"sweep": [1, 2]})", "/sweep", "docs/sweeps.md"},
  }));
  INFO(fragment);
  const LoadResult r = load_result(with(fragment));
  for (const std::string& m : r.messages()) UNSCOPED_INFO(m);
  CHECK(!r.scenario.has_value());
  const Problem* p = problem_at(r, pointer);
  REQUIRE(p != nullptr);
  CHECK_THAT(p->format(), Catch::Contains(part));
  CHECK(r.problems.size() == 1);
}

TEST_CASE("random faults: the limit on faults counts every generator's max and the fixed faults") {
  // 99 fixed faults + 99901 = 100000 exactly: allowed; one more is not.
  const auto [extra, ok] = GENERATE(table<int, bool>({{99'901, true}, {99'902, false}}));
  json document = with(R"({"duration": "1000s"})");
  document["faults"] = json::array();
  for (int i = 0; i < 99; ++i) {
    document["faults"].push_back({{"at", std::to_string(i + 1) + "s"}, {"kind", "heal"}});
  }
  document["random_faults"] = json::array({{{"kind", "heal"}, {"every", "1s"}, {"max", extra}}});
  const LoadResult r = load_result(document);
  INFO("max=" << extra);
  CHECK(r.scenario.has_value() == ok);
  if (!ok) {
    const Problem* p = problem_at(r, "/random_faults");
    REQUIRE(p != nullptr);
    CHECK_THAT(p->found, Catch::Contains("100001"));
  }
}

TEST_CASE("random faults: --set reaches a generator's keys like any other value") {
  LoadOptions options;
  options.overrides.push_back(Override{"random_faults.0.every", "5s"});
  const Scenario s = load(with(kLeaderPauses), options);
  const WorldConfig w = world_for_seed(s, 1);
  REQUIRE(w.faults.size() == 19);  // 5s, 10s, ..., 95s
  CHECK(w.faults.front().at == Time(5s));
  CHECK(w.faults.back().at == Time(95s));

  LoadOptions bad;
  bad.overrides.push_back(Override{"random_faults.0.until", "200s"});
  const LoadResult r = load_result(with(kLeaderPauses), bad);
  const Problem* p = problem_at(r, "/random_faults/0/until");
  REQUIRE(p != nullptr);
  CHECK(p->context == "--set random_faults.0.until=200s");
}

TEST_CASE("loader: the sweep section is kept as written, null when absent") {
  const Scenario without = load(with("{}"));
  CHECK(without.sweep.is_null());
  CHECK(without.random_faults.empty());
  const Scenario with_sweep = load(with(R"({"sweep": {"seeds": 20, "anything": [1, "x"]}})"));
  CHECK(with_sweep.sweep == json::parse(R"({"seeds": 20, "anything": [1, "x"]})"));
}
