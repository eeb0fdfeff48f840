// The kernel's private parts (sim/kernel.cpp runs the loop, sim/kernel_faults.cpp applies the
// faults): the queue's entries, a process's machine and its context. Not for use outside them.
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "sim/assert.hpp"
#include "sim/events.hpp"
#include "sim/kernel.hpp"
#include "sim/protocol_process.hpp"

namespace electsim::sim {

enum class Kernel::EntryKind : std::uint8_t {
  deliver,     // node: receiver, peer: sender; msg (peer message) or body (payload)
  timer,       // node: owner, payload: TimerId
  send_later,  // node: sender, peer: destination, body (leaves the sender when it surfaces)
  command,     // node, payload: Command
  fault,       // payload: fault index
  fault_end,   // payload: fault index (restart, heal, end of a window)
  resume,      // node, payload: pause generation
};

namespace kernel_detail {
constexpr TimerId make_timer_id(std::uint32_t slot, std::uint32_t generation) {
  return (static_cast<TimerId>(generation) << 32) | (static_cast<TimerId>(slot) + 1);
}
constexpr std::uint32_t timer_slot(TimerId id) {
  return static_cast<std::uint32_t>((id & 0xffff'ffffu) - 1);
}
constexpr std::uint32_t timer_generation(TimerId id) {
  return static_cast<std::uint32_t>(id >> 32);
}

// Where a disk's queue of fsyncs saturates: 2^62 ns, about 146 years, past any run's end.
constexpr std::int64_t kDiskNever = std::int64_t{1} << 62;
}  // namespace kernel_detail
using namespace kernel_detail;

// One cache line: a Bully storm at 1000 nodes queues millions of these, and its speed is bound by
// the memory they take. What only connections need lives in a Segment beside it.
struct alignas(64) Kernel::Entry {
  std::array<std::int64_t, 4> field{};  // a peer message's fields (Message::field)
  // deliver: a peer message's id in the trace (its number among the sends), or for a payload the
  // sender's incarnation; timer: its TimerId; command, fault, fault_end, resume: what to do.
  std::uint64_t payload = 0;
  Endpoint node = kNoNode;
  Endpoint peer = kNoNode;
  std::uint32_t incarnation = 0;       // of `node` when queued
  std::uint32_t body = kNoBody;        // index into bodies_ for payloads
  std::uint32_t segment = kNoSegment;  // index into segments_ on a connection
  MessageType type = 0;                // a peer message's type (Message::type)
  EntryKind kind = EntryKind::deliver;
  // Two flags in the line's last byte, written whole: a new entry's slot is usually cold, and a
  // bit-field's store would read the line before writing it, stalling the send on a cache miss
  // where plain stores wait in the store buffer.
  // - in flight: counted in in_flight_ (limits.max_in_flight);
  // - session: a payload travels on a connection: it dies if its receiver's incarnation changed.
  //   A peer message does not: it reaches a restarted node.
  std::uint8_t flags = 0;
  static constexpr std::uint8_t kInFlight = 1;
  static constexpr std::uint8_t kSession = 2;

  bool counts_in_flight() const { return (flags & kInFlight) != 0; }
  bool session() const { return (flags & kSession) != 0; }
  void set_counts_in_flight(bool on) { flags = on ? flags | kInFlight : flags & ~kInFlight; }
  void set_session(bool on) { flags = on ? flags | kSession : flags & ~kSession; }

  Message msg() const { return Message{type, field}; }
  void set_msg(const Message& m) {
    type = m.type;
    field = m.field;
  }
  static constexpr std::uint32_t kNoBody = UINT32_MAX;
  static constexpr std::uint32_t kNoSegment = UINT32_MAX;
};

// An entry's way along a connection (Transport::tcp): its stream, the stream's life it was sent
// in, its place in the stream, and the sending of this try (retransmissions so far, when it left).
struct Kernel::Segment {
  std::uint32_t stream = 0;
  std::uint32_t stream_generation = 0;
  std::uint64_t seq = 0;
  std::int64_t sent_at = 0;
  std::uint32_t retransmissions = 0;
  bool retransmit = false;  // queued for its retransmission timer, not for its arrival
  // Where it is in its stream: on its way; released (it had arrived early, and the segment before
  // it has now been delivered: it follows at once); or admitted (counted in order: a pause that
  // parks it does not count it twice).
  enum class Step : std::uint8_t { travelling, released, admitted };
  Step step = Step::travelling;
};

// One direction of a connection between two processes' current lives: the sender numbers its
// segments, the receiver takes them in that order and holds those that overtook a missing one.
struct Kernel::Stream {
  Endpoint from = kNoNode;
  Endpoint to = kNoNode;
  std::uint32_t from_incarnation = 0;
  std::uint32_t to_incarnation = 0;
  std::uint32_t generation = 0;  // a new connection (or a broken one) ends the segments of the old
  std::uint64_t next_seq = 0;
  std::uint64_t expected = 0;
  bool established = false;  // a segment got through: the handshake is done
  std::vector<std::pair<std::uint64_t, std::uint32_t>> early;  // (seq, slot), sorted by seq
};

struct Kernel::Body {
  Payload value;
};

namespace kernel_detail {
// A slot of a slab whose freed slots are kept in `free`: the last one freed, or a new one made at
// the end (a default-made element).
template <typename Slab>
[[gnu::noinline]] std::uint32_t grow_slab(Slab& slab) {
  slab.emplace_back();
  return static_cast<std::uint32_t>(slab.size() - 1);
}

template <typename Slab>
std::uint32_t take_slot(std::vector<std::uint32_t>& free, Slab& slab) {
  if (free.empty()) [[unlikely]]
    return grow_slab(slab);
  const std::uint32_t slot = free.back();
  free.pop_back();
  return slot;
}
}  // namespace kernel_detail

template <typename T>
void Kernel::set_body(std::uint32_t slot, T&& value) {
  Entry& e = entries_[slot];
  if (e.body == Entry::kNoBody) {
    e.body = take_slot(free_bodies_, bodies_);
  }
  bodies_[e.body].value = std::forward<T>(value);
}

class Kernel::ProcContext final : public ProcessContext {
 public:
  ProcContext(Kernel& kernel, Proc& proc) : kernel_(kernel), proc_(proc) {}
  Endpoint self() const override;
  PeerSet peers() const override;
  std::size_t cluster_size() const override { return kernel_.config_.node_count; }
  LocalTime now() const override;
  LocalTime monotonic_now() const override;
  TimerId set_timer(Duration after_local, TimerTag tag) override {
    return kernel_.arm_timer(proc_, after_local, tag);
  }
  void cancel_timer(TimerId id) override { kernel_.cancel_timer(proc_, id); }
  bool timer_fires_by(TimerId id, Duration after_local) const override {
    return kernel_.timer_fires_by(proc_, id, after_local);
  }
  Rng& rng() override;
  Rng& workload_rng() override;
  DurableState& durable() override;
  void send(Endpoint to, const Message& message) override {
    kernel_.send_message(proc_, to, message);
  }
  void send(Endpoint to, Payload payload) override;
  void reply(Endpoint to, std::uint32_t to_incarnation, Payload payload) override {
    kernel_.send_payload(proc_, to, to_incarnation, std::move(payload));
  }
  void send_later(Duration after_local, Endpoint to, Payload payload) override {
    kernel_.send_later(proc_, after_local, to, std::move(payload));
  }
  RequestId new_request_id() override { return kernel_.next_request_++; }
  void announce(const Belief& belief) override { kernel_.announce(proc_, belief); }
  bool traced() const override { return !kernel_.observers_.empty(); }
  bool synced() const override;
  void trace(Event event) override {
    event.time = kernel_.now_;
    kernel_.emit(event);
  }
  void trace_first(Event event, std::int64_t key) override {
    std::int64_t& last = kernel_.first_keys_[static_cast<std::size_t>(event.kind)];
    if (key <= last) return;
    last = key;
    trace(event);
  }

 private:
  Kernel& kernel_;
  Proc& proc_;
};

// Every event to a process reads its first cache lines (whether it runs, its incarnation, its
// handler, its context, its timers' leftovers, its clock and random streams), so those come
// first; what faults, restarts and disks need follows. In a fleet of 30,000 processes each of
// them is a cache miss, and fewer lines touched is what a large world's speed is made of.
struct Kernel::Proc {
  Endpoint id = kNoNode;
  bool up = false;
  bool paused = false;
  std::uint8_t recent_out_next = 0;  // the slot the next new receiver takes in recent_out
  std::uint8_t recent_in_next = 0;   // the slot the next new sender takes in recent_in
  std::uint32_t incarnation = 0;
  std::uint32_t pause_generation = 0;
  // The streams (into Kernel::streams_) this process sent on last, by receiver, and received on
  // last, by sender. An election node talks to its store member and the sink, so its sends find
  // their stream in recent_out; a server answers thousands of clients, so its answers find theirs
  // in the client's recent_in. Both sit beside the incarnation a send reads anyway, and spare
  // the world's index, a cache miss in a large world. A stream's index never changes.
  struct RecentStream {
    Endpoint peer = std::numeric_limits<Endpoint>::min();
    std::uint32_t index = 0;
  };
  std::array<RecentStream, 2> recent_out{};
  std::array<RecentStream, 2> recent_in{};
  std::unique_ptr<Process> process;
  ProtocolProcess* node = nullptr;  // election nodes: the adapter of `process`
  std::size_t armed_timers = 0;
  ProcContext ctx;
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
  ClockModel clock;
  Rng rng;
  Rng workload_rng;
  // Less often: pauses, restarts, beliefs, the disk.
  Time paused_until;
  bool paused_as_store = false;  // the current pause is traced as store_pause / store_resume
  bool has_belief = false;
  Belief belief;
  std::function<std::unique_ptr<Process>()> make;
  DurableState durable;
  std::string group;                 // servers: the group it belongs to (ServerSpec::group)
  PeerSet peers;                     // the election nodes other than this one (of all_nodes_)
  std::deque<std::uint32_t> parked;  // entries that came due during a pause, in order
  // The disk (WorldConfig::disk), watched only while disks take time.
  Rng disk_rng;
  Time disk_free_at;                  // when the disk has finished the fsyncs it was given
  std::uint64_t handler_version = 0;  // durable.version() when the current handler began
  std::optional<Time> handler_sync;   // when the current handler's fsync is done, once issued
  struct Unsynced {
    Time done;
    DurableState state;  // what is on disk once it is done
  };
  std::deque<Unsynced> unsynced;  // fsyncs not known to be done, oldest first
  DurableState synced;            // the durable state the disk holds for sure

  Proc(Kernel& kernel, Endpoint self, ClockModel clock_model, Rng own, Rng second, Rng disk)
      : id(self),
        ctx(kernel, *this),
        clock(std::move(clock_model)),
        rng(own),
        workload_rng(second),
        disk_rng(disk) {}
};

// Inline, always: every message and timer is queued through them, and a call costs a tenth of a
// small world's step.
[[gnu::always_inline]] inline void Kernel::push_in_order(std::int64_t at, std::uint64_t seq,
                                                         std::uint32_t slot) {
  ELECTSIM_ASSERT(slot < (1u << 24),
                  "at most 2^24 queued entries (the in-flight and timer limits)");
  ELECTSIM_ASSERT(seq < (std::uint64_t{1} << 40), "at most 2^40 events are queued in a run");
  queue_.push(QueueKey{at, (seq << 24) | slot});
}

[[gnu::always_inline]] inline void Kernel::push(Time at, std::uint32_t slot) {
  ELECTSIM_ASSERT(at >= now_, "events are never scheduled in the past");
  push_in_order(at.ns, next_seq_++, slot);
}

// Inline, as the next three: every event finds its process.
[[gnu::always_inline]] inline const Kernel::Proc& Kernel::proc(Endpoint endpoint) const {
  if (endpoint >= 0 && static_cast<std::size_t>(endpoint) < config_.node_count) [[likely]] {
    return *procs_[static_cast<std::size_t>(endpoint)];
  }
  return server_proc(endpoint);
}

[[gnu::always_inline]] inline Kernel::Proc& Kernel::proc(Endpoint endpoint) {
  return const_cast<Proc&>(std::as_const(*this).proc(endpoint));
}

// Inline: every message and timer takes an entry and gives it back. What only servers' entries
// and payloads need is out of line.
[[gnu::always_inline]] inline std::uint32_t Kernel::new_peer_entry(Endpoint to) {
  static_assert(sizeof(Entry) == 64, "an entry is one cache line");
  const std::uint32_t slot = take_slot(free_entries_, entries_);
  // The next free slot may be cold (a storm frees and takes slots in no order): its fetch for
  // writing starts now.
  if (!free_entries_.empty()) __builtin_prefetch(&entries_[free_entries_.back()], 1);
  // Stores only: the slot's line is often cold, and nothing here waits for it.
  Entry& e = entries_[slot];
  e.kind = EntryKind::deliver;
  e.node = to;
  e.peer = kNoNode;
  e.incarnation = 0;
  e.flags = 0;
  e.payload = 0;
  return slot;
}

[[gnu::always_inline]] inline std::uint32_t Kernel::new_entry(EntryKind kind, Endpoint owner) {
  const std::uint32_t slot = new_peer_entry(owner);
  Entry& e = entries_[slot];
  e.kind = kind;
  e.incarnation =
      owner >= 0 ? procs_[static_cast<std::size_t>(owner)]->incarnation : server_incarnation(owner);
  return slot;
}

[[gnu::always_inline]] inline void Kernel::free_entry(std::uint32_t slot) {
  Entry& e = entries_[slot];
  if (e.counts_in_flight()) {
    ELECTSIM_ASSERT(in_flight_ > 0, "in-flight count matches queued traffic");
    --in_flight_;
    e.set_counts_in_flight(false);
  }
  if (e.body != Entry::kNoBody || e.segment != Entry::kNoSegment) release_parts(e);
  free_entries_.push_back(slot);
}

// An entry leaves over a quiet network (Network::quiet): it is counted in flight, and arrives
// after one draw of the network's latency.
[[gnu::always_inline]] inline void Kernel::launch_quietly(std::uint32_t slot, Entry& e) {
  if (!e.counts_in_flight()) {  // held traffic was counted when it was held
    e.set_counts_in_flight(true);
    ++in_flight_;
  }
  push(now_ + network_.quiet_latency(network_rng_), slot);
}

// The disk's watch over a handler costs a test of one flag while disks take no time.
inline void Kernel::begin_handler(Proc& p) {
  if (!disks_take_time_) return;
  p.handler_version = p.durable.version();
  p.handler_sync.reset();
}

inline void Kernel::end_handler(Proc& p) {
  if (disks_take_time_) settle_handler(p);
}

}  // namespace electsim::sim
