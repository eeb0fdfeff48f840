// Fleets (`services`): many election groups in one world, each on its own key and its own sink
// resource, judged service by service, sharing one coordinator.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/expect.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "runner/search.hpp"
#include "runner/sweep.hpp"
#include "tests/files.hpp"

using namespace electsim;

namespace {

runner::LoadResult load_text(const std::string& text) {
  return runner::load_scenario_text(text, "<fleet>", {});
}

runner::Scenario load_fleet(const std::string& text) {
  runner::LoadResult loaded = load_text(text);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  return *loaded.scenario;
}

// Four lease services of three nodes; every leader writes; the store pauses for 5 s at 30 s.
const char* const kFleet = R"({"name": "fleet", "duration": "60s",
  "services": {"count": 4, "replicas": 3},
  "protocol": {"name": "lease", "ttl": "3s"},
  "workload": {"interval": "500ms"},
  "faults": [{"at": "30s", "kind": "store_pause", "duration": "5s"}]})";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("electsim-fleet-test-" + name)).string();
}

std::string messages_of(const runner::LoadResult& loaded) {
  std::string out;
  for (const auto& m : loaded.messages()) out += m + "\n";
  return out;
}

// The file does not load, and a message says `expected`.
void fails(const std::string& text, const std::string& expected) {
  const runner::LoadResult loaded = load_text(text);
  CHECK_FALSE(loaded.scenario);
  CHECK_THAT(messages_of(loaded), Catch::Contains(expected));
}

}  // namespace

TEST_CASE("fleet: services become election groups, each on its own key") {
  const runner::Scenario s = load_fleet(kFleet);
  CHECK(s.world.node_count == 12);
  CHECK(s.fleet.services == 4);
  CHECK(s.fleet.replicas == 3);
  REQUIRE(s.world.groups.size() == 4);
  std::set<std::string> keys;
  for (std::size_t k = 0; k < 4; ++k) {
    const sim::ElectionGroup& g = s.world.groups[k];
    CHECK(g.name == fmt::format("svc-{}", k));
    CHECK(g.nodes == std::vector<sim::NodeId>{static_cast<sim::NodeId>(3 * k),
                                              static_cast<sim::NodeId>(3 * k + 1),
                                              static_cast<sim::NodeId>(3 * k + 2)});
    REQUIRE(g.key);
    CHECK(*g.key == fmt::format("/electsim/leader/svc-{}", k));
    keys.insert(*g.key);
  }
  CHECK(keys.size() == 4);
}

TEST_CASE("fleet: every service leads at once, and that is no split brain") {
  const auto r = runner::run_scenario(load_fleet(kFleet), runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  const analysis::FleetReport& f = *r.report.fleet;
  CHECK(f.services == 4);
  CHECK(f.replicas == 3);
  // Four leaders hold at the end, one in each service.
  std::set<std::size_t> leading;
  for (const analysis::LeaderInterval& i : r.report.intervals) {
    if (i.open_at_end) leading.insert(static_cast<std::size_t>(i.node) / 3);
  }
  CHECK(leading == std::set<std::size_t>{0, 1, 2, 3});
  CHECK(r.report.split_brain_time.count() == 0);
  CHECK(f.services_split_brain == 0);
  CHECK(r.report.stale_writes_accepted == 0);
  // Each service wrote its own resource, fenced by its own tokens: nothing was rejected although
  // the services' tokens interleave.
  CHECK(r.report.writes_rejected == 0);
  CHECK(r.report.writes_accepted > 0);
  // The store's pause left every service without a leader while it could not grant.
  CHECK(f.services_stalled == 4);
  CHECK(r.report.store.unavailable_time == std::chrono::seconds(5));
  const std::string summary = analysis::format_summary(r.info, r.report, r.verdict);
  CHECK_THAT(summary, Catch::Contains("\nfleet\n  4 services of 3 nodes"));
  CHECK_THAT(summary, Catch::Contains("services with split brain: 0"));
}

TEST_CASE("fleet: the services' own figures sum to the fleet's") {
  const auto r = runner::run_scenario(load_fleet(kFleet), runner::RunOptions{});
  REQUIRE(r.report.fleet);
  const analysis::FleetReport& f = *r.report.fleet;
  REQUIRE(f.by_service.size() == 4);
  std::uint64_t elections = 0;
  std::uint64_t writes = 0;
  std::uint64_t requests = 0;
  sim::Duration leaderless{0};
  sim::Duration stall{0};
  sim::Duration outage{0};
  for (const analysis::ServiceFigures& one : f.by_service) {
    elections += one.elections;
    writes += one.writes_accepted;
    requests += one.coordinator_requests;
    leaderless += one.leaderless_time;
    stall += one.stall_time;
    outage += one.outage_time;
    CHECK(one.elections >= 1);
  }
  CHECK(elections == r.report.elections);
  CHECK(writes == r.report.writes_accepted);
  CHECK(requests == r.report.store_requests_total + r.report.server_requests_total);
  CHECK(leaderless == r.report.leaderless_time);
  CHECK(stall == r.report.stall_time);
  CHECK(outage == r.report.outage_time);
  // The spread's maximum is one of the services' own.
  sim::Duration most{0};
  for (const analysis::ServiceFigures& one : f.by_service)
    most = std::max(most, one.leaderless_time);
  CHECK(f.leaderless_time.max == most.count());
  sim::Duration most_outage{0};
  for (std::size_t k = 0; k < f.by_service.size(); ++k) {
    CHECK(f.by_service[k].name == fmt::format("svc-{}", k));
    most_outage = std::max(most_outage, f.by_service[k].outage_time);
  }
  CHECK(f.outage_time.max == most_outage.count());
  CHECK(f.outage_time.max > 0);  // the store's pause stopped every service's writes
  CHECK_THAT(analysis::format_summary(r.info, r.report, r.verdict),
             Catch::Contains("  outage per service: p50 "));
}

TEST_CASE("fleet: a fault on one service's leader fails over that service alone") {
  std::string text = kFleet;
  text.replace(text.find(R"({"at": "30s", "kind": "store_pause", "duration": "5s"})"),
               std::string(R"({"at": "30s", "kind": "store_pause", "duration": "5s"})").size(),
               R"({"at": "20s", "kind": "crash", "target": "svc-2:leader"})");
  const auto r = runner::run_scenario(load_fleet(text), runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.failovers.size() == 1);
  const analysis::Failover& f = r.report.failovers.front();
  // Service 2's nodes are 6, 7 and 8: its leader crashed and another of its nodes took over.
  CHECK(f.old_leader / 3 == 2);
  REQUIRE(f.failover);
  CHECK(f.new_leader / 3 == 2);
  CHECK(f.new_leader != f.old_leader);
  REQUIRE(r.report.fleet);
  CHECK(r.report.fleet->failover.samples == 1);
  CHECK(r.report.fleet->by_service[2].failovers_observed == 1);
  CHECK(r.report.fleet->by_service[0].elections == 1);
  CHECK(r.report.fleet->by_service[2].elections == 2);
}

TEST_CASE("fleet: the writable share weighs each service's outages by its own writing span") {
  // Service 3 is down from 100 ms, before its leader's first write, to the end: it never writes.
  // The others lose their writes to the store's pause. Their outages are a share of their own
  // spans; the silent service adds no span, so it cannot dilute what the others lived through.
  std::string text = kFleet;
  text.replace(text.find(R"({"at": "30s", "kind": "store_pause", "duration": "5s"})"),
               std::string(R"({"at": "30s", "kind": "store_pause", "duration": "5s"})").size(),
               R"({"at": "30s", "kind": "store_pause", "duration": "5s"},
                  {"at": "100ms", "kind": "crash", "target": "svc-3"})");
  const auto r = runner::run_scenario(load_fleet(text), runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  const analysis::FleetReport& f = *r.report.fleet;
  CHECK(f.by_service[3].writes_accepted == 0);
  CHECK(f.by_service[3].writing_span == sim::Duration(0));
  sim::Duration span{0};
  sim::Duration outage{0};
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(f.by_service[k].writing_span > std::chrono::seconds(59));
    span += f.by_service[k].writing_span;
    outage += f.by_service[k].outage_time;
  }
  CHECK(f.writing_span == span);
  REQUIRE(r.report.writable_fraction);
  CHECK(*r.report.writable_fraction ==
        Approx(1.0 - static_cast<double>(outage.count()) / static_cast<double>(span.count())));
  CHECK(*r.report.writable_fraction < 0.95);  // each writing service lost about 5 s of 60
}

TEST_CASE("fleet: a fleet's trace reads back to the same report") {
  const std::string path = temp_path("fleet.jsonl");
  const auto r =
      runner::run_scenario(load_fleet(kFleet), runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  std::istringstream text(testing::slurp(path));
  std::remove(path.c_str());
  const analysis::TraceReadResult read = analysis::read_trace(text);
  REQUIRE(read.error == "");
  REQUIRE(read.report.fleet);
  CHECK(read.report.fleet->services == 4);
  CHECK(read.report.elections == r.report.elections);
  CHECK(read.report.leaderless_time == r.report.leaderless_time);
  CHECK(read.report.stall_time == r.report.stall_time);
  CHECK(read.report.writes_accepted == r.report.writes_accepted);
}

TEST_CASE("fleet: Raft runs as a fleet, each service a Raft group of its own") {
  const std::string path = temp_path("raft-fleet.jsonl");
  const auto r = runner::run_scenario(load_fleet(R"({"name": "raft-fleet", "duration": "10s",
    "services": {"count": 3, "replicas": 5}, "protocol": {"name": "raft"}})"),
                                      runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  CHECK(r.report.fleet->services_never_led == 0);
  CHECK(r.report.split_brain_time.count() == 0);
  // One leader in each service at the end.
  std::multiset<std::size_t> leading;
  for (const analysis::LeaderInterval& i : r.report.intervals) {
    if (i.open_at_end) leading.insert(static_cast<std::size_t>(i.node) / 5);
  }
  CHECK(leading == std::multiset<std::size_t>{0, 1, 2});
  // Votes and heartbeats stay in their own service: every message's ends are one service's.
  std::istringstream lines(testing::slurp(path));
  std::remove(path.c_str());
  std::size_t sent = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"ev\":\"msg_send\"") == std::string::npos) continue;
    const nlohmann::json e = nlohmann::json::parse(line);
    CHECK(e.at("from").get<int>() / 5 == e.at("to").get<int>() / 5);
    ++sent;
  }
  CHECK(sent > 0);
}

TEST_CASE("fleet: what a fleet cannot be is refused with where and why") {
  fails(R"({"name": "f", "duration": "10s", "nodes": 5, "services": {"count": 2, "replicas": 3},
            "protocol": {"name": "lease"}})",
        "at /nodes: expected no node count beside services");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 2},
            "protocol": {"name": "lease"}})",
        "at /services/replicas");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 200000, "replicas": 3},
            "protocol": {"name": "lease"}})",
        "at /services/count");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 100000, "replicas": 4},
            "protocol": {"name": "lease"}})",
        "the limit on a fleet's nodes");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 2, "replicas": 3},
            "protocol": {"name": "redlock"}})",
        "redlock contends for one fixed resource");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 2, "replicas": 3},
            "protocol": {"name": "lease"}, "faults": [{"at": "1s", "kind": "crash",
            "target": "leader"}]})",
        "in a fleet each service has its own leader");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 2, "replicas": 3},
            "protocol": {"name": "lease"}, "faults": [{"at": "1s", "kind": "crash",
            "target": "svc-2:leader"}]})",
        "K from 0 to 1");
  fails(R"({"name": "f", "duration": "10s", "services": {"count": 2, "replicas": 3},
            "protocol": {"name": "lease"}, "faults": [{"at": "1s", "kind": "partition",
            "groups": [["leader"], [0, 1]]}]})",
        "in a fleet a role names no one node");
}

TEST_CASE("fleet: the pictures, which draw one election, refuse a fleet before it runs") {
  const std::string path = temp_path("fleet.svg");
  const auto r = runner::run_scenario(load_fleet(kFleet), runner::RunOptions{}.output("svg", path));
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors.front(), Catch::Contains("--svg: the pictures draw one election"));
  CHECK(r.stats.events == 0);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("fleet: a sweep of a fleet is the same on any number of threads and shards") {
  runner::SweepDefinition d;
  d.scenario_path = "<fleet>";
  auto axis = runner::parse_grid_axis("protocol.ttl=3s,20s");
  INFO(axis.error);
  REQUIRE(axis.value);
  d.axes.push_back(*axis.value);
  d.seeds = {1, 3};
  runner::PlanOutcome planned = runner::plan_sweep(kFleet, std::move(d));
  for (const auto& p : planned.problems) UNSCOPED_INFO(p);
  REQUIRE(planned.plan);
  runner::SweepOptions one;
  runner::SweepOptions two;
  two.jobs = 2;
  const runner::SweepResult a = runner::run_sweep(*planned.plan, one);
  const runner::SweepResult b = runner::run_sweep(*planned.plan, two);
  const auto points_a = runner::summarise(a);
  const auto points_b = runner::summarise(b);
  CHECK(runner::sweep_points_csv(a, points_a) == runner::sweep_points_csv(b, points_b));
  CHECK(runner::sweep_runs_csv(a) == runner::sweep_runs_csv(b));
  // Sharded in two and merged, as two machines would run it: the same tables. Each run's times
  // are the mean service's, within the run's duration, so the parts read back.
  std::vector<runner::PartText> parts;
  for (std::uint64_t i = 1; i <= 2; ++i) {
    runner::SweepOptions sharded;
    sharded.shard = runner::Shard{i, 2};
    parts.push_back(
        {fmt::format("part{}", i),
         runner::sweep_part(runner::run_sweep(*planned.plan, sharded), *sharded.shard)});
  }
  const runner::MergeOutcome merged = runner::merge_parts(parts);
  for (const auto& m : merged.problems) UNSCOPED_INFO(m);
  REQUIRE(merged.result);
  const auto points_merged = runner::summarise(*merged.result);
  CHECK(runner::sweep_points_csv(*merged.result, points_merged) ==
        runner::sweep_points_csv(a, points_a));
  CHECK(runner::sweep_runs_csv(*merged.result) == runner::sweep_runs_csv(a));
  REQUIRE(points_a.size() == 2);
  for (const runner::PointSummary& p : points_a) {
    // Outage time summed over four services is the mean service's share of the time.
    REQUIRE(p.writable_fraction);
    CHECK(*p.writable_fraction > 0.8);
    CHECK(*p.writable_fraction <= 1.0);
  }
  // Thrash: with a 3s TTL the 5s pause costs every service its leader once in each 60s run (60
  // changes per service-hour); with 20s every leader rides it out.
  REQUIRE(points_a[0].leader_changes_per_service_hour);
  CHECK(*points_a[0].leader_changes_per_service_hour == Approx(60.0));
  REQUIRE(points_a[1].leader_changes_per_service_hour);
  CHECK(*points_a[1].leader_changes_per_service_hour == 0.0);
}

TEST_CASE(
    "fleet: a sweep's thrash counts each service's own changes, not elections less services") {
  // Service 3 is down before it ever leads; service 0 loses its leader twice. Elections (3 + 1 +
  // 1 + 0) less services (4) would say one change; there are two, in 4 services x 60 s.
  std::string text = kFleet;
  text.replace(text.find(R"({"at": "30s", "kind": "store_pause", "duration": "5s"})"),
               std::string(R"({"at": "30s", "kind": "store_pause", "duration": "5s"})").size(),
               R"({"at": "1ms", "kind": "crash", "target": "svc-3"},
                  {"at": "20s", "kind": "crash", "target": "svc-0:leader"},
                  {"at": "40s", "kind": "crash", "target": "svc-0:leader"})");
  runner::SweepDefinition d;
  d.scenario_path = "<fleet>";
  d.seeds = {1, 1};
  runner::PlanOutcome planned = runner::plan_sweep(text, std::move(d));
  for (const auto& p : planned.problems) UNSCOPED_INFO(p);
  REQUIRE(planned.plan);
  const runner::SweepResult result = runner::run_sweep(*planned.plan, runner::SweepOptions{});
  REQUIRE(result.records.size() == 1);
  CHECK(result.records[0].elections == 5);
  CHECK(result.records[0].leader_changes == 2);
  const auto points = runner::summarise(result);
  REQUIRE(points.size() == 1);
  REQUIRE(points[0].leader_changes_per_service_hour);
  CHECK(*points[0].leader_changes_per_service_hour == Approx(2.0 / (4.0 / 60.0)));
}

TEST_CASE("fleet: the search, whose nemesis aims at the world's roles, refuses a fleet") {
  runner::SearchConfig config;
  config.runs = 2;
  const runner::SearchOutcome outcome = runner::run_search(nlohmann::json::parse(kFleet), "<fleet>",
                                                           runner::LoadOptions{}, config, {});
  CHECK_FALSE(outcome.result);
  REQUIRE(outcome.problems.size() == 1);
  CHECK_THAT(outcome.problems.front(), Catch::Contains("a fleet (services) is not searched"));
}

TEST_CASE("fleet: one fault strikes a share of the services, or a whole service") {
  std::string text = kFleet;
  const std::string pause = R"({"at": "30s", "kind": "store_pause", "duration": "5s"})";
  // The leaders of half the services (0 and 2, spread evenly) crash at 20 s, and every node of
  // service 3 at 40 s.
  text.replace(text.find(pause), pause.size(),
               R"({"at": "20s", "kind": "crash", "target": "leader", "services": 0.5},
                  {"at": "40s", "kind": "crash", "target": "svc-3"})");
  const runner::Scenario s = load_fleet(text);
  REQUIRE(s.world.faults.size() == 5);
  CHECK(s.world.faults[0].target.kind == sim::TargetKind::service_leader);
  CHECK(s.world.faults[0].target.node == 0);
  CHECK(s.world.faults[1].target.node == 2);
  for (std::size_t i = 2; i < 5; ++i) {
    CHECK(s.world.faults[i].target.kind == sim::TargetKind::node);
    CHECK(s.world.faults[i].target.node == static_cast<sim::NodeId>(9 + i - 2));
  }
  const auto r = runner::run_scenario(s, runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  const analysis::FleetReport& f = *r.report.fleet;
  CHECK(f.by_service[0].failovers_observed == 1);
  CHECK(f.by_service[1].failovers_observed == 0);
  CHECK(f.by_service[2].failovers_observed == 1);
  // Service 3 lost every node: its leader's crash is a failover that never resolves.
  CHECK(f.by_service[3].failovers_observed == 0);
  CHECK(f.by_service[3].leaderless_time >= std::chrono::seconds(19));

  std::string bad = kFleet;
  bad.replace(bad.find(pause), pause.size(),
              R"({"at": "20s", "kind": "crash", "target": "leader", "services": 1.5})");
  fails(bad, "at /faults/0/services: expected the share of the fleet's services");
  bad = kFleet;
  bad.replace(bad.find(pause), pause.size(),
              R"({"at": "20s", "kind": "crash", "target": 3, "services": 0.5})");
  fails(bad, "at /faults/0/target: expected with \"services\", the role it strikes");
  bad = kFleet;
  bad.replace(bad.find(pause), pause.size(),
              R"({"at": "20s", "kind": "crash", "target": "svc-4"})");
  fails(bad, "\"svc-K\" with K from 0 to 3");
  // Outside a fleet "services" is no key of a fault.
  fails(R"({"name": "f", "duration": "10s", "nodes": 3, "protocol": {"name": "lease"},
            "faults": [{"at": "1s", "kind": "crash", "target": "leader", "services": 0.5}]})",
        "services");
}

TEST_CASE("fleet: per_node timings name a service's own nodes, in every service") {
  // Node 2 of each service renews with a longer TTL: each service's node 2 (world nodes 2 and 5)
  // runs it, and nothing asks for a node beyond the service.
  const runner::Scenario s = load_fleet(R"({"name": "f", "duration": "20s",
    "services": {"count": 2, "replicas": 3},
    "protocol": {"name": "kubernetes", "per_node": {"2": {"ttl": "20s", "renew_deadline": "15s"}}},
    "faults": [{"at": "5s", "kind": "crash", "target": "svc-1:leader"}]})");
  const auto r = runner::run_scenario(s, runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  CHECK(r.report.fleet->services_never_led == 0);
  CHECK(r.report.split_brain_time.count() == 0);
  REQUIRE(r.report.failovers.size() == 1);
  CHECK(r.report.failovers.front().old_leader / 3 == 1);
}

namespace {

// Two classes on one store: api (3 nodes, 3 s TTL) and batch (5 nodes, 20 s TTL); the store
// pauses for 5 s at 30 s, a batch service loses every node at 40 s.
const char* const kClasses = R"({"name": "classes", "duration": "60s",
  "services": {"classes": [
    {"name": "api", "count": 4, "replicas": 3, "protocol": {"ttl": "3s"}},
    {"name": "batch", "count": 2, "replicas": 5, "protocol": {"ttl": "20s"}}]},
  "protocol": {"name": "lease"},
  "workload": {"interval": "500ms"},
  "faults": [{"at": "30s", "kind": "store_pause", "duration": "5s"},
             {"at": "40s", "kind": "crash", "target": "svc-5"}]})";

}  // namespace

TEST_CASE("fleet: classes of services, each with its own size and parameters") {
  const runner::Scenario s = load_fleet(kClasses);
  CHECK(s.world.node_count == 4 * 3 + 2 * 5);
  CHECK(s.fleet.services == 6);
  CHECK(s.fleet.replicas == 5);  // the most of any class
  REQUIRE(s.world.groups.size() == 6);
  // The classes' services and nodes follow one another in the file's order.
  CHECK(s.world.groups[3].nodes == std::vector<sim::NodeId>{9, 10, 11});
  CHECK(s.world.groups[4].nodes == std::vector<sim::NodeId>{12, 13, 14, 15, 16});
  CHECK(s.world.groups[5].nodes == std::vector<sim::NodeId>{17, 18, 19, 20, 21});
  CHECK(s.world.groups[0].service_class == "api");
  CHECK(s.world.groups[5].service_class == "batch");
  CHECK(s.world.groups[5].key == std::optional<std::string>("/electsim/leader/svc-5"));
  // A whole service of the second class: its five nodes.
  REQUIRE(s.world.faults.size() == 6);
  for (std::size_t i = 1; i < 6; ++i) {
    CHECK(s.world.faults[i].target.node == static_cast<sim::NodeId>(17 + i - 1));
  }

  const std::string path = temp_path("classes.jsonl");
  const auto r = runner::run_scenario(s, runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  const analysis::FleetReport& f = *r.report.fleet;
  REQUIRE(f.by_class.size() == 2);
  const analysis::ClassFigures& api = f.by_class[0];
  const analysis::ClassFigures& batch = f.by_class[1];
  CHECK(api.name == "api");
  CHECK(api.services == 4);
  CHECK(api.replicas == 3);
  CHECK(batch.replicas == 5);
  // The 3 s TTL's holders give up in the stall; the 20 s TTL's keep their keys through it.
  CHECK(api.services_stalled == 4);
  CHECK(api.leader_changes.p50 >= 1);
  CHECK(batch.services_stalled == 0);
  CHECK(batch.leader_changes.max == 0);
  // Each class's figures are its services', and the classes' sum to the fleet's.
  std::uint64_t requests = 0;
  for (const analysis::ServiceFigures& one : f.by_service) {
    CHECK(one.service_class == (one.name == "svc-4" || one.name == "svc-5" ? "batch" : "api"));
    requests += one.coordinator_requests;
  }
  CHECK(api.coordinator_requests + batch.coordinator_requests == requests);
  CHECK(api.services_stalled + batch.services_stalled == f.services_stalled);
  CHECK(api.services + batch.services == f.services);
  const std::string summary = analysis::format_summary(r.info, r.report, r.verdict);
  CHECK_THAT(summary, Catch::Contains("scenario classes, protocol lease, 22 nodes\n"));
  CHECK_THAT(summary, Catch::Contains("  6 services in 2 classes") &&
                          Catch::Contains("  class batch: 2 services of 5 nodes\n"));
  // The trace's header names each service's class, and `check` gives the same summary.
  std::istringstream text(testing::slurp(path));
  std::remove(path.c_str());
  const analysis::TraceReadResult read = analysis::read_trace(text);
  REQUIRE(read.error == "");
  REQUIRE(read.report.fleet);
  REQUIRE(read.report.fleet->by_class.size() == 2);
  CHECK(read.report.fleet->by_class[1].coordinator_requests == batch.coordinator_requests);
  CHECK(read.report.fleet->by_class[0].services_stalled == 4);
}

TEST_CASE("fleet: a class that cannot be is refused at its pointer") {
  const std::string good = kClasses;
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  fails(with(R"("name": "batch")", R"("name": "api")"),
        "at /services/classes/1/name: expected a name no other class has");
  fails(with(R"("name": "batch")", R"("name": "bat ch")"),
        "at /services/classes/1/name: expected the class's name");
  fails(with(R"("protocol": {"ttl": "20s"})", R"("protocol": "20s")"),
        "at /services/classes/1/protocol: expected the class's protocol: an object");
  fails(with(R"("protocol": {"ttl": "20s"})", R"("protocol": {"name": "leese"})"),
        "at /services/classes/1/protocol/name: expected the name of a protocol");
  // Raft's nodes send messages of their own, which the lease's trace header does not name.
  fails(with(R"("protocol": {"ttl": "20s"})", R"("protocol": {"name": "raft"})"),
        "at /services/classes/1/protocol/name: expected a protocol that can share a fleet with "
        "the file's lease");
  // A class of its own protocol takes that protocol's parameters, not the file's.
  fails(with(R"("protocol": {"ttl": "20s"})",
             R"("protocol": {"name": "kubernetes", "expiry": "store"})"),
        "/services/classes/1/protocol/expiry");
  fails(with(R"("protocol": {"ttl": "20s"})", R"("protocol": {"ttl": "-1s"})"),
        "/services/classes/1/protocol/ttl");
  fails(with(R"("count": 2, "replicas": 5)", R"("replicas": 5)"),
        "at /services/classes/1/count: expected how many services");
  fails(with(R"("count": 2, "replicas": 5)", R"("count": 100000, "replicas": 5)"),
        "at most 100000 services in all (the limit on a fleet's services)");
  fails(R"({"name": "c", "duration": "10s", "services": {"classes": []},
            "protocol": {"name": "lease"}})",
        "at /services/classes: expected a list of 1 to 64 classes");
  fails(R"({"name": "c", "duration": "10s",
            "services": {"count": 2, "replicas": 3, "classes": []},
            "protocol": {"name": "lease"}})",
        "at /services/count: expected one of the keys of the services section: classes");
}

TEST_CASE("fleet: a class runs a protocol of its own beside the file's") {
  // etcd-style leases (judged by the store) beside client-go's Lease records (judged on the
  // followers' clocks, fabric8 style, by the record's renewTime), on one store; every service's
  // follower has its wall clock stepped an hour forward at 20 s.
  const char* const text = R"({"name": "mixed", "duration": "40s",
    "services": {"classes": [
      {"name": "etcd", "count": 4, "replicas": 3},
      {"name": "controllers", "count": 4, "replicas": 3,
       "protocol": {"name": "kubernetes", "expiry_judged_by": "renew_time", "fencing": false}}]},
    "protocol": {"name": "lease"},
    "workload": {"interval": "100ms"},
    "faults": [{"at": "20s", "kind": "clock_step", "target": "follower", "services": 1,
                "by": "1h"}]})";
  const runner::Scenario s = load_fleet(text);
  REQUIRE(s.world.groups.size() == 8);
  CHECK(s.world.groups[0].protocol == "lease");
  CHECK(s.world.groups[4].protocol == "kubernetes");
  CHECK(s.world.groups[4].key == std::optional<std::string>("/electsim/leader/svc-4"));
  // The controllers' own `fencing` is their resources' at the sink; the etcd class fences.
  REQUIRE(s.services.sink.fencing_by_resource.size() == 8);
  CHECK(s.services.sink.fences(0));
  CHECK_FALSE(s.services.sink.fences(4));

  const auto r = runner::run_scenario(s, runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  const analysis::FleetReport& f = *r.report.fleet;
  REQUIRE(f.by_class.size() == 2);
  CHECK(f.by_class[0].protocol == "lease");
  CHECK(f.by_class[1].protocol == "kubernetes");
  // The store judges the etcd leases: the step changes nothing there. Each controller's stepped
  // follower finds the record an hour stale and takes it over while the holder still leads,
  // and without fencing the deposed holder's writes are accepted.
  CHECK(f.by_class[0].services_split_brain == 0);
  CHECK(f.by_class[0].leader_changes.max == 0);
  CHECK(f.by_class[1].services_split_brain == 4);
  CHECK(f.by_class[1].services_stale_accepted >= 1);
  CHECK(f.services_split_brain == 4);
  const std::string summary = analysis::format_summary(r.info, r.report, r.verdict);
  // The header names both protocols the fleet runs, not the file's alone.
  CHECK_THAT(summary, Catch::Contains("scenario mixed, protocols lease, kubernetes, 24 nodes\n"));
  CHECK_THAT(summary, Catch::Contains("  class etcd: 4 services of 3 nodes, running lease\n") &&
                          Catch::Contains("  class controllers: 4 services of 3 nodes, running "
                                          "kubernetes\n"));
}

TEST_CASE("fleet: every per-class metric of a one-class fleet is the fleet's") {
  // One class holding every service: each metric a class can be bounded on must read the same
  // over the class as over the fleet, or it reads something a class's figures do not carry.
  const runner::Scenario s = load_fleet(R"({"name": "one", "duration": "60s",
    "services": {"classes": [{"name": "all", "count": 4, "replicas": 3}]},
    "protocol": {"name": "lease", "ttl": "3s"},
    "workload": {"interval": "500ms"},
    "faults": [{"at": "30s", "kind": "store_pause", "duration": "5s"},
               {"at": "40s", "kind": "crash", "target": "svc-1"}]})");
  const auto r = runner::run_scenario(s, runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  REQUIRE(r.report.fleet->by_class.size() == 1);
  const analysis::ClassFigures& all = r.report.fleet->by_class[0];
  std::size_t per_class = 0;
  std::size_t nonzero = 0;
  for (const analysis::MetricInfo& m : analysis::metric_catalogue()) {
    CHECK(analysis::metric_per_class(m.name) == m.per_class);
    if (!m.per_class) {
      CHECK_FALSE(analysis::class_metric(r.report, all, m.name));
      continue;
    }
    INFO(m.name);
    ++per_class;
    const std::optional<double> fleet = analysis::metric_value(r.report, m.name);
    REQUIRE(fleet);
    CHECK(analysis::class_metric(r.report, all, m.name) == fleet);
    if (*fleet != 0) ++nonzero;
  }
  CHECK(per_class >= 8);
  // The stall and the crash move most of them off zero, so equal is not "both empty".
  CHECK(nonzero >= 4);
}

TEST_CASE("fleet: bounds on one class judge that class's services alone") {
  // The store stalls for 5 s: every api service (3 s TTL) stalls, no batch service (20 s).
  const auto with_bounds = [](const std::string& bounds) {
    std::string text = kClasses;
    text.insert(text.rfind('}'), ", \"expect_by_class\": " + bounds);
    return text;
  };
  const auto verdict_of = [&](const std::string& bounds) {
    const runner::Scenario s = load_fleet(with_bounds(bounds));
    return runner::run_scenario(s, runner::RunOptions{}).verdict;
  };
  CHECK(verdict_of(R"({"api": {"fleet_services_stalled": {"min": 4, "max": 4}},
                       "batch": {"fleet_services_stalled": {"max": 0},
                                 "fleet_leader_changes_p99": {"max": 0}}})")
            .ok());
  // The fleet stalled 4 services in all; a bound of 0 on batch holds, on api it breaks, and the
  // breach names the class.
  const analysis::Verdict broken = verdict_of(R"({"api": {"fleet_services_stalled": {"max": 0}}})");
  REQUIRE(broken.breaches.size() == 1);
  CHECK(broken.breaches[0].expectation.service_class == "api");
  CHECK(broken.breaches[0].actual == std::optional<double>(4));
  CHECK_THAT(broken.breaches[0].message,
             Catch::StartsWith("fleet_services_stalled of class api = 4, above max 0 by 4"));

  fails(with_bounds(R"({"apj": {"fleet_services_stalled": {"max": 0}}})"),
        "at /expect_by_class/apj: expected the name of one of the fleet's classes: \"api\", "
        "\"batch\"");
  fails(with_bounds(R"({"api": {"split_brain_time": {"max": "0s"}}})"),
        "at /expect_by_class/api/split_brain_time: expected a metric a class's services give on "
        "their own");
  fails(with_bounds(R"({"api": {"fleet_failover_p99": {"max": "1s"}}})"),
        "at /expect_by_class/api/fleet_failover_p99: expected a metric a class's services give");
  fails(R"({"name": "one", "duration": "10s", "services": {"count": 2, "replicas": 3},
            "protocol": {"name": "lease"},
            "expect_by_class": {"api": {"fleet_services_stalled": {"max": 0}}}})",
        "at /expect_by_class: expected a fleet with classes of services");
}
