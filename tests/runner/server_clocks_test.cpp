// Which clock each server's timers read (docs/architecture.md, "Which clock a server's timers
// read"). etcd's lessor, ZooKeeper's session tracker, Consul's session timers and lock-delay and
// the database's TCP keepalives run on the server's monotonic clock: a step of its wall clock
// expires nothing, a drift bends them. Each case runs a whole scenario and reads its report.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "servers/store/store.hpp"
#include "tests/traced_run.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

analysis::Report run(const json& document) {
  const runner::LoadResult loaded = runner::load_scenario_json(document, "server-clocks.json");
  for (const std::string& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario.has_value());
  const runner::RunResult r = runner::run_scenario(*loaded.scenario, {});
  REQUIRE(r.errors.empty());
  return r.report;
}

// Three nodes elect with `protocol` against a store of `members`; every member's clock jumps an
// hour ahead at 20s, and nothing else happens.
json stepped_store(const std::string& protocol, int members) {
  json document = {
      {"name", "server-clocks"},
      {"duration", "60s"},
      {"nodes", 3},
      {"protocol", {{"name", protocol}}},
      {"store", {{"members", members}}},
      {"network",
       {{"latency", {{"dist", "uniform"}, {"min", "1ms"}, {"max", "10ms"}, {"step", "1ms"}}}}},
      {"workload", {{"interval", "100ms"}, {"work", "5ms"}}},
      {"faults", json::array()}};
  for (int k = 0; k < members; ++k) {
    const std::string target = members == 1 ? "store" : "store:" + std::to_string(k);
    document["faults"].push_back(
        {{"at", "20s"}, {"kind", "clock_step"}, {"target", target}, {"by", "1h"}});
  }
  return document;
}

// The times (ns from the start) of the store's lease expiries in `document`'s trace.
std::vector<std::int64_t> expiry_times(const json& document, const std::string& name) {
  const runner::LoadResult loaded = runner::load_scenario_json(document, "server-clocks.json");
  for (const std::string& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario.has_value());
  std::vector<std::int64_t> times;
  for (const json& e : testing::traced_events(*loaded.scenario, name)) {
    if (e.value("ev", "") == "lease_expire") times.push_back(e["t"].get<std::int64_t>());
  }
  return times;
}

}  // namespace

TEST_CASE("server clocks: a step of the store's wall clock expires no lease, session or lock") {
  for (const std::string protocol : {"lease", "zookeeper", "consul"}) {
    for (const int members : {1, 3}) {
      INFO("protocol=" << protocol << " members=" << members);
      const analysis::Report r = run(stepped_store(protocol, members));
      // One leader from its election to the end: the hour the store's clock jumped took no lease
      // from it, and nobody else took over.
      CHECK(r.intervals.size() == 1);
      CHECK(r.failovers.empty());
      CHECK(r.split_brain_time.count() == 0);
    }
  }
}

TEST_CASE("server clocks: a fast store clock shortens a dead holder's lease by its drift") {
  // etcd's lessor measures the TTL on the store machine's oscillator: 20% fast, a 10s lease of a
  // crashed holder ends about 1.7s of true time sooner.
  const auto failover = [](std::int64_t drift_ppm) {
    json document = stepped_store("lease", 1);
    document["protocol"]["ttl"] = "10s";
    document["faults"] = json::array({{{"at", "20s"}, {"kind", "crash"}, {"target", "leader"}}});
    document["clocks"] = {{"store", {{"drift_ppm", drift_ppm}}}};
    const analysis::Report r = run(document);
    REQUIRE(r.failovers.size() == 1);
    REQUIRE(r.failovers[0].failover);
    return r.failovers[0].failover->count();
  };
  const std::int64_t plain = failover(0);
  const std::int64_t fast = failover(200'000);
  INFO("plain=" << plain << "ns fast=" << fast << "ns");
  CHECK(fast < plain - 1'300'000'000);
  CHECK(fast > plain - 2'100'000'000);
}

TEST_CASE("server clocks: a step of the database's clock leaves its TCP keepalives alone") {
  // Linux's keepalive timer counts jiffies: the dead holder's session is dropped idle + count x
  // interval after it last spoke (here 30s + 3 x 1s), not at once because the wall clock jumped.
  json document = stepped_store("postgres", 1);
  document.erase("store");
  document["protocol"] = {{"name", "postgres"}, {"lock", "advisory"}};
  document["duration"] = "90s";
  document["postgres"] = {{"tcp_keepalives_idle", "30s"},
                          {"tcp_keepalives_interval", "1s"},
                          {"tcp_keepalives_count", 3}};
  document["faults"] =
      json::array({{{"at", "10s"}, {"kind", "crash"}, {"target", "leader"}},
                   {{"at", "12s"}, {"kind", "clock_step"}, {"target", "postgres"}, {"by", "1h"}}});
  const analysis::Report r = run(document);
  REQUIRE(r.failovers.size() == 1);
  REQUIRE(r.failovers[0].failover);
  CHECK(r.failovers[0].failover->count() > 30'000'000'000);
  CHECK(r.failovers[0].failover->count() < 36'000'000'000);
}

TEST_CASE(
    "server clocks: a store that scans for expiries looks only at its scans, clock changes or "
    "not") {
  // etcd's lessor checks every 500 ms whatever its clock does. The leader's lease, left without
  // keepalives at 20s, comes due some time after 26s; from 25s to 32s the store's clock steps every
  // 10 ms, 5 ms off the scans' grid. Every expiry falls on a scan, the first one interval after
  // the start (the phase pinned), none at a step.
  json document = stepped_store("lease", 1);
  document["protocol"]["ttl"] = "10s";
  document["store"]["expiry_scan_interval"] = "500ms";
  document["store"]["expiry_scan_phase"] = "start";
  document["faults"] = json::array({{{"at", "20s"}, {"kind", "crash"}, {"target", "leader"}}});
  for (int ms = 25'005; ms < 32'000; ms += 10) {
    document["faults"].push_back({{"at", std::to_string(ms) + "ms"},
                                  {"kind", "clock_step"},
                                  {"target", "store"},
                                  {"by", "1ms"}});
  }
  const std::vector<std::int64_t> times = expiry_times(document, "server-clocks-scan.jsonl");
  // The dead leader's lease among them (the others are candidates' leases that lost a race).
  CHECK(std::count_if(times.begin(), times.end(), [](std::int64_t t) {
          return t > 26'000'000'000 && t <= 32'000'000'000;
        }) == 1);
  for (const std::int64_t t : times) {
    INFO("expiry at " << t << " ns");
    CHECK(t % 500'000'000 == 0);
  }
}

TEST_CASE("server clocks: the first expiry scan after a (re)start falls at a drawn phase") {
  servers::StoreConfig config;
  config.expiry_scan_interval = std::chrono::milliseconds(500);
  sim::Rng rng(7, sim::StreamPurpose::server, 1);
  std::vector<std::int64_t> phases;
  for (int i = 0; i < 64; ++i) {
    const sim::Duration first = servers::first_scan_after(config, rng);
    CHECK(first.count() > 0);
    CHECK(first <= config.expiry_scan_interval);
    phases.push_back(first.count());
  }
  std::sort(phases.begin(), phases.end());
  // Spread over the interval, not bunched at one phase.
  CHECK(phases.front() < 100'000'000);
  CHECK(phases.back() > 400'000'000);
  // Pinned: one whole interval after the (re)start, as every scan after it.
  config.random_scan_phase = false;
  CHECK(servers::first_scan_after(config, rng) == config.expiry_scan_interval);
}
