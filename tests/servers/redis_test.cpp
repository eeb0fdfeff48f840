// A Redis master (servers/redis): SET NX PX, the release and extend scripts and INCR as a pure
// state machine, expiry judged on the master's own clock, and, in a kernel-backed world, what a
// crash and restart leaves of the dataset under each appendfsync policy and what a clock step on
// the master does to a key's deadline.
#include <catch2/catch.hpp>

#include <memory>
#include <utility>
#include <vector>

#include "servers/redis/redis.hpp"
#include "servers/world.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim::sim;
using namespace electsim::servers;
using namespace std::chrono_literals;

RedisRequest command(RedisOp op, std::int64_t value = 0, Duration ttl = Duration(0)) {
  RedisRequest r;
  r.op = op;
  r.value = value;
  r.ttl = ttl;
  return r;
}

LocalTime at(Duration d) {
  return LocalTime(d);
}

}  // namespace

TEST_CASE("redis: SET NX PX sets only a key that does not exist") {
  Redis r;
  CHECK(r.execute(command(RedisOp::set_nx_px, 7, 10s), at(0s)).ok);
  CHECK(r.data().lock_value == 7);
  CHECK(r.data().lock_expires_at == at(10s));
  const auto second = r.execute(command(RedisOp::set_nx_px, 9, 10s), at(1s));
  CHECK_FALSE(second.ok);
  CHECK_FALSE(second.wrote);
  CHECK(r.data().lock_value == 7);
}

TEST_CASE("redis: a key expires once the master's clock reads past its deadline") {
  Redis r;
  r.execute(command(RedisOp::set_nx_px, 7, 10s), at(0s));
  // expire.c keyIsExpired: now > when. At the deadline itself the key still exists.
  CHECK(r.lock_live(at(10s)));
  CHECK_FALSE(r.execute(command(RedisOp::set_nx_px, 9, 10s), at(10s)).ok);
  CHECK_FALSE(r.lock_live(at(10s) + 1ns));
  CHECK(r.execute(command(RedisOp::set_nx_px, 9, 10s), at(10s) + 1ns).ok);
  CHECK(r.data().lock_value == 9);
}

TEST_CASE("redis: the release script deletes only the caller's value") {
  Redis r;
  r.execute(command(RedisOp::set_nx_px, 7, 10s), at(0s));
  CHECK_FALSE(r.execute(command(RedisOp::release, 9), at(1s)).ok);
  CHECK(r.lock_live(at(1s)));
  CHECK(r.execute(command(RedisOp::release, 7), at(1s)).ok);
  CHECK_FALSE(r.lock_live(at(1s)));
  // An expired key is gone for the script too: a late release finds nothing.
  r.execute(command(RedisOp::set_nx_px, 5, 1s), at(2s));
  CHECK_FALSE(r.execute(command(RedisOp::release, 5), at(4s)).ok);
}

TEST_CASE("redis: the extend script moves the deadline of the caller's key only") {
  Redis r;
  r.execute(command(RedisOp::set_nx_px, 7, 10s), at(0s));
  CHECK_FALSE(r.execute(command(RedisOp::extend, 9, 10s), at(5s)).ok);
  CHECK(r.data().lock_expires_at == at(10s));
  CHECK(r.execute(command(RedisOp::extend, 7, 10s), at(5s)).ok);
  CHECK(r.data().lock_expires_at == at(15s));
  // Too late: the key expired at 15 s, and PEXPIRE on a missing key does nothing.
  CHECK_FALSE(r.execute(command(RedisOp::extend, 7, 10s), at(16s)).ok);
  CHECK_FALSE(r.lock_live(at(16s)));
}

TEST_CASE("redis: INCR counts up from zero") {
  Redis r;
  CHECK(r.execute(command(RedisOp::incr), at(0s)).value == 1);
  CHECK(r.execute(command(RedisOp::incr), at(0s)).value == 2);
  CHECK(r.data().counter == 2);
}

TEST_CASE("redis: appendfsync's intervals (redis.conf, Linux's dirty_expire_centisecs)") {
  RedisConfig c;
  CHECK(c.masters == 5);
  CHECK(c.appendfsync == Appendfsync::everysec);
  CHECK(c.fsync_interval() == 1s);
  c.appendfsync = Appendfsync::always;
  CHECK(c.fsync_interval() == Duration(0));
  c.appendfsync = Appendfsync::no;
  CHECK(c.fsync_interval() == 30s);
}

// ---- In a world -------------------------------------------------------------------------------

namespace {

// Node 0 sets the lock on master 0 at 500 ms (value 7, PX 60 s); node 1 tries SET NX at 5 s
// (value 9) and notes the answer.
struct Client final : Protocol {
  std::vector<std::pair<NodeId, bool>>* answers;
  NodeId self = kNoNode;
  explicit Client(std::vector<std::pair<NodeId, bool>>* out) : answers(out) {}
  void on_start(Context& ctx) override {
    self = ctx.self();
    if (ctx.now() < LocalTime(1s)) ctx.set_timer(self == 0 ? Duration(500ms) : Duration(5s), 0);
  }
  void on_timer(Context& ctx, TimerId, TimerTag) override {
    ctx.redis(0, command(RedisOp::set_nx_px, self == 0 ? 7 : 9, 60s));
  }
  void on_redis_reply(Context&, const RedisReply& reply) override {
    answers->emplace_back(self, reply.ok);
  }
  void on_message(Context&, NodeId, const Message&) override {}
  void on_store_reply(Context&, const StoreReply&) override {}
  void on_watch(Context&, const WatchEvent&) override {}
  void on_sink_reply(Context&, const SinkReply&) override {}
  void on_command(Context&, Command) override {}
};

FaultSpec on_master(Duration when, FaultKind kind, Duration duration = Duration(0)) {
  FaultSpec f;
  f.at = Time(when.count());
  f.kind = kind;
  f.target = Target{TargetKind::node, redis_endpoint(0), {}};
  f.duration = duration;
  return f;
}

// Whether node 1's SET NX at 5 s succeeded (the key was gone), after `faults`.
bool second_client_gets_key(Appendfsync mode, std::vector<FaultSpec> faults) {
  std::vector<std::pair<NodeId, bool>> answers;
  WorldConfig world;
  world.node_count = 2;
  world.duration = 10s;
  world.seed = 1;
  world.network.latency = Distribution::constant_of(1ms);
  world.faults = std::move(faults);
  Services services;
  services.redis = RedisConfig{1, mode};
  world = with_services(std::move(world), services);
  Kernel kernel(std::move(world), [&](NodeId) { return std::make_unique<Client>(&answers); });
  kernel.run();
  REQUIRE(answers.size() == 2);
  CHECK(answers[0] == std::pair<NodeId, bool>{0, true});
  REQUIRE(answers[1].first == 1);
  return answers[1].second;
}

}  // namespace

TEST_CASE("redis world: a crash before the fsync loses the key unless appendfsync is always") {
  // The SET lands at 501 ms; the master's machine dies at 800 ms and is back at 1.8 s.
  const std::vector<FaultSpec> crash = {on_master(800ms, FaultKind::crash, 1s)};
  CHECK_FALSE(second_client_gets_key(Appendfsync::always, crash));
  CHECK(second_client_gets_key(Appendfsync::everysec, crash));
  CHECK(second_client_gets_key(Appendfsync::no, crash));
}

TEST_CASE("redis world: everysec keeps what the last second's fsync wrote, no waits for the OS") {
  // The crash at 1.2 s comes after everysec's fsync at 1 s, long before the OS's 30 s flush.
  const std::vector<FaultSpec> crash = {on_master(1200ms, FaultKind::crash, 1s)};
  CHECK_FALSE(second_client_gets_key(Appendfsync::everysec, crash));
  CHECK(second_client_gets_key(Appendfsync::no, crash));
}

TEST_CASE("redis world: a clock step forward on the master expires the key early") {
  CHECK_FALSE(second_client_gets_key(Appendfsync::always, {}));
  // PX 60 s from 501 ms; the master's clock jumps 70 s ahead at 2 s: at 5 s it reads 75 s.
  FaultSpec step = on_master(2s, FaultKind::clock_step);
  step.clock_amount = 70s;
  CHECK(second_client_gets_key(Appendfsync::always, {step}));
}
