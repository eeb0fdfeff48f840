// Names of the kernel's enumerations, as they appear in traces, reports and error messages. These
// strings are part of the trace schema (docs/trace-format.md): never rename one.
#include <string>
#include <string_view>
#include <vector>

#include "sim/event.hpp"
#include "sim/fault.hpp"
#include "sim/ids.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"
#include "sim/topology.hpp"
#include "sim/wire.hpp"

namespace electsim::sim {

const char* store_op_name(StoreOp op) {
  switch (op) {
    case StoreOp::get:
      return "get";
    case StoreOp::put:
      return "put";
    case StoreOp::del:
      return "delete";
    case StoreOp::txn:
      return "txn";
    case StoreOp::lease_grant:
      return "lease_grant";
    case StoreOp::lease_keepalive:
      return "lease_keepalive";
    case StoreOp::lease_revoke:
      return "lease_revoke";
    case StoreOp::watch:
      return "watch";
    case StoreOp::unwatch:
      return "unwatch";
  }
  return "?";
}

const char* store_error_name(StoreError error) {
  switch (error) {
    case StoreError::none:
      return "none";
    case StoreError::lease_not_found:
      return "lease_not_found";
    case StoreError::watch_not_found:
      return "watch_not_found";
    case StoreError::resource_exhausted:
      return "resource_exhausted";
    case StoreError::no_leader:
      return "no_leader";
    case StoreError::unavailable:
      return "unavailable";
    case StoreError::too_many_requests:
      return "too_many_requests";
  }
  return "?";
}

const char* failover_reason_name(FailoverReason reason) {
  switch (reason) {
    case FailoverReason::timeout:
      return "timeout";
    case FailoverReason::no_leader:
      return "no_leader";
    case FailoverReason::disconnect:
      return "disconnect";
  }
  return "?";
}

const char* role_name(Role role) {
  switch (role) {
    case Role::follower:
      return "follower";
    case Role::candidate:
      return "candidate";
    case Role::leader:
      return "leader";
  }
  return "?";
}

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::run_start:
      return "run_start";
    case EventKind::run_end:
      return "run_end";
    case EventKind::fault:
      return "fault";
    case EventKind::belief:
      return "belief";
    case EventKind::crash:
      return "crash";
    case EventKind::restart:
      return "restart";
    case EventKind::pause:
      return "pause";
    case EventKind::resume:
      return "resume";
    case EventKind::clock_change:
      return "clock_change";
    case EventKind::timer_fire:
      return "timer_fire";
    case EventKind::msg_send:
      return "msg_send";
    case EventKind::msg_deliver:
      return "msg_deliver";
    case EventKind::msg_drop:
      return "msg_drop";
    case EventKind::store_request:
      return "store_request";
    case EventKind::store_apply:
      return "store_apply";
    case EventKind::store_change:
      return "store_change";
    case EventKind::lease_expire:
      return "lease_expire";
    case EventKind::store_reply:
      return "store_reply";
    case EventKind::watch_notify:
      return "watch_notify";
    case EventKind::sink_write:
      return "sink_write";
    case EventKind::sink_reply:
      return "sink_reply";
    case EventKind::store_pause:
      return "store_pause";
    case EventKind::store_resume:
      return "store_resume";
    case EventKind::network_change:
      return "network_change";
    case EventKind::sink_send:
      return "sink_send";
    case EventKind::server_role:
      return "server_role";
    case EventKind::raft_commit:
      return "raft_commit";
    case EventKind::lease_refresh:
      return "lease_refresh";
    case EventKind::client_failover:
      return "client_failover";
    case EventKind::server_request:
      return "server_request";
    case EventKind::conn_break:
      return "conn_break";
  }
  return "?";
}

const char* db_op_name(DbOp op) {
  switch (op) {
    case DbOp::try_advisory_lock:
      return "try_advisory_lock";
    case DbOp::advisory_unlock:
      return "advisory_unlock";
    case DbOp::lock_row:
      return "lock_row";
    case DbOp::lock_row_skip_locked:
      return "lock_row_skip_locked";
    case DbOp::end_transaction:
      return "end_transaction";
    case DbOp::check:
      return "check";
    case DbOp::set_flag:
      return "set_flag";
    case DbOp::clear_flag:
      return "clear_flag";
    case DbOp::write:
      return "write";
  }
  return "?";
}

const char* redis_op_name(RedisOp op) {
  switch (op) {
    case RedisOp::set_nx_px:
      return "set_nx_px";
    case RedisOp::release:
      return "release";
    case RedisOp::extend:
      return "extend";
    case RedisOp::incr:
      return "incr";
  }
  return "?";
}

std::vector<std::string> db_op_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kDbOpCount; ++i) names.emplace_back(db_op_name(static_cast<DbOp>(i)));
  return names;
}

std::vector<std::string> redis_op_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kRedisOpCount; ++i)
    names.emplace_back(redis_op_name(static_cast<RedisOp>(i)));
  return names;
}

const char* drop_reason_name(DropReason reason) {
  switch (reason) {
    case DropReason::loss:
      return "loss";
    case DropReason::cut_at_send:
      return "cut_at_send";
    case DropReason::cut_on_arrival:
      return "cut_on_arrival";
    case DropReason::node_down:
      return "node_down";
    case DropReason::overload:
      return "overload";
  }
  return "?";
}

}  // namespace electsim::sim
