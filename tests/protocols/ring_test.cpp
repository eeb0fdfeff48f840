// Tests of ring election (protocols/ring/, Chang and Roberts 1979): one node against the fake
// context for each rule of the paper and of the failure handling around it (Acks that skip a
// silent successor, the failure timeout, durable election numbers, sink rejections, commands),
// the parameter table with its checks, then whole clusters on the real kernel: which nodes are
// crashed or partitioned -> who leads with which epoch, and the paper's message counts.
// Long on purpose: one case per rule of the paper and of the failure handling, on one harness.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/registry.hpp"
#include "protocols/ring/config.hpp"
#include "protocols/ring/messages.hpp"
#include "protocols/ring/ring.hpp"
#include "sim/kernel.hpp"
#include "tests/protocols/cluster.hpp"
#include "tests/protocols/fake_context.hpp"
#include "tests/protocols/kit.hpp"
#include "tests/protocols/printers.hpp"

namespace ring = electsim::protocols::ring;

namespace {

std::string describe(const ring::RingMessage& message) {
  struct Describe {
    std::string operator()(const ring::Election& m) const {
      return "Election{" + std::to_string(m.candidate) + ", number " +
             std::to_string(m.election_number) + "}";
    }
    std::string operator()(const ring::Elected& m) const {
      return "Elected{" + std::to_string(m.leader) + ", number " +
             std::to_string(m.election_number) + "}";
    }
    std::string operator()(const ring::Ack& m) const {
      return "Ack{" + std::to_string(m.sequence) + "}";
    }
    std::string operator()(const ring::Heartbeat& m) const {
      return "Heartbeat{" + std::to_string(m.leader) + ", number " +
             std::to_string(m.election_number) + "}";
    }
  };
  return std::visit(Describe{}, message);
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<ring::RingMessage> {
  static std::string convert(const ring::RingMessage& m) { return describe(m); }
};
template <>
struct StringMaker<std::pair<electsim::sim::NodeId, ring::RingMessage>> {
  static std::string convert(const std::pair<electsim::sim::NodeId, ring::RingMessage>& p) {
    return "to " + std::to_string(p.first) + ": " + describe(p.second);
  }
};
}  // namespace Catch

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::ClusterInfo;
using electsim::sim::Belief;
using electsim::sim::Duration;
using electsim::sim::kNoNode;
using electsim::sim::LocalTime;
using electsim::sim::NodeId;
using electsim::sim::Role;
using electsim::testing::Cluster;
using electsim::testing::ClusterSetup;
using electsim::testing::crash_at;
using electsim::testing::FakeContext;
using electsim::testing::NodeBench;
using electsim::testing::nodes_of;
using electsim::testing::partition_at;
using electsim::testing::valid_config;
using json = nlohmann::json;
using ring::Ack;
using ring::Elected;
using ring::Election;
using ring::Heartbeat;
using ring::RingConfig;
using ring::RingMessage;
using ring::RingNode;
namespace sim = electsim::sim;

constexpr auto kAck = RingNode::kAckTag;
constexpr auto kHeartbeat = RingNode::kHeartbeatTag;
constexpr auto kFailure = RingNode::kFailureTag;

RingConfig config_of(const json& params = json::object(), std::size_t nodes = 5,
                     bool workload = false) {
  return valid_config([&](Problems& p) { return ring::read_config(params, "/protocol", nodes, p); },
                      workload);
}

using Sent = std::pair<NodeId, RingMessage>;

// Messages compared without their sequence numbers, which only pair an Ack with its message.
RingMessage unsequenced(RingMessage m) {
  if (auto* e = std::get_if<Election>(&m)) e->sequence = 0;
  if (auto* e = std::get_if<Elected>(&m)) e->sequence = 0;
  return m;
}

// One ring node on a fake context; the test plays every other node by hand. Node 2 of five in
// ascending order unless told otherwise: its predecessor is 1, its successor 3.
struct Bench : NodeBench<RingNode, RingConfig, ring::decode> {
  explicit Bench(const RingConfig& c, NodeId self = 2, std::size_t nodes = 5)
      : NodeBench(c, self, nodes) {}

  // As take_sent, without sequence numbers and without Heartbeats (failure detection, tested
  // on its own), so that a test states the election traffic alone.
  std::vector<Sent> take_ring() {
    std::vector<Sent> out;
    for (auto& [to, m] : take_sent()) {
      if (!std::holds_alternative<Heartbeat>(m)) out.emplace_back(to, unsequenced(m));
    }
    return out;
  }
  // Acknowledges, as each receiver would, every Election and Elected sent since the last take.
  void ack_all() {
    for (auto& [to, m] : take_sent()) {
      if (const auto* e = std::get_if<Election>(&m)) deliver(to, Ack{e->sequence});
      if (const auto* e = std::get_if<Elected>(&m)) deliver(to, Ack{e->sequence});
    }
  }

  // Starts the node as an initiator and lets its own Election come back: it leads epoch_ + 1.
  void make_leader() {
    start();
    const auto sent = take_sent();
    REQUIRE(sent.size() == 1);
    const auto& e = std::get<Election>(sent.front().second);
    deliver(sent.front().first, Ack{e.sequence});
    deliver(predecessor(), Election{ctx.self(), e.election_number, 900});
    REQUIRE(node->role() == Role::leader);
    ack_all();
  }

  NodeId predecessor() const {
    const auto n = static_cast<NodeId>(ctx.cluster_size());
    return (ctx.self() + n - 1) % n;  // ascending order
  }
};

}  // namespace

// ---- Chang-Roberts: the election
// -----------------------------------------------------------------

TEST_CASE("ring: an initiator becomes a participant and sends Election(self) to its successor") {
  auto [order, self, successor] = GENERATE(table<std::string, NodeId, NodeId>({
      {R"("ascending")", 2, 3},
      {R"("ascending")", 4, 0},
      {R"("descending")", 2, 1},
      {R"("descending")", 0, 4},
      {"[3, 0, 4, 1, 2]", 4, 1},
      {"[3, 0, 4, 1, 2]", 2, 3},
  }));
  INFO("order " << order << ", node " << self);
  Bench b(config_of(json{{"order", json::parse(order)}}), self);
  b.start();
  CHECK(b.node->participant());
  CHECK(b.ctx.belief() == Belief::candidate(1));
  CHECK(b.node->successor() == successor);
  CHECK(b.take_ring() == std::vector<Sent>{{successor, Election{self, 1, 0}}});
  // Only the candidate belief: an initiator does not first announce itself a follower.
  CHECK(b.ctx.announcements.size() == 1);
}

TEST_CASE("ring: an Election with a larger id is passed on, and the receiver takes part") {
  const bool participating = GENERATE(false, true);
  Bench b(config_of(json{{"start", participating ? "all" : "none"}}));
  b.start();
  b.ack_all();
  b.deliver(1, Election{4, 1, 77});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{77}}, {3, Election{4, 1, 0}}});
  CHECK(b.node->participant());
  CHECK(b.ctx.belief() == Belief::candidate(1));
}

TEST_CASE("ring: a non-participant replaces a smaller id with its own") {
  Bench b(config_of(json{{"start", "none"}}));
  b.start();
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 0));
  b.deliver(1, Election{0, 1, 5});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{5}}, {3, Election{2, 1, 0}}});
  CHECK(b.node->participant());
  CHECK(b.ctx.belief() == Belief::candidate(1));
}

TEST_CASE("ring: a participant swallows a smaller id") {
  Bench b(config_of());
  b.start();
  b.ack_all();
  b.deliver(1, Election{0, 1, 6});
  b.deliver(1, Election{1, 1, 7});
  // Acknowledged, and passed on to nobody.
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{6}}, {1, Ack{7}}});
  CHECK(b.node->participant());
  CHECK(b.ctx.belief() == Belief::candidate(1));
}

TEST_CASE("ring: a node whose own id comes back leads with that election's number") {
  const sim::Epoch stored = GENERATE(0, 6);
  Bench b(config_of());
  b.ctx.durable().set(RingNode::kEpochKey, stored);
  b.start();
  const sim::Epoch number = stored + 1;
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, number, 0}}});
  b.deliver(1, Election{2, number, 8});
  CHECK(b.node->role() == Role::leader);
  CHECK_FALSE(b.node->participant());
  CHECK(b.ctx.belief() == Belief::leader(number));
  CHECK(b.ctx.durable().get(RingNode::kEpochKey) == number);
  // Chang-Roberts: the winner sends the elected message round the ring.
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{8}}, {3, Elected{2, number, 0}}});
}

TEST_CASE("ring: Elected makes a node record the leader, leave the election and pass it on once") {
  Bench b(config_of());
  b.start();
  b.ack_all();
  b.deliver(1, Elected{4, 1, 11});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{11}}, {3, Elected{4, 1, 0}}});
  CHECK_FALSE(b.node->participant());
  CHECK(b.node->leader() == 4);
  CHECK(b.ctx.belief() == Belief::follower(4, 1));
  // A duplicate is acknowledged but not passed on again.
  b.deliver(1, Elected{4, 1, 12});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{12}}});
}

TEST_CASE("ring: the coordinator lap ends at the leader") {
  Bench b(config_of());
  b.make_leader();
  b.deliver(1, Elected{2, 1, 13});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{13}}});
  CHECK(b.ctx.belief() == Belief::leader(1));
}

TEST_CASE("ring: of concurrent elections the higher number counts, an older one is swallowed") {
  Bench b(config_of());
  b.start();  // takes part in election 1
  b.ack_all();
  // A newer election: this node is not yet part of it, so the smaller id is replaced.
  b.deliver(1, Election{0, 2, 20});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{20}}, {3, Election{2, 2, 0}}});
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.ctx.durable().get(RingNode::kEpochKey) == 2);
  // Election 1 has been superseded here: even a larger id of it goes no further.
  b.deliver(1, Election{4, 1, 21});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{21}}});
  CHECK(b.ctx.belief() == Belief::candidate(2));
}

TEST_CASE("ring: stragglers of an election already decided go no further") {
  Bench b(config_of());
  b.start();
  b.ack_all();
  b.deliver(1, Elected{4, 1, 30});
  b.ack_all();
  b.deliver(1, Election{3, 1, 31});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{31}}});
  CHECK(b.ctx.belief() == Belief::follower(4, 1));
}

TEST_CASE("ring: a single-node cluster elects itself at once") {
  Bench b(config_of(json::object(), 1), 0, 1);
  b.start();
  CHECK(b.ctx.belief() == Belief::leader(1));
  CHECK(b.ctx.sent.empty());
}

// ---- Skipping dead successors
// --------------------------------------------------------------------

TEST_CASE("ring: without an Ack the sender suspects its successor and sends to the next node") {
  const std::string ack_timeout = GENERATE("100ms", "30ms");
  const Duration ack = *sim::parse_duration(ack_timeout);
  Bench b(config_of(json{{"ack_timeout", ack_timeout}}));
  b.start();
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, 1, 0}}});
  b.ctx.fire_tag(*b.node, kAck);
  CHECK(b.ctx.now() == LocalTime(ack));
  CHECK(b.node->suspects(3));
  CHECK(b.take_ring() == std::vector<Sent>{{4, Election{2, 1, 0}}});
  b.ctx.fire_tag(*b.node, kAck);
  CHECK(b.ctx.now() == LocalTime(ack * 2));
  CHECK(b.node->suspects(4));
  // Node 0 answers: nothing more is resent.
  const auto to_zero = b.take_sent();
  REQUIRE(to_zero.size() == 1);
  CHECK(to_zero.front().first == 0);
  b.deliver(0, Ack{std::get<Election>(to_zero.front().second).sequence});
  CHECK(b.node->awaiting_ack() == 0);
  CHECK(b.armed(kAck) == 0);
  CHECK(b.node->successor() == 0);
}

TEST_CASE("ring: a suspected node is trusted again once it is heard from") {
  Bench b(config_of());
  b.start();
  b.take_sent();
  b.ctx.fire_tag(*b.node, kAck);
  REQUIRE(b.node->suspects(3));
  CHECK(b.node->successor() == 4);
  b.deliver(3, Ack{12345});  // any message will do, even an Ack nobody waits for
  CHECK_FALSE(b.node->suspects(3));
  CHECK(b.node->successor() == 3);
}

TEST_CASE("ring: an Elected whose leader has since crashed ends its lap at the leader's place") {
  Bench b(config_of(json{{"start", "none"}}));
  b.start();
  b.deliver(1, Elected{3, 1, 40});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{40}}, {3, Elected{3, 1, 0}}});
  b.ctx.fire_tag(*b.node, kAck);
  CHECK(b.node->suspects(3));
  // Passing it on to 4 would send it round for ever: 3 will never take it back.
  CHECK(b.take_ring().empty());
  CHECK(b.ctx.belief() == Belief::follower(3, 1));
}

TEST_CASE("ring: an Election whose candidate has since crashed gives way to a new election") {
  Bench b(config_of(json{{"start", "none"}}));
  b.start();
  b.deliver(1, Election{3, 1, 41});
  CHECK(b.take_ring() == std::vector<Sent>{{1, Ack{41}}, {3, Election{3, 1, 0}}});
  b.ctx.fire_tag(*b.node, kAck);
  // Every id below 3 would pass Election(3) on for ever; this node starts election 2 instead,
  // which probes the whole ring afresh: 3 once more, then past it.
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, 2, 0}}});
  b.ctx.fire_tag(*b.node, kAck);
  CHECK(b.take_ring() == std::vector<Sent>{{4, Election{2, 2, 0}}});
  CHECK(b.ctx.belief() == Belief::candidate(2));
}

TEST_CASE("ring: a node that every successor leaves unanswered leads a ring of one") {
  Bench b(config_of());
  b.start();
  for (NodeId expected : {3, 4, 0, 1}) {
    const auto sent = b.take_ring();
    REQUIRE(sent.size() == 1);
    CHECK(sent.front().first == expected);
    CHECK(b.ctx.belief() == Belief::candidate(1));
    b.ctx.fire_tag(*b.node, kAck);
  }
  CHECK(b.ctx.belief() == Belief::leader(1));
  CHECK(b.ctx.now() == LocalTime(4 * b.config->ack_timeout));
}

// ---- Failure detection
// ---------------------------------------------------------------------------

TEST_CASE("ring: a node that hears no leader for failure_timeout starts an election") {
  const std::string failure_timeout = GENERATE("500ms", "1s");
  const Duration failure = *sim::parse_duration(failure_timeout);
  Bench b(config_of(json{{"start", "none"}, {"failure_timeout", failure_timeout}}));
  b.start();
  // A leader's heartbeats keep the node following it.
  for (int i = 0; i < 20; ++i) {
    b.deliver(4, Heartbeat{4, 1});
    b.ctx.run_for(*b.node, 100ms);
  }
  CHECK(b.ctx.belief() == Belief::follower(4, 1));
  CHECK(b.take_ring().empty());
  const LocalTime last_heartbeat = b.ctx.now() - 100ms;
  b.ctx.fire_tag(*b.node, kFailure);
  CHECK(b.ctx.now() == last_heartbeat + failure);
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, 2, 0}}});
}

TEST_CASE(
    "ring: a participant whose election stalls starts a new one after failure_timeout plus an "
    "ack_timeout per other node") {
  auto [nodes, failure_timeout, ack_timeout] =
      GENERATE(table<std::size_t, std::string, std::string>({
          {5, "500ms", "100ms"},
          {3, "500ms", "100ms"},
          {5, "2s", "10ms"},
      }));
  Bench b(
      config_of(json{{"failure_timeout", failure_timeout}, {"ack_timeout", ack_timeout}}, nodes), 2,
      nodes);
  b.start();
  b.ack_all();
  b.ctx.fire_tag(*b.node, kFailure);
  const auto others = static_cast<std::int64_t>(nodes) - 1;
  CHECK(b.ctx.now() == LocalTime(b.config->failure_timeout + b.config->ack_timeout * others));
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.take_ring() == std::vector<Sent>{{static_cast<NodeId>(3 % nodes), Election{2, 2, 0}}});
}

TEST_CASE("ring: the leader sends a Heartbeat to every node every heartbeat_interval") {
  const std::string interval = GENERATE("100ms", "40ms");
  Bench b(config_of(json{{"heartbeat_interval", interval}}));
  b.make_leader();
  const LocalTime elected = b.ctx.now();
  b.ctx.run_for(*b.node, 1s);
  std::vector<std::pair<NodeId, LocalTime>> heartbeats;
  for (const auto& s : b.ctx.sent) {
    if (s.message.type == ring::type_of<Heartbeat>()) heartbeats.emplace_back(s.to, s.at);
  }
  const Duration every = *sim::parse_duration(interval);
  const auto rounds = static_cast<std::size_t>(1s / every) + 1;  // one at election
  REQUIRE(heartbeats.size() == rounds * 4);
  for (std::size_t i = 0; i < heartbeats.size(); ++i) {
    const NodeId peers[] = {0, 1, 3, 4};
    CHECK(heartbeats[i].first == peers[i % 4]);
    CHECK(heartbeats[i].second == elected + every * static_cast<std::int64_t>(i / 4));
  }
  CHECK(b.ctx.belief() == Belief::leader(1));
  CHECK(b.armed(kFailure) == 0);
}

TEST_CASE("ring: news of a leader is followed when it is newer by epoch, then by id") {
  auto [leader, epoch, follows] = GENERATE(table<NodeId, sim::Epoch, bool>({
      {4, 3, true},   // a later epoch
      {3, 3, true},   // a later epoch, a smaller id than the current leader
      {3, 2, false},  // the same epoch, a smaller id
      {4, 1, false},  // an earlier epoch
  }));
  Bench b(config_of(json{{"start", "none"}}));
  b.start();
  b.deliver(4, Heartbeat{4, 2});
  REQUIRE(b.ctx.belief() == Belief::follower(4, 2));
  b.deliver(leader, Heartbeat{leader, epoch});
  CHECK(b.ctx.belief() == (follows ? Belief::follower(leader, epoch) : Belief::follower(4, 2)));
}

TEST_CASE(
    "ring: a leader gives way to a leader of a later epoch or of its own epoch and larger id") {
  auto [leader, epoch, gives_way] = GENERATE(table<NodeId, sim::Epoch, bool>({
      {3, 2, true},   // a later epoch
      {4, 1, true},   // the same epoch, a larger id
      {1, 1, false},  // the same epoch, a smaller id
      {4, 0, false},  // an earlier epoch
  }));
  Bench b(config_of(json::object(), 5, /*workload=*/true), 2);
  b.make_leader();
  b.deliver(leader, Heartbeat{leader, epoch});
  CHECK(b.ctx.belief() == (gives_way ? Belief::follower(leader, epoch) : Belief::leader(1)));
  CHECK(b.node->writer().active() == !gives_way);
  CHECK(b.armed(kHeartbeat) == (gives_way ? 0u : 1u));
}

TEST_CASE("ring: a node that hears of a leader with a smaller id than its own calls an election") {
  Bench b(config_of(json{{"start", "none"}}));
  b.start();
  b.deliver(1, Heartbeat{1, 3});
  // Chang-Roberts elect the largest id: node 2 was left out of election 3.
  CHECK(b.ctx.belief() == Belief::candidate(4));
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, 4, 0}}});
}

// ---- Epochs, restarts, the sink and commands
// -----------------------------------------------------

TEST_CASE("ring: the election number is durable: a restarted node starts an election above it") {
  auto [how, expected] = GENERATE(table<std::string, sim::Epoch>({
      {"leader", 2},    // led epoch 1
      {"follower", 6},  // followed a leader of epoch 5
      {"fresh", 1},     // knew nothing
  }));
  INFO(how);
  Bench b(config_of(json{{"start", how == "leader" ? "all" : "none"}}));
  if (how == "leader") {
    b.make_leader();
  } else {
    b.start();
    if (how == "follower") b.deliver(4, Heartbeat{4, 5});
  }
  b.take_sent();
  b.restart();
  CHECK(b.ctx.belief() == Belief::candidate(expected));
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, expected, 0}}});
  CHECK(b.ctx.durable().get(RingNode::kEpochKey) == expected);
}

TEST_CASE("ring: the leader writes with its epoch as the token, only while it leads") {
  Bench b(config_of(json::object(), 5, /*workload=*/true));
  b.make_leader();
  b.ctx.run_for(*b.node, 350ms);
  REQUIRE(b.ctx.sink_calls.size() == 3);
  for (const auto& call : b.ctx.sink_calls) CHECK(call.token == 1);
  b.deliver(4, Heartbeat{4, 1});  // a larger id of the same epoch: this node gives way
  b.ctx.run_for(*b.node, 300ms);
  CHECK(b.ctx.sink_calls.size() == 3);
}

TEST_CASE("ring: a sink rejection changes nothing: the textbook leader knows no sink") {
  const int token_delta = GENERATE(0, -1);
  Bench b(config_of(json::object(), 5, /*workload=*/true));
  b.ctx.durable().set(RingNode::kEpochKey, 3);
  b.make_leader();  // epoch 4
  sim::SinkReply rejected;
  rejected.id = 99;
  rejected.token = 4 + token_delta;
  rejected.accepted = false;
  rejected.highest_accepted = 9;
  b.ctx.deliver(*b.node, rejected);
  CHECK(b.ctx.belief() == Belief::leader(4));
  CHECK(b.node->writer().active());
  CHECK(b.take_ring().empty());
}

TEST_CASE(
    "ring: a leader told to step down follows nobody and calls an election after the timeout") {
  Bench b(config_of(json::object(), 5, /*workload=*/true));
  b.make_leader();
  const LocalTime at = b.ctx.now();
  b.node->on_command(b.ctx, sim::Command::step_down);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
  CHECK_FALSE(b.node->writer().active());
  CHECK(b.armed(kHeartbeat) == 0);
  CHECK(b.take_ring().empty());
  b.ctx.fire_tag(*b.node, kFailure);
  CHECK(b.ctx.now() == at + b.config->failure_timeout);
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.take_ring() == std::vector<Sent>{{3, Election{2, 2, 0}}});
}

TEST_CASE("ring: a node told to stop announces it follows and then does nothing") {
  const bool leads = GENERATE(false, true);
  Bench b(config_of(json::object(), 5, /*workload=*/true));
  if (leads) {
    b.make_leader();
  } else {
    b.start();
    b.take_sent();  // its Election is never acknowledged: an Ack timer is armed
  }
  b.node->on_command(b.ctx, sim::Command::stop);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
  b.deliver(3, Election{3, 1, 50});
  b.ctx.run_for(*b.node, 5s);
  CHECK(b.take_sent().empty());
  CHECK(b.ctx.sink_calls.empty());
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
}

// ---- Messages
// ------------------------------------------------------------------------------------

TEST_CASE("ring: every message survives encoding into a kernel message, with its own type") {
  auto [message, name] = GENERATE(table<RingMessage, std::string>({
      {Election{3, 7, (std::int64_t{5} << 32) + 1}, "Election"},
      {Elected{4, 2, 9}, "Elected"},
      {Ack{(std::int64_t{2} << 32) + 3}, "Ack"},
      {Heartbeat{1, 12}, "Heartbeat"},
  }));
  const sim::Message m = ring::encode(message);
  CHECK(ring::message_type_names().at(m.type) == name);
  const auto back = ring::decode(m);
  REQUIRE(back.has_value());
  CHECK(*back == message);
}

TEST_CASE("ring: a message of a type the ring does not have does not decode") {
  sim::Message unknown;
  unknown.type = static_cast<sim::MessageType>(ring::kMessageTypeCount);
  CHECK_FALSE(ring::decode(unknown).has_value());
}

// ---- Parameters and the registry entry
// -----------------------------------------------------------

TEST_CASE("ring: each parameter has its documented default") {
  const RingConfig c = config_of(json(nullptr), 4);
  CHECK(c.order_kind == ring::RingOrder::ascending);
  CHECK(c.ring_of(4) == std::vector<NodeId>{0, 1, 2, 3});
  CHECK(c.ack_timeout == 100ms);
  CHECK(c.heartbeat_interval == 100ms);
  CHECK(c.failure_timeout == 500ms);
  CHECK(c.start == ring::StartSet::all);
  for (NodeId id = 0; id < 4; ++id) CHECK(c.starts_at_time_zero(id));
}

TEST_CASE("ring: the order and the initiators may be named or listed") {
  auto [params, ring_of_four, initiators] =
      GENERATE(table<std::string, std::vector<NodeId>, std::vector<NodeId>>({
          {R"({"order": "descending", "start": "lowest"})", {3, 2, 1, 0}, {0}},
          {R"({"order": [2, 0, 3, 1], "start": [3, 1]})", {2, 0, 3, 1}, {1, 3}},
          {R"({"order": "ascending", "start": "none"})", {0, 1, 2, 3}, {}},
          {R"({"start": []})", {0, 1, 2, 3}, {}},
      }));
  INFO(params);
  const RingConfig c = config_of(json::parse(params), 4);
  CHECK(c.ring_of(4) == ring_of_four);
  std::vector<NodeId> starting;
  for (NodeId id = 0; id < 4; ++id) {
    if (c.starts_at_time_zero(id)) starting.push_back(id);
  }
  CHECK(starting == initiators);
}

TEST_CASE("ring: given durations override the defaults") {
  const RingConfig c = config_of(
      json{{"ack_timeout", "20ms"}, {"heartbeat_interval", "1s"}, {"failure_timeout", "3s"}});
  CHECK(c.ack_timeout == 20ms);
  CHECK(c.heartbeat_interval == 1s);
  CHECK(c.failure_timeout == 3s);
}

TEST_CASE("ring: a wrong or inconsistent parameter is one problem at its own pointer") {
  auto [params, pointer, says] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"heartbeat_interval": "500ms"})", "/protocol/heartbeat_interval", "failure_timeout"},
      {R"({"failure_timeout": "100ms"})", "/protocol/heartbeat_interval", "(the default)"},
      {R"({"ack_timeout": "0"})", "/protocol/ack_timeout", "at least \"1ms\""},
      {R"({"failure_timeout": "-1s"})", "/protocol/failure_timeout", "non-negative"},
      {R"({"ack_timeout": "soon"})", "/protocol/ack_timeout", "duration"},
      {R"({"odrer": "ascending"})", "/protocol/odrer", "did you mean \"order\""},
      {R"({"order": "ascendng"})", "/protocol/order", "did you mean \"ascending\""},
      {R"({"order": 3})", "/protocol/order", "array naming every node id once"},
      {R"({"order": [0, 1, 2, 3, 3]})", "/protocol/order/4",
       "node 3 again (first at /protocol/order/3)"},
      {R"({"order": [0, 1, 2, 5, 4]})", "/protocol/order/3", "from 0 to 4"},
      {R"({"order": [-1, 1, 2, 3, 4]})", "/protocol/order/0", "from 0 to 4"},
      {R"({"order": [0, 1, "2", 3, 4]})", "/protocol/order/2", "node id"},
      {R"({"order": [0, 1, 2.5, 3, 4]})", "/protocol/order/2", "node id"},
      {R"({"order": [0, 1, 2, 4]})", "/protocol/order", "without node 3"},
      {R"({"order": [4, 0]})", "/protocol/order", "without nodes 1, 2, 3"},
      {R"({"start": "first"})", "/protocol/start", "\"lowest\""},
      {R"({"start": "nne"})", "/protocol/start", "did you mean \"none\""},
      {R"({"start": [1, 1]})", "/protocol/start/1", "node 1 again"},
      {R"({"start": [7]})", "/protocol/start/0", "from 0 to 4"},
      {R"({"start": {"a": 1}})", "/protocol/start", "array of distinct node ids"},
  }));
  INFO(params);
  Problems problems;
  const auto config = ring::read_config(json::parse(params), "/protocol", 5, problems);
  CHECK_FALSE(config.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == pointer);
  CHECK_THAT(problems.front().format(), Catch::Contains(says));
}

TEST_CASE("ring: the registry entry names the protocol, its parameters and its message types") {
  const auto& info = electsim::protocols::ring_protocol_info();
  CHECK(info.name == "ring");
  CHECK_FALSE(info.description.empty());
  std::vector<std::string> names;
  for (const auto& spec : info.params) names.push_back(spec.name);
  CHECK(names == std::vector<std::string>{"order", "ack_timeout", "heartbeat_interval",
                                          "failure_timeout", "start"});
  CHECK(info.message_types == std::vector<std::string>{"Election", "Elected", "Ack", "Heartbeat"});
  CHECK(info.election_message_types == std::vector<std::string>{"Election", "Elected"});
  // The named defaults are the ones the reader applies.
  Problems problems;
  const json none = json::object();  // the reader keeps a reference to it
  electsim::params::ParamReader reader(none, "/protocol", info.params, problems);
  CHECK(reader.choice("order") == "ascending");
  CHECK(reader.duration("ack_timeout") == 100ms);
  CHECK(reader.duration("heartbeat_interval") == 100ms);
  CHECK(reader.duration("failure_timeout") == 500ms);
  CHECK(reader.choice("start") == "all");
  CHECK(problems.empty());
}

TEST_CASE("ring: prepare makes nodes that use neither the store nor a fencing default") {
  const auto& info = electsim::protocols::ring_protocol_info();
  ClusterInfo cluster;
  cluster.node_count = 5;
  Problems problems;
  const auto prepared = info.prepare(json{{"order", "descending"}}, "/protocol", cluster, problems);
  REQUIRE(prepared.has_value());
  CHECK(problems.empty());
  CHECK_FALSE(prepared->uses_store);
  CHECK_FALSE(prepared->leader_key.has_value());
  CHECK_FALSE(prepared->fencing.has_value());
  auto node = prepared->factory(2);
  REQUIRE(node != nullptr);
  FakeContext ctx(2, 5, 1);
  node->on_start(ctx);
  // The order reached the node: its successor is 1.
  REQUIRE(ctx.sent.size() == 1);
  CHECK(ctx.sent.front().to == 1);
  CHECK(ctx.sent.front().message.type == ring::type_of<Election>());

  const auto bad =
      info.prepare(json{{"order", json::array({0, 1})}}, "/protocol", cluster, problems);
  CHECK_FALSE(bad.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == "/protocol/order");
}

// ---- Clusters on the real kernel
// -----------------------------------------------------------------

namespace {

// A cluster of ring nodes on the kernel, every message taking exactly `latency`.
Cluster ring_cluster(const RingConfig& c, std::size_t n, std::vector<sim::FaultSpec> faults = {},
                     Duration latency = 1ms) {
  ClusterSetup setup;
  setup.nodes = n;
  setup.duration = 60s;
  setup.latency = latency;
  setup.faults = std::move(faults);
  setup.message_types = ring::kMessageTypeCount;
  return Cluster(std::move(setup), nodes_of<RingNode>(c));
}

// The belief a node holds when `leader` leads with `epoch`.
Belief belief_under(NodeId node, NodeId leader, sim::Epoch epoch) {
  return node == leader ? Belief::leader(epoch) : Belief::follower(leader, epoch);
}

}  // namespace

TEST_CASE("ring: which nodes are crashed or partitioned decides who leads, with which epoch") {
  // Five nodes in ascending order, every live node starting at time 0. Crashed nodes are down
  // from the start; `groups` partition the cluster from time 0. Expected: per node, its leader
  // (kNoNode: down) and the epoch.
  using Groups = std::vector<std::vector<sim::Endpoint>>;
  auto [what, crashed, groups, leaders,
        epochs] = GENERATE(table<std::string, std::vector<NodeId>, Groups, std::vector<NodeId>,
                                 std::vector<sim::Epoch>>({
      {"all up", {}, {}, {4, 4, 4, 4, 4}, {1, 1, 1, 1, 1}},
      {"the highest crashed", {4}, {}, {3, 3, 3, 3, kNoNode}, {1, 1, 1, 1, 0}},
      {"a middle node crashed", {2}, {}, {4, 4, kNoNode, 4, 4}, {1, 1, 0, 1, 1}},
      {"the two highest crashed", {3, 4}, {}, {2, 2, 2, kNoNode, kNoNode}, {1, 1, 1, 0, 0}},
      {"every other node crashed",
       {0, 2, 4},
       {},
       {kNoNode, 3, kNoNode, 3, kNoNode},
       {0, 1, 0, 1, 0}},
      {"a partition into two arcs", {}, {{0, 1, 2}, {3, 4}}, {2, 2, 2, 4, 4}, {1, 1, 1, 1, 1}},
      {"a partition across the ring", {}, {{0, 3}, {1, 2, 4}}, {3, 4, 4, 3, 4}, {1, 1, 1, 1, 1}},
      {"the highest cut off alone", {}, {{0, 1, 2, 3}, {4}}, {3, 3, 3, 3, 4}, {1, 1, 1, 1, 1}},
  }));
  INFO(what);
  std::vector<NodeId> live;
  std::vector<sim::FaultSpec> faults;
  for (NodeId i = 0; i < 5; ++i) {
    if (std::find(crashed.begin(), crashed.end(), i) == crashed.end()) {
      live.push_back(i);
    } else {
      faults.push_back(crash_at(0ms, i));
    }
  }
  if (!groups.empty()) faults.push_back(partition_at(0ms, groups));
  Cluster w = ring_cluster(config_of(json{{"start", live}}), 5, faults);
  w.run_until(3s);
  for (NodeId i = 0; i < 5; ++i) {
    INFO("node " << i);
    const auto at = static_cast<std::size_t>(i);
    if (leaders[at] == kNoNode) {
      CHECK_FALSE(w.up(i));
      continue;
    }
    CHECK(w.belief(i) == belief_under(i, leaders[at], epochs[at]));
  }
}

TEST_CASE("ring: a crashed successor is tried once per message, then the ring closes around it") {
  // Node 2 is down. Node 1 sends it two Elections (its own, then 4's, before the first Ack is
  // overdue); from then on it sends to 3, and the coordinator lap goes 4, 0, 1, 3, back to 4.
  Cluster w = ring_cluster(config_of(json{{"start", {0, 1, 3, 4}}}), 5, {crash_at(0ms, 2)});
  w.run_until(3s);
  std::size_t to_two = 0;
  for (const auto& [from, to] : w.recorder().hops(ring::type_of<Election>())) {
    if (to != 2) continue;
    ++to_two;
    CHECK(from == 1);
  }
  CHECK(to_two == 2);
  CHECK(w.recorder().hops(ring::type_of<Elected>()) ==
        std::vector<std::pair<NodeId, NodeId>>{{4, 0}, {0, 1}, {1, 3}, {3, 4}});
  for (NodeId i : {0, 1, 3, 4}) CHECK(w.belief(i) == belief_under(i, 4, 1));
}

TEST_CASE("ring: nodes that all start at the same instant elect exactly the highest id") {
  auto [n, order] = GENERATE(table<std::size_t, std::string>({
      {1, R"("ascending")"},
      {2, R"("ascending")"},
      {5, R"("ascending")"},
      {5, R"("descending")"},
      {6, "[3, 5, 0, 2, 4, 1]"},
      {12, R"("descending")"},
  }));
  INFO(n << " nodes, order " << order);
  Cluster w = ring_cluster(config_of(json{{"order", json::parse(order)}}, n), n);
  w.run_until(2s);
  const auto highest = static_cast<NodeId>(n - 1);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    INFO("node " << i);
    CHECK(w.belief(i) == belief_under(i, highest, 1));
  }
  // One election, one winner: nobody else ever believed it led.
  CHECK(w.recorder().leader_announcements() == 1);
}

TEST_CASE("ring: when the leader crashes the next highest takes over with the next epoch") {
  Cluster w = ring_cluster(config_of(), 5, {crash_at(1s, 4)});
  w.run_until(1s);
  REQUIRE(w.belief(0) == Belief::follower(4, 1));
  w.run_until(3s);
  CHECK_FALSE(w.up(4));
  for (NodeId i = 0; i < 4; ++i) {
    INFO("node " << i);
    CHECK(w.belief(i) == belief_under(i, 3, 2));
  }
}

TEST_CASE("ring: a crashed highest node that restarts takes the lead back in a later epoch") {
  // Epoch 2 is 3's, after 4 crashed; 4 restarts believing in epoch 1, is left out of nothing
  // that matters and, hearing 3 lead, calls election 3.
  Cluster w = ring_cluster(config_of(), 5, {crash_at(1s, 4, 2s)});
  w.run_until(2900ms);
  REQUIRE(w.belief(0) == Belief::follower(3, 2));
  w.run_until(5s);
  for (NodeId i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(w.belief(i) == belief_under(i, 4, 3));
  }
}

TEST_CASE("ring: after a partition heals the two sides merge under the larger epoch and id") {
  Cluster w = ring_cluster(config_of(), 5, {partition_at(0ms, {{0, 1, 2}, {3, 4}}, 2s)});
  w.run_until(1900ms);
  REQUIRE(w.belief(2) == Belief::leader(1));
  REQUIRE(w.belief(4) == Belief::leader(1));
  w.run_until(3s);
  for (NodeId i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(w.belief(i) == belief_under(i, 4, 1));
  }
}

// ---- Message complexity (Chang and Roberts 1979, section 3)
// --------------------------------------

namespace {

struct Counts {
  std::uint64_t election = 0;
  std::uint64_t elected = 0;
};

// Runs n nodes with constant latency and no faults until long after the election; the counts of
// Election and Elected sent (Acks and Heartbeats are the failure handling, not the algorithm).
Counts run_counting(std::size_t n, const json& params) {
  Cluster w = ring_cluster(config_of(params, n), n);
  w.run_until(2s);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    INFO("node " << i);
    REQUIRE(w.belief(i) == belief_under(i, static_cast<NodeId>(n - 1), 1));
  }
  return Counts{w.recorder().sent(ring::type_of<Election>()),
                w.recorder().sent(ring::type_of<Elected>())};
}

// The best case: only the highest id starts. Its Election passes the n - 1 others (all smaller)
// and comes back: n messages; then the Elected lap: n.
Counts best_case(std::size_t n) {
  return run_counting(n, json{{"order", "ascending"}, {"start", json::array({n - 1})}});
}

// The worst case: everyone starts at once and ids decrease along the direction of travel
// (descending order: the successor of i is i - 1). Election(i) passes i, i-1, ..., 0 and is
// swallowed by n - 1, the first node larger than i: i + 1 messages; Election(n - 1) goes all the
// way round: n. Sum over i < n - 1 of (i + 1), plus n: n(n+1)/2.
Counts worst_case(std::size_t n) {
  return run_counting(n, json{{"order", "descending"}, {"start", "all"}});
}

}  // namespace

TEST_CASE("ring: the best case sends n Election and n Elected messages") {
  const std::size_t n = GENERATE(4, 8, 16, 32);
  INFO(n << " nodes");
  const Counts c = best_case(n);
  CHECK(c.election == n);
  CHECK(c.elected == n);
}

TEST_CASE("ring: the worst case sends n(n+1)/2 Election and n Elected messages") {
  const std::size_t n = GENERATE(4, 8, 16, 32);
  INFO(n << " nodes");
  const Counts c = worst_case(n);
  CHECK(c.election == n * (n + 1) / 2);
  CHECK(c.elected == n);
}

TEST_CASE("ring: everyone starting with ids increasing along the ring sends 2n - 1 Elections") {
  // Election(i) for i < n - 1 is swallowed at once by i + 1, a participant; Election(n - 1) goes
  // round: n - 1 + n.
  const std::size_t n = GENERATE(4, 8, 16, 32);
  INFO(n << " nodes");
  const Counts c = run_counting(n, json{{"order", "ascending"}, {"start", "all"}});
  CHECK(c.election == 2 * n - 1);
  CHECK(c.elected == n);
}

TEST_CASE("ring: the best case grows linearly, the worst case quadratically") {
  std::vector<double> best_per_node;
  std::vector<double> worst_per_square;
  for (std::size_t n : {4u, 8u, 16u, 32u}) {
    const Counts best = best_case(n);
    const Counts worst = worst_case(n);
    best_per_node.push_back(static_cast<double>(best.election + best.elected) /
                            static_cast<double>(n));
    worst_per_square.push_back(static_cast<double>(worst.election) / static_cast<double>(n * n));
  }
  for (std::size_t i = 0; i < best_per_node.size(); ++i) {
    INFO("size index " << i);
    // Total messages per node stay constant as n doubles.
    CHECK(best_per_node[i] == Approx(best_per_node.front()));
    // Election messages per n^2 stay in a band around 1/2 (n(n+1)/2n^2 = 1/2 + 1/2n).
    CHECK(worst_per_square[i] >= 0.5);
    CHECK(worst_per_square[i] <= 0.65);
  }
  // Doubling n roughly quadruples the worst case.
  CHECK(worst_per_square.back() * 32 * 32 / (worst_per_square[2] * 16 * 16) ==
        Approx(4).epsilon(0.05));
}
