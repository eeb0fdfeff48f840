// Tests of the Bully algorithm (protocols/bully/): one node against the fake context for each
// rule of the algorithm (Garcia-Molina 1982, in Tanenbaum's textbook form), the parameter table
// with its cross-checks, and clusters over the real kernel in the style of etcd-io/raft's
// TestLeaderElection (which nodes are down or cut off -> who leads, at which epoch), including the
// textbook's best- and worst-case message counts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/bully/bully.hpp"
#include "protocols/bully/config.hpp"
#include "protocols/bully/messages.hpp"
#include "protocols/registry.hpp"
#include "sim/kernel.hpp"
#include "tests/protocols/cluster.hpp"
#include "tests/protocols/kit.hpp"
#include "tests/protocols/printers.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::ClusterInfo;
using electsim::protocols::bully::Answer;
using electsim::protocols::bully::BullyConfig;
using electsim::protocols::bully::BullyMessage;
using electsim::protocols::bully::BullyNode;
using electsim::protocols::bully::BullyState;
using electsim::protocols::bully::Coordinator;
using electsim::protocols::bully::Election;
using electsim::protocols::bully::Heartbeat;
using electsim::protocols::bully::StartMode;
using electsim::protocols::bully::type_of;
using electsim::sim::Belief;
using electsim::sim::Duration;
using electsim::sim::Epoch;
using electsim::sim::kNoNode;
using electsim::sim::LocalTime;
using electsim::sim::NodeId;
using electsim::testing::Cluster;
using electsim::testing::ClusterSetup;
using electsim::testing::crash_at;
using electsim::testing::kDown;
using electsim::testing::NodeBench;
using electsim::testing::nodes_of;
using electsim::testing::partition_at;
using electsim::testing::step_down_at;
using electsim::testing::valid_config;
using json = nlohmann::json;
namespace sim = electsim::sim;
namespace bully = electsim::protocols::bully;

BullyConfig config_of(const json& params, bool workload = false) {
  return valid_config([&](Problems& p) { return bully::read_config(params, "/protocol", p); },
                      workload);
}

using Sends = std::vector<std::pair<NodeId, Epoch>>;

// One Bully node on a fake context.
struct Bench : NodeBench<BullyNode, BullyConfig, bully::decode> {
  using NodeBench::NodeBench;

  // (recipient, election number) of every message of type T sent since `since`, in order: every
  // Bully message carries just its number, so the cases state the traffic as these pairs.
  template <typename T>
  Sends sent(std::size_t since = 0) const {
    Sends out;
    for (const auto& [to, m] : NodeBench::sent<T>(since)) out.emplace_back(to, m.election_number);
    return out;
  }
};

// Makes a node of `n` the coordinator at `epoch`: idle start, then an Election from node 0
// carrying epoch - 1 makes it hold election `epoch`, and nobody higher answers.
void make_coordinator(Bench& b, Epoch epoch) {
  REQUIRE(b.ctx.self() > 0);
  REQUIRE(epoch >= 2);
  b.deliver(0, Election{epoch - 1});
  if (b.node->state() == BullyState::candidate) b.ctx.fire_tag(*b.node, BullyNode::kAnswerTag);
  REQUIRE(b.node->state() == BullyState::coordinator);
  REQUIRE(b.ctx.belief() == Belief::leader(epoch));
}

}  // namespace

// ---- One node: the rules of the algorithm ------------------------------------------------------

TEST_CASE("bully: the highest id elects itself at once and tells every lower id") {
  Bench b(config_of(json::object()), 3, 4);
  b.start();

  CHECK(b.node->state() == BullyState::coordinator);
  REQUIRE(b.ctx.announcements.size() == 1);
  CHECK(b.ctx.announcements.front().belief == Belief::leader(1));
  CHECK(b.sent<Election>().empty());
  CHECK(b.sent<Coordinator>() == Sends{{0, 1}, {1, 1}, {2, 1}});

  // Then a Heartbeat to every node every heartbeat_interval.
  const std::size_t mark = b.mark();
  b.run_for(250ms);
  CHECK(b.sent<Heartbeat>(mark) == Sends{{0, 1}, {1, 1}, {2, 1}, {0, 1}, {1, 1}, {2, 1}});
  const auto next = b.ctx.armed(BullyNode::kHeartbeatTag);
  REQUIRE(next.size() == 1);
  CHECK(next.front().due == LocalTime(300ms));
}

TEST_CASE("bully: a node below the highest sends Election to every higher id and is a candidate") {
  Bench b(config_of(json::object()), 1, 4);
  b.start();

  CHECK(b.node->state() == BullyState::candidate);
  CHECK(b.ctx.belief() == Belief::candidate(1));
  CHECK(b.sent<Election>() == Sends{{2, 1}, {3, 1}});
  CHECK(b.sent<Coordinator>().empty());
}

TEST_CASE("bully: an Election from a lower id is answered and starts the receiver's own election") {
  // The receiver's state before the Election, and what it does: the election it starts (0: none,
  // it already holds one).
  auto [before, number, expected_number] =
      GENERATE(table<std::string, Epoch, Epoch>({{"idle", 1, 2},
                                                 {"candidate", 1, 0},
                                                 {"following node 3 at epoch 4", 5, 6},
                                                 {"following node 3, older number", 2, 5}}));
  INFO(before);
  const bool idle_start = before != "candidate";
  Bench b(config_of(json{{"start", idle_start ? "none" : "all"}}), 1, 4);
  b.start();
  if (before.rfind("following", 0) == 0) {
    b.deliver(3, Coordinator{4});
    REQUIRE(b.ctx.belief() == Belief::follower(3, 4));
  }
  const Belief belief_before = *b.ctx.belief();
  const std::size_t mark = b.mark();

  b.deliver(0, Election{number});

  CHECK(b.sent<Answer>(mark) == Sends{{0, number}});
  if (expected_number == 0) {
    CHECK(b.sent<Election>(mark).empty());
    CHECK(b.ctx.belief() == belief_before);
  } else {
    // One more than the highest number seen: the sender's, or the coordinator's epoch.
    CHECK(b.sent<Election>(mark) == Sends{{2, expected_number}, {3, expected_number}});
    CHECK(b.ctx.belief() == Belief::candidate(expected_number));
  }
}

TEST_CASE("bully: a candidate that hears no Answer within answer_timeout becomes coordinator") {
  const std::string timeout = GENERATE("100ms", "250ms");
  INFO(timeout);
  const Duration answer_timeout = *sim::parse_duration(timeout);
  Bench b(config_of(json{{"answer_timeout", timeout}}), 2, 4);
  b.start();
  REQUIRE(b.sent<Election>() == Sends{{3, 1}});

  b.run_for(answer_timeout - 1ns);
  CHECK(b.ctx.belief() == Belief::candidate(1));
  CHECK(b.sent<Coordinator>().empty());

  b.run_for(1ns);
  CHECK(b.ctx.belief() == Belief::leader(1));
  CHECK(b.ctx.announcements.back().at == LocalTime(answer_timeout));
  CHECK(b.sent<Coordinator>() == Sends{{0, 1}, {1, 1}});
}

TEST_CASE(
    "bully: an answered candidate that hears no Coordinator within coordinator_timeout holds "
    "a new election") {
  const std::string timeout = GENERATE("300ms", "700ms");
  INFO(timeout);
  const Duration coordinator_timeout = *sim::parse_duration(timeout);
  Bench b(config_of(json{{"coordinator_timeout", timeout}}), 0, 3);
  b.start();
  b.ctx.advance(5ms);
  b.deliver(2, Answer{1});
  CHECK(b.node->state() == BullyState::awaiting_coordinator);

  // Answered: answer_timeout passing no longer makes it coordinator.
  const std::size_t mark = b.mark();
  b.run_for(coordinator_timeout - 1ns);
  CHECK(b.ctx.belief() == Belief::candidate(1));
  CHECK(b.mark() == mark);

  b.run_for(1ns);
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.ctx.announcements.back().at == LocalTime(5ms + coordinator_timeout));
  CHECK(b.sent<Election>(mark) == Sends{{1, 2}, {2, 2}});
}

TEST_CASE("bully: an Answer to an earlier election or from a second node changes nothing") {
  Bench b(config_of(json::object()), 0, 3);
  b.start();
  b.deliver(2, Answer{1});
  REQUIRE(b.node->state() == BullyState::awaiting_coordinator);
  const auto due = b.ctx.armed(BullyNode::kCoordinatorTag);
  REQUIRE(due.size() == 1);

  b.ctx.advance(50ms);
  b.deliver(1, Answer{1});  // a second answer does not restart the wait
  CHECK(b.ctx.armed(BullyNode::kCoordinatorTag).front().id == due.front().id);

  b.ctx.fire_tag(*b.node, BullyNode::kCoordinatorTag);  // new election, number 2
  REQUIRE(b.ctx.belief() == Belief::candidate(2));
  b.deliver(2, Answer{1});  // late: answers election 1
  CHECK(b.node->state() == BullyState::candidate);
}

TEST_CASE("bully: a follower that misses heartbeats for failure_timeout holds an election") {
  const std::string timeout = GENERATE("500ms", "2s");
  INFO(timeout);
  const Duration failure_timeout = *sim::parse_duration(timeout);
  Bench b(config_of(json{{"start", "none"}, {"failure_timeout", timeout}}), 0, 3);
  b.start();
  b.deliver(2, Coordinator{1});
  REQUIRE(b.ctx.belief() == Belief::follower(2, 1));

  // A heartbeat restarts the failure detector.
  b.run_for(400ms);
  b.deliver(2, Heartbeat{1});
  const std::size_t mark = b.mark();
  b.run_for(failure_timeout - 1ns);
  CHECK(b.ctx.belief() == Belief::follower(2, 1));
  CHECK(b.mark() == mark);

  b.run_for(1ns);
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.ctx.announcements.back().at == LocalTime(400ms + failure_timeout));
  CHECK(b.sent<Election>(mark) == Sends{{1, 2}, {2, 2}});
}

TEST_CASE("bully: the election number is one more than the highest seen and survives a restart") {
  // What the node hears first, and the election it holds after a restart.
  auto [heard, from, number, in_life, after_restart] =
      GENERATE(table<std::string, NodeId, Epoch, Belief, Epoch>({
          {"Coordinator", 2, 7, Belief::follower(2, 7), 8},
          {"Heartbeat", 2, 7, Belief::follower(2, 7), 8},
          // An Election makes it hold election 8 at once; the restart holds 9.
          {"Election", 0, 7, Belief::candidate(8), 9},
      }));
  INFO(heard);
  Bench b(config_of(json{{"start", "none"}}), 1, 3);
  b.start();
  REQUIRE(b.ctx.belief() == Belief::follower(kNoNode, 0));
  if (heard == "Coordinator") b.deliver(from, Coordinator{number});
  if (heard == "Heartbeat") b.deliver(from, Heartbeat{number});
  if (heard == "Election") b.deliver(from, Election{number});
  CHECK(b.ctx.belief() == in_life);
  CHECK(b.ctx.durable().get(BullyNode::kEpochKey) == in_life.epoch);

  // The restart holds an election although start is "none": every recovering node does.
  const std::size_t mark = b.mark();
  b.restart();
  CHECK(b.ctx.belief() == Belief::candidate(after_restart));
  CHECK(b.sent<Election>(mark) == Sends{{2, after_restart}});
  CHECK(b.ctx.durable().get(BullyNode::kEpochKey) == after_restart);
}

TEST_CASE("bully: a recovering higher id takes over from the coordinator") {
  const std::string claim = GENERATE("Coordinator", "Heartbeat");
  INFO(claim);
  // Node 2 led at epoch 1, crashed and recovers: it holds election 2 and wins at once.
  Bench high(config_of(json::object()), 2, 3);
  high.start();
  REQUIRE(high.ctx.belief() == Belief::leader(1));
  high.restart();
  CHECK(high.ctx.belief() == Belief::leader(2));
  CHECK(high.sent<Coordinator>() == Sends{{0, 1}, {1, 1}, {0, 2}, {1, 2}});

  // Node 1 took over meanwhile at epoch 2 (the same number: it is all either could know).
  Bench low(config_of(json{{"start", "none"}}, /*workload=*/true), 1, 3);
  low.start();
  make_coordinator(low, 2);
  low.run_for(150ms);
  REQUIRE(low.node->writer().active());
  const std::size_t mark = low.mark();

  if (claim == "Coordinator") low.deliver(2, Coordinator{2});
  if (claim == "Heartbeat") low.deliver(2, Heartbeat{2});
  CHECK(low.ctx.belief() == Belief::follower(2, 2));
  CHECK_FALSE(low.node->writer().active());
  CHECK(low.ctx.armed(BullyNode::kHeartbeatTag).empty());
  CHECK(low.ctx.armed(BullyNode::kFailureTag).size() == 1);
  low.run_for(400ms);
  CHECK(low.sent<Heartbeat>(mark).empty());
}

TEST_CASE(
    "bully: a coordinator that hears a higher id claim an older epoch steps down and holds an "
    "election") {
  Bench b(config_of(json{{"start", "none"}}), 1, 3);
  b.start();
  make_coordinator(b, 3);
  const std::size_t mark = b.mark();
  b.deliver(2, Heartbeat{1});
  // Node 2 would be refused at epoch 1 by whoever saw 3: the Election makes it win afresh.
  CHECK(b.ctx.belief() == Belief::candidate(4));
  CHECK(b.sent<Election>(mark) == Sends{{2, 4}});
}

TEST_CASE("bully: a claim from a lower id makes the receiver bully it") {
  // Node 2 of 4 before the claim, the claim from node 0, and what follows.
  auto [before, claim, number, after, sent_elections, sent_coordinators] =
      GENERATE(table<std::string, std::string, Epoch, Belief, Sends, Sends>({
          {"following node 3", "Coordinator", 1, Belief::candidate(2), {{3, 2}}, {}},
          {"following node 3", "Heartbeat", 1, Belief::candidate(2), {{3, 2}}, {}},
          {"idle", "Coordinator", 4, Belief::candidate(5), {{3, 5}}, {}},
          // A coordinator at a newer epoch lets its heartbeats depose the lower one.
          {"coordinator at 3", "Coordinator", 2, Belief::leader(3), {}, {}},
          // One whose epoch is older than the claim wins again, at once, with a fresh number.
          {"coordinator at 3", "Heartbeat", 5, Belief::leader(6), {}, {{0, 6}, {1, 6}, {2, 6}}},
      }));
  INFO(before << " hears " << claim << " " << number << " from node 0");
  Bench b(config_of(json{{"start", "none"}}), before == "coordinator at 3" ? 3 : 2, 4);
  b.start();
  if (before == "following node 3") b.deliver(3, Coordinator{1});
  if (before == "coordinator at 3") make_coordinator(b, 3);
  const std::size_t mark = b.mark();

  if (claim == "Coordinator") b.deliver(0, Coordinator{number});
  if (claim == "Heartbeat") b.deliver(0, Heartbeat{number});
  CHECK(b.ctx.belief() == after);
  CHECK(b.sent<Election>(mark) == sent_elections);
  CHECK(b.sent<Coordinator>(mark) == sent_coordinators);
}

TEST_CASE("bully: between two coordinators of the same epoch a follower keeps the higher id") {
  Bench b(config_of(json{{"start", "none"}}), 0, 4);
  b.start();
  b.deliver(2, Coordinator{1});
  b.deliver(3, Heartbeat{1});
  CHECK(b.ctx.belief() == Belief::follower(3, 1));
  b.deliver(2, Heartbeat{1});
  CHECK(b.ctx.belief() == Belief::follower(3, 1));
  // A newer epoch wins whatever the id.
  b.deliver(2, Coordinator{2});
  CHECK(b.ctx.belief() == Belief::follower(2, 2));
}

TEST_CASE("bully: a sink rejection changes nothing: the textbook coordinator knows no sink") {
  auto [token, accepted] = GENERATE(table<Epoch, bool>({{3, false}, {2, false}, {3, true}}));
  INFO("token " << token << (accepted ? " accepted" : " rejected"));
  Bench b(config_of(json{{"start", "none"}}, /*workload=*/true), 1, 3);
  b.start();
  make_coordinator(b, 3);
  b.run_for(150ms);
  REQUIRE(b.ctx.sink_calls.size() == 1);
  CHECK(b.ctx.sink_calls.front().token == 3);
  const std::size_t mark = b.mark();

  sim::SinkReply reply;
  reply.id = b.ctx.sink_calls.front().id;
  reply.token = token;
  reply.accepted = accepted;
  reply.highest_accepted = accepted ? 3 : 9;
  b.ctx.deliver(*b.node, reply);

  // Still coordinator of epoch 3, still writing with it, no election, no epoch learnt from the
  // sink: two sides of a partition cannot outbid each other through the database.
  CHECK(b.ctx.belief() == Belief::leader(3));
  CHECK(b.sent<Election>(mark).empty());
  CHECK(b.node->writer().active());
  b.run_for(100ms);
  REQUIRE(b.ctx.sink_calls.size() == 2);
  CHECK(b.ctx.sink_calls.back().token == 3);
}

TEST_CASE(
    "bully: step_down makes the coordinator a follower of nobody that holds an election after "
    "failure_timeout") {
  Bench b(config_of(json::object(), /*workload=*/true), 2, 3);
  b.start();
  REQUIRE(b.ctx.belief() == Belief::leader(1));
  b.run_for(120ms);
  const std::size_t mark = b.mark();
  const std::size_t writes = b.ctx.sink_calls.size();

  b.node->on_command(b.ctx, sim::Command::step_down);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
  CHECK_FALSE(b.node->writer().active());
  b.run_for(500ms - 1ns);
  CHECK(b.mark() == mark);  // no heartbeat, no election yet
  CHECK(b.ctx.sink_calls.size() == writes);

  // Highest id: nobody answers, it wins again with the next number.
  b.run_for(1ns);
  CHECK(b.ctx.belief() == Belief::leader(2));
  CHECK(b.sent<Coordinator>(mark) == Sends{{0, 2}, {1, 2}});
}

TEST_CASE("bully: stop announces a follower and leaves the node inert") {
  Bench b(config_of(json::object()), 1, 3);
  b.start();
  REQUIRE(b.ctx.belief() == Belief::candidate(1));
  const std::size_t mark = b.mark();
  b.node->on_command(b.ctx, sim::Command::stop);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 0));
  CHECK_FALSE(b.ctx.next_timer().has_value());
  b.deliver(0, Election{1});
  b.run_for(5s);
  CHECK(b.mark() == mark);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 0));
}

TEST_CASE("bully: start chooses which nodes hold an election on their first start") {
  // Bit i set: node i holds an election at time 0 (in a cluster of four).
  auto [start, initiators] = GENERATE(table<std::string, unsigned>({
      {"all", 0b1111},
      {"lowest", 0b0001},
      {"none", 0b0000},
  }));
  INFO(start);
  for (NodeId self = 0; self < 4; ++self) {
    INFO("node " << self);
    Bench b(config_of(json{{"start", start}}), self, 4);
    b.start();
    const bool holds = ((initiators >> self) & 1u) != 0;
    if (!holds) {
      CHECK(b.ctx.belief() == Belief::follower(kNoNode, 0));
      CHECK(b.ctx.sent.empty());
      CHECK_FALSE(b.ctx.next_timer().has_value());  // idle: nothing to detect
    } else if (self == 3) {
      CHECK(b.ctx.belief() == Belief::leader(1));
    } else {
      CHECK(b.ctx.belief() == Belief::candidate(1));
      CHECK(b.sent<Election>().size() == static_cast<std::size_t>(3 - self));
    }
  }
}

// ---- Parameters ---------------------------------------------------------------------------------

TEST_CASE("bully: each parameter has its documented default") {
  const BullyConfig c = config_of(json::object());
  CHECK(c.answer_timeout == 100ms);
  CHECK(c.coordinator_timeout == 300ms);
  CHECK(c.heartbeat_interval == 100ms);
  CHECK(c.failure_timeout == 500ms);
  CHECK(c.start == StartMode::all);

  // The table says the same.
  std::map<std::string, std::string> defaults;
  for (const auto& spec : bully::bully_params())
    defaults[spec.name] = electsim::params::default_text(spec);
  CHECK(defaults == std::map<std::string, std::string>{{"answer_timeout", "100ms"},
                                                       {"coordinator_timeout", "300ms"},
                                                       {"heartbeat_interval", "100ms"},
                                                       {"failure_timeout", "500ms"},
                                                       {"start", "all"}});
}

TEST_CASE("bully: given parameters override the defaults") {
  const BullyConfig c = config_of(json{{"answer_timeout", "20ms"},
                                       {"coordinator_timeout", "1s"},
                                       {"heartbeat_interval", "250ms"},
                                       {"failure_timeout", "3s"},
                                       {"start", "lowest"}});
  CHECK(c.answer_timeout == 20ms);
  CHECK(c.coordinator_timeout == 1s);
  CHECK(c.heartbeat_interval == 250ms);
  CHECK(c.failure_timeout == 3s);
  CHECK(c.start == StartMode::lowest);
  CHECK(config_of(json{{"start", "none"}}).start == StartMode::none);
}

TEST_CASE("bully: a wrong or inconsistent parameter is one problem at its own pointer") {
  auto [params, pointer, says] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"answer_timeout": "0s"})", "/protocol/answer_timeout", "at least \"1ms\""},
      {R"({"coordinator_timeout": "0ms"})", "/protocol/coordinator_timeout", "at least \"1ms\""},
      {R"({"heartbeat_interval": 0})", "/protocol/heartbeat_interval", "at least \"1ms\""},
      {R"({"failure_timeout": "-1s"})", "/protocol/failure_timeout", "\"-1s\""},
      {R"({"answer_timeout": "ten"})", "/protocol/answer_timeout", "\"ten\""},
      {R"({"heartbeat_interval": "500ms"})", "/protocol/heartbeat_interval",
       "shorter than failure_timeout (500ms, the default)"},
      {R"({"failure_timeout": "100ms"})", "/protocol/failure_timeout",
       "longer than heartbeat_interval (100ms, the default)"},
      {R"({"heartbeat_interval": "2s", "failure_timeout": "1s"})", "/protocol/heartbeat_interval",
       "shorter than failure_timeout (1s)"},
      {R"({"start": "highest"})", "/protocol/start", "\"highest\""},
      {R"({"answer_timout": "1s"})", "/protocol/answer_timout", "answer_timeout"},
  }));
  INFO(params);
  Problems problems;
  const auto config = bully::read_config(json::parse(params), "/protocol", problems);
  CHECK_FALSE(config.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == pointer);
  const std::string text = problems.front().format();
  INFO(text);
  CHECK(text.find(says) != std::string::npos);
}

TEST_CASE("bully: the registry entry names its parameters and messages in order") {
  const auto& info = electsim::protocols::bully_protocol_info();
  CHECK(info.name == "bully");
  CHECK_FALSE(info.description.empty());
  std::vector<std::string> names;
  for (const auto& spec : info.params) names.push_back(spec.name);
  CHECK(names == std::vector<std::string>{"answer_timeout", "coordinator_timeout",
                                          "heartbeat_interval", "failure_timeout", "start"});
  CHECK(info.message_types ==
        std::vector<std::string>{"Election", "Answer", "Coordinator", "Heartbeat"});
  CHECK(type_of<Election>() == 0);
  CHECK(type_of<Heartbeat>() == 3);

  ClusterInfo cluster;
  cluster.node_count = 3;
  Problems problems;
  const auto prepared = info.prepare(json{{"start", "lowest"}}, "/protocol", cluster, problems);
  REQUIRE(prepared.has_value());
  CHECK(problems.empty());
  CHECK_FALSE(prepared->uses_store);
  CHECK_FALSE(prepared->leader_key.has_value());
  CHECK_FALSE(prepared->fencing.has_value());
  REQUIRE(prepared->factory);
  CHECK(prepared->factory(0) != nullptr);

  const auto rejected =
      info.prepare(json{{"failure_timeout", "50ms"}}, "/protocol", cluster, problems);
  CHECK_FALSE(rejected.has_value());
  CHECK(problems.size() == 1);
}

TEST_CASE("bully: every message survives encoding with its type and number") {
  const BullyMessage m = GENERATE(BullyMessage{Election{3}}, BullyMessage{Answer{4}},
                                  BullyMessage{Coordinator{5}}, BullyMessage{Heartbeat{6}});
  const sim::Message wire = bully::encode(m);
  CHECK(wire.type == m.index());
  const auto back = bully::decode(wire);
  REQUIRE(back.has_value());
  CHECK(*back == m);
  sim::Message unknown = wire;
  unknown.type = 4;
  CHECK_FALSE(bully::decode(unknown).has_value());
}

// ---- Clusters over the real kernel -------------------------------------------------------------

namespace {

constexpr sim::MessageType kElection = type_of<Election>();
constexpr sim::MessageType kAnswer = type_of<Answer>();
constexpr sim::MessageType kCoordinator = type_of<Coordinator>();

// Five nodes by default, one-way latency 1ms, the default timeouts unless `params` say otherwise.
Cluster bully_cluster(std::size_t n, json params, std::vector<sim::FaultSpec> faults = {},
                      bool workload = false) {
  ClusterSetup setup;
  setup.nodes = n;
  setup.duration = 10s;
  setup.faults = std::move(faults);
  setup.message_types = bully::kMessageTypeCount;
  return Cluster(std::move(setup), nodes_of<BullyNode>(config_of(std::move(params), workload)));
}

// Elections, Answers and Coordinators sent: everything but the Heartbeats.
std::uint64_t election_traffic(const Cluster& c) {
  return c.recorder().sent(kElection) + c.recorder().sent(kAnswer) +
         c.recorder().sent(kCoordinator);
}

sim::Time last_election_traffic(const Cluster& c) {
  return c.recorder().last_send({kElection, kAnswer, kCoordinator});
}

}  // namespace

TEST_CASE("bully: the highest id that is up leads, and every live node follows it at its epoch") {
  // Five nodes, every one holding an election at time 0; the listed ones crash right after (the
  // messages they sent at start still travel). One-way latency 1ms, default timeouts.
  auto [crashed, expected] = GENERATE(table<std::vector<NodeId>, std::vector<Belief>>({
      // Node 4 wins election 1 at once; the others' Elections are answered, its Coordinator
      // accepted.
      {{},
       {Belief::follower(4, 1), Belief::follower(4, 1), Belief::follower(4, 1),
        Belief::follower(4, 1), Belief::leader(1)}},
      // Node 4's Coordinator(1) arrives before anyone knows it is down; at 501ms every follower
      // misses it and holds election 2; node 3 hears no Answer from 4 and wins at 601ms.
      {{4},
       {Belief::follower(3, 2), Belief::follower(3, 2), Belief::follower(3, 2), Belief::leader(2),
        kDown}},
      {{3, 4}, {Belief::follower(2, 2), Belief::follower(2, 2), Belief::leader(2), kDown, kDown}},
      // A lower node down changes nothing for the others.
      {{2},
       {Belief::follower(4, 1), Belief::follower(4, 1), kDown, Belief::follower(4, 1),
        Belief::leader(1)}},
      {{0, 4}, {kDown, Belief::follower(3, 2), Belief::follower(3, 2), Belief::leader(2), kDown}},
      // Alone, node 0 follows the dead node 4 until failure_timeout, then wins election 2.
      {{1, 2, 3, 4}, {Belief::leader(2), kDown, kDown, kDown, kDown}},
  }));
  std::vector<sim::FaultSpec> faults;
  for (NodeId node : crashed) faults.push_back(crash_at(0ms, node));
  Cluster c = bully_cluster(5, json::object(), faults);
  c.run_until(3s);
  CHECK(c.beliefs() == expected);
}

TEST_CASE("bully: a recovering higher id takes over the cluster") {
  // Node 4 is down from time 0 to 1s: node 3 leads at epoch 2 (as above). Node 4 restarts with
  // its durable number 1, holds election 2, wins at once (nobody is higher) and every node,
  // node 3 included, accepts Coordinator(2) from the higher id.
  Cluster c = bully_cluster(5, json::object(), {crash_at(0ms, 4, 1s)});
  c.run_until(999ms);
  REQUIRE(c.belief(3) == Belief::leader(2));
  c.run_until(3s);
  CHECK(c.beliefs() == std::vector<Belief>{Belief::follower(4, 2), Belief::follower(4, 2),
                                           Belief::follower(4, 2), Belief::follower(4, 2),
                                           Belief::leader(2)});
  CHECK(c.recorder().first(4, Belief::leader(2)) == sim::Time(1s));
  CHECK(c.recorder().first(3, Belief::follower(4, 2)) == sim::Time(1s + 1ms));
}

TEST_CASE("bully: a partition into two groups elects a coordinator on each side") {
  // The partition starts at time 0, after every node has sent its first messages; those that
  // cross it are dropped on arrival. Each side's highest id hears no Answer from above within
  // answer_timeout (or has nobody above) and wins election 1: the classic Bully split brain.
  using Groups = std::vector<std::vector<sim::Endpoint>>;
  auto [groups, expected] = GENERATE(table<Groups, std::vector<Belief>>({
      {{{0, 1, 2}, {3, 4}},
       {Belief::follower(2, 1), Belief::follower(2, 1), Belief::leader(1), Belief::follower(4, 1),
        Belief::leader(1)}},
      {{{0, 1, 2, 3}, {4}},
       {Belief::follower(3, 1), Belief::follower(3, 1), Belief::follower(3, 1), Belief::leader(1),
        Belief::leader(1)}},
      {{{0}, {1, 2, 3, 4}},
       {Belief::leader(1), Belief::follower(4, 1), Belief::follower(4, 1), Belief::follower(4, 1),
        Belief::leader(1)}},
      // Node 0 shares a side with node 4 and follows it; nodes 1-3 elect node 3.
      {{{0, 4}, {1, 2, 3}},
       {Belief::follower(4, 1), Belief::follower(3, 1), Belief::follower(3, 1), Belief::leader(1),
        Belief::leader(1)}},
  }));
  Cluster c = bully_cluster(5, json::object(), {partition_at(0ms, groups)});
  c.run_until(3s);
  CHECK(c.beliefs() == expected);
}

TEST_CASE("bully: a healed partition converges on the highest id with a fresh epoch") {
  // {0,1,2} | {3,4} for 1s: node 2 leads its side at epoch 1 from 100ms, node 4 the other.
  // At 1000ms the links come back and both coordinators' heartbeats cross (node 2's first, its
  // timer having been set earlier in each round). At 1001ms: node 3 hears node 2, a lower id,
  // and bullies it with election 2; nodes 0, 1 and 2 hear node 4 at the same epoch and follow
  // the higher id. At 1002ms node 4 gets Election(2), newer than its epoch, and wins election 3
  // at once; at 1003ms every node accepts Coordinator(3).
  Cluster c = bully_cluster(5, json::object(), {partition_at(0ms, {{0, 1, 2}, {3, 4}}, 1s)});
  c.run_until(999ms);
  REQUIRE(c.belief(2) == Belief::leader(1));
  REQUIRE(c.belief(4) == Belief::leader(1));
  c.run_until(3s);
  const Belief follower = Belief::follower(4, 3);
  CHECK(c.beliefs() ==
        std::vector<Belief>{follower, follower, follower, follower, Belief::leader(3)});
  CHECK(c.recorder().first(2, Belief::follower(4, 1)) == sim::Time(1s + 1ms));
  CHECK(c.recorder().first(3, Belief::candidate(2)) == sim::Time(1s + 1ms));
  CHECK(c.recorder().first(4, Belief::leader(3)) == sim::Time(1s + 2ms));
  for (NodeId i = 0; i < 4; ++i) CHECK(c.recorder().first(i, follower) == sim::Time(1s + 3ms));
}

TEST_CASE("bully: the coordinator writes with its epoch as token, and its successor with its own") {
  // Node 4 leads at epoch 1 and writes every 100ms; it crashes at 1050ms. Its last heartbeat
  // left at 1000ms; the followers hold election 2 at 1501ms and node 3 wins it at 1601ms.
  Cluster c = bully_cluster(5, json::object(), {crash_at(1050ms, 4)}, /*workload=*/true);
  c.run_until(3s);
  REQUIRE(c.belief(3) == Belief::leader(2));
  CHECK(c.recorder().first(3, Belief::leader(2)) == sim::Time(1601ms));
  const auto& decisions = electsim::servers::sink_of(c.kernel()).decisions();
  REQUIRE_FALSE(decisions.empty());
  std::map<NodeId, std::vector<sim::Token>> tokens;
  for (const auto& d : decisions) {
    CHECK(d.accepted);
    tokens[d.writer].push_back(d.token);
  }
  CHECK(tokens.size() == 2);
  CHECK(std::all_of(tokens[4].begin(), tokens[4].end(), [](sim::Token t) { return t == 1; }));
  CHECK(std::all_of(tokens[3].begin(), tokens[3].end(), [](sim::Token t) { return t == 2; }));
  // Writes every 100ms from 100ms to 1000ms (the one due at 1100ms died with the node), then
  // from 1701ms to 2901ms.
  CHECK(tokens[4].size() == 10);
  CHECK(tokens[3].size() == 13);
}

TEST_CASE("bully: message counts match the textbook's best and worst cases") {
  // One-way latency L = 1ms, no loss, a single initiator; heartbeats are not counted.
  const std::size_t n = GENERATE(4, 8, 16, 32);
  INFO("n = " << n);
  const auto top = static_cast<NodeId>(n - 1);

  // Worst case: the lowest id starts (start "lowest").
  //   0:  node 0 holds election 1: n-1 Elections.
  //   L:  every node i >= 1 answers node 0 and holds election 2: n-1-i Elections each, and node
  //       n-1, with nobody above, wins at once: n-1 Coordinators.
  //   2L: every Election(2) is answered (node n-1 answers as coordinator, its epoch is not
  //       older, so it holds no new one); then Coordinator(2) reaches everyone.
  //   Elections: (n-1) + sum_{i=1}^{n-2} (n-1-i) = n(n-1)/2; Answers: one per Election, all
  //   receivers being up; Coordinators: n-1. Total n^2 - 1.
  Cluster worst = bully_cluster(n, json{{"start", "lowest"}});
  worst.run_until(3s);
  const std::uint64_t elections = n * (n - 1) / 2;
  CHECK(worst.recorder().sent(kElection) == elections);
  CHECK(worst.recorder().sent(kAnswer) == elections);
  CHECK(worst.recorder().sent(kCoordinator) == n - 1);
  const std::uint64_t worst_total = election_traffic(worst);
  CHECK(worst_total == n * n - 1);
  CHECK(worst.recorder().sent_from(bully::kMessageTypeCount) == 0);
  // All of it happened by the time the last node accepted node n-1 at epoch 2, at 2L.
  CHECK(worst.belief(top) == Belief::leader(2));
  for (NodeId i = 0; i < top; ++i) {
    CHECK(worst.recorder().first(i, Belief::follower(top, 2)) == sim::Time(2ms));
  }
  CHECK(last_election_traffic(worst) <= sim::Time(2ms));

  // Best case: nobody starts at time 0 (start "none"), node n-1 is down, and node n-2 alone
  // gives up on it (step_down): it holds election 1 after failure_timeout (500ms), sending one
  // Election to the dead node; nobody answers, so at 600ms it wins and sends n-2 Coordinators.
  const auto second = static_cast<NodeId>(n - 2);
  Cluster best =
      bully_cluster(n, json{{"start", "none"}}, {crash_at(0ms, top), step_down_at(0ms, second)});
  best.run_until(3s);
  CHECK(best.recorder().sent(kElection) == 1);
  CHECK(best.recorder().sent(kAnswer) == 0);
  CHECK(best.recorder().sent(kCoordinator) == n - 2);
  const std::uint64_t best_total = election_traffic(best);
  CHECK(best_total == n - 1);
  CHECK(best.belief(second) == Belief::leader(1));
  for (NodeId i = 0; i < second; ++i) {
    CHECK(best.recorder().first(i, Belief::follower(second, 1)) == sim::Time(601ms));
  }
  CHECK(last_election_traffic(best) == sim::Time(600ms));

  // Growth: the worst case is quadratic, the best linear, each within a constant band.
  const double worst_per_n2 = static_cast<double>(worst_total) / static_cast<double>(n * n);
  const double best_per_n = static_cast<double>(best_total) / static_cast<double>(n);
  CHECK(worst_per_n2 >= 0.9);
  CHECK(worst_per_n2 < 1.0);
  CHECK(best_per_n >= 0.7);
  CHECK(best_per_n < 1.0);
}
