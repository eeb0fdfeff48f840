// Tests of the redlock protocol (protocols/redlock/) against the fake context, with real
// servers::Redis masters answering by hand: one SET NX PX per master, a majority within the
// validity time wins (expiry - elapsed - expiry*drift_factor - 2 ms), a minority or a late
// majority releases everywhere, waits for that round (every answer or its timeout) and retries
// after 50 to 250 ms, the holder extends at expiry/3
// and steps down when the validity time runs out on its clock, and the fencing counter's token
// is the largest value a majority returned.
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/redlock/redlock.hpp"
#include "servers/redis/redis.hpp"
#include "tests/protocols/kit.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::redlock::read_config;
using electsim::protocols::redlock::RedlockConfig;
using electsim::protocols::redlock::RedlockNode;
using electsim::servers::Redis;
using electsim::testing::NodeBench;
using json = nlohmann::json;
namespace sim = electsim::sim;

constexpr sim::Duration kThird = sim::Duration(8s) / 3;  // expiry/3, the renew interval

// The defaults without the leader's write workload, the fencing counter on or off.
RedlockConfig config_of(bool fencing) {
  RedlockConfig c;
  c.fencing = fencing;
  c.workload.enabled = false;
  return c;
}

// One redlock node on a fake context, with five real Redis masters that answer when told to.
struct Bench : NodeBench<RedlockNode, RedlockConfig> {
  explicit Bench(bool fencing = false) : NodeBench(config_of(fencing)) {}

  std::array<Redis, 5> masters;
  std::size_t answered = 0;

  // Answers the calls not yet answered, from the masters in `who` (by index), at the fake clock.
  void answer(std::initializer_list<std::size_t> who) {
    const std::size_t end = ctx.redis_calls.size();
    for (std::size_t i = answered; i < end; ++i) {
      const auto& call = ctx.redis_calls[i];
      bool chosen = false;
      for (std::size_t k : who) chosen = chosen || k == call.master;
      if (!chosen) continue;
      const auto out = masters[call.master].execute(call.request, ctx.now());
      sim::RedisReply reply;
      reply.id = call.id;
      reply.op = call.request.op;
      reply.master = static_cast<std::int32_t>(call.master);
      reply.ok = out.ok;
      reply.value = out.value;
      node->on_redis_reply(ctx, reply);
    }
    answered = end;
  }
  std::size_t calls_of(sim::RedisOp op, std::size_t from = 0) const {
    std::size_t n = 0;
    for (std::size_t i = from; i < ctx.redis_calls.size(); ++i) {
      if (ctx.redis_calls[i].request.op == op) ++n;
    }
    return n;
  }
};

}  // namespace

TEST_CASE("redlock: redsync's defaults and the Redis docs' drift") {
  const RedlockConfig c;
  CHECK(c.expiry == 8s);
  CHECK(c.tries == 32);
  CHECK(c.retry_delay_min == 50ms);
  CHECK(c.retry_delay_max == 250ms);
  CHECK(c.renew() == kThird);
  CHECK(c.drift() == 82ms);             // 8 s x 0.01 + 2 ms
  CHECK(c.request_timeout() == 400ms);  // 8 s x 0.05
  CHECK(c.quorum() == 3);
}

TEST_CASE("redlock: SET NX PX on every master, and a majority in time makes a leader") {
  Bench b;
  b.start();
  REQUIRE(b.ctx.redis_calls.size() == 5);
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(b.ctx.redis_calls[k].master == k);
    CHECK(b.ctx.redis_calls[k].request.op == sim::RedisOp::set_nx_px);
    CHECK(b.ctx.redis_calls[k].request.ttl == 8s);
    CHECK(b.ctx.redis_calls[k].request.value == b.ctx.redis_calls[0].request.value);
  }
  // Another client holds masters 3 and 4.
  b.masters[3].execute({0, sim::RedisOp::set_nx_px, 1, 8s}, sim::LocalTime{});
  b.masters[4].execute({0, sim::RedisOp::set_nx_px, 1, 8s}, sim::LocalTime{});
  b.ctx.advance(10ms);
  b.answer({0, 1, 2, 3, 4});
  REQUIRE(b.node->leads());
  CHECK(b.ctx.belief()->role == sim::Role::leader);
  // Good until start + expiry - drift on its own clock.
  CHECK(b.node->valid_until() == sim::LocalTime(8s - 82ms));
  CHECK(b.calls_of(sim::RedisOp::release) == 0);
}

TEST_CASE("redlock: a minority releases everywhere, waits for the release round, then 50-250 ms") {
  Bench b;
  b.start();
  b.ctx.advance(5ms);
  b.answer({0, 1});  // masters 2 to 4 never answer
  CHECK_FALSE(b.node->leads());
  b.ctx.fire_tag(*b.node, RedlockNode::kRoundTag);  // the 400 ms request timeout
  CHECK(b.ctx.now() == sim::LocalTime(400ms));
  CHECK_FALSE(b.node->leads());
  CHECK(b.calls_of(sim::RedisOp::release) == 5);
  // redsync's lockContext waits for the release round before its delay: no retry yet.
  CHECK(b.ctx.armed(RedlockNode::kRetryTag).empty());
  // The release script leaves masters 0 and 1 free again once it runs.
  b.ctx.advance(5ms);
  b.answer({0, 1});
  CHECK_FALSE(b.masters[0].lock_live(b.ctx.now()));
  CHECK(b.ctx.armed(RedlockNode::kRetryTag).empty());
  b.ctx.fire_tag(*b.node, RedlockNode::kRoundTag);  // the release round's own 400 ms timeout
  CHECK(b.ctx.now() == sim::LocalTime(800ms));
  const auto retry = b.ctx.armed(RedlockNode::kRetryTag);
  REQUIRE(retry.size() == 1);
  CHECK(retry[0].due - b.ctx.now() >= 50ms);
  CHECK(retry[0].due - b.ctx.now() < 250ms);
  const std::size_t before = b.ctx.redis_calls.size();
  b.ctx.fire_tag(*b.node, RedlockNode::kRetryTag);
  CHECK(b.calls_of(sim::RedisOp::set_nx_px, before) == 5);
  // A fresh random value for the new attempt.
  CHECK(b.ctx.redis_calls[before].request.value != b.ctx.redis_calls[0].request.value);
}

TEST_CASE("redlock: a release round every master answers starts the delay at its last answer") {
  Bench b;
  for (std::size_t k = 1; k < 4; ++k) {
    b.masters[k].execute({0, sim::RedisOp::set_nx_px, 1, 1h}, sim::LocalTime{});
  }
  b.start();
  b.ctx.advance(5ms);
  b.answer({0, 1, 2, 3, 4});  // two of five: a minority, decided at once
  CHECK(b.calls_of(sim::RedisOp::release) == 5);
  b.ctx.advance(7ms);
  b.answer({0, 1, 2, 3, 4});
  const auto retry = b.ctx.armed(RedlockNode::kRetryTag);
  REQUIRE(retry.size() == 1);
  CHECK(retry[0].set_at == sim::LocalTime(12ms));
}

TEST_CASE("redlock: with two of five masters unreachable an attempt comes every ~0.95 s") {
  // redsync's lockContext with its defaults: the SET round waits out its 400 ms timeout for the
  // two silent masters, the release round waits out its own 400 ms, then a delay of 50 to
  // 250 ms. Another client holds the three reachable masters, so every attempt fails.
  Bench b;
  for (std::size_t k = 0; k < 3; ++k) {
    b.masters[k].execute({0, sim::RedisOp::set_nx_px, 1, 1h}, sim::LocalTime{});
  }
  b.start();
  std::vector<sim::LocalTime> starts;
  std::size_t seen = 0;
  for (int step = 0; step < 100 && starts.size() < 11; ++step) {
    for (; seen < b.ctx.redis_calls.size(); ++seen) {
      if (b.ctx.redis_calls[seen].request.op == sim::RedisOp::set_nx_px &&
          b.ctx.redis_calls[seen].master == 0) {
        starts.push_back(b.ctx.redis_calls[seen].at);
      }
    }
    b.ctx.advance(1ms);  // the reachable masters answer after a millisecond
    b.answer({0, 1, 2});
    REQUIRE(b.ctx.fire_next(*b.node));
  }
  REQUIRE(starts.size() == 11);
  CHECK_FALSE(b.node->leads());
  sim::Duration total{0};
  for (std::size_t i = 1; i < starts.size(); ++i) {
    const sim::Duration period = starts[i] - starts[i - 1];
    INFO("attempt " << i << " period_ns=" << period.count());
    CHECK(period >= 850ms);  // 400 + 400 + 50
    CHECK(period < 1050ms);  // 400 + 400 + 250
    total += period;
  }
  const sim::Duration mean = total / 10;
  INFO("mean_ns=" << mean.count());
  CHECK(mean > 890ms);
  CHECK(mean < 1010ms);
}

TEST_CASE("redlock: a majority that answers after the validity time is no lock") {
  Bench b;
  b.start();
  b.ctx.advance(8s);  // a pause of the client: the answers arrive after expiry - drift
  b.answer({0, 1, 2, 3, 4});
  CHECK_FALSE(b.node->leads());
  CHECK(b.calls_of(sim::RedisOp::release) == 5);
}

TEST_CASE("redlock: the holder extends at expiry/3 and steps down when validity runs out") {
  Bench b;
  b.start();
  b.answer({0, 1, 2, 3, 4});
  REQUIRE(b.node->leads());
  const std::int64_t value = b.node->lock_value();
  b.ctx.fire_tag(*b.node, RedlockNode::kRenewTag);
  CHECK(b.ctx.now() == sim::LocalTime(kThird));
  REQUIRE(b.calls_of(sim::RedisOp::extend) == 5);
  CHECK(b.ctx.redis_calls.back().request.value == value);
  b.ctx.advance(3ms);
  b.answer({0, 1, 2});
  // Masters 3 and 4 never answer: the round ends at the request timeout, 400 ms after it began.
  CHECK(b.node->valid_until() == sim::LocalTime(8s - 82ms));
  b.ctx.fire_tag(*b.node, RedlockNode::kRoundTag);
  CHECK(b.ctx.now() == sim::LocalTime(kThird + 400ms));
  // The new validity counts from the extension round's start.
  CHECK(b.node->valid_until() == sim::LocalTime(kThird + 8s - 82ms));
  // From now on no master answers: the holder keeps trying until its validity ends.
  b.run_for(sim::LocalTime(kThird + 8s - 82ms) - b.ctx.now() - 1ns);
  CHECK(b.node->leads());
  b.run_for(1ns);
  CHECK_FALSE(b.node->leads());
  CHECK(b.ctx.belief()->role == sim::Role::follower);
  CHECK(b.ctx.now() == sim::LocalTime(kThird + 8s - 82ms));
}

TEST_CASE("redlock: a wall-clock step on the client moves neither its validity nor its epoch") {
  // redsync measures the acquisition with Go's time.Now, whose monotonic reading Sub and Before
  // use: an NTP step forward during the round does not make the majority late.
  Bench b;
  b.start();
  b.ctx.step_wall(1h);
  b.ctx.advance(10ms);
  b.answer({0, 1, 2, 3, 4});
  REQUIRE(b.node->leads());
  CHECK(b.node->valid_until() == sim::LocalTime(8s - 82ms));
  // Without fencing the epoch is the start's wall-clock reading, taken before the step.
  CHECK(b.node->token() == 1);
}

TEST_CASE("redlock: with fencing the token is the largest counter a majority returned") {
  Bench b(true);
  b.masters[0].execute({0, sim::RedisOp::incr, 0, {}}, sim::LocalTime{});
  for (int i = 0; i < 4; ++i) b.masters[4].execute({0, sim::RedisOp::incr, 0, {}}, {});
  b.start();
  b.answer({0, 1, 2, 3, 4});
  CHECK_FALSE(b.node->leads());
  REQUIRE(b.calls_of(sim::RedisOp::incr) == 5);
  b.answer({0, 1, 4});
  CHECK_FALSE(b.node->leads());  // it waits for masters 2 and 3 until the request timeout
  b.ctx.fire_tag(*b.node, RedlockNode::kRoundTag);
  REQUIRE(b.node->leads());
  CHECK(b.node->token() == 5);
  CHECK(b.ctx.belief()->epoch == 5);
}

TEST_CASE("redlock: without fencing the epoch is the acquisition's start on the node's clock") {
  Bench b;
  b.ctx.advance(1234ms);
  b.start();
  b.ctx.advance(5ms);
  b.answer({0, 1, 2});
  b.ctx.fire_tag(*b.node, RedlockNode::kRoundTag);
  REQUIRE(b.node->leads());
  CHECK(b.node->token() == 1234);
  CHECK(b.ctx.belief()->epoch == 1234);
}

TEST_CASE("redlock: without fencing a node's epochs grow even within one millisecond") {
  Bench b;
  b.ctx.advance(1234ms);
  b.start();
  b.answer({0, 1, 2, 3, 4});
  REQUIRE(b.node->leads());
  CHECK(b.node->token() == 1234);
  b.node->on_command(b.ctx, sim::Command::step_down);
  CHECK_FALSE(b.node->leads());
  b.answer({0, 1, 2, 3, 4});  // the releases
  b.node->on_command(b.ctx, sim::Command::campaign);
  b.answer({0, 1, 2, 3, 4});
  REQUIRE(b.node->leads());
  CHECK(b.node->token() == 1235);
}

TEST_CASE("redlock: parameters are range-checked with their pointers") {
  Problems problems;
  CHECK_FALSE(read_config(json{{"tries", 0}}, "/protocol", problems));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/tries");
  problems.clear();
  CHECK_FALSE(read_config(json{{"retry_delay_min", "300ms"}}, "/protocol", problems));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/retry_delay_max");
  problems.clear();
  CHECK_FALSE(read_config(json{{"renew_interval", "8s"}}, "/protocol", problems));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/renew_interval");
  problems.clear();
  CHECK_FALSE(read_config(json{{"drift_factor", 1.5}}, "/protocol", problems));
  CHECK(problems.size() >= 1);
  problems.clear();
  CHECK(read_config(json{{"expiry", "2s"}, {"fencing", true}}, "/protocol", problems));
  CHECK(problems.empty());
}
