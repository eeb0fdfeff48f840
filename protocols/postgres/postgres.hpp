// Leader election by a lock in one PostgreSQL server: the holder of a session-level advisory lock
// (pg_try_advisory_lock) or of the `leader` row's lock in an open transaction (SELECT ... FOR
// UPDATE, or FOR UPDATE SKIP LOCKED) leads. The lock is released only when the session ends:
// by the holder, or when the server notices the connection is gone (TCP keepalive,
// idle_in_transaction_session_timeout), which with Linux's defaults takes over two hours.
#pragma once

#include <memory>

#include "protocols/postgres/config.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols::postgres {

// The registry entry: name "postgres", description, parameter table and prepare().
ProtocolInfo protocol_info();

class PostgresNode final : public sim::Protocol {
 public:
  explicit PostgresNode(std::shared_ptr<const PostgresProtocolConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& /*ctx*/, const sim::StoreReply& /*reply*/) override {}
  void on_watch(sim::Context& /*ctx*/, const sim::WatchEvent& /*event*/) override {}
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_db_reply(sim::Context& ctx, const sim::DbReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  bool leads() const { return role_ == sim::Role::leader; }
  sim::Token token() const { return token_; }
  const Writer& writer() const { return writer_; }

  static constexpr sim::TimerTag kRetryTag = 1;  // follower: try the lock
  static constexpr sim::TimerTag kCheckTag = 2;  // leader: SELECT 1 on its session

 private:
  void become_leader(sim::Context& ctx, sim::Token token);
  void become_follower(sim::Context& ctx);
  void maybe_acquire(sim::Context& ctx);
  void release(sim::Context& ctx);
  bool may_write(sim::Token token) const;
  sim::DbOp acquire_op() const;
  void cancel(sim::Context& ctx, sim::TimerId& timer);

  std::shared_ptr<const PostgresProtocolConfig> config_;
  Writer writer_;
  sim::Role role_ = sim::Role::follower;
  bool stopped_ = false;
  sim::Token token_ = 0;  // the current or last tenure's token
  sim::TimerId retry_timer_ = sim::kNoTimer;
  sim::TimerId check_timer_ = sim::kNoTimer;
  sim::RequestId check_id_ = 0;  // the holder's check still unanswered, 0: none
};

}  // namespace electsim::protocols::postgres
