// docs/architecture.md's worked example: a new kind of server added to the world without touching
// the kernel. The echo server answers every peer message with the same message; a node pings it.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "servers/world.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim::sim;
using namespace std::chrono_literals;

constexpr Endpoint kEcho = server_endpoint(2);  // the store and the sink take 0 and 1

// The server: a process that sends back whatever reaches it.
class EchoServer final : public Process {
 public:
  void on_start(ProcessContext&) override {}
  void on_message(ProcessContext& ctx, Endpoint from, const Message& m) override {
    ctx.send(from, m);
  }
  void on_payload(ProcessContext&, Endpoint, std::uint32_t, Payload&&) override {}
  void on_timer(ProcessContext&, TimerId, TimerTag) override {}
};

// A client: pings the echo server every 100 ms of its clock and notes when each echo came back.
struct Pinger final : Protocol {
  std::vector<LocalTime>* echoes;
  explicit Pinger(std::vector<LocalTime>* out) : echoes(out) {}
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

struct EchoWorld {
  std::vector<LocalTime> echoes;
  std::unique_ptr<Kernel> kernel;
  explicit EchoWorld(std::vector<FaultSpec> faults = {}) {
    WorldConfig world;
    world.node_count = 1;
    world.duration = 1s;
    world.network.latency = Distribution::constant_of(5ms);
    world.faults = std::move(faults);
    world.servers.push_back(
        ServerSpec{kEcho, "echo", "echo", "", {}, [] { return std::make_unique<EchoServer>(); }});
    kernel = std::make_unique<Kernel>(electsim::servers::with_services(std::move(world)),
                                      [this](NodeId) { return std::make_unique<Pinger>(&echoes); });
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
