// A Redis master as a process of the world (servers/redis/redis.hpp): commands arrive as payloads
// and are answered at once. Its dataset reaches the process's durable state at each fsync
// (appendfsync), and a restart loads what was synced. The master runs on its own clock, so clock
// faults aimed at "redis:K" move the deadlines of its keys.
#pragma once

#include "servers/redis/redis.hpp"
#include "sim/process.hpp"

namespace electsim::servers {

class RedisServer final : public sim::Process {
 public:
  RedisServer(RedisConfig config, std::size_t master) : config_(config), master_(master) {}

  const Redis& redis() const { return redis_; }
  // The dataset as of the last fsync: what a crash now would leave.
  const RedisData& synced() const { return synced_; }

  void on_start(sim::ProcessContext& ctx) override;
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from,
                  const sim::Message& message) override;
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override;
  void on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) override;

 private:
  static constexpr sim::TimerTag kFsync = 1;

  void fsync(sim::ProcessContext& ctx);

  RedisConfig config_;
  std::size_t master_ = 0;
  Redis redis_;
  RedisData synced_;
  bool dirty_ = false;  // written since the last fsync
  sim::TimerId fsync_timer_ = sim::kNoTimer;
};

}  // namespace electsim::servers
