// The timeline recorder's state (drawing/timeline.hpp), shared by the files that keep it:
// timeline.cpp (the model, the dispatch of events and the finished timeline),
// timeline_record_nodes.cpp (the records of the span model's beliefs, roles, downtime and
// pauses, drawing/spans.hpp, and the clocks) and timeline_record_world.cpp (faults, the network's
// shape, the store and the sink). Private to drawing/.
#pragma once

#include "drawing/spans.hpp"
#include "drawing/timeline.hpp"

#include <optional>
#include <string>
#include <vector>

#include <algorithm>
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

struct TimelineRecorder::State final : SpanListener {
  // A partition, isolation or cut in force: the side of each endpoint it touches.
  struct ActiveCut {
    std::size_t index = 0;
    sim::FaultKind kind = sim::FaultKind::partition;
    std::vector<int> group_of;  // by endpoint index; -1 untouched
  };

  Timeline tl;
  std::size_t n = 0;
  // Beliefs, roles, downtime and pauses; each open span's `record` is its index into tl's
  // vector for its lane (beliefs, member_roles, downs, ...).
  SpanModel spans;
  std::size_t indexed_members = 1;     // members with an index in PartitionSpan::side_of
  sim::Endpoint store = sim::kNoNode;  // the store's address (a replicated store's member 0)
  sim::Endpoint sink = sim::kNoNode;
  std::optional<std::size_t> open_hold;
  std::optional<std::size_t> open_partition;
  std::vector<ActiveCut> active;
  std::vector<ClockTrack> clocks;  // nodes, then the store
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
  std::optional<std::size_t> server_row(sim::Endpoint e) const { return spans.server_row(e); }

  // The endpoint's index in PartitionSpan::side_of, or nullopt for no endpoint.
  std::optional<std::size_t> endpoint_index(sim::Endpoint e) const;
  // The servers with an index in PartitionSpan::side_of, from n on: the store, the sink, a
  // replicated store's further members, then the servers with rows.
  std::vector<sim::Endpoint> indexed_servers() const;
  // Endpoints a partition can give a side: nodes, the store, the sink, further members and the
  // servers with rows.
  std::size_t endpoint_count() const { return n + 1 + indexed_members + tl.server_rows.size(); }

  // ---- Spans (timeline_record_nodes.cpp): each opens a record in tl and closes it

  // The vector of `timeline` that keeps a lane's spans of each kind.
  static std::vector<BeliefSpan>& roles_of(Timeline& timeline, SpanLane lane);
  static std::vector<DownSpan>& downs_of(Timeline& timeline, SpanLane lane);
  static std::vector<PauseSpan>& pauses_of(Timeline& timeline, SpanLane lane);

  void role_opened(const SpanOwner& owner, OpenRole& span) override;
  void role_closed(const SpanOwner& owner, const OpenRole& span, Time end) override;
  void down_opened(const SpanOwner& owner, OpenDown& span) override;
  void down_closed(const SpanOwner& owner, const OpenDown& span, Time end) override;
  void pause_opened(const SpanOwner& owner, OpenPause& span) override;
  void pause_closed(const SpanOwner& owner, const OpenPause& span, Time end) override;

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
