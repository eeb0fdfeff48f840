// A store process's front door when it has finite capacity (the `capacity` of the store section):
// every client request takes a service time drawn from a distribution, at most `concurrency` at a
// time, and the rest wait in arrival order. A request takes effect when its service ends, which
// is then its linearization point. Off by default: every request is served the moment it
// arrives, and no draw is made.
//
// What it stands for in etcd 3.5: a member applies its committed entries one after another
// (server/etcdserver/server.go's apply loop), so a burst of writes waits for the ones before it;
// when more than 5000 committed entries wait to be applied, a new proposal is refused at once with
// "etcdserver: too many requests" (v3_server.go, processInternalRaftRequestOnce, against
// maxGapBetweenApplyAndCommitIndex). Only proposals are refused: keepalives go to the leader's
// lessor, reads and watches are served beside the log, and in etcd none of them meets that
// check. Here they wait in the same queue, since they share the member's CPU, and are refused only
// at kMaxWaiting, the bound on the memory a queue may take: an overloaded store whose clients
// retry sooner than it serves them would otherwise queue without end. Simplified: one queue for
// every kind of request, a service time that does not depend on the request's size, and no separate
// disk (the disk section models fsyncs on their own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/process.hpp"
#include "sim/rng.hpp"
#include "sim/store_types.hpp"

namespace electsim::servers {

struct CapacityConfig {
  // Set: each request takes this long to serve. Unset: capacity is unlimited (the default).
  std::optional<sim::Distribution> service_time;
  std::size_t concurrency = 1;  // requests served at once (etcd applies one entry at a time)
  // Writes refused while this many requests wait (etcd: 5000 committed entries not yet applied).
  std::size_t queue_limit = 5000;
  // Every request refused while this many wait, whatever its kind: the limit on a queue's memory.
  static constexpr std::size_t kMaxWaiting = 1'000'000;
  bool limited() const { return service_time.has_value(); }
};

// Whether etcd puts `op` through Raft as a proposal, the only requests its backlog check refuses.
bool proposes(sim::StoreOp op);

class ServiceQueue {
 public:
  struct Request {
    sim::Endpoint from = sim::kNoNode;
    std::uint32_t from_incarnation = 0;
    sim::StoreRequest request;
    bool cancelled = false;  // a watch whose client's connection broke: it is not served
  };
  // The tag of the service timers, beside the store processes' own (1 to 11).
  static constexpr sim::TimerTag kServiceTag = 20;

  explicit ServiceQueue(CapacityConfig config) : config_(std::move(config)) {}

  bool limited() const { return config_.limited(); }
  // The process (re)starts: while limited, its service times get a stream of their own, seeded
  // by one draw of the process's second stream after what the process drew there itself, so that
  // a store member's Raft timeouts are drawn as they would be at unlimited capacity.
  void on_start(sim::ProcessContext& ctx);
  // A request arrived (only while limited()): it starts its service if a server is free, else it
  // waits. False, and `request` left as it was, when it is a write that the full queue refuses,
  // or any request at kMaxWaiting.
  bool arrive(sim::ProcessContext& ctx, Request&& request);
  // The service of timer `id` ended: its request, to be answered now. The next waiting request
  // starts its service.
  Request finish(sim::ProcessContext& ctx, sim::TimerId id);

  // `peer`'s connection broke: its watches waiting or in service are cancelled, as etcd ends a
  // watch stream's watches with it. Its other requests still take effect (in etcd they are in the
  // log already); only their answers are lost.
  void cancel_watches_of(sim::Endpoint peer);

 private:
  void start(sim::ProcessContext& ctx, Request&& request);

  CapacityConfig config_;
  std::optional<sim::Rng> rng_;
  std::deque<Request> waiting_;
  std::vector<std::pair<sim::TimerId, Request>> serving_;  // at most `concurrency`
};

// The answer to a write the full queue refused.
sim::StoreReply too_many_requests(const sim::StoreRequest& request, sim::Revision revision);

}  // namespace electsim::servers
