// The postgres protocol: see protocols/postgres/postgres.hpp. Follows the PostgreSQL 16
// documentation: "Advisory Locks" (13.3.5) for pg_try_advisory_lock, "Row-Level Locks" (13.3.2)
// and SELECT's locking clause for FOR UPDATE and SKIP LOCKED.
#include "protocols/postgres/postgres.hpp"

#include <utility>

#include "sim/assert.hpp"

namespace electsim::protocols::postgres {

using sim::Duration;

PostgresNode::PostgresNode(std::shared_ptr<const PostgresProtocolConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {
  if (config_->fencing == Fencing::same_transaction) writer_.write_to_database();
}

void PostgresNode::on_start(sim::Context& ctx) {
  // A (re)started client opens a new connection: a new session, holding nothing. Its earlier
  // life's session, if the server has not noticed it is gone, still holds whatever it held.
  role_ = sim::Role::follower;
  ctx.announce(sim::Belief::follower(sim::kNoNode, token_));
  maybe_acquire(ctx);
}

void PostgresNode::on_message(sim::Context& /*ctx*/, sim::NodeId /*from*/,
                              const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "postgres nodes talk only to the database");
}

sim::DbOp PostgresNode::acquire_op() const {
  switch (config_->lock) {
    case LockMode::advisory:
      return sim::DbOp::try_advisory_lock;
    case LockMode::row:
      return sim::DbOp::lock_row;
    case LockMode::skip_locked:
      return sim::DbOp::lock_row_skip_locked;
  }
  return sim::DbOp::try_advisory_lock;
}

void PostgresNode::maybe_acquire(sim::Context& ctx) {
  if (stopped_ || role_ == sim::Role::leader) return;
  sim::DbRequest request;
  request.op = acquire_op();
  request.bump_epoch =
      config_->fencing == Fencing::epoch_row || config_->fencing == Fencing::same_transaction;
  ctx.db(request);
  // Row mode's statement waits in the lock's queue; re-sending it keeps its place (the server
  // answers the newest) and finds a server that restarted meanwhile.
  cancel(ctx, retry_timer_);
  retry_timer_ = ctx.set_timer(config_->retry_interval, kRetryTag);
}

void PostgresNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (writer_.on_timer(ctx, id, tag, [this](sim::Token t) { return may_write(t); })) return;
  if (stopped_) return;
  if (tag == kRetryTag && id == retry_timer_) {
    retry_timer_ = sim::kNoTimer;
    maybe_acquire(ctx);
    return;
  }
  if (tag == kCheckTag && id == check_timer_) {
    check_timer_ = sim::kNoTimer;
    if (role_ != sim::Role::leader) return;
    if (check_id_ != 0) {
      // The last check never came back: the connection is presumed lost, and with it the lock.
      become_follower(ctx);
      return;
    }
    sim::DbRequest request;
    request.op = sim::DbOp::check;
    check_id_ = ctx.db(request);
    check_timer_ = ctx.set_timer(config_->check_interval, kCheckTag);
  }
}

void PostgresNode::on_db_reply(sim::Context& ctx, const sim::DbReply& reply) {
  if (stopped_) return;
  switch (reply.op) {
    case sim::DbOp::try_advisory_lock:
    case sim::DbOp::lock_row:
    case sim::DbOp::lock_row_skip_locked:
      // Any granted acquisition counts, even an older request's: the lock is this session's.
      if (reply.ok && role_ != sim::Role::leader) become_leader(ctx, reply.token);
      if (!reply.ok && role_ != sim::Role::leader) {
        ctx.announce(sim::Belief::follower(sim::kNoNode, token_));
      }
      return;
    case sim::DbOp::check:
      if (reply.id != check_id_) return;
      check_id_ = 0;
      if (!reply.ok && role_ == sim::Role::leader) become_follower(ctx);
      return;
    case sim::DbOp::write:
      // Rejected inside the database: this session no longer holds the lock.
      if (!reply.ok && role_ == sim::Role::leader && reply.token == token_) become_follower(ctx);
      return;
    default:
      return;
  }
}

void PostgresNode::on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) {
  // A fenced write's rejection: a newer token has written, so this node was deposed.
  if (!reply.accepted && role_ == sim::Role::leader && reply.token == token_) {
    become_follower(ctx);
  }
}

void PostgresNode::become_leader(sim::Context& ctx, sim::Token token) {
  role_ = sim::Role::leader;
  token_ = token;
  cancel(ctx, retry_timer_);
  check_id_ = 0;
  cancel(ctx, check_timer_);
  check_timer_ = ctx.set_timer(config_->check_interval, kCheckTag);
  ctx.announce(sim::Belief::leader(token));
  writer_.start(ctx, token);
}

void PostgresNode::become_follower(sim::Context& ctx) {
  role_ = sim::Role::follower;
  writer_.stop(ctx);
  cancel(ctx, check_timer_);
  check_id_ = 0;
  ctx.announce(sim::Belief::follower(sim::kNoNode, token_));
  cancel(ctx, retry_timer_);
  if (!stopped_) retry_timer_ = ctx.set_timer(config_->retry_interval, kRetryTag);
}

void PostgresNode::release(sim::Context& ctx) {
  sim::DbRequest request;
  request.op =
      config_->lock == LockMode::advisory ? sim::DbOp::advisory_unlock : sim::DbOp::end_transaction;
  ctx.db(request);
}

void PostgresNode::on_command(sim::Context& ctx, sim::Command command) {
  if (stopped_) return;
  // A clean release: pg_advisory_unlock, or ROLLBACK of the transaction holding the row (which
  // also leaves a follower's waiting statement).
  release(ctx);
  if (command == sim::Command::stop) stopped_ = true;
  become_follower(ctx);
}

bool PostgresNode::may_write(sim::Token token) const {
  return role_ == sim::Role::leader && token == token_;
}

void PostgresNode::cancel(sim::Context& ctx, sim::TimerId& timer) {
  if (timer != sim::kNoTimer) ctx.cancel_timer(timer);
  timer = sim::kNoTimer;
}

// ---- Registry entry ---------------------------------------------------------------------------

ProtocolInfo protocol_info() {
  ProtocolInfo info;
  info.name = "postgres";
  info.description =
      "a lock in one PostgreSQL server (session advisory lock, or a row lock in an open "
      "transaction); released only when the server notices the holder's connection is gone";
  const auto params = postgres_params();
  info.params.assign(params.begin(), params.end());
  info.servers = {"postgres"};
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    std::optional<PostgresProtocolConfig> config = read_config(params, pointer, problems);
    if (!config) return std::nullopt;
    config->workload = cluster.workload;
    PreparedProtocol prepared;
    prepared.uses_store = true;  // leadership depends on one coordinator: the database
    prepared.coordinator = sim::server_kind::postgres;
    // txid and epoch_row need the sink to fence; none turns it off; with same_transaction the
    // database itself is the sink and the sink server receives nothing.
    prepared.fencing = config->fencing != Fencing::none;
    prepared.factory = shared_config_factory<PostgresNode>(std::move(*config));
    return prepared;
  };
  // A silent holder's lock goes when the server's TCP keepalives declare its connection dead:
  // idle + count x interval, in whole seconds (PostgreSQL's tcp_keepalives_*). The knob keeps
  // 5 probes 1 s apart and sets the idle time.
  info.detection.what = "the server's keepalive budget (idle + count x interval)";
  info.detection.timing_params = {"postgres.tcp_keepalives_idle",
                                  "postgres.tcp_keepalives_interval",
                                  "postgres.tcp_keepalives_count"};
  info.detection.sets = [](sim::Duration d,
                           std::string& why) -> std::optional<std::vector<KnobSet>> {
    if (d.count() % 1'000'000'000 != 0 || d < std::chrono::seconds(6)) {
      why =
          "PostgreSQL's keepalives take whole seconds: an idle time of at least 1s plus 5 "
          "probes 1s apart, so the knob must be whole seconds from 6s";
      return std::nullopt;
    }
    return std::vector<KnobSet>{
        {"postgres.tcp_keepalives_idle", knob_duration(d - std::chrono::seconds(5))},
        {"postgres.tcp_keepalives_interval", "1s"},
        {"postgres.tcp_keepalives_count", "5"}};
  };
  return info;
}

}  // namespace electsim::protocols::postgres
