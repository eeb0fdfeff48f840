// End-to-end tests of the run timeline: real scenarios through the kernel with the analyzer and
// the timeline recorder attached the way runner/run.cpp attaches its observers, then the picture.
// The flagship must show the leader's GC pause, the split-brain, the rejected stale write and a
// failover of its measured length; a replicated store, its members and its leader's change. Set
// ELECTSIM_TIMELINE_DIR to a folder to keep the pictures.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include "analysis/analyzer.hpp"
#include "drawing/timeline.hpp"
#include "drawing/timeline_svg.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim;
using drawing::Timeline;
using sim::Duration;
using sim::Time;

constexpr std::int64_t kS = 1'000'000'000;

runner::Scenario load(std::string_view text, std::optional<std::string> variant = std::nullopt) {
  runner::LoadOptions options;
  options.variant = std::move(variant);
  runner::LoadResult loaded = runner::load_scenario_text(text, "<test>", options);
  std::string problems;
  for (const std::string& m : loaded.messages()) problems += m + "\n";
  INFO(problems);
  REQUIRE(loaded.scenario);
  return *loaded.scenario;
}

struct Pictured {
  analysis::Report report;
  Timeline timeline;
};

// One run with the timeline recorded beside the analyzer.
Pictured run_with_timeline(const runner::Scenario& scenario) {
  runner::RunOptions options;
  options.timeline = true;
  runner::RunResult result = runner::run_scenario(scenario, options);
  REQUIRE(result.timeline);
  return {std::move(result.report), std::move(*result.timeline)};
}

void keep(const std::string& name, const std::string& doc) {
  const char* dir = std::getenv("ELECTSIM_TIMELINE_DIR");
  if (dir == nullptr || *dir == 0) return;
  std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
  out << doc;
  CHECK(out.good());
}

// The duration a label such as ">failover 2.14s</text>" states, in ns.
std::optional<double> labelled_duration(const std::string& doc, const std::string& word) {
  const std::regex pattern(">" + word + " ([0-9.]+)(ns|us|ms|s|min|h)</text>");
  std::smatch m;
  if (!std::regex_search(doc, m, pattern)) return std::nullopt;
  const double value = std::stod(m[1]);
  const std::string unit = m[2];
  const double scale = unit == "ns"    ? 1.0
                       : unit == "us"  ? 1e3
                       : unit == "ms"  ? 1e6
                       : unit == "s"   ? 1e9
                       : unit == "min" ? 60e9
                                       : 3600e9;
  return value * scale;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

constexpr const char* kNineNodes = R"json({
  "name": "raft-nine-nodes",
  "description": "Nine Raft nodes through a leader crash, a partition that cuts the leader off with one follower, and a leader pause.",
  "seed": 3,
  "duration": "60s",
  "nodes": 9,
  "protocol": {"name": "raft"},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "200ms", "work": "5ms"},
  "faults": [
    {"at": "10s", "kind": "crash", "target": "leader", "duration": "8s"},
    {"at": "25s", "kind": "partition", "groups": [["leader", "follower"], ["rest"]], "duration": "15s"},
    {"at": "45s", "kind": "pause", "target": "leader", "duration": "3s"}
  ]
})json";

constexpr const char* kOneHour = R"json({
  "name": "lease-one-hour",
  "description": "An hour of a lease-elected leader under random pauses, crashes and partitions.",
  "seed": 5,
  "duration": "1h",
  "nodes": 5,
  "protocol": {"name": "lease", "ttl": "2s"},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "1s", "work": "5ms"},
  "random_faults": [
    {"kind": "pause", "target": "leader", "every": {"dist": "exponential", "mean": "4m"},
     "duration": {"dist": "uniform", "min": "1s", "max": "8s"}},
    {"kind": "crash", "target": "random", "every": {"dist": "exponential", "mean": "10m"},
     "duration": "30s"},
    {"kind": "partition", "groups": [["leader"], ["rest", "store"]],
     "every": {"dist": "exponential", "mean": "15m"}, "duration": "20s"}
  ]
})json";

constexpr const char* kStoreLeaderCrash = R"json({
  "name": "store-leader-crash",
  "description": "A three-member store loses its leader at 10s for 15s; the other two elect another.",
  "seed": 1,
  "duration": "40s",
  "nodes": 3,
  "protocol": {"name": "lease", "ttl": "3s"},
  "store": {"members": 3},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "100ms", "work": "5ms"},
  "faults": [{"at": "10s", "kind": "crash", "target": "store_leader", "duration": "15s"}]
})json";

}  // namespace

TEST_CASE("timeline run: the recorder beside the analyzer sees the run that run_scenario reports") {
  const runner::Scenario scenario = load(runner::flagship_scenario_text());
  const Pictured p = run_with_timeline(scenario);
  const runner::RunResult reference = runner::run_scenario(scenario, {});
  CHECK(p.report.split_brain_time == reference.report.split_brain_time);
  CHECK(p.report.events == reference.report.events);
  CHECK(p.timeline.summary.split_brain_time == reference.report.split_brain_time);
  CHECK(p.timeline.failovers.size() == reference.report.failovers.size());
  CHECK(p.timeline.lease_ttl == scenario.prepared.lease_ttl);
  CHECK(p.timeline.lease_judged_by_store == scenario.prepared.lease_judged_by_store);
}

TEST_CASE(
    "timeline run: the flagship picture shows the pause, the split-brain, the rejected "
    "stale write and the failover") {
  const runner::Scenario scenario = load(runner::flagship_scenario_text());
  const Pictured p = run_with_timeline(scenario);
  const Timeline& tl = p.timeline;

  // The leader paused at 4.9633s for 6s, and kept believing it led through the pause.
  REQUIRE(tl.pauses.size() == 1);
  const drawing::PauseSpan& pause = tl.pauses[0];
  CHECK(pause.start == Time(Duration(4'963'300'000)));
  CHECK(pause.end == Time(Duration(10'963'300'000)));
  bool led_through = false;
  for (const drawing::BeliefSpan& b : tl.beliefs) {
    if (b.node == pause.endpoint && b.role == sim::Role::leader && b.start <= pause.start &&
        b.end >= pause.end) {
      led_through = true;
    }
  }
  CHECK(led_through);

  // Split-brain stretches add up to the report's, and the frozen holder's write was rejected.
  REQUIRE_FALSE(tl.split_brain.empty());
  Duration total{0};
  for (const drawing::SplitBrainSpan& s : tl.split_brain) total += s.end - s.start;
  CHECK(total == p.report.split_brain_time);
  std::optional<drawing::SinkWriteMark> rejected;
  for (const drawing::SinkWriteMark& w : tl.writes) {
    if (!w.accepted && w.stale && w.writer == pause.endpoint) rejected = w;
  }
  REQUIRE(rejected);
  CHECK(rejected->at >= pause.end);

  // The store expired the frozen holder's lease, and the draining lease is drawn.
  bool expired = false;
  for (const drawing::LeaseHold& h : tl.leader_key) {
    if (h.holder == pause.endpoint && h.ended_by == drawing::HoldEnd::expired) expired = true;
  }
  CHECK(expired);

  const std::string doc = drawing::render_timeline_svg(tl);
  keep("timeline-flagship.svg", doc);
  CHECK(contains(doc, ">GC pause 6s</text>"));
  CHECK(contains(doc, ">split-brain "));
  CHECK(contains(doc, ">rejected t" + std::to_string(rejected->token) + "</text>"));
  CHECK(contains(doc, "class=\"draining\""));
  REQUIRE(p.report.failovers.size() == 1);
  REQUIRE(p.report.failovers[0].failover);
  const double measured = static_cast<double>(p.report.failovers[0].failover->count());
  const std::optional<double> shown = labelled_duration(doc, "failover");
  REQUIRE(shown);
  CHECK(*shown == Approx(measured).epsilon(0.01));
  CHECK(measured > 1.0 * kS);
  CHECK(measured < 4.0 * kS);
}

TEST_CASE(
    "timeline run: without fencing the flagship's stale write is accepted, circled and named an "
    "overwrite") {
  const runner::Scenario scenario = load(runner::flagship_scenario_text(), "no-fencing");
  const Pictured p = run_with_timeline(scenario);
  std::size_t stale_accepted = 0;
  std::size_t overwrites = 0;
  for (const drawing::SinkWriteMark& w : p.timeline.writes) {
    if (w.accepted && w.stale) ++stale_accepted;
    if (w.overwrite) ++overwrites;
  }
  CHECK(stale_accepted == p.report.stale_writes_accepted);
  CHECK(stale_accepted >= 1);
  CHECK(overwrites == p.report.stale_writes_overwriting);
  CHECK(overwrites >= 1);
  const std::string doc = drawing::render_timeline_svg(p.timeline);
  keep("timeline-flagship-no-fencing.svg", doc);
  CHECK(contains(doc, "class=\"write-stale\""));
  CHECK(contains(doc, ">overwrite t1</text>"));
  CHECK(contains(doc, "1 overwrite of newer data (corruption)"));
  CHECK_FALSE(contains(doc, "class=\"write-rejected\""));
  // With fencing nothing is overwritten, and the picture says no such thing.
  const Pictured fenced = run_with_timeline(load(runner::flagship_scenario_text()));
  const std::string fenced_doc = drawing::render_timeline_svg(fenced.timeline);
  CHECK_FALSE(contains(fenced_doc, "overwrite"));
}

TEST_CASE("timeline run: nine nodes through a crash, a partition and a pause") {
  const Pictured p = run_with_timeline(load(kNineNodes));
  const Timeline& tl = p.timeline;
  CHECK(tl.node_count == 9);
  CHECK(tl.downs.size() == 1);
  CHECK(tl.partitions.size() == 1);
  CHECK(tl.partitions[0].side_count == 2);
  const std::string doc = drawing::render_timeline_svg(tl);
  keep("timeline-nine.svg", doc);
  for (int n = 0; n < 9; ++n) CHECK(contains(doc, ">node " + std::to_string(n) + "</text>"));
  CHECK(contains(doc, ">crashed</text>"));
  CHECK(contains(doc, "data-side=\"B\""));
}

TEST_CASE("timeline run: a replicated store draws its members, its leader's crash and the next") {
  const Pictured p = run_with_timeline(load(kStoreLeaderCrash));
  const Timeline& tl = p.timeline;
  CHECK(tl.store_members == 3);
  // The crashed member led the store until 10s; a different member leads in a later term after.
  REQUIRE(tl.member_downs.size() == 1);
  const drawing::DownSpan& down = tl.member_downs[0];
  CHECK(down.start == Time(10 * kS));
  CHECK(down.end == Time(25 * kS));
  REQUIRE(tl.store_leaders.size() >= 2);
  CHECK(tl.store_leaders.size() == p.report.store.leader_elections);
  CHECK(tl.store_leaders[0].member == down.node);
  CHECK(tl.store_leaders[0].at < down.start);
  const drawing::StoreLeaderMark& next = tl.store_leaders[1];
  CHECK(next.at > down.start);
  CHECK(next.member != down.node);
  CHECK(next.term > tl.store_leaders[0].term);
  CHECK(next.previous == down.node);

  const std::string doc = drawing::render_timeline_svg(tl);
  keep("timeline-store-leader-crash.svg", doc);
  for (int m = 0; m < 3; ++m) CHECK(contains(doc, ">store:" + std::to_string(m) + "</text>"));
  const std::string next_name = tl.header.topology.name_of(next.member);
  CHECK(contains(doc, ">store leader \xE2\x86\x92 " + next_name + ", term " +
                          std::to_string(next.term) + "</text>"));
  CHECK(contains(doc, ">L t" + std::to_string(next.term) + "</text>"));
  CHECK(contains(doc, ">crashed</text>"));
}

TEST_CASE("timeline run: an hour-long run renders with an axis in minutes") {
  const Pictured p = run_with_timeline(load(kOneHour));
  const Timeline& tl = p.timeline;
  CHECK(tl.duration == Duration(3600 * kS));
  CHECK(tl.faults.size() >= 5);
  const std::string doc = drawing::render_timeline_svg(tl);
  keep("timeline-hour.svg", doc);
  CHECK(contains(doc, "min</text>"));
  CHECK(doc.size() < 3'000'000);
}

TEST_CASE("timeline run: compare panels of every protocol on the partition scenario") {
  std::vector<Pictured> runs;
  std::vector<std::string> names;
  for (const std::string protocol : {"bully", "ring", "raft", "lease"}) {
    runner::LoadOptions options;
    options.protocol = protocol;
    std::ifstream in(std::string(std::getenv("ELECTSIM_SOURCE_DIR") != nullptr
                                     ? std::getenv("ELECTSIM_SOURCE_DIR")
                                     : ".") +
                     "/scenarios/partition-minority-leader.json");
    REQUIRE(in.good());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    runner::LoadResult loaded = runner::load_scenario_text(text, "<partition>", options);
    REQUIRE(loaded.scenario);
    runs.push_back(run_with_timeline(*loaded.scenario));
    names.push_back(protocol);
  }
  std::vector<const Timeline*> timelines;
  for (const Pictured& p : runs) timelines.push_back(&p.timeline);
  const std::string doc = drawing::render_timelines_svg(timelines, names);
  keep("timeline-compare.svg", doc);
  for (const std::string& name : names) CHECK(contains(doc, ">" + name + "</text>"));
  CHECK(contains(doc, ">split-brain "));
}

TEST_CASE("timeline run: followers' fast clocks and a client-judged lease show in the picture") {
  const char* source = std::getenv("ELECTSIM_SOURCE_DIR");
  std::ifstream in(std::string(source != nullptr ? source : ".") +
                   "/scenarios/lease-clock-drift.json");
  REQUIRE(in.good());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const runner::Scenario scenario = load(text);
  const Pictured p = run_with_timeline(scenario);
  const Timeline& tl = p.timeline;
  REQUIRE(tl.clocks.size() == 5);
  // Followers' clocks run 25% fast: a second of true time reads 1.25s on node 1.
  CHECK(tl.local_at(1, Time(4 * kS)).ns - tl.local_at(1, Time(3 * kS)).ns == 1'250'000'000);
  CHECK(tl.local_at(0, Time(4 * kS)).ns - tl.local_at(0, Time(3 * kS)).ns == 1'000'000'000);
  REQUIRE_FALSE(tl.leader_key.empty());
  CHECK_FALSE(tl.leader_key.front().renewals.empty());  // the holder rewrites its record
  CHECK(tl.lease_judged_by_store == false);
  const std::string doc = drawing::render_timeline_svg(tl);
  keep("timeline-clock-drift.svg", doc);
  CHECK(contains(doc, ">clock +25%</text>"));
  CHECK(contains(doc, ">split-brain "));
}
