// The event schema table (sim/event_schema.hpp). Field names and enumeration names are part of the
// trace format: never rename one within a schema version (analysis/trace.hpp).
#include "sim/event_schema.hpp"

#include <array>

namespace electsim::sim {

namespace {

using F = FieldFormat;
using S = Slot;

constexpr std::array kRunStart = {
    EventField{S::a, "nodes", F::integer},
    EventField{S::b, "seed", F::unsigned_bits},
};
constexpr std::array kFault = {
    EventField{S::code, "fault", F::fault, false, "fault kind"},
    EventField{S::node, "node", F::endpoint, false,
               "resolved target, or the *from* endpoint of a `cut`; `null` if none"},
    EventField{S::peer, "peer", F::endpoint, true,
               "the *to* endpoint of a `cut`; omitted otherwise"},
    EventField{S::a, "index", F::integer, false, "position in the fault schedule"},
    EventField{S::b, "duration_ns", F::integer, false, "0 if none"},
    EventField{S::c, "skipped", F::boolean, false, "true if a role target resolved to nobody"},
    EventField{S::text, "groups", F::text, true,
               "partition only, e.g. `\"0,1|2,3,4,store\"`; endpoints in no group keep all their "
               "links"},
};
constexpr std::array kBelief = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::code, "role", F::role},
    EventField{S::a, "epoch", F::integer},
    EventField{S::b, "leader", F::endpoint, false, "the leader a follower knows, or `null`"},
};
constexpr std::array kCrash = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::a, "graceful", F::boolean, false,
               "true for a `stop`, and at 0 for a node that starts stopped: an auto-scaler's "
               "replica not started yet, docs/scenario-format.md"},
};
constexpr std::array kNodeOnly = {
    EventField{S::node, "node", F::endpoint},
};
constexpr std::array kPause = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::a, "duration_ns", F::integer},
};
constexpr std::array kClockChange = {
    EventField{S::node, "node", F::endpoint, false, "or `\"store\"`"},
    EventField{S::code, "what", F::clock_what, false, "`drift`, `step`, `offset`"},
    EventField{S::a, "drift_ppb", F::integer},
    EventField{S::b, "amount_ns", F::integer},
};
constexpr std::array kTimerFire = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::a, "tag", F::integer},
};
constexpr std::string_view kMessageId =
    "the message's number among the run's sends, from 1; its delivery or drop carries the same "
    "id, and so does a network duplicate";
constexpr std::array kMsgSend = {
    EventField{S::node, "from", F::endpoint},
    EventField{S::peer, "to", F::endpoint},
    EventField{S::code, "type", F::message_type},
    EventField{S::b, "id", F::integer, false, kMessageId},
};
constexpr std::array kMsgDeliver = {
    EventField{S::node, "to", F::endpoint},
    EventField{S::peer, "from", F::endpoint},
    EventField{S::code, "type", F::message_type},
    EventField{S::b, "id", F::integer, false, "the id of its `msg_send`"},
};
constexpr std::array kMsgDrop = {
    EventField{S::node, "from", F::endpoint},
    EventField{S::peer, "to", F::endpoint},
    EventField{S::code, "type", F::message_type},
    EventField{S::a, "reason", F::drop_reason},
    EventField{S::b, "id", F::integer, false, "the id of its `msg_send`"},
};
constexpr std::array kStoreRequest = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::code, "op", F::store_op},
    EventField{S::a, "request", F::integer, false, "request id"},
    EventField{S::text, "key", F::text, true,
               "a replicated store only: the key the request is about, a txn's first compared "
               "key"},
};
constexpr std::array kStoreApply = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::code, "op", F::store_op},
    EventField{S::a, "revision", F::integer, false, "store revision after it"},
    EventField{S::b, "succeeded", F::boolean},
    EventField{S::c, "lease", F::integer},
    EventField{S::d, "request", F::integer},
    EventField{S::text, "negotiated_timeout", F::text, true,
               "only for a granted ZooKeeper session, the `zookeeper` protocol's `lease_grant`: "
               "`\"40s\"`, the timeout the store granted within [2, 20] x `store.tick_time`"},
};
constexpr std::array kStoreChange = {
    EventField{S::text, "key", F::text},
    EventField{S::code, "change", F::change, false, "`put`, `delete`"},
    EventField{S::a, "revision", F::integer},
    EventField{S::node, "owner", F::endpoint, false,
               "the value as a node id, or the node id leading a client-mode lease record "
               "`\"<id> <lease duration ns> <renew time ns>\"`; else `null`"},
    EventField{S::b, "lease", F::integer},
    EventField{S::c, "expired", F::boolean, false, "true when written by lease expiry"},
};
constexpr std::array kLeaseExpire = {
    EventField{S::a, "lease", F::integer},
};
constexpr std::array kStoreReply = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::code, "op", F::store_op},
    EventField{S::a, "revision", F::integer},
    EventField{S::b, "succeeded", F::boolean},
    EventField{S::c, "error", F::integer, false,
               "0 none, 1 lease not found, 2 watch not found, 3 resource exhausted, 4 no leader: "
               "the member knew none, 5 unavailable: the client gave up after `request_timeout`, "
               "or its connection broke (the server crashed, or TCP gave up), 6 too many requests: "
               "a store "
               "of finite capacity refused a write while its queue was full"},
    EventField{S::d, "request", F::integer, true,
               "a replicated store only: the request it answers"},
};
constexpr std::array kWatchNotify = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::text, "key", F::text},
    EventField{S::code, "change", F::change},
    EventField{S::a, "revision", F::integer},
};
constexpr std::array kSinkWrite = {
    EventField{S::node, "writer", F::endpoint},
    EventField{S::a, "token", F::integer},
    EventField{S::b, "payload", F::integer},
    EventField{S::c, "accepted", F::boolean},
    EventField{S::d, "highest_before", F::integer, false, "highest token accepted before"},
};
constexpr std::array kSinkReply = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::a, "token", F::integer},
    EventField{S::c, "accepted", F::boolean},
};
constexpr std::array kStorePause = {
    EventField{S::node, "node", F::endpoint, false, "`\"store\"`"},
    EventField{S::a, "duration_ns", F::integer},
};
constexpr std::array kNetworkChange = {
    EventField{S::code, "fault", F::fault, false,
               "the kind whose links changed; `heal` when one ended"},
    EventField{S::a, "index", F::integer},
};
constexpr std::array kSinkSend = {
    EventField{S::node, "writer", F::endpoint},
    EventField{S::a, "token", F::integer},
    EventField{S::b, "payload", F::integer},
    EventField{S::c, "send_delay_ns", F::integer},
    EventField{S::d, "late_ns", F::integer, true,
               "only when above 0: the write was committed this long after the writer's own "
               "deadline, a lease's renew deadline, had passed on its clock"},
};
constexpr std::array kServerRole = {
    EventField{S::node, "member", F::endpoint},
    EventField{S::code, "role", F::role},
    EventField{S::a, "term", F::integer},
    EventField{S::b, "leader", F::endpoint, false, "the member it knows leads, or `null`"},
};
constexpr std::array kRaftCommit = {
    EventField{S::node, "leader", F::endpoint},
    EventField{S::a, "index", F::integer},
    EventField{S::b, "term", F::integer, false, "of the entry"},
    EventField{S::c, "latency_ns", F::integer, false,
               "from the leader's append to the commit on its clock; -1 for an entry of an "
               "earlier term"},
};
constexpr std::array kLeaseRefresh = {
    EventField{S::node, "leader", F::endpoint},
    EventField{S::a, "leases", F::integer},
    EventField{S::b, "term", F::integer},
};
constexpr std::array kClientFailover = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::peer, "member", F::endpoint},
    EventField{S::code, "reason", F::failover_reason, false,
               "`timeout`, `no_leader`, `disconnect`"},
    EventField{S::a, "request", F::integer, false, "0: none"},
};
constexpr std::array kServerRequest = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::peer, "server", F::endpoint, false, "`postgres`, `redis:K`"},
    EventField{S::a, "request", F::integer, false, "request id"},
    EventField{S::text, "op", F::text, false,
               "the statement or command: `try_advisory_lock`, `advisory_unlock`, `lock_row`, "
               "`lock_row_skip_locked`, `end_transaction`, `check`, `set_flag`, `clear_flag`, "
               "`write`; `set_nx_px`, `release`, `extend`, `incr`"},
};
constexpr std::array kConnBreak = {
    EventField{S::node, "node", F::endpoint},
    EventField{S::peer, "peer", F::endpoint},
};

EventKindSchema make(std::span<const EventField> fields, std::string_view note = {}) {
  return EventKindSchema{fields, note};
}

EventKindSchema schema_of(EventKind kind) {
  switch (kind) {
    case EventKind::run_start:
      return make(kRunStart);
    case EventKind::run_end:
      return make({});
    case EventKind::fault:
      return make(kFault);
    case EventKind::belief:
      return make(kBelief);
    case EventKind::crash:
      return make(kCrash);
    case EventKind::restart:
      return make(kNodeOnly);
    case EventKind::pause:
      return make(kPause);
    case EventKind::resume:
      return make(kNodeOnly);
    case EventKind::clock_change:
      return make(kClockChange);
    case EventKind::timer_fire:
      return make(kTimerFire);
    case EventKind::msg_send:
      return make(kMsgSend);
    case EventKind::msg_deliver:
      return make(kMsgDeliver);
    case EventKind::msg_drop:
      return make(kMsgDrop);
    case EventKind::store_request:
      return make(kStoreRequest);
    case EventKind::store_apply:
      return make(kStoreApply,
                  "a lock acquire refused under lock-delay (the `consul` protocol) is a `txn` with "
                  "`succeeded` false and no `store_change`");
    case EventKind::store_change:
      return make(kStoreChange,
                  "a key released when its lease ended (a Consul session with Behavior release) is "
                  "a `put` with `lease` 0 and `owner` `null`");
    case EventKind::lease_expire:
      return make(kLeaseExpire);
    case EventKind::store_reply:
      return make(kStoreReply);
    case EventKind::watch_notify:
      return make(kWatchNotify);
    case EventKind::sink_write:
      return make(kSinkWrite,
                  "also the database server's decision on a write with its fencing check in the "
                  "same transaction (the `postgres` protocol's `same_transaction`), which has no "
                  "`sink_send`");
    case EventKind::sink_reply:
      return make(kSinkReply);
    case EventKind::store_pause:
      return make(kStorePause);
    case EventKind::store_resume:
      return make(std::span(kStorePause).first(1));
    case EventKind::network_change:
      return make(kNetworkChange);
    case EventKind::sink_send:
      return make(kSinkSend,
                  "the writer committed a write (after its last check, if it makes one); the "
                  "write leaves the process `send_delay_ns` later on the writer's clock, later "
                  "still if a pause falls in between, never if it crashes. Its `sink_write` (same "
                  "writer and payload) is the sink's decision");
    case EventKind::server_role:
      return make(kServerRole,
                  "a replicated store's member changed its Raft role or term (a pre-candidate "
                  "shows as a follower)");
    case EventKind::raft_commit:
      return make(kRaftCommit, "the store's leader committed a log entry");
    case EventKind::lease_refresh:
      return make(kLeaseRefresh, "a new store leader refreshed every lease on promotion");
    case EventKind::client_failover:
      return make(kClientFailover,
                  "a node's store client moved to `member`, or (`no_leader`) sent one request "
                  "there once more");
    case EventKind::server_request:
      return make(kServerRequest, "a node sent a request to the database server or a Redis master");
    case EventKind::conn_break:
      return make(kConnBreak,
                  "`node`'s TCP gave up its connection to `peer` after `network.tcp.retries2` "
                  "retransmissions (or `tcp_syn_retries` for a connection never set up) went "
                  "unanswered; both directions end, and `node` is told as of a reset");
  }
  return make({});
}

const std::array<EventKindSchema, kEventKindCount>& table() {
  static const std::array<EventKindSchema, kEventKindCount> t = [] {
    std::array<EventKindSchema, kEventKindCount> out{};
    for (int k = 0; k < kEventKindCount; ++k) out[k] = schema_of(static_cast<EventKind>(k));
    return out;
  }();
  return t;
}

// Markdown table cells cannot hold a bare '|'.
void append_cell_text(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
}

}  // namespace

const EventKindSchema& event_schema(EventKind kind) {
  return table()[static_cast<std::size_t>(kind)];
}

std::string event_table_markdown() {
  std::string out = "| `ev` | fields |\n|---|---|\n";
  for (int k = 0; k < kEventKindCount; ++k) {
    const auto kind = static_cast<EventKind>(k);
    const EventKindSchema& schema = event_schema(kind);
    out += "| `";
    out += event_kind_name(kind);
    out += "` | ";
    if (schema.fields.empty()) out += "—";
    for (std::size_t i = 0; i < schema.fields.size(); ++i) {
      const EventField& f = schema.fields[i];
      if (i > 0) out += ", ";
      out += '`';
      out += f.name;
      out += '`';
      if (!f.meaning.empty()) {
        out += " (";
        append_cell_text(out, f.meaning);
        out += ')';
      }
    }
    if (!schema.note.empty()) {
      out += ": ";
      append_cell_text(out, schema.note);
    }
    out += " |\n";
  }
  return out;
}

}  // namespace electsim::sim
