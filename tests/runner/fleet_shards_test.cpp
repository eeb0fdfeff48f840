// Sharded stores (`store.shards`): a fleet's services divided by hash among independent store
// clusters, each with its own servers, capacity, revisions and faults, judged shard by shard. And
// auto-scalers (`services.autoscale`): replicas that start stopped and join while the run goes on.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "tests/files.hpp"

using namespace electsim;

namespace {

using nlohmann::json;

// Twenty lease services of three nodes on four single-store shards; shard store-1 stalls for 5 s
// at 30 s.
json sharded_fleet() {
  return json::parse(R"({"name": "sharded", "duration": "60s",
    "services": {"count": 20, "replicas": 3},
    "protocol": {"name": "lease", "ttl": "3s"},
    "workload": {"interval": "500ms"},
    "store": {"shards": 4},
    "faults": [{"at": "30s", "kind": "store_pause", "duration": "5s", "target": "store-1"}]})");
}

runner::LoadResult load(const json& document) {
  return runner::load_scenario_text(document.dump(), "<shards>", {});
}

runner::Scenario loaded(const json& document) {
  runner::LoadResult result = load(document);
  for (const auto& m : result.messages()) UNSCOPED_INFO(m);
  REQUIRE(result.scenario);
  return *result.scenario;
}

runner::RunResult run(const json& document) {
  runner::RunResult r = runner::run_scenario(loaded(document), runner::RunOptions{});
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.fleet);
  return r;
}

// The file does not load, and a message says `expected`.
void fails(const json& document, const std::string& expected) {
  const runner::LoadResult result = load(document);
  CHECK_FALSE(result.scenario);
  std::string messages;
  for (const auto& m : result.messages()) messages += m + "\n";
  CHECK_THAT(messages, Catch::Contains(expected));
}

}  // namespace

TEST_CASE("fleet shards: each service asks one of the independent stores its name hashes to") {
  const runner::Scenario s = loaded(sharded_fleet());
  const sim::Topology topology = sim::topology_of(runner::world_for_seed(s, 1));
  CHECK(topology.store_shards() ==
        std::vector<std::string>{"store-0", "store-1", "store-2", "store-3"});
  CHECK(topology.store_members() == 1);  // each shard is a single store
  REQUIRE(s.world.groups.size() == 20);
  std::map<std::string, std::size_t> services_of;
  for (const sim::ElectionGroup& g : s.world.groups) ++services_of[g.store];
  CHECK(services_of.size() == 4);  // every shard serves some of the twenty
  // The assignment is the name's, not the run's: another seed gives the same.
  runner::Scenario other = s;
  other.world.seed = 99;
  const sim::WorldConfig world = runner::world_for_seed(other, 99);
  for (std::size_t k = 0; k < world.groups.size(); ++k) {
    CHECK(world.groups[k].store == s.world.groups[k].store);
  }
}

TEST_CASE("fleet shards: a stalled shard stalls its own services and no others") {
  const runner::RunResult r = run(sharded_fleet());
  const analysis::FleetReport& f = *r.report.fleet;
  REQUIRE(f.by_shard.size() == 4);
  const runner::Scenario s = loaded(sharded_fleet());
  std::size_t on_paused = 0;
  for (std::size_t k = 0; k < f.by_service.size(); ++k) {
    const bool paused = s.world.groups[k].store == "store-1";
    on_paused += paused ? 1 : 0;
    INFO(f.by_service[k].name);
    // With a 3s TTL a holder gives up 2s into the stall and waits for its shard; the others
    // never notice.
    CHECK((f.by_service[k].stall_time.count() > 0) == paused);
    CHECK((f.by_service[k].elections > 1) == paused);
  }
  CHECK(f.services_stalled == on_paused);
  CHECK(f.by_shard[1].name == "store-1");
  CHECK(f.by_shard[1].services == on_paused);
  CHECK(f.by_shard[1].unavailable_time == std::chrono::seconds(5));
  CHECK(f.by_shard[1].services_stalled == on_paused);
  for (const std::size_t k : {0, 2, 3}) {
    INFO(f.by_shard[k].name);
    CHECK(f.by_shard[k].unavailable_time.count() == 0);
    CHECK(f.by_shard[k].services_stalled == 0);
    CHECK(f.by_shard[k].leader_changes == 0);
  }
  const std::string summary = analysis::format_summary(r.info, r.report, r.verdict);
  CHECK_THAT(summary, Catch::Contains("store_pause of store-1 at 30.000s"));
  CHECK_THAT(summary, Catch::Contains("  shard store-1: "));
  CHECK_THAT(summary, Catch::Contains("  4 shards, independent stores"));
}

TEST_CASE("fleet shards: the shards' figures sum to the fleet's and the store's") {
  const runner::RunResult r = run(sharded_fleet());
  const analysis::FleetReport& f = *r.report.fleet;
  std::size_t services = 0;
  std::uint64_t requests = 0;
  std::uint64_t stalled = 0;
  std::uint64_t changes = 0;
  sim::Duration unavailable{0};
  sim::Duration leaderless{0};
  for (const analysis::ShardFigures& shard : f.by_shard) {
    services += shard.services;
    requests += shard.coordinator_requests;
    stalled += shard.services_stalled;
    changes += shard.leader_changes;
    unavailable += shard.unavailable_time;
    leaderless += shard.leaderless_time;
    CHECK(shard.requests_per_second ==
          Approx(static_cast<double>(shard.coordinator_requests) / 60.0));
  }
  CHECK(services == 20);
  CHECK(requests == r.report.store_requests_total + r.report.server_requests_total);
  CHECK(stalled == f.services_stalled);
  CHECK(leaderless == r.report.leaderless_time);
  std::uint64_t service_changes = 0;
  for (const analysis::ServiceFigures& one : f.by_service) service_changes += one.elections - 1;
  CHECK(changes == service_changes);
  CHECK(r.report.store.shards == 4);
  CHECK(r.report.store.unavailable_time == unavailable);
  CHECK(r.report.store.availability == Approx(1.0 - 5.0 / (4 * 60.0)));
  REQUIRE(r.report.store.recoveries.size() == 1);  // store-1's, at the end of its stall
  CHECK(r.report.store.recoveries[0].at == sim::Time(std::chrono::seconds(35)));
}

TEST_CASE("fleet shards: each shard serves at its own capacity") {
  // 300 services asking about 3 times a second against one store that serves about 1000
  // requests a second collapse (docs/fleets.md, fleet-capacity); four such stores serve them.
  json document = sharded_fleet();
  document["duration"] = "30s";
  document["services"]["count"] = 300;
  document["faults"] = json::array();
  document["store"] = {
      {"capacity", {{"service_time", {{"dist", "exponential"}, {"mean", "1ms"}}}}}};
  const runner::RunResult one = run(document);
  document["store"]["shards"] = 4;
  const runner::RunResult four = run(document);
  INFO("one store: leaderless " << one.report.leaderless_fraction
                                << ", four: " << four.report.leaderless_fraction);
  CHECK(one.report.leaderless_fraction > 0.5);
  CHECK(four.report.leaderless_fraction < 0.05);
  CHECK(four.report.fleet->services_never_led == 0);
}

TEST_CASE("fleet shards: a sharded fleet's trace reads back to the same figures, shard by shard") {
  json document = sharded_fleet();
  document["store"]["members"] = 3;
  // Two of store-2's three members down for 3 s: whichever led, store-2 elects again.
  document["faults"] = json::array(
      {{{"at", "20s"}, {"kind", "crash"}, {"target", "store-2:0"}, {"duration", "3s"}},
       {{"at", "20s"}, {"kind", "crash"}, {"target", "store-2:1"}, {"duration", "3s"}}});
  const std::string path =
      (std::filesystem::temp_directory_path() / "electsim-fleet-shards-test.jsonl").string();
  const auto r = runner::run_scenario(loaded(document), runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  std::istringstream text(testing::slurp(path));
  std::remove(path.c_str());
  const analysis::TraceReadResult read = analysis::read_trace(text);
  REQUIRE(read.error == "");
  REQUIRE(read.report.fleet);
  REQUIRE(read.report.fleet->by_shard.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    const analysis::ShardFigures& a = r.report.fleet->by_shard[k];
    const analysis::ShardFigures& b = read.report.fleet->by_shard[k];
    CHECK(a.name == b.name);
    CHECK(a.services == b.services);
    CHECK(a.coordinator_requests == b.coordinator_requests);
    CHECK(a.unavailable_time == b.unavailable_time);
    CHECK(a.leader_changes == b.leader_changes);
  }
  // Each shard elected its own leader, and store-2 again.
  CHECK(r.report.store.leader_elections >= 5);
  CHECK(read.report.store.leader_elections == r.report.store.leader_elections);
  CHECK(read.report.store.linearizability_violations == 0);
  CHECK(read.report.leaderless_time == r.report.leaderless_time);
}

TEST_CASE("fleet shards: what a sharded store cannot be is refused with where and why") {
  json one_election = json::parse(R"({"name": "one", "duration": "10s", "nodes": 3,
    "protocol": {"name": "lease"}, "store": {"shards": 2}})");
  fails(one_election, "at /store/shards: expected 1 for a world of one election");
  json document = sharded_fleet();
  document["store"]["shards"] = 65;
  fails(document,
        "at /store/shards: expected a whole number of independent store clusters from 1 "
        "to 64");
  document = sharded_fleet();
  document["faults"][0].erase("target");
  fails(document,
        "at /faults/0/target: expected the shard that stalls: \"store-0\" to "
        "\"store-3\", found nothing");
  document["faults"][0]["target"] = "store-4";
  fails(document, "found \"store-4\"");
  document["faults"] =
      json::array({{{"at", "1s"}, {"kind", "clock_step"}, {"target", "store"}, {"by", "1s"}}});
  fails(document,
        "at /faults/0/target: expected a shard's server by its name (\"store-0\" to "
        "\"store-3\"): a sharded store has no one store");
  document["store"]["members"] = 3;
  document["faults"] = json::array({{{"at", "1s"}, {"kind", "crash"}, {"target", "store_leader"}}});
  fails(document, "each with members \"store-0:0\" to \"store-0:2\"");
  // A shard's own servers are targets by name.
  document["faults"] = json::array(
      {{{"at", "1s"}, {"kind", "crash"}, {"target", "store-3:2"}},
       {{"at", "2s"}, {"kind", "store_pause"}, {"target", "store-1"}, {"duration", "1s"}}});
  CHECK(load(document).scenario);
}

// ---- An auto-scaler (`services.autoscale`) --------------------------------------------------

namespace {

// Four lease services of three replicas each grow to six from 10 s over 20 s.
json scaled_fleet() {
  return json::parse(R"({"name": "scaled", "duration": "40s",
    "services": {"count": 4, "replicas": 3, "autoscale": {"to": 6, "at": "10s", "over": "20s"}},
    "protocol": {"name": "lease", "ttl": "3s"},
    "workload": {"interval": "500ms"}})");
}

}  // namespace

TEST_CASE("fleet autoscale: the added replicas start stopped and are started round by round") {
  const runner::Scenario s = loaded(scaled_fleet());
  REQUIRE(s.world.node_count == 24);
  REQUIRE(s.world.groups.size() == 4);
  CHECK(s.world.groups[1].nodes.front() == 6);  // each service has its grown size
  // Replicas 3 to 5 of every service start stopped: 12 nodes, each started once by a restart.
  REQUIRE(s.world.start_stopped.size() == 12);
  std::map<sim::NodeId, sim::Time> started;
  for (const sim::FaultSpec& f : s.world.faults) {
    if (f.kind != sim::FaultKind::restart) continue;
    CHECK(started.emplace(f.target.node, f.at).second);
  }
  REQUIRE(started.size() == 12);
  for (const sim::NodeId n : s.world.start_stopped) {
    INFO(n);
    CHECK(n % 6 >= 3);
    REQUIRE(started.count(n) == 1);
    CHECK(started[n] >= sim::Time(std::chrono::seconds(10)));
    CHECK(started[n] < sim::Time(std::chrono::seconds(30)));
  }
  // Round by round: every service has its fourth replica before any has its fifth.
  CHECK(started[3] < started[4]);
  CHECK(started[21] < started[4]);
  CHECK(started[0 * 6 + 3] == sim::Time(std::chrono::seconds(10)));
}

TEST_CASE("fleet autoscale: a replica is down until the auto-scaler starts it, then joins") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "electsim-fleet-autoscale-test.jsonl").string();
  const auto r =
      runner::run_scenario(loaded(scaled_fleet()), runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  const std::string text = testing::slurp(path);
  std::remove(path.c_str());
  // Node 5 (service 0's last replica) is down from the start and restarted in the last round.
  std::istringstream lines(text);
  std::string line;
  bool down_at_start = false;
  std::optional<std::int64_t> restarted_at;
  std::optional<std::int64_t> first_request;
  while (std::getline(lines, line)) {
    const json e = json::parse(line);
    if (!e.contains("ev")) continue;
    if (e["ev"] == "crash" && e["node"] == 5 && e["t"] == 0) down_at_start = e["graceful"] == true;
    if (e["ev"] == "restart" && e["node"] == 5) restarted_at = e["t"].get<std::int64_t>();
    if (e["ev"] == "store_request" && e["node"] == 5 && !first_request) {
      first_request = e["t"].get<std::int64_t>();
    }
  }
  CHECK(down_at_start);
  REQUIRE(restarted_at);
  REQUIRE(first_request);
  CHECK(*first_request >= *restarted_at);  // it asked nothing while it did not exist
  // The trace reads back whole, and every service kept one leader throughout.
  std::istringstream in(text);
  const analysis::TraceReadResult read = analysis::read_trace(in);
  REQUIRE(read.error == "");
  CHECK(read.report.elections == r.report.elections);
  CHECK(r.report.fleet->services_split_brain == 0);
  CHECK(r.report.fleet->leader_changes.max == 0);
}

TEST_CASE("fleet autoscale: an auto-scaler that cannot be is refused at its pointer") {
  json document = scaled_fleet();
  document["services"]["autoscale"]["to"] = 3;
  fails(document,
        "at /services/autoscale/to: expected the replicas each service grows to: a "
        "whole number from 4 to");
  document = scaled_fleet();
  document["services"]["autoscale"].erase("at");
  fails(document, "at /services/autoscale/at: expected when the auto-scaler starts");
  document = scaled_fleet();
  document["services"]["autoscale"]["over"] = "35s";
  fails(document,
        "at /services/autoscale: expected an auto-scaler that is done before the run "
        "ends");
  document = scaled_fleet();
  document["services"]["autoscale"]["every"] = "1s";
  fails(document, "every");
}

// ---- Lease aggregators (`aggregator`) ---------------------------------------------------------

namespace {

// Twenty lease services of three nodes behind one aggregator with the services' own TTL.
json aggregated_fleet() {
  return json::parse(R"({"name": "aggregated", "duration": "40s",
    "services": {"count": 20, "replicas": 3},
    "protocol": {"name": "lease", "ttl": "3s"},
    "workload": {"interval": "500ms"},
    "aggregator": {"ttl": "3s"}})");
}

}  // namespace

TEST_CASE("fleet aggregator: the store sees the aggregator's one session, not each service's") {
  json plain = aggregated_fleet();
  plain.erase("aggregator");
  const runner::RunResult without = run(plain);
  const runner::RunResult with = run(aggregated_fleet());
  // Without a proxy the store applies what the clients ask (every request but a watch's
  // registration).
  const auto op_count = [](const runner::RunResult& r, sim::StoreOp op) {
    return r.report.store_requests[static_cast<std::size_t>(op)];
  };
  CHECK(without.report.store.requests_served ==
        without.report.store_requests_total - op_count(without, sim::StoreOp::watch));
  CHECK(without.report.fleet->aggregators == 0);
  // Behind the aggregator the services ask as much, but their keepalives stop there: the store
  // serves the rest and one keepalive a renew interval (a second) for everyone.
  const auto keepalives = op_count(with, sim::StoreOp::lease_keepalive);
  CHECK(with.report.fleet->aggregators == 1);
  CHECK(keepalives > 500);  // twenty leaders, every second, for 40 s
  const auto passed_on =
      with.report.store_requests_total - keepalives - op_count(with, sim::StoreOp::watch);
  CHECK(with.report.store.requests_served >= passed_on);
  CHECK(with.report.store.requests_served <= passed_on + 45);  // its grant and 40 keepalives
  // Every service elects and keeps its leader as it does on the store itself.
  CHECK(with.report.fleet->services_never_led == 0);
  CHECK(with.report.fleet->leader_changes.max == 0);
  CHECK(with.report.fleet->services_split_brain == 0);
  CHECK_THAT(analysis::format_summary(with.info, with.report, with.verdict),
             Catch::Contains("  behind 1 lease aggregator: the services asked them"));
}

TEST_CASE("fleet aggregator: a crashed holder's key goes once it has been silent for a TTL") {
  json document = aggregated_fleet();
  document["faults"] =
      json::array({{{"at", "15s"}, {"kind", "crash"}, {"target", "svc-3:leader"}}});
  const runner::RunResult r = run(document);
  const analysis::FleetReport& f = *r.report.fleet;
  REQUIRE(r.report.failovers.size() == 1);
  REQUIRE(r.report.failovers[0].failover);
  // The aggregator keeps the shared lease alive, so the key outlives its holder only until the
  // aggregator sees the holder silent for a TTL (3 s), at its next renewal tick (1 s).
  CHECK(*r.report.failovers[0].failover > std::chrono::seconds(2));
  CHECK(*r.report.failovers[0].failover < std::chrono::milliseconds(4500));
  CHECK(f.services_split_brain == 0);
  CHECK(r.report.stale_writes_accepted == 0);
}

TEST_CASE("fleet aggregator: one aggregator's pause is an outage of every service behind it") {
  json document = aggregated_fleet();
  document["aggregator"]["tiers"] = 2;
  document["faults"] = json::array(
      {{{"at", "15s"}, {"kind", "pause"}, {"target", "aggregator:1"}, {"duration", "5s"}}});
  const std::string path =
      (std::filesystem::temp_directory_path() / "electsim-fleet-aggregator-test.jsonl").string();
  const auto r = runner::run_scenario(loaded(document), runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  const runner::Scenario s = loaded(document);
  const analysis::FleetReport& f = *r.report.fleet;
  for (std::size_t k = 0; k < f.by_service.size(); ++k) {
    INFO(f.by_service[k].name);
    // Services 10 to 19 are the second tier's: the shared lease outlives none of their claims.
    CHECK(s.world.groups[k].via == (k >= 10 ? "aggregator:1" : "aggregator:0"));
    CHECK((f.by_service[k].elections > 1) == (k >= 10));
    if (k >= 10) CHECK(f.by_service[k].outage_time > std::chrono::seconds(4));
  }
  CHECK(f.services_split_brain == 0);
  CHECK(r.report.stale_writes_accepted == 0);
  std::istringstream text(testing::slurp(path));
  std::remove(path.c_str());
  const analysis::TraceReadResult read = analysis::read_trace(text);
  REQUIRE(read.error == "");
  CHECK(read.report.elections == r.report.elections);
  CHECK(read.report.store.requests_served == r.report.store.requests_served);
}

TEST_CASE("fleet aggregator: what an aggregator cannot stand in front of is refused") {
  json one_election = json::parse(R"({"name": "one", "duration": "10s", "nodes": 3,
    "protocol": {"name": "lease"}, "aggregator": {"ttl": "10s"}})");
  fails(one_election, "at /aggregator: expected no aggregator section for a world of one election");
  json document = aggregated_fleet();
  document["protocol"]["ttl"] = "5s";
  fails(document,
        "at /aggregator/ttl: expected a TTL at least every service's own (5s of the "
        "services), found 3s");
  document = aggregated_fleet();
  document["protocol"] = {{"name", "kubernetes"}};
  fails(document, "at /aggregator: expected a fleet of the lease protocol");
  document = aggregated_fleet();
  document["store"] = {{"members", 3}};
  fails(document, "at /aggregator: expected a fleet on one single store");
  document = aggregated_fleet();
  document["aggregator"].erase("ttl");
  fails(document, "at /aggregator/ttl: expected the shared lease's TTL");
  document = aggregated_fleet();
  document["aggregator"]["renew_interval"] = "2s";
  fails(document,
        "at /aggregator/renew_interval: expected a duration of at most a third of the TTL");
}
