// The event stream the kernel emits: every observable change of the world, in order. Observers
// (analysis/) only watch; they never change the run. An Event is a flat record with kind-specific
// fields so that emitting one never allocates; the trace writer gives each kind its JSON shape
// (docs/trace-format.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/ids.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

enum class EventKind : std::uint8_t {
  run_start,  // a: node count, b: seed (as bits)
  run_end,    //
  fault,      // code: FaultKind, node: resolved target (or kNoNode), a: fault index, b: duration ns
  belief,     // node, code: Role, a: epoch, b: known leader
  crash,      // node
  restart,    // node
  pause,      // node (kStoreEndpoint for the store), a: duration ns
  resume,     // node
  clock_change,   // node, a: new drift ppb, b: step ns, c: new offset ns (what changed: code 0/1/2)
  timer_fire,     // node, a: tag
  msg_send,       // node: from, peer: to, code: message type
  msg_deliver,    // node: to, peer: from, code: message type
  msg_drop,       // node: from, peer: to, code: message type, a: DropReason
  store_request,  // node: sender, code: StoreOp (counted when sent)
  store_apply,    // node: sender, code: StoreOp, a: revision after, b: succeeded, c: lease
  store_change,   // a: revision, code: 0 put / 1 delete, b: lease, c: 1 if by lease expiry,
                  // node: owner parsed from the value if it is a node id, text: key
  lease_expire,   // a: lease id
  store_reply,    // node: receiver, code: StoreOp, a: revision, b: succeeded, c: error
  watch_notify,   // node: receiver, code: 0 put / 1 delete, a: revision, text: key
  sink_write,     // node: writer, a: token, b: payload, c: accepted, d: highest token before
  sink_reply,     // node: receiver, a: token, c: accepted
  store_pause,    // a: duration ns
  store_resume,   //
  network_change,  // code: FaultKind of the partition/cut/heal/loss window that changed the links
  sink_send,       // node: writer, a: token, b: payload, c: send delay ns on the writer's clock
  // A replicated store (store.members > 1):
  server_role,      // node: member, code: Role, a: Raft term, b: the leader it knows (or kNoNode)
  raft_commit,      // node: leader, a: log index, b: entry's term, c: ns from append (leader's
                    // clock; -1 for an entry of an earlier term)
  lease_refresh,    // node: new leader, a: leases refreshed on promotion, b: its term
  client_failover,  // node: client, peer: the member it moves to (no_leader: retries on),
                    // code: FailoverReason, a: the request that failed (0: none)
  // A request to a coordinator other than the store (counted when sent, like store_request):
  server_request,  // node: sender, peer: the server (postgres, redis:K), a: request id,
                   // text: the statement or command (db_op_name, redis_op_name)
  // A connection between a client and a server (network.clients "tcp") was given up: node, the end
  // whose retransmissions ran out (tcp.retries2), peer: the other end.
  conn_break,
};
inline constexpr int kEventKindCount = 31;
const char* event_kind_name(EventKind kind);

enum class DropReason : std::uint8_t {
  loss = 0,            // random loss
  cut_at_send = 1,     // the link was cut when sent
  cut_on_arrival = 2,  // the link was cut when the message would have arrived
  node_down = 3,       // the receiver was crashed
  overload = 4,        // the in-flight limit was reached
};
const char* drop_reason_name(DropReason reason);

// Why a store client moved to another member.
enum class FailoverReason : std::uint8_t {
  timeout = 0,     // a request got no answer within store.request_timeout
  no_leader = 1,   // the member knew no leader
  disconnect = 2,  // the member crashed (its connection was reset)
};
const char* failover_reason_name(FailoverReason reason);

struct Event {
  Time time;
  EventKind kind = EventKind::run_start;
  std::uint16_t code = 0;
  NodeId node = kNoNode;
  Endpoint peer = kNoNode;
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::int64_t c = 0;
  std::int64_t d = 0;
  std::string_view text{};  // valid only during the observer call
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_event(const Event& event) = 0;
};

}  // namespace electsim::sim
