// The Perfetto writer's per-process tracks (drawing/perfetto_state.hpp): the span model's roles,
// downtime and pauses (drawing/spans.hpp) as slices on a node's, a replicated store member's or
// a server's track, and the clock changes, lease refreshes and store failovers drawn on them.
#include "drawing/perfetto_state.hpp"

namespace electsim::drawing {

// ---- Roles, downtime and pauses: the span model's spans, each a slice when it closes.

int PerfettoWriter::State::track_of(const SpanOwner& owner) const {
  switch (owner.lane) {
    case SpanLane::member:
      return member_tid(owner.index);
    case SpanLane::server:
      return server_tid(owner.index);
    case SpanLane::node:
    case SpanLane::store:
      break;
  }
  return node_tid(static_cast<NodeId>(owner.index));
}

void PerfettoWriter::State::on_span_event(const sim::Event& e) {
  // The tracks a span may be written on are named first, in the order the file has them.
  bool was_paused = false;
  if (e.kind == sim::EventKind::server_role) {
    const std::optional<std::size_t> m = spans.member_index(e.node);
    if (m && e.code <= static_cast<std::uint16_t>(sim::Role::leader)) ensure_member_track(*m);
  } else if (e.kind == sim::EventKind::crash || e.kind == sim::EventKind::pause) {
    if (const auto m = spans.member_at(e.node)) ensure_member_track(*m);
    was_paused = e.kind == sim::EventKind::crash && is_node(e.node) &&
                 spans.node(static_cast<std::size_t>(e.node)).pause.has_value();
  } else if (e.kind == sim::EventKind::store_pause && spans.replicated()) {
    ensure_member_track(0);
  }
  spans.on_event(e, *this);
  // Messages parked at a paused node vanish when it crashes, without an event of their own.
  if (was_paused) forget_sends_to(e.node);
}

void PerfettoWriter::State::role_opened(const SpanOwner&, OpenRole&) {}

void PerfettoWriter::State::role_closed(const SpanOwner& owner, const OpenRole& span, Time end) {
  name_scratch.clear();
  args_scratch.clear();
  NodeTrack* track = nullptr;
  if (owner.lane == SpanLane::member) {
    // A store member's Raft role: "follower t3 of store:1"; a leader is its own leader.
    fmt::format_to(Out(name_scratch), "{} t{}", sim::role_name(span.role), span.epoch);
    if (span.role == sim::Role::follower && span.known_leader != sim::kNoNode) {
      name_scratch += " of ";
      append_endpoint(name_scratch, span.known_leader);
    }
    fmt::format_to(Out(args_scratch),
                   "\"role\":\"{}\",\"term\":{},\"leader\":", sim::role_name(span.role),
                   span.epoch);
    append_endpoint_json(args_scratch,
                         span.role == sim::Role::leader ? owner.endpoint : span.known_leader);
    complete(buffer, track_of(owner), "store", name_scratch, span.start, end, args_scratch);
    track = &members[owner.index];
  } else {
    switch (span.role) {
      case sim::Role::leader:
        fmt::format_to(Out(name_scratch), "leader e{}", span.epoch);
        break;
      case sim::Role::candidate:
        fmt::format_to(Out(name_scratch), "candidate e{}", span.epoch);
        break;
      case sim::Role::follower:
        name_scratch += "follower";
        if (span.known_leader != sim::kNoNode) {
          name_scratch += " of ";
          append_endpoint(name_scratch, span.known_leader);
        }
        break;
    }
    fmt::format_to(Out(args_scratch),
                   "\"role\":\"{}\",\"epoch\":{},\"leader\":", sim::role_name(span.role),
                   span.epoch);
    append_endpoint_json(args_scratch,
                         span.role == sim::Role::leader ? owner.endpoint : span.known_leader);
    complete(buffer, track_of(owner), "belief", name_scratch, span.start, end, args_scratch);
    track = &nodes[owner.index];
  }
  buffer += track->pending;
  track->pending.clear();
}

void PerfettoWriter::State::down_opened(const SpanOwner&, OpenDown&) {}

void PerfettoWriter::State::down_closed(const SpanOwner& owner, const OpenDown& span, Time end) {
  if (owner.lane == SpanLane::store) return;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"graceful\":{}", span.graceful);
  complete(buffer, track_of(owner), "down", span.graceful ? "stopped" : "crashed", span.start, end,
           args_scratch);
}

void PerfettoWriter::State::pause_opened(const SpanOwner&, OpenPause&) {}

void PerfettoWriter::State::pause_closed(const SpanOwner& owner, const OpenPause& span, Time end) {
  args_scratch.clear();
  switch (owner.lane) {
    case SpanLane::store:
      return;  // a fault window on the faults track (store_pause)
    case SpanLane::server:
      complete(buffer, track_of(owner), "pause", "paused", span.start, end, args_scratch);
      return;
    case SpanLane::node:
    case SpanLane::member:
      break;
  }
  const bool member = owner.lane == SpanLane::member;
  NodeTrack& track = member ? members[owner.index] : nodes[owner.index];
  const char* name = member ? "paused" : "GC pause";
  fmt::format_to(Out(args_scratch), "\"planned_ns\":{},\"extended\":{}", span.planned_ns,
                 span.extended);
  if (!span.boundary) {
    // Inside the open role slice (if any), which is written when it ends.
    const bool role_open = member ? spans.member(owner.index).role.has_value()
                                  : spans.node(owner.index).role.has_value();
    complete(role_open ? track.pending : buffer, track_of(owner), "pause", name, span.start, end,
             args_scratch);
  } else if (*span.boundary == end) {
    // The enclosing slice ended exactly with the pause and is already written.
    complete(buffer, track_of(owner), "pause", name, span.start, end, args_scratch);
  } else if (member) {
    // A role changed during the pause: the pause would overlap it partly.
    ensure_member_pauses_track(owner.index);
    complete(buffer, member_pauses_tid(owner.index), "pause", name, span.start, end, args_scratch);
  } else {
    const auto n = static_cast<NodeId>(owner.index);
    ensure_pauses_track(n);
    complete(buffer, pauses_tid(n), "pause", name, span.start, end, args_scratch);
  }
}

void PerfettoWriter::State::on_clock_change(const sim::Event& e) {
  const bool store = e.node != sim::kNoNode && e.node == spans.store_endpoint();
  const std::optional<std::size_t> member = spans.member_at(e.node);
  if (!store && !member && !is_node(e.node)) return;
  const char* what = e.code == 0 ? "drift" : e.code == 1 ? "step" : "offset";
  name_scratch.clear();
  fmt::format_to(Out(name_scratch), "clock {}", what);
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"what\":\"{}\",\"drift_ppb\":{},\"amount_ns\":{}", what, e.a,
                 e.b);
  int tid = 0;
  if (member) {
    ensure_member_track(*member);
    tid = member_tid(*member);
  } else {
    tid = store ? store_tid() : node_tid(e.node);
  }
  instant(buffer, tid, "clock", name_scratch, e.time, args_scratch);
}

void PerfettoWriter::State::on_lease_refresh(const sim::Event& e) {
  const std::optional<std::size_t> m = spans.member_at(e.node);
  if (!m) return;
  ensure_member_track(*m);
  name_scratch.clear();
  fmt::format_to(Out(name_scratch), "refreshed {} lease{} (term {})", e.a, e.a == 1 ? "" : "s",
                 e.b);
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"leases\":{},\"term\":{}", e.a, e.b);
  instant(buffer, member_tid(*m), "store", name_scratch, e.time, args_scratch);
}

void PerfettoWriter::State::on_client_failover(const sim::Event& e) {
  if (!is_node(e.node)) return;
  const char* reason = e.code <= static_cast<std::uint16_t>(sim::FailoverReason::disconnect)
                           ? sim::failover_reason_name(static_cast<sim::FailoverReason>(e.code))
                           : "unknown";
  // After a no_leader answer the client retries on another member without moving to it.
  const bool retry = e.code == static_cast<std::uint16_t>(sim::FailoverReason::no_leader);
  name_scratch.clear();
  name_scratch += retry ? "store retry on " : "store failover → ";
  args_scratch.clear();
  args_scratch += "\"member\":";
  append_endpoint(name_scratch, e.peer);
  append_endpoint_json(args_scratch, e.peer);
  fmt::format_to(Out(name_scratch), " ({})", reason);
  fmt::format_to(Out(args_scratch), ",\"reason\":\"{}\",\"request\":{}", reason, e.a);
  instant(buffer, node_tid(e.node), "store", name_scratch, e.time, args_scratch);
}

// ---- Servers with a lane of their own: when each was down or paused, on one track each.

void PerfettoWriter::State::ensure_server_track(std::size_t row) {
  if (!servers_process) {
    servers_process = true;
    buffer += ",\n{\"ph\":\"M\",\"name\":\"process_name\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"name\":\"servers\"}}}}", kServersPid);
    buffer += ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", kServersPid,
                   kServersPid);
  }
  if (server_named[row]) return;
  server_named[row] = true;
  thread_metadata(server_tid(row), header.topology.name_of(spans.server_rows()[row]), kServersPid,
                  static_cast<int>(row));
}

// ---- Names

std::string PerfettoWriter::State::member_name(std::size_t m) const {
  const sim::NamedEndpoint* server = header.topology.store_members() > 1
                                         ? header.topology.server(header.topology.store_member(m))
                                         : nullptr;
  return server != nullptr ? server->name : fmt::format("store:{}", m);
}

void PerfettoWriter::State::append_endpoint(std::string& out, sim::Endpoint endpoint) const {
  if (endpoint == sim::kNoNode) {
    out += "none";
  } else if (const sim::NamedEndpoint* server = header.topology.server(endpoint)) {
    out += server->name;
  } else {
    fmt::format_to(Out(out), "{}", endpoint);
  }
}

void PerfettoWriter::State::append_endpoint_json(std::string& out, sim::Endpoint endpoint) const {
  if (endpoint >= 0) {
    fmt::format_to(Out(out), "{}", endpoint);
  } else if (endpoint == sim::kNoNode) {
    out += "null";
  } else {
    out += '"';
    append_endpoint(out, endpoint);
    out += '"';
  }
}

}  // namespace electsim::drawing
