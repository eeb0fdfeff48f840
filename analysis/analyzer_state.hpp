// The online analyzer's state (analysis/analyzer.hpp), shared by the files that keep it:
// analyzer.cpp (the dispatch of events and the report), analyzer_leaders.cpp (leader intervals,
// split-brain, failovers and who heard the new leader), analyzer_service.cpp (writes, stale and
// equal-token writes, fault windows and service outages). Private to analysis/.
#pragma once

#include "analysis/analyzer.hpp"

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/coordinator.hpp"
#include "analysis/time_ring.hpp"
#include "sim/assert.hpp"
#include "sim/protocol.hpp"
#include "sim/string_map.hpp"

namespace electsim::analysis {

namespace analyzer_detail {

inline constexpr std::size_t kFindingsKept =
    100;  // per kind of finding; every one is still counted

inline bool takes_node_away(sim::FaultKind kind) {
  return sim::fault_info(kind).takes_leader_away;
}

}  // namespace analyzer_detail

// Whether State::apply changes anything for an event of this kind. A fleet hands its services
// only the events that do: the time a service is not told of is summed when its next event comes
// (State::advance adds up a state that held still, and the coordinator's unavailability is a
// running total over time), so its figures are the same, and a timer or a reply costs no visit
// to a service's state.
constexpr bool state_reads(sim::EventKind kind) {
  switch (kind) {
    case sim::EventKind::run_start:
    case sim::EventKind::run_end:
    case sim::EventKind::belief:
    case sim::EventKind::crash:
    case sim::EventKind::restart:
    case sim::EventKind::fault:
    case sim::EventKind::sink_write:
    case sim::EventKind::store_change:
    case sim::EventKind::msg_send:
    case sim::EventKind::msg_deliver:
    case sim::EventKind::msg_drop:
    case sim::EventKind::store_request:
    case sim::EventKind::sink_send:
    case sim::EventKind::server_request:
    case sim::EventKind::conn_break:
      return true;
    case sim::EventKind::pause:
    case sim::EventKind::resume:
    case sim::EventKind::clock_change:
    case sim::EventKind::timer_fire:
    case sim::EventKind::store_apply:
    case sim::EventKind::lease_expire:
    case sim::EventKind::store_reply:
    case sim::EventKind::watch_notify:
    case sim::EventKind::sink_reply:
    case sim::EventKind::store_pause:
    case sim::EventKind::store_resume:
    case sim::EventKind::network_change:
    case sim::EventKind::server_role:
    case sim::EventKind::raft_commit:
    case sim::EventKind::lease_refresh:
    case sim::EventKind::client_failover:
      return false;
  }
  return false;
}

// The watch on the coordinator `config` names, with config.coordinator resolved (the store's
// first member when it names none).
CoordinatorWatch coordinator_watch(AnalysisConfig& config);

namespace analyzer_detail {}  // namespace analyzer_detail

struct Analyzer::State {
  // A failover not yet finished: waiting for another leader, then for its first accepted write.
  struct PendingFailover {
    std::size_t index = 0;  // into report.failovers
    bool resolved = false;  // another node leads; waiting for its first accepted write
    // First accepted write after the fault of each node other than the old leader, so the new
    // leader's write counts even when it reached the sink before the takeover was observed.
    std::vector<std::pair<NodeId, Time>> first_writes;
    // When the fault's own effect ends (a pause's or a partition's duration): an accepted write by
    // the old leader, in the same interval, after this shows that it rode the fault out.
    Time effects_end;
    // The longest gap between accepted writes since the fault (from the last write before it):
    // the write outage of a fault ridden out is what the sink saw.
    Duration max_gap{0};
    Time gap_from;
    Time gap_to;
  };

  // A fault's effect window, kept while it can still be named as an outage's cause.
  struct FaultWindow {
    OutageCause cause;
    Time until;               // when its effect ended (its own time for an instant fault)
    bool open_ended = false;  // a crash or link fault without a duration: until restart or heal
  };

  // A resolved failover waiting for every other live node to hear from its new leader.
  struct PendingHeard {
    std::size_t index = 0;  // into report.failovers
    NodeId leader = sim::kNoNode;
    Epoch epoch = 0;
    Time since;
    std::vector<bool> waiting;  // by node
    std::size_t left = 0;
  };

  AnalysisConfig config;
  Report report;
  std::size_t node_count = 0;
  CoordinatorWatch coordinator;
  // A fleet's service: the world's coordinator, watched once for every service, and the world's
  // id of the service's node 0 (its nodes are numbered from 0 here, as its protocol numbers them).
  const CoordinatorWatch* shared_coordinator = nullptr;
  NodeId base = 0;

  // Leadership.
  std::vector<std::optional<std::size_t>> open;  // per node: its open interval in report.intervals
  std::size_t open_count = 0;
  Time accounted;         // split-brain and leaderless time are summed up to here
  bool in_split = false;  // inside a split-brain episode of non-zero length
  std::map<Epoch, std::vector<NodeId>> leaders_by_epoch;  // who announced leader in each epoch
  std::optional<Epoch> newest_epoch;                      // highest leader epoch announced so far

  // Writes.
  std::uint64_t stale_accepted_kept = 0;
  std::uint64_t stale_rejected_kept = 0;
  std::optional<Time> last_write_any;  // the sink's last accepted write
  std::vector<PendingFailover> pending;

  // Service outages.
  std::optional<Duration> outage_gap;  // two write intervals; none: outages are not measured
  std::optional<Time> last_legit_write;
  NodeId last_legit_writer = sim::kNoNode;
  Time recovered_since;              // the end of the last outage, or the first write
  std::vector<FaultWindow> windows;  // faults that may still be named as an outage's cause
  // The open interval that began last: the newest grant of leadership (kNoNode: none open).
  NodeId newest_open = sim::kNoNode;

  // Without ordered tokens: each node's latest grant (its latest interval's index, the order in
  // which leadership was granted) and the latest grant of an accepted write.
  std::vector<std::optional<std::size_t>> grant_of;
  std::optional<std::size_t> top_accepted_grant;

  // Equal-token writes: the newest accepted token, every node that wrote with it, and its last
  // writer.
  std::optional<sim::Token> top_token;
  std::vector<NodeId> top_writers;
  NodeId top_last_writer = sim::kNoNode;

  // Heard endpoint.
  std::vector<bool> up;             // by node: not crashed
  std::vector<bool> election_type;  // by sim::MessageType: an election message
  std::vector<PendingHeard> heard;

  // Cost.
  std::vector<std::uint64_t> sent_by_type;  // by sim::MessageType
  // Send times of the coordinator requests of the last second, oldest first, in a ring that
  // grows to the busiest second's count and is then reused.
  TimeRing recent;
  std::vector<std::size_t> herd;  // failovers whose requests_peak is still being measured

  Time last_event;
  std::optional<Time> run_end;
  bool finished = false;

  // Sets up for `config` (its coordinator already resolved).
  void init(AnalysisConfig config);
  // Takes in one event (after advance, and after the coordinator took it in).
  void apply(const sim::Event& event);
  // Closes the books at `end`: open intervals, the last outage, the rates.
  void finish(Time end);

  void ensure_node(NodeId node);
  bool is_node(NodeId node) const { return node >= 0; }
  bool is_leader(NodeId node) const;
  const LeaderInterval& interval_of(NodeId node) const;

  // The leader with the highest epoch among the open intervals (ties: the lowest node id).
  std::optional<NodeId> current_leader() const;

  // Sums the time since the last event into split-brain and leaderless time. Called before each
  // event is applied, so a state that lasts zero time (two changes at one instant) counts nothing.
  void advance(Time t);

  // Exactly one leader and no failover waiting for a new one.
  bool steady() const;

  // A request to the coordinator at time t: steady-state cost and the herd of every failover
  // still being measured.
  void on_coordinator_request(Time t);

  void record_first_split_brain();

  void close_interval(NodeId node, Time at);

  // Only when the newest leader stops leading: a scan of the open intervals, once per change of
  // leader, never per write.
  void find_newest_open();

  void open_interval(NodeId node, Epoch epoch, Time at);

  void on_belief(const sim::Event& e);

  // The old leader of a waiting record leads again in a new epoch, before any other node did.
  void settle_regained(NodeId node, Epoch epoch, Time at);

  // Another node leads: every failover waiting for a leader other than its old one ends now.
  void resolve_failovers(NodeId new_leader, Time at);

  void wait_for_heard(std::size_t index, NodeId leader, Time at);

  // Records every node has heard; drops those whose leader no longer leads in its epoch.
  void settle_heard(Time at);

  void on_deliver(const sim::Event& e);

  void on_up_change(NodeId node, bool is_up, Time at);

  static void set_first_new_write(Failover& f, Time at);

  void on_sink_write(const sim::Event& e);

  void record_stale(const sim::Event& e, bool accepted, Epoch newest);

  // Tokens that do not grow with each grant say nothing about order: a write is stale when a
  // grant newer than its writer's exists, and overwrites when a write of a newer grant was
  // already accepted. The epoch named is the newest grant's.
  void on_write_by_grant(const sim::Event& e, bool accepted);

  void on_accepted_write(const sim::Event& e, bool accepted);

  void on_store_change(const sim::Event& e);

  // Whether a partition given as "0,1|2,3,store" leaves `leader` without a strict majority of the
  // nodes it can reach, or (when the protocol needs the store) without the store. Endpoints in no
  // group keep all their links, so they count as reachable from every group.
  bool partition_takes_away(std::string_view text, NodeId leader) const;

  // Whether the old leader of a waiting record still holds the very interval it held at the fault.
  bool kept_interval(const Failover& f) const;

  // Records still waiting whose old leader holds the very interval it held at the fault and has
  // written since the fault's effect ended (or the run ended): it rode the fault out. Settling them
  // keeps a much later, unrelated change of leader from being taken for this fault's failover.
  void settle_ridden_out(std::optional<NodeId> writer, Time at);

  // ---- Service outages

  // An endpoint of a partition's groups: a server by its name, or a node by its number (the node
  // count may be known only from run_start).
  std::optional<sim::Endpoint> endpoint_of(std::string_view token) const;

  // Whether a partition's groups name a coordinator (ServerTraits::coordinator).
  bool names_coordinator(std::string_view groups) const;

  void record_window(const sim::Event& e, sim::FaultKind kind);

  // A crashed or stopped process came back: its open-ended crash is over.
  void on_restart_window(NodeId node, Time at);

  static constexpr std::size_t kCausesKept = 8;

  void close_outage(Time end, std::optional<NodeId> writer_after);

  // The leader changed in an outage with a fault on the coordinator and none that took the old
  // leader away itself: a failover of the coordinator's kind.
  void record_coordinator_failover(const Outage& o);

  // An accepted write from the newest grant of leadership: the service wrote.
  void on_legit_write(NodeId writer, Time at);

  void on_equal_token(const sim::Event& e);

  void on_fault(const sim::Event& e);
};

// A fleet: a State per service (analysis/analyzer_fleet.cpp).
struct Analyzer::Fleet {
  AnalysisConfig config;  // the world's
  // The coordinator: the world's one store, or each shard of a sharded store, watched apart. A
  // watch takes only the events of its own servers and of the nodes of the services that ask it,
  // and counts its unavailable time up to each of them (its answer changes only at its own).
  struct Shard {
    std::string name;  // the group of its servers: "store" or "store-2"
    CoordinatorWatch watch;
    Time accounted;
    std::size_t services = 0;
  };
  std::vector<Shard> shards;
  std::vector<std::uint32_t> shard_of_service;
  std::vector<std::int32_t> shard_of_slot;  // by server slot: a store server's shard, or -1
  std::size_t aggregators = 0;              // lease aggregators in front of the store
  std::vector<std::unique_ptr<State>> services;
  std::vector<NodeId> bases;  // each service's first node, ascending
  // The leader key of each service: store changes find their service by key (looked up, never
  // iterated).
  sim::StringMap<std::size_t> by_key;
  Time accounted;
  Time last_event;
  std::optional<Time> run_end;
  std::uint64_t events = 0;
  std::uint64_t connections_broken = 0;
  bool finished = false;
  Report report;

  // The shard an event is the business of: its node's service's, or its store server's; -1 for
  // any other event.
  std::int32_t shard_of(sim::Endpoint node) const {
    if (node >= 0) return static_cast<std::int32_t>(shard_of_service[service_of(node)]);
    if (!sim::is_server_address(node)) return -1;
    const std::size_t slot = sim::server_slot(node);
    return slot < shard_of_slot.size() ? shard_of_slot[slot] : -1;
  }
  std::size_t service_of(NodeId node) const {
    return static_cast<std::size_t>(std::upper_bound(bases.begin(), bases.end(), node) -
                                    bases.begin() - 1);
  }
};

}  // namespace electsim::analysis
