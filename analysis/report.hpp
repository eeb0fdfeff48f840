// What analysis measures about one run: safety findings (split-brain, same-epoch leaders, stale
// writes) and liveness and cost metrics (failover, write outage, leaderless time, messages, store
// requests). Every figure is in true time and computed online from the event stream
// (analysis/analyzer.hpp); the meaning of each is fixed by DESIGN.md and docs/metrics.md.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/event.hpp"
#include "sim/fault.hpp"
#include "sim/ids.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::analysis {

using sim::Duration;
using sim::Epoch;
using sim::NodeId;
using sim::Time;

struct LeaderInterval {
  NodeId node = sim::kNoNode;
  Epoch epoch = 0;
  Time start;
  Time end;
  bool open_at_end = false;  // still leader when the run ended
};

struct SplitBrainOccurrence {
  Time at;
  std::vector<NodeId> nodes;  // sorted
  std::vector<Epoch> epochs;  // same order as nodes
};

struct SameEpochLeaders {
  Time at;  // when the second node announced
  Epoch epoch = 0;
  NodeId first = sim::kNoNode;
  NodeId second = sim::kNoNode;
};

struct StaleWrite {
  Time at;
  NodeId writer = sim::kNoNode;
  sim::Token token = 0;
  Epoch newest_epoch = 0;  // the newest leader epoch announced before the write reached the sink
  bool accepted = false;
};

// One fault that took the current leader away (crash, pause, isolate, stop, step_down of the
// leader; a partition that leaves the leader without a majority of nodes or without the store it
// needs).
struct Failover {
  std::size_t fault_index = 0;
  sim::FaultKind fault = sim::FaultKind::crash;
  Time fault_at;
  NodeId old_leader = sim::kNoNode;
  Epoch old_epoch = 0;
  std::optional<Time> new_leader_at;  // another node leads (lease: holds the key in the store)
  NodeId new_leader = sim::kNoNode;
  std::optional<Duration> failover;  // new_leader_at - fault_at
  // The endpoint the Raft paper and dissertation measure: every other node that was up when the
  // new leader announced itself (and stayed up) has received a message from it that is not an
  // election message (its first heartbeat). Unobserved if one never does (cut off), if the new
  // leader loses the lead first, and for protocols whose nodes never message each other.
  std::optional<Time> heard_at;
  std::optional<Duration> failover_heard;  // heard_at - fault_at
  // The sink's last accepted write before the fault: the old leader's, or its predecessor's
  // when it had not written yet.
  std::optional<Time> last_old_write;
  // The new leader's first accepted write after the fault; for a record ridden out, the old
  // leader's own first accepted write once the fault's effect ended.
  std::optional<Time> first_new_write;
  std::optional<Duration> write_outage;  // first_new_write - last_old_write
  // The old leader kept the same leader interval, with no other leader, until the next fault that
  // took a leader away or the run's end: the cluster rode the fault out and no failover happened
  // (a GC pause shorter than the lease). Such a record is neither observed nor unresolved.
  bool ridden_out = false;
  // The old leader lost leadership and won it back in a new epoch before any other node led (it
  // woke from a pause after its lease expired and acquired it again at once). No other node took
  // over, so there was no failover; the gap shows in leaderless time. Neither observed nor
  // unresolved, and it keeps a later, unrelated change of leader from counting as this failover.
  std::optional<Time> regained_at;
  std::optional<Epoch> regained_epoch;
  // The thundering herd: the most coordinator requests (store requests, database statements,
  // Redis commands) sent in any one second from the fault until one second after the new
  // leader (or the old one again) leads; only requests sent after the fault count.
  std::uint64_t requests_peak = 0;
  // A coordinator failover (Report::coordinator_failovers): the coordinator the fault hit
  // (kNoNode for a partition, whose groups name it).
  sim::Endpoint coordinator_target = sim::kNoNode;
  std::string coordinator_target_name;  // as the topology names it
};

// A fault that was going on around a service outage (analysis/analyzer.cpp): active in it
// (`during`: its effect window overlaps the outage), or struck since the service last recovered
// and before the outage began.
struct OutageCause {
  std::size_t fault_index = 0;
  sim::FaultKind fault = sim::FaultKind::crash;
  sim::Endpoint target = sim::kNoNode;  // the resolved target (kNoNode: none, a partition)
  std::string target_name;              // a server target as the topology names it
  std::string groups;                   // a partition's groups, as the trace writes them
  Time at;
  bool during = false;
  bool coordinator = false;  // aimed at the store, a store member, the database or a Redis master
};

// What the service lived through, whatever the cause: from its last accepted write to the next
// write accepted from a legitimate leader (the node whose leadership is the newest grant), when
// that gap is longer than two write intervals. An outage still open at the run's end is one the
// service never recovered from.
struct Outage {
  Time start;               // the last accepted write before it
  std::optional<Time> end;  // the next legitimate accepted write (none: never wrote again)
  Duration duration{0};     // end - start, or the run's end - start
  NodeId writer_before = sim::kNoNode;
  NodeId writer_after = sim::kNoNode;  // kNoNode while unresolved
  std::vector<OutageCause> causes;     // in fault order; the first kCausesKept
  std::size_t causes_total = 0;
  // No fault was going on and none struck since the service last recovered: the protocol lost
  // and re-elected its leader by itself (thrash).
  bool no_fault() const { return causes_total == 0; }
};

// The store as the nodes' coordinator (analysis/coordinator.hpp). With a single store only
// `unavailable_time` can be non-zero (the store paused or crashed).
// The thundering herd after a coordinator outage: what the clients sent in the seconds after the
// coordinator could grant again (analysis/coordinator.hpp). Requests are counted when sent, as
// everywhere in the report (the offered load): one sent during the outage and served at the
// recovery counts in the outage.
struct CoordinatorRecovery {
  Time at;             // the coordinator could grant again
  Duration outage{0};  // after this long unable to
  // Coordinator requests (store, database, Redis) sent in the first second from `at`, and the
  // most sent in any one second from `at` until kRecoveryWindow after it, the next outage or the
  // run's end, whichever came first; `peak_at` ends that second.
  std::uint64_t first_second = 0;
  std::uint64_t peak = 0;
  Time peak_at;
  std::uint64_t refused = 0;  // replies "too many requests" in the same window
  // The clients' rate in the whole seconds before the outage began (up to kRecoveryWindow of
  // them): what the recovery is a surge against. None when the outage began in the first second.
  std::optional<double> before_per_second;
};
inline constexpr Duration kRecoveryWindow = std::chrono::seconds(10);

struct CoordinatorReport {
  std::size_t members = 1;
  // A sharded store's shards (store.shards), each of `members`: the figures below are then summed
  // over shards, the unavailable time in shard-seconds and the availability the mean shard's.
  std::size_t shards = 1;
  // The coordinator is the database server (servers/postgres), not the store.
  bool database = false;
  // Time the store could not grant: no member both leads and runs (a single store: it is down or
  // paused). With CheckQuorum (etcd's default) a leader cut off from its quorum steps down within
  // an election timeout, so that much of a partition shows as available.
  Duration unavailable_time{0};
  double availability = 1;
  // Each stretch in which a store that could grant stopped being able to, until it could again,
  // in order (a store leader's crash: the store's own failover). The first election is not one.
  std::vector<Duration> outages;
  // One record per outage the coordinator recovered from, in order (the herd after each).
  std::vector<CoordinatorRecovery> recoveries;
  std::uint64_t leader_elections = 0;  // distinct terms in which a member led
  std::uint64_t leader_changes = 0;    // elections after the first
  std::uint64_t commits = 0;           // entries committed (by the leaders that committed them)
  std::optional<Duration> commit_latency_p50;  // leader's append to commit, its own term's entries
  std::optional<Duration> commit_latency_p99;
  std::uint64_t requests_failed = 0;   // clients gave up (request_timeout, a reset connection)
  std::uint64_t requests_retried = 0;  // sent again to another member after a no_leader answer
  // Refused at once because the store's queue was full (store.capacity's queue_limit: etcd's
  // "too many requests"); the protocol saw too_many_requests.
  std::uint64_t requests_refused = 0;
  // Requests the store applied (store_apply: every request but a watch's registration): with
  // proxies in front of it (lease aggregators), what it was asked, where the clients' requests
  // count what they asked the proxies.
  std::uint64_t requests_served = 0;
  std::uint64_t client_failovers = 0;  // clients moving to another member (timeout, crash)
  std::uint64_t lease_refreshes = 0;   // leases refreshed by new leaders on promotion
  // Safety of the store itself: all must be 0.
  std::uint64_t same_term_leaders = 0;  // two members leading in one term
  std::uint64_t commit_conflicts = 0;   // two different entries committed at one log index
  // A reply showing an older revision than one a reply had shown before its request was sent.
  std::uint64_t linearizability_violations = 0;
  std::optional<Time> first_violation;
};

// A spread over a fleet's services (or over its failovers): nearest-rank percentiles
// (analysis/stats.hpp), in the unit of what is spread (nanoseconds for durations).
struct Spread {
  std::int64_t p50 = 0;
  std::int64_t p90 = 0;
  std::int64_t p99 = 0;
  std::int64_t max = 0;
  std::size_t samples = 0;
};

// One service's own figures, as the analyzer measured them.
struct ServiceFigures {
  std::string name;           // as the topology's group names it: "svc-7"
  std::string service_class;  // its class ("" when the fleet declares none)
  std::uint64_t elections = 0;
  Duration leaderless_time{0};
  Duration split_brain_time{0};
  Duration stall_time{0};
  Duration outage_time{0};
  // From its first accepted write to the run's end: the time its outages are a share of (0: it
  // never wrote).
  Duration writing_span{0};
  std::uint64_t failovers_observed = 0;
  std::uint64_t writes_accepted = 0;
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t coordinator_requests = 0;  // store and server requests its nodes sent
};

// A fleet's class of services (`services.classes`): its services' figures, spread and summed
// as the fleet's are over all of them.
struct ClassFigures {
  std::string name;
  std::string protocol;  // the protocol its services run
  std::size_t services = 0;
  std::size_t replicas = 0;
  Spread leader_changes;
  Spread leaderless_time;
  Spread outage_time;
  Spread stall_time;
  std::uint64_t services_split_brain = 0;
  std::uint64_t services_stale_accepted = 0;
  std::uint64_t services_overwritten = 0;
  std::uint64_t services_stalled = 0;
  std::uint64_t services_never_led = 0;
  std::uint64_t coordinator_requests = 0;  // its services' requests summed
};

// One shard of a sharded store (store.shards): what it served and what its services lived through.
struct ShardFigures {
  std::string name;  // its servers' group: "store-2"
  std::size_t services = 0;
  std::uint64_t coordinator_requests = 0;  // its services' requests summed
  double requests_per_second = 0;
  std::uint64_t requests_refused = 0;  // too many requests (store.capacity's queue_limit)
  Duration unavailable_time{0};        // it could not grant
  std::uint64_t services_stalled = 0;
  std::uint64_t leader_changes = 0;  // its services' summed
  Duration leaderless_time{0};       // its services' summed
};

// What a fleet (many services, each an election group on its own key, sharing the world's
// coordinator) lived through, service by service. The report's other figures are the fleet's
// sums over its services (docs/metrics.md, "Fleets").
struct FleetReport {
  std::size_t services = 0;
  std::size_t replicas = 0;
  std::vector<ServiceFigures> by_service;  // by service index (the world's group order)
  // By class, in the order of their first services; empty when the fleet declares no classes.
  std::vector<ClassFigures> by_class;
  // By shard of a sharded store, in the shards' order; empty for a fleet on one store.
  std::vector<ShardFigures> by_shard;
  // Lease aggregators in front of the store (servers/aggregator), each for a tier of services.
  std::size_t aggregators = 0;
  // Over services: leader changes (elections after a service's first), leaderless time,
  // split-brain time and stall time of each service, and its outage time: what the service lived
  // through whatever the cause (0 where outages are not measured).
  Spread leader_changes;
  Spread leaderless_time;
  Spread split_brain_time;
  Spread stall_time;
  Spread outage_time;
  // Over every observed failover of every service.
  Spread failover;
  // Services that had the harm at least once.
  std::uint64_t services_split_brain = 0;
  std::uint64_t services_stale_accepted = 0;
  std::uint64_t services_overwritten = 0;
  std::uint64_t services_never_led = 0;
  std::uint64_t services_stalled = 0;  // no leader while the coordinator could not grant
  // The services that changed leader most often, most first (ties: the earlier service), at
  // most 5: name and leader changes.
  std::vector<std::pair<std::string, std::uint64_t>> most_changes;
  // The services' writing spans summed (ServiceFigures::writing_span): the writable share is
  // 1 - outage time / this, each service over its own span.
  Duration writing_span{0};
};

struct Report {
  std::size_t node_count = 0;
  Duration duration{0};

  // Leadership.
  std::vector<LeaderInterval> intervals;
  std::optional<Time> first_leader_at;
  std::uint64_t elections = 0;  // distinct (node, epoch) leader announcements
  Duration leaderless_time{0};
  double leaderless_fraction = 0;

  // Safety.
  Duration split_brain_time{0};
  std::uint64_t split_brain_episodes = 0;  // maximal stretches of non-zero length with >= 2 leaders
  std::optional<SplitBrainOccurrence> first_split_brain;
  std::vector<SameEpochLeaders> same_epoch_leaders;  // first 100 pairs
  std::uint64_t same_epoch_leaders_total = 0;        // every (epoch, pair of nodes), once
  std::uint64_t writes_accepted = 0;
  std::uint64_t writes_rejected = 0;
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t stale_writes_rejected = 0;
  // Accepted writes whose token is below one the sink had already accepted: an old leader's write
  // landing on top of a newer leader's data. Fencing rejects exactly these, so with fencing on it
  // is always 0; a stale write accepted before the newer token reached the sink is not one.
  std::uint64_t stale_writes_overwriting = 0;
  struct Overwrite {
    Time at;
    NodeId writer = sim::kNoNode;
    sim::Token token = 0;
    sim::Token over = 0;  // the highest token the sink had accepted before
  };
  std::optional<Overwrite> first_overwrite;
  std::vector<StaleWrite> stale_writes;  // first 100 of each kind (accepted, rejected), in order

  // False where the protocol's tokens carry no order (Redlock without fencing, the database
  // flag): stale writes and overwrites were judged by the order of grants.
  bool tokens_ordered = true;
  // Harm fencing cannot see: an accepted write carrying the same token as the newest one the sink
  // had accepted, from a different node than that token's last writer, where the writer had
  // already written with this token before: two leaders interleaving writes under one token.
  std::uint64_t equal_token_writes = 0;
  struct EqualTokenWrite {
    Time at;
    NodeId writer = sim::kNoNode;
    NodeId other = sim::kNoNode;  // the other writer of the same token
    sim::Token token = 0;
  };
  std::optional<EqualTokenWrite> first_equal_token_write;

  // Liveness.
  std::vector<Failover> failovers;
  // A leader change caused by a fault on the coordinator (a store member, the store, the database
  // or a Redis master, a store pause, or a partition that splits one off), with no fault on the
  // old leader itself: fault_at is the coordinator fault's, old_leader and new_leader the service's
  // writers before and after the outage, write_outage the outage's length.
  std::vector<Failover> coordinator_failovers;
  // Service outages (Outage above), measured only when the leaders write (a workload).
  bool outages_measured = false;
  std::vector<Outage> outages;  // the first 100, in order
  std::uint64_t outages_total = 0;
  std::uint64_t outages_unresolved = 0;  // 0 or 1: the service never wrote again
  Duration outage_time{0};
  std::optional<Duration> outage_max;
  std::optional<Time> first_write_at;  // the first accepted write from a leader
  std::optional<Time> last_write_at;   // the last one
  // The share of the time from the first accepted write to the run's end that the service could
  // write (not in an outage); unobserved without a first write.
  std::optional<double> writable_fraction;
  // Stall: no node leads while the coordinator cannot grant a lease (DESIGN.md). A coordinator
  // outage should produce stall, never split-brain.
  Duration stall_time{0};
  CoordinatorReport store;

  // Cost.
  std::uint64_t messages_sent = 0;
  std::uint64_t election_messages_sent = 0;  // of the types the protocol lists as election ones
  std::uint64_t messages_delivered = 0;
  std::uint64_t messages_dropped = 0;
  std::map<std::string, std::uint64_t> messages_by_type;           // sent, by protocol message name
  std::array<std::uint64_t, sim::kStoreOpCount> store_requests{};  // sent, by StoreOp
  std::uint64_t store_requests_total = 0;
  double store_requests_per_second = 0;
  // Requests to the database server or a Redis master (server_request events).
  std::uint64_t server_requests_total = 0;
  // Connections given up after TCP's retransmissions all failed (conn_break events): what was
  // in flight on them was lost.
  std::uint64_t connections_broken = 0;
  // Every request to any coordinator (store, database, Redis masters): store_requests_total +
  // server_requests_total, per simulated second.
  double coordinator_requests_per_second = 0;
  // Coordinator requests (store and server requests) per second of steady state: time when
  // exactly one node leads and no failover waits for a new leader.
  Duration steady_time{0};
  std::uint64_t steady_requests = 0;
  double steady_requests_per_second = 0;
  // The largest requests_peak of an observed failover (0 without one).
  std::uint64_t failover_requests_peak = 0;
  // Writes a leader committed after its own deadline (a lease's renew deadline) had passed on its
  // clock: it acted on a belief it should have known was stale (sink_send's late_ns).
  std::uint64_t writes_after_deadline = 0;
  // Coverage: the roles some node announced (bit = sim::Role).
  std::uint8_t roles_seen = 0;
  // Recovery after healing: from the last `heal` fault to the first accepted sink write made
  // while exactly one node leads (unobserved without a heal, or if that never happens).
  std::optional<Time> last_heal_at;
  std::optional<Duration> heal_recovery;
  // Coordinator requests sent before any node led: what electing the first leader cost a
  // protocol that elects through a coordinator.
  std::uint64_t requests_before_first_leader = 0;
  std::uint64_t sink_writes = 0;
  std::uint64_t events = 0;

  // A fleet's world: the figures above are its services' sums, and this says how they spread.
  std::optional<FleetReport> fleet;
};

}  // namespace electsim::analysis
