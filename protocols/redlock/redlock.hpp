// Redlock: leader election by a lock on N independent Redis masters (servers/redis), the client
// algorithm of "Distributed Locks with Redis" (redis.io/docs/manual/patterns/distributed-locks)
// as redsync implements it (github.com/go-redsync/redsync, mutex.go, v4):
//   1. take the current time, start, on the node's own clock;
//   2. SET key value NX PX expiry on every master, each request bounded by
//      expiry * timeout_factor;
//   3. the node holds the lock if a majority (N/2 + 1) answered OK and the validity time
//      expiry - elapsed - drift is still positive, drift = expiry * drift_factor + 2 ms (the
//      Redis docs' formula; redsync leaves out the 2 ms). The lock is good until
//      start + expiry - drift on the node's clock;
//   4. otherwise run the release script on every master as a round of its own, bounded like the
//      SET round by expiry * timeout_factor, and only when every master answered or that timeout
//      passed wait a random delay and retry, up to `tries` attempts (redsync's lockContext); then
//      wait relock_interval and try again.
// The holder leads. It extends at renew_interval with the check-and-pexpire script on every master
// and keeps the lock when a majority extended in time (redsync's Extend); when the validity time
// runs out on its own clock without a successful extension, it steps down.
//
// Fencing (option): after acquiring, INCR a counter on every master; the token is the largest
// value a majority returned. The counter lives on the same masters, which are no consensus
// system: a master restarted without persistence forgets its counter, and a majority that
// overlaps only in such a master can hand out a token no larger than an earlier one (Kleppmann,
// "How to do distributed locking", 2016). Without fencing a leader's epoch is the start of its
// acquisition on its own clock in milliseconds: it orders tenures only as well as the nodes'
// clocks agree, and the sink cannot tell a stale writer by it.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols::redlock {

struct RedlockConfig {
  std::size_t masters = 5;                                         // the world's redis section
  sim::Duration expiry = std::chrono::seconds(8);                  // redsync defaultExpiry
  std::int64_t tries = 32;                                         // redsync defaultTries
  sim::Duration retry_delay_min = std::chrono::milliseconds(50);   // redsync minRetryDelayMilliSec
  sim::Duration retry_delay_max = std::chrono::milliseconds(250);  // redsync maxRetryDelayMilliSec
  sim::Ppm drift_factor_ppm = 10'000;           // redsync defaultDriftFactor 0.01
  sim::Ppm timeout_factor_ppm = 50'000;         // redsync defaultTimeoutFactor 0.05
  std::optional<sim::Duration> renew_interval;  // expiry / 3 when absent
  sim::Duration relock_interval = std::chrono::seconds(1);
  bool fencing = false;
  bool recheck_before_write = true;
  WorkloadConfig workload;  // the cluster's, copied in by the registry

  sim::Duration renew() const { return renew_interval.value_or(expiry / 3); }
  // expiry * drift_factor + 2 ms (Redis docs: "plus 2 milliseconds for the minimum drift").
  sim::Duration drift() const {
    return sim::Duration(expiry.count() / 1'000'000 * drift_factor_ppm +
                         expiry.count() % 1'000'000 * drift_factor_ppm / 1'000'000) +
           std::chrono::milliseconds(2);
  }
  sim::Duration request_timeout() const {
    return sim::Duration(expiry.count() / 1'000'000 * timeout_factor_ppm +
                         expiry.count() % 1'000'000 * timeout_factor_ppm / 1'000'000);
  }
  std::size_t quorum() const { return masters / 2 + 1; }
};

std::span<const params::ParamSpec> redlock_params();
std::optional<RedlockConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                         params::Problems& problems);

// The registry entry: name "redlock".
ProtocolInfo protocol_info();

class RedlockNode final : public sim::Protocol {
 public:
  explicit RedlockNode(std::shared_ptr<const RedlockConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& /*ctx*/, const sim::StoreReply& /*reply*/) override {}
  void on_watch(sim::Context& /*ctx*/, const sim::WatchEvent& /*event*/) override {}
  void on_sink_reply(sim::Context& /*ctx*/, const sim::SinkReply& /*reply*/) override {}
  void on_redis_reply(sim::Context& ctx, const sim::RedisReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  bool leads() const { return state_ == State::leading; }
  sim::Token token() const { return token_; }
  sim::LocalTime valid_until() const { return until_; }
  std::int64_t lock_value() const { return value_; }
  const Writer& writer() const { return writer_; }

  static constexpr sim::TimerTag kRetryTag = 1;     // next acquisition attempt
  static constexpr sim::TimerTag kRoundTag = 2;     // a round's requests time out
  static constexpr sim::TimerTag kRenewTag = 3;     // the holder extends
  static constexpr sim::TimerTag kValidityTag = 4;  // the holder's validity time runs out

 private:
  enum class State : std::uint8_t { idle, acquiring, fencing, releasing, leading, stopped };
  enum class Round : std::uint8_t { none, acquire, incr, extend, release };

  // One request to every master; the round ends when every master answered or the request
  // timeout passed (redsync's actOnPoolsAsync under a context with that timeout).
  void start_round(sim::Context& ctx, Round kind, sim::RedisOp op);
  void end_round(sim::Context& ctx);
  void attempt(sim::Context& ctx);
  void failed_attempt(sim::Context& ctx);
  void schedule_retry(sim::Context& ctx);
  void release_all(sim::Context& ctx);
  void become_leader(sim::Context& ctx);
  void step_down(sim::Context& ctx);
  void cancel(sim::Context& ctx, sim::TimerId& timer);

  std::shared_ptr<const RedlockConfig> config_;
  Writer writer_;
  State state_ = State::idle;
  Round round_ = Round::none;
  std::array<sim::RequestId, sim::kMaxRedisMasters> ids_{};  // this round's, by master
  std::size_t answered_ = 0;
  std::size_t ok_ = 0;
  std::int64_t max_value_ = 0;  // incr: the largest counter returned
  sim::LocalTime round_start_;
  // redsync measures with Go's time.Now, whose monotonic reading Sub and Before use: the
  // validity is counted on the monotonic clock, and a wall-clock step on the client moves it
  // not. The token without fencing is the start's wall-clock reading.
  sim::LocalTime attempt_start_;  // the acquisition's start: its validity counts from here
  sim::LocalTime attempt_wall_;
  std::int64_t attempts_ = 0;
  std::int64_t value_ = 0;  // the lock's random value
  sim::Token token_ = 0;
  sim::LocalTime until_;
  sim::TimerId retry_timer_ = sim::kNoTimer;
  sim::TimerId round_timer_ = sim::kNoTimer;
  sim::TimerId renew_timer_ = sim::kNoTimer;
  sim::TimerId validity_timer_ = sim::kNoTimer;
};

}  // namespace electsim::protocols::redlock
