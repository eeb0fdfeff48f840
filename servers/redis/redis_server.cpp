// A Redis master's process: see servers/redis/redis_server.hpp.
#include "servers/redis/redis_server.hpp"

#include "sim/assert.hpp"

namespace electsim::servers {

void RedisServer::on_start(sim::ProcessContext& ctx) {
  // Loading the AOF: the dataset as it was at the last fsync before the crash.
  const sim::DurableState& d = ctx.durable();
  RedisData data;
  data.lock_set = d.get("lock.set") != 0;
  data.lock_value = d.get("lock.value");
  data.lock_expires_at = sim::LocalTime(d.get("lock.expires_at"));
  data.counter = d.get("counter");
  redis_ = Redis(data);
  synced_ = data;
  dirty_ = false;
  fsync_timer_ = sim::kNoTimer;
  const sim::Duration interval = config_.fsync_interval();
  if (interval.count() > 0) fsync_timer_ = ctx.set_timer(interval, kFsync);
}

void RedisServer::on_message(sim::ProcessContext& /*ctx*/, sim::Endpoint /*from*/,
                             const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "a Redis master speaks only its command payloads");
}

void RedisServer::on_payload(sim::ProcessContext& ctx, sim::Endpoint from,
                             std::uint32_t from_incarnation, sim::Payload&& payload) {
  const auto* request = payload.get_if<sim::RedisRequest>();
  ELECTSIM_ASSERT(request != nullptr, "a Redis master receives commands");
  const Redis::Outcome outcome = redis_.execute(*request, ctx.now());
  if (outcome.wrote) {
    dirty_ = true;
    // appendfsync always: the AOF is fsynced before the reply goes out (flushAppendOnlyFile in
    // beforeSleep, ahead of the replies).
    if (config_.appendfsync == Appendfsync::always) fsync(ctx);
  }
  sim::RedisReply reply;
  reply.id = request->id;
  reply.op = request->op;
  reply.master = static_cast<std::int32_t>(master_);
  reply.ok = outcome.ok;
  reply.value = outcome.value;
  ctx.reply(from, from_incarnation, sim::Payload(reply));
}

void RedisServer::on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (tag != kFsync || id != fsync_timer_) return;
  fsync(ctx);
  fsync_timer_ = ctx.set_timer(config_.fsync_interval(), kFsync);
}

void RedisServer::fsync(sim::ProcessContext& ctx) {
  if (!dirty_) return;
  // Setting an unchanged value writes nothing (sim/protocol.hpp, DurableState::set).
  const RedisData& v = redis_.data();
  sim::DurableState& d = ctx.durable();
  d.set("lock.set", v.lock_set ? 1 : 0);
  d.set("lock.value", v.lock_value);
  d.set("lock.expires_at", v.lock_expires_at.ns);
  d.set("counter", v.counter);
  synced_ = v;
  dirty_ = false;
}

}  // namespace electsim::servers
