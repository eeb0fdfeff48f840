// Tests of the leader's write workload (protocols/workload.hpp) against the fake context: the tick
// cadence, the work window between check and write, the protocol's veto and what stop() leaves
// running.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "protocols/workload.hpp"
#include "tests/protocols/fake_context.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::protocols::WorkloadConfig;
using electsim::protocols::Writer;
using electsim::sim::Distribution;
using electsim::sim::Duration;
using electsim::sim::LocalTime;
using electsim::sim::Token;
using electsim::testing::FakeContext;

// A protocol that only hosts a Writer, so the fake context can fire its timers.
class WriterHost final : public electsim::sim::Protocol {
 public:
  explicit WriterHost(WorkloadConfig config) : writer(config) {}
  void on_start(electsim::sim::Context&) override {}
  void on_message(electsim::sim::Context&, electsim::sim::NodeId,
                  const electsim::sim::Message&) override {}
  void on_timer(electsim::sim::Context& ctx, electsim::sim::TimerId id,
                electsim::sim::TimerTag tag) override {
    const bool mine = writer.on_timer(ctx, id, tag, [this](Token t) {
      asked.push_back(t);
      return allow(t);
    });
    REQUIRE(mine);
  }
  void on_store_reply(electsim::sim::Context&, const electsim::sim::StoreReply&) override {}
  void on_watch(electsim::sim::Context&, const electsim::sim::WatchEvent&) override {}
  void on_sink_reply(electsim::sim::Context&, const electsim::sim::SinkReply&) override {}
  void on_command(electsim::sim::Context&, electsim::sim::Command) override {}

  Writer writer;
  std::function<bool(Token)> allow = [](Token) { return true; };
  std::vector<Token> asked;
};

WorkloadConfig config_of(Duration interval, Distribution work) {
  WorkloadConfig c;
  c.enabled = true;
  c.interval = interval;
  c.work = work;
  return c;
}

}  // namespace

TEST_CASE("writer: with no work time a leader writes once per interval with its token") {
  const Duration interval = GENERATE(Duration(100ms), Duration(250ms), Duration(1s));
  FakeContext ctx;
  WriterHost host(config_of(interval, Distribution::constant_of(0ms)));
  host.writer.start(ctx, 7);
  ctx.run_for(host, 5s);

  const auto expected_writes = static_cast<std::size_t>(Duration(5s) / interval);
  REQUIRE(ctx.sink_calls.size() == expected_writes);
  for (std::size_t i = 0; i < ctx.sink_calls.size(); ++i) {
    INFO("write " << i);
    CHECK(ctx.sink_calls[i].at == LocalTime(interval * static_cast<std::int64_t>(i + 1)));
    CHECK(ctx.sink_calls[i].token == 7);
    CHECK(ctx.sink_calls[i].payload == static_cast<std::int64_t>(i + 1));
  }
  CHECK(host.writer.writes_sent() == static_cast<std::int64_t>(expected_writes));
}

TEST_CASE("writer: each write is committed one sampled work time after its tick") {
  const Distribution work = Distribution::uniform_of(1ms, 80ms);
  FakeContext ctx(2, 3, /*seed=*/42);
  WriterHost host(config_of(100ms, work));
  host.writer.start(ctx, 3);
  ctx.run_for(host, 2s + 90ms);  // every work window that starts also ends

  // The same stream, drawn in the same order (work at the tick, the send delay at the commit),
  // gives the times the writer used.
  electsim::sim::Rng replay(42, electsim::sim::StreamPurpose::workload, 2);
  const Distribution send_delay = WorkloadConfig::default_send_delay();
  REQUIRE(ctx.sink_calls.size() == 20);
  for (std::size_t i = 0; i < ctx.sink_calls.size(); ++i) {
    INFO("write " << i);
    const LocalTime tick(Duration(100ms) * static_cast<std::int64_t>(i + 1));
    CHECK(ctx.sink_calls[i].at == tick + work.sample(replay));
    CHECK(ctx.sink_calls[i].send_delay == send_delay.sample(replay));
    CHECK(ctx.sink_calls[i].token == 3);
  }
}

TEST_CASE("writer: every write gets a send delay from the configured distribution") {
  WorkloadConfig config = config_of(100ms, Distribution::constant_of(0ms));
  SECTION("the default is small and never zero") {
    FakeContext ctx;
    WriterHost host(config);
    host.writer.start(ctx, 1);
    ctx.run_for(host, 10s);
    REQUIRE(ctx.sink_calls.size() == 100);
    for (const auto& call : ctx.sink_calls) {
      CHECK(call.send_delay >= Duration(100us));
      CHECK(call.send_delay <= Duration(1ms));
    }
  }
  SECTION("a constant is used as given, zero included") {
    const Duration d = GENERATE(Duration(0), Duration(3ms));
    config.send_delay = Distribution::constant_of(d);
    FakeContext ctx;
    WriterHost host(config);
    host.writer.start(ctx, 1);
    ctx.run_for(host, 1s);
    REQUIRE(ctx.sink_calls.size() == 10);
    for (const auto& call : ctx.sink_calls) CHECK(call.send_delay == d);
  }
}

TEST_CASE("writer: may_write is asked with the token checked at the tick and can veto the write") {
  FakeContext ctx;
  WriterHost host(config_of(100ms, Distribution::constant_of(30ms)));
  host.allow = [](Token t) { return t != 5; };
  host.writer.start(ctx, 5);
  ctx.run_for(host, 250ms);   // ticks at 100 and 200, work ends at 130 and 230
  host.writer.start(ctx, 6);  // a new tenure: the next tick comes one interval from now
  ctx.run_for(host, 430ms);   // ticks at 350, 450, 550, 650; work ends 30ms after each

  CHECK(host.asked == std::vector<Token>{5, 5, 6, 6, 6, 6});
  REQUIRE(ctx.sink_calls.size() == 4);
  for (const auto& w : ctx.sink_calls) CHECK(w.token == 6);
  CHECK(ctx.sink_calls.front().at == LocalTime(Duration(380ms)));
  // Vetoed writes use no payload: the sink sees 1, 2, 3, 4.
  CHECK(ctx.sink_calls.back().payload == 4);
}

TEST_CASE("writer: stop ends the ticks but a write in its work window still completes") {
  const bool allowed = GENERATE(true, false);
  FakeContext ctx;
  WriterHost host(config_of(100ms, Distribution::constant_of(50ms)));
  host.writer.start(ctx, 9);
  ctx.run_for(host, 120ms);  // the tick at 100ms started a work window ending at 150ms
  host.allow = [allowed](Token) { return allowed; };
  host.writer.stop(ctx);
  CHECK_FALSE(host.writer.active());
  ctx.run_for(host, 2s);

  CHECK(host.asked == std::vector<Token>{9});
  if (allowed) {
    REQUIRE(ctx.sink_calls.size() == 1);
    CHECK(ctx.sink_calls[0].at == LocalTime(Duration(150ms)));
    CHECK(ctx.sink_calls[0].token == 9);
  } else {
    CHECK(ctx.sink_calls.empty());
  }
  CHECK_FALSE(ctx.next_timer().has_value());
}

TEST_CASE("writer: a disabled workload arms nothing and writes nothing") {
  WorkloadConfig c = config_of(100ms, Distribution::constant_of(0ms));
  c.enabled = false;
  FakeContext ctx;
  WriterHost host(c);
  host.writer.start(ctx, 1);
  CHECK_FALSE(host.writer.active());
  CHECK(ctx.timers.empty());
  ctx.run_for(host, 1s);
  CHECK(ctx.sink_calls.empty());
}

TEST_CASE("writer: with eight writes in their work window a new tick's write is skipped") {
  // Work lasts 1s and ticks come every 100ms: the ticks at 100..800ms fill the eight slots, the
  // ticks at 900ms and 1000ms find none free, the tick at 1100ms reuses the slot freed then.
  FakeContext ctx;
  WriterHost host(config_of(100ms, Distribution::constant_of(1s)));
  host.writer.start(ctx, 4);
  ctx.run_for(host, 2050ms);

  REQUIRE(ctx.sink_calls.size() == 8);
  for (std::size_t i = 0; i < ctx.sink_calls.size(); ++i) {
    INFO("write " << i);
    CHECK(ctx.sink_calls[i].at == LocalTime(Duration(1100ms) + Duration(100ms) * std::int64_t(i)));
  }
  ctx.run_for(host, 1s);
  // The skipped ticks (900ms, 1000ms) never write: the next write is the 1100ms tick's, at 2100ms.
  REQUIRE(ctx.sink_calls.size() > 8);
  CHECK(ctx.sink_calls[8].at == LocalTime(Duration(2100ms)));
}
