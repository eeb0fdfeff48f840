// The lease aggregator's process: see servers/aggregator/aggregator_server.hpp.
#include "servers/aggregator/aggregator_server.hpp"

#include <utility>

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::servers {

using sim::StoreError;
using sim::StoreOp;
using sim::StoreReply;
using sim::StoreRequest;

AggregatorServer::AggregatorServer(AggregatorConfig config)
    : config_(std::move(config)),
      renew_interval_(config_.renew_interval.count() > 0 ? config_.renew_interval
                                                         : config_.ttl / 3),
      upstream_(config_.upstream.get()) {
  ELECTSIM_ASSERT(config_.upstream != nullptr, "an aggregator renews at a store");
}

void AggregatorServer::on_start(sim::ProcessContext& ctx) {
  // A restarted aggregator remembers nothing: its clients' leases are gone.
  upstream_ = sim::StoreClient(config_.upstream.get());
  upstream_.start(ctx);
  lease_ = sim::kNoLease;
  grant_ = 0;
  keepalive_ = 0;
  waiting_.clear();
  waiting_at_.clear();
  forwarded_.clear();
  watches_.clear();
  holders_.clear();
  ctx.set_timer(renew_interval_, kRenewTag);
}

void AggregatorServer::on_message(sim::ProcessContext& /*ctx*/, sim::Endpoint /*from*/,
                                  const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "the aggregator speaks only store payloads");
}

void AggregatorServer::on_payload(sim::ProcessContext& ctx, sim::Endpoint from,
                                  std::uint32_t from_incarnation, sim::Payload&& payload) {
  if (auto* request = payload.get_if<StoreRequest>()) {
    on_request(ctx, Client{from, from_incarnation}, std::move(*request));
  } else if (auto* reply = payload.get_if<StoreReply>()) {
    if (std::optional<StoreReply> given = upstream_.on_reply(ctx, std::move(*reply))) {
      on_upstream_reply(ctx, std::move(*given));
    }
  } else if (auto* event = payload.get_if<sim::WatchEvent>()) {
    if (!upstream_.on_watch(from, *event)) return;
    const auto it = watches_.find(event->watch_id);
    if (it != watches_.end()) ctx.send(it->second.endpoint, sim::Payload(std::move(*event)));
  }
}

bool AggregatorServer::fresh(const sim::ProcessContext& ctx) const {
  return lease_ != sim::kNoLease && ctx.now() - confirmed_ <= config_.ttl / 3;
}

void AggregatorServer::on_request(sim::ProcessContext& ctx, Client client, StoreRequest&& request) {
  switch (request.op) {
    case StoreOp::lease_grant:
    case StoreOp::lease_keepalive: {
      if (request.op == StoreOp::lease_keepalive && request.lease != lease_) {
        // A lease of an earlier session (the shared lease expired, or this aggregator restarted).
        answer(ctx, Waiting{client, std::move(request)}, StoreError::lease_not_found);
        return;
      }
      holders_[client.endpoint].seen = ctx.now();
      Waiting w{client, std::move(request)};
      if (fresh(ctx)) {
        answer(ctx, w, StoreError::none);
        return;
      }
      // One waiting grant or keepalive per client and kind: a newer one (the client's retry,
      // its earlier try timed out) takes the older's place, so that what waits stays bounded by
      // the clients however long the store is away.
      const auto [at, added] =
          waiting_at_.try_emplace({w.client.endpoint, w.request.op}, waiting_.size());
      if (added) {
        waiting_.push_back(std::move(w));
      } else {
        waiting_[at->second] = std::move(w);
      }
      need_session(ctx);
      return;
    }
    case StoreOp::lease_revoke: {
      // The client gives its claim back: its keys go, the shared lease stays for the others.
      if (request.lease == lease_) drop_keys(ctx, client.endpoint);
      StoreReply done;
      done.id = request.id;
      done.op = request.op;
      done.lease = request.lease;
      done.error = request.lease == lease_ ? StoreError::none : StoreError::lease_not_found;
      reply(ctx, client, std::move(done));
      return;
    }
    case StoreOp::get:
    case StoreOp::put:
    case StoreOp::del:
    case StoreOp::txn:
    case StoreOp::watch:
    case StoreOp::unwatch:
      break;
  }
  Forwarded f{client, request.id, {}};
  if (request.op == StoreOp::txn && lease_ != sim::kNoLease) {
    for (const sim::TxnOp& op : request.success) {
      if (op.kind == sim::TxnOp::Kind::put && op.lease == lease_) {
        f.attaches.emplace_back(op.key, op.value);
      }
    }
  }
  if (request.op == StoreOp::unwatch) watches_.erase(request.watch_id);
  const sim::RequestId id = upstream(ctx, std::move(request));
  forwarded_.emplace(id, std::move(f));
}

sim::RequestId AggregatorServer::upstream(sim::ProcessContext& ctx, StoreRequest request) {
  request.id = ctx.new_request_id();
  if (ctx.traced()) {
    ctx.trace(sim::events::store_request(ctx.self(), request.op, request.id, request.key));
  }
  const sim::RequestId id = request.id;
  upstream_.send(ctx, std::move(request));
  return id;
}

void AggregatorServer::need_session(sim::ProcessContext& ctx) {
  if (lease_ == sim::kNoLease) {
    if (grant_ != 0) return;
    StoreRequest grant;
    grant.op = StoreOp::lease_grant;
    grant.ttl = config_.ttl;
    grant_sent_ = ctx.now();
    grant_ = upstream(ctx, std::move(grant));
    return;
  }
  if (keepalive_ != 0) return;
  StoreRequest keepalive;
  keepalive.op = StoreOp::lease_keepalive;
  keepalive.lease = lease_;
  keepalive_sent_ = ctx.now();
  keepalive_ = upstream(ctx, std::move(keepalive));
}

void AggregatorServer::on_upstream_reply(sim::ProcessContext& ctx, StoreReply&& r) {
  if (r.id != 0 && r.id == grant_) {
    grant_ = 0;
    if (r.error == StoreError::none) {
      lease_ = r.lease;
      confirmed_ = grant_sent_;
      answer_waiting(ctx, StoreError::none);
    } else {
      answer_waiting(ctx, r.error);
    }
    return;
  }
  if (r.id != 0 && r.id == keepalive_) {
    keepalive_ = 0;
    if (r.lease != lease_) return;
    if (r.error == StoreError::none) {
      confirmed_ = keepalive_sent_;
      answer_waiting(ctx, StoreError::none);
    } else if (r.error == StoreError::lease_not_found) {
      // The shared lease expired at the store, and every key on it with it.
      lease_ = sim::kNoLease;
      for (auto& [endpoint, holder] : holders_) holder.keys.clear();
      answer_waiting(ctx, StoreError::lease_not_found);
    }
    // Any other failure (no answer in time, too many requests): the waiting wait for the next.
    return;
  }
  const auto it = forwarded_.find(r.id);
  if (it == forwarded_.end()) return;
  Forwarded f = std::move(it->second);
  forwarded_.erase(it);
  if (r.op == StoreOp::watch && r.error == StoreError::none) watches_[r.watch_id] = f.client;
  if (r.op == StoreOp::txn && r.error == StoreError::none && r.succeeded) {
    for (auto& [key, value] : f.attaches) holders_[f.client.endpoint].keys[key] = value;
  }
  r.id = f.id;
  reply(ctx, f.client, std::move(r));
}

void AggregatorServer::answer(sim::ProcessContext& ctx, const Waiting& w, StoreError error) {
  StoreReply r;
  r.id = w.request.id;
  r.op = w.request.op;
  r.error = error;
  r.succeeded = error == StoreError::none;
  r.lease = error == StoreError::none ? lease_ : w.request.lease;
  if (error == StoreError::none) {
    // What is left of the shared lease as the aggregator last saw it renewed.
    r.ttl = config_.ttl - (ctx.now() - confirmed_);
  }
  reply(ctx, w.client, std::move(r));
}

void AggregatorServer::answer_waiting(sim::ProcessContext& ctx, StoreError error) {
  std::vector<Waiting> waiting = std::move(waiting_);
  waiting_.clear();
  waiting_at_.clear();
  for (const Waiting& w : waiting) {
    // A keepalive of a lease that is no longer the shared one finds it gone; a grant that
    // waited for a lease that expired asks for a new one.
    if (error == StoreError::lease_not_found && w.request.op == StoreOp::lease_grant) {
      waiting_at_.emplace(std::pair{w.client.endpoint, w.request.op}, waiting_.size());
      waiting_.push_back(w);
      continue;
    }
    answer(ctx, w, error);
  }
  if (!waiting_.empty()) need_session(ctx);
}

void AggregatorServer::drop_keys(sim::ProcessContext& ctx, sim::Endpoint client) {
  const auto it = holders_.find(client);
  if (it == holders_.end()) return;
  for (const auto& [key, value] : it->second.keys) {
    // Only while the key still holds what this client wrote: another client may have it now.
    StoreRequest del;
    del.op = StoreOp::txn;
    del.compares.push_back(
        sim::Compare{key, sim::Compare::Target::value, sim::Compare::Op::equal, 0, value});
    del.success.push_back(sim::TxnOp{sim::TxnOp::Kind::del, key, {}, sim::kNoLease});
    upstream(ctx, std::move(del));
  }
  holders_.erase(it);
}

void AggregatorServer::reply(sim::ProcessContext& ctx, Client client, StoreReply reply) {
  ctx.reply(client.endpoint, client.incarnation, sim::Payload(std::move(reply)));
}

void AggregatorServer::on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (tag == sim::StoreClient::kTimeoutTag) {
    failed_.clear();
    upstream_.on_timer(ctx, id, failed_);
    for (StoreReply& r : failed_) on_upstream_reply(ctx, std::move(r));
    return;
  }
  ELECTSIM_ASSERT(tag == kRenewTag, "the aggregator's own timer");
  ctx.set_timer(renew_interval_, kRenewTag);
  if (lease_ != sim::kNoLease) {
    // A renewal still unanswered after a whole interval is taken as lost.
    if (keepalive_ != 0 && ctx.now() - keepalive_sent_ >= renew_interval_) keepalive_ = 0;
    need_session(ctx);
  }
  // A client that has shown no sign of life for a TTL is gone: its keys go with it.
  const sim::LocalTime now = ctx.now();
  std::vector<sim::Endpoint> gone;
  for (const auto& [endpoint, holder] : holders_) {
    if (!holder.keys.empty() && now - holder.seen > config_.ttl) gone.push_back(endpoint);
  }
  for (const sim::Endpoint endpoint : gone) drop_keys(ctx, endpoint);
}

void AggregatorServer::on_disconnect(sim::ProcessContext& ctx, sim::Endpoint peer) {
  if (peer < 0) {
    upstream_.on_disconnect(ctx, peer);
    return;
  }
  // A client's connection is gone (it crashed): its watches with it. Its keys stay until it has
  // been silent for a TTL, as a lease outlives its holder's connection.
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.endpoint != peer) {
      ++it;
      continue;
    }
    StoreRequest unwatch;
    unwatch.op = StoreOp::unwatch;
    unwatch.watch_id = it->first;
    it = watches_.erase(it);
    upstream(ctx, std::move(unwatch));
  }
}

}  // namespace electsim::servers
