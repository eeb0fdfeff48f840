// The election node's process: see sim/protocol_process.hpp. The events it traces, and the moment
// it traces each, are the trace schema's (docs/trace-format.md).
#include "sim/protocol_process.hpp"

#include <optional>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::sim {

ProtocolProcess::ProtocolProcess(std::unique_ptr<Protocol> protocol, const NodeServers* servers,
                                 const StoreClientConfig* store, NodeGroup group)
    : protocol_(std::move(protocol)), servers_(servers), client_(store), group_(group) {
  ELECTSIM_ASSERT(protocol_ != nullptr, "a node process runs a protocol");
}

void ProtocolProcess::on_start(ProcessContext& ctx) {
  ctx_ = &ctx;
  const NodeId local = ctx.self() - group_.base;
  ELECTSIM_ASSERT(local >= 0 && static_cast<std::size_t>(local) < group_.size(),
                  "a node runs in its own group");
  const auto at = static_cast<std::size_t>(local);
  peers_ = PeerSet(group_.local_ids.first(at), group_.local_ids.subspan(at + 1));
  deadline_.reset();  // a restarted process has no claim
  client_.start(ctx);
  protocol_->on_start(*this);
}

void ProtocolProcess::on_message(ProcessContext& /*ctx*/, Endpoint from, const Message& message) {
  protocol_->on_message(*this, from >= 0 ? from - group_.base : from, message);
}

void ProtocolProcess::deliver(ProcessContext& ctx, const StoreReply& reply) {
  if (ctx.traced()) {
    // A replicated store's clients: which request this answers, for the history of operations
    // (a single store's trace stays as it always was).
    ctx.trace(events::store_reply(ctx.self(), reply.op, reply.revision, reply.succeeded,
                                  reply.error, client_.replicated() ? reply.id : 0));
  }
  protocol_->on_store_reply(*this, reply);
}

void ProtocolProcess::on_payload(ProcessContext& ctx, Endpoint from,
                                 std::uint32_t /*from_incarnation*/, Payload&& payload) {
  if (auto* reply = payload.get_if<StoreReply>()) {
    if (std::optional<StoreReply> given = client_.on_reply(ctx, std::move(*reply))) {
      deliver(ctx, *given);
    }
  } else if (auto* watch = payload.get_if<WatchEvent>()) {
    if (!client_.on_watch(from, *watch)) return;
    if (ctx.traced()) {
      ctx.trace(events::watch_notify(
          ctx.self(), watch->kv.key,
          watch->kind == WatchEvent::Kind::put ? events::Change::put : events::Change::del,
          watch->revision));
    }
    protocol_->on_watch(*this, *watch);
  } else if (auto* sink = payload.get_if<SinkReply>()) {
    if (ctx.traced()) ctx.trace(events::sink_reply(ctx.self(), sink->token, sink->accepted));
    protocol_->on_sink_reply(*this, *sink);
  } else if (auto* db = payload.get_if<DbReply>()) {
    protocol_->on_db_reply(*this, *db);
  } else if (auto* redis = payload.get_if<RedisReply>()) {
    protocol_->on_redis_reply(*this, *redis);
  } else if (!payload.empty()) {
    protocol_->on_reply(*this, from >= 0 ? from - group_.base : from, payload);
  }
}

void ProtocolProcess::on_timer(ProcessContext& ctx, TimerId id, TimerTag tag) {
  if (tag == StoreClient::kTimeoutTag) {
    std::vector<StoreReply> failed;
    client_.on_timer(ctx, id, failed);
    for (const StoreReply& reply : failed) deliver(ctx, reply);
    return;
  }
  if (ctx.traced()) ctx.trace(events::timer_fire(ctx.self(), tag));
  protocol_->on_timer(*this, id, tag);
}

void ProtocolProcess::on_command(ProcessContext& /*ctx*/, Command command) {
  // operator_clear is an order to a server; the loader never aims it at a node.
  if (command == Command::operator_clear) return;
  protocol_->on_command(*this, command);
}

void ProtocolProcess::on_disconnect(ProcessContext& ctx, Endpoint peer) {
  client_.on_disconnect(ctx, peer);
}

TimerId ProtocolProcess::set_timer(Duration after_local, TimerTag tag) {
  ELECTSIM_ASSERT(tag != StoreClient::kTimeoutTag, "a protocol's timer tags leave the client's");
  return ctx_->set_timer(after_local, tag);
}

void ProtocolProcess::send(Endpoint to, const Message& message) {
  ELECTSIM_ASSERT(to < 0 || static_cast<std::size_t>(to) < group_.size(),
                  "messages go to the group's nodes or to servers");
  ELECTSIM_ASSERT(to != self(), "a node does not message itself");
  ctx_->send(to >= 0 ? to + group_.base : to, message);
}

void ProtocolProcess::broadcast(const Message& message) {
  // The kernel's peers of a node are its group's other nodes, by their world ids.
  for (NodeId peer : ctx_->peers()) ctx_->send(peer, message);
}

void ProtocolProcess::announce(const Belief& belief) {
  Belief seen = belief;
  if (seen.known_leader >= 0) seen.known_leader += group_.base;
  ctx_->announce(seen);
}

RequestId ProtocolProcess::store(StoreRequest request) {
  const RequestId id = ctx_->new_request_id();
  request.id = id;
  if (ctx_->traced()) {
    // A txn names its keys in its compares and ops: the history shows the first.
    std::string_view key;
    if (client_.replicated()) {
      key = !request.key.empty()        ? std::string_view(request.key)
            : !request.compares.empty() ? std::string_view(request.compares.front().key)
            : !request.success.empty()  ? std::string_view(request.success.front().key)
                                        : std::string_view();
    }
    ctx_->trace(events::store_request(ctx_->self(), request.op, id, key));
  }
  client_.send(*ctx_, std::move(request));
  return id;
}

RequestId ProtocolProcess::sink_write(Token token, std::int64_t payload, Duration send_delay) {
  ELECTSIM_ASSERT(send_delay.count() >= 0, "a send delay is never negative");
  const RequestId id = ctx_->new_request_id();
  if (ctx_->traced()) {
    // Committed after the writer's own deadline: how late, on its clock.
    Duration late{0};
    if (deadline_ && ctx_->monotonic_now() > *deadline_) late = ctx_->monotonic_now() - *deadline_;
    ctx_->trace(events::sink_send(ctx_->self(), token, payload, send_delay, late));
  }
  if (send_delay.count() == 0) {
    ctx_->send(servers_->sink, Payload(SinkWrite{id, token, payload, group_.index}));
  } else {
    ctx_->send_later(send_delay, servers_->sink,
                     Payload(SinkWrite{id, token, payload, group_.index}));
  }
  return id;
}

void ProtocolProcess::trace_server_request(Endpoint server, RequestId id, const char* op) {
  if (ctx_->traced()) ctx_->trace(events::server_request(ctx_->self(), server, id, op));
}

RequestId ProtocolProcess::db(DbRequest request) {
  const RequestId id = ctx_->new_request_id();
  request.id = id;
  trace_server_request(servers_->database, id, db_op_name(request.op));
  ctx_->send(servers_->database, Payload(request));
  return id;
}

RequestId ProtocolProcess::redis(std::size_t master, RedisRequest request) {
  ELECTSIM_ASSERT(master < servers_->redis.size(), "a Redis master's index");
  const Endpoint to = servers_->redis[master];
  const RequestId id = ctx_->new_request_id();
  request.id = id;
  trace_server_request(to, id, redis_op_name(request.op));
  ctx_->send(to, Payload(request));
  return id;
}

}  // namespace electsim::sim
