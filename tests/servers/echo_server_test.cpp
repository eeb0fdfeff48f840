// docs/architecture.md's worked example: a new kind of server (tests/servers/echo) added to the
// world through the server registry, without touching the kernel. The echo server answers every
// peer message with the same message; a node pings it.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "servers/registry.hpp"
#include "servers/world.hpp"
#include "sim/kernel.hpp"
#include "sim/topology.hpp"
#include "tests/servers/echo/echo.hpp"

namespace {

using namespace electsim::sim;
using namespace std::chrono_literals;

using electsim::testing::EchoServer;

// The world's servers with `echoes` echo servers: the store, the sink, then the echoes at the
// first addresses no built-in server keeps.
WorldConfig echo_world(std::size_t echoes, std::size_t copies = 1) {
  WorldConfig world;
  world.node_count = 1;
  electsim::servers::Services services;
  services.more.emplace_back("echo", echoes);
  if (copies != 1) services.settings["echo"] = electsim::testing::EchoConfig{copies};
  electsim::servers::add_services(world, services);
  return world;
}

// A client: pings the echo server every 100 ms of its clock and notes when each echo came back.
struct Pinger final : Protocol {
  std::vector<LocalTime>* echoes;
  Endpoint kEcho;
  Pinger(std::vector<LocalTime>* out, Endpoint echo) : echoes(out), kEcho(echo) {}
  void on_start(Context& ctx) override { ctx.set_timer(100ms, 0); }
  void on_timer(Context& ctx, TimerId, TimerTag) override {
    ctx.send(kEcho, Message{7, {}});
    ctx.set_timer(100ms, 0);
  }
  void on_message(Context& ctx, NodeId from, const Message& m) override {
    if (from == kEcho && m.type == 7) echoes->push_back(ctx.now());
  }
  void on_store_reply(Context&, const StoreReply&) override {}
  void on_watch(Context&, const WatchEvent&) override {}
  void on_sink_reply(Context&, const SinkReply&) override {}
  void on_command(Context&, Command) override {}
};

// The echo server the first world gets: the first free address.
const Endpoint kEcho = server_endpoint(kFirstFreeServerSlot);

struct EchoWorld {
  std::vector<LocalTime> echoes;
  std::unique_ptr<Kernel> kernel;
  explicit EchoWorld(std::vector<FaultSpec> faults = {}, std::size_t copies = 1) {
    WorldConfig world = echo_world(1, copies);
    world.duration = 1s;
    world.network.latency = Distribution::constant_of(5ms);
    world.faults = std::move(faults);
    kernel = std::make_unique<Kernel>(
        std::move(world), [this](NodeId) { return std::make_unique<Pinger>(&echoes, kEcho); });
    kernel->run();
  }
};

FaultSpec on_echo(Duration at, FaultKind kind, Duration d) {
  FaultSpec f;
  f.at = Time(at);
  f.kind = kind;
  f.target = {TargetKind::node, kEcho, {}};  // a server is targeted by its address
  f.duration = d;
  return f;
}

TEST_CASE("echo server: the registry gives a new kind addresses past the built-in ones, no cap") {
  const WorldConfig world = echo_world(40);
  const Topology topology = topology_of(world);
  REQUIRE(topology.group_size("echo") == 40);
  // The built-in servers keep their addresses; the echoes take the free ones, in order.
  CHECK(*topology.find("store") == kStoreEndpoint);
  CHECK(*topology.find("sink") == kSinkEndpoint);
  for (std::size_t k = 0; k < 40; ++k) {
    const auto echo = topology.find("echo:" + std::to_string(k));
    REQUIRE(echo);
    CHECK(*echo == server_endpoint(kFirstFreeServerSlot + k));
    CHECK(topology.kind_of(*echo) == "echo");
    CHECK(topology.index_in_group(*echo) == static_cast<std::int32_t>(k));
    CHECK(topology.server(*echo)->traits.lane == ServerLane::process);
    CHECK_FALSE(topology.is_coordinator(*echo));
  }
  // Its kind's faults act on it; the others do not.
  const Target echo{TargetKind::node, *topology.find("echo:3"), {}};
  CHECK(obeys(FaultKind::crash, echo, topology));
  CHECK(obeys(FaultKind::clock_step, echo, topology));
  CHECK_FALSE(obeys(FaultKind::step_down, echo, topology));
  CHECK_FALSE(obeys(FaultKind::disk_stall, echo, topology));
  CHECK(electsim::servers::server_noun(topology, echo.node) == "an echo server");
  // Forty echo servers run: every one answers.
  WorldConfig run = world;
  run.duration = 1s;
  run.network.latency = Distribution::constant_of(5ms);
  std::vector<LocalTime> echoes;
  Kernel kernel(std::move(run), [&](NodeId) {
    return std::make_unique<Pinger>(&echoes, *topology.find("echo:39"));
  });
  kernel.run();
  CHECK(echoes.size() == 9);
}

TEST_CASE("echo server: a server added in a test answers over the simulated network") {
  EchoWorld w;
  REQUIRE(w.echoes.size() == 9);  // pings at 100..900 ms; the 1000 ms ping is still on its way
  for (std::size_t i = 0; i < w.echoes.size(); ++i) {
    CHECK(w.echoes[i] == LocalTime(Duration(100ms) * static_cast<int>(i + 1) + 10ms));
  }
}

TEST_CASE("echo server: a pause of the server holds its answers, as a node's pause would") {
  EchoWorld w({on_echo(250ms, FaultKind::pause, 300ms)});
  // The pings of 300, 400 and 500 ms wait for the resume at 550 ms and are answered together.
  REQUIRE(w.echoes.size() == 9);
  CHECK(w.echoes[1] == LocalTime(Duration(210ms)));
  for (int i : {2, 3, 4}) CHECK(w.echoes[i] == LocalTime(Duration(555ms)));
  CHECK(w.echoes[5] == LocalTime(Duration(610ms)));
}

TEST_CASE("echo server: isolating the server cuts it off like any node") {
  EchoWorld w({on_echo(250ms, FaultKind::isolate, 300ms)});
  // Pings sent at 300, 400 and 500 ms are dropped at the cut; the link heals at 550 ms.
  REQUIRE(w.echoes.size() == 6);
  CHECK(w.echoes[2] == LocalTime(Duration(610ms)));
}

}  // namespace

TEST_CASE("echo server: its kind's settings reach every server it adds") {
  const EchoWorld once;
  const EchoWorld thrice({}, 3);
  REQUIRE_FALSE(once.echoes.empty());
  CHECK(thrice.echoes.size() == 3 * once.echoes.size());
}

namespace {

// A client that speaks the echo server's own request type through Context::request and collects
// the answers that come back to on_reply.
struct Caller final : Protocol {
  std::vector<electsim::testing::EchoReply>* replies;
  std::int64_t next = 0;
  explicit Caller(std::vector<electsim::testing::EchoReply>* out) : replies(out) {}
  void on_start(Context& ctx) override { ctx.set_timer(100ms, 0); }
  void on_timer(Context& ctx, TimerId, TimerTag) override {
    ctx.request(kEcho, Payload(electsim::testing::EchoRequest{++next, "ping"}));
    ctx.set_timer(100ms, 0);
  }
  void on_message(Context&, NodeId, const Message&) override {}
  void on_reply(Context&, Endpoint from, const Payload& payload) override {
    if (from != kEcho) return;
    if (const auto* reply = payload.get_if<electsim::testing::EchoReply>()) {
      replies->push_back(*reply);
    }
  }
  void on_store_reply(Context&, const StoreReply&) override {}
  void on_watch(Context&, const WatchEvent&) override {}
  void on_sink_reply(Context&, const SinkReply&) override {}
  void on_command(Context&, Command) override {}
};

}  // namespace

TEST_CASE("echo server: a kind's own payload types travel without an edit outside its files") {
  WorldConfig world = echo_world(1, 2);
  world.duration = 1s;
  world.network.latency = Distribution::constant_of(5ms);
  std::vector<electsim::testing::EchoReply> replies;
  Kernel kernel(std::move(world), [&](NodeId) { return std::make_unique<Caller>(&replies); });
  kernel.run();
  // Requests at 100..900 ms, each answered twice 10 ms later; the 1000 ms one is on its way.
  REQUIRE(replies.size() == 18);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    CHECK(replies[i].number == static_cast<std::int64_t>(i / 2 + 1));
    CHECK(replies[i].copy == i % 2);
    CHECK(replies[i].text == "ping");
  }
}
