// The timeline of one run, the way a textbook figure shows it: who believed what when, which nodes
// were down, paused or cut off, who held the leader key in the store and how its lease drained,
// a replicated store's members with their Raft roles, what the sink accepted and rejected, where
// two leaders overlapped and how long failovers took.
// A TimelineRecorder fills it online from the event stream (docs/trace-format.md); the renderer in
// drawing/timeline_svg.hpp draws it. Meanings follow DESIGN.md ("Observables and their meaning").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "analysis/trace.hpp"
#include "sim/event.hpp"
#include "sim/fault.hpp"
#include "sim/ids.hpp"
#include "sim/kernel.hpp"
#include "sim/protocol.hpp"
#include "sim/time.hpp"

namespace electsim::drawing {

using sim::Duration;
using sim::Epoch;
using sim::NodeId;
using sim::Time;

// What one node believed from `start` until its next belief, a crash or the end of the run. A
// leader belief runs on through a pause: a frozen node still believes it leads.
struct BeliefSpan {
  NodeId node = sim::kNoNode;
  sim::Role role = sim::Role::follower;
  Epoch epoch = 0;
  NodeId known_leader = sim::kNoNode;  // followers: the leader they know of, kNoNode for none
  Time start;
  Time end;
  bool open_at_end = false;  // still believed when the run ended
};

// A node that is down: crashed, or stopped gracefully, until it restarts or the run ends.
struct DownSpan {
  NodeId node = sim::kNoNode;
  Time start;
  Time end;
  bool graceful = false;  // a `stop`, not a crash
  bool open_at_end = false;
};

// A stall: a node (or the store) runs nothing from start to end. A pause extended while it lasts
// stays one span; a crash ends it.
struct PauseSpan {
  sim::Endpoint endpoint = sim::kNoNode;  // a node id, or the store's address
  Time start;
  Time end;
  bool open_at_end = false;
};

// The network's shape while partitions, isolations or one-way cuts are in force. Endpoints are
// indexed nodes 0..n-1, then the store (n; a replicated store's member 0), then the sink (n+1),
// then a replicated store's members 1, 2, ... (n+2, n+3, ...); each has the index of its side
// (0 = "A", 1 = "B", ...) or -1 when no fault in force touches it (it keeps all its links).
struct PartitionSpan {
  Time start;
  Time end;
  std::vector<int> side_of;         // by endpoint index as above
  std::size_t side_count = 0;       // sides are 0 .. side_count-1
  std::string label;                // "0,1 | 2,3,4,store", "3 isolated", "0 cannot reach store"
  std::vector<std::size_t> causes;  // fault indices in force, ascending
  bool open_at_end = false;
  std::size_t nodes = 0;               // n, where the services' indices start
  std::vector<sim::Endpoint> servers;  // the server at each index from n on

  // The side of a node, the store, a store member or the sink (-1 when unaffected or out of
  // range).
  int side(sim::Endpoint endpoint) const;
  // The endpoint at an index of side_of.
  sim::Endpoint endpoint_at(std::size_t index) const;
};

// How a hold of the leader key in the store ended.
enum class HoldEnd : std::uint8_t {
  expired,      // its lease expired on the store's clock and the store deleted the key
  deleted,      // deleted by a request (release, step-down, revoke)
  replaced,     // another put overwrote it (a different holder or lease)
  held_at_end,  // still held when the run ended
};
const char* hold_end_name(HoldEnd end);

// The store's view of the leader key: who held it, under which lease, and when the lease was
// renewed (a successful keepalive of that lease; with a lease-less record, a rewrite of the record
// by the same holder). A renderer draws the lease draining from the last renewal to the expiry.
struct LeaseHold {
  NodeId holder = sim::kNoNode;  // the key's value as a node id, kNoNode if it is not one
  sim::LeaseId lease = sim::kNoLease;
  sim::Revision revision = 0;  // of the put that started the hold
  Time start;
  Time end;
  HoldEnd ended_by = HoldEnd::held_at_end;
  std::vector<Time> renewals;  // ascending, within [start, end]

  // The last moment the holder renewed: the last renewal, or the start.
  Time last_renewal() const { return renewals.empty() ? start : renewals.back(); }
};

// One write as the sink decided it. `stale` is the analyzer's definition: the token is below the
// newest leader epoch announced before the write reached the sink (docs/metrics.md).
struct SinkWriteMark {
  Time at;
  NodeId writer = sim::kNoNode;
  sim::Token token = 0;
  bool accepted = false;
  bool stale = false;
  bool overwrite = false;  // accepted below a token the sink had accepted: corruption
};

// A maximal stretch of non-zero length during which two or more nodes held leader beliefs.
struct SplitBrainSpan {
  Time start;
  Time end;
  std::vector<NodeId> nodes;  // every node that led during the stretch, ascending
};

// A fault as it fired.
struct FaultMark {
  Time at;
  std::size_t index = 0;  // position in the fault schedule
  sim::FaultKind kind = sim::FaultKind::crash;
  sim::Endpoint target = sim::kNoNode;  // resolved target (cut: the from endpoint)
  sim::Endpoint peer = sim::kNoNode;    // cut: the to endpoint
  Duration duration{0};
  bool skipped = false;  // a role target resolved to nobody
  std::string groups;    // partition: the resolved groups as the trace writes them
};

// A piece of a clock's history: from true time `from` on (until the next segment) the clock reads
// local_ns + (t - from) + floor((t - drift_since)·drift/1e9) - floor((from -
// drift_since)·drift/1e9), exactly what sim::ClockModel computes. `drift_since` is when this drift
// took effect (the anchor of the model), which keeps the rounding identical to the kernel's.
struct TimelineClockSegment {
  Time from;
  std::int64_t local_ns = 0;  // the reading at `from`, steps at `from` included
  std::int64_t drift_ppb = 0;
  Time drift_since;

  sim::LocalTime local_at(Time t) const;  // t >= from, before the next segment
};

// The store's leader changed: `member` won `term`. The first leader of a run is a change too.
struct StoreLeaderMark {
  Time at;
  sim::Endpoint member = sim::kNoNode;    // the new leader's endpoint
  Epoch term = 0;                         // its Raft term
  sim::Endpoint previous = sim::kNoNode;  // the leader before it, kNoNode for the first
};

// Figures from the analyzer's Report that the picture's summary line quotes.
struct TimelineSummary {
  std::uint64_t elections = 0;
  Duration split_brain_time{0};
  std::uint64_t split_brain_episodes = 0;
  std::uint64_t same_epoch_leaders = 0;
  std::uint64_t writes_accepted = 0;
  std::uint64_t writes_rejected = 0;
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t stale_writes_rejected = 0;
  std::uint64_t overwrites = 0;  // stale writes accepted over newer data: corruption
  double leaderless_fraction = 0;
  std::uint64_t messages_sent = 0;
};

struct Timeline {
  analysis::TraceHeader header;
  std::size_t node_count = 0;
  Duration duration{0};  // the run as judged: run_end's time (or the configured duration)
  std::optional<Duration> lease_ttl;          // how long a claim on the leader key lasts
  std::optional<bool> lease_judged_by_store;  // true: the store's clock; false: followers' clocks

  // Each list is in time order of its start.
  std::vector<BeliefSpan> beliefs;
  std::vector<DownSpan> downs;
  std::vector<PauseSpan> pauses;        // nodes
  std::vector<PauseSpan> store_pauses;  // the store
  std::vector<PartitionSpan> partitions;
  std::vector<LeaseHold> leader_key;  // empty without a leader key
  std::vector<SinkWriteMark> writes;
  std::vector<SplitBrainSpan> split_brain;
  std::vector<FaultMark> faults;
  std::vector<analysis::Failover> failovers;              // the Report's, as they are
  std::vector<std::vector<TimelineClockSegment>> clocks;  // per node, from t = 0, ascending
  std::vector<TimelineClockSegment> store_clock;
  // A replicated store (header.store_members > 1, or server_role events in the stream): each
  // member's Raft role, its crashes and its pauses, and each change of the store's leader. Member
  // spans name the member by its endpoint (the topology's store_member); a role span's epoch is
  // the Raft term and its known_leader the leader member's endpoint. With a replicated store its
  // member 0's pauses are here, not in store_pauses.
  std::size_t store_members = 1;  // rows to draw: the header's count, or more if events name more
  std::vector<BeliefSpan> member_roles;
  std::vector<DownSpan> member_downs;
  std::vector<PauseSpan> member_pauses;
  std::vector<StoreLeaderMark> store_leaders;
  // The servers with a row of their own (sim::ServerLane::process: the database, the Redis
  // masters, any registered kind that asks for one), in the topology's order, with their crashes
  // and pauses; a span's node or endpoint is the server's address.
  std::vector<sim::Endpoint> server_rows;
  std::vector<DownSpan> server_downs;
  std::vector<PauseSpan> server_pauses;
  std::map<std::string, std::uint64_t> messages_by_type;  // sent, by protocol message name
  TimelineSummary summary;
  // Set by the caller when expectations were checked ("expectations met", "2 bounds broken");
  // shown first in the picture's summary line.
  std::string verdict;

  // The reading of a node's clock at true time t (the store's at the store's address).
  sim::LocalTime local_at(sim::Endpoint node, Time t) const;
  // The addresses of the store (a replicated store's member 0) and the sink, by the header's
  // topology; kNoNode in a world without one.
  sim::Endpoint store_endpoint() const { return header.topology.store_member(0); }
  sim::Endpoint sink_endpoint() const { return header.topology.of_kind(sim::server_kind::sink); }
  // Whether the store is a replicated cluster whose members get rows of their own.
  bool replicated() const { return store_members > 1 || !member_roles.empty(); }
};

// Builds a Timeline online. Beliefs, faults, crashes, pauses, store and sink events append spans
// and marks when something changes; messages and timer fires cost O(1) and never allocate.
class TimelineRecorder : public sim::Observer {
 public:
  // The world gives the clocks' configuration (offsets, drift, scheduled steps); `lease_ttl` and
  // `lease_judged_by_store` come from the protocol (protocols::PreparedProtocol) when it has them.
  TimelineRecorder(analysis::TraceHeader header, const sim::WorldConfig& world,
                   std::optional<Duration> lease_ttl = std::nullopt,
                   std::optional<bool> lease_judged_by_store = std::nullopt);
  // For a saved trace, where only the header is known: perfect clocks at the start, changed by the
  // trace's clock_change events (scheduled steps are not in a trace).
  explicit TimelineRecorder(analysis::TraceHeader header,
                            std::optional<Duration> lease_ttl = std::nullopt,
                            std::optional<bool> lease_judged_by_store = std::nullopt);
  ~TimelineRecorder() override;
  TimelineRecorder(const TimelineRecorder&) = delete;
  TimelineRecorder& operator=(const TimelineRecorder&) = delete;

  // The most spans, marks and holds one picture may collect (about 100 bytes each). Past it the
  // recorder stops (checked every 1024 events) and overflowed() says so: the run reports it
  // instead of eating the machine.
  static constexpr std::size_t kMaxItems = 4'000'000;

  void on_event(const sim::Event& event) override;
  bool overflowed() const;
  void set_max_items(std::size_t max);
  // Closes what is still open at the run's end, computes split-brain stretches and copies the
  // report's failovers and figures. Call after the analyzer's finish(); may be called again.
  Timeline finish(const analysis::Report& report);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace electsim::drawing
