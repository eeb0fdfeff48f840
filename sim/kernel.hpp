// The kernel: one simulated world as an object (never a global, so sweeps run many on threads).
// A single event queue ordered by (true time, insertion sequence) drives processes (the election
// nodes and the world's servers), their clocks, the network and the fault schedule; ties are FIFO
// (FoundationDB sim2, ns-3). Every process is driven through the ProcessContext of
// sim/process.hpp, election nodes through the adapter of sim/protocol_process.hpp; the kernel
// knows no server and no protocol by name. Observers see every event.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/chunked_slab.hpp"
#include "sim/clock.hpp"
#include "sim/event.hpp"
#include "sim/event_queue.hpp"
#include "sim/fault.hpp"
#include "sim/flat_index.hpp"
#include "sim/message.hpp"
#include "sim/network.hpp"
#include "sim/node_servers.hpp"
#include "sim/process.hpp"
#include "sim/protocol.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace electsim::sim {

struct KernelLimits {
  std::uint64_t max_events = 200'000'000;    // events processed in one run
  std::size_t max_in_flight = 1'000'000;     // messages and requests queued in the network
  std::size_t max_timers_per_node = 10'000;  // armed timers of one node
  // Set from outside (Ctrl-C during a sweep) to stop the run early; read every 4096 events, so
  // it costs nothing per event. A cancelled run's report covers only the time simulated.
  const std::atomic<bool>* cancel = nullptr;
};

// Every machine's disk. A handler that changes durable state (DurableState::set) issues one fsync
// when it returns, or at its first send after the write: the disk serves fsyncs one at a time,
// each taking a draw of `fsync`, and whatever the process sends after the write leaves when its
// fsync is done (etcd-io/raft's Ready: persist, then send). A crash loses the writes whose fsync
// had not finished. Constant 0, the default, is a disk that takes no time: nothing is held.
struct DiskConfig {
  Distribution fsync = Distribution::constant_of(Duration(0));
  bool takes_time() const {
    return !(fsync.kind == DistributionKind::constant && fsync.value.count() == 0);
  }
};

struct WorldConfig {
  std::uint64_t seed = 1;
  Duration duration = std::chrono::seconds(60);
  std::size_t node_count = 5;
  std::vector<ClockConfig> clocks;  // one per node (missing entries: a perfect clock)
  NetworkConfig network;
  DiskConfig disk;
  // The servers the nodes talk to (servers/world.hpp adds the store and the sink). A process
  // must listen at every address traffic is sent to.
  std::vector<ServerSpec> servers;
  // The election groups: sets of nodes each running one protocol instance on its own key (the
  // loader's; empty: one group of every node). The kernel runs every node alike; the groups
  // travel to the trace header's topology (topology_of).
  std::vector<ElectionGroup> groups;
  // Where the election nodes' requests go (sim/node_servers.hpp), filled as servers are added.
  NodeServers node_servers;
  std::vector<FaultSpec> faults;  // any order; applied in time order, ties in list order
  // Nodes that are not running when the run starts (an auto-scaler's replicas not made yet): each
  // starts stopped, traced as a graceful crash at 0, until a restart fault starts it. Ascending.
  std::vector<NodeId> start_stopped;
  KernelLimits limits;
};

// The clock configured for the server at `endpoint`; a perfect clock if the world has none there.
inline ClockConfig server_clock(const WorldConfig& world, Endpoint endpoint) {
  for (const ServerSpec& server : world.servers) {
    if (server.endpoint == endpoint) return server.clock;
  }
  return ClockConfig{};
}

using ProtocolFactory = std::function<std::unique_ptr<Protocol>(NodeId self)>;

struct RunStats {
  Time end;
  std::uint64_t events = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_delivered = 0;
  std::uint64_t timers_fired = 0;
  std::uint64_t retransmissions = 0;     // segments of connections sent again (Transport::tcp)
  std::uint64_t connections_broken = 0;  // connections given up after tcp.retries2
  bool hit_event_limit = false;
  bool cancelled = false;
};

class Kernel {
 public:
  Kernel(WorldConfig config, ProtocolFactory factory);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Observers are called for every event, in order; they must outlive the run.
  void add_observer(Observer* observer);

  // Runs from the start to the configured duration (or the event limit).
  RunStats run();

  // Stepping, for tests and fixtures: start() emits run_start and starts every node; run_until(t)
  // processes every event due at or before t; finish() emits run_end at the configured duration.
  void start();
  void run_until(Time t);
  // run_until in slices (the playground runs a slice per animation frame): at most `max_steps`
  // kernel steps of those due by t. True when every event due by t has run (the clock then reads
  // t); false when the slice ended first, or the run stopped at its event limit or was cancelled.
  // Slices change nothing: a run in slices makes the run_until of their sum.
  bool run_steps(Time t, std::uint64_t max_steps);
  void finish();
  bool started() const { return started_; }

  // Inject a fault at the current time (test fixtures: crash(), pause(), cut(), ...).
  void inject(FaultSpec fault);

  Time now() const { return now_; }
  const WorldConfig& config() const { return config_; }
  const Belief& belief(NodeId node) const;
  bool node_up(NodeId node) const;
  bool node_paused(NodeId node) const;
  LocalTime local_now(NodeId node) const;
  const Network& network() const { return network_; }
  const RunStats& stats() const { return stats_; }
  // The protocol instance of a node (nullptr while crashed), for white-box tests.
  Protocol* protocol(NodeId node);
  // The process at an address (a node id or a server's endpoint; nullptr while crashed or if no
  // process listens there), for white-box tests and servers/world.hpp.
  const Process* process(Endpoint endpoint) const;

 private:
  class ProcContext;
  struct Proc;
  struct Entry;
  struct Body;
  struct Stream;
  struct Segment;
  using QueueKey = EventQueue::Key;
  enum class EntryKind : std::uint8_t;

  std::uint32_t new_entry(EntryKind kind, Endpoint owner);
  // A peer message's entry: as new_entry, but without the receiver's incarnation, which only
  // traffic on connections needs, so that sending reads nothing of the receiver.
  std::uint32_t new_peer_entry(Endpoint to);
  void push(Time at, std::uint32_t slot);
  void push_in_order(std::int64_t at, std::uint64_t seq, std::uint32_t slot);
  void free_entry(std::uint32_t slot);
  std::uint32_t server_incarnation(Endpoint owner) const;  // 0 where no process listens
  void release_parts(Entry& entry);  // an entry's payload body and connection segment
  void dispatch(std::uint32_t slot);
  void dispatch_to_process(std::uint32_t slot, Entry& entry);
  // A peer message reaches a running process: traced, its entry freed, then handled.
  void deliver_message(std::uint32_t slot, const Entry& entry, Proc& p);
  // A TCP keepalive probe reaches a host: its kernel answers, whatever its process is doing.
  void answer_probe(std::uint32_t slot, Entry& entry);
  void emit(const Event& event) {
    for (Observer* o : observers_) o->on_event(event);
  }
  // Whether anyone watches the event stream: build no event otherwise.
  bool traced() const { return !observers_.empty(); }
  // An event of the kernel's own (built by sim/events.hpp), stamped with the current time.
  void emit_now(Event event) {
    event.time = now_;
    emit(event);
  }
  void emit_drop(const Entry& entry, Endpoint from, Endpoint to, DropReason reason);

  // Processes: election nodes at 0..n-1, then the servers; an endpoint maps to its index.
  Proc& proc(Endpoint endpoint);
  const Proc& proc(Endpoint endpoint) const;
  const Proc& server_proc(Endpoint endpoint) const;  // proc's path for a server's address
  bool listens(Endpoint endpoint) const;
  // The server a fault on "the store" reaches: the single store, or a replicated store's first
  // member (kNoNode in a world without a store).
  Endpoint the_store() const {
    const std::vector<Endpoint>& members = config_.node_servers.store.members;
    return members.empty() ? kNoNode : members.front();
  }
  void start_process(Proc& p);
  void crash_process(Proc& p, bool graceful);
  void restart_process(Proc& p);
  // `as_store`: traced as store_pause / store_resume (the store_pause fault), else pause / resume.
  void pause_process(Proc& p, Duration d, bool as_store);
  void resume_process(Proc& p);
  void announce(Proc& p, const Belief& belief);
  // The disk: around every handler, and at each send inside one (only while disks take time).
  void begin_handler(Proc& p);
  void end_handler(Proc& p);
  void settle_handler(Proc& p);  // end_handler's work once disks take time
  Time synced_at(Proc& p);       // when the current handler's writes are on disk (issues the fsync)

  // Traffic.
  void send_message(Proc& from, Endpoint to, const Message& message);
  void route_message(Proc& from, Endpoint to, const Message& message);
  [[gnu::noinline]] void trace_send(Endpoint from, Endpoint to, MessageType type, std::uint64_t id);
  void send_payload(Proc& from, Endpoint to, std::uint32_t to_incarnation, Payload&& payload);
  void send_later(Proc& from, Duration after_local, Endpoint to, Payload&& payload);
  // Holds a send until `at` inside its sender (a pause parks it, a crash drops it); nullopt when
  // the in-flight limit leaves no room (the send is dropped as overload).
  std::optional<std::uint32_t> hold(Proc& from, Time at, Endpoint to);
  // Routes an entry over the network from `from` to `to`; false if it was lost at send.
  bool route(Endpoint from, Endpoint to, std::uint32_t slot);
  void launch_quietly(std::uint32_t slot, Entry& entry);
  // route's datagrams on a network that is not quiet (cuts, loss, duplication, latency overrides
  // or spikes): out of line, so that the common case stays small.
  [[gnu::noinline]] bool route_disturbed(Endpoint from, Endpoint to, std::uint32_t slot);
  // Connections (Transport::tcp): whether an entry rides one, the stream of (from, to) between
  // the two current lives (a new one when either restarted), and the segment's way along it.
  bool rides_stream(const Entry& entry, Endpoint from, Endpoint to) const;
  std::uint32_t stream_for(Endpoint from, Endpoint to, std::uint32_t to_incarnation);
  bool route_stream(Endpoint from, Endpoint to, std::uint32_t slot);
  void transmit(std::uint32_t slot);
  // A stream's segment surfaced: whether to deliver it now (false: it was retransmitted, held
  // until an earlier one arrives, or died with its connection).
  bool stream_arrival(std::uint32_t slot, Entry& entry);
  bool admit(Stream& stream, Entry& entry);  // delivers `entry` in order: true
  void end_stream(std::uint32_t index);
  void break_stream(std::uint32_t index);
  TimerId arm_timer(Proc& p, Duration after_local, TimerTag tag);
  void cancel_timer(Proc& p, TimerId id);
  bool timer_fires_by(const Proc& p, TimerId id, Duration after_local) const;

  // Faults.
  void apply_fault(std::size_t index);
  void end_fault(std::size_t index);
  std::optional<NodeId> resolve_target(const Target& target);
  std::optional<std::vector<std::vector<Endpoint>>> resolve_groups(
      const std::vector<std::vector<Endpoint>>& groups);

  WorldConfig config_;
  ProtocolFactory factory_;
  std::vector<Observer*> observers_;
  bool started_ = false;
  bool finished_ = false;
  Time now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t current_order_ = 0;  // key of the entry being dispatched

  EventQueue queue_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_entries_;
  // Payloads of server traffic, apart from the small entries that carry peer messages. Freed
  // bodies are reused, and the chunks they live in never move: a payload stays put while its
  // receiver handles it, and the loop can fetch the next step's by its index alone.
  ChunkedSlab<Body> bodies_;
  std::vector<Stream> streams_;
  std::vector<Segment> segments_;  // by Entry::segment
  std::vector<std::uint32_t> free_segments_;
  // (from, to) -> index into streams_.
  FlatIndex stream_index_;
  static std::uint64_t stream_key(Endpoint from, Endpoint to) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
           static_cast<std::uint32_t>(to);
  }
  std::vector<std::uint32_t> free_bodies_;
  template <typename T>
  void set_body(std::uint32_t slot, T&& value);
  std::vector<std::unique_ptr<Proc>> procs_;
  std::vector<std::int32_t> server_index_;  // [server_slot]: index into procs_, or -1
  std::vector<NodeId> all_nodes_;
  // The election groups' first nodes, ascending (WorldConfig::groups; one group of every node
  // without), and 0 to the largest group's size - 1: the ids a group's protocol sees.
  std::vector<NodeId> group_bases_;
  // By group: the store its nodes ask (a shard of a sharded store, or the world's one store).
  std::vector<const StoreClientConfig*> group_store_;
  std::vector<NodeId> local_ids_;

  struct TimerSlot {
    std::uint32_t generation = 1;
    bool armed = false;
    TimerTag tag = 0;
    std::int64_t due = 0;       // true time it fires
    std::uint64_t seq = 0;      // its place among equal-time events: the sequence when it was set
    std::uint32_t entry = 0;    // the queued entry that carries it
    std::int64_t entry_at = 0;  // when that entry surfaces (earlier than `due` if adopted)
  };
  std::vector<TimerSlot> timers_;
  std::vector<std::uint32_t> free_timers_;

  Network network_;
  // Whether any disk can take time: an fsync distribution other than 0, or a disk_stall fault.
  // While not, no handler is watched and nothing is held.
  bool disks_take_time_ = false;
  Rng network_rng_;
  Rng faults_rng_;
  std::vector<FaultSpec> faults_;  // the schedule plus injected faults
  struct FaultState {
    Network::CutHandle cut = 0;
    Network::SpikeHandle spike = 0;
    std::optional<NodeId> target;
  };
  std::vector<FaultState> fault_state_;
  std::size_t in_flight_ = 0;
  RequestId next_request_ = 1;
  // ProcessContext::trace_first: by event kind, the highest key traced.
  std::array<std::int64_t, kEventKindCount> first_keys_ = [] {
    std::array<std::int64_t, kEventKindCount> a{};
    a.fill(std::numeric_limits<std::int64_t>::min());
    return a;
  }();
  RunStats stats_;
  std::string text_scratch_;
};

}  // namespace electsim::sim
