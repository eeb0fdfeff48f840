// The coordinator's own observables, from the event stream: whether the store can grant (a single
// store that is up and running; a replicated store with a member that leads and runs), its leader
// elections, commit latency, the clients' failed and retried requests, the leases refreshed by
// promotions, and the safety of the store's Raft itself: no two leaders in one term, no two
// different entries committed at one log index, and replies whose revisions agree with one total
// order in real time (a request sent after another's reply never sees an older revision: the
// revision check etcd's robustness tests make beside Porcupine). DESIGN.md "Stall";
// docs/metrics.md.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/report.hpp"
#include "analysis/time_ring.hpp"
#include "sim/event.hpp"

namespace electsim::analysis {

class CoordinatorWatch {
 public:
  // `members`: the coordinator's servers, a replicated store's members in order or the one
  // server leadership depends on (the single store; with `database`, the database server).
  explicit CoordinatorWatch(std::vector<sim::Endpoint> members = {}, bool database = false);

  void on_event(const sim::Event& e);
  // Whether the store could grant a lease just before the current event.
  bool can_grant() const { return can_; }
  void finish(Report& report);
  // A sharded store's report, from its shards' watches: the counts summed, the unavailable time
  // summed over shards (availability the mean shard's), the outages and recoveries of every
  // shard in time order, commit latency over every shard's commits. Returns each shard's own.
  static std::vector<CoordinatorReport> finish_shards(std::vector<CoordinatorWatch*> shards,
                                                      Report& report);
  const CoordinatorReport& report() const { return report_; }
  // Adds `d` to the store's unavailable time if it cannot grant now.
  void account(Duration d);
  // The time from the start to `t` during which the store could not grant, by the answers as
  // they changed; `t` at or before the event being taken in. A fleet's services ask for the
  // stretches between their own events.
  Duration unavailable_until(Time t) const;

 private:
  struct Member {
    sim::Endpoint endpoint = sim::kNoNode;
    bool up = true;
    bool paused = false;
    bool leads = false;
    Epoch term = 0;
  };
  Member* member(sim::Endpoint endpoint);
  // A coordinator request sent at `t` (store_request, server_request): counted in its whole second
  // and, while a recovery's window is open, in that recovery's herd.
  void on_request(Time t);
  void close_recovery() { recovery_open_ = false; }
  // The clients' rate over the whole seconds before `t`'s (up to kRecoveryWindow of them).
  std::optional<double> rate_before(Time t) const;
  // Takes in one event; true when it changed a member (the only events that move can_grant()).
  bool apply(const sim::Event& e);
  bool members_can_grant() const;

  std::size_t member_count_;
  std::vector<Member> members_;
  std::map<Epoch, sim::Endpoint> leader_of_term_;
  // The term of the entry committed at each log index: 1, 2, ... in a vector (8 bytes a commit:
  // a fleet's store commits millions), any index out of that order in the map until the vector
  // reaches it. false: a different term was committed there before.
  bool commit_agrees(std::int64_t index, Epoch term);
  std::vector<Epoch> committed_terms_;
  std::map<std::int64_t, Epoch> committed_sparse_;
  // Linearizability of the clients' view: the highest revision any reply had shown when each
  // outstanding request (client, request id) was sent, and the highest shown so far. An election
  // node has a request or two out at a time: they sit in its own slots of one flat array (a
  // fleet's replies cost one cache line, no allocation and no walk of a tree); any beyond those,
  // and a server's (an aggregator's), wait in the map.
  struct Outstanding {
    std::int64_t id = 0;
    sim::Revision floor = 0;
  };
  struct NodeFloors {
    std::array<Outstanding, 2> slot{};
    std::uint32_t used = 0;
  };
  std::vector<NodeFloors> node_floor_;
  std::map<std::pair<sim::NodeId, std::int64_t>, sim::Revision> spilled_floor_;
  void note_floor(sim::NodeId client, std::int64_t id);
  std::optional<sim::Revision> take_floor(sim::NodeId client, std::int64_t id);
  sim::Revision highest_returned_ = 0;
  std::optional<Time> outage_since_;  // the store has been unable to grant since then
  bool can_ = true;                   // whether it can grant, as of the last event
  // Each change of the answer: when, the unavailable time before it, and the answer after it.
  struct Change {
    Time at;
    Duration before{0};
    bool can = true;
  };
  std::vector<Change> changes_;
  std::vector<std::int64_t> commit_latency_ns_;
  // Requests sent in each of the last whole seconds (slot: second modulo the slots; one more slot
  // than the seconds looked back on, so the current second never overwrites the oldest).
  static constexpr std::size_t kRateSlots =
      static_cast<std::size_t>(kRecoveryWindow / std::chrono::seconds(1)) + 1;
  std::array<std::uint64_t, kRateSlots> sent_in_second_{};
  std::array<std::int64_t, kRateSlots> second_of_slot_{};
  std::optional<double> rate_before_outage_;
  // While the last recovery's window is open: the send times of its requests in the last second,
  // a ring in time order, to find its busiest second.
  bool recovery_open_ = false;
  TimeRing last_second_;
  CoordinatorReport report_;
};

}  // namespace electsim::analysis
