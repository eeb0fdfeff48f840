// The herd effect, counted on the real kernel: when the holder dies, ZooKeeper's recipe (each
// candidate watches only its predecessor) wakes exactly one watcher, while etcd's election (the
// lease protocol: every follower watches the leader key) wakes every follower, and they all race.
// Counted from the trace: delete notifications and the candidates' store requests other than
// pings in the second after the holder's node is deleted. Then determinism with 1 and 3 members.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/loader.hpp"
#include "runner/run.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

// Six candidates; the holder crashes at 10s and stays down.
const char* const kScenario = R"({
  "name": "herd",
  "duration": "20s",
  "nodes": 6,
  "protocol": {"name": "zookeeper", "session_timeout": "4s"},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "100ms", "work": "5ms"},
  "faults": [{"at": "10s", "kind": "crash", "target": "leader"}]
})";

constexpr std::int64_t kCrashNs = 10'000'000'000;
constexpr std::int64_t kSecondNs = 1'000'000'000;

runner::Scenario load(const json& protocol, const std::string& members) {
  json document = json::parse(kScenario);
  document["protocol"] = protocol;
  runner::LoadOptions options;
  options.overrides = {{"store.members", members}};
  const runner::LoadResult r = runner::load_scenario_json(document, "herd.json", options);
  for (const std::string& m : r.messages()) UNSCOPED_INFO(m);
  REQUIRE(r.scenario.has_value());
  return *r.scenario;
}

struct Herd {
  std::int64_t deleted_at_ns = -1;  // the crashed holder's node (or key) deleted by expiry
  int delete_notifications = 0;     // watch_notify of a delete after the crash
  // Store requests other than pings in the second after the delete, by operation.
  std::map<std::string, int> requests_after;
  std::string hash;
};

const json kZookeeper = {{"name", "zookeeper"}, {"session_timeout", "3s"}};
const json kLease = {{"name", "lease"}, {"ttl", "3s"}};

Herd measure(const json& protocol, const std::string& members) {
  const runner::Scenario s = load(protocol, members);
  const std::filesystem::path trace = std::filesystem::temp_directory_path() /
                                      ("electsim-herd-" + std::to_string(::getpid()) + ".jsonl");
  runner::RunOptions options;
  options.output("trace", trace.string());
  const runner::RunResult r = runner::run_scenario(s, options);
  REQUIRE(r.errors.empty());
  Herd h;
  h.hash = r.trace_hash;
  std::ifstream in(trace);
  std::string line;
  std::vector<json> after;
  while (std::getline(in, line)) {
    json e = json::parse(line);
    if (!e.contains("t")) continue;  // the header
    const std::int64_t t = e.at("t").get<std::int64_t>();
    if (t < kCrashNs) continue;
    const std::string ev = e.at("ev").get<std::string>();
    if (ev == "store_change" && h.deleted_at_ns < 0 && e.at("expired").get<bool>()) {
      h.deleted_at_ns = t;
    }
    if (ev == "watch_notify" && e.at("change") == "delete") ++h.delete_notifications;
    if (ev == "store_request" && e.at("op") != "lease_keepalive") after.push_back(std::move(e));
  }
  std::filesystem::remove(trace);
  REQUIRE(h.deleted_at_ns >= 0);
  for (const json& e : after) {
    const std::int64_t t = e.at("t").get<std::int64_t>();
    if (t >= h.deleted_at_ns && t < h.deleted_at_ns + kSecondNs) {
      ++h.requests_after[e.at("op").get<std::string>()];
    }
  }
  return h;
}

}  // namespace

TEST_CASE(
    "zookeeper herd: the holder's death wakes exactly one watcher with ZooKeeper's recipe and "
    "every follower with etcd's election") {
  const std::string members = GENERATE("1", "3");
  INFO("store.members=" << members);
  const Herd zk = measure(kZookeeper, members);
  const Herd etcd = measure(kLease, members);
  CHECK(zk.delete_notifications == 1);
  CHECK(etcd.delete_notifications == 5);
  // The successor closes its spent watch and reads the children; nobody else stirs.
  CHECK(zk.requests_after == std::map<std::string, int>{{"txn", 1}, {"unwatch", 1}});
  // Every follower grants itself a lease and races with a txn on the key; one wins.
  CHECK(etcd.requests_after.at("lease_grant") == 5);
  CHECK(etcd.requests_after.at("txn") == 5);
}

TEST_CASE("zookeeper herd: one scenario and seed give one trace hash, with 1 and 3 members") {
  const std::string members = GENERATE("1", "3");
  INFO("store.members=" << members);
  const Herd a = measure(kZookeeper, members);
  const Herd b = measure(kZookeeper, members);
  CHECK(a.hash.size() == 16);
  CHECK(a.hash == b.hash);
}
