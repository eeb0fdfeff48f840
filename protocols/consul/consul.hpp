// Leader election with a Consul lock, as `consul lock` and the Go client's api.Lock take it
// (api/lock.go; Consul's "Application leader election" guide): each candidate
// creates a session with a TTL, renews it every TTL/2, and acquires one KV key with
// PUT ?acquire=<session>; the holder monitors the key with blocking queries and calls the lock
// lost once the key no longer names its session. The Consul servers are electsim's store (single
// or replicated): a session is a store lease whose TTL is twice the session's (the servers
// invalidate a session only after TTL x 2, agent/consul/session_ttl.go), granted with Consul's
// LockDelay and Behavior; the store refuses a lock acquire while the key is under lock-delay.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "protocols/store_watch.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols::consul {

// What the servers do with a session's keys when it is invalidated (the session's Behavior).
enum class Behavior : std::uint8_t {
  release,  // the key stays, with no Session (Consul's default)
  del,      // the key is deleted
};

// Which number the holder writes to the sink with.
enum class FencingToken : std::uint8_t {
  modify_index,  // the acquiring write's ModifyIndex (the store revision of the acquire)
  lock_index,    // the key's LockIndex after the acquire (Consul's sequencer)
};

// structs.SessionTTLMultiplier: the servers wait this many TTLs before invalidating a session.
inline constexpr std::int64_t kSessionTtlMultiplier = 2;

struct ConsulConfig {
  sim::Duration ttl = std::chrono::seconds(15);         // api.DefaultLockSessionTTL
  sim::Duration lock_delay = std::chrono::seconds(15);  // the session's LockDelay default
  Behavior behavior = Behavior::release;
  sim::Duration renew_interval = std::chrono::milliseconds(7500);  // ttl / 2 (RenewPeriodic)
  sim::Duration lock_wait_time = std::chrono::seconds(15);         // api.DefaultLockWaitTime
  sim::Duration lock_retry_time = std::chrono::seconds(5);         // api.DefaultLockRetryTime
  sim::Duration monitor_retry_time = std::chrono::seconds(2);      // api.DefaultMonitorRetryTime
  std::int64_t monitor_retries = 0;                                // LockOptions.MonitorRetries
  FencingToken fencing_token = FencingToken::modify_index;
  bool fencing = true;
  std::string key = "service/electsim/leader";
  WorkloadConfig workload;  // the cluster's, copied in by the registry

  // The store lease that stands for a session: the servers' invalidation bound.
  sim::Duration store_lease_ttl() const { return ttl * kSessionTtlMultiplier; }
};

std::span<const params::ParamSpec> consul_params();
std::optional<ConsulConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                        params::Problems& problems);

ProtocolInfo protocol_info();

class ConsulNode final : public sim::Protocol {
 public:
  explicit ConsulNode(std::shared_ptr<const ConsulConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override;
  void on_watch(sim::Context& ctx, const sim::WatchEvent& event) override;
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  // White-box views for tests.
  bool leads() const { return role_ == sim::Role::leader; }
  sim::Token token() const { return token_; }
  sim::LeaseId session() const { return session_; }
  std::int64_t acquires_refused() const { return acquires_refused_; }

  static constexpr sim::TimerTag kRenewTag = 1;  // every renew_interval: renew the session
  static constexpr sim::TimerTag kStepTag = 2;   // the next step of the lock loop, when due

 private:
  // The one request of the lock loop in flight.
  enum class Pending : std::uint8_t { none, session, read, acquire, monitor, release };

  void create_session(sim::Context& ctx);
  void read_key(sim::Context& ctx, Pending why);
  void acquire(sim::Context& ctx);
  void renew(sim::Context& ctx);
  void watch_key(sim::Context& ctx, sim::Revision from);
  void begin(sim::Context& ctx, Pending step, sim::RequestId id);
  void give_up_pending(sim::Context& ctx);
  void step_after(sim::Context& ctx, sim::Duration after);

  void on_read(sim::Context& ctx, const sim::StoreReply& reply);
  void on_acquire(sim::Context& ctx, const sim::StoreReply& reply);
  void on_monitor(sim::Context& ctx, const sim::StoreReply& reply);
  void session_lost(sim::Context& ctx);
  void lock_lost(sim::Context& ctx);
  void finish_release(sim::Context& ctx);
  void become_leader(sim::Context& ctx, sim::Token token);
  void become_follower(sim::Context& ctx, sim::NodeId leader);
  bool ours(const sim::KeyValue& kv) const {
    return session_ != sim::kNoLease && kv.lease == session_;
  }

  std::shared_ptr<const ConsulConfig> config_;
  Writer writer_;
  sim::NodeId self_ = sim::kNoNode;
  std::string self_text_;

  sim::Role role_ = sim::Role::follower;
  bool stopped_ = false;
  sim::Token token_ = 0;
  bool announced_ = false;
  sim::NodeId known_leader_ = sim::kNoNode;

  sim::LeaseId session_ = sim::kNoLease;
  sim::LeaseId releasing_ = sim::kNoLease;  // the session whose release is in flight
  Pending pending_ = Pending::none;
  sim::RequestId pending_id_ = 0;
  sim::LocalTime pending_sent_at_;
  sim::TimerId step_timer_ = sim::kNoTimer;
  sim::TimerId renew_timer_ = sim::kNoTimer;
  std::int64_t monitor_retries_left_ = 0;
  std::int64_t acquires_refused_ = 0;

  // The blocking query on the key: a store watch (the waiter's WAIT, or the holder's monitor).
  StoreWatch watch_;
};

}  // namespace electsim::protocols::consul
