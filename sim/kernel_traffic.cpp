// The kernel's traffic (sim/kernel.hpp): peer messages and payloads routed as datagrams or over
// connections (streams with sequence numbers, retransmission and an end with either end's life),
// sends held while a process is paused or its disk is still syncing, and delayed sends.
#include <algorithm>
#include <string>
#include <tuple>

#include "sim/kernel_impl.hpp"

namespace electsim::sim {

// ---- Traffic
// -------------------------------------------------------------------------------------

bool Kernel::rides_stream(const Entry& e, Endpoint from, Endpoint to) const {
  if (e.body == Entry::kNoBody) {
    // Peer messages: datagrams unless the scenario asks for connections (the common case costs
    // one comparison).
    if (config_.network.peers != Transport::tcp || from < 0 || to < 0) return false;
  } else {
    // Between an election node and a server: the clients' connections. Store members' Raft
    // traffic keeps its datagrams (etcd's rafthttp drops what its streams cannot carry).
    if (config_.network.clients != Transport::tcp || (from >= 0) == (to >= 0)) return false;
    // Keepalive probes and their answers are the TCP stacks' own segments, never retransmitted.
    const Payload& payload = bodies_[e.body].value;
    if (payload.holds<TcpProbe>() || payload.holds<TcpProbeAck>()) {
      return false;
    }
  }
  // A connection to a process's current life only: traffic for an earlier life dies on arrival.
  return e.incarnation == proc(to).incarnation;
}

std::uint32_t Kernel::stream_for(Endpoint from, Endpoint to, std::uint32_t to_incarnation) {
  Proc& sender = proc(from);
  Proc& receiver = proc(to);
  std::uint32_t index = 0;
  bool created = false;
  if (sender.recent_out[0].peer == to) {
    index = sender.recent_out[0].index;
  } else if (sender.recent_out[1].peer == to) {
    index = sender.recent_out[1].index;
  } else {
    if (receiver.recent_in[0].peer == from) {
      index = receiver.recent_in[0].index;
    } else if (receiver.recent_in[1].peer == from) {
      index = receiver.recent_in[1].index;
    } else {
      std::tie(index, created) = stream_index_.try_emplace(
          stream_key(from, to), static_cast<std::uint32_t>(streams_.size()));
      if (created) {
        streams_.emplace_back();
        streams_.back().from = from;
        streams_.back().to = to;
      }
      receiver.recent_in[receiver.recent_in_next] = Proc::RecentStream{from, index};
      receiver.recent_in_next ^= 1;
    }
    sender.recent_out[sender.recent_out_next] = Proc::RecentStream{to, index};
    sender.recent_out_next ^= 1;
  }
  Stream& s = streams_[index];
  const std::uint32_t from_incarnation = sender.incarnation;
  if (created || s.from_incarnation != from_incarnation || s.to_incarnation != to_incarnation) {
    end_stream(index);  // a new connection between new lives
    s.from_incarnation = from_incarnation;
    s.to_incarnation = to_incarnation;
  }
  return index;
}

void Kernel::end_stream(std::uint32_t index) {
  Stream& s = streams_[index];
  ++s.generation;  // segments still queued find out when they surface
  s.next_seq = 0;
  s.expected = 0;
  s.established = false;
  for (const auto& held : s.early) free_entry(held.second);
  s.early.clear();
}

bool Kernel::route_stream(Endpoint from, Endpoint to, std::uint32_t slot) {
  const std::uint32_t index = stream_for(from, to, entries_[slot].incarnation);
  Stream& s = streams_[index];
  Entry& e = entries_[slot];
  e.set_session(true);  // a connection ends with either end's life
  if (e.segment == Entry::kNoSegment) e.segment = take_slot(free_segments_, segments_);
  Segment& g = segments_[e.segment];
  g = Segment{};
  g.stream = index;
  g.stream_generation = s.generation;
  g.seq = s.next_seq++;
  if (!e.counts_in_flight()) {
    if (in_flight_ >= config_.limits.max_in_flight) {
      // The simulator's memory bound: the connection is reset rather than left with a hole.
      free_entry(slot);
      break_stream(index);
      return false;
    }
    e.set_counts_in_flight(true);
    ++in_flight_;
  }
  transmit(slot);
  return true;
}

void Kernel::transmit(std::uint32_t slot) {
  Segment& g = segments_[entries_[slot].segment];
  const Stream& s = streams_[g.stream];
  g.sent_at = now_.ns;
  if (!network_.link_up(s.from, s.to) || network_.draw_loss(network_rng_)) {
    g.retransmit = true;
    push(now_ + config_.network.tcp.rto(g.retransmissions, s.established), slot);
    return;
  }
  g.retransmit = false;
  push(now_ + network_.sample_latency(s.from, s.to, network_rng_), slot);
}

bool Kernel::stream_arrival(std::uint32_t slot, Entry& e) {
  Segment& g = segments_[e.segment];
  Stream& s = streams_[g.stream];
  if (g.stream_generation != s.generation) {  // its connection is gone
    free_entry(slot);
    return false;
  }
  const Proc& receiver = proc(s.to);
  if (receiver.incarnation != s.to_incarnation ||
      (g.retransmit && proc(s.from).incarnation != s.from_incarnation)) {
    // The receiver's life this connection reached has ended (its segments die with it), or the
    // sender crashed with the segment still in its socket buffer.
    free_entry(slot);
    return false;
  }
  if (g.step == Segment::Step::released) return admit(s, e);
  if (g.retransmit) {
    // The retransmission timer of a lost segment: send it again, or give the connection up.
    if (g.retransmissions >= config_.network.tcp.retries(s.established)) {
      const std::uint32_t index = g.stream;
      free_entry(slot);
      break_stream(index);
      return false;
    }
    ++g.retransmissions;
    ++stats_.retransmissions;
    transmit(slot);
    return false;
  }
  if (!receiver.up || (network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
                       !network_.link_up(s.from, s.to))) {
    // Lost on the way, or its host is down (a connection to a crashed server's next life waits
    // for it to come up): the sender's timer, armed when it left, sends it again.
    g.retransmit = true;
    const Duration rto = config_.network.tcp.rto(g.retransmissions, s.established);
    push(std::max(now_, Time(g.sent_at) + rto), slot);
    return false;
  }
  if (g.seq != s.expected) {
    // It overtook a segment still on its way: the receiver holds it until that one is in.
    const auto at =
        std::lower_bound(s.early.begin(), s.early.end(), std::make_pair(g.seq, std::uint32_t{0}));
    s.early.insert(at, {g.seq, slot});
    return false;
  }
  return admit(s, e);
}

bool Kernel::admit(Stream& s, Entry& e) {
  ++s.expected;
  s.established = true;
  segments_[e.segment].step = Segment::Step::admitted;
  // The segment that waited behind this one follows at once, and in turn releases the next: a
  // segment arriving meanwhile finds its place taken and waits too.
  if (!s.early.empty() && s.early.front().first == s.expected) {
    const std::uint32_t next = s.early.front().second;
    s.early.erase(s.early.begin());
    segments_[entries_[next].segment].step = Segment::Step::released;
    push(now_, next);
  }
  return true;
}

void Kernel::break_stream(std::uint32_t index) {
  const Stream& s = streams_[index];
  const Endpoint from = s.from;
  const Endpoint to = s.to;
  const std::uint32_t from_incarnation = s.from_incarnation;
  ++stats_.connections_broken;
  // Both directions of the connection end; the next send opens a new one (client libraries
  // reconnect by themselves).
  end_stream(index);
  if (const auto back = stream_index_.find(stream_key(to, from))) end_stream(*back);
  if (traced()) emit_now(events::conn_break(from, to));
  // The sender's TCP gives up (ETIMEDOUT): its process learns the connection is gone, as it
  // learns of a reset. The other end learns nothing until it hears from the network again.
  Proc& p = proc(from);
  if (!p.up || p.incarnation != from_incarnation) return;
  begin_handler(p);
  p.process->on_disconnect(p.ctx, to);
  end_handler(p);
}

bool Kernel::route(Endpoint from, Endpoint to, std::uint32_t slot) {
  Entry& e = entries_[slot];
  if (rides_stream(e, from, to)) return route_stream(from, to, slot);
  // A quiet network loses, cuts and copies nothing and draws one latency: the general path below
  // with nothing to do but the in-flight bound, making the same draws.
  if (network_.quiet() &&
      in_flight_ - (e.counts_in_flight() ? 1 : 0) < config_.limits.max_in_flight) [[likely]] {
    launch_quietly(slot, e);
    return true;
  }
  return route_disturbed(from, to, slot);
}

bool Kernel::route_disturbed(Endpoint from, Endpoint to, std::uint32_t slot) {
  Entry& e = entries_[slot];
  DropReason reason{};
  bool dropped = false;
  if (!network_.link_up(from, to)) {
    dropped = true;
    reason = DropReason::cut_at_send;
  } else if (network_.draw_loss(network_rng_)) {
    dropped = true;
    reason = DropReason::loss;
  } else if (in_flight_ - (e.counts_in_flight() ? 1 : 0) >= config_.limits.max_in_flight) {
    dropped = true;
    reason = DropReason::overload;
  }
  if (dropped) {
    emit_drop(e, from, to, reason);
    free_entry(slot);
    return false;
  }
  const bool duplicate = network_.draw_duplicate(network_rng_);
  if (!e.counts_in_flight()) {  // held traffic was counted when it was held
    e.set_counts_in_flight(true);
    ++in_flight_;
  }
  push(now_ + network_.sample_latency(from, to, network_rng_), slot);
  if (duplicate && in_flight_ < config_.limits.max_in_flight) {
    const std::uint32_t copy = new_entry(e.kind, kNoNode);
    Entry& c = entries_[copy];
    const Entry& original = entries_[slot];  // re-read: new_entry may have grown the slab
    c.node = original.node;
    c.peer = original.peer;
    c.incarnation = original.incarnation;
    c.set_session(original.session());
    c.payload = original.payload;
    c.type = original.type;
    c.field = original.field;
    if (original.body != Entry::kNoBody) {
      Body copied = bodies_[original.body];
      set_body(copy, std::move(copied.value));
    }
    c.set_counts_in_flight(true);
    ++in_flight_;
    push(now_ + network_.sample_latency(from, to, network_rng_), copy);
  }
  return true;
}

void Kernel::settle_handler(Proc& p) {
  if (!p.up) return;
  if (p.durable.version() != p.handler_version) {
    const Time done = synced_at(p);
    while (!p.unsynced.empty() && p.unsynced.front().done <= now_) {
      p.synced = std::move(p.unsynced.front().state);
      p.unsynced.pop_front();
    }
    p.unsynced.push_back({done, p.durable});
  }
  p.handler_sync.reset();
}

Time Kernel::synced_at(Proc& p) {
  if (!p.handler_sync) {
    // One fsync for everything the handler wrote; the disk serves fsyncs in turn.
    const Time start = std::max(now_, p.disk_free_at);
    // Draws are bounded (a duration is at most ten years), but a disk given one after another
    // must not run past what a time can hold: it saturates far beyond any run's end.
    const Duration d = config_.disk.fsync.sample(p.disk_rng);
    p.disk_free_at = start.ns > kDiskNever - d.count() ? Time(kDiskNever) : start + d;
    p.handler_sync = p.disk_free_at;
  }
  return *p.handler_sync;
}

std::optional<std::uint32_t> Kernel::hold(Proc& from, Time at, Endpoint to) {
  // Held traffic counts against the in-flight limit like traffic on the wire, so a disk or a send
  // delay that never finishes cannot pile up entries without bound.
  if (in_flight_ >= config_.limits.max_in_flight) return std::nullopt;
  const std::uint32_t slot = new_entry(EntryKind::send_later, from.id);
  entries_[slot].peer = to;
  entries_[slot].set_counts_in_flight(true);
  ++in_flight_;
  push(at, slot);
  return slot;
}

void Kernel::send_message(Proc& from, Endpoint to, const Message& message) {
  // The common case in one place: disks that take no time, a quiet network, datagrams between
  // peers, room in flight. It is route_message and route with nothing to decide, making the same
  // draws in the same order.
  if (!disks_take_time_ && network_.quiet() && config_.network.peers != Transport::tcp &&
      in_flight_ < config_.limits.max_in_flight) [[likely]] {
    const std::uint64_t id = ++stats_.messages_sent;
    if (traced()) trace_send(from.id, to, message.type, id);
    const std::uint32_t slot = new_peer_entry(to);
    Entry& e = entries_[slot];
    e.peer = from.id;
    e.set_msg(message);
    e.payload = id;
    launch_quietly(slot, e);
    return;
  }
  // What a handler sends after it wrote durable state leaves once the write is on disk.
  if (disks_take_time_ && from.durable.version() != from.handler_version) {
    const Time at = synced_at(from);
    if (at > now_) {
      if (const auto slot = hold(from, at, to)) {
        entries_[*slot].set_msg(message);
      } else {
        const std::uint64_t id = ++stats_.messages_sent;
        if (traced()) {
          emit_now(events::msg_send(from.id, to, message.type, id));
          emit_now(events::msg_drop(from.id, to, message.type, DropReason::overload, id));
        }
      }
      return;
    }
  }
  route_message(from, to, message);
}

void Kernel::trace_send(Endpoint from, Endpoint to, MessageType type, std::uint64_t id) {
  emit_now(events::msg_send(from, to, type, id));
}

void Kernel::route_message(Proc& from, Endpoint to, const Message& message) {
  const std::uint64_t id = ++stats_.messages_sent;
  if (traced()) trace_send(from.id, to, message.type, id);
  const std::uint32_t slot = new_entry(EntryKind::deliver, to);
  Entry& e = entries_[slot];
  e.peer = from.id;
  e.set_msg(message);
  e.payload = id;
  route(from.id, to, slot);
}

void Kernel::send_payload(Proc& from, Endpoint to, std::uint32_t to_incarnation,
                          Payload&& payload) {
  if (disks_take_time_ && from.durable.version() != from.handler_version) {
    const Time at = synced_at(from);
    if (at > now_) {
      if (const auto slot = hold(from, at, to)) {
        entries_[*slot].payload = std::uint64_t{to_incarnation} + 1;
        set_body(*slot, std::move(payload));
      }
      return;
    }
  }
  const std::uint32_t slot = new_entry(EntryKind::deliver, to);
  Entry& e = entries_[slot];
  e.peer = from.id;
  e.set_session(true);
  e.incarnation = to_incarnation;
  e.payload = from.incarnation;
  set_body(slot, std::move(payload));
  route(from.id, to, slot);
}

void Kernel::send_later(Proc& from, Duration after_local, Endpoint to, Payload&& payload) {
  ELECTSIM_ASSERT(after_local.count() >= 0, "a send delay is never negative");
  ELECTSIM_ASSERT(listens(to), "a process listens at every address traffic is sent to");
  // Still inside the sender: its own entry, so a pause parks it and a crash drops it.
  if (const auto slot = hold(from, now_ + from.clock.true_duration_for(after_local), to)) {
    set_body(*slot, std::move(payload));
  }
}

}  // namespace electsim::sim
