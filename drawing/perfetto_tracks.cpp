// The Perfetto writer's per-process tracks (drawing/perfetto_state.hpp): a node's beliefs,
// downtime and pauses, a replicated store member's Raft roles, and the clock changes and lease
// refreshes drawn on them, and the tracks of servers with a lane of their own.
#include "drawing/perfetto_state.hpp"

namespace electsim::drawing {

// ---- Beliefs, downtime and pauses on a node's track.

void PerfettoWriter::State::role_boundary(NodeTrack& t, Time at) {
  if (t.paused && at > t.pause_start && !t.pause_boundary) t.pause_boundary = at;
}

void PerfettoWriter::State::close_role(NodeId n, Time at) {
  NodeTrack& t = nodes[static_cast<std::size_t>(n)];
  if (!t.role_open) return;
  role_boundary(t, at);
  name_scratch.clear();
  args_scratch.clear();
  switch (t.role) {
    case sim::Role::leader:
      fmt::format_to(Out(name_scratch), "leader e{}", t.epoch);
      break;
    case sim::Role::candidate:
      fmt::format_to(Out(name_scratch), "candidate e{}", t.epoch);
      break;
    case sim::Role::follower:
      name_scratch += "follower";
      if (t.known_leader != sim::kNoNode) {
        name_scratch += " of ";
        append_endpoint(name_scratch, t.known_leader);
      }
      break;
  }
  fmt::format_to(Out(args_scratch),
                 "\"role\":\"{}\",\"epoch\":{},\"leader\":", sim::role_name(t.role), t.epoch);
  append_endpoint_json(args_scratch, t.role == sim::Role::leader ? n : t.known_leader);
  complete(buffer, node_tid(n), "belief", name_scratch, t.role_start, at, args_scratch);
  buffer += t.pending;
  t.pending.clear();
  t.role_open = false;
}

void PerfettoWriter::State::on_belief(const sim::Event& e) {
  if (!is_node(e.node) || e.code > static_cast<std::uint16_t>(sim::Role::leader)) return;
  NodeTrack& t = nodes[static_cast<std::size_t>(e.node)];
  const auto role = static_cast<sim::Role>(e.code);
  const NodeId known = role == sim::Role::follower ? static_cast<NodeId>(e.b) : sim::kNoNode;
  // As analysis/analyzer.cpp: a leader announcing its own epoch again keeps its interval.
  if (t.role_open && t.role == role && t.epoch == e.a && t.known_leader == known) return;
  end_down(e.node, e.time);  // only a stream without its restart: keeps the track nested
  close_role(e.node, e.time);
  role_boundary(t, e.time);
  t.role_open = true;
  t.role = role;
  t.epoch = e.a;
  t.known_leader = known;
  t.role_start = e.time;
  if (role == sim::Role::leader && (!newest_epoch || e.a > *newest_epoch)) newest_epoch = e.a;
}

void PerfettoWriter::State::end_pause(NodeId n, Time at) {
  NodeTrack& t = nodes[static_cast<std::size_t>(n)];
  if (!t.paused) return;
  t.paused = false;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"planned_ns\":{},\"extended\":{}", t.pause_planned_ns,
                 t.pause_extended);
  if (!t.pause_boundary) {
    // Inside the open belief slice (if any), which is written when it ends.
    complete(t.role_open ? t.pending : buffer, node_tid(n), "pause", "GC pause", t.pause_start, at,
             args_scratch);
  } else if (*t.pause_boundary == at) {
    // The enclosing slice ended exactly with the pause and is already written.
    complete(buffer, node_tid(n), "pause", "GC pause", t.pause_start, at, args_scratch);
  } else {
    // A belief changed during the pause: the pause would overlap it partly.
    ensure_pauses_track(n);
    complete(buffer, pauses_tid(n), "pause", "GC pause", t.pause_start, at, args_scratch);
  }
}

void PerfettoWriter::State::on_pause(const sim::Event& e) {
  if (!is_node(e.node)) return;
  NodeTrack& t = nodes[static_cast<std::size_t>(e.node)];
  if (t.down) return;
  if (t.paused) {
    t.pause_extended = true;  // a longer pause on top of one still running
    return;
  }
  t.paused = true;
  t.pause_extended = false;
  t.pause_start = e.time;
  t.pause_planned_ns = e.a;
  t.pause_boundary.reset();
}

void PerfettoWriter::State::on_crash(const sim::Event& e) {
  if (!is_node(e.node)) return;
  NodeTrack& t = nodes[static_cast<std::size_t>(e.node)];
  const bool was_paused = t.paused;
  end_pause(e.node, e.time);
  close_role(e.node, e.time);
  if (was_paused) forget_sends_to(e.node);
  if (t.down) return;
  t.down = true;
  t.graceful = e.a != 0;
  t.down_start = e.time;
}

void PerfettoWriter::State::end_down(NodeId n, Time at) {
  NodeTrack& t = nodes[static_cast<std::size_t>(n)];
  if (!t.down) return;
  t.down = false;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
  complete(buffer, node_tid(n), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
           args_scratch);
}

void PerfettoWriter::State::on_clock_change(const sim::Event& e) {
  const bool store = e.node == sim::kStoreEndpoint;
  const std::optional<std::size_t> member = member_at(e.node);
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

// ---- A replicated store's members: Raft roles, downtime and pauses, as a node's beliefs.

void PerfettoWriter::State::close_member_role(std::size_t m, Time at) {
  NodeTrack& t = members[m];
  if (!t.role_open) return;
  role_boundary(t, at);
  name_scratch.clear();
  args_scratch.clear();
  fmt::format_to(Out(name_scratch), "{} t{}", sim::role_name(t.role), t.epoch);
  if (t.role == sim::Role::follower && t.known_leader != sim::kNoNode) {
    name_scratch += " of ";
    append_endpoint(name_scratch, t.known_leader);
  }
  fmt::format_to(Out(args_scratch),
                 "\"role\":\"{}\",\"term\":{},\"leader\":", sim::role_name(t.role), t.epoch);
  const sim::Endpoint leader =
      t.role == sim::Role::leader ? header.topology.store_member(m) : t.known_leader;
  append_endpoint_json(args_scratch, leader);
  complete(buffer, member_tid(m), "store", name_scratch, t.role_start, at, args_scratch);
  buffer += t.pending;
  t.pending.clear();
  t.role_open = false;
}

void PerfettoWriter::State::on_server_role(const sim::Event& e) {
  if (e.node >= 0 || member_index(e.node) < 0 ||
      e.code > static_cast<std::uint16_t>(sim::Role::leader)) {
    return;
  }
  replicated = true;  // a stream whose header did not say so still shows its members
  const auto m = static_cast<std::size_t>(member_index(e.node));
  ensure_member_track(m);
  NodeTrack& t = members[m];
  const auto role = static_cast<sim::Role>(e.code);
  const auto known = static_cast<sim::Endpoint>(e.b);
  const sim::Endpoint leader =
      role == sim::Role::follower && e.b != sim::kNoNode && member_index(known) >= 0 ? known
                                                                                     : sim::kNoNode;
  if (t.role_open && t.role == role && t.epoch == e.a && t.known_leader == leader) return;
  end_member_down(m, e.time);
  close_member_role(m, e.time);
  role_boundary(t, e.time);
  t.role_open = true;
  t.role = role;
  t.epoch = e.a;
  t.known_leader = leader;
  t.role_start = e.time;
}

void PerfettoWriter::State::end_member_pause(std::size_t m, Time at) {
  NodeTrack& t = members[m];
  if (!t.paused) return;
  t.paused = false;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"planned_ns\":{},\"extended\":{}", t.pause_planned_ns,
                 t.pause_extended);
  if (!t.pause_boundary) {
    complete(t.role_open ? t.pending : buffer, member_tid(m), "pause", "paused", t.pause_start, at,
             args_scratch);
  } else if (*t.pause_boundary == at) {
    complete(buffer, member_tid(m), "pause", "paused", t.pause_start, at, args_scratch);
  } else {
    ensure_member_pauses_track(m);
    complete(buffer, member_pauses_tid(m), "pause", "paused", t.pause_start, at, args_scratch);
  }
}

void PerfettoWriter::State::on_member_pause(std::size_t m, Time at, std::int64_t planned_ns) {
  ensure_member_track(m);
  NodeTrack& t = members[m];
  if (t.down) return;
  if (t.paused) {
    t.pause_extended = true;
    return;
  }
  t.paused = true;
  t.pause_extended = false;
  t.pause_start = at;
  t.pause_planned_ns = planned_ns;
  t.pause_boundary.reset();
}

void PerfettoWriter::State::on_member_crash(std::size_t m, const sim::Event& e) {
  ensure_member_track(m);
  NodeTrack& t = members[m];
  end_member_pause(m, e.time);
  close_member_role(m, e.time);
  if (t.down) return;
  t.down = true;
  t.graceful = e.a != 0;
  t.down_start = e.time;
}

void PerfettoWriter::State::end_member_down(std::size_t m, Time at) {
  NodeTrack& t = members[m];
  if (!t.down) return;
  t.down = false;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
  complete(buffer, member_tid(m), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
           args_scratch);
}

void PerfettoWriter::State::on_lease_refresh(const sim::Event& e) {
  const std::optional<std::size_t> m = member_at(e.node);
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

std::optional<std::size_t> PerfettoWriter::State::server_row(sim::Endpoint e) const {
  if (e >= 0) return std::nullopt;
  const auto it = std::find(server_rows.begin(), server_rows.end(), e);
  if (it == server_rows.end()) return std::nullopt;
  return static_cast<std::size_t>(it - server_rows.begin());
}

void PerfettoWriter::State::ensure_server_track(std::size_t row) {
  if (!servers_process) {
    servers_process = true;
    buffer += ",\n{\"ph\":\"M\",\"name\":\"process_name\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"name\":\"servers\"}}}}", kServersPid);
    buffer += ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", kServersPid,
                   kServersPid);
  }
  ServerTrack& t = server_tracks[row];
  if (t.named) return;
  t.named = true;
  thread_metadata(server_tid(row), header.topology.name_of(server_rows[row]), kServersPid,
                  static_cast<int>(row));
}

void PerfettoWriter::State::end_server_pause(std::size_t row, Time at) {
  ServerTrack& t = server_tracks[row];
  if (!t.paused) return;
  t.paused = false;
  args_scratch.clear();
  complete(buffer, server_tid(row), "pause", "paused", t.pause_start, at, args_scratch);
}

void PerfettoWriter::State::end_server_down(std::size_t row, Time at) {
  ServerTrack& t = server_tracks[row];
  if (!t.down) return;
  t.down = false;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
  complete(buffer, server_tid(row), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
           args_scratch);
}

void PerfettoWriter::State::on_server_crash(std::size_t row, const sim::Event& e) {
  ensure_server_track(row);
  end_server_pause(row, e.time);
  ServerTrack& t = server_tracks[row];
  if (t.down) return;
  t.down = true;
  t.graceful = e.a != 0;
  t.down_start = e.time;
}

void PerfettoWriter::State::on_server_pause(std::size_t row, Time at) {
  ensure_server_track(row);
  ServerTrack& t = server_tracks[row];
  if (t.down || t.paused) return;  // an extension keeps its slice
  t.paused = true;
  t.pause_start = at;
}

std::optional<std::size_t> PerfettoWriter::State::member_at(sim::Endpoint e) const {
  if (!replicated || e >= 0) return std::nullopt;
  const std::int32_t m = member_index(e);
  if (m < 0) return std::nullopt;
  return static_cast<std::size_t>(m);
}

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
