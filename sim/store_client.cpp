// The store client of a node: see sim/store_client.hpp.
#include "sim/store_client.hpp"

#include <algorithm>
#include <utility>

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::sim {

Endpoint StoreClient::current() const {
  return current_ < config_->members.size() ? config_->members[current_] : kNoNode;
}

void StoreClient::start(ProcessContext& ctx) {
  deadline_timer_ = kNoTimer;
  if (!replicated()) return;
  const auto self = static_cast<std::size_t>(ctx.self());
  current_ = self < config_->home.size() ? config_->home[self] : self % config_->members.size();
  ELECTSIM_ASSERT(current_ < config_->members.size(), "a home member of the store");
}

void StoreClient::send(ProcessContext& ctx, StoreRequest request) {
  if (request.op == StoreOp::unwatch) {
    // The protocol names its watch by the id it knows; the member by its own.
    const auto it = std::find_if(watches_.begin(), watches_.end(),
                                 [&](const Watch& w) { return w.visible_id == request.watch_id; });
    if (it != watches_.end()) {
      request.watch_id = it->member_id;
      watches_.erase(it);
    }
  }
  transmit(ctx, Outstanding{std::move(request), kNoNode, LocalTime{}, false, 0});
}

void StoreClient::transmit(ProcessContext& ctx, Outstanding&& o, Endpoint to) {
  o.sent_to = to == kNoNode ? current() : to;
  if (config_->request_timeout.count() > 0) {
    o.deadline = ctx.now() + config_->request_timeout;
    // One timer, for the earliest deadline: a deadline set now is never earlier than one armed.
    if (deadline_timer_ == kNoTimer) {
      deadline_timer_ = ctx.set_timer(config_->request_timeout, kTimeoutTag);
    }
  }
  if (replicated()) {
    ctx.send(o.sent_to, Payload(StoreRequest(o.request)));  // kept whole for a retry elsewhere
  } else {
    // With one store nothing is ever sent again: keep only what a failure reply names.
    StoreRequest kept;
    kept.id = o.request.id;
    kept.op = o.request.op;
    kept.lease = o.request.lease;
    kept.watch_id = o.request.watch_id;
    if (kept.op == StoreOp::watch)
      kept.key = o.request.key;  // the watch it opens is resumed by key
    ctx.send(o.sent_to, Payload(std::move(o.request)));
    o.request = std::move(kept);
  }
  outstanding_.push_back(std::move(o));
}

std::optional<StoreReply> StoreClient::on_reply(ProcessContext& ctx, StoreReply&& reply) {
  const auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                               [&](const Outstanding& o) { return o.request.id == reply.id; });
  if (it == outstanding_.end()) return std::nullopt;  // given up on already
  Outstanding o = std::move(*it);
  outstanding_.erase(it);
  if (reply.error == StoreError::no_leader && !o.retried && replicated()) {
    // Retried once on the next member; the connection stays where it is (a member that lost its
    // leader usually has one again soon, and a client does not give up a live connection).
    const Endpoint other = config_->members[(current_ + 1) % config_->members.size()];
    if (ctx.traced()) {
      ctx.trace(
          events::client_failover(ctx.self(), other, FailoverReason::no_leader, o.request.id));
    }
    o.retried = true;
    transmit(ctx, std::move(o), other);
    return std::nullopt;
  }
  if (o.watch != 0) {
    // A watch the client re-created: the protocol still knows it by its first id. An answer
    // from a member the client has moved away from since is no use.
    const auto w = std::find_if(watches_.begin(), watches_.end(),
                                [&](const Watch& x) { return x.visible_id == o.watch; });
    if (w != watches_.end() && w->member == o.sent_to && reply.error == StoreError::none) {
      w->member_id = reply.watch_id;
    }
    return std::nullopt;
  }
  if (reply.op == StoreOp::watch && reply.error == StoreError::none) {
    // The protocol knows the watch by the client's id: members number their watches apart.
    const std::int64_t visible = ++last_watch_id_;
    watches_.push_back(Watch{visible, o.sent_to, reply.watch_id, o.request.key, reply.revision});
    reply.watch_id = visible;
  }
  return std::move(reply);
}

bool StoreClient::on_watch(Endpoint from, WatchEvent& event) {
  const auto it = std::find_if(watches_.begin(), watches_.end(), [&](const Watch& w) {
    return w.member == from && w.member_id == event.watch_id && w.member_id != 0;
  });
  // A watch left behind on a member the client moved away from, or a change already seen there.
  if (it == watches_.end() || event.revision <= it->seen) return false;
  it->seen = event.revision;
  event.watch_id = it->visible_id;
  return true;
}

void StoreClient::on_timer(ProcessContext& ctx, TimerId id, std::vector<StoreReply>& failed) {
  const auto reset =
      std::find_if(resets_.begin(), resets_.end(), [id](const auto& r) { return r.first == id; });
  if (reset != resets_.end()) {
    // gRPC fails the calls of a reset connection at once, and the balancer moves on.
    const Endpoint peer = reset->second;
    resets_.erase(reset);
    if (peer == current()) move_on(ctx, FailoverReason::disconnect, 0);
    for (auto it = reset_.begin(); it != reset_.end();) {
      if (it->sent_to != peer) {
        ++it;
        continue;
      }
      if (it->watch == 0) failed.push_back(failure(it->request, StoreError::unavailable));
      it = reset_.erase(it);
    }
    return;
  }
  if (id != deadline_timer_) return;
  deadline_timer_ = kNoTimer;
  // clientv3: a call past its deadline fails with DeadlineExceeded; the balancer tries another
  // endpoint. Requests expire in the order they were sent.
  const LocalTime now = ctx.now();
  std::vector<Outstanding> expired;
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    if (it->deadline > now) {
      ++it;
      continue;
    }
    expired.push_back(std::move(*it));
    it = outstanding_.erase(it);
  }
  for (Outstanding& o : expired) {
    if (o.sent_to == current()) move_on(ctx, FailoverReason::timeout, o.request.id);
    if (o.watch == 0) failed.push_back(failure(o.request, StoreError::unavailable));
  }
  // The next earliest deadline (move_on may have sent re-created watches and armed it already).
  if (deadline_timer_ == kNoTimer && !outstanding_.empty()) {
    LocalTime earliest = outstanding_.front().deadline;
    for (const Outstanding& o : outstanding_) earliest = std::min(earliest, o.deadline);
    deadline_timer_ = ctx.set_timer(earliest > now ? earliest - now : Duration(0), kTimeoutTag);
  }
}

void StoreClient::on_disconnect(ProcessContext& ctx, Endpoint peer) {
  // A member's crash, or the connection given up: with a single store the client reconnects to
  // it, fails what was in flight and re-creates its watches there.
  const bool ours =
      std::find(config_->members.begin(), config_->members.end(), peer) != config_->members.end();
  if (!ours) return;
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    if (it->sent_to != peer) {
      ++it;
      continue;
    }
    reset_.push_back(std::move(*it));
    it = outstanding_.erase(it);
  }
  resets_.emplace_back(ctx.set_timer(Duration(0), kTimeoutTag), peer);
}

void StoreClient::move_on(ProcessContext& ctx, FailoverReason reason, RequestId id) {
  // With one store there is no other member: the client stays, and only reconnects.
  if (replicated()) current_ = (current_ + 1) % config_->members.size();
  if (ctx.traced() && replicated()) {
    ctx.trace(events::client_failover(ctx.self(), current(), reason, id));
  }
  // clientv3's watch stream reconnects and resumes each watch after the last revision it saw.
  for (Watch& w : watches_) {
    w.member = current();
    w.member_id = 0;
    StoreRequest again;
    again.id = ctx.new_request_id();
    again.op = StoreOp::watch;
    again.key = w.key;
    again.start_revision = w.seen + 1;
    transmit(ctx, Outstanding{std::move(again), kNoNode, LocalTime{}, false, w.visible_id});
  }
}

StoreReply StoreClient::failure(const StoreRequest& request, StoreError error) {
  StoreReply reply;
  reply.id = request.id;
  reply.op = request.op;
  reply.error = error;
  reply.succeeded = false;
  reply.lease = request.lease;
  reply.watch_id = request.watch_id;
  return reply;
}

}  // namespace electsim::sim
