// Typed emitters: one function per event kind, taking what the kind carries by its type and putting
// each value in the slot the schema names (sim/event_schema.cpp). Emitters build events only with
// these, so no call site fills a/b/c/d by hand; tests/analysis/event_schema_test.cpp checks each
// against the schema. The time is stamped by whoever emits (Kernel::emit_now,
// ProcessContext::trace).
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/event.hpp"
#include "sim/fault.hpp"
#include "sim/ids.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::sim::events {

// What a clock_change changed.
enum class ClockWhat : std::uint16_t { drift = 0, step = 1, offset = 2 };
// A store_change's or watch_notify's change.
enum class Change : std::uint16_t { put = 0, del = 1 };

namespace detail {
inline Event make(EventKind kind, Endpoint node = kNoNode, Endpoint peer = kNoNode,
                  std::uint16_t code = 0, std::int64_t a = 0, std::int64_t b = 0,
                  std::int64_t c = 0, std::int64_t d = 0, std::string_view text = {}) {
  Event e;
  e.kind = kind;
  e.node = node;
  e.peer = peer;
  e.code = code;
  e.a = a;
  e.b = b;
  e.c = c;
  e.d = d;
  e.text = text;
  return e;
}
template <typename Enum>
constexpr std::uint16_t code(Enum value) {
  return static_cast<std::uint16_t>(value);
}
}  // namespace detail

inline Event run_start(std::size_t nodes, std::uint64_t seed) {
  return detail::make(EventKind::run_start, kNoNode, kNoNode, 0, static_cast<std::int64_t>(nodes),
                      static_cast<std::int64_t>(seed));
}
inline Event run_end() {
  return detail::make(EventKind::run_end);
}
// `node`: the resolved target, or a cut's from; `peer`: a cut's to; `groups`: a partition's.
inline Event fault(FaultKind kind, Endpoint node, Endpoint peer, std::size_t index,
                   Duration duration, bool skipped, std::string_view groups) {
  return detail::make(EventKind::fault, node, peer, detail::code(kind),
                      static_cast<std::int64_t>(index), duration.count(), skipped ? 1 : 0, 0,
                      groups);
}
inline Event belief(NodeId node, Role role, Epoch epoch, NodeId leader) {
  return detail::make(EventKind::belief, node, kNoNode, detail::code(role), epoch, leader);
}
inline Event crash(Endpoint node, bool graceful) {
  return detail::make(EventKind::crash, node, kNoNode, 0, graceful ? 1 : 0);
}
inline Event restart(Endpoint node) {
  return detail::make(EventKind::restart, node);
}
inline Event pause(Endpoint node, Duration duration) {
  return detail::make(EventKind::pause, node, kNoNode, 0, duration.count());
}
inline Event resume(Endpoint node) {
  return detail::make(EventKind::resume, node);
}
inline Event clock_change(Endpoint node, ClockWhat what, std::int64_t drift_ppb, Duration amount) {
  return detail::make(EventKind::clock_change, node, kNoNode, detail::code(what), drift_ppb,
                      amount.count());
}
inline Event timer_fire(Endpoint node, TimerTag tag) {
  return detail::make(EventKind::timer_fire, node, kNoNode, 0, static_cast<std::int64_t>(tag));
}
inline Event msg_send(Endpoint from, Endpoint to, std::uint16_t type, std::uint64_t id) {
  return detail::make(EventKind::msg_send, from, to, type, 0, static_cast<std::int64_t>(id));
}
inline Event msg_deliver(Endpoint to, Endpoint from, std::uint16_t type, std::uint64_t id) {
  return detail::make(EventKind::msg_deliver, to, from, type, 0, static_cast<std::int64_t>(id));
}
inline Event msg_drop(Endpoint from, Endpoint to, std::uint16_t type, DropReason reason,
                      std::uint64_t id) {
  return detail::make(EventKind::msg_drop, from, to, type, static_cast<std::int64_t>(reason),
                      static_cast<std::int64_t>(id));
}
// `key`: the key a replicated store's request is about (empty for a single store).
inline Event store_request(Endpoint node, StoreOp op, RequestId request, std::string_view key) {
  return detail::make(EventKind::store_request, node, kNoNode, detail::code(op),
                      static_cast<std::int64_t>(request), 0, 0, 0, key);
}
// `negotiated`: a granted ZooKeeper session's timeout, as text (empty otherwise).
inline Event store_apply(Endpoint node, StoreOp op, Revision revision, bool succeeded,
                         LeaseId lease, RequestId request, std::string_view negotiated) {
  return detail::make(EventKind::store_apply, node, kNoNode, detail::code(op), revision,
                      succeeded ? 1 : 0, lease, static_cast<std::int64_t>(request), negotiated);
}
inline Event store_change(std::string_view key, Change change, Revision revision, NodeId owner,
                          LeaseId lease, bool expired) {
  return detail::make(EventKind::store_change, owner, kNoNode, detail::code(change), revision,
                      lease, expired ? 1 : 0, 0, key);
}
inline Event lease_expire(LeaseId lease) {
  return detail::make(EventKind::lease_expire, kNoNode, kNoNode, 0, lease);
}
// `request`: the request answered (0 leaves it out, as for a single store).
inline Event store_reply(Endpoint node, StoreOp op, Revision revision, bool succeeded,
                         StoreError error, RequestId request) {
  return detail::make(EventKind::store_reply, node, kNoNode, detail::code(op), revision,
                      succeeded ? 1 : 0, static_cast<std::int64_t>(error),
                      static_cast<std::int64_t>(request));
}
inline Event watch_notify(Endpoint node, std::string_view key, Change change, Revision revision) {
  return detail::make(EventKind::watch_notify, node, kNoNode, detail::code(change), revision, 0, 0,
                      0, key);
}
inline Event sink_write(Endpoint writer, Token token, std::int64_t payload, bool accepted,
                        Token highest_before) {
  return detail::make(EventKind::sink_write, writer, kNoNode, 0, token, payload, accepted ? 1 : 0,
                      highest_before);
}
inline Event sink_reply(Endpoint node, Token token, bool accepted) {
  return detail::make(EventKind::sink_reply, node, kNoNode, 0, token, 0, accepted ? 1 : 0);
}
inline Event store_pause(Endpoint store, Duration duration) {
  return detail::make(EventKind::store_pause, store, kNoNode, 0, duration.count());
}
inline Event store_resume(Endpoint store) {
  return detail::make(EventKind::store_resume, store);
}
inline Event network_change(FaultKind kind, std::size_t index) {
  return detail::make(EventKind::network_change, kNoNode, kNoNode, detail::code(kind),
                      static_cast<std::int64_t>(index));
}
// `late`: how long after the writer's own deadline it committed the write (0: not late).
inline Event sink_send(Endpoint writer, Token token, std::int64_t payload, Duration send_delay,
                       Duration late) {
  return detail::make(EventKind::sink_send, writer, kNoNode, 0, token, payload, send_delay.count(),
                      late.count());
}
inline Event server_role(Endpoint member, Role role, std::int64_t term, Endpoint leader) {
  return detail::make(EventKind::server_role, member, kNoNode, detail::code(role), term, leader);
}
// `latency_ns`: from append to commit on the leader's clock; -1 for an entry of an earlier term.
inline Event raft_commit(Endpoint leader, std::int64_t index, std::int64_t term,
                         std::int64_t latency_ns) {
  return detail::make(EventKind::raft_commit, leader, kNoNode, 0, index, term, latency_ns);
}
inline Event lease_refresh(Endpoint leader, std::int64_t leases, std::int64_t term) {
  return detail::make(EventKind::lease_refresh, leader, kNoNode, 0, leases, term);
}
inline Event client_failover(Endpoint node, Endpoint member, FailoverReason reason,
                             RequestId request) {
  return detail::make(EventKind::client_failover, node, member, detail::code(reason),
                      static_cast<std::int64_t>(request));
}
inline Event server_request(Endpoint node, Endpoint server, RequestId request,
                            std::string_view op) {
  return detail::make(EventKind::server_request, node, server, 0,
                      static_cast<std::int64_t>(request), 0, 0, 0, op);
}
inline Event conn_break(Endpoint node, Endpoint peer) {
  return detail::make(EventKind::conn_break, node, peer);
}

}  // namespace electsim::sim::events
