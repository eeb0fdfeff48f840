// The event loop. Entries live in a slab; the heap orders small (time, seq, slot) keys, so
// equal-time events run in insertion order and nothing depends on addresses. Cancelling a timer
// only marks it (ns-3); a stale entry is dropped when it surfaces. A paused process's entries are
// parked in order and re-queued at resume; a crash bumps the process's incarnation so its timers,
// held traffic and connections die. Every process, election node or server, goes through the same
// paths: the kernel has no code for any one of them. The faults are sim/kernel_faults.cpp, the
// private types both share sim/kernel_impl.hpp.
#include "sim/kernel.hpp"

#include <algorithm>
#include <string>
#include <variant>

#include "sim/kernel_impl.hpp"

namespace electsim::sim {

// ---- Context
// -------------------------------------------------------------------------------------

Endpoint Kernel::ProcContext::self() const {
  return proc_.id;
}
PeerSet Kernel::ProcContext::peers() const {
  return proc_.peers;
}
LocalTime Kernel::ProcContext::now() const {
  return proc_.clock.local_at(kernel_.now_);
}
LocalTime Kernel::ProcContext::monotonic_now() const {
  return proc_.clock.monotonic_at(kernel_.now_);
}
Rng& Kernel::ProcContext::rng() {
  return proc_.rng;
}
Rng& Kernel::ProcContext::workload_rng() {
  return proc_.workload_rng;
}
bool Kernel::ProcContext::synced() const {
  if (!kernel_.disks_take_time_) return true;
  return proc_.durable.version() == proc_.handler_version &&
         (proc_.unsynced.empty() || proc_.unsynced.back().done <= kernel_.now_);
}

DurableState& Kernel::ProcContext::durable() {
  return proc_.durable;
}
void Kernel::ProcContext::send(Endpoint to, Payload payload) {
  kernel_.send_payload(proc_, to, kernel_.proc(to).incarnation, std::move(payload));
}

// ---- Construction
// --------------------------------------------------------------------------------

namespace {
ClockModel make_clock(const ClockConfig& c) {
  return ClockModel(c.offset, c.drift_ppb, c.steps);
}

// How many server addresses the network needs: the store's and the sink's at least, so that a
// world without servers keeps the same links, and up to the lowest address a server takes.
std::size_t server_addresses(const std::vector<ServerSpec>& servers) {
  std::size_t count = 2;
  for (const ServerSpec& server : servers) {
    if (is_server_address(server.endpoint)) {
      count = std::max(count, server_slot(server.endpoint) + 1);
    }
  }
  return count;
}
}  // namespace

Kernel::Kernel(WorldConfig config, ProtocolFactory factory)
    : config_(std::move(config)),
      factory_(std::move(factory)),
      network_(config_.node_count, config_.network, server_addresses(config_.servers)),
      network_rng_(config_.seed, StreamPurpose::network, 0),
      faults_rng_(config_.seed, StreamPurpose::faults, 0),
      faults_(config_.faults) {
  ELECTSIM_ASSERT(config_.node_count > 0, "a world has at least one node");
  procs_.reserve(config_.node_count + config_.servers.size());
  for (std::size_t i = 0; i < config_.node_count; ++i) all_nodes_.push_back(static_cast<NodeId>(i));
  for (std::size_t i = 0; i < config_.node_count; ++i) {
    const auto id = static_cast<NodeId>(i);
    ClockConfig clock = i < config_.clocks.size() ? config_.clocks[i] : ClockConfig{};
    auto p = std::make_unique<Proc>(*this, id, make_clock(clock),
                                    Rng(config_.seed, StreamPurpose::node, i),
                                    Rng(config_.seed, StreamPurpose::workload, i),
                                    Rng(config_.seed, StreamPurpose::disk, 2 * i));
    const std::span<const NodeId> all(all_nodes_);
    p->peers = PeerSet(all.first(i), all.subspan(i + 1));
    procs_.push_back(std::move(p));
  }
  for (std::size_t k = 0; k < config_.servers.size(); ++k) {
    const ServerSpec& spec = config_.servers[k];
    ELECTSIM_ASSERT(is_server_address(spec.endpoint),
                    "a server listens at a server address (sim/ids.hpp)");
    ELECTSIM_ASSERT(spec.make != nullptr, "a server says how to make its process");
    const std::size_t slot = server_slot(spec.endpoint);
    if (server_index_.size() <= slot) server_index_.resize(slot + 1, -1);
    ELECTSIM_ASSERT(server_index_[slot] == -1, "one server per address");
    server_index_[slot] = static_cast<std::int32_t>(procs_.size());
    // A server's streams are indexed by its address, so adding a server shifts no other's.
    auto p = std::make_unique<Proc>(*this, spec.endpoint, make_clock(spec.clock),
                                    Rng(config_.seed, StreamPurpose::server, 2 * slot),
                                    Rng(config_.seed, StreamPurpose::server, 2 * slot + 1),
                                    Rng(config_.seed, StreamPurpose::disk, 2 * slot + 1));
    p->make = spec.make;
    p->group = spec.group;
    p->peers = PeerSet(all_nodes_);
    procs_.push_back(std::move(p));
  }
  fault_state_.resize(faults_.size());
  disks_take_time_ = config_.disk.takes_time() ||
                     std::any_of(faults_.begin(), faults_.end(), [](const FaultSpec& f) {
                       return f.kind == FaultKind::disk_stall;
                     });
  heap_.reserve(1024);
  entries_.reserve(1024);
}

Kernel::~Kernel() = default;

void Kernel::add_observer(Observer* observer) {
  observers_.push_back(observer);
}

Kernel::Proc& Kernel::proc(Endpoint endpoint) {
  return const_cast<Proc&>(std::as_const(*this).proc(endpoint));
}

const Kernel::Proc& Kernel::proc(Endpoint endpoint) const {
  if (endpoint >= 0 && static_cast<std::size_t>(endpoint) < config_.node_count) [[likely]] {
    return *procs_[static_cast<std::size_t>(endpoint)];
  }
  ELECTSIM_ASSERT(listens(endpoint), "a process listens at every address traffic is sent to");
  return *procs_[static_cast<std::size_t>(server_index_[server_slot(endpoint)])];
}

bool Kernel::listens(Endpoint endpoint) const {
  if (endpoint >= 0) return static_cast<std::size_t>(endpoint) < config_.node_count;
  if (!is_server_address(endpoint)) return false;
  const std::size_t slot = server_slot(endpoint);
  return slot < server_index_.size() && server_index_[slot] >= 0;
}

// ---- Queue
// ---------------------------------------------------------------------------------------

std::uint32_t Kernel::new_entry(EntryKind kind, Endpoint owner) {
  std::uint32_t slot;
  if (!free_entries_.empty()) {
    slot = free_entries_.back();
    free_entries_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[slot];
  e.kind = kind;
  e.node = owner;
  e.peer = kNoNode;
  e.incarnation = owner >= 0       ? procs_[static_cast<std::size_t>(owner)]->incarnation
                  : listens(owner) ? proc(owner).incarnation
                                   : 0;
  e.counts_in_flight = false;
  e.session = false;
  e.payload = 0;
  e.stream = Entry::kNoStream;
  e.retransmit = false;
  e.step = Entry::StreamStep::travelling;
  return slot;
}

void Kernel::free_entry(std::uint32_t slot) {
  Entry& e = entries_[slot];
  if (e.counts_in_flight) {
    ELECTSIM_ASSERT(in_flight_ > 0, "in-flight count matches queued traffic");
    --in_flight_;
    e.counts_in_flight = false;
  }
  if (e.body != Entry::kNoBody) {
    bodies_[e.body]->value = std::monostate{};
    free_bodies_.push_back(e.body);
    e.body = Entry::kNoBody;
  }
  free_entries_.push_back(slot);
}

void Kernel::push(Time at, std::uint32_t slot) {
  ELECTSIM_ASSERT(at >= now_, "events are never scheduled in the past");
  push_in_order(at.ns, next_seq_++, slot);
}

void Kernel::push_in_order(std::int64_t at, std::uint64_t seq, std::uint32_t slot) {
  // A 4-ary min-heap on (time, seq): shallower than a binary heap, and its children share a line.
  ELECTSIM_ASSERT(slot < (1u << 24),
                  "at most 2^24 queued entries (the in-flight and timer limits)");
  ELECTSIM_ASSERT(seq < (std::uint64_t{1} << 40), "at most 2^40 events are queued in a run");
  const QueueKey key{at, (seq << 24) | slot};
  entries_[slot].queued_at = at;
  std::size_t i = heap_.size();
  heap_.push_back(key);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!earlier(key, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = key;
}

Kernel::QueueKey Kernel::pop_earliest() {
  const QueueKey top = heap_.front();
  const QueueKey last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (earlier(heap_[c], heap_[best])) best = c;
    }
    if (!earlier(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

// ---- Running
// -------------------------------------------------------------------------------------

void Kernel::start() {
  ELECTSIM_ASSERT(!started_, "a kernel starts once");
  started_ = true;
  if (!observers_.empty()) {
    emit_now(events::run_start(config_.node_count, config_.seed));
  }
  // Scheduled faults go in first, in list order, so equal-time faults keep the file's order.
  std::vector<std::size_t> order(faults_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return faults_[a].at < faults_[b].at; });
  for (std::size_t i : order) {
    const std::uint32_t slot = new_entry(EntryKind::fault, kNoNode);
    entries_[slot].payload = i;
    push(faults_[i].at, slot);
  }
  // Servers start before the nodes that will call them.
  for (std::size_t i = config_.node_count; i < procs_.size(); ++i) start_process(*procs_[i]);
  for (std::size_t i = 0; i < config_.node_count; ++i) start_process(*procs_[i]);
}

void Kernel::run_until(Time t) {
  ELECTSIM_ASSERT(started_, "start() before run_until()");
  while (!heap_.empty() && heap_.front().time <= t.ns) {
    if (stats_.events >= config_.limits.max_events) {
      stats_.hit_event_limit = true;
      return;
    }
    if ((stats_.events & 0xfff) == 0 && config_.limits.cancel != nullptr &&
        config_.limits.cancel->load(std::memory_order_relaxed)) {
      stats_.cancelled = true;
      return;
    }
    const QueueKey key = pop_earliest();
    now_ = Time(key.time);
    current_order_ = key.order >> 24;
    ++stats_.events;
    dispatch(key.slot());
  }
  if (now_ < t) now_ = t;
}

void Kernel::finish() {
  if (finished_) return;
  finished_ = true;
  const Time end(config_.duration);
  if (now_ < end && !stats_.hit_event_limit && !stats_.cancelled) now_ = end;
  stats_.end = now_;
  if (traced()) emit_now(events::run_end());
}

RunStats Kernel::run() {
  start();
  run_until(Time(config_.duration));
  finish();
  return stats_;
}

void Kernel::inject(FaultSpec fault) {
  ELECTSIM_ASSERT(started_, "faults are injected into a running world");
  fault.at = now_;
  if (fault.kind == FaultKind::disk_stall && !disks_take_time_) {
    // Disks start to take time now: until now every write was on disk at once, so what each
    // disk holds for sure is the durable state as it stands.
    disks_take_time_ = true;
    for (const auto& p : procs_) {
      p->synced = p->durable;
      p->unsynced.clear();
      p->handler_version = p->durable.version();
    }
  }
  faults_.push_back(std::move(fault));
  fault_state_.emplace_back();
  const std::uint32_t slot = new_entry(EntryKind::fault, kNoNode);
  entries_[slot].payload = faults_.size() - 1;
  push(now_, slot);
  run_until(now_);
}

// ---- Dispatch
// ------------------------------------------------------------------------------------

void Kernel::dispatch(std::uint32_t slot) {
  Entry& e = entries_[slot];
  switch (e.kind) {
    case EntryKind::deliver:
    case EntryKind::timer:
    case EntryKind::send_later:
    case EntryKind::command:
      dispatch_to_process(slot, e);
      return;
    case EntryKind::fault: {
      const std::size_t index = e.payload;
      free_entry(slot);
      apply_fault(index);
      return;
    }
    case EntryKind::fault_end: {
      const std::size_t index = e.payload;
      free_entry(slot);
      end_fault(index);
      return;
    }
    case EntryKind::resume: {
      Proc& p = proc(e.node);
      const bool current = p.paused && e.payload == p.pause_generation;
      free_entry(slot);
      if (current) resume_process(p);
      return;
    }
  }
}

void Kernel::emit_drop(const Entry& e, Endpoint from, Endpoint to, DropReason reason) {
  // Peer messages are traced by the kernel; payloads by the processes that send and receive them.
  if (e.body != Entry::kNoBody) return;
  if (traced()) emit_now(events::msg_drop(from, to, e.msg.type, reason, e.msg_id));
}

void Kernel::dispatch_to_process(std::uint32_t slot, Entry& e) {
  if (e.kind == EntryKind::deliver && e.body != Entry::kNoBody &&
      std::holds_alternative<TcpProbe>(bodies_[e.body]->value)) {
    answer_probe(slot, e);
    return;
  }
  if (e.kind == EntryKind::deliver && e.stream != Entry::kNoStream &&
      e.step != Entry::StreamStep::admitted && !stream_arrival(slot, e)) {
    return;
  }
  Proc& p = proc(e.node);
  const bool session_bound = e.kind != EntryKind::deliver || e.session;
  if (!p.up || (session_bound && e.incarnation != p.incarnation)) {
    // A crashed process receives nothing; traffic on connections of an earlier incarnation, and
    // its own timers and held sends, died with it.
    if (e.kind == EntryKind::deliver) emit_drop(e, e.peer, e.node, DropReason::node_down);
    if (e.kind == EntryKind::timer) {
      TimerSlot& t = timers_[timer_slot(e.payload)];
      if (t.armed && t.generation == timer_generation(e.payload)) {
        t.armed = false;
        ++t.generation;
        free_timers_.push_back(timer_slot(e.payload));
      }
    }
    free_entry(slot);
    return;
  }
  if (e.kind == EntryKind::timer) {
    // A cancelled timer is dropped here, without waking a paused process.
    const TimerSlot& t = timers_[timer_slot(e.payload)];
    if (!t.armed || t.generation != timer_generation(e.payload)) {
      auto& orphans = p.orphans;
      for (std::size_t i = 0; i < orphans.size(); ++i) {
        if (orphans[i].entry == slot) {
          orphans[i] = orphans.back();
          orphans.pop_back();
          break;
        }
      }
      free_entry(slot);
      return;
    }
    if (t.due > now_.ns || (t.due == now_.ns && t.seq > current_order_)) {
      push_in_order(t.due, t.seq, slot);  // an adopted entry: on to the timer's own place
      return;
    }
  }
  if (e.kind == EntryKind::deliver && e.stream == Entry::kNoStream &&
      network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
      !network_.link_up(e.peer, e.node)) {
    emit_drop(e, e.peer, e.node, DropReason::cut_on_arrival);
    free_entry(slot);
    return;
  }
  if (p.paused) {
    p.parked.push_back(slot);
    return;
  }
  Process& process = *p.process;
  switch (e.kind) {
    case EntryKind::deliver: {
      const Endpoint from = e.peer;
      if (e.body == Entry::kNoBody) {
        ++stats_.messages_delivered;
        const Message msg = e.msg;
        if (traced()) emit_now(events::msg_deliver(p.id, from, msg.type, e.msg_id));
        free_entry(slot);
        begin_handler(p);
        process.on_message(p.ctx, from, msg);
        end_handler(p);
        return;
      }
      // The receiver handles the payload where it lies; its slot is freed after the call.
      const std::uint32_t body = e.body;
      const auto from_incarnation = static_cast<std::uint32_t>(e.payload);
      e.body = Entry::kNoBody;
      free_entry(slot);
      Payload& payload = bodies_[body]->value;
      begin_handler(p);
      process.on_payload(p.ctx, from, from_incarnation, std::move(payload));
      end_handler(p);
      payload = std::monostate{};
      free_bodies_.push_back(body);
      return;
    }
    case EntryKind::timer: {
      const TimerId id = e.payload;
      TimerSlot& t = timers_[timer_slot(id)];
      const TimerTag tag = t.tag;
      t.armed = false;
      ++t.generation;
      free_timers_.push_back(timer_slot(id));
      --p.armed_timers;
      ++stats_.timers_fired;
      free_entry(slot);
      begin_handler(p);
      process.on_timer(p.ctx, id, tag);
      end_handler(p);
      return;
    }
    case EntryKind::send_later: {
      const Endpoint to = e.peer;
      if (e.body == Entry::kNoBody) {
        // A peer message held until its sender's fsync: it is sent now.
        const Message msg = e.msg;
        free_entry(slot);
        route_message(p, to, msg);
        return;
      }
      // The payload leaves its sender now; from here it is the network's, on a connection to the
      // incarnation it answers (payload - 1), or else to the receiver's current one.
      e.kind = EntryKind::deliver;
      e.session = true;
      e.incarnation =
          e.payload != 0 ? static_cast<std::uint32_t>(e.payload - 1) : proc(to).incarnation;
      e.payload = p.incarnation;
      e.node = to;
      e.peer = p.id;
      route(p.id, to, slot);
      return;
    }
    case EntryKind::command: {
      const auto command = static_cast<Command>(e.payload);
      free_entry(slot);
      begin_handler(p);
      process.on_command(p.ctx, command);
      end_handler(p);
      if (command == Command::stop) crash_process(p, /*graceful=*/true);
      return;
    }
    default:
      ELECTSIM_ASSERT(false, "process entries only");
  }
}

void Kernel::answer_probe(std::uint32_t slot, Entry& e) {
  // The probe is answered by the host's TCP stack (Linux tcp_keepalive_timer and the peer's
  // ACK), not by the process: a paused process's host answers at once, a crashed host answers
  // nothing, and a host that restarted answers a connection of its earlier life with a reset
  // (RFC 9293 3.10.7.1: a segment for a connection that does not exist draws a RST).
  Proc& p = proc(e.node);
  const Endpoint server = e.peer;
  const auto server_incarnation = static_cast<std::uint32_t>(e.payload);
  const std::int64_t connection = std::get<TcpProbe>(bodies_[e.body]->value).connection;
  const bool reset = e.incarnation != p.incarnation;
  const bool cut = network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
                   !network_.link_up(server, p.id);
  free_entry(slot);
  if (!p.up || cut) return;
  const std::uint32_t answer = new_entry(EntryKind::deliver, server);
  Entry& a = entries_[answer];
  a.peer = p.id;
  a.session = true;
  a.incarnation = server_incarnation;
  a.payload = p.incarnation;
  set_body(answer, TcpProbeAck{connection, reset});
  route(p.id, server, answer);
}

// ---- Processes
// -----------------------------------------------------------------------------------

const Belief& Kernel::belief(NodeId node) const {
  ELECTSIM_ASSERT(node >= 0 && static_cast<std::size_t>(node) < config_.node_count,
                  "beliefs are election nodes'");
  return procs_[static_cast<std::size_t>(node)]->belief;
}
bool Kernel::node_up(NodeId node) const {
  return proc(node).up;
}
bool Kernel::node_paused(NodeId node) const {
  return proc(node).paused;
}
LocalTime Kernel::local_now(NodeId node) const {
  return proc(node).clock.local_at(now_);
}
Protocol* Kernel::protocol(NodeId node) {
  Proc& p = proc(node);
  return p.node != nullptr ? &p.node->protocol() : nullptr;
}
const Process* Kernel::process(Endpoint endpoint) const {
  return listens(endpoint) ? proc(endpoint).process.get() : nullptr;
}

void Kernel::start_process(Proc& p) {
  p.up = true;
  p.paused = false;
  p.has_belief = false;
  p.belief = Belief{};
  if (p.id >= 0) {
    std::unique_ptr<Protocol> protocol = factory_(p.id);
    ELECTSIM_ASSERT(protocol != nullptr, "the factory makes a protocol for every node");
    auto adapter = std::make_unique<ProtocolProcess>(std::move(protocol), &config_.store_client);
    p.node = adapter.get();
    p.process = std::move(adapter);
  } else {
    p.process = p.make();
    ELECTSIM_ASSERT(p.process != nullptr, "a server's process is made");
  }
  begin_handler(p);
  p.process->on_start(p.ctx);
  end_handler(p);
}

void Kernel::crash_process(Proc& p, bool graceful) {
  if (!p.up) return;
  p.up = false;
  p.paused = false;
  ++p.pause_generation;
  ++p.incarnation;  // queued timers, held sends and connections of this life die when they surface
  p.armed_timers = 0;
  for (std::uint32_t slot : p.parked) {
    Entry& e = entries_[slot];
    if (e.kind == EntryKind::timer) {
      TimerSlot& t = timers_[timer_slot(e.payload)];
      if (t.armed && t.generation == timer_generation(e.payload)) {
        t.armed = false;
        ++t.generation;
        free_timers_.push_back(timer_slot(e.payload));
      }
    }
    free_entry(slot);
  }
  p.parked.clear();
  p.orphans.clear();
  if (disks_take_time_) {
    // Writes whose fsync had not finished are lost with the process.
    while (!p.unsynced.empty() && p.unsynced.front().done <= now_) {
      p.synced = std::move(p.unsynced.front().state);
      p.unsynced.pop_front();
    }
    if (!p.unsynced.empty()) {
      p.durable = p.synced;
      p.unsynced.clear();
    }
  }
  p.node = nullptr;
  p.process.reset();
  p.has_belief = false;
  p.belief = Belief{};
  // Its connections reset: every other live process learns of it now.
  for (auto& other : procs_) {
    if (other.get() == &p || !other->up) continue;
    begin_handler(*other);
    other->process->on_disconnect(other->ctx, p.id);
    end_handler(*other);
  }
  if (traced()) emit_now(events::crash(p.id, graceful));
}

void Kernel::restart_process(Proc& p) {
  if (p.up) return;
  if (traced()) emit_now(events::restart(p.id));
  start_process(p);
}

void Kernel::pause_process(Proc& p, Duration d, bool as_store) {
  if (!p.up) return;
  const Time until = now_ + d;
  if (p.paused && until <= p.paused_until) return;  // already frozen for longer
  p.paused = true;
  p.paused_until = until;
  p.paused_as_store = as_store;
  ++p.pause_generation;
  const std::uint32_t slot = new_entry(EntryKind::resume, p.id);
  entries_[slot].payload = p.pause_generation;
  push(until, slot);
  if (traced()) emit_now(as_store ? events::store_pause(p.id, d) : events::pause(p.id, d));
}

void Kernel::resume_process(Proc& p) {
  p.paused = false;
  if (traced()) emit_now(p.paused_as_store ? events::store_resume(p.id) : events::resume(p.id));
  // Everything that came due during the pause runs now, in the order it came due.
  std::deque<std::uint32_t> parked;
  parked.swap(p.parked);
  for (std::uint32_t slot : parked) push(now_, slot);
}

void Kernel::announce(Proc& p, const Belief& belief) {
  if (p.has_belief && p.belief == belief) return;
  p.has_belief = true;
  p.belief = belief;
  if (observers_.empty()) return;
  // A server's role in its own group (a store member's Raft role) is no election belief.
  emit_now(p.id >= 0 ? events::belief(p.id, belief.role, belief.epoch, belief.known_leader)
                     : events::server_role(p.id, belief.role, belief.epoch, belief.known_leader));
}

TimerId Kernel::arm_timer(Proc& p, Duration after_local, TimerTag tag) {
  ELECTSIM_ASSERT(after_local.count() >= 0, "timers are set for non-negative durations");
  ELECTSIM_ASSERT(p.armed_timers < config_.limits.max_timers_per_node,
                  "a process keeps at most limits.max_timers_per_node timers armed");
  std::uint32_t index;
  if (!free_timers_.empty()) {
    index = free_timers_.back();
    free_timers_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(timers_.size());
    timers_.emplace_back();
  }
  const std::int64_t due = (now_ + p.clock.true_duration_for(after_local)).ns;
  const std::uint64_t seq = next_seq_++;
  TimerSlot& t = timers_[index];
  t.armed = true;
  t.tag = tag;
  t.due = due;
  t.seq = seq;
  ++p.armed_timers;
  const TimerId id = make_timer_id(index, t.generation);
  for (std::size_t i = 0; i < p.orphans.size(); ++i) {
    if (p.orphans[i].at > due) continue;
    t.entry = p.orphans[i].entry;
    entries_[t.entry].payload = id;
    p.orphans[i] = p.orphans.back();
    p.orphans.pop_back();
    return id;
  }
  const std::uint32_t slot = new_entry(EntryKind::timer, p.id);
  entries_[slot].payload = id;
  t.entry = slot;
  push_in_order(due, seq, slot);
  return id;
}

void Kernel::cancel_timer(Proc& p, TimerId id) {
  if (id == kNoTimer) return;
  const std::uint32_t index = timer_slot(id);
  if (index >= timers_.size()) return;
  TimerSlot& t = timers_[index];
  if (!t.armed || t.generation != timer_generation(id)) return;
  t.armed = false;
  ++t.generation;
  free_timers_.push_back(index);
  --p.armed_timers;
  if (p.orphans.size() < Proc::kOrphansMax)
    p.orphans.push_back({t.entry, entries_[t.entry].queued_at});
}

bool Kernel::timer_fires_by(const Proc& p, TimerId id, Duration after_local) const {
  if (id == kNoTimer) return false;
  const std::uint32_t index = timer_slot(id);
  if (index >= timers_.size()) return false;
  const TimerSlot& t = timers_[index];
  if (!t.armed || t.generation != timer_generation(id)) return false;
  return t.due <= (now_ + p.clock.true_duration_for(after_local)).ns;
}

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
    const Payload& payload = bodies_[e.body]->value;
    if (std::holds_alternative<TcpProbe>(payload) || std::holds_alternative<TcpProbeAck>(payload)) {
      return false;
    }
  }
  // A connection to a process's current life only: traffic for an earlier life dies on arrival.
  return e.incarnation == proc(to).incarnation;
}

std::uint32_t Kernel::stream_for(Endpoint from, Endpoint to, std::uint32_t to_incarnation) {
  const auto [it, created] =
      stream_index_.try_emplace(stream_key(from, to), static_cast<std::uint32_t>(streams_.size()));
  if (created) {
    streams_.emplace_back();
    streams_.back().from = from;
    streams_.back().to = to;
  }
  Stream& s = streams_[it->second];
  const std::uint32_t from_incarnation = proc(from).incarnation;
  if (created || s.from_incarnation != from_incarnation || s.to_incarnation != to_incarnation) {
    end_stream(it->second);  // a new connection between new lives
    s.from_incarnation = from_incarnation;
    s.to_incarnation = to_incarnation;
  }
  return it->second;
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
  e.session = true;  // a connection ends with either end's life
  e.stream = index;
  e.stream_generation = s.generation;
  e.seq = s.next_seq++;
  e.retransmissions = 0;
  if (!e.counts_in_flight) {
    if (in_flight_ >= config_.limits.max_in_flight) {
      // The simulator's memory bound: the connection is reset rather than left with a hole.
      free_entry(slot);
      break_stream(index);
      return false;
    }
    e.counts_in_flight = true;
    ++in_flight_;
  }
  transmit(slot);
  return true;
}

void Kernel::transmit(std::uint32_t slot) {
  Entry& e = entries_[slot];
  const Stream& s = streams_[e.stream];
  e.sent_at = now_.ns;
  if (!network_.link_up(s.from, s.to) || network_.draw_loss(network_rng_)) {
    e.retransmit = true;
    push(now_ + config_.network.tcp.rto(e.retransmissions, s.established), slot);
    return;
  }
  e.retransmit = false;
  push(now_ + network_.sample_latency(s.from, s.to, network_rng_), slot);
}

bool Kernel::stream_arrival(std::uint32_t slot, Entry& e) {
  Stream& s = streams_[e.stream];
  if (e.stream_generation != s.generation) {  // its connection is gone
    free_entry(slot);
    return false;
  }
  const Proc& receiver = proc(s.to);
  if (receiver.incarnation != s.to_incarnation ||
      (e.retransmit && proc(s.from).incarnation != s.from_incarnation)) {
    // The receiver's life this connection reached has ended (its segments die with it), or the
    // sender crashed with the segment still in its socket buffer.
    free_entry(slot);
    return false;
  }
  if (e.step == Entry::StreamStep::released) return admit(s, e);
  if (e.retransmit) {
    // The retransmission timer of a lost segment: send it again, or give the connection up.
    if (e.retransmissions >= config_.network.tcp.retries(s.established)) {
      const std::uint32_t index = e.stream;
      free_entry(slot);
      break_stream(index);
      return false;
    }
    ++e.retransmissions;
    ++stats_.retransmissions;
    transmit(slot);
    return false;
  }
  if (!receiver.up || (network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
                       !network_.link_up(s.from, s.to))) {
    // Lost on the way, or its host is down (a connection to a crashed server's next life waits
    // for it to come up): the sender's timer, armed when it left, sends it again.
    e.retransmit = true;
    const Duration rto = config_.network.tcp.rto(e.retransmissions, s.established);
    push(std::max(now_, Time(e.sent_at) + rto), slot);
    return false;
  }
  if (e.seq != s.expected) {
    // It overtook a segment still on its way: the receiver holds it until that one is in.
    const auto at =
        std::lower_bound(s.early.begin(), s.early.end(), std::make_pair(e.seq, std::uint32_t{0}));
    s.early.insert(at, {e.seq, slot});
    return false;
  }
  return admit(s, e);
}

bool Kernel::admit(Stream& s, Entry& e) {
  ++s.expected;
  s.established = true;
  e.step = Entry::StreamStep::admitted;
  // The segment that waited behind this one follows at once, and in turn releases the next: a
  // segment arriving meanwhile finds its place taken and waits too.
  if (!s.early.empty() && s.early.front().first == s.expected) {
    const std::uint32_t next = s.early.front().second;
    s.early.erase(s.early.begin());
    entries_[next].step = Entry::StreamStep::released;
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
  if (const auto back = stream_index_.find(stream_key(to, from)); back != stream_index_.end()) {
    end_stream(back->second);
  }
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
  DropReason reason{};
  bool dropped = false;
  if (!network_.link_up(from, to)) {
    dropped = true;
    reason = DropReason::cut_at_send;
  } else if (network_.draw_loss(network_rng_)) {
    dropped = true;
    reason = DropReason::loss;
  } else if (in_flight_ - (e.counts_in_flight ? 1 : 0) >= config_.limits.max_in_flight) {
    dropped = true;
    reason = DropReason::overload;
  }
  if (dropped) {
    emit_drop(e, from, to, reason);
    free_entry(slot);
    return false;
  }
  const bool duplicate = network_.draw_duplicate(network_rng_);
  if (!e.counts_in_flight) {  // held traffic was counted when it was held
    e.counts_in_flight = true;
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
    c.session = original.session;
    c.payload = original.payload;
    c.msg = original.msg;
    c.msg_id = original.msg_id;
    if (original.body != Entry::kNoBody) {
      Body copied = *bodies_[original.body];
      set_body(copy, std::move(copied.value));
    }
    c.counts_in_flight = true;
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
  entries_[slot].counts_in_flight = true;
  ++in_flight_;
  push(at, slot);
  return slot;
}

void Kernel::send_message(Proc& from, Endpoint to, const Message& message) {
  // What a handler sends after it wrote durable state leaves once the write is on disk.
  if (disks_take_time_ && from.durable.version() != from.handler_version) {
    const Time at = synced_at(from);
    if (at > now_) {
      if (const auto slot = hold(from, at, to)) {
        entries_[*slot].msg = message;
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

void Kernel::route_message(Proc& from, Endpoint to, const Message& message) {
  const std::uint64_t id = ++stats_.messages_sent;
  if (traced()) emit_now(events::msg_send(from.id, to, message.type, id));
  const std::uint32_t slot = new_entry(EntryKind::deliver, to);
  Entry& e = entries_[slot];
  e.peer = from.id;
  e.msg = message;
  e.msg_id = id;
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
  e.session = true;
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
