// The timeline recorder's processes (drawing/timeline_state.hpp): the records of the spans the
// span model (drawing/spans.hpp) opens and closes for the nodes, the servers with rows of their
// own, a replicated store's members and the single store, and the clocks.
#include "drawing/timeline_state.hpp"

namespace electsim::drawing {

// ---- Spans: a record in tl for each, opened at its start and closed at its end

std::vector<BeliefSpan>& TimelineRecorder::State::roles_of(Timeline& timeline, SpanLane lane) {
  return lane == SpanLane::member ? timeline.member_roles : timeline.beliefs;
}

std::vector<DownSpan>& TimelineRecorder::State::downs_of(Timeline& timeline, SpanLane lane) {
  switch (lane) {
    case SpanLane::member:
      return timeline.member_downs;
    case SpanLane::server:
      return timeline.server_downs;
    case SpanLane::node:
    case SpanLane::store:
      break;
  }
  return timeline.downs;  // the single store is never down: the model keeps its pauses only
}

std::vector<PauseSpan>& TimelineRecorder::State::pauses_of(Timeline& timeline, SpanLane lane) {
  switch (lane) {
    case SpanLane::member:
      return timeline.member_pauses;
    case SpanLane::server:
      return timeline.server_pauses;
    case SpanLane::store:
      return timeline.store_pauses;
    case SpanLane::node:
      break;
  }
  return timeline.pauses;
}

void TimelineRecorder::State::role_opened(const SpanOwner& owner, OpenRole& open) {
  BeliefSpan span;
  span.node = owner.endpoint;
  span.role = open.role;
  span.epoch = open.epoch;
  span.known_leader = open.known_leader;
  span.start = open.start;
  span.end = open.start;
  std::vector<BeliefSpan>& spans_here = roles_of(tl, owner.lane);
  open.record = spans_here.size();
  spans_here.push_back(span);
  if (owner.lane != SpanLane::member) return;
  tl.store_members = std::max(tl.store_members, owner.index + 1);
  if (span.role != sim::Role::leader) return;
  // A new leader, or the same member leading in a new term: the store's leader changed.
  const std::vector<StoreLeaderMark>& marks = tl.store_leaders;
  if (!marks.empty() && marks.back().member == span.node && marks.back().term == span.epoch) {
    return;
  }
  const sim::Endpoint previous = marks.empty() ? sim::kNoNode : marks.back().member;
  tl.store_leaders.push_back(StoreLeaderMark{span.start, span.node, span.epoch, previous});
}

void TimelineRecorder::State::role_closed(const SpanOwner& owner, const OpenRole& open, Time end) {
  roles_of(tl, owner.lane)[open.record].end = end;
}

void TimelineRecorder::State::down_opened(const SpanOwner& owner, OpenDown& open) {
  std::vector<DownSpan>& downs = downs_of(tl, owner.lane);
  open.record = downs.size();
  downs.push_back(DownSpan{owner.endpoint, open.start, open.start, open.graceful, false});
}

void TimelineRecorder::State::down_closed(const SpanOwner& owner, const OpenDown& open, Time end) {
  downs_of(tl, owner.lane)[open.record].end = end;
}

void TimelineRecorder::State::pause_opened(const SpanOwner& owner, OpenPause& open) {
  std::vector<PauseSpan>& pauses = pauses_of(tl, owner.lane);
  open.record = pauses.size();
  pauses.push_back(PauseSpan{owner.endpoint, open.start, open.start, false});
}

void TimelineRecorder::State::pause_closed(const SpanOwner& owner, const OpenPause& open,
                                           Time end) {
  pauses_of(tl, owner.lane)[open.record].end = end;
}

// ---- Clocks

void TimelineRecorder::State::on_clock_change(const sim::Event& e) {
  std::size_t track = 0;
  if (e.node == store && store != sim::kNoNode) {
    track = n;
  } else if (is_node(e.node)) {
    track = at(e.node);
  } else {
    return;
  }
  ClockTrack& clock = clocks[track];
  clock.flush(e.time);
  // The kernel's own changes (sim/kernel.cpp, clock faults): code 0 drift, 1 step, 2 offset.
  switch (e.code) {
    case 0:
      if (e.a <= -kBillion) return;  // not a clock the kernel could have
      clock.model.set_drift_at(e.time, e.a);
      clock.drift_since = e.time;
      break;
    case 1:
      clock.model.add_step(e.time, Duration(e.b));
      break;
    case 2:
      clock.model.set_offset_at(e.time, Duration(e.b));
      break;
    default:
      return;
  }
  clock.add(e.time);
}

}  // namespace electsim::drawing
