// The disk model (sim/kernel.hpp, DiskConfig): a handler that changes durable state sends only
// once its fsync is done, fsyncs take turns, a stall delays them, and a crash loses what was not
// yet on disk.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "servers/world.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim::sim;
using namespace std::chrono_literals;

constexpr TimerTag kWrite = 1;  // write the next value, then tell node 1
constexpr TimerTag kTell = 2;   // tell node 1 without writing

// Node 0 writes `value` (1, 2, ...) when its timers say so and sends it to node 1, which notes when
// each message arrived.
struct Writer final : Protocol {
  struct Log {
    std::vector<std::pair<std::int64_t, Time>> arrivals;  // value, true arrival time
    std::vector<std::int64_t> values_at_start;            // node 0's durable value at each start
  };
  Log* log;
  std::vector<std::pair<Duration, TimerTag>> plan;
  std::function<Time()> now;
  Writer(Log* l, std::vector<std::pair<Duration, TimerTag>> p, std::function<Time()> clock)
      : log(l), plan(std::move(p)), now(std::move(clock)) {}
  void on_start(Context& ctx) override {
    if (ctx.self() != 0) return;
    log->values_at_start.push_back(ctx.durable().get("value"));
    if (log->values_at_start.size() > 1) return;  // the plan runs in the first life only
    for (const auto& [at, tag] : plan) ctx.set_timer(at, tag);
  }
  void on_timer(Context& ctx, TimerId, TimerTag tag) override {
    std::int64_t value = ctx.durable().get("value");
    if (tag == kWrite) ctx.durable().set("value", ++value);
    ctx.send(1, Message{1, {value, 0, 0, 0}});
  }
  void on_message(Context&, NodeId, const Message& m) override {
    log->arrivals.emplace_back(m.field[0], now());
  }
  void on_store_reply(Context&, const StoreReply&) override {}
  void on_watch(Context&, const WatchEvent&) override {}
  void on_sink_reply(Context&, const SinkReply&) override {}
  void on_command(Context&, Command) override {}
};

struct Drops final : Observer {
  int overload = 0;
  void on_event(const Event& e) override {
    if (e.kind == EventKind::msg_drop && e.a == static_cast<std::int64_t>(DropReason::overload))
      ++overload;
  }
};

struct DiskWorld {
  Writer::Log log;
  Drops drops;
  std::unique_ptr<Kernel> kernel;
  DiskWorld(Distribution fsync, std::vector<std::pair<Duration, TimerTag>> plan,
            std::vector<FaultSpec> faults = {}, std::size_t max_in_flight = 1'000'000) {
    WorldConfig world;
    world.limits.max_in_flight = max_in_flight;
    world.node_count = 2;
    world.duration = 2s;
    world.network.latency = Distribution::constant_of(1ms);
    world.disk.fsync = fsync;
    world.faults = std::move(faults);
    kernel = std::make_unique<Kernel>(
        electsim::servers::with_services(std::move(world)), [this, plan](NodeId) {
          return std::make_unique<Writer>(&log, plan, [this] { return kernel->now(); });
        });
    kernel->add_observer(&drops);
    kernel->run();
  }
};

Time at(Duration d) {
  return Time(d);
}

FaultSpec on_node0(Duration when, FaultKind kind, Duration d = Duration(0)) {
  FaultSpec f;
  f.at = Time(when);
  f.kind = kind;
  f.target = {TargetKind::node, 0, {}};
  f.duration = d;
  return f;
}

TEST_CASE("disk: a send after a durable write leaves when the fsync is done, others at once") {
  DiskWorld w(Distribution::constant_of(10ms), {{100ms, kWrite}, {300ms, kTell}});
  REQUIRE(w.log.arrivals.size() == 2);
  CHECK(w.log.arrivals[0] == std::pair<std::int64_t, Time>{1, at(111ms)});  // fsync + latency
  CHECK(w.log.arrivals[1] == std::pair<std::int64_t, Time>{1, at(301ms)});  // nothing written
}

TEST_CASE("disk: a disk that takes no time holds nothing") {
  DiskWorld w(Distribution::constant_of(0ms), {{100ms, kWrite}});
  REQUIRE(w.log.arrivals.size() == 1);
  CHECK(w.log.arrivals[0].second == at(101ms));
}

TEST_CASE("disk: fsyncs take turns, so a second write waits for the first") {
  DiskWorld w(Distribution::constant_of(10ms), {{100ms, kWrite}, {105ms, kWrite}});
  REQUIRE(w.log.arrivals.size() == 2);
  CHECK(w.log.arrivals[0] == std::pair<std::int64_t, Time>{1, at(111ms)});
  CHECK(w.log.arrivals[1] == std::pair<std::int64_t, Time>{2, at(121ms)});  // 110ms + 10ms + 1ms
}

TEST_CASE("disk: a stalled disk finishes no fsync before the stall ends") {
  DiskWorld w(Distribution::constant_of(10ms), {{100ms, kWrite}, {200ms, kTell}},
              {on_node0(50ms, FaultKind::disk_stall, 200ms)});
  REQUIRE(w.log.arrivals.size() == 2);
  // The plain message at 200 ms is not held; the write waits for the stall (250 ms) and its fsync.
  CHECK(w.log.arrivals[0] == std::pair<std::int64_t, Time>{1, at(201ms)});
  CHECK(w.log.arrivals[1] == std::pair<std::int64_t, Time>{1, at(261ms)});
}

TEST_CASE("disk: a crash before the fsync is done loses the write and what waited for it") {
  FaultSpec crash = on_node0(105ms, FaultKind::crash, 100ms);  // restarts at 205 ms
  DiskWorld lost(Distribution::constant_of(10ms), {{100ms, kWrite}}, {crash});
  CHECK(lost.log.arrivals.empty());
  CHECK(lost.log.values_at_start == std::vector<std::int64_t>{0, 0});

  FaultSpec later = on_node0(115ms, FaultKind::crash, 100ms);  // after the fsync
  DiskWorld kept(Distribution::constant_of(10ms), {{100ms, kWrite}}, {later});
  CHECK(kept.log.arrivals.size() == 1);
  CHECK(kept.log.values_at_start == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("disk: a pause holds what waits for the fsync until the process resumes") {
  DiskWorld w(Distribution::constant_of(10ms), {{100ms, kWrite}},
              {on_node0(105ms, FaultKind::pause, 100ms)});
  REQUIRE(w.log.arrivals.size() == 1);
  CHECK(w.log.arrivals[0].second == at(206ms));  // resumed at 205 ms
}

TEST_CASE("disk: what waits for a disk that never finishes counts against the in-flight limit") {
  std::vector<std::pair<Duration, TimerTag>> plan;
  for (int i = 1; i <= 10; ++i) plan.emplace_back(Duration(100ms) * i, kWrite);
  DiskWorld w(Distribution::constant_of(std::chrono::hours(87600)), plan, {}, 3);
  CHECK(w.log.arrivals.empty());
  CHECK(w.drops.overload == 7);  // three held, the rest dropped as overload, none lost silently
}

}  // namespace
