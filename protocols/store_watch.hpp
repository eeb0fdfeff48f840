// One store watch that a protocol keeps at a time: the watch request in flight, then the watch's
// id once the store grants it. Opening a new watch closes the old one, and a watch the store
// grants after the protocol gave up on it is cancelled, so no stray watch lives on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "sim/protocol.hpp"

namespace electsim::protocols {

class StoreWatch {
 public:
  // Watches `key` from revision `from` (0: from now), closing the watch held before.
  void open(sim::Context& ctx, std::string_view key, sim::Revision from) {
    close(ctx);
    key_ = key;
    from_ = from;
    ask(ctx);
  }
  // A watch request unanswered for `after` is taken as lost and asked again, from the same
  // revision, so no change in between is missed. (ZooKeeper and etcd clients register watches
  // over a TCP stream that loses nothing; electsim's network can lose the one request.) A late
  // answer to the first request is then a watch nobody waits for, and is cancelled.
  void retry_if_unanswered(sim::Context& ctx, sim::Duration after) {
    if (request_ != 0 && ctx.monotonic_now() - asked_at_ >= after) ask(ctx);
  }
  // Cancels the watch held, if any, and forgets the one asked for.
  void close(sim::Context& ctx) {
    if (id_ != 0) {
      sim::StoreRequest unwatch;
      unwatch.op = sim::StoreOp::unwatch;
      unwatch.watch_id = id_;
      ctx.store(std::move(unwatch));
    }
    forget();
  }
  // A restarted process holds no watch (the store dropped its watches with its connection).
  void forget() {
    id_ = 0;
    request_ = 0;
  }
  // A reply to a watch request: the one awaited opens the watch; any other granted one is a
  // watch nobody waits for any more, and is cancelled.
  void on_reply(sim::Context& ctx, const sim::StoreReply& reply) {
    if (request_ != 0 && reply.id == request_) {
      request_ = 0;
      id_ = reply.watch_id;
    } else if (reply.error == sim::StoreError::none) {
      sim::StoreRequest unwatch;
      unwatch.op = sim::StoreOp::unwatch;
      unwatch.watch_id = reply.watch_id;
      ctx.store(std::move(unwatch));
    }
  }
  // Whether a notification belongs to the watch held.
  bool fired_by(const sim::WatchEvent& event) const { return id_ != 0 && event.watch_id == id_; }
  // Neither held nor asked for.
  bool idle() const { return id_ == 0 && request_ == 0; }

 private:
  void ask(sim::Context& ctx) {
    sim::StoreRequest watch;
    watch.op = sim::StoreOp::watch;
    watch.key = key_;
    watch.start_revision = from_;
    request_ = ctx.store(std::move(watch));
    asked_at_ = ctx.monotonic_now();
  }

  std::int64_t id_ = 0;
  sim::RequestId request_ = 0;
  std::string key_;
  sim::Revision from_ = 0;
  sim::LocalTime asked_at_;
};

}  // namespace electsim::protocols
