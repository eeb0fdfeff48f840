// A process: anything that runs in the simulated world. Election nodes are processes (through the
// adapter of sim/protocol_process.hpp); so are the servers (servers/store, servers/sink, ...).
// Like every role in FoundationDB's simulator, a process is a pure state machine on a simulated
// machine: it reacts to one input at a time and acts only through the narrow ProcessContext the
// kernel hands it. The kernel schedules processes, carries their traffic and timers, and applies
// node-level faults (crash, restart, pause, isolation, clock faults) to any of them alike; it
// knows none of them by name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "sim/clock.hpp"
#include "sim/event.hpp"
#include "sim/ids.hpp"
#include "sim/message.hpp"
#include "sim/protocol.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"
#include "sim/wire.hpp"

namespace electsim::sim {

// A process's machine as the process sees it. Every call acts now, at the current event.
class ProcessContext {
 public:
  virtual ~ProcessContext() = default;
  virtual Endpoint self() const = 0;
  virtual PeerSet peers() const = 0;             // the election nodes other than self, sorted
  virtual std::size_t cluster_size() const = 0;  // configured election nodes
  virtual LocalTime now() const = 0;             // this process's clock
  virtual LocalTime monotonic_now() const = 0;   // its oscillator, without steps
  // Timers run on this process's oscillator (drift applies, steps do not).
  virtual TimerId set_timer(Duration after_local, TimerTag tag) = 0;
  virtual void cancel_timer(TimerId id) = 0;
  // Whether armed timer `id` fires no later than a timer set now for `after_local` would, like
  // comparing two timerfd deadlines. False for a timer that is not armed.
  virtual bool timer_fires_by(TimerId id, Duration after_local) const = 0;
  virtual Rng& rng() = 0;           // this process's own stream
  virtual Rng& workload_rng() = 0;  // a second stream: a node's write workload, a server's phases
  virtual DurableState& durable() = 0;  // survives crash and restart
  // Whether everything this process wrote to durable state is on its disk now (always, when disks
  // take no time). A write in the current handler is not, until its fsync is done.
  virtual bool synced() const = 0;
  // A peer message; the kernel traces it (msg_send, msg_deliver, msg_drop) and counts it.
  virtual void send(Endpoint to, const Message& message) = 0;
  // Traffic on a connection to `to`'s current incarnation: it dies if `to` crashes first.
  virtual void send(Endpoint to, Payload payload) = 0;
  // An answer to the incarnation that asked (on_payload's `from_incarnation`).
  virtual void reply(Endpoint to, std::uint32_t to_incarnation, Payload payload) = 0;
  // Traffic that leaves this process only after `after_local` on its clock (a syscall, a socket
  // buffer): a pause of this process holds it, a crash loses it.
  virtual void send_later(Duration after_local, Endpoint to, Payload payload) = 0;
  // A world-unique id for a request, so replies can be matched and traces told apart.
  virtual RequestId new_request_id() = 0;
  virtual void announce(const Belief& belief) = 0;  // election nodes' beliefs (sim/protocol.hpp)
  // The event stream: whether anyone listens (build no event otherwise), and one event, which
  // this stamps with the current time.
  virtual bool traced() const = 0;
  virtual void trace(Event event) = 0;
  // An observation several processes make of one fact (each store leader that applies a committed
  // entry sees its changes): the trace keeps the first, by `key`, which must grow with the fact
  // among events of the kind. This only thins the trace; no process learns anything from it.
  virtual void trace_first(Event event, std::int64_t key) = 0;
};

class Process {
 public:
  virtual ~Process() = default;
  virtual void on_start(ProcessContext& ctx) = 0;  // first start and every restart
  virtual void on_message(ProcessContext& ctx, Endpoint from, const Message& message) = 0;
  // `from_incarnation` names the sender's life that sent it, for reply().
  virtual void on_payload(ProcessContext& ctx, Endpoint from, std::uint32_t from_incarnation,
                          Payload&& payload) = 0;
  virtual void on_timer(ProcessContext& ctx, TimerId id, TimerTag tag) = 0;
  // Orders from outside (faults `step_down` and `stop`).
  virtual void on_command(ProcessContext& /*ctx*/, Command /*command*/) {}
  // Another process crashed: its connections to this one are gone (a TCP reset), even while this
  // process is paused. Only bookkeeping belongs here: what hangs on those connections dies.
  virtual void on_disconnect(ProcessContext& /*ctx*/, Endpoint /*peer*/) {}
  // A fault moved this process's clock (offset, drift or step). Called at the fault, paused or
  // not, so that a process that judges deadlines on its reading may re-arm its timers.
  virtual void on_clock_change(ProcessContext& /*ctx*/) {}
};

// A server of the world: its network address, its machine's clock, and how to make (and after a
// restart remake) the process.
struct ServerSpec {
  Endpoint endpoint = kNoNode;  // a server address (sim/ids.hpp), never a node id
  std::string name;             // as targets and traces name it: "store", "sink", "store:1"
  std::string kind;             // what runs there: "store", "sink", "postgres", "redis", ...
  // Servers of one replicated service share a group ("store" for a store's members): targets
  // like `store_leader` pick among them by the roles they announce.
  std::string group;
  ServerTraits traits;  // what it is to the kernel, the analysis and the pictures
  ClockConfig clock;
  std::function<std::unique_ptr<Process>()> make;
};

}  // namespace electsim::sim
