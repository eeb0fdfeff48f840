// The boundary between the kernel and an election protocol. A protocol is a pure state machine
// (sans-IO, like etcd-io/raft's Step): it reacts to one input at a time and acts only through the
// narrow Context it is handed for that call. It never sees the event queue, the faults or the
// trace.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>

#include "sim/ids.hpp"
#include "sim/message.hpp"
#include "sim/peers.hpp"
#include "sim/rng.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"
#include "sim/wire.hpp"

namespace electsim::sim {

enum class Role : std::uint8_t { follower = 0, candidate = 1, leader = 2 };
const char* role_name(Role role);

// What a node believes; the only thing the safety checkers know about a protocol.
// Epoch: Raft term; lease: revision of the acquiring txn (the fencing token); Bully/Ring: the
// coordinator's election number.
struct Belief {
  Role role = Role::follower;
  Epoch epoch = 0;
  NodeId known_leader = kNoNode;  // followers: who they think leads, if anyone

  static Belief leader(Epoch e) { return {Role::leader, e, kNoNode}; }
  static Belief candidate(Epoch e) { return {Role::candidate, e, kNoNode}; }
  static Belief follower(NodeId leader, Epoch e) { return {Role::follower, e, leader}; }
  bool operator==(const Belief&) const = default;
};

// State that survives a crash and restart (Raft's currentTerm and votedFor, a durable epoch).
// Ordered map: iteration order never depends on hashing.
class DurableState {
 public:
  std::int64_t get(std::string_view name, std::int64_t fallback = 0) const;
  // A write that changes a value goes to the disk (see WorldConfig::disk); setting the value a
  // name already has writes nothing, as etcd-io/raft persists a HardState only when it changed.
  void set(std::string_view name, std::int64_t value);
  bool empty() const { return values_.empty(); }
  // Counts the writes that changed something, so the kernel can tell a handler wrote.
  std::uint64_t version() const { return version_; }

  // Bulk data that outlives a crash, such as a Raft log's entries: one object of one type T per
  // process. The disk's snapshots share it instead of copying it, so a crash does not revert it:
  // a process keeps the synced length of its bulk data among the integers (which a crash does
  // revert) and trims the data to that length when it starts again. Changing bulk data is no
  // disk write by itself; setting that length is.
  template <typename T>
  T& bulk() {
    if (!bulk_) {
      bulk_ = std::make_shared<T>();
      bulk_type_ = &typeid(T);
    }
    if (*bulk_type_ != typeid(T))
      throw std::logic_error("DurableState::bulk: one type per process");
    return *static_cast<T*>(bulk_.get());
  }

 private:
  std::map<std::string, std::int64_t, std::less<>> values_;
  std::uint64_t version_ = 0;
  std::shared_ptr<void> bulk_;
  const std::type_info* bulk_type_ = nullptr;
};

// Orders the kernel can give a process from outside (faults `step_down`, `stop`, `campaign` and
// `operator_clear`). campaign: start an election now, as if its election or failure timer had
// fired (etcd's MsgHup); operator_clear: a person clears the leadership record a server keeps.
enum class Command : std::uint8_t { step_down, stop, campaign, operator_clear };

class Context {
 public:
  virtual ~Context() = default;
  virtual NodeId self() const = 0;
  virtual PeerSet peers() const = 0;             // every other node, sorted
  virtual std::size_t cluster_size() const = 0;  // configured nodes, including self
  virtual LocalTime now() const = 0;             // this node's clock
  // The same machine's oscillator alone, without the steps now() takes (CLOCK_MONOTONIC, the
  // monotonic reading Go's time.Now carries): for measuring elapsed time that a wall-clock step
  // must not shorten or stretch. Only differences of two readings mean anything.
  virtual LocalTime monotonic_now() const = 0;
  // To a peer, or to a server that speaks peer messages (its address, sim/ids.hpp).
  virtual void send(Endpoint to, const Message& message) = 0;
  virtual void broadcast(const Message& message) = 0;  // to every peer, in id order
  // Fires after `after_local` has elapsed on this node's clock. Tags tell timers apart in on_timer.
  virtual TimerId set_timer(Duration after_local, TimerTag tag) = 0;
  virtual void cancel_timer(TimerId id) = 0;  // cancelling a fired or unknown timer is harmless
  virtual Rng& rng() = 0;                     // this node's protocol stream
  virtual Rng& workload_rng() = 0;            // this node's workload stream (work durations)
  virtual DurableState& durable() = 0;        // survives crash and restart
  // Sends a request to the store; the reply (if it arrives) comes to on_store_reply with this id.
  virtual RequestId store(StoreRequest request) = 0;
  // Commits a write to the sink with a fencing token: the moment the writer stops looking. The
  // write leaves `send_delay` later on this node's clock (the syscall, serialisation and socket
  // buffer); a pause inside that window holds it, and a crash loses it. Then it crosses the
  // network like any message. The reply comes to on_sink_reply.
  virtual RequestId sink_write(Token token, std::int64_t payload, Duration send_delay) = 0;
  // Sends a statement to the database server (servers/postgres) on this node's session; the
  // reply (if it arrives) comes to on_db_reply with this id.
  virtual RequestId db(DbRequest request) = 0;
  // Sends a command to Redis master `master` (0 to N-1, servers/redis); the reply (if it
  // arrives) comes to on_redis_reply with this id.
  virtual RequestId redis(std::size_t master, RedisRequest request) = 0;
  // Sends a payload of a server's own types (sim/payload.hpp) to the server at `to`: how a
  // protocol talks to a kind of server that the calls above do not name. What comes back comes to
  // on_reply.
  virtual void request(Endpoint to, Payload payload) = 0;
  // Announces a belief. Announcing the same belief again is a no-op.
  virtual void announce(const Belief& belief) = 0;
  // The leader's own deadline: `remaining` from now on this node's clock its claim runs out by its
  // own reckoning (a lease's renew deadline); nullopt: none. A write committed after it is one the
  // writer should have known was stale, and the trace marks it (sink_send's late_ns). Protocols
  // without such a deadline never call it.
  virtual void own_deadline(std::optional<Duration> /*remaining*/) {}
};

class Protocol {
 public:
  virtual ~Protocol() = default;
  virtual void on_start(Context& ctx) = 0;  // first start and every restart
  virtual void on_message(Context& ctx, NodeId from, const Message& message) = 0;
  virtual void on_timer(Context& ctx, TimerId id, TimerTag tag) = 0;
  virtual void on_store_reply(Context& ctx, const StoreReply& reply) = 0;
  virtual void on_watch(Context& ctx, const WatchEvent& event) = 0;
  virtual void on_sink_reply(Context& ctx, const SinkReply& reply) = 0;
  // Only protocols that talk to the database server receive these.
  virtual void on_db_reply(Context& /*ctx*/, const DbReply& /*reply*/) {}
  // Only protocols that talk to Redis masters receive these.
  virtual void on_redis_reply(Context& /*ctx*/, const RedisReply& /*reply*/) {}
  // Any other payload a server sends this node (an answer to request()).
  virtual void on_reply(Context& /*ctx*/, Endpoint /*from*/, const Payload& /*payload*/) {}
  // step_down: give up leadership now (voluntary release); stop: release and shut down (the kernel
  // takes the node down right after this call returns; messages sent during it still go out);
  // campaign: try for leadership now (a leader ignores it).
  virtual void on_command(Context& ctx, Command command) = 0;
};

}  // namespace electsim::sim
