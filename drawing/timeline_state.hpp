// The timeline recorder's state (drawing/timeline.hpp), shared by the files that keep it:
// timeline.cpp (the model, the dispatch of events and the finished timeline),
// timeline_record_nodes.cpp (beliefs, crashes, pauses and clocks of nodes, store members and
// servers) and timeline_record_world.cpp (faults, the network's shape, the store and the sink).
// Private to drawing/.
#pragma once

#include "drawing/timeline.hpp"

#include <optional>
#include <string>
#include <vector>

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/clock.hpp"
#include "sim/store_types.hpp"

namespace electsim::drawing {

using analysis::Report;
using analysis::TraceHeader;

namespace timeline_record {

// Parts per billion in one: a drift at or below -kBillion would run a clock backwards.
inline constexpr std::int64_t kBillion = 1'000'000'000;

// A clock being mirrored: the kernel's model, the configured steps not yet turned into segments,
// and when the current drift took effect.
struct ClockTrack {
  sim::ClockModel model;
  std::vector<sim::ClockStep> pending;  // ascending
  Time drift_since;
  std::vector<TimelineClockSegment> segments;

  void add(Time from) {
    TimelineClockSegment segment{from, model.local_at(from).ns, model.drift_ppb(), drift_since};
    if (!segments.empty() && segments.back().from == from) {
      segments.back() = segment;
    } else {
      segments.push_back(segment);
    }
  }
  // Configured steps at or before `upto` start segments; the model did not change since they were
  // scheduled, so its reading at each is what the kernel's clock read.
  void flush(Time upto) {
    std::size_t used = 0;
    while (used < pending.size() && pending[used].at <= upto) {
      add(pending[used].at);
      ++used;
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(used));
  }
};

// A clock mirrored from its configuration, its first segment at 0.
ClockTrack make_track(const sim::ClockConfig& config);
// Members of one side, with runs of five or more consecutive node ids shortened ("0-4,7,store"),
// servers by the names their world gave them.
std::string members_text(const std::vector<sim::Endpoint>& members, const sim::Topology& topology);

}  // namespace timeline_record

// The recorder's files read these unqualified.
using namespace timeline_record;

struct TimelineRecorder::State {
  // A partition, isolation or cut in force: the side of each endpoint it touches.
  struct ActiveCut {
    std::size_t index = 0;
    sim::FaultKind kind = sim::FaultKind::partition;
    std::vector<int> group_of;  // by endpoint index; -1 untouched
  };

  Timeline tl;
  std::size_t n = 0;
  std::vector<std::optional<std::size_t>> open_belief;  // per node, into tl.beliefs
  std::vector<std::optional<std::size_t>> open_down;
  std::vector<std::optional<std::size_t>> open_pause;
  std::optional<std::size_t> open_store_pause;
  // A replicated store's members, by member index, into tl.member_roles, member_downs and
  // member_pauses.
  bool replicated = false;
  std::size_t indexed_members = 1;  // members with an index in PartitionSpan::side_of
  std::array<std::optional<std::size_t>, sim::kMaxStoreMembers> open_member_role;
  std::array<std::optional<std::size_t>, sim::kMaxStoreMembers> open_member_down;
  std::array<std::optional<std::size_t>, sim::kMaxStoreMembers> open_member_pause;
  // The servers with rows (Timeline::server_rows), by row.
  std::vector<std::optional<std::size_t>> open_server_down;
  std::vector<std::optional<std::size_t>> open_server_pause;
  std::optional<std::size_t> open_hold;
  std::optional<std::size_t> open_partition;
  std::vector<ActiveCut> active;
  std::optional<Epoch> newest_epoch;  // highest leader epoch announced so far
  std::vector<ClockTrack> clocks;     // nodes, then the store
  std::vector<std::uint64_t> sent_by_code;
  Time last_event;
  std::optional<Time> run_end;
  bool overflowed = false;
  std::size_t max_items = kMaxItems;
  std::uint64_t events_seen = 0;

  void init(TraceHeader header, const sim::WorldConfig* world, std::optional<Duration> ttl,
            std::optional<bool> judged_by_store);

  bool is_node(sim::Endpoint e) const { return e >= 0 && static_cast<std::size_t>(e) < n; }
  std::size_t at(sim::Endpoint node) const { return static_cast<std::size_t>(node); }

  // The endpoint's index in PartitionSpan::side_of, or nullopt for no endpoint.
  std::optional<std::size_t> endpoint_index(sim::Endpoint e) const;
  // The servers with an index in PartitionSpan::side_of, from n on: the store, the sink, a
  // replicated store's further members, then the servers with rows.
  std::vector<sim::Endpoint> indexed_servers() const;
  // Endpoints a partition can give a side: nodes, the store, the sink, further members and the
  // servers with rows.
  std::size_t endpoint_count() const { return n + 1 + indexed_members + tl.server_rows.size(); }

  // The member index of a replicated store's member at `e`, or nullopt.
  std::optional<std::size_t> member_at(sim::Endpoint e) const;

  // ---- Beliefs, crashes, pauses

  void close_belief(NodeId node, Time t);

  void on_belief(const sim::Event& e);

  void close_pause(NodeId node, Time t);

  void on_crash(const sim::Event& e);

  void on_restart(const sim::Event& e);

  void on_pause(const sim::Event& e);

  void on_store_pause(const sim::Event& e);

  void on_store_resume(const sim::Event& e);

  // ---- Servers with rows of their own: crashes and pauses, as a node's

  // The row of the server at `e`, or nullopt (a few servers at most: only crash, restart, pause
  // and resume events look).
  std::optional<std::size_t> server_row(sim::Endpoint e) const;

  void close_server_pause(std::size_t row, Time t);

  void on_server_crash(std::size_t row, const sim::Event& e);

  void on_server_restart(std::size_t row, Time t);

  void on_server_pause(std::size_t row, const sim::Event& e);

  // ---- A replicated store's members: the same spans as a node's, by member index

  void close_member_role(std::size_t m, Time t);

  void close_member_pause(std::size_t m, Time t);

  void on_server_role(const sim::Event& e);

  void on_member_crash(std::size_t m, const sim::Event& e);

  void on_member_restart(std::size_t m, Time t);

  void on_member_pause(std::size_t m, Time t);

  // ---- Faults and the network's shape

  void on_fault(const sim::Event& e);

  void on_network_change(const sim::Event& e);

  // Each side's endpoints: nodes, the store's members in order, the servers with rows, then the
  // sink.
  std::string side_label(const std::vector<int>& side_of, std::size_t sides) const;

  // The network's shape from the faults in force. One partition keeps its own group order; any
  // combination splits the endpoints into classes that share the same group under every fault.
  void update_partition(Time t);

  // ---- Store and sink

  void close_hold(Time t, HoldEnd how);

  void on_store_change(const sim::Event& e);

  void on_store_apply(const sim::Event& e);

  void on_sink_write(const sim::Event& e);

  // ---- Clocks

  void on_clock_change(const sim::Event& e);
};

}  // namespace electsim::drawing
