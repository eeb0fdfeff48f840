// A store process's capacity: see servers/store/service_queue.hpp.
#include "servers/store/service_queue.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace electsim::servers {

bool proposes(sim::StoreOp op) {
  switch (op) {
    case sim::StoreOp::put:
    case sim::StoreOp::del:
    case sim::StoreOp::txn:
    case sim::StoreOp::lease_grant:
    case sim::StoreOp::lease_revoke:
      return true;
    case sim::StoreOp::get:              // a linearizable read takes a ReadIndex, not an entry
    case sim::StoreOp::lease_keepalive:  // the leader's lessor renews it (LeaseKeepAlive stream)
    case sim::StoreOp::watch:            // the watch stream
    case sim::StoreOp::unwatch:
      return false;
  }
  return false;
}

void ServiceQueue::on_start(sim::ProcessContext& ctx) {
  if (limited()) rng_.emplace(ctx.workload_rng().next_u64(), sim::StreamPurpose::server, 0);
}

bool ServiceQueue::arrive(sim::ProcessContext& ctx, Request&& request) {
  ELECTSIM_ASSERT(limited(), "only a store of finite capacity queues its requests");
  if (serving_.size() < config_.concurrency) {
    start(ctx, std::move(request));
    return true;
  }
  if (waiting_.size() >= CapacityConfig::kMaxWaiting) return false;
  if (waiting_.size() >= config_.queue_limit && proposes(request.request.op)) return false;
  waiting_.push_back(std::move(request));
  return true;
}

ServiceQueue::Request ServiceQueue::finish(sim::ProcessContext& ctx, sim::TimerId id) {
  const auto it =
      std::find_if(serving_.begin(), serving_.end(), [id](const auto& s) { return s.first == id; });
  ELECTSIM_ASSERT(it != serving_.end(), "a service timer of this queue");
  Request done = std::move(it->second);
  serving_.erase(it);
  if (!waiting_.empty()) {
    Request next = std::move(waiting_.front());
    waiting_.pop_front();
    start(ctx, std::move(next));
  }
  return done;
}

void ServiceQueue::cancel_watches_of(sim::Endpoint peer) {
  const auto is_watch = [peer](const Request& r) {
    return r.from == peer &&
           (r.request.op == sim::StoreOp::watch || r.request.op == sim::StoreOp::unwatch);
  };
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), is_watch), waiting_.end());
  for (auto& [timer, request] : serving_) {
    if (is_watch(request)) request.cancelled = true;
  }
}

void ServiceQueue::start(sim::ProcessContext& ctx, Request&& request) {
  const sim::Duration service = config_.service_time->sample(*rng_);
  serving_.emplace_back(ctx.set_timer(service, kServiceTag), std::move(request));
}

sim::StoreReply too_many_requests(const sim::StoreRequest& request, sim::Revision revision) {
  sim::StoreReply reply;
  reply.id = request.id;
  reply.op = request.op;
  reply.error = sim::StoreError::too_many_requests;
  reply.succeeded = false;
  reply.revision = revision;
  return reply;
}

}  // namespace electsim::servers
