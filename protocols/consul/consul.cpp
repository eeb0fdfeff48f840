// The consul protocol: see protocols/consul/consul.hpp. Sources, by step:
// - sessions: Consul's /v1/session/create (TTL 10s..86400s, LockDelay default 15s capped at
//   structs.MaxLockDelay = 60s, Behavior release or delete) and the servers' session timers
//   (agent/consul/session_ttl.go: invalidation after TTL * structs.SessionTTLMultiplier = 2,
//   timers reset on leader failover by initializeSessionTimers);
// - the lock: PUT /v1/kv/<key>?acquire=<session> (state store kvsLockTxn: taken iff no session
//   holds the key, LockIndex + 1 on a new holder), refused during lock-delay by the leader
//   before it commits (agent/consul/kvs_endpoint.go, kvsPreApply); ?release= sets no delay;
// - the client: api/lock.go (Lock: read the key, wait with a blocking query while it is held,
//   acquire, wait DefaultLockRetryTime after a refused acquire; monitorLock: lost once the key's
//   Session is not ours, after MonitorRetries retries of a failed query) and the session's
//   RenewPeriodic every TTL/2.
#include "protocols/consul/consul.hpp"

#include <charconv>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace electsim::protocols::consul {
namespace {

using sim::Duration;
using namespace std::chrono_literals;

// Consul's bounds (agent/structs: SessionTTLMax = 24h; the session endpoint refuses a TTL
// below 10s; structs.MaxLockDelay = 60s).
constexpr Duration kTtlMin = 10s;
constexpr Duration kTtlMax = 86400s;
constexpr Duration kLockDelayMax = 60s;
constexpr std::int64_t kMonitorRetriesMax = 1000;

constexpr const char* kBehaviorNames[] = {"release", "delete"};        // Behavior's order
constexpr const char* kTokenNames[] = {"modify_index", "lock_index"};  // FencingToken's

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const ConsulConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "ttl",
         .default_value = d.ttl,
         .min = kTtlMin,
         .max = kTtlMax,
         .meaning = "the session TTL (api.DefaultLockSessionTTL, api/lock.go); Consul accepts "
                    "10s..86400s and its servers invalidate a session only after TTL x 2 without "
                    "renewal (structs.SessionTTLMultiplier, agent/consul/session_ttl.go)"},
        {.name = "lock_delay",
         .default_value = d.lock_delay,
         .min = Duration(0),
         .max = kLockDelayMax,
         .meaning = "the session's LockDelay (/v1/session/create default 15s, at most "
                    "structs.MaxLockDelay = 60s): after the session is invalidated, nobody may "
                    "acquire its keys for this long, judged on the Consul leader's clock "
                    "(kvs_endpoint.go kvsPreApply)"},
        {.name = "behavior",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kBehaviorNames, d.behavior),
         .meaning = "what the servers do with the session's keys when it is invalidated: release "
                    "(keep the key, without a Session; Consul's default) or delete",
         .choices = params::choice_names(kBehaviorNames)},
        {.name = "renew_interval",
         .default_note = "ttl/2",
         .min = params::kShortestTimer,
         .meaning = "the holder renews its session this often (api Session.RenewPeriodic waits "
                    "TTL/2)"},
        {.name = "lock_wait_time",
         .default_value = d.lock_wait_time,
         .min = params::kShortestTimer,
         .meaning = "how long one blocking query on the key waits before it is asked again "
                    "(api.DefaultLockWaitTime)"},
        {.name = "lock_retry_time",
         .default_value = d.lock_retry_time,
         .min = params::kShortestTimer,
         .meaning = "the wait after an acquire that did not take the lock, e.g. refused under "
                    "lock-delay (api.DefaultLockRetryTime)"},
        {.name = "monitor_retry_time",
         .default_value = d.monitor_retry_time,
         .min = params::kShortestTimer,
         .meaning = "the holder's wait before it asks again after its monitoring query failed "
                    "(api.DefaultMonitorRetryTime)"},
        {.name = "monitor_retries",
         .type = params::ParamType::integer,
         .default_value = d.monitor_retries,
         .min = std::int64_t{0},
         .max = kMonitorRetriesMax,
         .meaning = "how many failed monitoring queries in a row the holder rides out before it "
                    "calls the lock lost (api LockOptions.MonitorRetries, 0 by default)"},
        {.name = "fencing_token",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kTokenNames, d.fencing_token),
         .meaning = "the token written to the sink: the acquire's ModifyIndex (the store revision "
                    "of the acquiring write) or the key's LockIndex (Consul's sequencer; needs "
                    "behavior release)",
         .choices = params::choice_names(kTokenNames)},
        {.name = "fencing",
         .type = params::ParamType::boolean,
         .default_value = d.fencing,
         .meaning = "the sink rejects writes whose token is below the highest it has accepted"},
        {.name = "key",
         .type = params::ParamType::text,
         .default_value = d.key,
         .meaning = "the KV key of the lock (Consul's leader election guide uses "
                    "service/<name>/leader)"},
    };
  }();
  return table;
}

sim::NodeId holder_of(const sim::KeyValue& kv) {
  if (kv.lease == sim::kNoLease) return sim::kNoNode;
  sim::NodeId id = sim::kNoNode;
  const char* const end = kv.value.data() + kv.value.size();
  const auto [p, ec] = std::from_chars(kv.value.data(), end, id);
  if (ec != std::errc() || p != end || id < 0) return sim::kNoNode;
  return id;
}

bool is_transport_error(sim::StoreError e) {
  return e == sim::StoreError::no_leader || e == sim::StoreError::unavailable;
}

}  // namespace

std::span<const params::ParamSpec> consul_params() {
  return specs();
}

std::optional<ConsulConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                        params::Problems& problems) {
  const std::size_t before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  ConsulConfig c;
  const std::size_t ttl_mark = problems.size();
  c.ttl = reader.duration("ttl");  // within kTtlMin to kTtlMax
  const bool ttl_ok = problems.size() == ttl_mark;
  c.lock_delay = reader.duration("lock_delay");
  c.behavior = static_cast<Behavior>(reader.choice_index("behavior"));
  c.renew_interval = c.ttl / 2;
  if (auto renew = reader.timer_opt("renew_interval")) {
    if (ttl_ok && *renew >= c.ttl) {
      reader.problem("renew_interval",
                     fmt::format("a duration shorter than ttl ({})", sim::format_duration(c.ttl)),
                     params::json_excerpt(params.at("renew_interval")));
    }
    c.renew_interval = *renew;
  }
  if (auto t = reader.timer_opt("lock_wait_time")) c.lock_wait_time = *t;
  if (auto t = reader.timer_opt("lock_retry_time")) c.lock_retry_time = *t;
  if (auto t = reader.timer_opt("monitor_retry_time")) c.monitor_retry_time = *t;
  c.monitor_retries = reader.integer("monitor_retries");
  c.fencing_token = static_cast<FencingToken>(reader.choice_index("fencing_token"));
  if (c.fencing_token == FencingToken::lock_index && c.behavior == Behavior::del) {
    // A deleted key's LockIndex starts again at 1: two holders would share a token.
    reader.problem("fencing_token",
                   "modify_index with behavior delete (a deleted key's LockIndex starts again "
                   "at 1, so it would not fence)",
                   "\"lock_index\"");
  }
  c.fencing = reader.boolean("fencing");
  c.key = reader.text("key");
  if (c.key.empty() && reader.has("key")) {
    reader.problem("key", "a non-empty key such as \"service/electsim/leader\"", "\"\"");
  }
  if (problems.size() != before) return std::nullopt;
  return c;
}

ConsulNode::ConsulNode(std::shared_ptr<const ConsulConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {
  ELECTSIM_ASSERT(config_->renew_interval.count() > 0, "the renew interval is positive");
  ELECTSIM_ASSERT(config_->renew_interval < config_->store_lease_ttl(),
                  "a session is renewed before the servers invalidate it");
}

// ---- Inputs -----------------------------------------------------------------------------------

void ConsulNode::on_start(sim::Context& ctx) {
  self_ = ctx.self();
  self_text_ = std::to_string(self_);
  role_ = sim::Role::follower;
  stopped_ = false;
  token_ = 0;
  announced_ = false;
  session_ = sim::kNoLease;
  releasing_ = sim::kNoLease;
  pending_ = Pending::none;
  step_timer_ = sim::kNoTimer;
  watch_.forget();
  become_follower(ctx, sim::kNoNode);
  renew_timer_ = ctx.set_timer(config_->renew_interval, kRenewTag);
  create_session(ctx);
}

void ConsulNode::on_message(sim::Context&, sim::NodeId, const sim::Message&) {
  // Candidates talk only to the Consul servers and the sink.
}

void ConsulNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (stopped_) return;
  if (writer_.on_timer(ctx, id, tag, [this](sim::Token token) {
        return role_ == sim::Role::leader && token == token_;
      })) {
    return;
  }
  switch (tag) {
    case kRenewTag:
      if (id != renew_timer_) return;
      renew_timer_ = ctx.set_timer(config_->renew_interval, kRenewTag);
      if (session_ != sim::kNoLease) renew(ctx);
      if (pending_ != Pending::none &&
          ctx.monotonic_now() - pending_sent_at_ >= config_->lock_wait_time) {
        give_up_pending(ctx);
      }
      return;
    case kStepTag:
      if (id != step_timer_) return;
      step_timer_ = sim::kNoTimer;
      if (pending_ != Pending::none) return;
      if (session_ == sim::kNoLease) {
        create_session(ctx);
      } else {
        read_key(ctx, role_ == sim::Role::leader ? Pending::monitor : Pending::read);
      }
      return;
    default:
      ELECTSIM_ASSERT(false, "a timer tag of the consul protocol");
  }
}

void ConsulNode::on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) {
  if (stopped_) {
    // A stopped client still destroys its session once its release is answered.
    if (pending_ == Pending::release && reply.id == pending_id_) {
      pending_ = Pending::none;
      finish_release(ctx);
    }
    return;
  }
  if (reply.op == sim::StoreOp::lease_keepalive) {
    // RenewPeriodic: a session not found is one the servers invalidated. Other failures are
    // tried again at the next renewal.
    if (reply.lease == session_ && reply.error == sim::StoreError::lease_not_found) {
      session_lost(ctx);
    }
    return;
  }
  if (reply.op == sim::StoreOp::watch) {
    watch_.on_reply(ctx, reply);
    return;
  }
  if (pending_ == Pending::none || reply.id != pending_id_) return;
  const Pending step = pending_;
  pending_ = Pending::none;
  switch (step) {
    case Pending::session:
      if (reply.error != sim::StoreError::none) {
        step_after(ctx, config_->lock_retry_time);
        return;
      }
      session_ = reply.lease;
      read_key(ctx, Pending::read);
      return;
    case Pending::read:
      on_read(ctx, reply);
      return;
    case Pending::acquire:
      on_acquire(ctx, reply);
      return;
    case Pending::monitor:
      on_monitor(ctx, reply);
      return;
    case Pending::release:
      finish_release(ctx);
      return;
    case Pending::none:
      return;
  }
}

void ConsulNode::on_watch(sim::Context& ctx, const sim::WatchEvent& event) {
  if (stopped_ || !watch_.fired_by(event)) return;
  const bool held = event.kind == sim::WatchEvent::Kind::put && event.kv.lease != sim::kNoLease;
  if (role_ == sim::Role::leader) {
    // monitorLock: the blocking query returned; the lock is ours while the key names our session.
    if (!held || event.kv.lease != session_) lock_lost(ctx);
    return;
  }
  if (held) {
    become_follower(ctx, holder_of(event.kv));
    return;  // still held: the blocking query goes on
  }
  // Lock: the blocking query returned with no Session on the key; try to take it.
  if (pending_ != Pending::none || session_ == sim::kNoLease) return;
  watch_.close(ctx);
  acquire(ctx);
}

void ConsulNode::on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) {
  // A rejection of our own token: a newer holder has written. Let the lock go.
  if (stopped_ || reply.accepted || role_ != sim::Role::leader || reply.token != token_) return;
  lock_lost(ctx);
}

void ConsulNode::on_command(sim::Context& ctx, sim::Command command) {
  if (command == sim::Command::campaign) {
    if (stopped_ || role_ == sim::Role::leader || pending_ != Pending::none) return;
    if (session_ == sim::kNoLease) {
      create_session(ctx);
    } else {
      read_key(ctx, Pending::read);
    }
    return;
  }
  if (command == sim::Command::operator_clear) return;  // the store's business
  // Voluntary release (api Lock.Unlock): ?release= clears the key's Session without a
  // lock-delay, then the session is destroyed (holding nothing, it delays nothing).
  lock_lost(ctx);
  if (command == sim::Command::stop) {
    stopped_ = true;
    if (step_timer_ != sim::kNoTimer) ctx.cancel_timer(step_timer_);
    step_timer_ = sim::kNoTimer;
  }
}

// ---- Steps of the lock loop ---------------------------------------------------------------------

void ConsulNode::begin(sim::Context& ctx, Pending step, sim::RequestId id) {
  pending_ = step;
  pending_id_ = id;
  pending_sent_at_ = ctx.monotonic_now();  // the Go client's timeouts run on the monotonic clock
}

void ConsulNode::give_up_pending(sim::Context& ctx) {
  // A request unanswered for lock_wait_time failed: the agent's call to the servers did (a lost
  // message, servers out of reach). A single store never times a request out itself.
  sim::StoreReply failed;
  failed.id = pending_id_;
  failed.error = sim::StoreError::unavailable;
  failed.succeeded = false;
  switch (pending_) {
    case Pending::session:
      failed.op = sim::StoreOp::lease_grant;
      break;
    case Pending::acquire:
    case Pending::release:
      failed.op = sim::StoreOp::txn;
      break;
    default:
      failed.op = sim::StoreOp::get;
      break;
  }
  on_store_reply(ctx, failed);
}

void ConsulNode::step_after(sim::Context& ctx, Duration after) {
  if (step_timer_ != sim::kNoTimer) ctx.cancel_timer(step_timer_);
  step_timer_ = ctx.set_timer(after, kStepTag);
}

void ConsulNode::create_session(sim::Context& ctx) {
  // /v1/session/create with TTL, LockDelay and Behavior. The store lease lasts TTL x 2: the
  // servers' real invalidation bound.
  sim::StoreRequest grant;
  grant.op = sim::StoreOp::lease_grant;
  grant.ttl = config_->store_lease_ttl();
  grant.lock_delay = config_->lock_delay;
  grant.release_keys = config_->behavior == Behavior::release;
  begin(ctx, Pending::session, ctx.store(std::move(grant)));
}

void ConsulNode::read_key(sim::Context& ctx, Pending why) {
  // GET /v1/kv/<key> (the monitor's with ?consistent): one read through the store's leader.
  sim::StoreRequest get;
  get.op = sim::StoreOp::get;
  get.key = config_->key;
  begin(ctx, why, ctx.store(std::move(get)));
}

void ConsulNode::acquire(sim::Context& ctx) {
  // PUT ?acquire=<session>: taken iff no session holds the key; the store refuses it while the
  // key is under lock-delay. The success branch reads the key back for its LockIndex.
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.lock_acquire = true;
  txn.compares.push_back(sim::Compare{
      config_->key, sim::Compare::Target::lease, sim::Compare::Op::equal, sim::kNoLease, {}});
  txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::put, config_->key, self_text_, session_});
  txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::get, config_->key, {}, sim::kNoLease});
  txn.failure.push_back(sim::TxnOp{sim::TxnOp::Kind::get, config_->key, {}, sim::kNoLease});
  begin(ctx, Pending::acquire, ctx.store(std::move(txn)));
}

void ConsulNode::renew(sim::Context& ctx) {
  sim::StoreRequest keepalive;
  keepalive.op = sim::StoreOp::lease_keepalive;
  keepalive.lease = session_;
  ctx.store(std::move(keepalive));
}

void ConsulNode::watch_key(sim::Context& ctx, sim::Revision from) {
  // A blocking query (?index=) is a store watch from the revision after the read: a change in
  // between is still reported.
  watch_.open(ctx, config_->key, from);
}

void ConsulNode::on_read(sim::Context& ctx, const sim::StoreReply& reply) {
  if (reply.error != sim::StoreError::none) {
    step_after(ctx, config_->lock_retry_time);
    return;
  }
  if (reply.kv && reply.kv->lease != sim::kNoLease) {
    if (ours(*reply.kv)) {
      // Our acquire landed but its answer was lost: the lock is ours (kvsLockTxn lets the
      // holding session acquire again).
      become_leader(ctx, config_->fencing_token == FencingToken::lock_index
                             ? reply.kv->lock_index
                             : reply.kv->mod_revision);
      monitor_retries_left_ = config_->monitor_retries;
      watch_key(ctx, reply.revision + 1);
      step_after(ctx, config_->lock_wait_time);
      return;
    }
    // Held by another session: block on the key until it changes or the wait ends.
    become_follower(ctx, holder_of(*reply.kv));
    if (watch_.idle()) watch_key(ctx, reply.revision + 1);
    step_after(ctx, config_->lock_wait_time);
    return;
  }
  watch_.close(ctx);
  acquire(ctx);
}

void ConsulNode::on_acquire(sim::Context& ctx, const sim::StoreReply& reply) {
  if (reply.error == sim::StoreError::lease_not_found) {
    session_lost(ctx);  // an invalid session: the servers invalidated it
    return;
  }
  if (reply.error != sim::StoreError::none || !reply.succeeded) {
    // Not taken: refused under lock-delay, lost the race, or no answer. api.Lock waits
    // DefaultLockRetryTime before it looks again, so as not to hot-loop during a lock-delay.
    if (reply.lock_delayed) ++acquires_refused_;
    if (!reply.responses.empty() && reply.responses.front()) {
      become_follower(ctx, holder_of(*reply.responses.front()));
    }
    step_after(ctx, config_->lock_retry_time);
    return;
  }
  ELECTSIM_ASSERT(reply.responses.size() == 2 && reply.responses[1].has_value(),
                  "a taken lock is read back");
  const sim::KeyValue& kv = *reply.responses[1];
  ELECTSIM_ASSERT(kv.lease == session_, "the lock is held by our session");
  become_leader(
      ctx, config_->fencing_token == FencingToken::lock_index ? kv.lock_index : kv.mod_revision);
  monitor_retries_left_ = config_->monitor_retries;
  watch_key(ctx, reply.revision + 1);
  step_after(ctx, config_->lock_wait_time);
}

void ConsulNode::on_monitor(sim::Context& ctx, const sim::StoreReply& reply) {
  if (role_ != sim::Role::leader) return;
  if (reply.error != sim::StoreError::none) {
    // monitorLock: a failed query is retried MonitorRetries times, MonitorRetryTime apart; then
    // the lock is reported lost.
    if (is_transport_error(reply.error) && monitor_retries_left_ > 0) {
      --monitor_retries_left_;
      step_after(ctx, config_->monitor_retry_time);
      return;
    }
    lock_lost(ctx);
    return;
  }
  if (!reply.kv || !ours(*reply.kv)) {
    lock_lost(ctx);
    return;
  }
  monitor_retries_left_ = config_->monitor_retries;
  step_after(ctx, config_->lock_wait_time);
}

// ---- Losing the lock --------------------------------------------------------------------------

void ConsulNode::session_lost(sim::Context& ctx) {
  // The servers invalidated the session: its lock is gone with it. A new session, a new try.
  session_ = sim::kNoLease;
  pending_ = Pending::none;
  watch_.close(ctx);
  if (role_ == sim::Role::leader) become_follower(ctx, sim::kNoNode);
  create_session(ctx);
}

void ConsulNode::lock_lost(sim::Context& ctx) {
  // The lock channel closed (or Unlock): ?release= the key if it is still ours, and once that is
  // answered destroy the session (api.Lock's Unlock releases, then stops the renewal, which
  // destroys the session). A key still held is let go without a lock-delay; one already lost is
  // not touched (the compare fails).
  watch_.close(ctx);
  if (role_ == sim::Role::leader) become_follower(ctx, sim::kNoNode);
  if (pending_ == Pending::release) return;  // one release at a time; it finishes on its own
  pending_ = Pending::none;
  if (session_ == sim::kNoLease) {
    step_after(ctx, config_->lock_retry_time);
    return;
  }
  releasing_ = session_;
  session_ = sim::kNoLease;
  sim::StoreRequest release;
  release.op = sim::StoreOp::txn;
  release.compares.push_back(sim::Compare{
      config_->key, sim::Compare::Target::lease, sim::Compare::Op::equal, releasing_, {}});
  release.success.push_back(
      sim::TxnOp{sim::TxnOp::Kind::put, config_->key, self_text_, sim::kNoLease});
  begin(ctx, Pending::release, ctx.store(std::move(release)));
}

void ConsulNode::finish_release(sim::Context& ctx) {
  // Answered or given up: the session goes (a destroyed session that holds no key delays
  // nothing), and the lock loop starts over after lock_retry_time.
  if (releasing_ != sim::kNoLease) {
    sim::StoreRequest destroy;
    destroy.op = sim::StoreOp::lease_revoke;
    destroy.lease = releasing_;
    ctx.store(std::move(destroy));
    releasing_ = sim::kNoLease;
  }
  if (!stopped_) step_after(ctx, config_->lock_retry_time);
}

void ConsulNode::become_leader(sim::Context& ctx, sim::Token token) {
  if (role_ == sim::Role::leader && token == token_) return;
  role_ = sim::Role::leader;
  token_ = token;
  known_leader_ = self_;
  ctx.announce(sim::Belief::leader(token));
  writer_.start(ctx, token);
}

void ConsulNode::become_follower(sim::Context& ctx, sim::NodeId leader) {
  if (role_ == sim::Role::leader) writer_.stop(ctx);
  const sim::NodeId known = leader == self_ ? sim::kNoNode : leader;
  if (announced_ && role_ == sim::Role::follower && known == known_leader_) return;
  role_ = sim::Role::follower;
  announced_ = true;
  known_leader_ = known;
  ctx.announce(sim::Belief::follower(known, 0));
}

// ---- Registry entry ---------------------------------------------------------------------------

ProtocolInfo protocol_info() {
  ProtocolInfo info;
  info.name = "consul";
  info.resource = "key";
  info.description =
      "Consul's lock (consul lock, api.Lock): a session with a TTL renewed every TTL/2, a KV "
      "acquire, lock-delay after a holder's session is invalidated; the token is the acquire's "
      "ModifyIndex";
  const auto params = consul_params();
  info.params.assign(params.begin(), params.end());
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    std::optional<ConsulConfig> config = read_config(params, pointer, problems);
    if (!config) return std::nullopt;
    config->workload = cluster.workload;
    PreparedProtocol prepared;
    prepared.leader_key = config->key;
    prepared.uses_store = true;
    prepared.fencing = config->fencing;
    prepared.lease_ttl = config->store_lease_ttl();
    prepared.lease_judged_by_store = true;
    // The servers invalidate a session TTL x 2 after its last renewal; lock-delay holds the key
    // that much longer; a waiter blocked on the key or refused under lock-delay asks again after
    // lock_wait_time or lock_retry_time.
    prepared.silent_hold = 2 * config->ttl + config->lock_delay;
    prepared.worst_recovery = 2 * config->ttl + config->lock_delay +
                              std::max(config->lock_wait_time, config->lock_retry_time) +
                              config->renew_interval;
    prepared.with_resource = [config = *config](const std::string& key) {
      ConsulConfig own = config;
      own.key = key;
      return shared_config_factory<ConsulNode>(std::move(own));
    };
    prepared.factory = shared_config_factory<ConsulNode>(std::move(*config));
    return prepared;
  };
  // A silent holder's session is invalidated TTL x 2 after its last renewal, and lock-delay
  // keeps the key for that much longer: 2 x ttl + lock_delay. Consul's defaults make the two
  // equal (15s, 15s); its limits are TTL >= 10s and lock-delay <= 60s.
  info.detection.what = "2 x the session TTL + lock-delay";
  info.detection.timing_params = {"ttl", "lock_delay"};
  info.detection.sets = [](sim::Duration d,
                           std::string& why) -> std::optional<std::vector<KnobSet>> {
    const sim::Duration min_ttl = std::chrono::seconds(10);
    const sim::Duration max_delay = std::chrono::seconds(60);
    sim::Duration ttl = d / 3;
    sim::Duration delay = d - 2 * ttl;
    if (ttl < min_ttl) {
      ttl = min_ttl;
      delay = d - 2 * ttl;
    } else if (delay > max_delay) {
      delay = max_delay;
      ttl = (d - delay) / 2;
    }
    if (delay < sim::Duration(0)) {
      why =
          "Consul's session TTL is at least 10s, so a silent holder keeps the lock for at "
          "least 2 x 10s = 20s";
      return std::nullopt;
    }
    return std::vector<KnobSet>{{"protocol.ttl", knob_duration(ttl)},
                                {"protocol.lock_delay", knob_duration(delay)}};
  };
  return info;
}

}  // namespace electsim::protocols::consul
