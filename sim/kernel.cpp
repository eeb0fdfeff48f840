// The event loop. Entries live in a slab; the queue (sim/event_queue.hpp) orders small (time,
// seq, slot) keys, so equal-time events run in insertion order and nothing depends on addresses.
// Cancelling a timer only marks it (ns-3); a stale entry is dropped when it surfaces. A paused
// process's entries are parked in order and re-queued at resume; a crash bumps the process's
// incarnation so its timers, held traffic and connections die. Every process, election node or
// server, goes through the same paths: the kernel has no code for any one of them. The faults are
// sim/kernel_faults.cpp, the traffic (datagrams, connections, held sends) sim/kernel_traffic.cpp,
// the private types they share sim/kernel_impl.hpp.
#include "sim/kernel.hpp"

#include <algorithm>
#include <limits>
#include <string>

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
  // Each group's nodes are one run of ids, the groups in order and covering every node: a node's
  // peers are its group's others, two spans of all_nodes_.
  std::vector<std::size_t> group_end;
  if (config_.groups.empty()) {
    group_bases_.push_back(0);
    group_end.push_back(config_.node_count);
    group_store_.push_back(&config_.node_servers.store);
  }
  for (const ElectionGroup& group : config_.groups) {
    const StoreClientConfig* store = &config_.node_servers.store;
    const auto find = [](const std::vector<StoreShard>& list, const std::string& name) {
      const auto it = std::find_if(list.begin(), list.end(),
                                   [&](const StoreShard& s) { return s.group == name; });
      ELECTSIM_ASSERT(it != list.end(), "an election group asks a store or a proxy the world has");
      return &it->client;
    };
    if (!group.store.empty()) store = find(config_.node_servers.store_shards, group.store);
    if (!group.via.empty()) store = find(config_.node_servers.proxies, group.via);
    group_store_.push_back(store);
    ELECTSIM_ASSERT(!group.nodes.empty(), "an election group has nodes");
    const NodeId first = group.nodes.front();
    ELECTSIM_ASSERT(static_cast<std::size_t>(first) == (group_end.empty() ? 0 : group_end.back()),
                    "the election groups follow one another in node order");
    for (std::size_t k = 0; k < group.nodes.size(); ++k) {
      ELECTSIM_ASSERT(group.nodes[k] == first + static_cast<NodeId>(k),
                      "an election group is one run of node ids");
    }
    group_bases_.push_back(first);
    group_end.push_back(static_cast<std::size_t>(first) + group.nodes.size());
  }
  ELECTSIM_ASSERT(group_end.back() == config_.node_count, "every node is in an election group");
  std::size_t largest = 0;
  for (std::size_t g = 0; g < group_bases_.size(); ++g) {
    largest = std::max(largest, group_end[g] - static_cast<std::size_t>(group_bases_[g]));
  }
  for (std::size_t i = 0; i < largest; ++i) local_ids_.push_back(static_cast<NodeId>(i));
  std::size_t group = 0;
  for (std::size_t i = 0; i < config_.node_count; ++i) {
    if (i >= group_end[group]) ++group;
    const auto id = static_cast<NodeId>(i);
    ClockConfig clock = i < config_.clocks.size() ? config_.clocks[i] : ClockConfig{};
    auto p = std::make_unique<Proc>(*this, id, make_clock(clock),
                                    Rng(config_.seed, StreamPurpose::node, i),
                                    Rng(config_.seed, StreamPurpose::workload, i),
                                    Rng(config_.seed, StreamPurpose::disk, 2 * i));
    const std::span<const NodeId> all(all_nodes_);
    const auto base = static_cast<std::size_t>(group_bases_[group]);
    p->peers = PeerSet(all.subspan(base, i - base), all.subspan(i + 1, group_end[group] - (i + 1)));
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
  entries_.reserve(1024);
}

Kernel::~Kernel() = default;

void Kernel::add_observer(Observer* observer) {
  observers_.push_back(observer);
}

const Kernel::Proc& Kernel::server_proc(Endpoint endpoint) const {
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

std::uint32_t Kernel::server_incarnation(Endpoint owner) const {
  return listens(owner) ? proc(owner).incarnation : 0;
}

void Kernel::release_parts(Entry& e) {
  if (e.body != Entry::kNoBody) {
    bodies_[e.body].value.reset();
    free_bodies_.push_back(e.body);
    e.body = Entry::kNoBody;
  }
  if (e.segment != Entry::kNoSegment) {
    free_segments_.push_back(e.segment);
    e.segment = Entry::kNoSegment;
  }
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
  auto stopped = config_.start_stopped.begin();
  for (std::size_t i = 0; i < config_.node_count; ++i) {
    const auto id = static_cast<NodeId>(i);
    while (stopped != config_.start_stopped.end() && *stopped < id) ++stopped;
    if (stopped != config_.start_stopped.end() && *stopped == id) {
      // Down from the start, as a stopped node is: no process until a restart makes one.
      if (traced()) emit_now(events::crash(id, true));
      continue;
    }
    start_process(*procs_[i]);
  }
}

inline void Kernel::deliver_message(std::uint32_t slot, const Entry& e, Proc& p) {
  ++stats_.messages_delivered;
  const Endpoint from = e.peer;
  const Message msg = e.msg();
  if (traced()) emit_now(events::msg_deliver(p.id, from, msg.type, e.payload));
  free_entry(slot);
  begin_handler(p);
  p.process->on_message(p.ctx, from, msg);
  end_handler(p);
}

void Kernel::run_until(Time t) {
  run_steps(t, std::numeric_limits<std::uint64_t>::max());
}

bool Kernel::run_steps(Time t, std::uint64_t max_steps) {
  ELECTSIM_ASSERT(started_, "start() before run_until()");
  const std::uint64_t limit = config_.limits.max_events;
  const std::uint64_t stop = stats_.events < limit && max_steps < limit - stats_.events
                                 ? stats_.events + max_steps
                                 : limit;
  while (queue_.ready(t.ns)) {
    if (stats_.events >= stop) {
      if (stats_.events >= limit) stats_.hit_event_limit = true;
      return false;
    }
    if ((stats_.events & 0xfff) == 0 && config_.limits.cancel != nullptr &&
        config_.limits.cancel->load(std::memory_order_relaxed)) {
      stats_.cancelled = true;
      return false;
    }
    const QueueKey key = queue_.pop();
    // In a storm of millions of queued entries, each one popped is a cache miss. A step of a
    // storm (a peer message) takes about as long as one miss, so the fetch of the entry eight
    // places on starts now, while this one is handled; the one after the next is asked for again
    // in case the bucket has just been split and the far fetch did not happen.
    if (const QueueKey* far = queue_.upcoming(7)) __builtin_prefetch(&entries_[far->slot()]);
    if (const QueueKey* soon = queue_.upcoming(1)) {
      __builtin_prefetch(&entries_[soon->slot()]);
      // Each fetch waits until what leads to it is in the cache, so nothing here stalls: the
      // next one's entry came a step ago, and its process record with it, so now its process
      // object (the handler's state) and its payload (whose address needs no load: bodies_ never
      // moves); the one after the next came with the far fetch, so now its process record.
      const Entry& next = entries_[queue_.upcoming(0)->slot()];
      if (next.node >= 0 && static_cast<std::size_t>(next.node) < procs_.size()) {
        __builtin_prefetch(procs_[static_cast<std::size_t>(next.node)]->process.get());
      }
      if (next.body != Entry::kNoBody) __builtin_prefetch(&bodies_[next.body]);
      const Entry& after = entries_[soon->slot()];
      if (after.node >= 0 && static_cast<std::size_t>(after.node) < procs_.size()) {
        __builtin_prefetch(procs_[static_cast<std::size_t>(after.node)].get());
      }
    }
    now_ = Time(key.time);
    current_order_ = key.order >> 24;
    ++stats_.events;
    // The common case first: a peer message (no payload, no connection) to a process that is up
    // and running, over a link that is not cut. Everything else is dispatched, which would
    // deliver it the same way.
    const std::uint32_t slot = key.slot();
    Entry& e = entries_[slot];
    if (e.kind == EntryKind::deliver && e.body == Entry::kNoBody &&
        e.segment == Entry::kNoSegment && !e.session()) [[likely]] {
      Proc& p = proc(e.node);
      if (p.up && !p.paused && network_.link_up(e.peer, e.node)) [[likely]] {
        deliver_message(slot, e, p);
        continue;
      }
    }
    dispatch(slot);
  }
  if (now_ < t) now_ = t;
  return true;
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
  if (traced()) emit_now(events::msg_drop(from, to, e.type, reason, e.payload));
}

void Kernel::dispatch_to_process(std::uint32_t slot, Entry& e) {
  if (e.kind == EntryKind::deliver && e.body != Entry::kNoBody &&
      bodies_[e.body].value.holds<TcpProbe>()) {
    answer_probe(slot, e);
    return;
  }
  if (e.kind == EntryKind::deliver && e.segment != Entry::kNoSegment &&
      segments_[e.segment].step != Segment::Step::admitted && !stream_arrival(slot, e)) {
    return;
  }
  Proc& p = proc(e.node);
  const bool session_bound = e.kind != EntryKind::deliver || e.session();
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
    TimerSlot& t = timers_[timer_slot(e.payload)];
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
      t.entry_at = t.due;
      push_in_order(t.due, t.seq, slot);  // an adopted entry: on to the timer's own place
      return;
    }
  }
  if (e.kind == EntryKind::deliver && e.segment == Entry::kNoSegment &&
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
        deliver_message(slot, e, p);
        return;
      }
      // The receiver handles the payload where it lies; its slot is freed after the call.
      const std::uint32_t body = e.body;
      const auto from_incarnation = static_cast<std::uint32_t>(e.payload);
      e.body = Entry::kNoBody;
      free_entry(slot);
      Payload& payload = bodies_[body].value;
      begin_handler(p);
      process.on_payload(p.ctx, from, from_incarnation, std::move(payload));
      end_handler(p);
      payload.reset();
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
        const Message msg = e.msg();
        free_entry(slot);
        route_message(p, to, msg);
        return;
      }
      // The payload leaves its sender now; from here it is the network's, on a connection to the
      // incarnation it answers (payload - 1), or else to the receiver's current one.
      e.kind = EntryKind::deliver;
      e.set_session(true);
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
  const std::int64_t connection = bodies_[e.body].value.get<TcpProbe>().connection;
  const bool reset = e.incarnation != p.incarnation;
  const bool cut = network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
                   !network_.link_up(server, p.id);
  free_entry(slot);
  if (!p.up || cut) return;
  const std::uint32_t answer = new_entry(EntryKind::deliver, server);
  Entry& a = entries_[answer];
  a.peer = p.id;
  a.set_session(true);
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
    // The node's group: the last whose first node is at or below it.
    const auto group =
        static_cast<std::size_t>(std::upper_bound(group_bases_.begin(), group_bases_.end(), p.id) -
                                 group_bases_.begin() - 1);
    const NodeId base = group_bases_[group];
    const NodeId end = group + 1 < group_bases_.size() ? group_bases_[group + 1]
                                                       : static_cast<NodeId>(config_.node_count);
    const NodeGroup node_group{
        base, static_cast<std::uint32_t>(group),
        std::span<const NodeId>(local_ids_).first(static_cast<std::size_t>(end - base))};
    auto adapter = std::make_unique<ProtocolProcess>(std::move(protocol), &config_.node_servers,
                                                     group_store_[group], node_group);
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
  for (std::uint32_t slot : parked) {
    // A timer's entry surfaces again now: an orphan made of it (a handler that runs first may
    // cancel the timer) is taken at this time.
    const Entry& e = entries_[slot];
    if (e.kind == EntryKind::timer) {
      TimerSlot& t = timers_[timer_slot(e.payload)];
      if (t.armed && t.generation == timer_generation(e.payload)) t.entry_at = now_.ns;
    }
    push(now_, slot);
  }
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
  const std::uint32_t index = take_slot(free_timers_, timers_);
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
    t.entry_at = p.orphans[i].at;
    p.orphans[i] = p.orphans.back();
    p.orphans.pop_back();
    return id;
  }
  const std::uint32_t slot = new_entry(EntryKind::timer, p.id);
  entries_[slot].payload = id;
  t.entry = slot;
  t.entry_at = due;
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
  if (p.orphans.size() < Proc::kOrphansMax) p.orphans.push_back({t.entry, t.entry_at});
}

bool Kernel::timer_fires_by(const Proc& p, TimerId id, Duration after_local) const {
  if (id == kNoTimer) return false;
  const std::uint32_t index = timer_slot(id);
  if (index >= timers_.size()) return false;
  const TimerSlot& t = timers_[index];
  if (!t.armed || t.generation != timer_generation(id)) return false;
  return t.due <= (now_ + p.clock.true_duration_for(after_local)).ns;
}

}  // namespace electsim::sim
