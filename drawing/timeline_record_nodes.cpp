// The timeline recorder's processes (drawing/timeline_state.hpp): beliefs, crashes and pauses of
// the nodes, the servers with rows of their own and a replicated store's members, and the clocks.
#include "drawing/timeline_state.hpp"

namespace electsim::drawing {

// ---- Beliefs, crashes, pauses

void TimelineRecorder::State::close_belief(NodeId node, Time t) {
  auto& open = open_belief[at(node)];
  if (!open) return;
  tl.beliefs[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::on_belief(const sim::Event& e) {
  if (!is_node(e.node)) return;
  close_belief(e.node, e.time);
  BeliefSpan span;
  span.node = e.node;
  span.role = e.code <= 2 ? static_cast<sim::Role>(e.code) : sim::Role::follower;
  span.epoch = e.a;
  span.known_leader =
      span.role == sim::Role::follower && e.b >= 0 ? static_cast<NodeId>(e.b) : sim::kNoNode;
  span.start = e.time;
  span.end = e.time;
  open_belief[at(e.node)] = tl.beliefs.size();
  tl.beliefs.push_back(span);
  if (span.role == sim::Role::leader && (!newest_epoch || e.a > *newest_epoch)) {
    newest_epoch = e.a;
  }
}

void TimelineRecorder::State::close_pause(NodeId node, Time t) {
  auto& open = open_pause[at(node)];
  if (!open) return;
  tl.pauses[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::on_crash(const sim::Event& e) {
  if (!is_node(e.node)) return;
  close_belief(e.node, e.time);
  close_pause(e.node, e.time);
  if (open_down[at(e.node)]) return;
  open_down[at(e.node)] = tl.downs.size();
  tl.downs.push_back(DownSpan{e.node, e.time, e.time, e.a != 0, false});
}

void TimelineRecorder::State::on_restart(const sim::Event& e) {
  if (!is_node(e.node)) return;
  auto& open = open_down[at(e.node)];
  if (!open) return;
  tl.downs[*open].end = e.time;
  open.reset();
}

void TimelineRecorder::State::on_pause(const sim::Event& e) {
  if (!is_node(e.node) || open_pause[at(e.node)]) return;  // an extension keeps its span
  open_pause[at(e.node)] = tl.pauses.size();
  tl.pauses.push_back(PauseSpan{e.node, e.time, e.time, false});
}

void TimelineRecorder::State::on_store_pause(const sim::Event& e) {
  if (open_store_pause) return;
  open_store_pause = tl.store_pauses.size();
  tl.store_pauses.push_back(PauseSpan{sim::kStoreEndpoint, e.time, e.time, false});
}

void TimelineRecorder::State::on_store_resume(const sim::Event& e) {
  if (!open_store_pause) return;
  tl.store_pauses[*open_store_pause].end = e.time;
  open_store_pause.reset();
}

// ---- Servers with rows of their own: crashes and pauses, as a node's

std::optional<std::size_t> TimelineRecorder::State::server_row(sim::Endpoint e) const {
  if (e >= 0) return std::nullopt;
  const auto it = std::find(tl.server_rows.begin(), tl.server_rows.end(), e);
  if (it == tl.server_rows.end()) return std::nullopt;
  return static_cast<std::size_t>(it - tl.server_rows.begin());
}

void TimelineRecorder::State::close_server_pause(std::size_t row, Time t) {
  auto& open = open_server_pause[row];
  if (!open) return;
  tl.server_pauses[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::on_server_crash(std::size_t row, const sim::Event& e) {
  close_server_pause(row, e.time);
  if (open_server_down[row]) return;
  open_server_down[row] = tl.server_downs.size();
  tl.server_downs.push_back(DownSpan{e.node, e.time, e.time, e.a != 0, false});
}

void TimelineRecorder::State::on_server_restart(std::size_t row, Time t) {
  auto& open = open_server_down[row];
  if (!open) return;
  tl.server_downs[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::on_server_pause(std::size_t row, const sim::Event& e) {
  if (open_server_pause[row]) return;  // an extension keeps its span
  open_server_pause[row] = tl.server_pauses.size();
  tl.server_pauses.push_back(PauseSpan{e.node, e.time, e.time, false});
}

// ---- A replicated store's members: the same spans as a node's, by member index

void TimelineRecorder::State::close_member_role(std::size_t m, Time t) {
  auto& open = open_member_role[m];
  if (!open) return;
  tl.member_roles[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::close_member_pause(std::size_t m, Time t) {
  auto& open = open_member_pause[m];
  if (!open) return;
  tl.member_pauses[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::on_server_role(const sim::Event& e) {
  const std::int32_t member = tl.header.topology.store_member_index(e.node);
  if (member < 0) return;
  replicated = true;  // a stream without the header's count still shows its members
  const auto m = static_cast<std::size_t>(member);
  tl.store_members = std::max(tl.store_members, m + 1);
  close_member_role(m, e.time);
  BeliefSpan span;
  span.node = e.node;
  span.role = e.code <= 2 ? static_cast<sim::Role>(e.code) : sim::Role::follower;
  span.epoch = e.a;
  const auto known = static_cast<sim::Endpoint>(e.b);
  span.known_leader = span.role == sim::Role::follower && e.b != sim::kNoNode &&
                              tl.header.topology.store_member_index(known) >= 0
                          ? known
                          : sim::kNoNode;
  span.start = e.time;
  span.end = e.time;
  open_member_role[m] = tl.member_roles.size();
  tl.member_roles.push_back(span);
  if (span.role != sim::Role::leader) return;
  // A new leader, or the same member leading in a new term: the store's leader changed.
  const std::vector<StoreLeaderMark>& marks = tl.store_leaders;
  if (!marks.empty() && marks.back().member == e.node && marks.back().term == e.a) return;
  const sim::Endpoint previous = marks.empty() ? sim::kNoNode : marks.back().member;
  tl.store_leaders.push_back(StoreLeaderMark{e.time, e.node, e.a, previous});
}

void TimelineRecorder::State::on_member_crash(std::size_t m, const sim::Event& e) {
  close_member_role(m, e.time);
  close_member_pause(m, e.time);
  if (open_member_down[m]) return;
  open_member_down[m] = tl.member_downs.size();
  tl.member_downs.push_back(DownSpan{e.node, e.time, e.time, e.a != 0, false});
}

void TimelineRecorder::State::on_member_restart(std::size_t m, Time t) {
  auto& open = open_member_down[m];
  if (!open) return;
  tl.member_downs[*open].end = t;
  open.reset();
}

void TimelineRecorder::State::on_member_pause(std::size_t m, Time t) {
  if (open_member_pause[m]) return;  // an extension keeps its span
  open_member_pause[m] = tl.member_pauses.size();
  tl.member_pauses.push_back(PauseSpan{sim::store_member_endpoint(m), t, t, false});
}

// ---- Clocks

void TimelineRecorder::State::on_clock_change(const sim::Event& e) {
  std::size_t track = 0;
  if (e.node == sim::kStoreEndpoint) {
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
