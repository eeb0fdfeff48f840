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

// The kinds of event. What each carries, in which slot, and what it means is written once, in
// sim/event_schema.cpp; build events with sim/events.hpp's typed emitters.
enum class EventKind : std::uint8_t {
  run_start,
  run_end,
  fault,  // a scheduled fault fired
  belief,
  crash,
  restart,
  pause,
  resume,
  clock_change,
  timer_fire,
  msg_send,
  msg_deliver,
  msg_drop,
  store_request,  // counted when sent
  store_apply,
  store_change,
  lease_expire,
  store_reply,
  watch_notify,
  sink_write,
  sink_reply,
  store_pause,
  store_resume,
  network_change,
  sink_send,
  // A replicated store (store.members > 1):
  server_role,
  raft_commit,
  lease_refresh,
  client_failover,
  // A request to a coordinator other than the store (counted when sent, like store_request):
  server_request,
  // A connection between a client and a server was given up.
  conn_break,
};
// One past the last kind, conn_break (tests/analysis/event_schema_test.cpp fails when a kind
// added after it is left out of the count).
inline constexpr int kEventKindCount = static_cast<int>(EventKind::conn_break) + 1;
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
