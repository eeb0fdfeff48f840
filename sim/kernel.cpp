// The event loop. Entries live in a slab; the heap orders small (time, seq, slot) keys, so
// equal-time events run in insertion order and nothing depends on addresses. Cancelling a timer
// only marks it (ns-3); a stale entry is dropped when it surfaces. A paused endpoint's entries are
// parked in order and re-queued at resume; a crash bumps the node's incarnation so its timers and
// replies die.
#include "sim/kernel.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <variant>

#include "sim/assert.hpp"

namespace electsim::sim {

enum class Kernel::EntryKind : std::uint8_t {
  message,       // node: to, peer: from, msg
  timer,         // node, payload: TimerId
  store_arrive,  // node: sender, body: StoreRequest
  store_reply,   // node: receiver, body: StoreReply
  watch_arrive,  // node: receiver, body: WatchEvent
  sink_send,     // node: writer, body: SinkWrite (leaves the writer when it surfaces)
  sink_arrive,   // node: writer, body: SinkWrite
  sink_reply,    // node: receiver, body: SinkReply
  command,       // node, payload: Command
  fault,         // payload: fault index
  fault_end,     // payload: fault index (restart, heal, end of a window)
  node_resume,   // node, payload: pause generation
  store_resume,  // payload: store pause generation
  store_expiry,  // a scheduled lease-expiry check
  store_scan,    // periodic expiry scan (expiry_scan_interval > 0)
};

namespace {
struct SinkWrite {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
};

constexpr TimerId make_timer_id(std::uint32_t slot, std::uint32_t generation) {
  return (static_cast<TimerId>(generation) << 32) | (static_cast<TimerId>(slot) + 1);
}
constexpr std::uint32_t timer_slot(TimerId id) {
  return static_cast<std::uint32_t>((id & 0xffff'ffffu) - 1);
}
constexpr std::uint32_t timer_generation(TimerId id) {
  return static_cast<std::uint32_t>(id >> 32);
}

bool earlier(const auto& a, const auto& b) {
  return a.time != b.time ? a.time < b.time : a.order < b.order;
}
}  // namespace

struct Kernel::Entry {
  EntryKind kind = EntryKind::message;
  NodeId node = kNoNode;
  Endpoint peer = kNoNode;
  std::uint32_t incarnation = 0;  // of `node` when queued, for replies that die with a crash
  bool counts_in_flight = false;
  std::uint64_t payload = 0;
  std::uint32_t body = kNoBody;  // index into bodies_ for store and sink traffic
  std::int64_t queued_at = 0;    // the time it is queued for
  Message msg;
  static constexpr std::uint32_t kNoBody = UINT32_MAX;
};

struct Kernel::Body {
  std::variant<std::monostate, StoreRequest, StoreReply, WatchEvent, SinkWrite, SinkReply> value;
};

template <typename T>
void Kernel::set_body(std::uint32_t slot, T&& value) {
  Entry& e = entries_[slot];
  if (e.body == Entry::kNoBody) {
    if (!free_bodies_.empty()) {
      e.body = free_bodies_.back();
      free_bodies_.pop_back();
    } else {
      e.body = static_cast<std::uint32_t>(bodies_.size());
      bodies_.emplace_back();
    }
  }
  bodies_[e.body].value = std::forward<T>(value);
}

template <typename T>
T& Kernel::body_of(std::uint32_t slot) {
  return std::get<T>(bodies_[entries_[slot].body].value);
}

class Kernel::NodeContext final : public Context {
 public:
  NodeContext(Kernel& kernel, Node& node) : kernel_(kernel), node_(node) {}
  NodeId self() const override;
  std::span<const NodeId> peers() const override;
  std::size_t cluster_size() const override { return kernel_.config_.node_count; }
  LocalTime now() const override;
  void send(NodeId to, const Message& message) override;
  void broadcast(const Message& message) override;
  TimerId set_timer(Duration after_local, TimerTag tag) override;
  void cancel_timer(TimerId id) override;
  Rng& rng() override;
  Rng& workload_rng() override;
  DurableState& durable() override;
  RequestId store(StoreRequest request) override;
  RequestId sink_write(Token token, std::int64_t payload, Duration send_delay) override;
  void announce(const Belief& belief) override;

 private:
  Kernel& kernel_;
  Node& node_;
};

struct Kernel::Node {
  NodeId id = kNoNode;
  bool up = false;
  bool paused = false;
  std::uint32_t incarnation = 0;
  std::uint32_t pause_generation = 0;
  Time paused_until;
  std::unique_ptr<Protocol> protocol;
  ClockModel clock;
  DurableState durable;
  Belief belief;
  bool has_belief = false;
  Rng rng;
  Rng workload_rng;
  std::vector<NodeId> peers;
  std::deque<std::uint32_t> parked;  // entries that came due during a pause, in order
  std::size_t armed_timers = 0;
  // Queued entries of cancelled timers, with their queue times. Resetting a timer (cancel, then
  // set a later one) adopts such an entry instead of queueing another: the entry surfaces at its
  // old time and is re-queued at the new one with the sequence the new timer got when it was set,
  // so the order of events is exactly as if it had been queued then.
  struct Orphan {
    std::uint32_t entry;
    std::int64_t at;
  };
  static constexpr std::size_t kOrphansMax = 4;
  std::vector<Orphan> orphans;
  NodeContext ctx;

  Node(Kernel& kernel, NodeId self, std::uint64_t seed, ClockModel clock_model)
      : id(self),
        clock(std::move(clock_model)),
        rng(seed, StreamPurpose::node, static_cast<std::uint64_t>(self)),
        workload_rng(seed, StreamPurpose::workload, static_cast<std::uint64_t>(self)),
        ctx(kernel, *this) {}
};

// ---- Context
// -------------------------------------------------------------------------------------

NodeId Kernel::NodeContext::self() const {
  return node_.id;
}
std::span<const NodeId> Kernel::NodeContext::peers() const {
  return node_.peers;
}
LocalTime Kernel::NodeContext::now() const {
  return node_.clock.local_at(kernel_.now_);
}
void Kernel::NodeContext::send(NodeId to, const Message& message) {
  ELECTSIM_ASSERT(to >= 0 && static_cast<std::size_t>(to) < kernel_.config_.node_count,
                  "messages go to configured nodes");
  ELECTSIM_ASSERT(to != node_.id, "a node does not message itself");
  kernel_.send_message(node_, to, message);
}
void Kernel::NodeContext::broadcast(const Message& message) {
  for (NodeId peer : node_.peers) kernel_.send_message(node_, peer, message);
}
TimerId Kernel::NodeContext::set_timer(Duration after_local, TimerTag tag) {
  return kernel_.arm_timer(node_, after_local, tag);
}
void Kernel::NodeContext::cancel_timer(TimerId id) {
  kernel_.cancel_timer(node_, id);
}
Rng& Kernel::NodeContext::rng() {
  return node_.rng;
}
Rng& Kernel::NodeContext::workload_rng() {
  return node_.workload_rng;
}
DurableState& Kernel::NodeContext::durable() {
  return node_.durable;
}
RequestId Kernel::NodeContext::store(StoreRequest request) {
  return kernel_.send_store_request(node_, std::move(request));
}
RequestId Kernel::NodeContext::sink_write(Token token, std::int64_t payload, Duration send_delay) {
  return kernel_.send_sink_write(node_, token, payload, send_delay);
}
void Kernel::NodeContext::announce(const Belief& belief) {
  kernel_.announce(node_, belief);
}

// ---- Construction
// --------------------------------------------------------------------------------

namespace {
ClockModel make_clock(const ClockConfig& c) {
  return ClockModel(c.offset, c.drift_ppb, c.steps);
}
}  // namespace

Kernel::Kernel(WorldConfig config, ProtocolFactory factory)
    : config_(std::move(config)),
      factory_(std::move(factory)),
      network_(config_.node_count, config_.network),
      network_rng_(config_.seed, StreamPurpose::network, 0),
      faults_rng_(config_.seed, StreamPurpose::faults, 0),
      store_(config_.store),
      store_clock_(make_clock(config_.store_clock)),
      sink_(config_.sink),
      faults_(config_.faults) {
  ELECTSIM_ASSERT(config_.node_count > 0, "a world has at least one node");
  nodes_.reserve(config_.node_count);
  for (std::size_t i = 0; i < config_.node_count; ++i) {
    const auto id = static_cast<NodeId>(i);
    ClockConfig clock = i < config_.clocks.size() ? config_.clocks[i] : ClockConfig{};
    nodes_.push_back(std::make_unique<Node>(*this, id, config_.seed, make_clock(clock)));
    all_nodes_.push_back(id);
  }
  for (auto& node : nodes_) {
    for (NodeId other : all_nodes_) {
      if (other != node->id) node->peers.push_back(other);
    }
  }
  fault_state_.resize(faults_.size());
  heap_.reserve(1024);
  entries_.reserve(1024);
}

Kernel::~Kernel() = default;

void Kernel::add_observer(Observer* observer) {
  observers_.push_back(observer);
}

// ---- Queue
// ---------------------------------------------------------------------------------------

std::uint32_t Kernel::new_entry(EntryKind kind, NodeId node) {
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
  e.node = node;
  e.peer = kNoNode;
  e.incarnation = node >= 0 ? nodes_[static_cast<std::size_t>(node)]->incarnation : 0;
  e.counts_in_flight = false;
  e.payload = 0;
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
    bodies_[e.body].value = std::monostate{};
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

void Kernel::emit_simple(EventKind kind, NodeId node, std::int64_t a, std::uint16_t code) {
  if (observers_.empty()) return;
  Event ev;
  ev.time = now_;
  ev.kind = kind;
  ev.node = node;
  ev.a = a;
  ev.code = code;
  emit(ev);
}

// ---- Running
// -------------------------------------------------------------------------------------

void Kernel::start() {
  ELECTSIM_ASSERT(!started_, "a kernel starts once");
  started_ = true;
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::run_start;
    ev.a = static_cast<std::int64_t>(config_.node_count);
    ev.b = static_cast<std::int64_t>(config_.seed);
    emit(ev);
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
  if (config_.store.expiry_scan_interval.count() > 0) {
    push(now_ + store_clock_.true_duration_for(config_.store.expiry_scan_interval),
         new_entry(EntryKind::store_scan, kNoNode));
  }
  for (NodeId id : all_nodes_) start_node(id);
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
  emit_simple(EventKind::run_end, kNoNode);
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
    case EntryKind::message:
    case EntryKind::timer:
    case EntryKind::store_reply:
    case EntryKind::watch_arrive:
    case EntryKind::sink_reply:
    case EntryKind::sink_send:
    case EntryKind::command:
      dispatch_to_node(slot, e);
      return;
    case EntryKind::store_arrive:
    case EntryKind::store_expiry:
    case EntryKind::store_scan:
      if (store_paused_) {
        store_parked_.push_back(slot);
        return;
      }
      if (e.kind == EntryKind::store_arrive) {
        store_arrive(slot);
      } else {
        const bool scan = e.kind == EntryKind::store_scan;
        if (!scan && store_expiry_at_ && *store_expiry_at_ == now_) store_expiry_at_.reset();
        store_out_.clear();
        store_.expire_leases(store_clock_.local_at(now_), store_out_);
        store_emit_output(kNoNode);
        if (scan) {
          push(now_ + store_clock_.true_duration_for(config_.store.expiry_scan_interval),
               new_entry(EntryKind::store_scan, kNoNode));
        } else {
          schedule_store_expiry();
        }
      }
      free_entry(slot);
      return;
    case EntryKind::sink_arrive:
      sink_arrive(slot);
      free_entry(slot);
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
    case EntryKind::node_resume: {
      Node& node = *nodes_[static_cast<std::size_t>(e.node)];
      const bool current = node.paused && e.payload == node.pause_generation;
      const NodeId id = e.node;
      free_entry(slot);
      if (current) resume_node(id);
      return;
    }
    case EntryKind::store_resume: {
      const bool current = store_paused_ && e.payload == store_pause_generation_;
      free_entry(slot);
      if (current) resume_store();
      return;
    }
  }
}

void Kernel::dispatch_to_node(std::uint32_t slot, Entry& e) {
  Node& node = *nodes_[static_cast<std::size_t>(e.node)];
  const bool session_bound = e.kind != EntryKind::message;
  if (!node.up || (session_bound && e.incarnation != node.incarnation)) {
    // A crashed node receives nothing; replies, watches and timers of an earlier incarnation died
    // with its connections.
    if (e.kind == EntryKind::message && !observers_.empty()) {
      Event ev;
      ev.time = now_;
      ev.kind = EventKind::msg_drop;
      ev.node = e.peer;
      ev.peer = e.node;
      ev.code = e.msg.type;
      ev.a = static_cast<std::int64_t>(DropReason::node_down);
      emit(ev);
    }
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
    // A cancelled timer is dropped here, without waking a paused node.
    const TimerSlot& t = timers_[timer_slot(e.payload)];
    if (!t.armed || t.generation != timer_generation(e.payload)) {
      auto& orphans = node.orphans;
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
  if (e.kind == EntryKind::message &&
      network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
      !network_.link_up(e.peer, e.node)) {
    if (!observers_.empty()) {
      Event ev;
      ev.time = now_;
      ev.kind = EventKind::msg_drop;
      ev.node = e.peer;
      ev.peer = e.node;
      ev.code = e.msg.type;
      ev.a = static_cast<std::int64_t>(DropReason::cut_on_arrival);
      emit(ev);
    }
    free_entry(slot);
    return;
  }
  if (node.paused) {
    node.parked.push_back(slot);
    return;
  }
  Protocol& protocol = *node.protocol;
  switch (e.kind) {
    case EntryKind::message: {
      ++stats_.messages_delivered;
      const Message msg = e.msg;
      const NodeId from = e.peer;
      if (!observers_.empty()) {
        Event ev;
        ev.time = now_;
        ev.kind = EventKind::msg_deliver;
        ev.node = node.id;
        ev.peer = from;
        ev.code = msg.type;
        emit(ev);
      }
      free_entry(slot);
      protocol.on_message(node.ctx, from, msg);
      return;
    }
    case EntryKind::timer: {
      const TimerId id = e.payload;
      TimerSlot& t = timers_[timer_slot(id)];
      const TimerTag tag = t.tag;
      t.armed = false;
      ++t.generation;
      free_timers_.push_back(timer_slot(id));
      --node.armed_timers;
      ++stats_.timers_fired;
      free_entry(slot);
      emit_simple(EventKind::timer_fire, node.id, static_cast<std::int64_t>(tag));
      protocol.on_timer(node.ctx, id, tag);
      return;
    }
    case EntryKind::store_reply: {
      const StoreReply reply = std::move(body_of<StoreReply>(slot));
      free_entry(slot);
      if (!observers_.empty()) {
        Event ev;
        ev.time = now_;
        ev.kind = EventKind::store_reply;
        ev.node = node.id;
        ev.code = static_cast<std::uint16_t>(reply.op);
        ev.a = reply.revision;
        ev.b = reply.succeeded ? 1 : 0;
        ev.c = static_cast<std::int64_t>(reply.error);
        emit(ev);
      }
      protocol.on_store_reply(node.ctx, reply);
      return;
    }
    case EntryKind::watch_arrive: {
      const WatchEvent watch = std::move(body_of<WatchEvent>(slot));
      free_entry(slot);
      if (!observers_.empty()) {
        Event ev;
        ev.time = now_;
        ev.kind = EventKind::watch_notify;
        ev.node = node.id;
        ev.code = watch.kind == WatchEvent::Kind::put ? 0 : 1;
        ev.a = watch.revision;
        ev.text = watch.kv.key;
        emit(ev);
      }
      protocol.on_watch(node.ctx, watch);
      return;
    }
    case EntryKind::sink_reply: {
      const SinkReply reply = body_of<SinkReply>(slot);
      free_entry(slot);
      if (!observers_.empty()) {
        Event ev;
        ev.time = now_;
        ev.kind = EventKind::sink_reply;
        ev.node = node.id;
        ev.a = reply.token;
        ev.c = reply.accepted ? 1 : 0;
        emit(ev);
      }
      protocol.on_sink_reply(node.ctx, reply);
      return;
    }
    case EntryKind::sink_send: {
      // The write leaves the writer now; from here it is the network's.
      e.kind = EntryKind::sink_arrive;
      route(node.id, kSinkEndpoint, slot);
      return;
    }
    case EntryKind::command: {
      const auto command = static_cast<Command>(e.payload);
      free_entry(slot);
      protocol.on_command(node.ctx, command);
      if (command == Command::stop) crash_node(node.id, /*graceful=*/true);
      return;
    }
    default:
      ELECTSIM_ASSERT(false, "node entries only");
  }
}

// ---- Nodes
// ---------------------------------------------------------------------------------------

const Belief& Kernel::belief(NodeId node) const {
  return nodes_.at(static_cast<std::size_t>(node))->belief;
}
bool Kernel::node_up(NodeId node) const {
  return nodes_.at(static_cast<std::size_t>(node))->up;
}
bool Kernel::node_paused(NodeId node) const {
  return nodes_.at(static_cast<std::size_t>(node))->paused;
}
LocalTime Kernel::local_now(NodeId node) const {
  return nodes_.at(static_cast<std::size_t>(node))->clock.local_at(now_);
}
Protocol* Kernel::protocol(NodeId node) {
  return nodes_.at(static_cast<std::size_t>(node))->protocol.get();
}

void Kernel::start_node(NodeId id) {
  Node& node = *nodes_[static_cast<std::size_t>(id)];
  node.up = true;
  node.paused = false;
  node.has_belief = false;
  node.belief = Belief{};
  node.protocol = factory_(id);
  ELECTSIM_ASSERT(node.protocol != nullptr, "the factory makes a protocol for every node");
  node.protocol->on_start(node.ctx);
}

void Kernel::crash_node(NodeId id, bool graceful) {
  Node& node = *nodes_[static_cast<std::size_t>(id)];
  if (!node.up) return;
  node.up = false;
  node.paused = false;
  ++node.pause_generation;
  ++node.incarnation;  // queued timers and replies of this life are dropped when they surface
  node.armed_timers = 0;
  for (std::uint32_t slot : node.parked) {
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
  node.parked.clear();
  node.orphans.clear();
  node.protocol.reset();
  node.has_belief = false;
  node.belief = Belief{};
  store_.drop_watches_of(id);
  emit_simple(EventKind::crash, id, graceful ? 1 : 0);
}

void Kernel::restart_node(NodeId id) {
  Node& node = *nodes_[static_cast<std::size_t>(id)];
  if (node.up) return;
  emit_simple(EventKind::restart, id);
  start_node(id);
}

void Kernel::pause_node(NodeId id, Duration d) {
  Node& node = *nodes_[static_cast<std::size_t>(id)];
  if (!node.up) return;
  const Time until = now_ + d;
  if (node.paused && until <= node.paused_until) return;  // already frozen for longer
  node.paused = true;
  node.paused_until = until;
  ++node.pause_generation;
  const std::uint32_t slot = new_entry(EntryKind::node_resume, id);
  entries_[slot].payload = node.pause_generation;
  push(until, slot);
  emit_simple(EventKind::pause, id, d.count());
}

void Kernel::resume_node(NodeId id) {
  Node& node = *nodes_[static_cast<std::size_t>(id)];
  node.paused = false;
  emit_simple(EventKind::resume, id);
  // Everything that came due during the pause runs now, in the order it came due.
  std::deque<std::uint32_t> parked;
  parked.swap(node.parked);
  for (std::uint32_t slot : parked) push(now_, slot);
}

void Kernel::announce(Node& node, const Belief& belief) {
  if (node.has_belief && node.belief == belief) return;
  node.has_belief = true;
  node.belief = belief;
  if (observers_.empty()) return;
  Event ev;
  ev.time = now_;
  ev.kind = EventKind::belief;
  ev.node = node.id;
  ev.code = static_cast<std::uint16_t>(belief.role);
  ev.a = belief.epoch;
  ev.b = belief.known_leader;
  emit(ev);
}

TimerId Kernel::arm_timer(Node& node, Duration after_local, TimerTag tag) {
  ELECTSIM_ASSERT(after_local.count() >= 0, "timers are set for non-negative durations");
  ELECTSIM_ASSERT(node.armed_timers < config_.limits.max_timers_per_node,
                  "a node keeps at most limits.max_timers_per_node timers armed");
  std::uint32_t index;
  if (!free_timers_.empty()) {
    index = free_timers_.back();
    free_timers_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(timers_.size());
    timers_.emplace_back();
  }
  const std::int64_t due = (now_ + node.clock.true_duration_for(after_local)).ns;
  const std::uint64_t seq = next_seq_++;
  TimerSlot& t = timers_[index];
  t.armed = true;
  t.tag = tag;
  t.due = due;
  t.seq = seq;
  ++node.armed_timers;
  const TimerId id = make_timer_id(index, t.generation);
  for (std::size_t i = 0; i < node.orphans.size(); ++i) {
    if (node.orphans[i].at > due) continue;
    t.entry = node.orphans[i].entry;
    entries_[t.entry].payload = id;
    node.orphans[i] = node.orphans.back();
    node.orphans.pop_back();
    return id;
  }
  const std::uint32_t slot = new_entry(EntryKind::timer, node.id);
  entries_[slot].payload = id;
  t.entry = slot;
  push_in_order(due, seq, slot);
  return id;
}

void Kernel::cancel_timer(Node& node, TimerId id) {
  if (id == kNoTimer) return;
  const std::uint32_t index = timer_slot(id);
  if (index >= timers_.size()) return;
  TimerSlot& t = timers_[index];
  if (!t.armed || t.generation != timer_generation(id)) return;
  t.armed = false;
  ++t.generation;
  free_timers_.push_back(index);
  --node.armed_timers;
  if (node.orphans.size() < Node::kOrphansMax)
    node.orphans.push_back({t.entry, entries_[t.entry].queued_at});
}

// ---- Traffic
// -------------------------------------------------------------------------------------

bool Kernel::route(Endpoint from, Endpoint to, std::uint32_t slot) {
  Entry& e = entries_[slot];
  DropReason reason{};
  bool dropped = false;
  if (!network_.link_up(from, to)) {
    dropped = true;
    reason = DropReason::cut_at_send;
  } else if (network_.draw_loss(network_rng_)) {
    dropped = true;
    reason = DropReason::loss;
  } else if (in_flight_ >= config_.limits.max_in_flight) {
    dropped = true;
    reason = DropReason::overload;
  }
  if (dropped) {
    if (e.kind == EntryKind::message && !observers_.empty()) {
      Event ev;
      ev.time = now_;
      ev.kind = EventKind::msg_drop;
      ev.node = from;
      ev.peer = to;
      ev.code = e.msg.type;
      ev.a = static_cast<std::int64_t>(reason);
      emit(ev);
    }
    free_entry(slot);
    return false;
  }
  const bool duplicate = network_.draw_duplicate(network_rng_);
  e.counts_in_flight = true;
  ++in_flight_;
  push(now_ + network_.sample_latency(from, to, network_rng_), slot);
  if (duplicate && in_flight_ < config_.limits.max_in_flight) {
    const std::uint32_t copy = new_entry(e.kind, kNoNode);
    Entry& c = entries_[copy];
    const Entry& original = entries_[slot];  // re-read: new_entry may have grown the slab
    c.node = original.node;
    c.peer = original.peer;
    c.incarnation = original.incarnation;
    c.payload = original.payload;
    c.msg = original.msg;
    if (original.body != Entry::kNoBody) {
      Body copied = bodies_[original.body];
      set_body(copy, std::move(copied.value));
    }
    c.counts_in_flight = true;
    ++in_flight_;
    push(now_ + network_.sample_latency(from, to, network_rng_), copy);
  }
  return true;
}

void Kernel::send_message(Node& from, NodeId to, const Message& message) {
  ++stats_.messages_sent;
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::msg_send;
    ev.node = from.id;
    ev.peer = to;
    ev.code = message.type;
    emit(ev);
  }
  const std::uint32_t slot = new_entry(EntryKind::message, to);
  Entry& e = entries_[slot];
  e.peer = from.id;
  e.msg = message;
  route(from.id, to, slot);
}

RequestId Kernel::send_store_request(Node& from, StoreRequest request) {
  const RequestId id = next_request_++;
  request.id = id;
  emit_simple(EventKind::store_request, from.id, static_cast<std::int64_t>(id),
              static_cast<std::uint16_t>(request.op));
  const std::uint32_t slot = new_entry(EntryKind::store_arrive, from.id);
  set_body(slot, std::move(request));
  route(from.id, kStoreEndpoint, slot);
  return id;
}

RequestId Kernel::send_sink_write(Node& from, Token token, std::int64_t payload,
                                  Duration send_delay) {
  ELECTSIM_ASSERT(send_delay.count() >= 0, "a send delay is never negative");
  const RequestId id = next_request_++;
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::sink_send;
    ev.node = from.id;
    ev.a = token;
    ev.b = payload;
    ev.c = send_delay.count();
    emit(ev);
  }
  if (send_delay.count() == 0) {
    const std::uint32_t slot = new_entry(EntryKind::sink_arrive, from.id);
    set_body(slot, SinkWrite{id, token, payload});
    route(from.id, kSinkEndpoint, slot);
    return id;
  }
  // Still inside the writer: a node-bound entry, so a pause parks it and a crash drops it.
  const std::uint32_t slot = new_entry(EntryKind::sink_send, from.id);
  set_body(slot, SinkWrite{id, token, payload});
  push(now_ + from.clock.true_duration_for(send_delay), slot);
  return id;
}

void Kernel::store_arrive(std::uint32_t slot) {
  Entry& e = entries_[slot];
  const NodeId from = e.node;
  if (network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
      !network_.link_up(from, kStoreEndpoint)) {
    return;  // the caller frees the entry
  }
  const StoreRequest& request = body_of<StoreRequest>(slot);
  store_out_.clear();
  StoreReply reply = store_.apply(from, request, store_clock_.local_at(now_), store_out_);
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::store_apply;
    ev.node = from;
    ev.code = static_cast<std::uint16_t>(request.op);
    ev.a = reply.revision;
    ev.b = reply.succeeded && reply.error == StoreError::none ? 1 : 0;
    ev.c = reply.lease;
    ev.d = static_cast<std::int64_t>(request.id);
    emit(ev);
  }
  // The reply belongs to the connection of the incarnation that sent the request.
  const std::uint32_t incarnation = e.incarnation;
  store_emit_output(from);
  const std::uint32_t reply_slot = new_entry(EntryKind::store_reply, from);
  entries_[reply_slot].incarnation = incarnation;
  set_body(reply_slot, std::move(reply));
  route(kStoreEndpoint, from, reply_slot);
  schedule_store_expiry();
}

void Kernel::store_emit_output(NodeId /*requester*/) {
  if (!observers_.empty()) {
    for (const StoreChange& change : store_out_.changes) {
      Event ev;
      ev.time = now_;
      ev.kind = EventKind::store_change;
      ev.code = change.kind == WatchEvent::Kind::put ? 0 : 1;
      ev.a = change.revision;
      ev.b = change.lease;
      ev.c = change.by_lease_expiry ? 1 : 0;
      ev.text = change.key;
      NodeId owner = kNoNode;
      if (change.kind == WatchEvent::Kind::put) {
        const char* begin = change.value.data();
        const char* end = begin + change.value.size();
        auto [ptr, ec] = std::from_chars(begin, end, owner);
        if (ec != std::errc{} || ptr != end || owner < 0 ||
            static_cast<std::size_t>(owner) >= config_.node_count) {
          owner = kNoNode;
        }
      }
      ev.node = owner;
      emit(ev);
    }
    for (LeaseId lease : store_out_.expired_leases) {
      emit_simple(EventKind::lease_expire, kNoNode, lease);
    }
  }
  for (WatchNotification& n : store_out_.notifications) {
    const std::uint32_t slot = new_entry(EntryKind::watch_arrive, n.to);
    set_body(slot, std::move(n.event));
    route(kStoreEndpoint, n.to, slot);
  }
}

void Kernel::schedule_store_expiry() {
  if (config_.store.expiry_scan_interval.count() > 0) return;  // scans find expiries
  const std::optional<LocalTime> deadline = store_.next_lease_deadline();
  if (!deadline) return;
  const LocalTime local_now = store_clock_.local_at(now_);
  const Duration wait = *deadline > local_now ? *deadline - local_now : Duration(0);
  const Time at = now_ + store_clock_.true_duration_for(wait);
  if (store_expiry_at_ && *store_expiry_at_ <= at) return;
  store_expiry_at_ = at;
  push(at, new_entry(EntryKind::store_expiry, kNoNode));
}

void Kernel::sink_arrive(std::uint32_t slot) {
  Entry& e = entries_[slot];
  const NodeId writer = e.node;
  if (network_.in_flight() == InFlightPolicy::drop_if_cut_on_arrival &&
      !network_.link_up(writer, kSinkEndpoint)) {
    return;
  }
  const SinkWrite write = body_of<SinkWrite>(slot);
  const Token highest_before = sink_.highest_accepted();
  SinkReply reply = sink_.write(now_, writer, write.id, write.token, write.payload);
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::sink_write;
    ev.node = writer;
    ev.a = write.token;
    ev.b = write.payload;
    ev.c = reply.accepted ? 1 : 0;
    ev.d = highest_before;
    emit(ev);
  }
  const std::uint32_t incarnation = e.incarnation;
  const std::uint32_t reply_slot = new_entry(EntryKind::sink_reply, writer);
  entries_[reply_slot].incarnation = incarnation;
  set_body(reply_slot, reply);
  route(kSinkEndpoint, writer, reply_slot);
}

void Kernel::pause_store(Duration d) {
  const Time until = now_ + d;
  if (store_paused_ && until <= store_paused_until_) return;
  store_paused_ = true;
  store_paused_until_ = until;
  ++store_pause_generation_;
  const std::uint32_t slot = new_entry(EntryKind::store_resume, kNoNode);
  entries_[slot].payload = store_pause_generation_;
  push(until, slot);
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::store_pause;
    ev.node = kStoreEndpoint;
    ev.a = d.count();
    emit(ev);
  }
}

void Kernel::resume_store() {
  store_paused_ = false;
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::store_resume;
    ev.node = kStoreEndpoint;
    emit(ev);
  }
  std::deque<std::uint32_t> parked;
  parked.swap(store_parked_);
  for (std::uint32_t slot : parked) push(now_, slot);
}

// ---- Faults
// --------------------------------------------------------------------------------------

std::optional<NodeId> Kernel::resolve_target(const Target& target) {
  switch (target.kind) {
    case TargetKind::none:
    case TargetKind::store:
      return std::nullopt;
    case TargetKind::node:
      return target.node;
    case TargetKind::leader: {
      // The leader with the newest epoch; ties go to the lowest id.
      std::optional<NodeId> best;
      for (const auto& node : nodes_) {
        if (!node->up || node->belief.role != Role::leader || !node->has_belief) continue;
        if (!best || node->belief.epoch > nodes_[static_cast<std::size_t>(*best)]->belief.epoch) {
          best = node->id;
        }
      }
      return best;
    }
    case TargetKind::follower:
    case TargetKind::random: {
      std::vector<NodeId> candidates;
      for (const auto& node : nodes_) {
        if (!node->up) continue;
        if (target.kind == TargetKind::follower && node->has_belief &&
            node->belief.role == Role::leader) {
          continue;
        }
        candidates.push_back(node->id);
      }
      if (candidates.empty()) return std::nullopt;
      return candidates[faults_rng_.below(candidates.size())];
    }
  }
  return std::nullopt;
}

namespace {
void append_endpoint(std::string& out, Endpoint e) {
  if (e == kStoreEndpoint) {
    out += "store";
  } else if (e == kSinkEndpoint) {
    out += "sink";
  } else {
    out += std::to_string(e);
  }
}

bool needs_node(FaultKind kind) {
  switch (kind) {
    case FaultKind::crash:
    case FaultKind::restart:
    case FaultKind::pause:
    case FaultKind::isolate:
    case FaultKind::step_down:
    case FaultKind::stop:
      return true;
    default:
      return false;
  }
}
}  // namespace

ClockModel* Kernel::clock_of(const Target& target, std::optional<NodeId> node) {
  if (target.kind == TargetKind::store) return &store_clock_;
  if (!node) return nullptr;
  return &nodes_[static_cast<std::size_t>(*node)]->clock;
}

// Replaces role members of partition groups by the nodes they stand for now: the leader first,
// then followers (never the leader, never a node already named), then the rest.
std::optional<std::vector<std::vector<Endpoint>>> Kernel::resolve_groups(
    const std::vector<std::vector<Endpoint>>& groups) {
  std::vector<std::vector<Endpoint>> out(groups.size());
  std::vector<bool> named(config_.node_count, false);
  for (const auto& group : groups) {
    for (Endpoint e : group) {
      if (e >= 0) named[static_cast<std::size_t>(e)] = true;
    }
  }
  const std::optional<NodeId> leader = resolve_target({TargetKind::leader, kNoNode});
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Endpoint e : groups[g]) {
      if (e != kLeaderMember) continue;
      if (!leader || named[static_cast<std::size_t>(*leader)]) return std::nullopt;
      named[static_cast<std::size_t>(*leader)] = true;
      out[g].push_back(*leader);
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Endpoint e : groups[g]) {
      if (e == kLeaderMember || e == kRestMember) continue;
      if (e != kFollowerMember) {
        out[g].push_back(e);
        continue;
      }
      std::vector<NodeId> candidates;
      for (const auto& node : nodes_) {
        if (!named[static_cast<std::size_t>(node->id)] && node->up) candidates.push_back(node->id);
      }
      if (candidates.empty()) return std::nullopt;
      const NodeId pick = candidates[faults_rng_.below(candidates.size())];
      named[static_cast<std::size_t>(pick)] = true;
      out[g].push_back(pick);
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Endpoint e : groups[g]) {
      if (e != kRestMember) continue;
      for (NodeId n : all_nodes_) {
        if (!named[static_cast<std::size_t>(n)]) out[g].push_back(n);
      }
      std::fill(named.begin(), named.end(), true);
    }
  }
  for (auto& group : out)
    std::stable_sort(group.begin(), group.end(), [](Endpoint a, Endpoint b) {
      // Nodes in id order, then the store and the sink.
      const auto rank = [](Endpoint x) {
        return x >= 0 ? static_cast<std::int64_t>(x) : 1000000 - x;
      };
      return rank(a) < rank(b);
    });
  return out;
}

void Kernel::apply_fault(std::size_t index) {
  const FaultSpec& f = faults_[index];
  std::optional<std::vector<std::vector<Endpoint>>> groups;
  if (f.kind == FaultKind::partition) groups = resolve_groups(f.groups);
  const std::optional<NodeId> target = resolve_target(f.target);
  const bool is_clock = f.kind == FaultKind::clock_offset || f.kind == FaultKind::clock_drift ||
                        f.kind == FaultKind::clock_step;
  const bool skipped = (needs_node(f.kind) && !target) ||
                       (is_clock && !target && f.target.kind != TargetKind::store) ||
                       (f.kind == FaultKind::partition && !groups);
  fault_state_[index].target = target;
  if (!observers_.empty()) {
    Event ev;
    ev.time = now_;
    ev.kind = EventKind::fault;
    ev.code = static_cast<std::uint16_t>(f.kind);
    ev.node = target.value_or(f.kind == FaultKind::cut ? f.from : kNoNode);
    ev.peer = f.kind == FaultKind::cut ? f.to : kNoNode;
    ev.a = static_cast<std::int64_t>(index);
    ev.b = f.duration.count();
    ev.c = skipped ? 1 : 0;
    if (f.kind == FaultKind::partition && groups) {
      text_scratch_.clear();
      for (std::size_t g = 0; g < groups->size(); ++g) {
        if (g > 0) text_scratch_ += '|';
        for (std::size_t i = 0; i < (*groups)[g].size(); ++i) {
          if (i > 0) text_scratch_ += ',';
          append_endpoint(text_scratch_, (*groups)[g][i]);
        }
      }
      ev.text = text_scratch_;
    }
    emit(ev);
  }
  if (skipped) return;

  auto schedule_end = [&] {
    if (f.duration.count() <= 0) return;
    const std::uint32_t slot = new_entry(EntryKind::fault_end, kNoNode);
    entries_[slot].payload = index;
    push(now_ + f.duration, slot);
  };
  auto emit_network_change = [&] {
    emit_simple(EventKind::network_change, kNoNode, static_cast<std::int64_t>(index),
                static_cast<std::uint16_t>(f.kind));
  };
  switch (f.kind) {
    case FaultKind::crash:
      crash_node(*target, false);
      schedule_end();
      break;
    case FaultKind::restart:
      restart_node(*target);
      break;
    case FaultKind::pause:
      pause_node(*target, f.duration);
      break;
    case FaultKind::partition:
      fault_state_[index].cut = network_.partition(*groups);
      emit_network_change();
      schedule_end();
      break;
    case FaultKind::cut:
      fault_state_[index].cut = network_.cut(f.from, f.to);
      emit_network_change();
      schedule_end();
      break;
    case FaultKind::isolate:
      fault_state_[index].cut = network_.isolate(*target);
      emit_network_change();
      schedule_end();
      break;
    case FaultKind::heal:
      network_.heal_all();
      emit_network_change();
      break;
    case FaultKind::loss:
      network_.add_loss(f.probability);
      schedule_end();
      break;
    case FaultKind::duplicate:
      network_.add_duplicate(f.probability);
      schedule_end();
      break;
    case FaultKind::latency_spike:
      fault_state_[index].spike = network_.add_spike(f.extra_latency);
      schedule_end();
      break;
    case FaultKind::clock_offset:
    case FaultKind::clock_drift:
    case FaultKind::clock_step: {
      ClockModel* clock = clock_of(f.target, target);
      ELECTSIM_ASSERT(clock != nullptr, "clock faults have a target");
      std::uint16_t what = 0;
      if (f.kind == FaultKind::clock_drift) {
        clock->set_drift_at(now_, f.drift_ppb);
      } else if (f.kind == FaultKind::clock_step) {
        clock->add_step(now_, f.clock_amount);
        what = 1;
      } else {
        clock->set_offset_at(now_, f.clock_amount);
        what = 2;
      }
      if (!observers_.empty()) {
        Event ev;
        ev.time = now_;
        ev.kind = EventKind::clock_change;
        ev.node = f.target.kind == TargetKind::store ? kStoreEndpoint : *target;
        ev.code = what;
        ev.a = f.drift_ppb;
        ev.b = f.clock_amount.count();
        emit(ev);
      }
      if (f.target.kind == TargetKind::store) {
        // Expiry is judged on the store's reading: look again now that the reading moved.
        store_expiry_at_.reset();
        push(now_, new_entry(EntryKind::store_expiry, kNoNode));
      }
      break;
    }
    case FaultKind::store_pause:
      pause_store(f.duration);
      break;
    case FaultKind::step_down:
    case FaultKind::stop: {
      const std::uint32_t slot = new_entry(EntryKind::command, *target);
      entries_[slot].payload = static_cast<std::uint64_t>(
          f.kind == FaultKind::stop ? Command::stop : Command::step_down);
      push(now_, slot);
      break;
    }
  }
}

void Kernel::end_fault(std::size_t index) {
  const FaultSpec& f = faults_[index];
  switch (f.kind) {
    case FaultKind::crash:
      if (fault_state_[index].target) restart_node(*fault_state_[index].target);
      break;
    case FaultKind::partition:
    case FaultKind::cut:
    case FaultKind::isolate:
      network_.heal_one(fault_state_[index].cut);
      emit_simple(EventKind::network_change, kNoNode, static_cast<std::int64_t>(index),
                  static_cast<std::uint16_t>(FaultKind::heal));
      break;
    case FaultKind::loss:
      network_.remove_loss(f.probability);
      break;
    case FaultKind::duplicate:
      network_.remove_duplicate(f.probability);
      break;
    case FaultKind::latency_spike:
      network_.remove_spike(fault_state_[index].spike);
      break;
    default:
      break;
  }
}

}  // namespace electsim::sim
