// The store's process: see servers/store/store_server.hpp.
#include "servers/store/store_server.hpp"

#include <string>
#include <utility>

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::servers {

void StoreServer::on_start(sim::ProcessContext& ctx) {
  const StoreConfig& config = store_.config();
  if (config.expiry_scan_interval.count() > 0) {
    ctx.set_timer(first_scan_after(config, ctx.workload_rng()), kScan);
  }
  queue_.on_start(ctx);
}

LocalTime StoreServer::clock(const sim::ProcessContext& ctx) {
  // etcd's lessor (lease/lessor.go: time.Now() values compared with time.Now(), which Go compares
  // on their monotonic readings), ZooKeeper's SessionTrackerImpl and ExpiryQueue
  // (Time.currentElapsedTime, System.nanoTime, since ZOOKEEPER-1366) and Consul's session timers
  // and lock-delay (time.AfterFunc, time.Now().Add) all time on the monotonic clock: drift moves
  // them, a wall-clock step does not.
  return ctx.monotonic_now();
}

void StoreServer::on_message(sim::ProcessContext& /*ctx*/, sim::Endpoint /*from*/,
                             const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "the store speaks only its request payloads");
}

void StoreServer::on_payload(sim::ProcessContext& ctx, sim::Endpoint from,
                             std::uint32_t from_incarnation, sim::Payload&& payload) {
  auto* request = payload.get_if<StoreRequest>();
  ELECTSIM_ASSERT(request != nullptr, "the store receives store requests");
  ELECTSIM_ASSERT(from != sim::kNoNode, "store clients are election nodes or proxies");
  if (!queue_.limited()) {
    serve(ctx, from, from_incarnation, *request);
    return;
  }
  if (!queue_.arrive(ctx, {from, from_incarnation, *request})) {
    ctx.reply(from, from_incarnation, sim::Payload(too_many_requests(*request, store_.revision())));
  }
}

void StoreServer::serve(sim::ProcessContext& ctx, sim::Endpoint from,
                        std::uint32_t from_incarnation, const StoreRequest& request) {
  out_.clear();
  StoreReply reply = store_.apply(from, request, clock(ctx), out_);
  if (ctx.traced()) {
    const std::string negotiated = negotiated_timeout_text(request, reply);
    ctx.trace(apply_event(from, request, reply, negotiated));
  }
  // The reply belongs to the connection of the incarnation that sent the request. A watch's
  // answer (etcd's Created response) comes before the changes it resumes from its start
  // revision, as on a store member.
  const bool watch = request.op == StoreOp::watch || request.op == StoreOp::unwatch;
  if (watch) ctx.reply(from, from_incarnation, sim::Payload(std::move(reply)));
  publish(ctx);
  if (!watch) ctx.reply(from, from_incarnation, sim::Payload(std::move(reply)));
  schedule_expiry(ctx);
}

void StoreServer::on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (tag == ServiceQueue::kServiceTag) {
    const ServiceQueue::Request done = queue_.finish(ctx, id);
    if (!done.cancelled) serve(ctx, done.from, done.from_incarnation, done.request);
    return;
  }
  if (tag == kScan) {
    expire(ctx);
    ctx.set_timer(store_.config().expiry_scan_interval, kScan);
    return;
  }
  if (id == expiry_timer_) expiry_timer_ = sim::kNoTimer;
  expire(ctx);
  schedule_expiry(ctx);
}

void StoreServer::on_disconnect(sim::ProcessContext& /*ctx*/, sim::Endpoint peer) {
  // A client's watches live on its connection (etcd cancels a stream's watches when it closes).
  if (peer < 0) return;
  store_.drop_watches_of(peer);
  if (queue_.limited()) queue_.cancel_watches_of(peer);
}

void StoreServer::on_command(sim::ProcessContext& ctx, sim::Command command) {
  if (command != sim::Command::operator_clear || store_.config().leader_key.empty()) return;
  StoreRequest request;
  request.op = StoreOp::del;
  request.key = store_.config().leader_key;
  out_.clear();
  store_.apply(kNoNode, request, clock(ctx), out_);
  publish(ctx);
  schedule_expiry(ctx);
}

void StoreServer::on_clock_change(sim::ProcessContext& ctx) {
  // Expiry is judged on the monotonic reading, which a step leaves alone but a drift change bends:
  // a store that times each deadline looks again now (the timer armed before still fires, and
  // finds nothing or something due). One that scans reads the bent clock at its next scan, as a
  // member does and as etcd's lessor, which looks every 500 ms whatever the clock did: a look
  // now would revoke a second batch of up to lease_revoke_rate x interval leases before then.
  if (store_.config().expiry_scan_interval.count() > 0) return;
  expiry_timer_ = sim::kNoTimer;
  ctx.set_timer(Duration(0), kExpiry);
}

void StoreServer::expire(sim::ProcessContext& ctx) {
  out_.clear();
  store_.expire_leases(clock(ctx), out_);
  publish(ctx);
}

void StoreServer::publish(sim::ProcessContext& ctx) {
  if (ctx.traced()) {
    for (const StoreChange& change : out_.changes)
      ctx.trace(change_event(change, ctx.cluster_size()));
    for (LeaseId lease : out_.expired_leases) ctx.trace(sim::events::lease_expire(lease));
  }
  for (WatchNotification& n : out_.notifications) {
    ctx.send(n.to, sim::Payload(std::move(n.event)));
  }
}

void StoreServer::schedule_expiry(sim::ProcessContext& ctx) {
  if (store_.config().expiry_scan_interval.count() > 0) return;  // scans find expiries
  const std::optional<LocalTime> deadline = store_.next_lease_deadline();
  if (!deadline) return;
  const LocalTime now = clock(ctx);
  const Duration wait = *deadline > now ? *deadline - now : Duration(0);
  if (ctx.timer_fires_by(expiry_timer_, wait)) return;
  expiry_timer_ = ctx.set_timer(wait, kExpiry);
}

}  // namespace electsim::servers
