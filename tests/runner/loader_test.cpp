// Tests of the scenario loader (runner/loader.hpp, docs/scenario-format.md): documented defaults,
// one located problem per kind of bad input, several problems at once, --set overrides, variants,
// and the built-in flagship agreeing with its file.
// Long on purpose: a table of every kind of bad input and its message, which reads best whole.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "servers/registry.hpp"
#include "servers/world.hpp"

namespace {

using electsim::params::Problem;
using electsim::runner::LoadOptions;
using electsim::runner::LoadResult;
using electsim::runner::Override;
using electsim::sim::Duration;
using electsim::sim::Time;
using nlohmann::json;
using namespace std::chrono_literals;

const char* const kMinimal = R"({
  "name": "minimal",
  "duration": "30s",
  "nodes": 5,
  "protocol": {"name": "lease"}
})";

std::string all_messages(const LoadResult& r) {
  std::string out;
  for (const std::string& m : r.messages()) out += m + "\n";
  return out;
}

LoadResult load(const json& document, const LoadOptions& options = {}) {
  return electsim::runner::load_scenario_json(document, "test.json", options);
}

// The minimal scenario with `fragment` merged in (RFC 7386: null removes a key).
json with(const std::string& fragment) {
  json document = json::parse(kMinimal);
  document.merge_patch(json::parse(fragment));
  return document;
}

const Problem* problem_at(const LoadResult& r, const std::string& pointer) {
  const auto it = std::find_if(r.problems.begin(), r.problems.end(),
                               [&](const Problem& p) { return p.pointer == pointer; });
  return it == r.problems.end() ? nullptr : &*it;
}

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("ELECTSIM_SOURCE_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("loader: a minimal scenario loads with the documented defaults") {
  const LoadResult r = electsim::runner::load_scenario_text(kMinimal, "minimal.json");
  INFO(all_messages(r));
  REQUIRE(r.problems.empty());
  REQUIRE(r.scenario.has_value());
  const auto& s = *r.scenario;
  CHECK(s.source == "minimal.json");
  CHECK(s.name == "minimal");
  CHECK(s.description.empty());
  CHECK(s.variant.empty());
  CHECK(s.world.seed == 1);
  CHECK(s.world.duration == 30s);
  CHECK(s.world.node_count == 5);
  REQUIRE(s.world.clocks.size() == 5);
  for (const auto& clock : s.world.clocks) {
    CHECK(clock.offset == Duration(0));
    CHECK(clock.drift_ppb == 0);
    CHECK(clock.steps.empty());
  }
  CHECK(s.services.store_clock.drift_ppb == 0);
  CHECK(s.world.network.latency.kind == electsim::sim::DistributionKind::constant);
  CHECK(s.world.network.latency.value == 1ms);
  CHECK(s.world.network.links.empty());
  CHECK(s.world.network.loss == 0u);
  CHECK(s.world.network.duplicate == 0u);
  CHECK(s.world.network.in_flight == electsim::sim::InFlightPolicy::drop_if_cut_on_arrival);
  CHECK(s.services.store.min_ttl == Duration(0));
  CHECK(s.services.store.expiry_scan_interval == Duration(0));
  CHECK(s.services.store.tick_time == Duration(2s));  // zoo_sample.cfg's tickTime
  CHECK_FALSE(s.services.store.capacity.limited());   // every request served on arrival
  CHECK(s.services.sink.fencing == true);
  CHECK(s.world.faults.empty());
  CHECK(s.workload.enabled == true);
  CHECK(s.workload.interval == 100ms);
  CHECK(s.workload.work.kind == electsim::sim::DistributionKind::constant);
  CHECK(s.workload.work.value == Duration(0));
  CHECK(s.expect.empty());
  CHECK(s.protocol == "lease");
  CHECK(s.protocol_params == json::object());
  CHECK(static_cast<bool>(s.prepared.factory));
  CHECK(s.document == json::parse(kMinimal));
  const LoadOptions defaults;
  CHECK(s.world.limits.max_events == defaults.limits.max_events);
  CHECK(s.limits.max_nodes == defaults.limits.max_nodes);
}

TEST_CASE("loader: the world's election group and servers reach the trace header's topology") {
  const LoadResult r = electsim::runner::load_scenario_text(
      R"({"name": "g", "duration": "10s", "nodes": 3, "protocol": {"name": "lease"},
          "store": {"members": 3}})",
      "g.json");
  REQUIRE(r.scenario);
  const electsim::runner::Scenario& s = *r.scenario;
  REQUIRE(s.world.groups.size() == 1);
  CHECK(s.world.groups[0].name == "election");
  CHECK(s.world.groups[0].protocol == "lease");
  CHECK(s.world.groups[0].nodes == std::vector<electsim::sim::NodeId>{0, 1, 2});
  CHECK(s.world.groups[0].key == s.prepared.leader_key);
  const electsim::sim::WorldConfig world = electsim::runner::world_for_seed(s, 1);
  const electsim::analysis::TraceHeader header = electsim::runner::trace_header(s, world);
  const electsim::sim::Topology& t = header.topology;
  REQUIRE(t.groups().size() == 1);
  CHECK(t.groups()[0].protocol == "lease");
  CHECK(t.group_size("store") == 3);
  CHECK(t.name_of(electsim::sim::store_member_endpoint(1)) == "store:1");
  CHECK(t.kind_of(electsim::sim::kSinkEndpoint) == "sink");
  CHECK(t.find("store:2") == electsim::sim::store_member_endpoint(2));
  CHECK_FALSE(t.find("store:3").has_value());
  CHECK(t.find("2") == 2);
  CHECK_FALSE(t.find("3").has_value());
  CHECK(header.store_members == 3);
}

TEST_CASE("loader: every section is converted to the kernel's types") {
  const json document = with(R"({
    "description": "all sections",
    "seed": 99,
    "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"},
                "links": [{"from": 0, "to": "store", "both_ways": false, "latency": "40ms"}],
                "loss": 0.01, "duplicate": 0.5, "in_flight": "deliver"},
    "clocks": {"default": {"drift_ppm": 20.5},
               "nodes": {"1": {"offset": "-1s"}, "3": {"drift_ppm": -50, "steps": [{"at": "10s", "by": "-500ms"}]}},
               "store": {"offset": "2s"}},
    "store": {"min_ttl": "2s", "expiry_scan_interval": "500ms", "tick_time": "3s"},
    "sink": {"fencing": false},
    "workload": {"enabled": false, "interval": "250ms", "work": "5ms"},
    "faults": [
      {"at": "5s", "kind": "pause", "target": "leader", "duration": "6s"},
      {"at": "6s", "kind": "partition", "groups": [[0, 1], [2, 3, 4, "store"]], "duration": "2s"},
      {"at": "7s", "kind": "cut", "from": 2, "to": "sink"},
      {"at": "8s", "kind": "loss", "probability": 0.25, "duration": "1s"},
      {"at": "9s", "kind": "clock_drift", "target": 4, "drift_ppm": 100},
      {"at": "10s", "kind": "clock_step", "target": "store", "by": "-1s"},
      {"at": "11s", "kind": "latency_spike", "extra": {"dist": "exponential", "mean": "50ms"}, "duration": "1s"},
      {"at": "12s", "kind": "crash", "target": 3}
    ]
  })");
  const LoadResult r = load(document);
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  const auto& w = r.scenario->world;
  CHECK(r.scenario->description == "all sections");
  CHECK(w.seed == 99);
  CHECK(w.network.latency.kind == electsim::sim::DistributionKind::uniform);
  CHECK(w.network.latency.max == 10ms);
  REQUIRE(w.network.links.size() == 1);
  CHECK(w.network.links[0].from == 0);
  CHECK(w.network.links[0].to == electsim::sim::kStoreEndpoint);
  CHECK(w.network.links[0].both_ways == false);
  CHECK(w.network.links[0].latency.value == 40ms);
  CHECK(w.network.loss == 10'000u);
  CHECK(w.network.duplicate == 500'000u);
  CHECK(w.network.in_flight == electsim::sim::InFlightPolicy::deliver);
  // The default clock applies to every node; a node's keys replace only what they name.
  CHECK(w.clocks[0].drift_ppb == 20'500);
  CHECK(w.clocks[0].offset == Duration(0));
  CHECK(w.clocks[1].drift_ppb == 20'500);
  CHECK(w.clocks[1].offset == -1s);
  CHECK(w.clocks[3].drift_ppb == -50'000);
  REQUIRE(w.clocks[3].steps.size() == 1);
  CHECK(w.clocks[3].steps[0].at == Time(10s));
  CHECK(w.clocks[3].steps[0].by == -500ms);
  CHECK(r.scenario->services.store_clock.offset == 2s);
  CHECK(r.scenario->services.store_clock.drift_ppb == 0);
  CHECK(r.scenario->services.store.min_ttl == 2s);
  CHECK(r.scenario->services.store.expiry_scan_interval == 500ms);
  CHECK(r.scenario->services.store.random_scan_phase);
  CHECK(r.scenario->services.store.tick_time == 3s);
  CHECK(r.scenario->services.sink.fencing == false);
  CHECK(r.scenario->workload.enabled == false);
  CHECK(r.scenario->workload.interval == 250ms);
  CHECK(r.scenario->workload.work.value == 5ms);

  using electsim::sim::FaultKind;
  using electsim::sim::TargetKind;
  REQUIRE(w.faults.size() == 8);
  CHECK(w.faults[0].kind == FaultKind::pause);
  CHECK(w.faults[0].at == Time(5s));
  CHECK(w.faults[0].target.kind == TargetKind::leader);
  CHECK(w.faults[0].duration == 6s);
  CHECK(w.faults[1].kind == FaultKind::partition);
  REQUIRE(w.faults[1].groups.size() == 2);
  CHECK(w.faults[1].groups[1] ==
        std::vector<electsim::sim::Endpoint>{2, 3, 4, electsim::sim::kStoreEndpoint});
  CHECK(w.faults[2].from == 2);
  CHECK(w.faults[2].to == electsim::sim::kSinkEndpoint);
  CHECK(w.faults[2].duration == Duration(0));
  CHECK(w.faults[3].probability == 250'000u);
  CHECK(w.faults[4].drift_ppb == 100'000);
  CHECK(w.faults[4].target.kind == TargetKind::node);
  CHECK(w.faults[4].target.node == 4);
  CHECK(w.faults[5].target.kind == TargetKind::store);
  CHECK(w.faults[5].clock_amount == -1s);
  CHECK(w.faults[6].extra_latency.kind == electsim::sim::DistributionKind::exponential);
  CHECK(w.faults[6].extra_latency.mean == 50ms);
  CHECK(w.faults[7].kind == FaultKind::crash);
  CHECK(w.faults[7].duration == Duration(0));  // no automatic restart
}

TEST_CASE("loader: the store's capacity reaches the store, with etcd's queue limit by default") {
  const LoadResult r = load(with(R"({"store": {"members": 3, "capacity": {
      "service_time": {"dist": "exponential", "mean": "33us"}, "concurrency": 2}}})"));
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  const electsim::servers::CapacityConfig& c = r.scenario->services.store.capacity;
  REQUIRE(c.limited());
  CHECK(c.service_time->kind == electsim::sim::DistributionKind::exponential);
  CHECK(c.service_time->mean == 33us);
  CHECK(c.concurrency == 2);
  CHECK(c.queue_limit == 5000);  // etcd's maxGapBetweenApplyAndCommitIndex
}

TEST_CASE("loader: each kind of bad input is one problem at its pointer") {
  const auto [fragment, pointer, part] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"duration": "-5s"})", "/duration", "non-negative duration"},
      {R"({"duration": "0s"})", "/duration", "above 0"},
      {R"({"duration": 30})", "/duration", "durations need a unit"},
      {R"({"duration": "1000h"})", "/duration", "(the limit on duration)"},
      {R"({"duration": null})", "/duration", "required"},
      {R"({"nodes": 5000})", "/nodes",
       "expected at most 1000 nodes (the limit on nodes), found 5000"},
      {R"({"nodes": 0})", "/nodes", "from 1"},
      {R"({"nodes": "five"})", "/nodes", "whole number"},
      {R"({"name": null})", "/name", "required"},
      {R"({"name": 3})", "/name", "a string"},
      {R"({"seed": -1})", "/seed", "from 0"},
      {R"({"netwrok": {}})", "/netwrok", "did you mean \"network\"?"},
      {R"({"network": {"loss": 1.5}})", "/network/loss", "probability from 0 to 1"},
      {R"({"network": {"duplicate": -0.1}})", "/network/duplicate", "probability from 0 to 1"},
      {R"({"network": {"latency": {"dist": "uniform", "min": "5ms", "max": "1ms"}}})",
       "/network/latency/max", "at least the min"},
      {R"({"network": {"links": [{"from": 0, "to": 9, "latency": "1ms"}]}})", "/network/links/0/to",
       "from 0 to 4"},
      {R"({"network": {"links": [{"from": 0, "to": 1}]}})", "/network/links/0/latency", "required"},
      {R"({"network": {"in_flight": "deliverr"}})", "/network/in_flight",
       "did you mean \"deliver\"?"},
      {R"({"disk": {"fsynk": "1ms"}})", "/disk/fsynk", "did you mean \"fsync\"?"},
      {R"({"disk": {"fsync": "-1ms"}})", "/disk/fsync", "non-negative duration"},
      {R"({"faults": [{"at": "1s", "kind": "disk_stall", "target": 0}]})", "/faults/0/duration",
       "a \"disk_stall\" fault needs \"duration\""},
      {R"({"protocol": null})", "/protocol", "required"},
      {R"({"protocol": {"name": "leese"}})", "/protocol/name", "did you mean \"lease\"?"},
      {R"({"protocol": {"name": null, "ttl": "2s"}})", "/protocol/name", "required"},
      {R"({"protocol": {"name": "lease", "tll": "3s"}})", "/protocol/tll", "did you mean \"ttl\"?"},
      {R"({"protocol": {"name": "lease", "ttl": "2s", "renew_interval": "3s"}})",
       "/protocol/renew_interval", "shorter than ttl"},
      {R"({"protocol": {"name": "consul", "ttl": "5s"}})", "/protocol/ttl",
       "a duration from \"10s\" to \"24h\""},
      {R"({"protocol": {"name": "consul", "lock_delay": "90s"}})", "/protocol/lock_delay",
       "a duration from \"0s\" to \"1m\""},
      {R"({"protocol": {"name": "consul", "behavior": "keep"}})", "/protocol/behavior", "release"},
      {R"({"protocol": {"name": "consul", "ttl": "10s", "renew_interval": "10s"}})",
       "/protocol/renew_interval", "shorter than ttl (10s)"},
      {R"({"protocol": {"name": "consul", "fencing_token": "lock_index", "behavior": "delete"}})",
       "/protocol/fencing_token", "LockIndex starts again at 1"},
      {R"({"protocol": {"name": "kubernetes", "expiry": "client"}})", "/protocol/expiry",
       "no expiry: the kubernetes protocol is client mode"},
      {R"({"protocol": {"name": "kubernetes", "lease_duration_from": "mine"}})",
       "/protocol/lease_duration_from", "one of \"record\", \"own\", found \"mine\""},
      {R"({"protocol": {"name": "kubernetes", "expiry_judged_by": "renewtime"}})",
       "/protocol/expiry_judged_by", "did you mean \"renew_time\"?"},
      {R"({"protocol": {"name": "lease", "lease_duration_from": "own"}})",
       "/protocol/lease_duration_from", "it applies to client mode"},
      {R"({"protocol": {"name": "lease", "per_node": {"1": {"ttl": "30s"}}}})",
       "/protocol/per_node", "no per_node with \"expiry\": \"store\""},
      {R"({"protocol": {"name": "kubernetes", "per_node": [1]}})", "/protocol/per_node",
       "an object from node id to timings"},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"5": {"ttl": "30s"}}}})",
       "/protocol/per_node/5", "a node id written in decimal, below the cluster size (5)"},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"01": {"ttl": "30s"}}}})",
       "/protocol/per_node/01", "found the key \"01\""},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"1": "30s"}}})", "/protocol/per_node/1",
       "the node's timings"},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"1": {"tll": "30s"}}}})",
       "/protocol/per_node/1/tll", "did you mean \"ttl\"?"},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"1": {"ttl": "0s"}}}})",
       "/protocol/per_node/1/ttl", "at least \"1ms\""},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"1": {"ttl": "8s"}}}})",
       "/protocol/per_node/1/renew_deadline",
       "expected a duration shorter than ttl (8s), found 10s (the cluster-wide value)"},
      {R"({"protocol": {"name": "kubernetes", "per_node": {"2": {"renew_deadline": "1s"}}}})",
       "/protocol/per_node/2/renew_deadline", "at least renew_interval (2s)"},
      {R"({"protocol": {"name": "kubernetes", "ttl": "8s"}})", "/protocol/renew_deadline",
       "found 10s (client-go's default)"},
      {R"({"clocks": {"nodes": {"9": {"drift_ppm": 10}}}})", "/clocks/nodes/9", "from 0 to 4"},
      {R"({"clocks": {"nodes": {"x": {"drift_ppm": 10}}}})", "/clocks/nodes/x", "a node id"},
      {R"({"clocks": {"default": {"drift_ppm": 600000}}})", "/clocks/default/drift_ppm",
       "-500000 to 500000"},
      {R"({"clocks": {"store": {"steps": [{"at": "31s", "by": "1s"}]}}})",
       "/clocks/store/steps/0/at", "before the end"},
      {R"({"clocks": {"default": {"ofset": "1s"}}})", "/clocks/default/ofset",
       "did you mean \"offset\"?"},
      {R"({"store": {"min_ttl": "-1s"}})", "/store/min_ttl", "non-negative"},
      {R"({"store": {"tick_time": "0s"}})", "/store/tick_time", "above 0"},
      {R"({"store": {"members": 0}})", "/store/members", "from 1 to 7 (etcd runs 3 or 5)"},
      {R"({"store": {"members": 8}})", "/store/members", "from 1 to 7"},
      {R"({"store": {"capacity": {}}})", "/store/capacity/service_time",
       "nothing (the key is required)"},
      {R"({"store": {"capacity": {"service_time": "-1ms"}}})", "/store/capacity/service_time",
       "non-negative"},
      {R"({"store": {"capacity": {"service_time": "1ms", "concurrency": 0}}})",
       "/store/capacity/concurrency", "from 1 to 1024 (requests served at once)"},
      {R"({"store": {"capacity": {"service_time": "1ms", "queue_limit": 1000001}}})",
       "/store/capacity/queue_limit", "from 0 to 1000000"},
      {R"({"store": {"capacity": {"service_time": "1ms", "queue_limit": -1}}})",
       "/store/capacity/queue_limit", "found -1"},
      {R"({"store": {"capacity": {"service_time": "1ms", "rate": 5}}})", "/store/capacity/rate",
       "the store's capacity"},
      {R"({"store": {"capacity": 5}})", "/store/capacity", "found 5"},
      {R"({"store": {"members": 3, "clients": [0, 1]}})", "/store/clients",
       "an array of 5 member indexes"},
      {R"({"store": {"members": 3, "clients": [0, 1, 2, 0, 3]}})", "/store/clients/4",
       "a member index from 0 to 2"},
      {R"({"store": {"members": 3, "heartbeat_interval": "1s"}})", "/store/heartbeat_interval",
       "below election_timeout (1s)"},
      {R"({"store": {"members": 3, "expiry_scan_interval": "0s"}})", "/store/expiry_scan_interval",
       "above 0 for a replicated store"},
      {R"({"store": {"members": 3, "request_timeout": "0s"}})", "/store/request_timeout",
       "at least \"1ms\" (the shortest server timer)"},
      {R"({"store": {"members": 3}, "faults": [{"at": "1s", "kind": "crash", "target": "store:3"}]})",
       "/faults/0/target", "store members are \"store:0\" to \"store:2\""},
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "store_leader"}]})",
       "/faults/0/target", "only in a replicated store: set store.members to 3 or 5"},
      {R"({"faults": [{"at": "1s", "kind": "partition", "groups": [["store:1"], [0]]}]})",
       "/faults/0/groups/0/0", "only in a replicated store"},
      {R"({"sink": {"fencing": "yes"}})", "/sink/fencing", "true or false"},
      {R"({"workload": {"interval": "0s"}})", "/workload/interval", "above 0"},
      {R"({"workload": {"work": "slow"}})", "/workload/work", "non-negative duration"},
      {R"({"faults": {"at": "1s"}})", "/faults", "an array"},
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": 7}]})", "/faults/0/target",
       "a node id from 0 to 4"},
      {R"({"faults": [{"at": "40s", "kind": "crash", "target": 0}]})", "/faults/0/at",
       "before the end of the run"},
      {R"({"faults": [{"at": "30s", "kind": "heal"}]})", "/faults/0/at", "before the end"},
      {R"({"faults": [{"at": "-1s", "kind": "heal"}]})", "/faults/0/at", "non-negative"},
      {R"({"faults": [{"kind": "heal"}]})", "/faults/0/at", "needs \"at\""},
      {R"({"faults": [{"at": "1s", "kind": "crahs", "target": 0}]})", "/faults/0/kind",
       "did you mean \"crash\"?"},
      {R"({"faults": [{"at": "1s", "kind": "pause", "target": 0}]})", "/faults/0/duration",
       "needs \"duration\""},
      {R"({"faults": [{"at": "1s", "kind": "pause", "target": 0, "duration": "0s"}]})",
       "/faults/0/duration", "above 0"},
      {R"({"faults": [{"at": "1s", "kind": "pause", "target": 0, "duration": "1s", "groups": []}]})",
       "/faults/0/groups", "\"pause\" fault"},
      {R"({"faults": [{"at": "1s", "kind": "crash"}]})", "/faults/0/target", "needs \"target\""},
      // A server no fault acts on is no target: the sink, by the name a kind gives it.
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "sink"}]})", "/faults/0/target",
       "found \"sink\""},
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "postgres"}]})", "/faults/0/target",
       "the database server exists only with a database protocol or a postgres section"},
      // The single store does not crash in electsim's model: its fault is store_pause.
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "store"}]})", "/faults/0/target",
       "found \"store\", the single store, on which crash does nothing"},
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "leadr"}]})", "/faults/0/target",
       "did you mean \"leader\"?"},
      {R"({"faults": [{"at": "1s", "kind": "partition", "groups": [[0, 1], [1, 2]]}]})",
       "/faults/0/groups/1/0", "at most one group"},
      {R"({"faults": [{"at": "1s", "kind": "partition", "groups": [[0, 1]]}]})", "/faults/0/groups",
       "at least two groups"},
      {R"({"faults": [{"at": "1s", "kind": "partition", "groups": [[0], []]}]})",
       "/faults/0/groups/1", "non-empty"},
      {R"({"faults": [{"at": "1s", "kind": "cut", "from": 0, "to": 0}]})", "/faults/0/to",
       "other than"},
      {R"({"faults": [{"at": "1s", "kind": "loss", "probability": 2, "duration": "1s"}]})",
       "/faults/0/probability", "probability from 0 to 1"},
      {R"({"faults": [{"at": "1s", "kind": "clock_drift", "target": 0, "drift_ppm": 1e6}]})",
       "/faults/0/drift_ppm", "-500000 to 500000"},
      {R"({"faults": [{"at": "1s", "kind": "latency_spike", "duration": "1s"}]})",
       "/faults/0/extra", "needs \"extra\""},
      {R"({"expect": {"split_brain": {"max": "0s"}}})", "/expect/split_brain",
       "did you mean \"split_brain_time\"?"},
      {R"({"expect": {"stale_writes_acepted": {"max": 0}}})", "/expect/stale_writes_acepted",
       "did you mean \"stale_writes_accepted\"?"},
      {R"({"expect": {"split_brain_time": {"max": 5}}})", "/expect/split_brain_time/max",
       "durations need a unit"},
      {R"({"expect": {"failovers": {"min": 3, "max": 1}}})", "/expect/failovers/max",
       "at least the min"},
      {R"({"expect": {"failovers": {"mni": 3}}})", "/expect/failovers/mni",
       "did you mean \"min\"?"},
      {R"({"expect": {"failovers": {"max": "3"}}})", "/expect/failovers/max", "a number"},
      {R"({"expect": {"failovers": {}}})", "/expect/failovers", "at least one of"},
      {R"({"postgres": {"tcp_keepalives_idle": "1500ms"}})", "/postgres/tcp_keepalives_idle",
       "a whole number of seconds"},
      {R"({"postgres": {"tcp_keepalives_interval": "40000s"}})",
       "/postgres/tcp_keepalives_interval", "\"32767s\" (Linux's limit)"},
      {R"({"postgres": {"tcp_keepalives_idle": "-1s"}})", "/postgres/tcp_keepalives_idle",
       "non-negative duration"},
      {R"({"postgres": {"tcp_keepalives_count": 128}})", "/postgres/tcp_keepalives_count",
       "from 0 (the system default) to 127"},
      {R"({"postgres": {"tcp_keepalives_count": 2.5}})", "/postgres/tcp_keepalives_count",
       "whole number of probes"},
      {R"({"postgres": {"idle_in_transaction_session_timeout": "1500us"}})",
       "/postgres/idle_in_transaction_session_timeout", "a whole number of milliseconds"},
      {R"({"postgres": {"tcp_keepalive_idle": "5s"}})", "/postgres/tcp_keepalive_idle",
       "did you mean \"tcp_keepalives_idle\"?"},
      {R"({"postgres": 5})", "/postgres", "the postgres section"},
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "postgres"}]})", "/faults/0/target",
       "the database server exists only with a database protocol or a postgres section"},
      {R"({"faults": [{"at": "1s", "kind": "operator_clear", "target": 0}]})", "/faults/0/target",
       "expected \"store\" (the server that keeps the leadership record"},
      {R"({"faults": [{"at": "1s", "kind": "operator_clear"}]})", "/faults/0/target",
       "expected \"store\" (the server that keeps the leadership record), found nothing"},
      {R"({"postgres": {}, "faults": [{"at": "1s", "kind": "operator_clear", "target": "leader"}]})",
       "/faults/0/target", "expected \"postgres\" or \"store\""},
      {R"({"protocol": {"name": "postgres", "lock": "rows"}})", "/protocol/lock",
       "did you mean \"row\"?"},
      // A wrong parameter of a database protocol leaves its faults on "postgres" valid.
      {R"({"protocol": {"name": "db-flag", "retry_interval": "0s"},
           "faults": [{"at": "1s", "kind": "operator_clear", "target": "postgres"}]})",
       "/protocol/retry_interval", "1ms"},
      {R"({"redis": {"masters": 0}})", "/redis/masters", "from 1 to 9"},
      {R"({"redis": {"masters": 10}})", "/redis/masters", "from 1 to 9"},
      {R"({"redis": {"appendfsync": "everysecond"}})", "/redis/appendfsync",
       "did you mean \"everysec\"?"},
      {R"({"redis": {"master": 3}})", "/redis/master", "the redis section"},
      {R"({"faults": [{"at": "1s", "kind": "crash", "target": "redis:0"}]})", "/faults/0/target",
       "Redis masters exist only with the redlock protocol or a redis section"},
      {R"({"redis": {"masters": 3}, "faults": [{"at": "1s", "kind": "crash", "target": "redis:3"}]})",
       "/faults/0/target", "Redis masters are \"redis:0\" to \"redis:2\""},
      {R"({"redis": {"masters": 3}, "clocks": {"redis": {"3": {"offset": "1s"}}}})",
       "/clocks/redis/3", "a master index from 0 to 2"},
      {R"({"protocol": {"name": "redlock", "tries": 0}})", "/protocol/tries", "from 1 to 10000"},
      {R"({"protocol": {"name": "redlock", "expiry": "1s", "renew_interval": "1s"}})",
       "/protocol/renew_interval", "below the validity time"},
      // Names and indexes are read exactly: "store: 1", "store:01" and "-0" name nothing.
      {R"({"store": {"members": 3},
           "faults": [{"at": "1s", "kind": "crash", "target": "store: 1"}]})",
       "/faults/0/target", "the index after \"store:\" is written in plain digits"},
      {R"({"store": {"members": 3},
           "faults": [{"at": "1s", "kind": "partition", "groups": [["store:01"], [0]]}]})",
       "/faults/0/groups/0/0", "the index after \"store:\" is written in plain digits"},
      {R"({"redis": {"masters": 3},
           "faults": [{"at": "1s", "kind": "crash", "target": "redis:-0"}]})",
       "/faults/0/target", "the index after \"redis:\" is written in plain digits"},
      {R"({"redis": {"masters": 3}, "clocks": {"redis": {"-0": {"offset": "1s"}}}})",
       "/clocks/redis/-0", "a master index from 0 to 2 (redis.masters) as the key, found \"-0\""},
      {R"({"clocks": {"nodes": {"+1": {"offset": "1s"}}}})", "/clocks/nodes/+1",
       "as the key, found \"+1\""},
      // Server timers have the protocols' lower bound.
      {R"({"store": {"members": 3, "election_timeout": "500us"}})", "/store/election_timeout",
       "expected a duration of at least \"1ms\" (the shortest server timer), found \"500us\""},
      {R"({"store": {"members": 3, "heartbeat_interval": "1ns"}})", "/store/heartbeat_interval",
       "(the shortest server timer)"},
      {R"({"store": {"expiry_scan_interval": "3ns"}})", "/store/expiry_scan_interval",
       "expected \"0s\" (a lease expires exactly at its deadline) or a duration of at least "
       "\"1ms\" (the shortest server timer), found \"3ns\""},
      {R"({"store": {"members": 3, "expiry_scan_phase": "randm"}})", "/store/expiry_scan_phase",
       "expected one of \"random\", \"start\", found \"randm\""},
      {R"({"store": {"members": 3, "lease_revoke_rate": 0}})", "/store/lease_revoke_rate",
       "expected a whole number of leases revoked a second from 1 to 1000000 (etcd revokes at "
       "most 1000), found 0"},
      {R"({"store": {"members": 3, "lease_revoke_rate": 1e12}})", "/store/lease_revoke_rate",
       "from 1 to 1000000"},
      {R"({"store": {"members": 3, "lease_revoke_rate": "fast"}})", "/store/lease_revoke_rate",
       "found \"fast\""},
      {R"({"store": {"lease_revoke_rate": 1000}})", "/store/lease_revoke_rate",
       "expected a store that scans for expired leases (expiry_scan_interval above 0"},
      {R"({"network": {"clients": "udp"}})", "/network/clients",
       "expected one of \"tcp\", \"datagram\", found \"udp\""},
      {R"({"network": {"tcp": {"retries2": 0}}})", "/network/tcp/retries2",
       "a whole number of retransmissions from 1 to 100"},
      {R"({"network": {"tcp": {"rto_min": "1s", "rto_max": "500ms"}}})", "/network/tcp/rto_max",
       "a duration of at least rto_min (\"1s\")"},
      {R"({"network": {"tcp": {"rto_max": "2h"}}})", "/network/tcp/rto_max",
       "a duration from rto_min to \"1h\""},
      {R"({"network": {"tcp": {"rto": "1s"}}})", "/network/tcp/rto",
       "one of the keys of the tcp section: rto_min, rto_max, retries2"},
      {R"({"store": {"min_ttl": "999us"}})", "/store/min_ttl",
       "\"0s\" (no minimum) or a duration of at least \"1ms\""},
      // A derived default is refused where the same value given would be.
      {R"({"protocol": {"name": "redlock", "drift_factor": 0.9}})", "/protocol/drift_factor",
       "longer than renew_interval's default, expiry/3 (\"2.666666666s\"), found 0.9, which "
       "leaves \"798ms\""},
      {R"({"protocol": {"name": "redlock", "expiry": "10ms"}})", "/protocol/expiry",
       "a request timeout (expiry*timeout_factor) of at least \"1ms\""},
      {R"({"protocol": {"name": "raft", "check_quorum_lease": "400ms"}})",
       "/protocol/check_quorum_lease", "no check_quorum_lease without \"check_quorum\": true"},
      {R"({"variants": {"v": {"sett": {}}}})", "/variants/v/sett", "did you mean \"set\"?"},
      {R"({"variants": {"v": {"set": {"protocol..ttl": "1s"}}}})", "/variants/v/set/protocol..ttl",
       "dotted path"},
      {R"({"variants": {"v": {"expect": {"stale_writes": {"max": 0}}}}})",
       "/variants/v/expect/stale_writes", "did you mean"},
  }));
  INFO(fragment);
  const LoadResult r = load(with(fragment));
  INFO(all_messages(r));
  CHECK_FALSE(r.scenario.has_value());
  const Problem* p = problem_at(r, pointer);
  REQUIRE(p != nullptr);
  CHECK_THAT(p->format(), Catch::Contains(part));
  // One mistake, one problem; renew_interval >= ttl also makes the default renew_deadline fall
  // below renew_interval, which the protocol reports too.
  CHECK(r.problems.size() <= (pointer == "/protocol/renew_interval" ? 2u : 1u));
}

TEST_CASE("loader: messages name the source, the pointer, what was expected and what was found") {
  const LoadResult r = load(with(R"({"network": {"loss": 1.5}})"));
  REQUIRE(r.problems.size() == 1);
  REQUIRE(r.messages().size() == 1);
  CHECK(r.messages()[0] ==
        "test.json: at /network/loss: expected a probability from 0 to 1, such as 0.01, found 1.5");
}

TEST_CASE(
    "loader: a kubernetes per_node override is checked against the cluster-wide values, with "
    "file, pointer, expected and found") {
  const LoadResult r = load(with(R"({"protocol": {"name": "kubernetes", "ttl": "30s",
      "renew_deadline": "20s", "per_node": {"1": {"ttl": "10s", "renew_deadline": "8s"},
      "3": {"ttl": "12s"}}}})"));
  REQUIRE(r.problems.size() == 1);
  CHECK(r.messages()[0] ==
        "test.json: at /protocol/per_node/3/renew_deadline: expected a duration shorter than "
        "ttl (12s), found 20s (the cluster-wide value); renew_deadline must be shorter than ttl, "
        "or the holder would still believe it leads after its claim expired");
  // Mended, the same overrides load.
  const LoadResult ok = load(with(R"({"protocol": {"name": "kubernetes", "ttl": "30s",
      "renew_deadline": "20s", "per_node": {"1": {"ttl": "10s", "renew_deadline": "8s"},
      "3": {"ttl": "12s", "renew_deadline": "10s"}}}})"));
  INFO(all_messages(ok));
  CHECK(ok.scenario.has_value());
}

TEST_CASE("loader: several problems are all reported at once") {
  const LoadResult r = load(with(R"({
    "duration": "-1s",
    "nodes": 3,
    "network": {"loss": 7},
    "protocol": {"name": "lease", "tll": "3s"},
    "faults": [{"at": "1s", "kind": "crash", "target": 4}],
    "expect": {"split_brain": {"max": "0s"}}
  })"));
  CHECK_FALSE(r.scenario.has_value());
  INFO(all_messages(r));
  for (const char* pointer :
       {"/duration", "/network/loss", "/protocol/tll", "/faults/0/target", "/expect/split_brain"}) {
    INFO(pointer);
    CHECK(problem_at(r, pointer) != nullptr);
  }
  CHECK(r.problems.size() == 5);
  CHECK(r.messages().size() == r.problems.size());
}

TEST_CASE("loader: bad JSON is one problem with its line and column") {
  const LoadResult r = electsim::runner::load_scenario_text(
      "{\n  \"name\": \"x\",\n  \"nodes\": 5,\n}\n", "broken.json");
  CHECK_FALSE(r.scenario.has_value());
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].pointer.empty());
  CHECK_THAT(r.problems[0].found, Catch::Contains("line 4, column 1"));
  CHECK_THAT(r.messages()[0], Catch::StartsWith("broken.json: expected valid JSON, found"));
}

TEST_CASE("loader: empty text and a document that is not an object are one problem each") {
  const auto text = GENERATE(as<std::string>{}, "", "[1, 2]", "\"scenario\"", "{\"a\": ");
  INFO(text);
  const LoadResult r = electsim::runner::load_scenario_text(text, "x.json");
  CHECK_FALSE(r.scenario.has_value());
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].pointer.empty());
}

TEST_CASE("loader: a key written twice in one object is a problem at that key") {
  const LoadResult r = electsim::runner::load_scenario_text(
      R"({"name": "x", "duration": "30s", "nodes": 5,
          "faults": [{"at": "1s", "kind": "heal"}, {"at": "2s", "kind": "heal", "at": "3s"}],
          "protocol": {"name": "lease", "ttl": "2s", "ttl": "3s"}})",
      "dup.json");
  CHECK_FALSE(r.scenario.has_value());
  INFO(all_messages(r));
  REQUIRE(r.problems.size() == 2);
  CHECK(problem_at(r, "/faults/1/at") != nullptr);
  const Problem* ttl = problem_at(r, "/protocol/ttl");
  REQUIRE(ttl != nullptr);
  CHECK_THAT(ttl->found, Catch::Contains("a second time"));
}

TEST_CASE("loader: an unreadable file is one problem naming the file") {
  const std::string path = "no-such-dir/no-such-scenario.json";
  const LoadResult r = electsim::runner::load_scenario_file(path);
  CHECK_FALSE(r.scenario.has_value());
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].pointer.empty());
  CHECK(r.source == path);
  CHECK_THAT(r.messages()[0], Catch::Contains(path));
}

TEST_CASE("loader: parse_override splits at the first '='") {
  CHECK(electsim::runner::parse_override("nodes=7")->path == "nodes");
  CHECK(electsim::runner::parse_override("nodes=7")->value == "7");
  const auto nested = electsim::runner::parse_override("protocol.key=a=b");
  REQUIRE(nested);
  CHECK(nested->path == "protocol.key");
  CHECK(nested->value == "a=b");
  const auto empty_value = electsim::runner::parse_override("description=");
  REQUIRE(empty_value);
  CHECK(empty_value->value.empty());
  CHECK_FALSE(electsim::runner::parse_override("nodes").has_value());
  CHECK_FALSE(electsim::runner::parse_override("=7").has_value());
}

TEST_CASE("loader: --set overrides change the document before validation") {
  LoadOptions options;
  options.overrides = {
      {"nodes", "7"},
      {"protocol.ttl", "10s"},
      {"faults.0.at", "2s"},
      {"protocol.fencing", "false"},
      {"network.latency", "{\"dist\": \"uniform\", \"min\": \"1ms\", \"max\": \"3ms\"}"},
      {"description", "set from the command line"}};
  const LoadResult r =
      load(with(R"({"faults": [{"at": "1s", "kind": "crash", "target": 6}]})"), options);
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  const auto& s = *r.scenario;
  CHECK(s.world.node_count == 7);
  CHECK(s.world.clocks.size() == 7);
  CHECK(s.protocol_params.at("ttl") == "10s");
  CHECK(s.protocol_params.at("fencing") == false);
  CHECK(s.services.sink.fencing == false);  // the protocol's fencing decides when sink is silent
  REQUIRE(s.world.faults.size() == 1);
  CHECK(s.world.faults[0].at == Time(2s));
  CHECK(s.world.faults[0].target.node == 6);  // valid only because nodes became 7
  CHECK(s.world.network.latency.max == 3ms);
  CHECK(s.description == "set from the command line");
  CHECK(s.document.at("nodes") == 7);
  CHECK(s.document.at("protocol").at("ttl") == "10s");
}

TEST_CASE("loader: --set may append to an array and creates missing keys as objects") {
  LoadOptions options;
  options.overrides = {{"faults.0", R"({"at": "3s", "kind": "heal"})"},
                       {"store.min_ttl", "1s"},
                       {"clocks.nodes.2.drift_ppm", "40"}};
  const LoadResult r = load(with(R"({"faults": []})"), options);
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  REQUIRE(r.scenario->world.faults.size() == 1);
  CHECK(r.scenario->world.faults[0].kind == electsim::sim::FaultKind::heal);
  CHECK(r.scenario->services.store.min_ttl == 1s);
  CHECK(r.scenario->world.clocks[2].drift_ppb == 40'000);
}

TEST_CASE("loader: --seed wins over the file's seed") {
  LoadOptions options;
  options.seed = 42;
  const LoadResult r = load(with(R"({"seed": 7})"), options);
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->world.seed == 42);
}

TEST_CASE("loader: a bad override is a problem that names the override") {
  const auto [path, value, pointer, part] =
      GENERATE(table<std::string, std::string, std::string, std::string>({
          {"nodes.x", "3", "/nodes", "an object or an array to set \"x\" in"},
          {"name.first.second", "3", "/name", "an object or an array"},
          {"faults.5.at", "1s", "/faults", "an index from 0 to 1"},
          {"faults.0.at", "40s", "/faults/0/at", "before the end"},
          {"protocol.tll", "3s", "/protocol/tll", "did you mean \"ttl\"?"},
          {"nodes", "0", "/nodes", "from 1"},
          {"protocol..ttl", "3s", "", "dotted path"},
      }));
  LoadOptions options;
  options.overrides = {{path, value}};
  const LoadResult r =
      load(with(R"({"faults": [{"at": "1s", "kind": "crash", "target": 0}]})"), options);
  CHECK_FALSE(r.scenario.has_value());
  INFO(all_messages(r));
  const Problem* p = problem_at(r, pointer);
  REQUIRE(p != nullptr);
  CHECK(p->context == "--set " + path + "=" + value);
  CHECK_THAT(p->format(), Catch::Contains(part));
  CHECK_THAT(p->format(), Catch::StartsWith("--set " + path + "=" + value + ": "));
}

namespace {
const char* const kWithVariants = R"({
  "name": "variants",
  "duration": "30s",
  "nodes": 5,
  "protocol": {"name": "lease", "fencing": true},
  "expect": {"stale_writes_accepted": {"max": 0}},
  "variants": {
    "no-fencing": {
      "description": "fencing off",
      "set": {"protocol.fencing": false},
      "expect": {"stale_writes_accepted": {"min": 1}}
    },
    "longer": {"set": {"duration": "60s"}}
  }
})";
}  // namespace

TEST_CASE("loader: the base scenario keeps its own expect block") {
  const LoadResult r = load(json::parse(kWithVariants));
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->variant.empty());
  CHECK(r.scenario->services.sink.fencing == true);
  REQUIRE(r.scenario->expect.size() == 1);
  CHECK(r.scenario->expect[0].metric == "stale_writes_accepted");
  CHECK(r.scenario->expect[0].max == 0.0);
  CHECK_FALSE(r.scenario->expect[0].min.has_value());
  CHECK(r.scenario->expect[0].pointer == "/expect/stale_writes_accepted");
}

TEST_CASE("loader: a variant applies its set and replaces the expect block") {
  LoadOptions options;
  options.variant = "no-fencing";
  const LoadResult r = load(json::parse(kWithVariants), options);
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->variant == "no-fencing");
  CHECK(r.scenario->services.sink.fencing == false);
  CHECK(r.scenario->document.at("protocol").at("fencing") == false);
  REQUIRE(r.scenario->expect.size() == 1);
  CHECK(r.scenario->expect[0].min == 1.0);
  CHECK_FALSE(r.scenario->expect[0].max.has_value());
  CHECK(r.scenario->expect[0].pointer == "/variants/no-fencing/expect/stale_writes_accepted");
}

TEST_CASE("loader: a variant without an expect block keeps the base one") {
  LoadOptions options;
  options.variant = "longer";
  const LoadResult r = load(json::parse(kWithVariants), options);
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->world.duration == 60s);
  REQUIRE(r.scenario->expect.size() == 1);
  CHECK(r.scenario->expect[0].pointer == "/expect/stale_writes_accepted");
}

TEST_CASE("loader: command-line overrides come after the variant's set") {
  LoadOptions options;
  options.variant = "no-fencing";
  options.overrides = {{"protocol.fencing", "true"}};
  const LoadResult r = load(json::parse(kWithVariants), options);
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->services.sink.fencing == true);
}

TEST_CASE("loader: an unknown variant is a problem listing the valid names") {
  LoadOptions options;
  options.variant = "no-fenceing";
  const LoadResult r = load(json::parse(kWithVariants), options);
  CHECK_FALSE(r.scenario.has_value());
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].pointer == "/variants");
  CHECK_THAT(r.problems[0].expected, Catch::Contains("\"longer\""));
  CHECK_THAT(r.problems[0].expected, Catch::Contains("\"no-fencing\""));
  CHECK(r.problems[0].hint == "did you mean \"no-fencing\"?");
}

TEST_CASE("loader: variant_names lists the variants of a document") {
  CHECK(electsim::runner::variant_names(json::parse(kWithVariants)) ==
        std::vector<std::string>{"longer", "no-fencing"});
  CHECK(electsim::runner::variant_names(json::parse(kMinimal)).empty());
  CHECK(electsim::runner::variant_names(json::parse("[]")).empty());
}

TEST_CASE("loader: the built-in flagship loads, with and without its variant") {
  const LoadResult base =
      electsim::runner::load_scenario_text(electsim::runner::flagship_scenario_text(), "flagship");
  INFO(all_messages(base));
  REQUIRE(base.scenario.has_value());
  CHECK(base.scenario->protocol == "lease");
  CHECK(base.scenario->world.node_count == 5);
  CHECK(base.scenario->services.sink.fencing == true);
  REQUIRE(base.scenario->world.faults.size() == 1);
  CHECK(base.scenario->world.faults[0].kind == electsim::sim::FaultKind::pause);
  // The pause outlasts the TTL: that is the point of the scenario.
  CHECK(
      base.scenario->world.faults[0].duration >
      *electsim::sim::parse_duration(base.scenario->protocol_params.at("ttl").get<std::string>()));

  const json document = json::parse(electsim::runner::flagship_scenario_text());
  for (const std::string& variant : electsim::runner::variant_names(document)) {
    INFO("variant " << variant);
    LoadOptions options;
    options.variant = variant;
    const LoadResult r = load(document, options);
    INFO(all_messages(r));
    REQUIRE(r.scenario.has_value());
    CHECK(r.scenario->variant == variant);
  }
  LoadOptions no_fencing;
  no_fencing.variant = "no-fencing";
  const LoadResult r = load(document, no_fencing);
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->services.sink.fencing == false);
}

TEST_CASE("loader: the built-in flagship is the text of scenarios/lease-gc-pause-fence.json") {
  const std::filesystem::path file = source_dir() / "scenarios" / "lease-gc-pause-fence.json";
  REQUIRE(std::filesystem::exists(file));
  CHECK(read_text(file) == electsim::runner::flagship_scenario_text());
}

TEST_CASE("loader: every scenario file and each of its variants loads") {
  const std::filesystem::path dir = source_dir() / "scenarios";
  REQUIRE(std::filesystem::is_directory(dir));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    const LoadResult r = electsim::runner::load_scenario_file(file.string());
    INFO(all_messages(r));
    CHECK(r.scenario.has_value());
    if (!r.scenario) continue;
    for (const std::string& variant : electsim::runner::variant_names(r.scenario->document)) {
      LoadOptions options;
      options.variant = variant;
      const LoadResult v = electsim::runner::load_scenario_file(file.string(), options);
      INFO("variant " << variant << "\n" << all_messages(v));
      CHECK(v.scenario.has_value());
    }
  }
}

TEST_CASE("loader: the limits section sets the event and trace limits within their ceilings") {
  const LoadResult ok = load(with(R"({"limits": {"events": 5000, "trace_bytes": 4096}})"));
  INFO(all_messages(ok));
  REQUIRE(ok.scenario);
  CHECK(ok.scenario->world.limits.max_events == 5000);
  CHECK(ok.scenario->limits.max_trace_bytes == 4096);

  auto [fragment, pointer, message] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"limits": {"events": 0}})", "/limits/events", "the ceiling on events per run"},
      {R"({"limits": {"events": 100000000001}})", "/limits/events", "100000000000"},
      {R"({"limits": {"trace_bytes": -1}})", "/limits/trace_bytes", "the ceiling on trace size"},
      {R"({"limits": {"evnts": 10}})", "/limits/evnts", "\"events\""},
  }));
  const LoadResult bad = load(with(fragment));
  INFO(all_messages(bad));
  REQUIRE_FALSE(bad.scenario);
  const Problem* p = problem_at(bad, pointer);
  REQUIRE(p != nullptr);
  CHECK(p->format().find(message) != std::string::npos);
}

TEST_CASE("loader: a chosen protocol takes its parameters from the protocols section") {
  const json document = with(R"({
    "protocols": {"lease": {"ttl": "5s"}},
    "expect": {"split_brain_time": {"max": "0s"}, "elections": {"max": 3}},
    "expect_by_protocol": {"lease": {"elections": {"max": 1}}}
  })");
  LoadOptions o;
  o.protocol = "lease";
  const LoadResult r = load(document, o);
  INFO(all_messages(r));
  REQUIRE(r.scenario);
  CHECK(r.scenario->protocol == "lease");
  CHECK(r.scenario->protocol_params == json::parse(R"({"ttl": "5s"})"));
  // The protocol's own bound on elections replaces the common one; the others stay.
  REQUIRE(r.scenario->expect.size() == 2);
  for (const auto& e : r.scenario->expect) {
    if (e.metric == "elections") CHECK(e.max == Approx(1));
  }
}

TEST_CASE("loader: the protocols section is validated even when another protocol runs") {
  auto [fragment, pointer] = GENERATE(table<std::string, std::string>({
      {R"({"protocols": {"lese": {}}})", "/protocols/lese"},
      {R"({"protocols": {"lease": {"ttl": "-1s"}}})", "/protocols/lease/ttl"},
      {R"({"protocols": {"lease": 3}})", "/protocols/lease"},
      {R"({"expect_by_protocol": {"lease": {"split_brain": {"max": "0s"}}}})",
       "/expect_by_protocol/lease/split_brain"},
  }));
  const LoadResult r = load(with(fragment));
  INFO(all_messages(r));
  REQUIRE_FALSE(r.scenario);
  CHECK(problem_at(r, pointer) != nullptr);
}

TEST_CASE("loader: choosing an unknown protocol is a problem naming the known ones") {
  LoadOptions o;
  o.protocol = "paxos";
  const LoadResult r = load(json::parse(kMinimal), o);
  REQUIRE_FALSE(r.scenario);
  CHECK(all_messages(r).find("\"lease\"") != std::string::npos);
}

TEST_CASE("loader: a replicated store's section becomes the members' Raft and client settings") {
  const LoadResult r = load(with(R"({"store": {"members": 3, "election_timeout": "500ms",
      "heartbeat_interval": "50ms", "pre_vote": false, "lease_checkpoint": true,
      "request_timeout": "2s", "clients": [2, 2, 1, 0, 0]},
      "faults": [{"at": "1s", "kind": "crash", "target": "store_leader"},
                 {"at": "2s", "kind": "pause", "target": "store:2", "duration": "1s"},
                 {"at": "3s", "kind": "partition", "groups": [["store:1", 0], ["store", 1]]}]})"));
  INFO(all_messages(r));
  REQUIRE(r.scenario);
  const auto& rep = r.scenario->services.replication;
  CHECK(rep.members == 3);
  CHECK(rep.raft.election_timeout_min == 500ms);
  // etcd-io/raft draws election timeouts from [election_timeout, 2 × election_timeout).
  CHECK(rep.raft.election_timeout_max == 1s - Duration(1));
  CHECK(rep.raft.heartbeat_interval == 50ms);
  CHECK_FALSE(rep.raft.pre_vote);
  CHECK(rep.raft.check_quorum);
  CHECK(rep.lease_checkpoint);
  CHECK(rep.request_timeout == 2s);
  CHECK(rep.home == std::vector<std::size_t>{2, 2, 1, 0, 0});
  // A replicated store's leader scans for expired leases as etcd's does.
  CHECK(r.scenario->services.store.expiry_scan_interval == 500ms);
  const auto& faults = r.scenario->world.faults;
  REQUIRE(faults.size() == 3);
  CHECK(faults[0].target.kind == electsim::sim::TargetKind::group_leader);
  CHECK(faults[0].target.group == "store");
  CHECK(faults[1].target.kind == electsim::sim::TargetKind::node);
  CHECK(faults[1].target.node == electsim::sim::store_member_endpoint(2));
  CHECK(faults[2].groups[0][0] == electsim::sim::store_member_endpoint(1));
  CHECK(faults[2].groups[1][0] == electsim::sim::kStoreEndpoint);
}

TEST_CASE("loader: a database protocol gets the database server, with PostgreSQL's defaults") {
  const LoadResult r = load(with(R"({"protocol": {"name": "postgres"},
    "faults": [{"at": "1s", "kind": "pause", "target": "postgres", "duration": "2s"},
               {"at": "2s", "kind": "operator_clear", "target": "postgres"},
               {"at": "3s", "kind": "partition", "groups": [["leader"], ["rest", "postgres"]]}]})"));
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  REQUIRE(r.scenario->services.postgres.has_value());
  const electsim::servers::PostgresConfig& pg = *r.scenario->services.postgres;
  CHECK(pg.dead_client_detection() == 7875s);
  CHECK(pg.idle_in_transaction_session_timeout == Duration(0));
  CHECK(r.scenario->world.faults[0].target.node == electsim::sim::kPostgresEndpoint);
  CHECK(r.scenario->world.faults[2].groups[1].back() == electsim::sim::kPostgresEndpoint);
  CHECK(r.scenario->prepared.coordinator == electsim::sim::server_kind::postgres);
  // The nodes' statements go to the database server of the world a run builds.
  CHECK(electsim::runner::world_for_seed(*r.scenario, 1).node_servers.database ==
        electsim::sim::kPostgresEndpoint);
}

TEST_CASE("loader: a protocol's world has the servers it needs, with their defaults") {
  int needing = 0;
  for (const electsim::protocols::ProtocolInfo& p : electsim::protocols::all_protocols()) {
    for (const std::string& kind : p.servers) {
      INFO(p.name << " needs " << kind);
      ++needing;
      REQUIRE(electsim::servers::find_server_kind(kind) != nullptr);
      const LoadResult r = load(with(R"({"protocol": {"name": ")" + p.name + R"("}})"));
      INFO(all_messages(r));
      REQUIRE(r.scenario.has_value());
      electsim::sim::WorldConfig world;
      world.node_count = r.scenario->world.node_count;
      electsim::servers::add_services(world, r.scenario->services);
      CHECK(std::any_of(world.servers.begin(), world.servers.end(),
                        [&](const electsim::sim::ServerSpec& s) { return s.kind == kind; }));
    }
  }
  CHECK(needing >= 3);  // the database for postgres and db-flag, the masters for redlock
  // A kind no protocol of the file needs is absent until the file configures it.
  const LoadResult lease = load(json::parse(kMinimal));
  REQUIRE(lease.scenario.has_value());
  CHECK_FALSE(lease.scenario->services.postgres.has_value());
  CHECK_FALSE(lease.scenario->services.redis.has_value());
}

TEST_CASE("loader: redlock locks on as many masters as the world has") {
  const auto masters_used = [](const std::string& extra) {
    const LoadResult r = load(with(R"({"protocol": {"name": "redlock"})" + extra + "}"));
    INFO(all_messages(r));
    REQUIRE(r.scenario.has_value());
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / "electsim-loader-redlock-masters.jsonl";
    electsim::runner::run_scenario(*r.scenario,
                                   electsim::runner::RunOptions{}.output("trace", path.string()));
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(path);
    std::size_t used = 0;
    // The masters its nodes send requests to (the header names every master the world has).
    while (text.find("\"server\":\"redis:" + std::to_string(used) + "\"") != std::string::npos) {
      ++used;
    }
    return used;
  };
  CHECK(masters_used("") == 5);  // the redis section's default
  CHECK(masters_used(R"(, "redis": {"masters": 3})") == 3);
}

TEST_CASE("loader: redlock gets five Redis masters, each a fault target by name") {
  const LoadResult r = load(with(R"({"protocol": {"name": "redlock", "fencing": true},
    "clocks": {"redis": {"2": {"offset": "3s"}}},
    "faults": [{"at": "1s", "kind": "clock_step", "target": "redis:2", "by": "10s"},
               {"at": "2s", "kind": "cut", "from": 0, "to": "redis:4"},
               {"at": "3s", "kind": "partition", "groups": [["leader", "redis:0"], ["rest"]]}]})"));
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  REQUIRE(r.scenario->services.redis.has_value());
  CHECK(r.scenario->services.redis->masters == 5);
  CHECK(r.scenario->services.redis->appendfsync == electsim::servers::Appendfsync::everysec);
  const std::vector<electsim::sim::ClockConfig>& clocks = r.scenario->services.clocks.at("redis");
  REQUIRE(clocks.size() == 5);
  CHECK(clocks[2].offset == 3s);
  CHECK(r.scenario->world.faults[0].target.node == electsim::sim::redis_endpoint(2));
  CHECK(r.scenario->world.faults[1].to == electsim::sim::redis_endpoint(4));
  CHECK(r.scenario->world.faults[2].groups[0].back() == electsim::sim::redis_endpoint(0));
  CHECK(r.scenario->prepared.fencing == true);
}

TEST_CASE("loader: the redis section sets the masters' count and appendfsync") {
  const LoadResult r = load(with(R"({"protocol": {"name": "redlock"},
    "redis": {"masters": 3, "appendfsync": "no"}})"));
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  REQUIRE(r.scenario->services.redis.has_value());
  CHECK(r.scenario->services.redis->masters == 3);
  CHECK(r.scenario->services.redis->appendfsync == electsim::servers::Appendfsync::no);
  CHECK(r.scenario->services.redis->fsync_interval() == 30s);
}

TEST_CASE("loader: the postgres section configures the server for any protocol") {
  const LoadResult r = load(with(R"({"postgres": {"tcp_keepalives_idle": "60s",
    "tcp_keepalives_interval": "5s", "tcp_keepalives_count": 4,
    "idle_in_transaction_session_timeout": "1500ms"},
    "faults": [{"at": "1s", "kind": "operator_clear", "target": "store"}]})"));
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  REQUIRE(r.scenario->services.postgres.has_value());
  CHECK(r.scenario->services.postgres->dead_client_detection() == 80s);
  CHECK(r.scenario->services.postgres->idle_in_transaction_session_timeout == 1500ms);
  // The lease keeps its leader key in the store, where operator_clear deletes it.
  CHECK(r.scenario->services.store.leader_key == "/electsim/leader");
  CHECK(r.scenario->world.faults[0].target.kind == electsim::sim::TargetKind::store);
}

TEST_CASE("loader: a network link may name any server of the world, read after its servers") {
  // The network section comes before the sections that give the world its servers: its links
  // are read once they are known.
  const json document = with(R"({
    "protocol": {"name": "redlock"},
    "redis": {"masters": 3},
    "network": {"links": [{"from": 0, "to": "sink", "latency": "30ms"},
                          {"from": 1, "to": "redis:2", "latency": "40ms"}]}
  })");
  const LoadResult r = load(document);
  INFO(all_messages(r));
  REQUIRE(r.scenario.has_value());
  const auto& links = r.scenario->world.network.links;
  REQUIRE(links.size() == 2);
  CHECK(links[0].to == electsim::sim::kSinkEndpoint);
  CHECK(links[1].to == electsim::sim::redis_endpoint(2));

  const json missing = with(R"({
    "network": {"links": [{"from": 0, "to": "redis:0", "latency": "40ms"}]}
  })");
  const LoadResult bad = load(missing);
  REQUIRE_FALSE(bad.scenario.has_value());
  CHECK_THAT(all_messages(bad),
             Catch::Contains("at /network/links/0/to: expected a node id") &&
                 Catch::Contains("Redis masters exist only with the redlock protocol"));
}
