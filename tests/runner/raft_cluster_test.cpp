// Raft clusters over the real kernel, judged by the analysis: election safety over many seeds with
// random crashes and partitions, a minority that never elects, PreVote and CheckQuorum, and a
// table of network shapes in the style of etcd raft's TestLeaderElection.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "sim/rng.hpp"

using namespace electsim;
using namespace std::chrono_literals;

namespace {

runner::RunResult run_text(const std::string& text, std::uint64_t seed = 1) {
  runner::LoadOptions o;
  o.seed = seed;
  const runner::LoadResult loaded = runner::load_scenario_text(text, "<raft test>", o);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  return runner::run_scenario(*loaded.scenario, runner::RunOptions{});
}

std::string scenario(const std::string& protocol, const std::string& faults,
                     const std::string& duration = "20s") {
  return fmt::format(R"({{
    "name": "raft-cluster", "duration": "{}", "nodes": 5,
    "protocol": {{"name": "raft"{}}},
    "network": {{"latency": {{"dist": "uniform", "min": "1ms", "max": "10ms"}}}},
    "workload": {{"interval": "100ms"}},
    "faults": [{}]
  }})",
                     duration, protocol, faults);
}

}  // namespace

TEST_CASE(
    "raft cluster: at most one leader per term over 200 seeds of random crashes and partitions") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    // Each seed draws its own schedule: crashes with restarts, and partitions that heal.
    sim::Rng draw(seed, sim::StreamPurpose::bench, 7);
    std::string faults;
    for (int i = 0; i < 6; ++i) {
      const std::int64_t at_ms = draw.between(500, 25'000);
      const std::int64_t for_ms = draw.between(100, 4'000);
      if (!faults.empty()) faults += ",";
      if (draw.chance(500'000)) {
        faults +=
            fmt::format(R"({{"at": "{}ms", "kind": "crash", "target": "{}", "duration": "{}ms"}})",
                        at_ms, draw.chance(500'000) ? "leader" : "random", for_ms);
      } else {
        const auto a = draw.between(0, 4);
        const auto b = (a + 1 + draw.between(0, 3)) % 5;
        std::vector<std::int64_t> rest;
        for (std::int64_t n = 0; n < 5; ++n) {
          if (n != a && n != b) rest.push_back(n);
        }
        faults += fmt::format(
            R"({{"at": "{}ms", "kind": "partition", "groups": [[{}, {}], [{}, {}, {}]], "duration": "{}ms"}})",
            at_ms, a, b, rest[0], rest[1], rest[2], for_ms);
      }
    }
    const std::string protocol = draw.chance(500'000) ? R"(, "pre_vote": true)" : "";
    const runner::RunResult r = run_text(scenario(protocol, faults, "30s"), seed);
    INFO("seed=" << seed << " faults=" << faults);
    REQUIRE(r.errors.empty());
    CHECK(r.report.same_epoch_leaders.empty());
    CHECK(r.report.elections >= 1);
  }
}

TEST_CASE("raft cluster: a minority side never elects a leader") {
  const runner::RunResult r =
      run_text(scenario("", R"({"at": "0s", "kind": "partition", "groups": [[0, 1], [2, 3, 4]]})"));
  REQUIRE_FALSE(r.report.intervals.empty());
  for (const auto& i : r.report.intervals) {
    CHECK(i.node >= 2);
  }
}

TEST_CASE("raft cluster: who leads, by which nodes are down or cut off") {
  // etcd raft's TestLeaderElection: a network shape, and whether a leader is elected, among whom.
  auto [faults, leader_expected,
        allowed] = GENERATE(table<std::string, bool, std::set<sim::NodeId>>({
      {"", true, {0, 1, 2, 3, 4}},
      {R"({"at": "0s", "kind": "crash", "target": 3}, {"at": "0s", "kind": "crash", "target": 4})",
       true,
       {0, 1, 2}},
      {R"({"at": "0s", "kind": "crash", "target": 2}, {"at": "0s", "kind": "crash", "target": 3},
              {"at": "0s", "kind": "crash", "target": 4})",
       false,
       {}},
      {R"({"at": "0s", "kind": "isolate", "target": 0}, {"at": "0s", "kind": "isolate", "target": 1})",
       true,
       {2, 3, 4}},
  }));
  INFO(faults);
  const runner::RunResult r = run_text(scenario("", faults, "10s"));
  CHECK(r.report.first_leader_at.has_value() == leader_expected);
  for (const auto& i : r.report.intervals) CHECK(allowed.count(i.node) == 1);
  CHECK(r.report.same_epoch_leaders.empty());
}

TEST_CASE("raft cluster: a campaign fault elects its target in term 1 exactly when it can win") {
  // etcd raft's TestLeaderElection, driven by MsgHup: timeouts far beyond the run, so only the
  // campaign starts an election; then which nodes are down or cut off decides. Node 4 starts
  // with a longer log (two entries), so with PreVote or without, nobody else can beat it.
  auto [pre_vote, faults, target,
        leader] = GENERATE(table<bool, std::string, sim::NodeId, sim::NodeId>({
      {false, "", 0, 0},
      {true, "", 0, 0},
      {false, R"({"at": "0s", "kind": "crash", "target": 3},)", 1, 1},
      {false,
       R"({"at": "0s", "kind": "crash", "target": 2}, {"at": "0s", "kind": "crash", "target": 3},)",
       1, sim::kNoNode},
      {true,
       R"({"at": "0s", "kind": "isolate", "target": 1}, {"at": "0s", "kind": "isolate", "target": 2},)",
       1, sim::kNoNode},
      // The up-to-date rule: node 4's voters refuse node 0 (a shorter log)...
      {false, R"({"at": "0s", "kind": "crash", "target": 1},)", 0, 0},
      // ...and with nodes 1 and 2 down it would need node 4's vote, which never comes.
      {false,
       R"({"at": "0s", "kind": "crash", "target": 1}, {"at": "0s", "kind": "crash", "target": 2},)",
       0, sim::kNoNode},
  }));
  INFO("pre_vote " << pre_vote << ", " << faults << " campaign " << target);
  const std::string protocol = fmt::format(
      R"(, "election_timeout_min": "100s", "election_timeout_max": "100s",
      "heartbeat_interval": "50ms", "pre_vote": {}, "log": {{"4": {{"index": 2, "term": 1}},
      "0": {{"index": 1, "term": 1}}, "1": {{"index": 1, "term": 1}}, "2": {{"index": 1, "term": 1}},
      "3": {{"index": 1, "term": 1}}}})",
      pre_vote ? "true" : "false");
  const runner::RunResult r = run_text(scenario(
      protocol, faults + fmt::format(R"({{"at": "1s", "kind": "campaign", "target": {}}})", target),
      "5s"));
  REQUIRE(r.errors.empty());
  if (leader == sim::kNoNode) {
    CHECK_FALSE(r.report.first_leader_at.has_value());
  } else {
    REQUIRE(r.report.intervals.size() == 1);
    CHECK(r.report.intervals.front().node == leader);
    CHECK(r.report.intervals.front().epoch == 2);  // the logs' term 1, plus one election
    CHECK(r.report.intervals.front().start > sim::Time(1s));
    CHECK(r.report.intervals.front().start < sim::Time(1s + 100ms));
  }
}

TEST_CASE("raft cluster: PreVote keeps a rejoining node from disrupting the leader") {
  // Node 4 is cut off from 5s to 10s: without PreVote it keeps raising its term and, when it
  // rejoins, its higher term deposes the leader; with PreVote its pre-votes are refused and the
  // leader keeps its term.
  auto count_elections = [](bool pre_vote) {
    const runner::RunResult r =
        run_text(scenario(pre_vote ? R"(, "pre_vote": true)" : "",
                          R"({"at": "5s", "kind": "isolate", "target": 4, "duration": "5s"})"));
    return r.report.elections;
  };
  CHECK(count_elections(true) == 1);
  CHECK(count_elections(false) > 1);
}

TEST_CASE(
    "raft cluster: CheckQuorum makes an isolated leader step down within two election timeouts") {
  auto leader_interval_after_isolation = [](bool check_quorum) {
    const runner::RunResult r = run_text(
        scenario(check_quorum ? R"(, "check_quorum": true)" : "",
                 R"({"at": "5s", "kind": "isolate", "target": "leader", "duration": "10s"})"));
    REQUIRE_FALSE(r.report.failovers.empty());
    const auto& f = r.report.failovers.front();
    for (const auto& i : r.report.intervals) {
      if (i.node == f.old_leader && i.start < f.fault_at) return i.end - f.fault_at;
    }
    FAIL("the isolated leader had no interval");
    return sim::Duration(0);
  };
  CHECK(leader_interval_after_isolation(true) <= sim::Duration(600ms));  // 2 × 300 ms
  // Without CheckQuorum it believes until it hears a higher term, after the heal at 15 s.
  CHECK(leader_interval_after_isolation(false) >= sim::Duration(10s));
}

TEST_CASE("raft cluster: votes wait for the disk, so each fsync adds to the election twice") {
  // Raft §5.2 and etcd-io/raft's Ready: a candidate persists its term and vote before it asks, a
  // voter persists its vote before it answers. With fixed latency, the only change is the disk.
  auto first_leader = [](const std::string& disk) {
    const std::string text = fmt::format(R"({{
      "name": "raft-disk", "duration": "5s", "nodes": 5, "protocol": {{"name": "raft"}},
      "network": {{"latency": "5ms"}}, "disk": {{"fsync": "{}"}}
    }})",
                                         disk);
    const runner::RunResult r = run_text(text);
    REQUIRE(r.report.first_leader_at);
    return *r.report.first_leader_at;
  };
  const sim::Time base = first_leader("0ms");
  for (const auto fsync : {10ms, 30ms}) {
    INFO("fsync " << fsync.count() << "ms");
    const sim::Duration later = first_leader(fmt::format("{}ms", fsync.count())) - base;
    CHECK(later >= 2 * sim::Duration(fsync));
    CHECK(later < 3 * sim::Duration(fsync));
  }
}

TEST_CASE("raft cluster: at most one leader per term with slow and stalling disks, 100 seeds") {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    sim::Rng draw(seed, sim::StreamPurpose::bench, 11);
    std::string faults;
    for (int i = 0; i < 8; ++i) {
      if (!faults.empty()) faults += ",";
      const std::int64_t at_ms = draw.between(200, 9'000);
      const std::int64_t for_ms = draw.between(50, 2'000);
      const char* kind = draw.chance(500'000) ? "disk_stall" : "crash";
      faults +=
          fmt::format(R"({{"at": "{}ms", "kind": "{}", "target": "random", "duration": "{}ms"}})",
                      at_ms, kind, for_ms);
    }
    const std::string text = fmt::format(R"({{
      "name": "raft-disk-faults", "duration": "10s", "nodes": 5, "protocol": {{"name": "raft"}},
      "network": {{"latency": {{"dist": "uniform", "min": "1ms", "max": "10ms"}}}},
      "disk": {{"fsync": {{"dist": "uniform", "min": "1ms", "max": "40ms"}}}},
      "faults": [{}]
    }})",
                                         faults);
    INFO("seed " << seed);
    const runner::RunResult r = run_text(text, seed);
    CHECK(r.report.same_epoch_leaders_total == 0);
    CHECK(r.report.first_leader_at.has_value());
  }
}
