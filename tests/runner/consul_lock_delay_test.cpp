// Consul's lock-delay, observed on the real kernel with one store and with three members: after
// the holder crashes, its session lives on at the servers for TTL x 2 after its last renewal,
// then the lock-delay keeps the key from every acquire; no other node takes it before
// last renewal + 2 x TTL + lock_delay, and one does within lock_retry_time (and the store's
// expiry scan) after. Measured from the trace (the holder's last applied renewal, the refused
// acquires, the successor's acquire) and from the report's failover record.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/loader.hpp"
#include "runner/run.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

// Three candidates; the holder crashes at 10s and stays down.
const char* const kScenario = R"({
  "name": "consul-crash",
  "duration": "90s",
  "nodes": 3,
  "protocol": {"name": "consul"},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "100ms", "work": "5ms"},
  "faults": [{"at": "10s", "kind": "crash", "target": "leader"}]
})";

constexpr std::int64_t kSecondNs = 1'000'000'000;
constexpr std::int64_t kCrashNs = 10 * kSecondNs;

struct Window {
  std::int64_t holder = -1;
  // The holder's last renewal the store applied (or its session's creation, if it never renewed
  // before the crash).
  std::int64_t last_renew_ns = -1;
  std::int64_t released_ns = -1;  // the servers invalidated its session: the key is let go
  std::int64_t taken_ns = -1;     // another node's acquire applied
  int refused = 0;                // acquires applied as failed in between
  std::optional<sim::Duration> failover;
};

Window measure(const std::string& ttl, const std::string& lock_delay, const std::string& members) {
  json document = json::parse(kScenario);
  document["protocol"]["ttl"] = ttl;
  document["protocol"]["lock_delay"] = lock_delay;
  runner::LoadOptions load_options;
  load_options.overrides = {{"store.members", members}};
  const runner::LoadResult loaded =
      runner::load_scenario_json(document, "consul-crash.json", load_options);
  for (const std::string& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario.has_value());
  const std::filesystem::path trace = std::filesystem::temp_directory_path() /
                                      ("electsim-consul-" + std::to_string(::getpid()) + ".jsonl");
  runner::RunOptions options;
  options.output("trace", trace.string());
  const runner::RunResult r = runner::run_scenario(*loaded.scenario, options);
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.failovers.size() == 1);
  Window w;
  w.failover = r.report.failovers.front().failover;
  std::ifstream in(trace);
  std::string line;
  std::map<std::int64_t, std::int64_t> last_renew;  // by node
  while (std::getline(in, line)) {
    const json e = json::parse(line);
    if (!e.contains("t")) continue;  // the header
    const std::int64_t t = e.at("t").get<std::int64_t>();
    const std::string ev = e.at("ev").get<std::string>();
    if (ev == "belief" && w.holder < 0 && e.at("role") == "leader") {
      w.holder = e.at("node").get<std::int64_t>();
    }
    if (ev == "store_apply" && t < kCrashNs &&
        (e.at("op") == "lease_keepalive" || e.at("op") == "lease_grant") &&
        e.at("succeeded") == true) {
      last_renew[e.at("node").get<std::int64_t>()] = t;
    }
    if (t < kCrashNs) continue;
    if (ev == "store_change" && w.released_ns < 0 && e.at("expired") == true) w.released_ns = t;
    if (ev == "store_apply" && w.released_ns >= 0 && w.taken_ns < 0 && e.at("op") == "txn" &&
        e.at("node") != w.holder) {
      if (e.at("succeeded") == true) {
        w.taken_ns = t;
      } else {
        ++w.refused;
      }
    }
  }
  std::filesystem::remove(trace);
  if (last_renew.contains(w.holder)) w.last_renew_ns = last_renew.at(w.holder);
  return w;
}

std::int64_t seconds_ns(const std::string& text) {
  return std::stoll(text) * kSecondNs;
}

}  // namespace

TEST_CASE(
    "consul lock-delay: after the holder crashes nobody acquires before its last renewal + 2 x "
    "TTL + lock_delay, and someone does within lock_retry_time after") {
  const std::string members = GENERATE("1", "3");
  const std::string ttl = GENERATE("10s", "15s");
  const std::string delay = GENERATE("0s", "15s");
  INFO("store.members=" << members << " ttl=" << ttl << " lock_delay=" << delay);
  const Window w = measure(ttl, delay, members);
  REQUIRE(w.holder >= 0);
  REQUIRE(w.last_renew_ns > 0);
  REQUIRE(w.released_ns > 0);
  REQUIRE(w.taken_ns > 0);
  const std::int64_t invalidated_by = w.last_renew_ns + 2 * seconds_ns(ttl);
  const std::int64_t free_at = invalidated_by + seconds_ns(delay);
  // The servers wait TTL x 2 (a replicated store's leader notices at its 500ms expiry scans).
  // With members, the renewal traced is the answering member's apply, a few ms after the
  // leader's, whose clock judges the deadline: hence the slack.
  constexpr std::int64_t kSlackNs = 50'000'000;
  CHECK(w.released_ns >= invalidated_by - kSlackNs);
  CHECK(w.released_ns <= invalidated_by + kSecondNs);
  // The lock-delay runs from the release on the clock of the server that judges acquires.
  CHECK(w.taken_ns >= w.released_ns + seconds_ns(delay));
  CHECK(w.taken_ns >= free_at - kSlackNs);
  // Waiters wake at the release, then try every lock_retry_time (5s) while the delay lasts.
  CHECK(w.taken_ns <= std::max(free_at, w.released_ns) + 5 * kSecondNs + kSecondNs / 2);
  if (delay == "0s") {
    CHECK(w.refused == 0);
  } else {
    CHECK(w.refused >= 1);  // the store refused acquires during the lock-delay
  }
  // The report's failover agrees: from the crash to the successor's acquire.
  REQUIRE(w.failover.has_value());
  CHECK(w.failover->count() >= free_at - kSlackNs - kCrashNs);
  CHECK(w.failover->count() <= w.taken_ns - kCrashNs + kSecondNs / 10);
}
