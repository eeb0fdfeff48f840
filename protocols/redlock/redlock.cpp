// The redlock protocol: see protocols/redlock/redlock.hpp.
#include "protocols/redlock/redlock.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace electsim::protocols::redlock {
namespace {

// The most attempts one Lock call may make: beyond it a call would outlast any sensible run.
constexpr std::int64_t kTriesMax = 10'000;

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const RedlockConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "expiry",
         .default_value = d.expiry,
         .min = params::kShortestTimer,
         .meaning = "the lock's PX time to live (redsync defaultExpiry)"},
        {.name = "tries",
         .type = params::ParamType::integer,
         .default_value = d.tries,
         .min = std::int64_t{1},
         .max = kTriesMax,
         .meaning = "acquisition attempts per Lock call (redsync defaultTries)"},
        {.name = "retry_delay_min",
         .default_value = d.retry_delay_min,
         .min = params::kShortestTimer,
         .meaning = "shortest random wait between attempts (redsync minRetryDelayMilliSec)"},
        {.name = "retry_delay_max",
         .default_value = d.retry_delay_max,
         .min = params::kShortestTimer,
         .meaning = "the random wait is below this (redsync maxRetryDelayMilliSec)"},
        {.name = "drift_factor",
         .type = params::ParamType::probability,
         .default_value = d.drift_factor_ppm,
         .meaning = "clock drift allowance: validity = expiry - elapsed - expiry*drift_factor - "
                    "2ms (Redis docs; redsync defaultDriftFactor)"},
        {.name = "timeout_factor",
         .type = params::ParamType::probability,
         .default_value = d.timeout_factor_ppm,
         .meaning = "each request to a master is given up after expiry*timeout_factor (redsync "
                    "defaultTimeoutFactor); above 0"},
        {.name = "renew_interval",
         .default_note = "expiry/3",
         .min = params::kShortestTimer,
         .meaning = "the holder extends this often; below the validity time"},
        {.name = "relock_interval",
         .default_value = d.relock_interval,
         .min = params::kShortestTimer,
         .meaning = "after `tries` failed attempts, the node calls Lock again this much later"},
        {.name = "fencing",
         .type = params::ParamType::boolean,
         .default_value = d.fencing,
         .meaning = "INCR a counter on the masters after acquiring; the token is the largest of a "
                    "majority's answers, and the sink rejects lower tokens"},
        {.name = "recheck_before_write",
         .type = params::ParamType::boolean,
         .default_value = d.recheck_before_write,
         .meaning = "check the validity time on the node's clock just before each write"},
    };
  }();
  return table;
}

}  // namespace

std::span<const params::ParamSpec> redlock_params() {
  return specs();
}

std::optional<RedlockConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                         params::Problems& problems) {
  const std::size_t before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  RedlockConfig c;
  const auto expiry = reader.timer("expiry");
  if (expiry) c.expiry = *expiry;
  c.tries = reader.integer("tries");  // within 1 to kTriesMax
  const auto min = reader.timer("retry_delay_min");
  const auto max = reader.timer("retry_delay_max");
  if (min) c.retry_delay_min = *min;
  if (max) c.retry_delay_max = *max;
  if (min && max && *min >= *max) {
    reader.problem("retry_delay_max", "a duration above retry_delay_min",
                   reader.has("retry_delay_max")
                       ? params::json_excerpt(params.at("retry_delay_max"))
                       : fmt::format("\"{}\" (the default)", sim::format_duration(*max)));
  }
  c.drift_factor_ppm = reader.probability("drift_factor");
  c.timeout_factor_ppm = reader.probability("timeout_factor");
  if (reader.has("timeout_factor") && c.timeout_factor_ppm == 0) {
    reader.problem("timeout_factor", "a fraction above 0 (a request needs some time)",
                   params::json_excerpt(params.at("timeout_factor")));
  }
  c.renew_interval = reader.timer_opt("renew_interval");
  if (auto relock = reader.timer("relock_interval")) c.relock_interval = *relock;
  c.fencing = reader.boolean("fencing");
  c.recheck_before_write = reader.boolean("recheck_before_write");
  if (expiry && c.drift() >= c.expiry) {
    reader.problem("drift_factor", "a drift allowance below expiry (expiry*drift_factor + 2ms)",
                   "an allowance of the whole expiry");
  }
  // Each request's timeout, expiry*timeout_factor, is a timer like any the protocol sets.
  if (expiry && c.timeout_factor_ppm > 0 && c.request_timeout() < params::kShortestTimer) {
    const char* cause =
        reader.has("timeout_factor") || !reader.has("expiry") ? "timeout_factor" : "expiry";
    reader.problem(cause,
                   fmt::format("a request timeout (expiry*timeout_factor) of at least \"{}\" (the "
                               "shortest protocol timer)",
                               sim::format_duration(params::kShortestTimer)),
                   fmt::format("{}, which gives \"{}\"",
                               reader.has(cause) ? params::json_excerpt(params.at(cause))
                                                 : std::string("the default"),
                               sim::format_duration(c.request_timeout())));
  }
  if (expiry && c.drift() < c.expiry) {
    const sim::Duration validity = c.expiry - c.drift();
    const std::string validity_text = fmt::format("\"{}\"", sim::format_duration(validity));
    if (c.renew_interval && *c.renew_interval >= validity) {
      reader.problem("renew_interval",
                     fmt::format("a duration below the validity time (expiry - "
                                 "expiry*drift_factor - 2ms, here {})",
                                 validity_text),
                     params::json_excerpt(params.at("renew_interval")));
    } else if (!c.renew_interval && c.renew() >= validity) {
      // The default, expiry/3, meets the check a written renew_interval meets: a drift_factor
      // (or an expiry) that leaves less validity than that is refused, never run with a holder
      // that renews only after its lock has run out.
      const char* cause =
          reader.has("drift_factor") || !reader.has("expiry") ? "drift_factor" : "expiry";
      reader.problem(cause,
                     fmt::format("a validity time (expiry - expiry*drift_factor - 2ms) longer than "
                                 "renew_interval's default, expiry/3 ({})",
                                 fmt::format("\"{}\"", sim::format_duration(c.renew()))),
                     fmt::format("{}, which leaves {} (give a renew_interval below that, or a "
                                 "smaller drift_factor)",
                                 reader.has(cause) ? params::json_excerpt(params.at(cause))
                                                   : std::string("the default"),
                                 validity_text));
    }
  }
  if (problems.size() != before) return std::nullopt;
  return c;
}

RedlockNode::RedlockNode(std::shared_ptr<const RedlockConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {}

void RedlockNode::cancel(sim::Context& ctx, sim::TimerId& timer) {
  if (timer != sim::kNoTimer) ctx.cancel_timer(timer);
  timer = sim::kNoTimer;
}

void RedlockNode::on_start(sim::Context& ctx) {
  ctx.announce(sim::Belief::follower(sim::kNoNode, 0));
  attempts_ = 0;
  attempt(ctx);
}

void RedlockNode::on_message(sim::Context& /*ctx*/, sim::NodeId /*from*/,
                             const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "redlock nodes talk only to the Redis masters");
}

void RedlockNode::start_round(sim::Context& ctx, Round kind, sim::RedisOp op) {
  round_ = kind;
  answered_ = 0;
  ok_ = 0;
  max_value_ = 0;
  round_start_ = ctx.monotonic_now();
  sim::RedisRequest request;
  request.op = op;
  request.value = value_;
  request.ttl = config_->expiry;
  for (std::size_t k = 0; k < config_->masters; ++k) ids_[k] = ctx.redis(k, request);
  cancel(ctx, round_timer_);
  round_timer_ = ctx.set_timer(config_->request_timeout(), kRoundTag);
}

void RedlockNode::attempt(sim::Context& ctx) {
  // A fresh random value per attempt (redsync genValue: 16 random bytes).
  state_ = State::acquiring;
  value_ = static_cast<std::int64_t>(ctx.rng().next_u64() >> 1);
  ++attempts_;
  attempt_start_ = ctx.monotonic_now();
  attempt_wall_ = ctx.now();
  start_round(ctx, Round::acquire, sim::RedisOp::set_nx_px);
}

void RedlockNode::on_redis_reply(sim::Context& ctx, const sim::RedisReply& reply) {
  if (round_ == Round::none || reply.master < 0 ||
      static_cast<std::size_t>(reply.master) >= config_->masters ||
      ids_[static_cast<std::size_t>(reply.master)] != reply.id) {
    return;  // a stale answer: a round already decided, or an Unlock's release
  }
  ids_[static_cast<std::size_t>(reply.master)] = 0;
  ++answered_;
  if (reply.ok) {
    ++ok_;
    max_value_ = std::max(max_value_, reply.value);
  }
  if (answered_ == config_->masters) end_round(ctx);
}

void RedlockNode::end_round(sim::Context& ctx) {
  cancel(ctx, round_timer_);
  const Round kind = round_;
  round_ = Round::none;
  ids_.fill(0);
  const sim::LocalTime now = ctx.monotonic_now();
  const bool majority = ok_ >= config_->quorum();
  switch (kind) {
    case Round::none:
      return;
    case Round::release:
      // Every master answered the release, or the round's timeout passed.
      schedule_retry(ctx);
      return;
    case Round::acquire:
    case Round::incr: {
      // validity = expiry - (now - start) - drift: good until start + expiry - drift.
      const sim::LocalTime until = attempt_start_ + config_->expiry - config_->drift();
      if (!majority || !(now < until)) {
        failed_attempt(ctx);
        return;
      }
      until_ = until;
      if (kind == Round::acquire && config_->fencing) {
        state_ = State::fencing;
        start_round(ctx, Round::incr, sim::RedisOp::incr);
        return;
      }
      if (config_->fencing) {
        token_ = max_value_;
      } else {
        // No counter: the acquisition's start on this node's clock, in milliseconds (and above
        // this node's previous epoch). It orders two nodes' tenures only as well as their clocks
        // agree; nothing the masters keep backs it, so the sink cannot trust it.
        const std::int64_t start_ms = attempt_wall_.since_start().count() / 1'000'000;
        const std::int64_t epoch = std::max(start_ms, ctx.durable().get("epoch") + 1);
        ctx.durable().set("epoch", epoch);
        token_ = epoch;
      }
      become_leader(ctx);
      return;
    }
    case Round::extend: {
      // redsync Extend: a majority extended, and the new validity counts from the round's start.
      const sim::LocalTime until = round_start_ + config_->expiry - config_->drift();
      if (state_ == State::leading && majority && now < until) {
        until_ = until;
        cancel(ctx, validity_timer_);
        validity_timer_ = ctx.set_timer(until_ - now, kValidityTag);
      }
      return;
    }
  }
}

void RedlockNode::failed_attempt(sim::Context& ctx) {
  // redsync mutex.go, lockContext: a failed attempt releases on every master under a context of
  // its own with the same timeout as the SET round (expiry * timeout_factor), and
  // actOnPoolsAsync waits for every master's answer or that timeout; only then does the loop
  // come round to the random delay. With masters that never answer, each attempt costs two
  // request timeouts plus the delay.
  state_ = State::releasing;
  cancel(ctx, retry_timer_);
  start_round(ctx, Round::release, sim::RedisOp::release);
}

void RedlockNode::schedule_retry(sim::Context& ctx) {
  state_ = State::idle;
  cancel(ctx, retry_timer_);
  if (attempts_ >= config_->tries) {
    // redsync returns ErrFailed after the last attempt's release round; the caller calls Lock
    // again later.
    attempts_ = 0;
    retry_timer_ = ctx.set_timer(config_->relock_interval, kRetryTag);
    return;
  }
  // redsync's default delayFunc: rand.Intn(max - min) + min, in whole milliseconds.
  const std::int64_t min_ms = config_->retry_delay_min.count() / 1'000'000;
  const std::int64_t max_ms = config_->retry_delay_max.count() / 1'000'000;
  const std::int64_t ms = max_ms > min_ms ? ctx.rng().between(min_ms, max_ms - 1) : min_ms;
  retry_timer_ = ctx.set_timer(
      std::max(sim::Duration(std::chrono::milliseconds(ms)), config_->retry_delay_min), kRetryTag);
}

void RedlockNode::release_all(sim::Context& ctx) {
  sim::RedisRequest request;
  request.op = sim::RedisOp::release;
  request.value = value_;
  for (std::size_t k = 0; k < config_->masters; ++k) ctx.redis(k, request);
}

void RedlockNode::become_leader(sim::Context& ctx) {
  state_ = State::leading;
  attempts_ = 0;
  ctx.announce(sim::Belief::leader(token_));
  writer_.start(ctx, token_);
  cancel(ctx, renew_timer_);
  cancel(ctx, validity_timer_);
  renew_timer_ = ctx.set_timer(config_->renew(), kRenewTag);
  validity_timer_ = ctx.set_timer(until_ - ctx.monotonic_now(), kValidityTag);
}

void RedlockNode::step_down(sim::Context& ctx) {
  writer_.stop(ctx);
  cancel(ctx, renew_timer_);
  cancel(ctx, validity_timer_);
  cancel(ctx, round_timer_);
  round_ = Round::none;
  ids_.fill(0);
  state_ = State::idle;
  ctx.announce(sim::Belief::follower(sim::kNoNode, 0));
}

void RedlockNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (writer_.on_timer(ctx, id, tag, [this, &ctx](sim::Token token) {
        if (!config_->recheck_before_write) return true;
        return state_ == State::leading && token == token_ && ctx.monotonic_now() < until_;
      })) {
    return;
  }
  switch (tag) {
    case kRetryTag:
      if (id != retry_timer_) return;
      retry_timer_ = sim::kNoTimer;
      if (state_ == State::idle) attempt(ctx);
      return;
    case kRoundTag:
      if (id != round_timer_) return;
      round_timer_ = sim::kNoTimer;
      end_round(ctx);
      return;
    case kRenewTag:
      if (id != renew_timer_) return;
      renew_timer_ = ctx.set_timer(config_->renew(), kRenewTag);
      if (state_ == State::leading && round_ == Round::none) {
        start_round(ctx, Round::extend, sim::RedisOp::extend);
      }
      return;
    case kValidityTag:
      if (id != validity_timer_) return;
      validity_timer_ = sim::kNoTimer;
      // The validity time ran out on this node's clock without a successful extension: release
      // the lock's value everywhere as a failed attempt does, then compete again.
      if (state_ != State::leading) return;
      step_down(ctx);
      failed_attempt(ctx);
      return;
    default:
      return;
  }
}

void RedlockNode::on_command(sim::Context& ctx, sim::Command command) {
  if (state_ == State::stopped) return;
  if (state_ == State::leading) {
    // redsync's Unlock: the release script on every master; nothing waits for its answers here.
    step_down(ctx);
    release_all(ctx);
  }
  cancel(ctx, retry_timer_);
  cancel(ctx, round_timer_);
  round_ = Round::none;
  ids_.fill(0);
  state_ = State::idle;
  if (command == sim::Command::stop) {
    state_ = State::stopped;
    return;
  }
  if (command == sim::Command::campaign) {
    attempts_ = 0;
    attempt(ctx);
    return;
  }
  retry_timer_ = ctx.set_timer(config_->relock_interval, kRetryTag);
}

ProtocolInfo protocol_info() {
  ProtocolInfo info;
  info.name = "redlock";
  info.description =
      "a lock on a majority of N independent Redis masters (SET NX PX, redsync's defaults); "
      "extended by a check-and-pexpire script, optional INCR fencing counter";
  const auto params = redlock_params();
  info.params.assign(params.begin(), params.end());
  info.servers = {"redis"};
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    std::optional<RedlockConfig> config = read_config(params, pointer, problems);
    if (!config) return std::nullopt;
    config->workload = cluster.workload;
    if (const auto masters = cluster.servers_of(sim::server_kind::redis))
      config->masters = *masters;
    PreparedProtocol prepared;
    prepared.fencing = config->fencing;
    // Without the INCR counter the token is a node's wall-clock reading: no order of grants.
    prepared.tokens_ordered = config->fencing;
    prepared.lease_ttl = config->expiry;
    // The keys expire on the masters; a node that gave up calls Lock again after relock_interval.
    prepared.silent_hold = config->expiry;
    prepared.worst_recovery = config->expiry + config->relock_interval + config->retry_delay_max;
    prepared.factory = shared_config_factory<RedlockNode>(std::move(*config));
    return prepared;
  };
  // A silent holder's keys expire on the masters after the lock's PX time (redsync expiry).
  info.detection.what = "the lock's expiry (PX)";
  info.detection.timing_params = {"expiry", "renew_interval"};
  info.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
    return std::vector<KnobSet>{{"protocol.expiry", knob_duration(d)},
                                {"protocol.renew_interval", knob_duration(d / 3)}};
  };
  return info;
}

}  // namespace electsim::protocols::redlock
