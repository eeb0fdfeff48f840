// The Perfetto writer's traffic and world (drawing/perfetto_state.hpp): message bursts and the
// arrows from each send to its delivery, fault instants and windows, the store's leader key,
// lease expiries and request rate, and the sink's writes.
#include "drawing/perfetto_state.hpp"

namespace electsim::drawing {

// ---- Messages: bursts on the messages tracks, arrows from each send to its delivery.

void PerfettoWriter::State::remember_send(const sim::Event& e, std::uint64_t flow_id) {
  const auto msg = static_cast<std::uint64_t>(e.b);
  if (msg != 0) {
    // Ids grow with every send, so the sends in flight are a window of ids: a deque indexed
    // from the oldest, with no allocation per message once it has grown.
    if (pending.empty() || msg < pending_base || msg - pending_base >= 2 * kUnmatchedMax) {
      pending.clear();
      pending_base = msg;
    }
    while (pending_base + pending.size() < msg) pending.emplace_back();
    if (pending_base + pending.size() == msg) pending.emplace_back();
    pending[msg - pending_base] = {flow_id, e.time, e.peer};
    while (pending.size() > kUnmatchedMax) {
      pending.pop_front();
      ++pending_base;
    }
    return;
  }
  std::deque<PendingSend>& queue = in_flight[LinkKey{e.node, e.peer, e.code}];
  if (queue.size() >= kUnmatchedPerLinkMax) queue.pop_front();
  queue.push_back({flow_id, e.time, e.peer});
}

std::optional<std::uint64_t> PerfettoWriter::State::take_send(const sim::Event& e, NodeId from,
                                                              NodeId to) {
  const auto msg = static_cast<std::uint64_t>(e.b);
  if (msg != 0) {
    // None for a duplicate's second copy, or a send given up.
    PendingSend* send = pending_send(msg);
    if (send == nullptr) return std::nullopt;
    return take_pending(*send);
  }
  const auto it = in_flight.find(LinkKey{from, to, e.code});
  if (it == in_flight.end() || it->second.empty()) return std::nullopt;
  const std::uint64_t id = it->second.front().flow;
  it->second.pop_front();
  return id;
}

std::optional<std::uint64_t> PerfettoWriter::State::take_unsent(const sim::Event& e) {
  const auto msg = static_cast<std::uint64_t>(e.b);
  if (msg != 0) {
    PendingSend* send = pending_send(msg);
    if (send == nullptr || send->at != e.time) return std::nullopt;
    return take_pending(*send);
  }
  const auto it = in_flight.find(LinkKey{e.node, e.peer, e.code});
  if (it == in_flight.end() || it->second.empty() || it->second.back().at != e.time) {
    return std::nullopt;
  }
  const std::uint64_t id = it->second.back().flow;
  it->second.pop_back();
  return id;
}

void PerfettoWriter::State::forget_sends_to(NodeId n) {
  for (auto& [key, queue] : in_flight) {
    if (std::get<1>(key) == n) queue.clear();
  }
  for (PendingSend& send : pending) {
    if (send.to == n) send.flow = 0;
  }
  trim_pending();
}

PerfettoWriter::State::PendingSend* PerfettoWriter::State::pending_send(std::uint64_t msg) {
  if (msg < pending_base || msg - pending_base >= pending.size()) return nullptr;
  PendingSend& send = pending[msg - pending_base];
  return send.flow != 0 ? &send : nullptr;
}

std::uint64_t PerfettoWriter::State::take_pending(PendingSend& send) {
  const std::uint64_t id = send.flow;
  send.flow = 0;
  trim_pending();
  return id;
}

void PerfettoWriter::State::trim_pending() {
  while (!pending.empty() && pending.front().flow == 0) {
    pending.pop_front();
    ++pending_base;
  }
}

void PerfettoWriter::State::flush_burst(NodeId n) {
  Burst& b = nodes[static_cast<std::size_t>(n)].burst;
  if (!b.open) return;
  b.open = false;
  ensure_messages_track(n);
  name_scratch.clear();
  name_scratch += b.send ? "send " : "recv ";
  if (b.mixed) {
    fmt::format_to(Out(name_scratch), "{} messages", b.count);
  } else {
    append_type_name(name_scratch, b.type);
  }
  name_scratch += b.send ? " → " : " ← ";
  if (b.count > kBurstPeersShown) {
    fmt::format_to(Out(name_scratch), "{} peers", b.count);
  } else {
    name_scratch += b.peers;
  }
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"count\":{},\"type\":", b.count);
  if (b.mixed) {
    args_scratch += "\"mixed\"";
  } else {
    append_type_json(args_scratch, b.type);
  }
  args_scratch += b.send ? ",\"to\":\"" : ",\"from\":\"";
  args_scratch += b.peers;
  if (b.count > b.peers_shown) args_scratch += ",...";
  args_scratch += '"';
  complete(buffer, messages_tid(n), "message", name_scratch, b.at, b.at + Duration(kMessageSliceNs),
           args_scratch);
  // Right after their slice, so that they bind to it even when other slices share the instant.
  for (const auto& [id, type] : b.flows)
    flow(buffer, b.send ? 's' : 'f', messages_tid(n), type, id, b.at);
}

void PerfettoWriter::State::flush_bursts() {
  for (const NodeId n : open_bursts) flush_burst(n);
  open_bursts.clear();
}

void PerfettoWriter::State::add_to_burst(NodeId n, bool send, Time at, std::uint16_t type,
                                         NodeId peer, std::optional<std::uint64_t> flow_id) {
  Burst& b = nodes[static_cast<std::size_t>(n)].burst;
  if (b.open && (b.send != send || b.at != at)) flush_burst(n);
  if (!b.open) {
    b.open = true;
    b.send = send;
    b.at = at;
    b.type = type;
    b.mixed = false;
    b.count = 0;
    b.peers_shown = 0;
    b.peers.clear();
    b.flows.clear();
    open_bursts.push_back(n);
  }
  if (type != b.type) b.mixed = true;
  ++b.count;
  if (b.peers_shown < kBurstPeersShown) {
    if (b.peers_shown > 0) b.peers += ',';
    append_endpoint(b.peers, peer);
    ++b.peers_shown;
  }
  if (flow_id) b.flows.emplace_back(*flow_id, type);
}

void PerfettoWriter::State::on_send(const sim::Event& e) {
  if (!is_node(e.node)) return;
  const std::uint64_t id = next_flow++;
  remember_send(e, id);
  add_to_burst(e.node, true, e.time, e.code, e.peer, id);
}

void PerfettoWriter::State::on_deliver(const sim::Event& e) {
  if (!is_node(e.node)) return;  // node: the receiver, peer: the sender
  add_to_burst(e.node, false, e.time, e.code, e.peer, take_send(e, e.peer, e.node));
}

void PerfettoWriter::State::on_drop(const sim::Event& e) {
  // node: the sender, peer: the receiver.
  name_scratch.clear();
  name_scratch += "drop ";
  append_type_name(name_scratch, e.code);
  args_scratch.clear();
  args_scratch += "\"type\":";
  append_type_json(args_scratch, e.code);
  fmt::format_to(Out(args_scratch), ",\"reason\":\"{}\",\"from\":", drop_name(e.a));
  append_endpoint_json(args_scratch, e.node);
  args_scratch += ",\"to\":";
  append_endpoint_json(args_scratch, e.peer);
  if (dropped_at_send(e.a)) {
    // The send just before, on the same link at the same instant, never left: no arrow.
    if (!is_node(e.node)) return;
    if (const std::optional<std::uint64_t> unsent = take_unsent(e)) {
      const std::uint64_t id = *unsent;
      auto& flows = nodes[static_cast<std::size_t>(e.node)].burst.flows;
      const auto f =
          std::find_if(flows.rbegin(), flows.rend(), [id](const auto& p) { return p.first == id; });
      if (f != flows.rend()) flows.erase(std::next(f).base());
    }
    name_scratch += " → ";
    append_endpoint(name_scratch, e.peer);
    fmt::format_to(Out(name_scratch), " ({})", drop_name(e.a));
    ensure_messages_track(e.node);
    instant(buffer, messages_tid(e.node), "message", name_scratch, e.time, args_scratch);
    return;
  }
  // Dropped on arrival: the arrow from the send ends at the drop on the receiver's track.
  const std::optional<std::uint64_t> id = take_send(e, e.node, e.peer);
  const NodeId where = is_node(e.peer) ? e.peer : e.node;
  if (!is_node(where)) return;
  name_scratch += " ← ";
  append_endpoint(name_scratch, e.node);
  fmt::format_to(Out(name_scratch), " ({})", drop_name(e.a));
  ensure_messages_track(where);
  instant(buffer, messages_tid(where), "message", name_scratch, e.time, args_scratch);
  if (id && where == e.peer) flow(buffer, 'f', messages_tid(where), e.code, *id, e.time);
}

// ---- Faults: an instant each, and a slice for the windows that last.

std::size_t PerfettoWriter::State::free_lane(Time start) {
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (!lanes[i].open && lanes[i].busy_until <= start) return i;
  }
  lanes.emplace_back();
  thread_metadata(lane_tid(lanes.size() - 1), fmt::format("faults {}", lanes.size()));
  return lanes.size() - 1;
}

void PerfettoWriter::State::open_window(std::int64_t fault_index, Time start, std::string_view name,
                                        std::string_view args) {
  Lane& lane = lanes[free_lane(start)];
  lane.open = true;
  lane.fault_index = fault_index;
  lane.start = start;
  lane.name.assign(name);
  lane.args.assign(args);
}

void PerfettoWriter::State::close_lane(std::size_t i, Time at) {
  Lane& lane = lanes[i];
  if (!lane.open) return;
  lane.open = false;
  lane.busy_until = at;
  complete(buffer, lane_tid(i), "fault", lane.name, lane.start, at, lane.args);
}

void PerfettoWriter::State::close_window(std::int64_t fault_index, Time at) {
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].open && lanes[i].fault_index == fault_index) close_lane(i, at);
  }
}

void PerfettoWriter::State::on_fault(const sim::Event& e) {
  const auto kind = static_cast<sim::FaultKind>(e.code);
  const bool skipped = e.c != 0;
  // The window's name: the kind and what it hits.
  window_scratch.clear();
  window_scratch += fault_name(e.code);
  if (kind == sim::FaultKind::cut) {
    window_scratch += ' ';
    append_endpoint(window_scratch, e.node);
    window_scratch += " → ";
    append_endpoint(window_scratch, e.peer);
  } else if (kind == sim::FaultKind::partition && !e.text.empty()) {
    window_scratch += ' ';
    window_scratch += e.text;
  } else if (e.node >= 0) {
    fmt::format_to(Out(window_scratch), " node {}", e.node);
  } else if (e.node != sim::kNoNode) {
    window_scratch += ' ';
    append_endpoint(window_scratch, e.node);
  }
  name_scratch.assign(window_scratch);
  if (e.b > 0) name_scratch += " for " + sim::format_duration(Duration(e.b));
  if (skipped) name_scratch += " (skipped: no target)";
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"kind\":\"{}\",\"target\":", fault_name(e.code));
  append_endpoint_json(args_scratch, e.node);
  if (kind == sim::FaultKind::cut) {
    args_scratch += ",\"peer\":";
    append_endpoint_json(args_scratch, e.peer);
  }
  fmt::format_to(Out(args_scratch), ",\"duration_ns\":{},\"index\":{},\"skipped\":{}", e.b, e.a,
                 skipped);
  if (!e.text.empty()) {
    args_scratch += ",\"groups\":";
    append_json_string(args_scratch, e.text);
  }
  instant(buffer, lane_tid(0), "fault", name_scratch, e.time, args_scratch);
  if (skipped) return;
  if (e.code < sim::kFaultKindCount && is_network_window(e.code)) {
    // Until its own end, or a heal.
    open_window(e.a, e.time, window_scratch, args_scratch);
  } else if (e.code < sim::kFaultKindCount && is_fixed_window(e.code) && e.b > 0) {
    Time end = e.time + Duration(e.b);
    if (header.duration.count() > 0) end = std::min(end, Time(header.duration));
    end = std::max(end, e.time);
    const std::size_t lane = free_lane(e.time);
    lanes[lane].busy_until = end;
    complete(buffer, lane_tid(lane), "fault", window_scratch, e.time, end, args_scratch);
  } else if (kind == sim::FaultKind::heal) {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      if (lanes[i].open && lanes[i].fault_index >= 0) close_lane(i, e.time);
    }
  }
}

void PerfettoWriter::State::on_network_change(const sim::Event& e) {
  if (e.code == static_cast<std::uint16_t>(sim::FaultKind::heal)) close_window(e.a, e.time);
}

// ---- The store: who holds the leader key, lease expiries, request rate.

void PerfettoWriter::State::close_holder(Time at, std::string_view ended_by) {
  if (!holder_open) return;
  holder_open = false;
  name_scratch.clear();
  name_scratch += "held by ";
  if (holder >= 0) {
    fmt::format_to(Out(name_scratch), "node {}", holder);
  } else {
    name_scratch += "?";  // the key's value is not a node id
  }
  if (holder_lease != sim::kNoLease) fmt::format_to(Out(name_scratch), " (lease {})", holder_lease);
  args_scratch.clear();
  args_scratch += "\"key\":";
  append_json_string(args_scratch, *header.leader_key);
  args_scratch += ",\"owner\":";
  append_endpoint_json(args_scratch, holder);
  fmt::format_to(Out(args_scratch), ",\"lease\":{},\"revision\":{},\"ended_by\":\"{}\"",
                 holder_lease, holder_revision, ended_by);
  complete(buffer, store_tid(), "store", name_scratch, holder_start, at, args_scratch);
}

void PerfettoWriter::State::on_store_change(const sim::Event& e) {
  if (!header.leader_key || e.text != *header.leader_key) return;
  const bool expired = e.c != 0;
  if (e.code == 0) {                                                     // put
    if (holder_open && holder == e.node && holder_lease == e.b) return;  // the same holder
    close_holder(e.time, "put");
    holder_open = true;
    holder = e.node;
    holder_lease = e.b;
    holder_revision = e.a;
    holder_start = e.time;
  } else {
    close_holder(e.time, expired ? "lease expiry" : "delete");
  }
}

void PerfettoWriter::State::on_lease_expire(const sim::Event& e) {
  name_scratch.clear();
  fmt::format_to(Out(name_scratch), "lease {} expired", e.a);
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"lease\":{}", e.a);
  instant(buffer, store_tid(), "store", name_scratch, e.time, args_scratch);
}

void PerfettoWriter::State::counter(Time at, std::uint64_t value) {
  fmt::format_to(Out(buffer),
                 ",\n{{\"ph\":\"C\",\"cat\":\"store\",\"name\":\"store requests\",\"pid\":{},"
                 "\"tid\":{},\"ts\":",
                 kPid, store_tid());
  append_us(buffer, at.ns);
  fmt::format_to(Out(buffer), ",\"args\":{{\"{}\":{}}}}}", kCounterKey, value);
}

void PerfettoWriter::State::on_store_request(const sim::Event& e) {
  const std::int64_t bucket = std::max<std::int64_t>(e.time.ns, 0) / kCounterBucketNs;
  if (!counter_bucket) {
    if (bucket > 0) counter(Time(0), 0);
  } else if (bucket != *counter_bucket) {
    counter(Time(*counter_bucket * kCounterBucketNs), counter_count);
    if (bucket > *counter_bucket + 1) counter(Time((*counter_bucket + 1) * kCounterBucketNs), 0);
    counter_count = 0;
  }
  counter_bucket = bucket;
  ++counter_count;
}

// ---- The sink.

void PerfettoWriter::State::on_sink_write(const sim::Event& e) {
  const bool accepted = e.c != 0;
  const std::optional<Epoch> newest_epoch = spans.newest_epoch();
  const bool stale = newest_epoch && e.a < *newest_epoch;
  name_scratch.clear();
  if (accepted && stale) {
    name_scratch += "STALE write accepted";
  } else {
    fmt::format_to(Out(name_scratch), "write token {} {}", e.a, accepted ? "accepted" : "REJECTED");
  }
  args_scratch.clear();
  args_scratch += "\"writer\":";
  append_endpoint_json(args_scratch, e.node);
  fmt::format_to(Out(args_scratch),
                 ",\"token\":{},\"payload\":{},\"accepted\":{},\"highest_before\":{},\"stale\":{}",
                 e.a, e.b, accepted, e.d, stale);
  if (newest_epoch) fmt::format_to(Out(args_scratch), ",\"newest_epoch\":{}", *newest_epoch);
  instant(buffer, sink_tid(), "sink", name_scratch, e.time, args_scratch);
}

}  // namespace electsim::drawing
