// Lease-plus-fencing election as a pure state machine. Store mode follows etcd's
// client/v3/concurrency (session lease kept alive every TTL/3; Campaign's txn on create_revision;
// waiting for the holder's key to be deleted). Client mode follows Kubernetes client-go
// leaderelection (a record renewed by compare-and-swap, taken over once unchanged for the lease
// duration it names, on the follower's monotonic clock; or judged as fabric8's Java client does).
// Both step down after RenewDeadline by their own clock.
// Just over 800 lines on purpose: one state machine whose two modes share every step (the inputs,
// the roles, acquisition, renewal), each deciding a few lines of it; split by mode, every step
// would be written twice.
#include "protocols/lease/lease.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace electsim::protocols::lease {

using sim::Duration;
using sim::LocalTime;

LeaseNode::LeaseNode(std::shared_ptr<const LeaseConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {
  ELECTSIM_ASSERT(config_->renew_deadline < config_->ttl, "renew_deadline is shorter than ttl");
  ELECTSIM_ASSERT(config_->renew_interval.count() > 0, "renew_interval is positive");
  ELECTSIM_ASSERT(config_->retry_interval.count() > 0, "retry_interval is positive");
}

// ---- The record ------------------------------------------------------------------------------

namespace {

// Reads a decimal integer that fills [begin, end); nullopt otherwise.
std::optional<std::int64_t> read_integer(const char* begin, const char* end) {
  std::int64_t value = 0;
  const auto [p, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || p != end || begin == end) return std::nullopt;
  return value;
}

// `d` times `ppm` parts per million, split so that the product cannot overflow for any duration a
// scenario may give and any factor the parameters allow.
Duration times_ppm(Duration d, std::int64_t ppm) {
  const std::int64_t ns = d.count();
  const std::int64_t one = sim::kPpmOne;
  return Duration((ns / one) * ppm + (ns % one) * ppm / one);
}

}  // namespace

LeaseRecord parse_record(std::string_view value) {
  LeaseRecord record;
  const char* const begin = value.data();
  const char* const end = begin + value.size();
  const char* const first_space = std::find(begin, end, ' ');
  const auto holder = read_integer(begin, first_space);
  if (!holder || *holder < 0 || *holder > std::numeric_limits<sim::NodeId>::max()) return {};
  if (first_space == end) {
    record.holder = static_cast<sim::NodeId>(*holder);
    return record;
  }
  const char* const second_space = std::find(first_space + 1, end, ' ');
  if (second_space == end) return {};
  const auto duration = read_integer(first_space + 1, second_space);
  const auto renew_time = read_integer(second_space + 1, end);
  if (!duration || !renew_time || *duration < 0) return {};
  record.holder = static_cast<sim::NodeId>(*holder);
  record.timed = true;
  record.lease_duration = Duration(*duration);
  record.renew_time = LocalTime(*renew_time);
  return record;
}

std::string format_record(sim::NodeId holder, Duration lease_duration, LocalTime renew_time) {
  // Once per create, takeover or renewal, as the real client serialises its Lease object.
  return fmt::format("{} {} {}", holder, lease_duration.count(), renew_time.ns);
}

// ---- Inputs -----------------------------------------------------------------------------------

void LeaseNode::on_start(sim::Context& ctx) {
  self_ = ctx.self();
  self_text_ = std::to_string(self_);
  // Nothing is known yet: a follower of nobody until the store says otherwise.
  announce_follower(ctx);
  arm_retry(ctx, jittered(ctx, config_->retry_interval));
  if (store_mode()) {
    maybe_acquire(ctx);
  } else {
    // client-go's tryAcquireOrRenew starts with a Get of the record.
    send_probe(ctx);
  }
}

void LeaseNode::on_message(sim::Context&, sim::NodeId, const sim::Message&) {
  // The lease protocol talks only to the store and the sink; no peer ever sends to it.
}

void LeaseNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (stopped_) return;
  if (writer_.on_timer(ctx, id, tag,
                       [this, &ctx](sim::Token token) { return may_write(ctx, token); })) {
    return;
  }
  switch (tag) {
    case kRenewTag:
      if (id != renew_timer_) return;
      renew_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(role_ == sim::Role::leader, "only the holder renews");
      send_renewal(ctx);
      renew_timer_ = ctx.set_timer(config_->renew_interval, kRenewTag);
      return;
    case kDeadlineTag:
      if (id != deadline_timer_) return;
      deadline_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(role_ == sim::Role::leader, "only the holder has a deadline");
      if (deadline_passed(elapsed_now(ctx))) {
        // Its own clock says the claim may have expired: stop believing, and give the claim
        // back in case it has not (client-go: renew fails, then ReleaseOnCancel).
        step_down(ctx, /*release=*/true);
      } else {
        arm_deadline(ctx);
      }
      return;
    case kRetryTag:
      if (id != retry_timer_) return;
      retry_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(role_ == sim::Role::follower, "only followers retry");
      arm_retry(ctx, retry_wait(ctx));
      holding_off_ = holding_off_ && elapsed_now(ctx) < hold_off_until_;
      if (holding_off_) return;
      // The timer drives everything a lost watch event or a lost reply would have: probe the
      // key, and race if it is free.
      if (store_mode()) maybe_watch(ctx);
      if (!acquisition_in_flight(elapsed_now(ctx))) send_probe(ctx);
      return;
    case kRaceTag:
      if (id != race_timer_) return;
      race_timer_ = sim::kNoTimer;
      if (role_ == sim::Role::follower && holder_ == sim::kNoNode) maybe_acquire(ctx);
      return;
    default:
      ELECTSIM_ASSERT(false, "a timer tag of the lease protocol");
  }
}

void LeaseNode::on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) {
  if (stopped_) return;
  for (Renewal& r : renewals_) {
    if (r.id == 0 || r.id != reply.id) continue;
    const LocalTime sent_at = r.sent_at;
    r = Renewal{};
    on_renewal_reply(ctx, reply, sent_at);
    return;
  }
  if (reply.op == sim::StoreOp::watch) {
    if (watch_request_ != 0 && reply.id == watch_request_) {
      watch_request_ = 0;
      if (reply.error == sim::StoreError::none) watch_id_ = reply.watch_id;
    } else if (reply.error == sim::StoreError::none && reply.watch_id != watch_id_) {
      // The reply to a watch request given up on: that watch is not needed, close it.
      sim::StoreRequest unwatch;
      unwatch.op = sim::StoreOp::unwatch;
      unwatch.watch_id = reply.watch_id;
      ctx.store(std::move(unwatch));
    }
    return;
  }
  if (pending_ == Pending::none || reply.id != pending_id_) return;  // stale or fire-and-forget
  const Pending step = pending_;
  pending_ = Pending::none;
  on_try_answered(ctx, reply.error);
  switch (step) {
    case Pending::grant:
      if (reply.error != sim::StoreError::none) return;  // the retry timer tries again
      lease_ = reply.lease;
      // The store started the TTL when the grant arrived, which is after we sent it: counting
      // from the send time errs on the safe side.
      confirmed_at_ = pending_sent_at_;
      send_acquire_txn(ctx, /*fresh_lease=*/true);
      return;
    case Pending::acquire_txn: {
      if (reply.error == sim::StoreError::lease_not_found) {
        // A lease kept from an earlier attempt had expired at the store; grant a fresh one
        // (once: a fresh lease that is already gone waits for the retry timer).
        lease_ = sim::kNoLease;
        if (!pending_fresh_lease_) maybe_acquire(ctx);
        return;
      }
      if (reply.error != sim::StoreError::none) return;
      seen_revision_ = std::max(seen_revision_, reply.revision);
      if (reply.succeeded) {
        // The fencing token is the revision of the acquiring write: etcd's Election.Rev().
        if (!store_mode()) {
          confirmed_at_ = pending_sent_at_;
          record_mod_revision_ = reply.revision;
          record_create_revision_ =
              pending_create_revision_ != 0 ? pending_create_revision_ : reply.revision;
        }
        become_leader(ctx, reply.revision);
        return;
      }
      std::optional<sim::KeyValue> kv;
      if (!reply.responses.empty()) kv = reply.responses.front();
      if (store_mode()) {
        observe(ctx, kv);
      } else {
        observe_record(ctx, kv);
      }
      return;
    }
    case Pending::probe:
      if (reply.error != sim::StoreError::none) return;
      seen_revision_ = std::max(seen_revision_, reply.revision);
      if (store_mode()) {
        observe(ctx, reply.kv);
      } else {
        observe_record(ctx, reply.kv);
      }
      return;
    case Pending::none:
      return;
  }
}

void LeaseNode::on_watch(sim::Context& ctx, const sim::WatchEvent& event) {
  if (stopped_) return;
  if (watch_id_ == 0 || event.watch_id != watch_id_) return;
  // Replies and events travel separately and may overtake each other: what is older than the
  // newest observation of the key is already known.
  if (event.revision <= seen_revision_) return;
  seen_revision_ = event.revision;
  if (event.kind == sim::WatchEvent::Kind::del) {
    observe(ctx, std::nullopt);  // etcd's waitDeletes returns: race for the key now
  } else {
    observe(ctx, event.kv);
  }
}

void LeaseNode::on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) {
  // A rejection of the current token means a newer holder has written: fencing told us what our
  // clock did not. Rejections of an earlier tenure's token say nothing about this one.
  if (stopped_ || reply.accepted || role_ != sim::Role::leader || reply.token != token_) return;
  step_down(ctx, /*release=*/false);
}

void LeaseNode::on_command(sim::Context& ctx, sim::Command command) {
  if (command == sim::Command::campaign) {
    // Try for the lease now, as the retry timer would: a holder already has it.
    if (stopped_ || role_ == sim::Role::leader) return;
    holding_off_ = false;
    if (store_mode()) maybe_watch(ctx);
    if (!acquisition_in_flight(elapsed_now(ctx))) send_probe(ctx);
    return;
  }
  // Voluntary release: etcd's Election.Resign / Session.Close revoke the lease; client-go's
  // release() on cancel. A follower in store mode revokes its lease too, in case a txn whose
  // reply it never saw made it the holder.
  pending_ = Pending::none;
  if (role_ == sim::Role::leader) {
    release(ctx);
    become_follower(ctx, sim::kNoNode, token_);
  } else {
    release(ctx);
  }
  cancel(ctx, retry_timer_);
  cancel(ctx, race_timer_);
  if (command == sim::Command::stop) {
    // The kernel takes the node down right after this call; nothing more is to be done.
    stopped_ = true;
    return;
  }
  // step_down: stay a follower and try again only after retry_interval, so that another node
  // gets the key first.
  const Duration wait = jittered(ctx, config_->retry_interval);
  holding_off_ = true;
  hold_off_until_ = elapsed_now(ctx) + wait;
  arm_retry(ctx, wait);
}

// ---- Roles ------------------------------------------------------------------------------------

void LeaseNode::become_leader(sim::Context& ctx, sim::Token token) {
  ELECTSIM_ASSERT(role_ == sim::Role::follower, "a leader does not acquire again");
  ELECTSIM_ASSERT(token > 0, "a fencing token is a revision of a write");
  ELECTSIM_ASSERT(!store_mode() || lease_ != sim::kNoLease, "a store-mode holder has a lease");
  if (deadline_passed(elapsed_now(ctx))) {
    // The reply came so late that our own clock can no longer vouch for the claim.
    release(ctx);
    return;
  }
  role_ = sim::Role::leader;
  token_ = token;
  holder_ = sim::kNoNode;
  epoch_ = token;
  holding_off_ = false;
  pending_ = Pending::none;
  cancel(ctx, retry_timer_);
  cancel(ctx, race_timer_);
  backoff_ = Duration(0);
  ctx.announce(sim::Belief::leader(token));
  // Renewals keep the cadence of the last confirmation: etcd keeps a session lease alive every
  // TTL/3 from its grant. With a random phase the first comes sooner, at a point drawn from
  // (0, renew_interval] after the confirmation, as for a client whose keepalive loop started at
  // an arbitrary moment (clientv3's sendKeepAliveLoop wakes on its own 500ms ticker).
  Duration first = config_->renew_interval;
  if (config_->random_keepalive_phase) {
    first = Duration(ctx.rng().between(1, config_->renew_interval.count()));
  }
  const Duration since = elapsed_now(ctx) - confirmed_at_;
  renew_timer_ = ctx.set_timer(std::max(Duration(0), first - since), kRenewTag);
  arm_deadline(ctx);
  if (store_mode()) maybe_watch(ctx);
  writer_.start(ctx, token);
}

void LeaseNode::become_follower(sim::Context& ctx, sim::NodeId holder, sim::Epoch epoch) {
  role_ = sim::Role::follower;
  writer_.stop(ctx);
  cancel(ctx, renew_timer_);
  cancel(ctx, deadline_timer_);
  ctx.own_deadline(std::nullopt);
  renewals_.fill(Renewal{});
  holder_ = holder;
  epoch_ = epoch;
  announce_follower(ctx);
  if (retry_timer_ == sim::kNoTimer) arm_retry(ctx, jittered(ctx, config_->retry_interval));
}

void LeaseNode::step_down(sim::Context& ctx, bool release_claim) {
  ELECTSIM_ASSERT(role_ == sim::Role::leader, "only the holder steps down");
  if (release_claim) release(ctx);
  // Whatever the reason, the lease can no longer be trusted: a new attempt grants a new one.
  lease_ = sim::kNoLease;
  become_follower(ctx, sim::kNoNode, token_);
}

void LeaseNode::release(sim::Context& ctx) {
  if (store_mode()) {
    if (lease_ == sim::kNoLease) return;
    // Revoking deletes the key if the lease still holds it; watchers race at once.
    sim::StoreRequest revoke;
    revoke.op = sim::StoreOp::lease_revoke;
    revoke.lease = lease_;
    ctx.store(std::move(revoke));
    lease_ = sim::kNoLease;
    return;
  }
  if (role_ != sim::Role::leader) return;
  // Delete the record only if nobody has written it since our last renewal.
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.compares.push_back(sim::Compare{config_->key,
                                      sim::Compare::Target::mod_revision,
                                      sim::Compare::Op::equal,
                                      record_mod_revision_,
                                      {}});
  txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::del, config_->key, {}, sim::kNoLease});
  ctx.store(std::move(txn));
}

// ---- Acquisition ------------------------------------------------------------------------------

bool LeaseNode::acquisition_in_flight(LocalTime now) const {
  // A request that has not been answered within retry_interval is taken as lost.
  return (pending_ == Pending::grant || pending_ == Pending::acquire_txn) &&
         now - pending_sent_at_ < config_->retry_interval;
}

void LeaseNode::maybe_acquire(sim::Context& ctx) {
  ELECTSIM_ASSERT(store_mode(), "store mode races with a lease");
  if (role_ == sim::Role::leader || holding_off_) return;
  const LocalTime now = elapsed_now(ctx);
  if (acquisition_in_flight(now)) return;
  // A lease from an earlier attempt is reused while there is time for one keepalive before its
  // deadline; otherwise grant a fresh one (etcd: a new session when the old one is done).
  if (lease_ != sim::kNoLease &&
      now - confirmed_at_ + config_->renew_interval < config_->renew_deadline) {
    send_acquire_txn(ctx, /*fresh_lease=*/false);
    return;
  }
  lease_ = sim::kNoLease;
  sim::StoreRequest grant;
  grant.op = sim::StoreOp::lease_grant;
  grant.ttl = config_->ttl;
  pending_ = Pending::grant;
  pending_sent_at_ = now;
  pending_id_ = ctx.store(std::move(grant));
}

void LeaseNode::send_acquire_txn(sim::Context& ctx, bool fresh_lease) {
  // etcd's Campaign: if the key has never been created, put it on our lease; else read it.
  // Client mode creates the record the same way, without a lease.
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.compares.push_back(sim::Compare{
      config_->key, sim::Compare::Target::create_revision, sim::Compare::Op::equal, 0, {}});
  txn.success.push_back(
      store_mode()
          ? sim::TxnOp{sim::TxnOp::Kind::put, config_->key, self_text_, lease_}
          : sim::TxnOp{sim::TxnOp::Kind::put, config_->key, record_value(ctx), sim::kNoLease});
  txn.failure.push_back(sim::TxnOp{sim::TxnOp::Kind::get, config_->key, {}, sim::kNoLease});
  pending_ = Pending::acquire_txn;
  pending_fresh_lease_ = fresh_lease;
  pending_create_revision_ = 0;
  pending_sent_at_ = elapsed_now(ctx);
  pending_id_ = ctx.store(std::move(txn));
}

void LeaseNode::send_takeover_txn(sim::Context& ctx, sim::Revision expected_mod_revision,
                                  sim::Revision create_revision) {
  // client-go updates the record with the resourceVersion it read: a compare-and-swap, so of
  // several followers that judged the record expired only one takes it.
  ELECTSIM_ASSERT(!store_mode(), "only client mode takes a record over");
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.compares.push_back(sim::Compare{config_->key,
                                      sim::Compare::Target::mod_revision,
                                      sim::Compare::Op::equal,
                                      expected_mod_revision,
                                      {}});
  txn.success.push_back(
      sim::TxnOp{sim::TxnOp::Kind::put, config_->key, record_value(ctx), sim::kNoLease});
  txn.failure.push_back(sim::TxnOp{sim::TxnOp::Kind::get, config_->key, {}, sim::kNoLease});
  pending_ = Pending::acquire_txn;
  pending_fresh_lease_ = false;
  pending_create_revision_ = create_revision;
  pending_sent_at_ = elapsed_now(ctx);
  pending_id_ = ctx.store(std::move(txn));
}

void LeaseNode::send_probe(sim::Context& ctx) {
  sim::StoreRequest get;
  get.op = sim::StoreOp::get;
  get.key = config_->key;
  pending_ = Pending::probe;
  pending_sent_at_ = elapsed_now(ctx);
  pending_id_ = ctx.store(std::move(get));
}

void LeaseNode::observe(sim::Context& ctx, const std::optional<sim::KeyValue>& kv) {
  ELECTSIM_ASSERT(store_mode(), "store mode observes a leased key");
  if (!kv) {
    // The key is gone (lease expired or revoked): a holder has lost it, everyone races.
    if (role_ == sim::Role::leader) step_down(ctx, /*release=*/false);
    holder_ = sim::kNoNode;
    announce_follower(ctx);
    race(ctx);
    return;
  }
  const sim::NodeId holder = parse_holder(kv->value);
  if (role_ == sim::Role::leader) {
    if (holder == self_ && kv->create_revision == token_) return;  // our own key
    step_down(ctx, /*release=*/false);
    follow(ctx, *kv);
    return;
  }
  // Our id on our own live lease: a txn whose reply we never saw did win. etcd's Campaign resumes
  // leadership the same way when it finds its key already there.
  if (holder == self_ && lease_ != sim::kNoLease && kv->lease == lease_ &&
      !deadline_passed(elapsed_now(ctx))) {
    become_leader(ctx, kv->create_revision);
    return;
  }
  follow(ctx, *kv);
}

void LeaseNode::follow(sim::Context& ctx, const sim::KeyValue& kv) {
  // Our own id on a lease we do not hold is a record of an earlier life: nobody we know leads
  // until it expires.
  const sim::NodeId holder = parse_holder(kv.value);
  holder_ = holder == self_ ? sim::kNoNode : holder;
  epoch_ = kv.create_revision;
  announce_follower(ctx);
  if (store_mode()) maybe_watch(ctx);
}

void LeaseNode::observe_record(sim::Context& ctx, const std::optional<sim::KeyValue>& kv) {
  ELECTSIM_ASSERT(!store_mode(), "client mode observes a plain record");
  const LocalTime now = elapsed_now(ctx);
  if (!kv) {
    if (role_ == sim::Role::leader) step_down(ctx, /*release=*/false);
    observed_mod_revision_ = 0;
    observed_holder_ = sim::kNoNode;
    holder_ = sim::kNoNode;
    announce_follower(ctx);
    if (!holding_off_) send_acquire_txn(ctx, /*fresh_lease=*/false);
    return;
  }
  const LeaseRecord record = parse_record(kv->value);
  const sim::NodeId holder = record.holder;
  if (role_ == sim::Role::leader) {
    if (holder == self_ && kv->create_revision == record_create_revision_) {
      // Still ours: a renewal whose reply was lost did land.
      record_mod_revision_ = std::max(record_mod_revision_, kv->mod_revision);
      return;
    }
    step_down(ctx, /*release=*/false);
  }
  // client-go: when the record differs from the one observed, remember it and the local time
  // it was seen (observedRecord, observedTime); its expiry is judged from that time.
  if (kv->mod_revision != observed_mod_revision_) {
    if (holder != observed_holder_ || observed_mod_revision_ == 0) epoch_ = kv->mod_revision;
    observed_mod_revision_ = kv->mod_revision;
    observed_holder_ = holder;
    observed_at_ = now;
  }
  holder_ = holder == self_ ? sim::kNoNode : holder;
  announce_follower(ctx);
  if (holding_off_) return;
  // Our own identity in the record counts as ours (client-go's IsLeader), as does a record
  // whose lease has run out by this node's judgement.
  if (holder == self_ || record_expired(ctx, record)) {
    send_takeover_txn(ctx, kv->mod_revision, kv->create_revision);
  }
}

bool LeaseNode::record_expired(const sim::Context& ctx, const LeaseRecord& record) const {
  // kubernetes#114872 (client-go v0.27): the holder's duration from the record, so that a
  // replica configured shorter does not take over early (kubernetes#47671); before it, and in
  // fabric8's LeaderElector before #7249, the follower's own LeaseDuration.
  const Duration duration = config_->lease_duration_from == DurationFrom::record && record.timed
                                ? record.lease_duration
                                : config_->ttl;
  if (config_->expiry_judged_by == ExpiryJudge::renew_time && record.timed) {
    // fabric8's canBecomeLeader: expired unless renewTime + duration is after now, where
    // renewTime is the holder's wall clock and now this node's: skew and steps count in full.
    return ctx.now() >= record.renew_time + duration;
  }
  // client-go's isLeaseValid: valid while observedTime + duration is after now. Both readings are
  // monotonic, so a wall-clock step on either machine changes nothing.
  return ctx.monotonic_now() - observed_at_ >= duration;
}

std::string LeaseNode::record_value(const sim::Context& ctx) const {
  // client-go writes LeaseDurationSeconds from its own config and RenewTime from its wall clock
  // (metav1.NowMicro) on every create, takeover and renewal.
  return format_record(self_, config_->ttl, ctx.now());
}

void LeaseNode::maybe_watch(sim::Context& ctx) {
  if (watch_id_ != 0) return;
  const LocalTime now = elapsed_now(ctx);
  if (watch_request_ != 0 && now - watch_sent_at_ < config_->retry_interval) return;
  sim::StoreRequest watch;
  watch.op = sim::StoreOp::watch;
  watch.key = config_->key;
  watch_sent_at_ = now;
  watch_request_ = ctx.store(std::move(watch));
}

// ---- Renewal and the deadline -------------------------------------------------------------------

void LeaseNode::send_renewal(sim::Context& ctx) {
  sim::StoreRequest request;
  if (store_mode()) {
    request.op = sim::StoreOp::lease_keepalive;
    request.lease = lease_;
  } else {
    // client-go renews by updating the record it holds, compare-and-swap on its version.
    request.op = sim::StoreOp::txn;
    request.compares.push_back(sim::Compare{config_->key,
                                            sim::Compare::Target::mod_revision,
                                            sim::Compare::Op::equal,
                                            record_mod_revision_,
                                            {}});
    request.success.push_back(
        sim::TxnOp{sim::TxnOp::Kind::put, config_->key, record_value(ctx), sim::kNoLease});
    request.failure.push_back(sim::TxnOp{sim::TxnOp::Kind::get, config_->key, {}, sim::kNoLease});
  }
  const LocalTime now = elapsed_now(ctx);
  const sim::RequestId id = ctx.store(std::move(request));
  renewals_[next_renewal_] = Renewal{id, now};
  next_renewal_ = (next_renewal_ + 1) % kRenewalsMax;
}

void LeaseNode::on_renewal_reply(sim::Context& ctx, const sim::StoreReply& reply,
                                 LocalTime sent_at) {
  if (role_ != sim::Role::leader) return;
  if (store_mode()) {
    if (reply.lease != lease_) return;  // a keepalive of an earlier lease
    if (reply.error == sim::StoreError::lease_not_found) {
      // etcd's KeepAlive channel closes: the session is done, the key is (or will be) gone.
      step_down(ctx, /*release=*/false);
      return;
    }
    if (reply.error != sim::StoreError::none) return;
    confirm(ctx, sent_at);
    return;
  }
  if (reply.error != sim::StoreError::none) return;
  seen_revision_ = std::max(seen_revision_, reply.revision);
  if (reply.succeeded) {
    record_mod_revision_ = std::max(record_mod_revision_, reply.revision);
    confirm(ctx, sent_at);
    return;
  }
  std::optional<sim::KeyValue> kv;
  if (!reply.responses.empty()) kv = reply.responses.front();
  observe_record(ctx, kv);
}

void LeaseNode::confirm(sim::Context& ctx, LocalTime sent_at) {
  if (sent_at <= confirmed_at_) return;  // an older renewal answered late
  confirmed_at_ = sent_at;
  arm_deadline(ctx);
}

void LeaseNode::arm_deadline(sim::Context& ctx) {
  cancel(ctx, deadline_timer_);
  const Duration left = confirmed_at_ + config_->renew_deadline - elapsed_now(ctx);
  deadline_timer_ = ctx.set_timer(std::max(Duration(0), left), kDeadlineTag);
  ctx.own_deadline(std::max(Duration(0), left));  // a write committed past it is marked late
}

bool LeaseNode::deadline_passed(LocalTime now) const {
  return now - confirmed_at_ >= config_->renew_deadline;
}

bool LeaseNode::may_write(sim::Context& ctx, sim::Token token) {
  // The careless client writes with the token it checked before its work window, whatever has
  // happened since.
  if (!config_->recheck_before_write) return true;
  if (role_ != sim::Role::leader || token != token_) return false;
  if (deadline_passed(elapsed_now(ctx))) {
    step_down(ctx, /*release=*/true);
    return false;
  }
  return true;
}

// ---- Helpers ----------------------------------------------------------------------------------

void LeaseNode::race(sim::Context& ctx) {
  if (config_->race_jitter.count() <= 0) {
    maybe_acquire(ctx);
    return;
  }
  // One draw per freed key: a later sighting of the same freedom keeps the wait already drawn.
  if (race_timer_ != sim::kNoTimer) return;
  race_timer_ =
      ctx.set_timer(Duration(ctx.rng().between(0, config_->race_jitter.count() - 1)), kRaceTag);
}

Duration LeaseNode::retry_wait(sim::Context& ctx) {
  return jittered(ctx, backoff_.count() > 0 ? backoff_ : config_->retry_interval);
}

void LeaseNode::on_try_answered(sim::Context& ctx, sim::StoreError error) {
  if (config_->backoff_max.count() <= 0) return;
  const bool refused =
      error == sim::StoreError::unavailable || error == sim::StoreError::no_leader ||
      error == sim::StoreError::too_many_requests || error == sim::StoreError::resource_exhausted;
  if (!refused) {
    // An answer ends the backoff: the next try comes retry_interval from now, not after the
    // longest wait drawn so far.
    const bool was_backing_off = backoff_.count() > 0;
    backoff_ = Duration(0);
    if (was_backing_off && role_ == sim::Role::follower && !stopped_) {
      arm_retry(ctx, retry_wait(ctx));
    }
    return;
  }
  // wait.Backoff: the first failure waits Duration (retry_interval), each further one Factor
  // times the last, up to Cap.
  backoff_ = backoff_.count() <= 0
                 ? config_->retry_interval
                 : std::min(config_->backoff_max, times_ppm(backoff_, config_->backoff_factor_ppm));
  if (role_ == sim::Role::follower && !stopped_) arm_retry(ctx, retry_wait(ctx));
}

void LeaseNode::arm_retry(sim::Context& ctx, Duration after) {
  cancel(ctx, retry_timer_);
  retry_timer_ = ctx.set_timer(after, kRetryTag);
}

Duration LeaseNode::jittered(sim::Context& ctx, Duration d) {
  // k8s.io/apimachinery/pkg/util/wait's Jitter(duration, maxFactor) returns
  // duration + rand.Float64() * maxFactor * duration: up to (1 + factor) * d, not factor * d.
  // Drawn from this node's stream in integer parts per million of d.
  const std::int64_t extra_max = config_->jitter_ppm;
  if (extra_max <= 0) return d;
  return d + times_ppm(d, ctx.rng().between(0, extra_max - 1));
}

sim::NodeId LeaseNode::parse_holder(const std::string& value) const {
  return parse_record(value).holder;
}

void LeaseNode::cancel(sim::Context& ctx, sim::TimerId& timer) {
  if (timer != sim::kNoTimer) ctx.cancel_timer(timer);
  timer = sim::kNoTimer;
}

// ---- Registry entry ---------------------------------------------------------------------------

namespace {

// The nodes of a cluster of `node_count` running `config`: nodes configured apart (per_node) get
// their own copy; the rest share the cluster-wide one.
sim::ProtocolFactory lease_factory(const LeaseConfig& config, std::size_t node_count) {
  if (config.per_node.empty()) return shared_config_factory<LeaseNode>(config);
  auto shared = std::make_shared<const LeaseConfig>(config_for_node(config, sim::kNoNode));
  std::vector<std::shared_ptr<const LeaseConfig>> by_node(node_count, shared);
  for (const NodeTimings& t : config.per_node) {
    ELECTSIM_ASSERT(t.node >= 0 && static_cast<std::size_t>(t.node) < by_node.size(),
                    "per_node ids were checked against the cluster size");
    by_node[static_cast<std::size_t>(t.node)] =
        std::make_shared<const LeaseConfig>(config_for_node(config, t.node));
  }
  return [by_node = std::move(by_node)](sim::NodeId node) -> std::unique_ptr<sim::Protocol> {
    ELECTSIM_ASSERT(node >= 0 && static_cast<std::size_t>(node) < by_node.size(),
                    "a node of the cluster");
    return std::make_unique<LeaseNode>(by_node[static_cast<std::size_t>(node)]);
  };
}

std::optional<PreparedProtocol> prepare(const nlohmann::json& params, const std::string& pointer,
                                        const ClusterInfo& cluster, Flavor flavor,
                                        params::Problems& problems) {
  ReadOptions options;
  options.flavor = flavor;
  options.node_count = cluster.node_count;
  std::optional<LeaseConfig> config = read_config(params, pointer, problems, options);
  if (!config) return std::nullopt;
  config->workload = cluster.workload;
  PreparedProtocol prepared;
  prepared.leader_key = config->key;
  prepared.uses_store = true;
  prepared.fencing = config->fencing;
  prepared.lease_ttl = config->ttl;
  prepared.lease_judged_by_store = config->expiry == Expiry::store;
  // The claim lapses after the TTL; the next try comes at most one (jittered) retry later.
  // Per-node timings may be longer than the cluster-wide ones: the longest counts.
  sim::Duration ttl = config->ttl;
  sim::Duration retry = config->retry_interval;
  for (const NodeTimings& t : config->per_node) {
    const LeaseConfig own = config_for_node(*config, t.node);
    ttl = std::max(ttl, own.ttl);
    retry = std::max(retry, own.retry_interval);
  }
  prepared.silent_hold = ttl;
  prepared.worst_recovery =
      ttl + retry + retry / 1'000'000 * config->jitter_ppm + config->renew_interval;
  prepared.factory = lease_factory(*config, cluster.node_count);
  prepared.with_resource = [config = *config, nodes = cluster.node_count](const std::string& key) {
    LeaseConfig own = config;
    own.key = key;
    return lease_factory(own, nodes);
  };
  return prepared;
}

}  // namespace

ProtocolInfo protocol_info() {
  ProtocolInfo info;
  info.name = "lease";
  info.resource = "key";
  info.description =
      "a lease on one store key plus fencing tokens (etcd election, or a Kubernetes-style "
      "record judged on followers' clocks)";
  const auto params = lease_params();
  info.params.assign(params.begin(), params.end());
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    return prepare(params, pointer, cluster, Flavor::lease, problems);
  };
  // A silent holder keeps the key until its lease expires: the TTL, with etcd's concurrency
  // package ratios for the rest (keepalive at TTL/3, give up at 2/3).
  info.detection.what = "the lease TTL";
  info.detection.timing_params = {"ttl", "renew_interval", "renew_deadline", "retry_interval"};
  info.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
    return std::vector<KnobSet>{{"protocol.ttl", knob_duration(d)},
                                {"protocol.renew_interval", knob_duration(d / 3)},
                                {"protocol.renew_deadline", knob_duration(d * 2 / 3)},
                                {"protocol.retry_interval", knob_duration(d / 3)}};
  };
  return info;
}

ProtocolInfo kubernetes_protocol_info() {
  ProtocolInfo info;
  info.name = "kubernetes";
  info.resource = "key";
  info.description =
      "client-go leader election on a Lease record: followers poll it and take it over once it "
      "has not changed for the holder's lease duration by their own clocks (the lease protocol "
      "in client mode)";
  const auto params = kubernetes_params();
  info.params.assign(params.begin(), params.end());
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    return prepare(params, pointer, cluster, Flavor::kubernetes, problems);
  };
  // Followers take the record over once it has not changed for LeaseDuration: the knob, with
  // client-go's default ratios (15s : 10s : 2s) for RenewDeadline and RetryPeriod.
  info.detection.what = "LeaseDuration";
  info.detection.timing_params = {"ttl", "renew_deadline", "renew_interval", "retry_interval"};
  info.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
    return std::vector<KnobSet>{{"protocol.ttl", knob_duration(d)},
                                {"protocol.renew_deadline", knob_duration(d * 2 / 3)},
                                {"protocol.renew_interval", knob_duration(d * 2 / 15)},
                                {"protocol.retry_interval", knob_duration(d * 2 / 15)}};
  };
  return info;
}

}  // namespace electsim::protocols::lease
