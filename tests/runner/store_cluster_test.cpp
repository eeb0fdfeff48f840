// The replicated store under random faults, in the spirit of TigerBeetle's VOPR: 500 seeds of a
// lease scenario whose 3-member store suffers member crashes, partitions and disk stalls, each run
// checked for the store's Raft safety (no two leaders in a term, no two entries committed at one
// index) and for the lease's: in store time the leader key never has two owners at once. Then
// determinism: one scenario and seed give one trace with 1, 3 and 5 members.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/trace.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

// A lease election on 3 nodes over a 3-member store with short timings, disks that take 1-10ms
// per fsync, and no node faults of any kind: no pauses, crashes or clock faults. Whatever happens
// to the store's members may stall the election, never split it.
const char* const kBase = R"({
  "name": "store-cluster-random-faults",
  "duration": "25s",
  "nodes": 3,
  "protocol": {"name": "lease", "ttl": "2s"},
  "store": {"members": 3, "election_timeout": "500ms", "heartbeat_interval": "50ms",
            "request_timeout": "1s"},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "disk": {"fsync": {"dist": "uniform", "min": "1ms", "max": "10ms"}},
  "workload": {"interval": "100ms", "work": "5ms"}
})";

// Members crash (and come back after a while), by the role they hold when the fault fires, and
// partitions cut each member off in turn, with or without the nodes that talk to it first.
const char* const kCrashesAndPartitions = R"([
  {"kind": "crash", "target": "store_leader", "every": {"dist": "exponential", "mean": "6s"},
   "duration": {"dist": "uniform", "min": "200ms", "max": "4s"}},
  {"kind": "crash", "target": "store_follower", "every": {"dist": "exponential", "mean": "8s"},
   "duration": {"dist": "uniform", "min": "200ms", "max": "4s"}},
  {"kind": "partition", "groups": [["store"], ["store:1", "store:2", 0, 1, 2]],
   "every": {"dist": "exponential", "mean": "10s"},
   "duration": {"dist": "uniform", "min": "200ms", "max": "3s"}},
  {"kind": "partition", "groups": [["store:1", 0], ["store", "store:2", 1, 2]],
   "every": {"dist": "exponential", "mean": "10s"},
   "duration": {"dist": "uniform", "min": "200ms", "max": "3s"}},
  {"kind": "partition", "groups": [["store:2", 2], ["store", "store:1"], [0, 1]],
   "every": {"dist": "exponential", "mean": "12s"},
   "duration": {"dist": "uniform", "min": "200ms", "max": "3s"}}
])";

// A member's disk finishes no fsync for a while, by role.
const char* const kDiskStalls = R"([
  {"kind": "disk_stall", "target": "store_leader", "every": {"dist": "exponential", "mean": "6s"},
   "duration": {"dist": "uniform", "min": "10ms", "max": "2s"}},
  {"kind": "disk_stall", "target": "store_follower", "every": {"dist": "exponential", "mean": "8s"},
   "duration": {"dist": "uniform", "min": "10ms", "max": "2s"}}
])";

constexpr std::uint64_t kSeeds = 500;

runner::Scenario load(const json& document, std::vector<runner::Override> overrides = {}) {
  runner::LoadOptions options;
  options.overrides = std::move(overrides);
  const runner::LoadResult r = runner::load_scenario_json(document, "store-cluster.json", options);
  for (const std::string& m : r.messages()) UNSCOPED_INFO(m);
  REQUIRE(r.scenario.has_value());
  return *r.scenario;
}

json with_faults(std::initializer_list<const char*> generators) {
  json document = json::parse(kBase);
  document["random_faults"] = json::array();
  for (const char* g : generators) {
    for (const json& f : json::parse(g)) document["random_faults"].push_back(f);
  }
  return document;
}

// Watches the store's changes to the leader key in the order the store's leaders applied them
// (store time): a put that names a new owner while another owner's key is still there is two
// holders of one lease at once.
class LeaseOwners final : public sim::Observer {
 public:
  explicit LeaseOwners(std::string key) : key_(std::move(key)) {}

  void on_event(const sim::Event& e) override {
    if (e.kind != sim::EventKind::store_change || e.text != key_) return;
    if (e.code == 1) {  // delete: by revoke or by the lease's expiry
      owner_ = sim::kNoNode;
      return;
    }
    ++puts_;
    if (owner_ != sim::kNoNode && e.node != owner_) {
      if (violations_ == 0) {
        first_at_ns_ = e.time.ns;
        first_owner_ = owner_;
        first_new_owner_ = e.node;
        first_revision_ = e.a;
      }
      ++violations_;
    }
    owner_ = e.node;
  }

  std::uint64_t puts() const { return puts_; }
  std::uint64_t violations() const { return violations_; }
  std::int64_t first_at_ns() const { return first_at_ns_; }
  sim::NodeId first_owner() const { return first_owner_; }
  sim::NodeId first_new_owner() const { return first_new_owner_; }
  sim::Revision first_revision() const { return first_revision_; }

 private:
  std::string key_;
  sim::NodeId owner_ = sim::kNoNode;
  std::uint64_t puts_ = 0;
  std::uint64_t violations_ = 0;
  std::int64_t first_at_ns_ = -1;
  sim::NodeId first_owner_ = sim::kNoNode;
  sim::NodeId first_new_owner_ = sim::kNoNode;
  sim::Revision first_revision_ = 0;
};

// What one seed's run showed; plain data, so that a child process can hand it back.
struct Outcome {
  bool finished = false;  // false: the run stopped the process (a broken invariant)
  int signal = 0;
  std::uint64_t store_elections = 0;
  std::uint64_t commits = 0;
  std::uint64_t same_term_leaders = 0;
  std::uint64_t commit_conflicts = 0;
  std::int64_t first_violation_ns = -1;
  std::int64_t split_brain_ns = 0;
  std::uint64_t same_epoch_leaders = 0;
  std::uint64_t lease_puts = 0;
  std::uint64_t owner_violations = 0;
  std::int64_t first_owner_violation_ns = -1;
  sim::NodeId first_owner = sim::kNoNode;
  sim::NodeId first_new_owner = sim::kNoNode;
  sim::Revision first_owner_revision = 0;
};
static_assert(std::is_trivially_copyable_v<Outcome>);

// One run as runner::run_scenario makes it (the same world, analyzer and header), with the lease
// watch beside the analyzer.
Outcome run_seed(const runner::Scenario& scenario, std::uint64_t seed) {
  const sim::WorldConfig world = runner::world_for_seed(scenario, seed);
  const analysis::TraceHeader header = runner::trace_header(scenario, world);

  analysis::Analyzer analyzer(header.analysis_config());
  LeaseOwners owners(scenario.prepared.leader_key.value_or(""));
  sim::Kernel kernel(world, scenario.prepared.factory);
  kernel.add_observer(&analyzer);
  kernel.add_observer(&owners);
  kernel.run();
  const analysis::Report report = analyzer.finish();

  Outcome o;
  o.finished = true;
  o.store_elections = report.store.leader_elections;
  o.commits = report.store.commits;
  o.same_term_leaders = report.store.same_term_leaders;
  o.commit_conflicts = report.store.commit_conflicts;
  if (report.store.first_violation) o.first_violation_ns = report.store.first_violation->ns;
  o.split_brain_ns = report.split_brain_time.count();
  o.same_epoch_leaders = report.same_epoch_leaders_total;
  o.lease_puts = owners.puts();
  o.owner_violations = owners.violations();
  o.first_owner_violation_ns = owners.first_at_ns();
  o.first_owner = owners.first_owner();
  o.first_new_owner = owners.first_new_owner();
  o.first_owner_revision = owners.first_revision();
  return o;
}

// The run in a child process: a broken ELECTSIM_ASSERT aborts, and must fail that seed, not end
// the whole sweep.
Outcome run_isolated(const runner::Scenario& scenario, std::uint64_t seed) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    // Catch's handlers would report the child's abort as a test of its own.
    std::signal(SIGABRT, SIG_DFL);
    std::signal(SIGSEGV, SIG_DFL);
    const Outcome o = run_seed(scenario, seed);
    const auto* bytes = reinterpret_cast<const char*>(&o);
    std::size_t done = 0;
    while (done < sizeof o) {
      const ssize_t n = write(fds[1], bytes + done, sizeof o - done);
      if (n <= 0) _exit(3);
      done += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  Outcome o;
  auto* bytes = reinterpret_cast<char*>(&o);
  std::size_t got = 0;
  while (got < sizeof o) {
    const ssize_t n = read(fds[0], bytes + got, sizeof o - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (got != sizeof o || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    o = Outcome{};
    o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return o;
}

// What went wrong in a run, for the failure message.
std::string describe(const Outcome& o) {
  if (!o.finished) {
    return "the run stopped on a broken invariant (signal " + std::to_string(o.signal) + ")";
  }
  std::string text = "the run finished";
  if (o.first_violation_ns >= 0) {
    text +=
        "; the store's first safety violation at " + std::to_string(o.first_violation_ns) + "ns";
  }
  if (o.owner_violations > 0) {
    text += "; at " + std::to_string(o.first_owner_violation_ns) + "ns node " +
            std::to_string(o.first_new_owner) + " put the leader key at revision " +
            std::to_string(o.first_owner_revision) + " while node " +
            std::to_string(o.first_owner) + " held it";
  }
  return text;
}

// Every seed from 1 to kSeeds: the store's Raft is safe, the lease never has two owners in store
// time, and with no node faults no two nodes ever believe they lead at once, nor lead with one
// fencing token (the revision that created the key).
void sweep(const runner::Scenario& scenario) {
  std::uint64_t elections = 0;
  std::uint64_t puts = 0;
  std::vector<std::uint64_t> failed;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    INFO("seed=" << seed);
    const Outcome o = run_isolated(scenario, seed);
    INFO(describe(o));
    CHECK(o.finished);
    CHECK(o.commit_conflicts == 0);
    CHECK(o.same_term_leaders == 0);
    CHECK(o.owner_violations == 0);
    CHECK(o.split_brain_ns == 0);
    CHECK(o.same_epoch_leaders == 0);
    if (!o.finished || o.commit_conflicts != 0 || o.same_term_leaders != 0 ||
        o.owner_violations != 0 || o.split_brain_ns != 0 || o.same_epoch_leaders != 0) {
      failed.push_back(seed);
    }
    elections += o.store_elections;
    puts += o.lease_puts;
  }
  std::string list;
  for (std::uint64_t s : failed) list += " " + std::to_string(s);
  INFO("failed seeds:" << list);
  CHECK(failed.empty());
  // The faults did their work: leaders came and went, and the lease changed hands.
  CHECK(elections >= 2 * kSeeds);
  CHECK(puts >= kSeeds);
}

}  // namespace

TEST_CASE("store cluster: the lease watch flags a new owner's put before the old owner's delete") {
  const auto [second_owner, deleted_first, violations] =
      GENERATE(table<sim::NodeId, bool, std::uint64_t>({
          {2, true, 0},   // expiry, then a new holder
          {2, false, 1},  // two holders at once
          {1, false, 0},  // the holder puts its own key again
      }));
  INFO("second owner=" << second_owner << " deleted first=" << deleted_first);
  LeaseOwners owners("/k");
  const auto change = [&](std::uint16_t code, sim::NodeId node, std::string_view key) {
    sim::Event e;
    e.kind = sim::EventKind::store_change;
    e.code = code;
    e.node = node;
    e.text = key;
    owners.on_event(e);
  };
  change(0, 1, "/k");
  change(1, sim::kNoNode, "/other");  // another key's delete changes nothing
  if (deleted_first) change(1, sim::kNoNode, "/k");
  change(0, second_owner, "/k");
  CHECK(owners.puts() == 2);
  CHECK(owners.violations() == violations);
}

TEST_CASE(
    "store cluster: under member crashes and partitions, for 500 seeds, no two commits conflict "
    "and the lease never has two owners") {
  sweep(load(with_faults({kCrashesAndPartitions})));
}

// A member counts only entries on its disk (a follower's acknowledgement, a leader's own copy),
// so a crash during a disk stall loses no committed entry (tests/servers/member_test.cpp shows
// each step).
TEST_CASE(
    "store cluster: under member crashes, partitions and disk stalls, for 500 seeds, no two "
    "commits conflict and the lease never has two owners") {
  sweep(load(with_faults({kCrashesAndPartitions, kDiskStalls})));
}

TEST_CASE(
    "store cluster: with etcd's tick-based timers, under member crashes and partitions, for 500 "
    "seeds, no two commits conflict and the lease never has two owners") {
  sweep(load(with_faults({kCrashesAndPartitions}), {{"store.ticks", "true"}}));
}

TEST_CASE("store cluster: one scenario and seed give one trace hash with 1, 3 and 5 members") {
  // The lease holder crashes, and one node with the store's first address is cut off for a while.
  json document = json::parse(kBase);
  document["faults"] = json::parse(R"([
    {"at": "6s", "kind": "crash", "target": "leader", "duration": "4s"},
    {"at": "12s", "kind": "partition", "groups": [["store", 0], [1, 2]], "duration": "3s"}
  ])");
  const std::uint64_t seed = GENERATE(1u, 7u);
  std::map<std::size_t, std::string> hashes;
  for (std::size_t members : {1u, 3u, 5u}) {
    INFO("seed=" << seed << " members=" << members);
    const runner::Scenario s = load(document, {{"store.members", std::to_string(members)}});
    runner::RunOptions options;
    options.seed = seed;
    const runner::RunResult a = runner::run_scenario(s, options);
    const runner::RunResult b = runner::run_scenario(s, options);
    REQUIRE(a.errors.empty());
    CHECK(a.trace_hash.size() == 16);
    CHECK(a.trace_hash == b.trace_hash);
    CHECK(a.stats.events == b.stats.events);
    CHECK(a.report.store.members == members);
    hashes[members] = a.trace_hash;
  }
  INFO("seed=" << seed);
  CHECK(hashes[3] != hashes[1]);
  CHECK(hashes[5] != hashes[3]);
}
