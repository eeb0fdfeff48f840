// The store as a kind of server (servers/registry.hpp): one logical server at the store's
// address, or a replicated cluster of members running Raft as etcd does.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "params/section.hpp"
#include "servers/registry.hpp"
#include "servers/store/member.hpp"
#include "servers/store/store_server.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

namespace {

using sim::fault_bit;
using sim::FaultKind;

// The single store is one logical etcd, which does not crash in electsim's model: its own fault
// is the store_pause kind (a stall), a clock fault moves the clock its leases are judged on, and a
// person may delete the leader key (operator_clear).
const ServerForm kSingle{
    "the single store",
    {true, sim::ServerLane::store, sim::kClockFaults | fault_bit(FaultKind::operator_clear), true}};
// A member is a process like a node: every process fault, its disk's stalls, and etcd's MsgHup
// (campaign).
const ServerForm kMember{
    "a store member",
    {true, sim::ServerLane::store,
     sim::kProcessFaults | fault_bit(FaultKind::disk_stall) | fault_bit(FaultKind::campaign),
     true}};

// One store cluster: the single store or a replicated store's members, named `name` ("store",
// or a shard's "store-2") and grouped under it. The first keeps the slots the store has always
// had; a shard after it takes free ones.
sim::StoreClientConfig add_cluster(const Services& services, WorldBuilder& builder,
                                   const std::string& name, bool built_in_slots) {
  const ReplicationConfig& r = services.replication;
  const std::string kind(sim::server_kind::store);
  sim::StoreClientConfig client;
  const auto slot = [&](sim::Endpoint e) {
    return built_in_slots ? std::optional<std::size_t>(sim::server_slot(e)) : std::nullopt;
  };
  if (r.members <= 1) {
    client.members = {builder.add(
        name, kind, name, kSingle, services.store_clock,
        [config = services.store] { return std::make_unique<StoreServer>(config); },
        slot(sim::kStoreEndpoint))};
    return client;
  }
  auto config = std::make_shared<MemberConfig>();
  config->store = services.store;
  config->raft = r.raft;
  config->lease_checkpoint = r.lease_checkpoint;
  config->lease_checkpoint_interval = r.lease_checkpoint_interval;
  config->promote_extend = r.promote_extend.value_or(r.raft.election_timeout_min);
  ELECTSIM_ASSERT(r.members <= sim::kMaxStoreMembers, "store members within the scenario limit");
  // The members know one another's addresses when they start, after every server is added.
  for (std::size_t k = 0; k < r.members; ++k) {
    config->members.push_back(builder.add(
        name + ":" + std::to_string(k), kind, name, kMember, services.store_clock,
        [config, k] { return std::make_unique<StoreMember>(config, static_cast<raft::Member>(k)); },
        slot(sim::store_member_endpoint(k))));
  }
  client.members = config->members;
  client.request_timeout = r.request_timeout;
  client.home = r.home;
  return client;
}

void add_store(const Services& services, WorldBuilder& builder) {
  sim::NodeServers& node_servers = builder.world().node_servers;
  if (services.shards <= 1) {
    node_servers.store = add_cluster(services, builder, "store", true);
    return;
  }
  // Shard s is "store-s" (its members "store-s:0", ...); the first answers for "the store" in
  // what has one (a test's store_of).
  for (std::size_t s = 0; s < services.shards; ++s) {
    const std::string name = "store-" + std::to_string(s);
    node_servers.store_shards.push_back({name, add_cluster(services, builder, name, s == 0)});
  }
  node_servers.store = node_servers.store_shards.front().client;
}

using nlohmann::json;
using params::add_problem;
using params::as_unsigned;
using params::check_object;
using params::did_you_mean;
using params::joined;
using params::json_excerpt;
using params::member;
using params::read_bool;
using params::read_positive_duration;
using params::read_server_timer;

// The most shards a store may have: each is a whole cluster.
constexpr std::uint64_t kMaxShards = 64;

// The limits on `capacity`'s whole numbers: far beyond any store, small enough for any sum.
constexpr std::uint64_t kMaxConcurrency = 1024;

// `capacity`: how fast each store process serves its clients (servers/store/service_queue.hpp).
void read_capacity(const nlohmann::json& v, params::Problems& problems, CapacityConfig& capacity) {
  if (!check_object(v, "/store/capacity", {"service_time", "concurrency", "queue_limit"},
                    "the store's capacity", problems)) {
    return;
  }
  if (const json* value = member(v, "service_time")) {
    capacity.service_time =
        params::read_distribution(*value, "/store/capacity/service_time", problems);
  } else {
    add_problem(problems, "/store/capacity/service_time",
                "a distribution: how long a store process takes to serve one request (etcd "
                "applies about 30000 small writes a second: \"33us\")",
                params::kRequired);
  }
  const auto whole = [&](const char* key, std::uint64_t lo, std::uint64_t hi, const char* what,
                         std::size_t& out) {
    const json* value = member(v, key);
    if (value == nullptr) return;
    const auto n = as_unsigned(*value);
    if (!n || *n < lo || *n > hi) {
      add_problem(problems, fmt::format("/store/capacity/{}", key),
                  fmt::format("a whole number from {} to {} ({})", lo, hi, what),
                  json_excerpt(*value));
      return;
    }
    out = static_cast<std::size_t>(*n);
  };
  whole("concurrency", 1, kMaxConcurrency, "requests served at once", capacity.concurrency);
  whole("queue_limit", 0, CapacityConfig::kMaxWaiting,
        "waiting requests past which writes are refused", capacity.queue_limit);
}

// The store: one logical server (members 1, the default), or a replicated cluster of members
// running Raft as etcd does. Defaults follow etcd 3.5: --election-timeout 1000ms,
// --heartbeat-interval 100ms, --pre-vote true, CheckQuorum always on, the lessor's expiry checks
// every 500ms; request_timeout follows etcdctl's --command-timeout (5s).
// The choices of `expiry_scan_phase`: a random first scan, or one pinned to the (re)start.
constexpr std::array<const char*, 2> kScanPhases = {"random", "start"};
// The most leases a store revokes a second (lease_revoke_rate): ten times a fleet's lease limit.
constexpr std::uint64_t kMaxRevokeRate = 1'000'000;

// A whole number from 1 to `max` of `what` at `pointer` (`why` says what it counts in etcd or in
// a fleet), or a problem.
std::optional<std::size_t> read_count(const nlohmann::json& value, const std::string& pointer,
                                      std::uint64_t max, std::string_view what,
                                      std::string_view why, params::Problems& problems) {
  const auto n = as_unsigned(value);
  if (!n || *n == 0 || *n > max) {
    add_problem(problems, pointer,
                fmt::format("a whole number of {} from 1 to {} ({})", what, max, why),
                json_excerpt(value));
    return std::nullopt;
  }
  return static_cast<std::size_t>(*n);
}

void read_store_section(const nlohmann::json& v, const SectionContext& context,
                        params::Problems& problems, Services& services) {
  StoreConfig& store = services.store;
  ReplicationConfig& r = services.replication;
  if (!check_object(v, "/store",
                    {"min_ttl", "expiry_scan_interval", "members", "election_timeout",
                     "heartbeat_interval", "pre_vote", "check_quorum", "lease_checkpoint",
                     "lease_checkpoint_interval", "request_timeout", "clients", "ticks",
                     "tick_time", "expiry_scan_phase", "lease_revoke_rate", "capacity", "shards"},
                    "the store section", problems)) {
    return;
  }
  // Every duration of the store is a timer of its own (min_ttl bounds the lease timers), so each
  // has the protocols' lower bound.
  if (const json* min_ttl = member(v, "min_ttl")) {
    if (auto d = read_server_timer(*min_ttl, "/store/min_ttl", problems, "no minimum"))
      store.min_ttl = *d;
  }
  if (const json* value = member(v, "tick_time")) {
    // ZooKeeper's tickTime: what the zookeeper protocol's sessions are negotiated and expired in.
    if (auto d = read_positive_duration(*value, "/store/tick_time", problems)) store.tick_time = *d;
  }
  if (const json* members = member(v, "members")) {
    if (auto n = read_count(*members, "/store/members", sim::kMaxStoreMembers, "store members",
                            "etcd runs 3 or 5", problems)) {
      r.members = *n;
    }
  }
  if (const json* shards = member(v, "shards")) {
    if (auto n = read_count(*shards, "/store/shards", kMaxShards, "independent store clusters",
                            "a fleet's services are assigned to them by hash", problems)) {
      services.shards = *n;
    }
  }
  const bool replicated = r.members > 1;
  std::optional<sim::Duration> scan;
  if (const json* value = member(v, "expiry_scan_interval")) {
    scan = read_server_timer(*value, "/store/expiry_scan_interval", problems,
                             "a lease expires exactly at its deadline");
    if (scan && scan->count() == 0 && replicated) {
      add_problem(problems, "/store/expiry_scan_interval",
                  "a duration above 0 for a replicated store (its leader checks for expired leases "
                  "periodically; etcd every \"500ms\")",
                  json_excerpt(*value));
      scan.reset();
    }
  }
  if (scan) store.expiry_scan_interval = *scan;
  if (replicated && !member(v, "expiry_scan_interval")) {
    store.expiry_scan_interval = std::chrono::milliseconds(500);  // etcd's lessor
  }
  if (const json* phase = member(v, "expiry_scan_phase")) {
    // "random": each (re)start draws its first scan from (0, interval], as a real server's loop
    // starts whenever its process did; "start": one interval after the (re)start, pinned.
    const std::vector<std::string> phases(kScanPhases.begin(), kScanPhases.end());
    const std::string text = phase->is_string() ? phase->get<std::string>() : std::string();
    if (text == kScanPhases[0] || text == kScanPhases[1]) {
      store.random_scan_phase = text == kScanPhases[0];
    } else {
      add_problem(problems, "/store/expiry_scan_phase", "one of " + joined(phases, true),
                  json_excerpt(*phase),
                  phase->is_string() ? did_you_mean(text, phases) : std::string());
    }
  }
  if (const json* rate = member(v, "lease_revoke_rate")) {
    // etcd's leaseRevokeRate (lessor.go, 1000): at most this many expired leases revoked a
    // second, and the count past which a new leader spreads the leases' deadlines.
    const auto n = read_count(*rate, "/store/lease_revoke_rate", kMaxRevokeRate,
                              "leases revoked a second", "etcd revokes at most 1000", problems);
    if (n && store.expiry_scan_interval.count() == 0) {
      add_problem(problems, "/store/lease_revoke_rate",
                  "a store that scans for expired leases (expiry_scan_interval above 0, as etcd's "
                  "\"500ms\"): without scans every lease expires exactly at its deadline",
                  json_excerpt(*rate));
    } else if (n) {
      store.lease_revoke_rate = *n;
    }
  }
  r.raft.election_timeout_min = std::chrono::milliseconds(1000);
  r.raft.heartbeat_interval = std::chrono::milliseconds(100);
  r.raft.pre_vote = true;
  r.raft.check_quorum = true;
  r.request_timeout = std::chrono::seconds(5);
  if (const json* value = member(v, "election_timeout")) {
    if (auto d = read_server_timer(*value, "/store/election_timeout", problems)) {
      r.raft.election_timeout_min = *d;
    }
  }
  // etcd-io/raft draws each election timeout from [electionTimeout, 2 × electionTimeout).
  r.raft.election_timeout_max = r.raft.election_timeout_min * 2 - sim::Duration(1);
  if (const json* value = member(v, "heartbeat_interval")) {
    if (auto d = read_server_timer(*value, "/store/heartbeat_interval", problems)) {
      if (*d >= r.raft.election_timeout_min) {
        add_problem(problems, "/store/heartbeat_interval",
                    fmt::format("a duration below election_timeout ({})",
                                sim::format_duration(r.raft.election_timeout_min)),
                    json_excerpt(*value), "etcd recommends an election timeout of 10 heartbeats");
      } else {
        r.raft.heartbeat_interval = *d;
      }
    }
  }
  if (const json* value = member(v, "pre_vote")) {
    if (auto b = read_bool(*value, "/store/pre_vote", problems)) r.raft.pre_vote = *b;
  }
  if (const json* value = member(v, "check_quorum")) {
    if (auto b = read_bool(*value, "/store/check_quorum", problems)) r.raft.check_quorum = *b;
  }
  if (const json* value = member(v, "lease_checkpoint")) {
    if (auto b = read_bool(*value, "/store/lease_checkpoint", problems)) r.lease_checkpoint = *b;
  }
  if (const json* value = member(v, "lease_checkpoint_interval")) {
    if (auto d = read_server_timer(*value, "/store/lease_checkpoint_interval", problems)) {
      r.lease_checkpoint_interval = *d;
    }
  }
  if (const json* value = member(v, "ticks")) {
    // etcd's members count every timer in ticks of --heartbeat-interval (raft.Config's
    // ElectionTick = election-timeout / heartbeat-interval, HeartbeatTick = 1).
    if (auto b = read_bool(*value, "/store/ticks", problems); b && *b) {
      r.raft.tick = r.raft.heartbeat_interval;
    }
  }
  if (const json* value = member(v, "request_timeout")) {
    if (auto d = read_server_timer(*value, "/store/request_timeout", problems))
      r.request_timeout = *d;
  }
  if (const json* capacity = member(v, "capacity")) {
    read_capacity(*capacity, problems, store.capacity);
  }
  if (const json* clients = member(v, "clients")) {
    const std::size_t nodes = context.node_count;
    if (!clients->is_array() || clients->size() != nodes) {
      add_problem(problems, "/store/clients",
                  fmt::format("an array of {} member indexes, one per node (the member each node "
                              "talks to first)",
                              nodes),
                  json_excerpt(*clients));
    } else {
      r.home.clear();
      for (std::size_t i = 0; i < clients->size(); ++i) {
        const auto k = as_unsigned((*clients)[i]);
        if (!k || *k >= r.members) {
          add_problem(problems, fmt::format("/store/clients/{}", i),
                      fmt::format("a member index from 0 to {}", r.members - 1),
                      json_excerpt((*clients)[i]));
          continue;
        }
        r.home.push_back(static_cast<std::size_t>(*k));
      }
    }
  }
}

// A setting's default as the section reader leaves it when the section omits it: what an empty
// section gives a single store and, for the replication settings, a replicated one.
std::string store_setting_default(std::string_view key) {
  params::Problems problems;
  Services single;
  read_store_section(nlohmann::json::object(), SectionContext{}, problems, single);
  Services replicated;
  read_store_section(nlohmann::json{{"members", 3}}, SectionContext{}, problems, replicated);
  const StoreConfig& store = single.store;
  const ReplicationConfig& r = replicated.replication;
  const auto on_off = [](bool b) { return std::string(b ? "true" : "false"); };
  if (key == "min_ttl") return sim::format_duration(store.min_ttl);
  if (key == "tick_time") return sim::format_duration(store.tick_time);
  if (key == "expiry_scan_interval") {
    return fmt::format("{}, {} when replicated", sim::format_duration(store.expiry_scan_interval),
                       sim::format_duration(replicated.store.expiry_scan_interval));
  }
  if (key == "expiry_scan_phase") return kScanPhases[store.random_scan_phase ? 0 : 1];
  if (key == "lease_revoke_rate") return std::to_string(store.lease_revoke_rate);
  if (key == "members") return std::to_string(single.replication.members);
  if (key == "shards") return std::to_string(single.shards);
  if (key == "election_timeout") return sim::format_duration(r.raft.election_timeout_min);
  if (key == "heartbeat_interval") return sim::format_duration(r.raft.heartbeat_interval);
  if (key == "pre_vote") return on_off(r.raft.pre_vote);
  if (key == "check_quorum") return on_off(r.raft.check_quorum);
  if (key == "lease_checkpoint") return on_off(r.lease_checkpoint);
  if (key == "lease_checkpoint_interval") return sim::format_duration(r.lease_checkpoint_interval);
  if (key == "request_timeout") return sim::format_duration(r.request_timeout);
  if (key == "capacity") return "unlimited";
  return "";
}

}  // namespace

ServerKindInfo store_kind() {
  return {std::string(sim::server_kind::store),
          "the coordination store (etcd-like): one logical server, or a replicated cluster of "
          "members running Raft",
          {kSingle, kMember},
          "store members",
          "store members exist only in a replicated store: set store.members to 3 or 5",
          add_store,
          "store",
          read_store_section,
          store_setting_default,
          nullptr};  // every world has the store; its members share /clocks/store
}

}  // namespace electsim::servers
