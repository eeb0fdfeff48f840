// A Context for protocol unit tests without a kernel (canonical/raft's fixture and etcd-io/raft's
// tests in spirit): it records every send, timer, store request, sink write and announcement, and
// lets a test move the node's local clock, fire timers in due order and hand in replies and watch
// events by hand. Nothing happens unless the test makes it happen.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "sim/protocol.hpp"

namespace electsim::testing {

class FakeContext final : public sim::Context {
 public:
  struct Sent {
    sim::NodeId to = sim::kNoNode;
    sim::Message message;
    sim::LocalTime at;
  };
  struct Timer {
    sim::TimerId id = sim::kNoTimer;
    sim::TimerTag tag = 0;
    sim::LocalTime set_at;
    sim::LocalTime due;
    bool armed = true;
  };
  struct StoreCall {
    sim::RequestId id = 0;
    sim::StoreRequest request;
    sim::LocalTime at;
  };
  struct Announcement {
    sim::Belief belief;
    sim::LocalTime at;
  };
  struct SinkCall {
    sim::RequestId id = 0;
    sim::Token token = 0;
    std::int64_t payload = 0;
    sim::LocalTime at;
    sim::Duration send_delay{0};
  };

  struct DbCall {
    sim::RequestId id = 0;
    sim::DbRequest request;
    sim::LocalTime at;
  };

  struct RedisCall {
    sim::RequestId id = 0;
    std::size_t master = 0;
    sim::RedisRequest request;
    sim::LocalTime at;
  };
  struct Request {
    sim::Endpoint to = sim::kNoNode;
    sim::Payload payload;
    sim::LocalTime at;
  };

  explicit FakeContext(sim::NodeId self = 0, std::size_t cluster_size = 3, std::uint64_t seed = 1)
      : self_(self),
        cluster_size_(cluster_size),
        rng_(seed, sim::StreamPurpose::node, static_cast<std::uint64_t>(self)),
        workload_rng_(seed, sim::StreamPurpose::workload, static_cast<std::uint64_t>(self)) {
    for (std::size_t i = 0; i < cluster_size; ++i) {
      if (static_cast<sim::NodeId>(i) != self) peers_.push_back(static_cast<sim::NodeId>(i));
    }
  }

  // ---- sim::Context
  sim::NodeId self() const override { return self_; }
  sim::PeerSet peers() const override { return sim::PeerSet(peers_); }
  std::size_t cluster_size() const override { return cluster_size_; }
  sim::LocalTime now() const override { return now_ + wall_step_; }
  sim::LocalTime monotonic_now() const override { return now_; }
  void send(sim::NodeId to, const sim::Message& message) override {
    sent.push_back(Sent{to, message, now_});
  }
  void broadcast(const sim::Message& message) override {
    for (sim::NodeId peer : peers_) send(peer, message);
  }
  sim::TimerId set_timer(sim::Duration after_local, sim::TimerTag tag) override {
    ELECTSIM_ASSERT(after_local.count() >= 0, "timers are set for non-negative durations");
    const sim::TimerId id = next_timer_id_++;
    timers.push_back(Timer{id, tag, now_, now_ + after_local, true});
    return id;
  }
  void cancel_timer(sim::TimerId id) override {
    for (Timer& t : timers) {
      if (t.id == id) t.armed = false;
    }
  }
  sim::Rng& rng() override { return rng_; }
  sim::Rng& workload_rng() override { return workload_rng_; }
  sim::DurableState& durable() override { return durable_; }
  sim::RequestId store(sim::StoreRequest request) override {
    const sim::RequestId id = next_request_id_++;
    request.id = id;
    store_calls.push_back(StoreCall{id, std::move(request), now_});
    return id;
  }
  sim::RequestId sink_write(sim::Token token, std::int64_t payload,
                            sim::Duration send_delay) override {
    const sim::RequestId id = next_request_id_++;
    sink_calls.push_back(SinkCall{id, token, payload, now_, send_delay});
    return id;
  }
  sim::RequestId db(sim::DbRequest request) override {
    const sim::RequestId id = next_request_id_++;
    request.id = id;
    db_calls.push_back(DbCall{id, request, now_});
    return id;
  }
  sim::RequestId redis(std::size_t master, sim::RedisRequest request) override {
    const sim::RequestId id = next_request_id_++;
    request.id = id;
    redis_calls.push_back(RedisCall{id, master, request, now_});
    return id;
  }
  void request(sim::Endpoint to, sim::Payload payload) override {
    requests.push_back(Request{to, std::move(payload), now_});
  }
  void announce(const sim::Belief& belief) override {
    announcements.push_back(Announcement{belief, now_});
  }

  // ---- Records
  std::vector<Sent> sent;
  std::vector<Timer> timers;  // every timer ever set, in the order set
  std::vector<StoreCall> store_calls;
  std::vector<SinkCall> sink_calls;
  std::vector<DbCall> db_calls;
  std::vector<RedisCall> redis_calls;
  std::vector<Request> requests;
  std::vector<Announcement> announcements;  // every call, repeats included

  // The belief the kernel would hold (it ignores repeats, so the last call is the belief).
  std::optional<sim::Belief> belief() const {
    if (announcements.empty()) return std::nullopt;
    return announcements.back().belief;
  }

  // Armed timers with this tag, earliest due first.
  std::vector<Timer> armed(sim::TimerTag tag) const {
    std::vector<Timer> out;
    for (const Timer& t : timers) {
      if (t.armed && t.tag == tag) out.push_back(t);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Timer& a, const Timer& b) { return a.due < b.due; });
    return out;
  }
  std::optional<Timer> next_timer() const {
    std::optional<Timer> best;
    for (const Timer& t : timers) {
      if (t.armed && (!best || t.due < best->due)) best = t;  // ties: the one set first
    }
    return best;
  }

  // Store requests of one kind, in the order sent; the last one of a kind.
  std::vector<StoreCall> store_calls_of(sim::StoreOp op) const {
    std::vector<StoreCall> out;
    for (const StoreCall& c : store_calls) {
      if (c.request.op == op) out.push_back(c);
    }
    return out;
  }
  std::optional<StoreCall> last_store_call(sim::StoreOp op) const {
    for (auto it = store_calls.rbegin(); it != store_calls.rend(); ++it) {
      if (it->request.op == op) return *it;
    }
    return std::nullopt;
  }

  // ---- Driving
  // Moves the local clock without firing anything: a GC pause or a clock jump as the node sees it.
  void advance(sim::Duration d) {
    ELECTSIM_ASSERT(d.count() >= 0, "the fake clock moves forward");
    now_ += d;
  }
  // Steps the wall clock alone (an NTP step, a person setting the time): now() jumps by `d`,
  // monotonic_now() and the timers do not. Timers, records and advance() keep to the monotonic
  // reading, which equals now() until the first step.
  void step_wall(sim::Duration d) { wall_step_ += d; }
  // Fires one armed timer now, whatever its due time.
  void fire(sim::Protocol& protocol, sim::TimerId id) {
    auto it = std::find_if(timers.begin(), timers.end(),
                           [id](const Timer& t) { return t.id == id && t.armed; });
    ELECTSIM_ASSERT(it != timers.end(), "firing an armed timer");
    it->armed = false;
    const sim::TimerTag tag = it->tag;  // `timers` may grow during the call
    protocol.on_timer(*this, id, tag);
  }
  // Moves the clock to the earliest armed timer (if it is due later) and fires it.
  bool fire_next(sim::Protocol& protocol) {
    const auto t = next_timer();
    if (!t) return false;
    if (t->due > now_) now_ = t->due;
    fire(protocol, t->id);
    return true;
  }
  // Fires every timer that comes due within `d`, in due order (ties in the order set), moving
  // the clock to each; then the clock stands at the end of the span.
  void run_for(sim::Protocol& protocol, sim::Duration d) {
    const sim::LocalTime end = now_ + d;
    for (;;) {
      const auto t = next_timer();
      if (!t || t->due > end) break;
      if (t->due > now_) now_ = t->due;
      fire(protocol, t->id);
    }
    now_ = end;
  }
  // Fires the earliest armed timer with this tag (moving the clock to it if it is later).
  void fire_tag(sim::Protocol& protocol, sim::TimerTag tag) {
    const auto list = armed(tag);
    ELECTSIM_ASSERT(!list.empty(), "a timer with this tag is armed");
    if (list.front().due > now_) now_ = list.front().due;
    fire(protocol, list.front().id);
  }

  // Replies and notifications, handed in as the kernel would.
  void deliver(sim::Protocol& protocol, const sim::StoreReply& reply) {
    protocol.on_store_reply(*this, reply);
  }
  void deliver(sim::Protocol& protocol, const sim::WatchEvent& event) {
    protocol.on_watch(*this, event);
  }
  void deliver(sim::Protocol& protocol, const sim::SinkReply& reply) {
    protocol.on_sink_reply(*this, reply);
  }

 private:
  sim::NodeId self_;
  std::size_t cluster_size_;
  std::vector<sim::NodeId> peers_;
  sim::LocalTime now_{0};  // the monotonic reading
  sim::Duration wall_step_{0};
  sim::Rng rng_;
  sim::Rng workload_rng_;
  sim::DurableState durable_;
  sim::TimerId next_timer_id_ = 1;
  sim::RequestId next_request_id_ = 1;
};

}  // namespace electsim::testing
