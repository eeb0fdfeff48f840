// The store's capacity (servers/store/service_queue.hpp) against queueing theory's closed forms:
// one client sends requests at the times of a Poisson process over a network without latency, and
// what it measures from send to answer is the time a request spends in the store. M/M/1, M/D/1
// and M/M/2 give the mean of that time; M/M/1/K gives the share of writes refused. Then the rules
// no formula gives: which requests a full queue refuses, and what a client's lost connection does.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "servers/store/store_server.hpp"
#include "servers/world.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim::sim;
using namespace std::chrono_literals;
using electsim::servers::CapacityConfig;
using electsim::servers::Services;

struct Load {
  Duration mean_gap{0};       // between arrivals, exponential (a Poisson process)
  StoreOp op = StoreOp::get;  // what every request asks
  std::size_t requests = 0;   // how many to send
  Duration start{0};          // before the first: a replicated store elects its leader
};

struct Measured {
  std::vector<double> sojourn_s;  // per answered request: seconds from send to answer
  std::size_t refused = 0;        // answered too_many_requests
  std::size_t answered = 0;
};

// Sends `load.requests` requests at Poisson times and notes every answer.
struct PoissonClient final : Protocol {
  Load load;
  Measured* out;
  std::map<RequestId, LocalTime> sent;
  std::size_t left = 0;
  PoissonClient(Load l, Measured* m) : load(l), out(m), left(l.requests) {}
  Duration gap(Context& ctx) {
    Distribution d;
    d.kind = DistributionKind::exponential;
    d.mean = load.mean_gap;
    return d.sample(ctx.rng());
  }
  void on_start(Context& ctx) override { ctx.set_timer(load.start + gap(ctx), 0); }
  void on_timer(Context& ctx, TimerId, TimerTag) override {
    StoreRequest request;
    request.op = load.op;
    request.key = "k";
    request.value = "v";
    sent[ctx.store(request)] = ctx.now();
    if (--left > 0) ctx.set_timer(gap(ctx), 0);
  }
  void on_store_reply(Context& ctx, const StoreReply& reply) override {
    const auto it = sent.find(reply.id);
    REQUIRE(it != sent.end());
    ++out->answered;
    if (reply.error == StoreError::too_many_requests) {
      ++out->refused;
    } else {
      REQUIRE(reply.error == StoreError::none);
      out->sojourn_s.push_back(std::chrono::duration<double>(ctx.now() - it->second).count());
    }
    sent.erase(it);
  }
  void on_message(Context&, NodeId, const Message&) override {}
  void on_watch(Context&, const WatchEvent&) override {}
  void on_sink_reply(Context&, const SinkReply&) override {}
  void on_command(Context&, Command) override {}
};

Distribution exponential(Duration mean) {
  Distribution d;
  d.kind = DistributionKind::exponential;
  d.mean = mean;
  return d;
}

Measured run(const CapacityConfig& capacity, Load load, std::uint64_t seed = 1,
             std::size_t members = 1) {
  WorldConfig world;
  world.seed = seed;
  world.node_count = 1;
  world.duration = 100'000s;  // the load ends first
  world.network.latency = Distribution::constant_of(0ms);
  Services services;
  services.store.capacity = capacity;
  services.replication.members = members;
  if (members > 1) services.store.expiry_scan_interval = 500ms;  // as the loader sets (etcd's)
  Measured measured;
  Kernel kernel(electsim::servers::with_services(std::move(world), services),
                [&](NodeId) { return std::make_unique<PoissonClient>(load, &measured); });
  kernel.run();
  REQUIRE(measured.answered == load.requests);
  return measured;
}

double mean(const std::vector<double>& xs) {
  double sum = 0;
  for (const double x : xs) sum += x;
  return sum / static_cast<double>(xs.size());
}

constexpr std::size_t kRequests = 200'000;

}  // namespace

TEST_CASE("capacity: M/M/1 at 50% and 80% load keeps a request 1 / (mu - lambda) on average") {
  // Service 1 ms (mu = 1000/s); arrivals every 2 ms or 1.25 ms (lambda = 500/s or 800/s).
  const auto [gap, expected_s, tolerance] = GENERATE(table<Duration, double, double>({
      {2ms, 1.0 / (1000 - 500), 0.03},
      {1250us, 1.0 / (1000 - 800), 0.08},  // heavier load, longer busy periods, noisier mean
  }));
  CapacityConfig capacity;
  capacity.service_time = exponential(1ms);
  const Measured m = run(capacity, {gap, StoreOp::get, kRequests});
  CHECK(m.refused == 0);  // reads are never refused
  CHECK(mean(m.sojourn_s) == Approx(expected_s).epsilon(tolerance));
}

TEST_CASE("capacity: M/D/1 at 80% load waits rho / (2 mu (1 - rho)) before its 1 ms of service") {
  CapacityConfig capacity;
  capacity.service_time = Distribution::constant_of(1ms);
  const Measured m = run(capacity, {1250us, StoreOp::get, kRequests});
  const double rho = 0.8;
  const double mu = 1000;
  CHECK(mean(m.sojourn_s) == Approx(rho / (2 * mu * (1 - rho)) + 1 / mu).epsilon(0.06));
}

TEST_CASE("capacity: two servers at once are an M/M/2 queue (Erlang's C formula)") {
  CapacityConfig capacity;
  capacity.service_time = exponential(1ms);
  capacity.concurrency = 2;
  const Measured m = run(capacity, {625us, StoreOp::get, kRequests});  // lambda 1600/s
  // Offered load a = lambda / mu = 1.6 on c = 2 servers: the chance to wait is C(2, a), and the
  // mean wait C / (c mu - lambda).
  const double a = 1.6;
  const double tail = a * a / 2 * 2 / (2 - a);
  const double wait_chance = tail / (1 + a + tail);
  const double expected = wait_chance / (2 * 1000.0 - 1600) + 1 / 1000.0;
  CHECK(mean(m.sojourn_s) == Approx(expected).epsilon(0.08));
}

TEST_CASE("capacity: with room for K requests, writes are refused as often as M/M/1/K says") {
  // One in service and four waiting: K = 5. At rho = 0.8 an arrival finds the store full with
  // probability (1 - rho) rho^K / (1 - rho^(K + 1)).
  CapacityConfig capacity;
  capacity.service_time = exponential(1ms);
  capacity.queue_limit = 4;
  const Measured m = run(capacity, {1250us, StoreOp::put, kRequests});
  const double rho = 0.8;
  const double blocked = (1 - rho) * std::pow(rho, 5) / (1 - std::pow(rho, 6));
  CHECK(static_cast<double>(m.refused) / static_cast<double>(m.answered) ==
        Approx(blocked).epsilon(0.06));
  // Every write that got in was served: the rest of the answers succeeded.
  CHECK(m.sojourn_s.size() + m.refused == m.answered);
}

TEST_CASE("capacity: a full queue refuses writes only, and reads wait however long") {
  CapacityConfig capacity;
  capacity.service_time = Distribution::constant_of(10ms);
  capacity.queue_limit = 0;  // nothing may wait: a write that finds the server busy is refused
  // Arrivals far faster than service: most requests find the server busy.
  const Measured writes = run(capacity, {1ms, StoreOp::put, 1000});
  CHECK(writes.refused > 800);
  CHECK(writes.refused < 1000);
  const Measured reads = run(capacity, {1ms, StoreOp::get, 1000});
  CHECK(reads.refused == 0);
  // 1000 reads 10 ms each, one at a time: the last is answered about 10 s after the first came.
  CHECK(reads.sojourn_s.back() > 8.0);
  // What etcd proposes through Raft is what its backlog check refuses; keepalives go to the
  // leader's lessor and watches to the watch stream.
  for (const StoreOp op :
       {StoreOp::put, StoreOp::del, StoreOp::txn, StoreOp::lease_grant, StoreOp::lease_revoke}) {
    CHECK(electsim::servers::proposes(op));
  }
  for (const StoreOp op :
       {StoreOp::get, StoreOp::lease_keepalive, StoreOp::watch, StoreOp::unwatch}) {
    CHECK_FALSE(electsim::servers::proposes(op));
  }
}

TEST_CASE("capacity: a replicated store's member refuses a write with the request's own id") {
  // The client REQUIREs that every answer names a request it sent, and run() that every request
  // is answered: a refusal built from a request the queue had taken would name none.
  CapacityConfig capacity;
  capacity.service_time = Distribution::constant_of(10ms);
  capacity.queue_limit = 0;
  const Measured writes = run(capacity, {1ms, StoreOp::put, 1000, 5s}, 1, 3);
  CHECK(writes.refused > 800);
  CHECK(writes.refused < 1000);
  CHECK(writes.sojourn_s.size() + writes.refused == writes.answered);
}

TEST_CASE("capacity: unlimited by default, a request answered the moment it arrives") {
  const Measured m = run(CapacityConfig{}, {1ms, StoreOp::put, 1000});
  CHECK(m.refused == 0);
  for (const double s : m.sojourn_s) REQUIRE(s == 0.0);
}

TEST_CASE("capacity: the same seed gives the same answers at the same times, another seed not") {
  CapacityConfig capacity;
  capacity.service_time = exponential(1ms);
  capacity.queue_limit = 4;
  const Load load{1250us, StoreOp::put, 5000};
  const Measured a = run(capacity, load, 7);
  const Measured b = run(capacity, load, 7);
  const Measured c = run(capacity, load, 8);
  CHECK(a.sojourn_s == b.sojourn_s);
  CHECK(a.refused == b.refused);
  CHECK(a.sojourn_s != c.sojourn_s);
}
