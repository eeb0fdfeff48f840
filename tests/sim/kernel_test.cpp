// The kernel over a scriptable probe protocol: queue order, timers, message delivery, pauses,
// crashes and restarts, partitions and the in-flight policy, the store over the network (and
// paused), role-resolved fault targets, commands and determinism.
// Long on purpose: one case per promise of the kernel, all over the probe protocol defined here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "servers/world.hpp"
#include "sim/kernel.hpp"

using namespace electsim::sim;

namespace {

// What the probes saw, shared by all nodes of one world.
struct Log {
  struct Entry {
    Time at;
    NodeId node;
    std::string what;
    std::int64_t value;
  };
  std::vector<Entry> entries;
  std::vector<std::string> lines(NodeId node = kNoNode) const {
    std::vector<std::string> out;
    for (const auto& e : entries) {
      if (node == kNoNode || e.node == node) out.push_back(e.what + ":" + std::to_string(e.value));
    }
    return out;
  }
};

// A protocol whose reactions are set by the test.
struct Script {
  std::function<void(Context&)> start;
  std::function<void(Context&, NodeId, const Message&)> message;
  std::function<void(Context&, TimerTag)> timer;
  std::function<void(Context&, const StoreReply&)> store_reply;
  std::function<void(Context&, const WatchEvent&)> watch;
  std::function<void(Context&, Command)> command;
};

class Probe final : public Protocol {
 public:
  Probe(std::shared_ptr<Log> log, std::shared_ptr<Script> script, std::function<Time()> now)
      : log_(std::move(log)), script_(std::move(script)), now_(std::move(now)) {}
  void on_start(Context& ctx) override {
    record(ctx, "start", ctx.durable().get("starts"));
    ctx.durable().set("starts", ctx.durable().get("starts") + 1);
    if (script_->start) script_->start(ctx);
  }
  void on_message(Context& ctx, NodeId from, const Message& m) override {
    record(ctx, "msg" + std::to_string(m.type) + "<" + std::to_string(from), m.field[0]);
    if (script_->message) script_->message(ctx, from, m);
  }
  void on_timer(Context& ctx, TimerId, TimerTag tag) override {
    record(ctx, "timer", tag);
    if (script_->timer) script_->timer(ctx, tag);
  }
  void on_store_reply(Context& ctx, const StoreReply& r) override {
    record(ctx, std::string("reply_") + store_op_name(r.op), r.revision);
    if (script_->store_reply) script_->store_reply(ctx, r);
  }
  void on_watch(Context& ctx, const WatchEvent& w) override {
    record(ctx, w.kind == WatchEvent::Kind::put ? "watch_put" : "watch_del", w.revision);
    if (script_->watch) script_->watch(ctx, w);
  }
  void on_sink_reply(Context& ctx, const SinkReply& r) override {
    record(ctx, r.accepted ? "sink_ok" : "sink_rejected", r.token);
  }
  void on_command(Context& ctx, Command c) override {
    record(ctx, c == Command::stop ? "stop" : "step_down", 0);
    if (script_->command) script_->command(ctx, c);
  }

 private:
  void record(Context& ctx, std::string what, std::int64_t value) {
    log_->entries.push_back({now_(), ctx.self(), std::move(what), value});
  }
  std::shared_ptr<Log> log_;
  std::shared_ptr<Script> script_;
  std::function<Time()> now_;
};

// Collects every event for assertions.
struct Recorder final : Observer {
  std::vector<Event> events;
  std::vector<std::string> texts;
  void on_event(const Event& e) override {
    events.push_back(e);
    texts.emplace_back(e.text);
  }
  std::size_t count(EventKind kind) const {
    std::size_t n = 0;
    for (const auto& e : events) n += e.kind == kind ? 1 : 0;
    return n;
  }
};

WorldConfig world(std::size_t nodes, Duration latency = 10ms) {
  WorldConfig c;
  c.node_count = nodes;
  c.duration = 60s;
  c.network.latency = Distribution::constant_of(latency);
  return c;
}

struct Fixture {
  std::shared_ptr<Log> log = std::make_shared<Log>();
  std::shared_ptr<Script> script = std::make_shared<Script>();
  std::unique_ptr<Kernel> kernel;
  Recorder recorder;

  explicit Fixture(WorldConfig config) {
    kernel = std::make_unique<Kernel>(
        electsim::servers::with_services(std::move(config)), [this](NodeId) {
          return std::make_unique<Probe>(log, script, [this] { return kernel->now(); });
        });
    kernel->add_observer(&recorder);
  }
  void run_until(Duration t) { kernel->run_until(Time(t)); }
};

Message msg(MessageType type, std::int64_t value = 0) {
  Message m;
  m.type = type;
  m.field[0] = value;
  return m;
}

}  // namespace

TEST_CASE("kernel: timers due at the same time fire in the order they were set") {
  Fixture f(world(1));
  f.script->start = [](Context& ctx) {
    for (TimerTag tag = 1; tag <= 5; ++tag) ctx.set_timer(100ms, tag);
  };
  f.kernel->start();
  f.run_until(1s);
  CHECK(f.log->lines(0) ==
        std::vector<std::string>{"start:0", "timer:1", "timer:2", "timer:3", "timer:4", "timer:5"});
}

TEST_CASE("kernel: a cancelled timer never fires") {
  Fixture f(world(1));
  f.script->start = [](Context& ctx) {
    const TimerId a = ctx.set_timer(100ms, 1);
    ctx.set_timer(200ms, 2);
    ctx.cancel_timer(a);
    ctx.cancel_timer(a);  // twice is harmless
  };
  f.kernel->start();
  f.run_until(1s);
  CHECK(f.log->lines(0) == std::vector<std::string>{"start:0", "timer:2"});
}

TEST_CASE("kernel: a message arrives after exactly the network latency") {
  Fixture f(world(2, 15ms));
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) ctx.send(1, msg(3, 42));
  };
  f.kernel->start();
  f.run_until(1s);
  REQUIRE(f.log->entries.size() == 3);
  CHECK(f.log->entries[2].what == "msg3<0");
  CHECK(f.log->entries[2].value == 42);
  CHECK(f.log->entries[2].at == Time(Duration(15ms)));
}

TEST_CASE("kernel: timers run on the node's drifting clock") {
  WorldConfig c = world(1);
  c.clocks = {ClockConfig{Duration(0), 1'000'000, {}}};  // +1000 ppm: fast clock, early timers
  Fixture f(c);
  f.script->start = [](Context& ctx) { ctx.set_timer(10s, 1); };
  f.kernel->start();
  f.run_until(20s);
  REQUIRE(f.log->entries.size() == 2);
  // 10 s of local time pass in 10 s / 1.001 of true time, rounded up to the nanosecond.
  CHECK(f.log->entries[1].at.ns == 9'990'009'991);
}

TEST_CASE(
    "kernel: a paused node handles timers and messages due during the pause at resume, in order") {
  Fixture f(world(2, 10ms));
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 1) {
      ctx.set_timer(100ms, 7);
    } else {
      ctx.set_timer(150ms, 1);
    }
  };
  f.script->timer = [](Context& ctx, TimerTag tag) {
    if (ctx.self() == 0 && tag == 1) ctx.send(1, msg(9));
  };
  f.kernel->start();
  f.run_until(50ms);
  FaultSpec pause;
  pause.kind = FaultKind::pause;
  pause.target = {TargetKind::node, 1, {}};
  pause.duration = 500ms;
  f.kernel->inject(pause);
  CHECK(f.kernel->node_paused(1));
  f.run_until(1s);
  std::vector<Log::Entry> node1;
  for (const auto& e : f.log->entries) {
    if (e.node == 1) node1.push_back(e);
  }
  REQUIRE(node1.size() == 3);
  CHECK(node1[1].what == "timer");  // due at 100 ms
  CHECK(node1[1].at == Time(Duration(550ms)));
  CHECK(node1[2].what == "msg9<0");  // due at 160 ms
  CHECK(node1[2].at == Time(Duration(550ms)));
  // The clock kept running through the pause.
  CHECK(f.kernel->local_now(1).ns == Duration(1s).count());
}

TEST_CASE("kernel: a crash loses volatile state and timers, a restart keeps durable state") {
  Fixture f(world(1));
  f.script->start = [](Context& ctx) { ctx.set_timer(1s, 5); };
  f.kernel->start();
  f.run_until(100ms);
  FaultSpec crash;
  crash.kind = FaultKind::crash;
  crash.target = {TargetKind::node, 0, {}};
  crash.duration = 2s;  // restarts after 2 s
  f.kernel->inject(crash);
  CHECK_FALSE(f.kernel->node_up(0));
  CHECK(f.kernel->protocol(0) == nullptr);
  f.run_until(2s);
  CHECK(f.log->lines(0) == std::vector<std::string>{"start:0"});  // the timer died with the crash
  f.run_until(4s);
  CHECK(f.kernel->node_up(0));
  // Durable state survived (second start saw starts=1); the new timer fired 1 s after restart.
  CHECK(f.log->lines(0) == std::vector<std::string>{"start:0", "start:1", "timer:5"});
  CHECK(f.log->entries.back().at == Time(Duration(3100ms)));
  CHECK(f.recorder.count(EventKind::crash) == 1);
  CHECK(f.recorder.count(EventKind::restart) == 1);
}

TEST_CASE("kernel: messages to a crashed node are dropped") {
  Fixture f(world(2, 10ms));
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) ctx.set_timer(100ms, 1);
  };
  f.script->timer = [](Context& ctx, TimerTag) { ctx.send(1, msg(1)); };
  f.kernel->start();
  FaultSpec crash;
  crash.kind = FaultKind::crash;
  crash.target = {TargetKind::node, 1, {}};
  f.kernel->inject(crash);
  f.run_until(1s);
  CHECK(f.log->lines(1) == std::vector<std::string>{"start:0"});
  REQUIRE(f.recorder.count(EventKind::msg_drop) == 1);
}

TEST_CASE("kernel: in-flight messages across a new partition: dropped on arrival or delivered") {
  auto [policy, delivered] = GENERATE(table<InFlightPolicy, bool>({
      {InFlightPolicy::drop_if_cut_on_arrival, false},
      {InFlightPolicy::deliver, true},
  }));
  WorldConfig c = world(2, 100ms);
  c.network.in_flight = policy;
  FaultSpec part;
  part.at = Time(Duration(50ms));
  part.kind = FaultKind::partition;
  part.groups = {{0}, {1}};
  c.faults = {part};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) ctx.send(1, msg(1));  // in flight when the partition starts
  };
  f.kernel->start();
  f.run_until(1s);
  CHECK((f.log->lines(1).size() == 2) == delivered);
}

TEST_CASE("kernel: a partition drops messages sent across it until it heals") {
  WorldConfig c = world(3, 5ms);
  FaultSpec part;
  part.at = Time(Duration(0));
  part.kind = FaultKind::partition;
  part.groups = {{0}, {1, 2}};
  part.duration = 1s;
  c.faults = {part};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) {
      ctx.set_timer(500ms, 1);
      ctx.set_timer(1500ms, 2);
    }
  };
  f.script->timer = [](Context& ctx, TimerTag tag) { ctx.broadcast(msg(1, tag)); };
  f.kernel->start();
  f.run_until(3s);
  CHECK(f.log->lines(1) == std::vector<std::string>{"start:0", "msg1<0:2"});
  CHECK(f.log->lines(2) == std::vector<std::string>{"start:0", "msg1<0:2"});
}

TEST_CASE("kernel: the store is reached over the network and answers after a round trip") {
  Fixture f(world(1, 10ms));
  f.script->start = [](Context& ctx) {
    StoreRequest put;
    put.op = StoreOp::put;
    put.key = "k";
    put.value = "0";
    ctx.store(put);
  };
  f.kernel->start();
  f.run_until(1s);
  REQUIRE(f.log->lines(0) == std::vector<std::string>{"start:0", "reply_put:1"});
  CHECK(f.log->entries[1].at == Time(Duration(20ms)));
  CHECK(electsim::servers::store_of(*f.kernel).revision() == 1);
}

TEST_CASE("kernel: a node's store requests and sink writes go where the world's servers are") {
  // The store and the sink moved to addresses no built-in kind has: the nodes follow
  // WorldConfig::node_servers, not an address of their own.
  WorldConfig config = electsim::servers::with_services(world(1, 10ms));
  const Endpoint store = server_endpoint(40);
  const Endpoint sink = server_endpoint(41);
  for (ServerSpec& server : config.servers) {
    if (server.kind == "store") server.endpoint = store;
    if (server.kind == "sink") server.endpoint = sink;
  }
  config.node_servers.store.members = {store};
  config.node_servers.sink = sink;
  auto log = std::make_shared<Log>();
  auto script = std::make_shared<Script>();
  script->start = [](Context& ctx) {
    StoreRequest put;
    put.op = StoreOp::put;
    put.key = "k";
    put.value = "0";
    ctx.store(put);
    ctx.sink_write(7, 1, Duration(0));
  };
  std::unique_ptr<Kernel> kernel;
  kernel = std::make_unique<Kernel>(std::move(config), [&](NodeId) {
    return std::make_unique<Probe>(log, script, [&] { return kernel->now(); });
  });
  kernel->start();
  kernel->run_until(Time(Duration(1s)));
  CHECK(log->lines(0) == std::vector<std::string>{"start:0", "reply_put:1", "sink_ok:7"});
  CHECK(kernel->process(kStoreEndpoint) == nullptr);
  CHECK(electsim::servers::store_of(*kernel).revision() == 1);
  CHECK(electsim::servers::sink_of(*kernel).highest_accepted() == 7);
}

TEST_CASE("kernel: a sink write leaves its writer a send delay after the commit") {
  Fixture f(world(1, 10ms));
  f.script->start = [](Context& ctx) { ctx.sink_write(1, 1, 3ms); };
  f.kernel->start();
  f.run_until(1s);
  REQUIRE(f.log->lines(0) == std::vector<std::string>{"start:0", "sink_ok:1"});
  // 3 ms inside the writer, 10 ms to the sink, 10 ms back.
  CHECK(f.log->entries[1].at == Time(Duration(23ms)));
  REQUIRE(f.recorder.count(EventKind::sink_send) == 1);
  for (const Event& e : f.recorder.events) {
    if (e.kind == EventKind::sink_send) {
      CHECK(e.time == Time(Duration(0)));
      CHECK(e.a == 1);
      CHECK(e.c == Duration(3ms).count());
    }
    if (e.kind == EventKind::sink_write) CHECK(e.time == Time(Duration(13ms)));
  }
}

TEST_CASE("kernel: a pause inside the send delay holds the write until resume") {
  Fixture f(world(2, 10ms));
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) ctx.set_timer(100ms, 1);
  };
  f.script->timer = [](Context& ctx, TimerTag) { ctx.sink_write(1, 1, 1ms); };
  f.kernel->start();
  f.run_until(100ms + 500us);  // committed at 100 ms, still in the writer
  FaultSpec pause;
  pause.kind = FaultKind::pause;
  pause.target = {TargetKind::node, 0, {}};
  pause.duration = 5s;
  f.kernel->inject(pause);
  f.run_until(10s);
  Time arrived;
  for (const Event& e : f.recorder.events) {
    if (e.kind == EventKind::sink_write) arrived = e.time;
  }
  // Resumed at 5.1005 s, sent at once (its delay was due during the pause), 10 ms to the sink.
  CHECK(arrived == Time(Duration(5s + 100ms + 500us + 10ms)));
}

TEST_CASE("kernel: a crash inside the send delay loses the write") {
  Fixture f(world(1, 10ms));
  f.script->start = [](Context& ctx) {
    if (ctx.durable().get("starts") == 1) ctx.sink_write(1, 1, 1ms);
  };
  f.kernel->start();
  FaultSpec crash;
  crash.kind = FaultKind::crash;
  crash.target = {TargetKind::node, 0, {}};
  crash.duration = 1s;
  f.kernel->inject(crash);
  f.run_until(5s);
  CHECK(f.recorder.count(EventKind::sink_send) == 1);
  CHECK(f.recorder.count(EventKind::sink_write) == 0);
}

TEST_CASE("kernel: a paused store answers late, in arrival order") {
  WorldConfig c = world(1, 10ms);
  FaultSpec pause;
  pause.at = Time(Duration(5ms));
  pause.kind = FaultKind::store_pause;
  pause.target = {TargetKind::store, kNoNode, {}};
  pause.duration = 1s;
  c.faults = {pause};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    for (const char* key : {"a", "b"}) {
      StoreRequest put;
      put.op = StoreOp::put;
      put.key = key;
      ctx.store(put);
    }
  };
  f.kernel->start();
  f.run_until(2s);
  REQUIRE(f.log->lines(0) == std::vector<std::string>{"start:0", "reply_put:1", "reply_put:2"});
  CHECK(f.log->entries[1].at == Time(Duration(1015ms)));  // resumed at 1.005 s, + 10 ms back
}

TEST_CASE("kernel: a lease expires on the store's clock, deletes its key and tells watchers") {
  Fixture f(world(2, 10ms));
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) {
      StoreRequest grant;
      grant.op = StoreOp::lease_grant;
      grant.ttl = 1s;
      ctx.store(grant);
    } else {
      StoreRequest watch;
      watch.op = StoreOp::watch;
      watch.key = "leader";
      ctx.store(watch);
    }
  };
  f.script->store_reply = [](Context& ctx, const StoreReply& r) {
    if (r.op == StoreOp::lease_grant) {
      StoreRequest put;
      put.op = StoreOp::put;
      put.key = "leader";
      put.value = "0";
      put.lease = r.lease;
      ctx.store(put);
    }
  };
  f.kernel->start();
  f.run_until(3s);
  // Granted at 10 ms (store time), expires at 1.010 s; the watcher hears 10 ms later.
  CHECK(f.log->lines(1) ==
        std::vector<std::string>{"start:0", "reply_watch:0", "watch_put:1", "watch_del:2"});
  CHECK(f.log->entries.back().at == Time(Duration(1020ms)));
  CHECK_FALSE(electsim::servers::store_of(*f.kernel).peek("leader").has_value());
  CHECK(f.recorder.count(EventKind::lease_expire) == 1);
}

TEST_CASE("kernel: a fault aimed at the leader hits the node that announced leadership") {
  WorldConfig c = world(3);
  FaultSpec crash;
  crash.at = Time(Duration(1s));
  crash.kind = FaultKind::crash;
  crash.target = {TargetKind::leader, kNoNode, {}};
  c.faults = {crash};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    ctx.announce(ctx.self() == 2 ? Belief::leader(4) : Belief::follower(2, 4));
  };
  f.kernel->start();
  f.run_until(2s);
  CHECK(f.kernel->node_up(0));
  CHECK(f.kernel->node_up(1));
  CHECK_FALSE(f.kernel->node_up(2));
}

TEST_CASE("kernel: a role target with nobody to resolve to skips the fault") {
  WorldConfig c = world(2);
  FaultSpec crash;
  crash.at = Time(Duration(1s));
  crash.kind = FaultKind::crash;
  crash.target = {TargetKind::leader, kNoNode, {}};
  c.faults = {crash};
  Fixture f(c);
  f.kernel->start();
  f.run_until(2s);
  CHECK(f.kernel->node_up(0));
  CHECK(f.kernel->node_up(1));
  REQUIRE(f.recorder.count(EventKind::fault) == 1);
  for (const auto& e : f.recorder.events) {
    if (e.kind == EventKind::fault) CHECK(e.c == 1);
  }
}

TEST_CASE("kernel: stop delivers the command, then takes the node down") {
  Fixture f(world(1));
  f.kernel->start();
  FaultSpec stop;
  stop.kind = FaultKind::stop;
  stop.target = {TargetKind::node, 0, {}};
  f.kernel->inject(stop);
  CHECK(f.log->lines(0) == std::vector<std::string>{"start:0", "stop:0"});
  CHECK_FALSE(f.kernel->node_up(0));
}

TEST_CASE("kernel: total loss drops every message, total duplication delivers each twice") {
  auto [loss, duplicate, expected] = GENERATE(table<Ppm, Ppm, std::size_t>({
      {kPpmOne, 0, 0},
      {0, kPpmOne, 2},
      {0, 0, 1},
  }));
  WorldConfig c = world(2);
  c.network.loss = loss;
  c.network.duplicate = duplicate;
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) ctx.send(1, msg(1));
  };
  f.kernel->start();
  f.run_until(1s);
  CHECK(f.log->lines(1).size() == 1 + expected);
}

TEST_CASE("kernel: every message's delivery, drop and duplicate carry the id of its send") {
  WorldConfig c = world(3);
  c.network.latency = Distribution::uniform_of(1ms, 30ms);  // reordered on the way
  c.network.loss = kPpmOne / 5;
  c.network.duplicate = kPpmOne / 5;
  FaultSpec crash;  // drops on arrival too
  crash.kind = FaultKind::crash;
  crash.at = Time(5ms);
  crash.target = {TargetKind::node, 2, {}};
  crash.duration = 200ms;
  c.faults.push_back(crash);
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    for (int i = 0; i < 40; ++i) {
      for (NodeId to = 0; to < 3; ++to) {
        if (to != ctx.self()) ctx.send(to, msg(static_cast<MessageType>(i % 3), i));
      }
    }
  };
  f.kernel->start();
  f.run_until(2s);
  struct Sent {
    Endpoint from, to;
    std::uint16_t type;
    Time at;
  };
  std::vector<Sent> sent;  // index: id - 1
  std::map<std::int64_t, int> arrivals;
  std::size_t reordered = 0;
  std::int64_t last_delivered = 0;
  for (const Event& e : f.recorder.events) {
    if (e.kind == EventKind::msg_send) {
      CHECK(e.b == static_cast<std::int64_t>(sent.size()) + 1);  // ids count the sends from 1
      sent.push_back({e.node, e.peer, e.code, e.time});
    } else if (e.kind == EventKind::msg_deliver || e.kind == EventKind::msg_drop) {
      REQUIRE(e.b >= 1);
      REQUIRE(e.b <= static_cast<std::int64_t>(sent.size()));
      const Sent& s = sent[static_cast<std::size_t>(e.b - 1)];
      const bool deliver = e.kind == EventKind::msg_deliver;
      CHECK(s.from == (deliver ? e.peer : e.node));
      CHECK(s.to == (deliver ? e.node : e.peer));
      CHECK(s.type == e.code);
      CHECK(s.at <= e.time);
      ++arrivals[e.b];
      if (deliver && e.b < last_delivered) ++reordered;
      if (deliver) last_delivered = std::max(last_delivered, e.b);
    }
  }
  CHECK(sent.size() == 320);  // 3 x 80, and node 2 sends its 80 again when it restarts
  CHECK(reordered > 0);       // pairing by channel order would have guessed wrong here
  std::size_t duplicated = 0;
  for (const auto& [id, n] : arrivals) duplicated += n == 2 ? 1 : 0;
  CHECK(duplicated > 0);
}

TEST_CASE("kernel: beliefs are announced once per change") {
  Fixture f(world(1));
  f.script->start = [](Context& ctx) {
    ctx.announce(Belief::candidate(1));
    ctx.announce(Belief::candidate(1));
    ctx.announce(Belief::leader(1));
  };
  f.kernel->start();
  CHECK(f.recorder.count(EventKind::belief) == 2);
  CHECK(f.kernel->belief(0) == Belief::leader(1));
}

TEST_CASE("kernel: the same seed gives the same event stream, another seed differs") {
  auto run = [](std::uint64_t seed) {
    WorldConfig c = world(4);
    c.seed = seed;
    c.network.latency = Distribution::uniform_of(1ms, 50ms);
    c.network.loss = 100'000;
    auto log = std::make_shared<Log>();
    Recorder rec;
    Kernel k(c, [](NodeId) {
      auto script = std::make_shared<Script>();
      script->start = [](Context& ctx) { ctx.set_timer(Duration(ctx.rng().between(1, 1000)), 1); };
      script->timer = [](Context& ctx, TimerTag) {
        ctx.broadcast(msg(1, ctx.self()));
        ctx.set_timer(Duration(ctx.rng().between(1'000'000, 100'000'000)), 1);
      };
      return std::make_unique<Probe>(std::make_shared<Log>(), script, [] { return Time(); });
    });
    k.add_observer(&rec);
    k.run();
    std::vector<std::tuple<std::int64_t, int, int, int>> out;
    for (const auto& e : rec.events) {
      out.emplace_back(e.time.ns, static_cast<int>(e.kind), e.node, e.peer);
    }
    return out;
  };
  const auto a = run(11);
  CHECK(a.size() > 1000);
  CHECK(a == run(11));
  CHECK(a != run(12));
}

TEST_CASE("kernel: a reset timer fires once, at its new time") {
  Fixture f(world(1));
  auto election = std::make_shared<TimerId>(kNoTimer);
  f.script->start = [election](Context& ctx) {
    *election = ctx.set_timer(300ms, 9);
    ctx.set_timer(100ms, 1);
    ctx.set_timer(200ms, 1);
  };
  f.script->timer = [election](Context& ctx, TimerTag tag) {
    if (tag != 1) return;
    ctx.cancel_timer(*election);  // reset: cancel, then arm again 300 ms from now
    *election = ctx.set_timer(300ms, 9);
  };
  f.kernel->start();
  f.run_until(2s);
  std::vector<std::pair<std::string, Time>> fired;
  for (const auto& e : f.log->entries) fired.emplace_back(e.what + std::to_string(e.value), e.at);
  CHECK(fired == std::vector<std::pair<std::string, Time>>{{"start0", Time(0)},
                                                           {"timer1", Time(Duration(100ms))},
                                                           {"timer1", Time(Duration(200ms))},
                                                           {"timer9", Time(Duration(500ms))}});
}

TEST_CASE("kernel: a reset timer keeps the place its setting gave it among equal-time events") {
  // Y is set at 0 for 200 ms; W at 50 ms for 150 ms; at 100 ms Y is reset to Z, also due at
  // 200 ms. W was set before Z, so W fires first, whatever the queue did with Y's old entry.
  Fixture f(world(1));
  auto y = std::make_shared<TimerId>(kNoTimer);
  f.script->start = [y](Context& ctx) {
    *y = ctx.set_timer(200ms, 2);
    ctx.set_timer(50ms, 10);
    ctx.set_timer(100ms, 11);
  };
  f.script->timer = [y](Context& ctx, TimerTag tag) {
    if (tag == 10) ctx.set_timer(150ms, 3);  // W
    if (tag == 11) {
      ctx.cancel_timer(*y);
      ctx.set_timer(100ms, 4);  // Z
    }
  };
  f.kernel->start();
  f.run_until(1s);
  CHECK(f.log->lines(0) ==
        std::vector<std::string>{"start:0", "timer:10", "timer:11", "timer:3", "timer:4"});
  for (const auto& e : f.log->entries) {
    if (e.what == "timer" && (e.value == 3 || e.value == 4)) CHECK(e.at == Time(Duration(200ms)));
  }
}

TEST_CASE(
    "kernel: partition groups naming the leader, a follower and the rest resolve at fault time") {
  WorldConfig c = world(5);
  FaultSpec part;
  part.at = Time(Duration(1s));
  part.kind = FaultKind::partition;
  part.groups = {{kLeaderMember, kFollowerMember}, {kRestMember, kStoreEndpoint}};
  c.faults = {part};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    ctx.announce(ctx.self() == 3 ? Belief::leader(2) : Belief::follower(3, 2));
  };
  f.kernel->start();
  f.run_until(2s);
  std::string groups;
  for (std::size_t i = 0; i < f.recorder.events.size(); ++i) {
    if (f.recorder.events[i].kind == EventKind::fault) groups = f.recorder.texts[i];
  }
  // "a,3|rest,store" with the follower a drawn from the faults stream; the rest are the others.
  REQUIRE(groups.size() > 4);
  const auto bar = groups.find('|');
  REQUIRE(bar != std::string::npos);
  const std::string minority = groups.substr(0, bar);
  CHECK(minority.find('3') != std::string::npos);
  CHECK(minority.size() == 3);  // two node ids
  const NodeId follower = minority[0] == '3' ? minority[2] - '0' : minority[0] - '0';
  CHECK(follower != 3);
  CHECK(groups.substr(bar + 1).find("store") != std::string::npos);
  const Network& net = f.kernel->network();
  CHECK(net.link_up(3, follower));
  CHECK_FALSE(net.link_up(3, kStoreEndpoint));
  for (NodeId n = 0; n < 5; ++n) {
    if (n == 3 || n == follower) continue;
    CHECK_FALSE(net.link_up(3, n));
    CHECK(net.link_up(n, kStoreEndpoint));
  }
}

TEST_CASE("kernel: a partition naming the leader is skipped when there is none") {
  WorldConfig c = world(3);
  FaultSpec part;
  part.at = Time(Duration(1s));
  part.kind = FaultKind::partition;
  part.groups = {{kLeaderMember}, {kRestMember}};
  c.faults = {part};
  Fixture f(c);
  f.kernel->start();
  f.run_until(2s);
  CHECK(f.kernel->network().link_up(0, 1));
  for (const auto& e : f.recorder.events) {
    if (e.kind == EventKind::fault) CHECK(e.c == 1);
  }
}

// ---- Connections (network.clients "tcp", the default) ------------------------------------------

namespace {

// Node 0 puts k = 0, 1, ..., n - 1 to the store at once, one request each.
void put_many(Context& ctx, int n) {
  for (int i = 0; i < n; ++i) {
    StoreRequest put;
    put.op = StoreOp::put;
    put.key = "k";
    put.value = std::to_string(i);
    ctx.store(put);
  }
}

// From `at`, for `duration`: node 0 on one side, the store (and `with_store`) on the other.
FaultSpec store_cut_off(Duration at, Duration duration, std::vector<Endpoint> with_store = {}) {
  FaultSpec part;
  part.at = Time(at);
  part.kind = FaultKind::partition;
  with_store.push_back(kStoreEndpoint);
  part.groups = {{0}, std::move(with_store)};
  part.duration = duration;
  return part;
}

}  // namespace

TEST_CASE("kernel: on a lossy link a client's requests arrive late but each once and in order") {
  auto [transport, all] = GENERATE(table<Transport, bool>({
      {Transport::tcp, true},
      {Transport::datagram, false},
  }));
  WorldConfig c = world(1, 10ms);
  c.network.loss = kPpmOne / 2;
  c.network.duplicate = kPpmOne / 2;
  c.network.clients = transport;
  c.network.latency = Distribution::uniform_of(1ms, 10ms, 1ms);
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) put_many(ctx, 40);
  };
  f.kernel->start();
  f.run_until(30s);
  const electsim::servers::Store& store = electsim::servers::store_of(*f.kernel);
  std::vector<std::int64_t> revisions;
  for (const auto& e : f.log->entries) {
    if (e.what == "reply_put") revisions.push_back(e.value);
  }
  if (all) {
    // Every request once, in the order sent: revision i + 1 wrote value i, the last wrote 39.
    CHECK(store.revision() == 40);
    CHECK(store.peek("k")->value == "39");
    std::vector<std::int64_t> expected;
    for (std::int64_t r = 1; r <= 40; ++r) expected.push_back(r);
    CHECK(revisions == expected);
    CHECK(f.kernel->stats().retransmissions > 0);
  } else {
    // Datagrams: some requests or replies are lost, some doubled.
    CHECK(revisions.size() != 40);
  }
}

TEST_CASE("kernel: a partition holds a client's request, sent again on TCP's doubling timer") {
  // The connection is set up by a first request at 0. Cut from 100ms to 1.1s: a request leaving
  // at 200ms is retransmitted at 400ms, 800ms and 1600ms (RTO 200ms, 400ms, 800ms); the last try
  // gets through: 10ms there, 10ms back.
  WorldConfig c = world(1, 10ms);
  c.faults = {store_cut_off(100ms, 1s)};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    put_many(ctx, 1);
    ctx.set_timer(200ms, 1);
  };
  f.script->timer = [](Context& ctx, TimerTag) { put_many(ctx, 1); };
  f.kernel->start();
  f.run_until(5s);
  REQUIRE(f.log->lines(0) ==
          std::vector<std::string>{"start:0", "reply_put:1", "timer:1", "reply_put:2"});
  CHECK(f.log->entries[3].at == Time(Duration(1620ms)));
  CHECK(f.kernel->stats().retransmissions == 3);
}

TEST_CASE("kernel: a new connection's first segment is sent again on the SYN timer") {
  // Cut from 0 to 1.5s: the connection's opening try at 0 is repeated at 1s and 3s
  // (TCP_TIMEOUT_INIT 1s, doubling).
  WorldConfig c = world(1, 10ms);
  c.faults = {store_cut_off(0ms, 1500ms)};
  Fixture f(c);
  f.script->start = [](Context& ctx) { put_many(ctx, 1); };
  f.kernel->start();
  f.run_until(5s);
  REQUIRE(f.log->lines(0) == std::vector<std::string>{"start:0", "reply_put:1"});
  CHECK(f.log->entries[1].at == Time(Duration(3020ms)));
}

TEST_CASE("kernel: a connection whose retransmissions all fail breaks after tcp_retries2") {
  // RTO 100ms doubling to at most 400ms, 3 retransmissions: 100 + 200 + 400 + 400 = 1100ms after
  // the request of 200ms left, node 0's TCP gives up. After the heal a new connection carries new
  // requests.
  WorldConfig c = world(1, 10ms);
  c.network.tcp.rto_min = 100ms;
  c.network.tcp.rto_max = 400ms;
  c.network.tcp.retries2 = 3;
  CHECK(c.network.tcp.budget() == 1100ms);
  c.faults = {store_cut_off(100ms, 2s)};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    put_many(ctx, 1);
    ctx.set_timer(200ms, 1);
    ctx.set_timer(3s, 2);
  };
  f.script->timer = [](Context& ctx, TimerTag) { put_many(ctx, 1); };
  f.kernel->start();
  f.run_until(5s);
  std::vector<Time> breaks;
  for (const Event& e : f.recorder.events) {
    if (e.kind == EventKind::conn_break) {
      CHECK(e.node == 0);
      CHECK(e.peer == kStoreEndpoint);
      breaks.push_back(e.time);
    }
  }
  CHECK(breaks == std::vector<Time>{Time(Duration(1300ms))});
  CHECK(f.kernel->stats().connections_broken == 1);
  // The request of 200ms died with its connection: the store client fails it when it learns
  // (clientv3's Unavailable), and reconnects; the request of 3s is answered at 3.02s.
  REQUIRE(f.log->lines(0) == std::vector<std::string>{"start:0", "reply_put:1", "timer:1",
                                                      "reply_put:0", "timer:2", "reply_put:2"});
  CHECK(f.log->entries[3].at == Time(Duration(1300ms)));
  CHECK(f.log->entries[5].at == Time(Duration(3020ms)));
}

TEST_CASE("kernel: peers exchange datagrams unless the scenario asks for connections") {
  auto [transport, expected] = GENERATE(table<Transport, std::size_t>({
      {Transport::datagram, 0},
      {Transport::tcp, 20},
  }));
  WorldConfig c = world(2);
  c.network.peers = transport;
  c.network.loss = kPpmOne / 2;
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) {
      for (int i = 0; i < 20; ++i) ctx.send(1, msg(1, i));
    }
  };
  f.kernel->start();
  f.run_until(30s);
  std::vector<std::string> got = f.log->lines(1);
  got.erase(got.begin());  // start
  if (expected == 0) {
    CHECK(got.size() < 20);
  } else {
    std::vector<std::string> in_order;
    for (int i = 0; i < 20; ++i) in_order.push_back("msg1<0:" + std::to_string(i));
    CHECK(got == in_order);
  }
}

TEST_CASE("kernel: after a broken connection the store client reconnects and resumes its watch") {
  // Node 0 watches k, then is cut off from the store from 100ms to 3.1s; node 1 puts k at 500ms.
  // Node 0's own put of 200ms runs out of retransmissions at 1.3s: its store client fails it,
  // reconnects, and asks for k's watch again from the revision after the last it saw. That
  // request opens a new connection, whose SYN timer (1s) is capped by rto_max here: tries at 1.3s,
  // 1.7s, ..., 3.3s, the first past the heal; it gets the put it missed from the store's history.
  WorldConfig c = world(2, 10ms);
  c.network.tcp.rto_min = 100ms;
  c.network.tcp.rto_max = 400ms;
  c.network.tcp.retries2 = 3;
  c.faults = {store_cut_off(100ms, 3s, {1})};
  Fixture f(c);
  f.script->start = [](Context& ctx) {
    if (ctx.self() == 0) {
      StoreRequest watch;
      watch.op = StoreOp::watch;
      watch.key = "k";
      ctx.store(watch);
      ctx.set_timer(200ms, 1);
    } else {
      ctx.set_timer(500ms, 1);
    }
  };
  f.script->timer = [](Context& ctx, TimerTag) {
    StoreRequest put;
    put.op = StoreOp::put;
    put.key = ctx.self() == 0 ? "x" : "k";
    put.value = "1";
    ctx.store(put);
  };
  f.kernel->start();
  f.run_until(10s);
  REQUIRE(f.log->lines(0) == std::vector<std::string>{"start:0", "reply_watch:0", "timer:1",
                                                      "reply_put:0", "watch_put:1"});
  std::vector<Time> at;
  for (const auto& e : f.log->entries) {
    if (e.node == 0) at.push_back(e.at);
  }
  CHECK(at[3] == Time(Duration(1300ms)));
  CHECK(at[4] == Time(Duration(3320ms)));
}
