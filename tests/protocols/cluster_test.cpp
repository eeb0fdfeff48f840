// Tests of the kernel-backed cluster fixture (tests/protocols/cluster.hpp) on Bully clusters: what
// it injects now does what the same fault in the schedule does, and its readers name the leader the
// kernel's beliefs name. Bully is used because its elections end at exact, known times.
#include <catch2/catch.hpp>

#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/bully/bully.hpp"
#include "protocols/bully/config.hpp"
#include "protocols/bully/messages.hpp"
#include "tests/protocols/cluster.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::bully::BullyConfig;
using electsim::protocols::bully::BullyNode;
using electsim::sim::Belief;
using electsim::sim::Duration;
using electsim::sim::NodeId;
using electsim::testing::Cluster;
using electsim::testing::ClusterSetup;
using electsim::testing::crash_at;
using electsim::testing::kDown;
using electsim::testing::nodes_of;
using electsim::testing::partition_at;
namespace sim = electsim::sim;
namespace bully = electsim::protocols::bully;

Cluster bully_cluster(std::size_t n, std::vector<sim::FaultSpec> faults = {}) {
  Problems problems;
  const auto config = bully::read_config(nlohmann::json::object(), "/protocol", problems);
  REQUIRE(config.has_value());
  ClusterSetup setup;
  setup.nodes = n;
  setup.duration = 10s;
  setup.faults = std::move(faults);
  setup.message_types = bully::kMessageTypeCount;
  return Cluster(std::move(setup), nodes_of<BullyNode>(*config));
}

}  // namespace

TEST_CASE("cluster fixture: run_until_leader stops at the first leader, which leader() names") {
  // Node 4 has nobody above it and wins election 1 the moment it starts.
  Cluster c = bully_cluster(5);
  CHECK(c.run_until_leader(1s) == NodeId(4));
  CHECK(c.now() == sim::Time(0ms));
  CHECK(c.recorder().first(4, Belief::leader(1)) == sim::Time(0ms));
  CHECK(c.recorder().leader_announcements() == 1);
}

TEST_CASE("cluster fixture: leader() is empty when nobody leads or two lead at one epoch") {
  // Every node but node 0 is down: node 0 follows the dead node 4 until failure_timeout.
  Cluster alone =
      bully_cluster(5, {crash_at(0ms, 1), crash_at(0ms, 2), crash_at(0ms, 3), crash_at(0ms, 4)});
  alone.run_until(100ms);
  CHECK_FALSE(alone.leader().has_value());
  CHECK(alone.beliefs() == std::vector<Belief>{Belief::follower(4, 1), kDown, kDown, kDown, kDown});
  // The classic split brain: each side's highest id wins election 1.
  Cluster split = bully_cluster(5, {partition_at(0ms, {{0, 1, 2}, {3, 4}})});
  split.run_until(3s);
  CHECK(split.belief(2) == Belief::leader(1));
  CHECK(split.belief(4) == Belief::leader(1));
  CHECK_FALSE(split.leader().has_value());
}

TEST_CASE("cluster fixture: a crash and a restart injected now are the scheduled crash") {
  Cluster scheduled = bully_cluster(5, {crash_at(1050ms, 4, 950ms)});
  scheduled.run_until(3s);
  Cluster injected = bully_cluster(5);
  injected.run_until(1050ms);
  injected.crash(4);
  CHECK_FALSE(injected.up(4));
  injected.run_until(2s);
  injected.restart(4);
  injected.run_until(3s);
  CHECK(injected.recorder().changes() == scheduled.recorder().changes());
  CHECK(injected.beliefs() == scheduled.beliefs());
  CHECK(injected.recorder().first(3, Belief::leader(2)) == sim::Time(1601ms));
}

TEST_CASE("cluster fixture: an isolated node keeps its own view until heal brings it back") {
  Cluster c = bully_cluster(5);
  c.run_until(1s);
  c.isolate(4);
  c.run_until(2s);
  // Nodes 0 to 3 gave up on node 4 and elected node 3; node 4 still believes it leads.
  CHECK(c.belief(3).role == sim::Role::leader);
  CHECK(c.belief(4) == Belief::leader(1));
  CHECK(c.leader() == NodeId(3));
  c.heal();
  c.run_for(1s);
  REQUIRE(c.leader() == NodeId(4));
  for (NodeId i = 0; i < 4; ++i) CHECK(c.belief(i) == Belief::follower(4, c.belief(4).epoch));
}

TEST_CASE("cluster fixture: cut drops both directions between two nodes") {
  // Two nodes: node 1 leads at epoch 1. Cut off, node 0 misses its heartbeats, gets no Answer to
  // its Election and leads epoch 2 alone; node 1 never hears of it.
  Cluster c = bully_cluster(2);
  c.run_until(1s);
  c.cut(0, 1);
  c.run_until(3s);
  CHECK(c.belief(0) == Belief::leader(2));
  CHECK(c.belief(1) == Belief::leader(1));
  CHECK(c.leader() == NodeId(0));
}

TEST_CASE(
    "cluster fixture: a paused leader is replaced, then takes the lead back when it resumes") {
  Cluster c = bully_cluster(5);
  c.run_until(1s);
  c.pause(4, 1s);
  c.run_until(1999ms);
  CHECK(c.leader() == NodeId(3));
  c.run_until(3s);
  CHECK(c.leader() == NodeId(4));
}

TEST_CASE("cluster fixture: step_clock moves a node's clock at once, skew from now on") {
  Cluster c = bully_cluster(3);
  c.run_until(1s);
  c.step_clock(0, 250ms);
  CHECK(c.kernel().local_now(0).ns - c.now().ns == Duration(250ms).count());
  c.skew(1, 1'000'000);  // 1 ms per second fast
  c.run_for(2s);
  CHECK(c.kernel().local_now(1).ns - c.now().ns == Duration(2ms).count());
  CHECK(c.kernel().local_now(2).ns == c.now().ns);
}
