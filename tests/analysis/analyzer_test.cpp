// Tests of the online analyzer: synthetic event streams with known answers for leader intervals,
// split-brain, same-epoch leaders, stale writes, failover, write outage, leaderless time and cost.
// Each stream is what the kernel would emit (sim/event.hpp); the expected values follow
// docs/metrics.md.
// Long on purpose: one synthetic stream per metric, all built with the stream helpers here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/expect.hpp"
#include "analysis/trace.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"

namespace {

using namespace electsim;
using analysis::AnalysisConfig;
using analysis::Analyzer;
using analysis::Report;
using sim::Duration;
using sim::Event;
using sim::EventKind;
using sim::FaultKind;
using sim::Time;

Time ms(std::int64_t n) {
  return Time(n * 1'000'000);
}
Duration dms(std::int64_t n) {
  return Duration(n * 1'000'000);
}

Event make(EventKind kind, std::int64_t at_ms) {
  Event e;
  e.time = ms(at_ms);
  e.kind = kind;
  return e;
}

Event run_start(std::int64_t nodes) {
  Event e = make(EventKind::run_start, 0);
  e.a = nodes;
  e.b = 42;
  return e;
}
Event run_end(std::int64_t at_ms) {
  return make(EventKind::run_end, at_ms);
}

Event belief(std::int64_t at_ms, sim::NodeId node, sim::Role role, sim::Epoch epoch,
             sim::NodeId known = sim::kNoNode) {
  Event e = make(EventKind::belief, at_ms);
  e.node = node;
  e.code = static_cast<std::uint16_t>(role);
  e.a = epoch;
  e.b = known;
  return e;
}
Event leader(std::int64_t at_ms, sim::NodeId node, sim::Epoch epoch) {
  return belief(at_ms, node, sim::Role::leader, epoch);
}
Event follower(std::int64_t at_ms, sim::NodeId node, sim::Epoch epoch) {
  return belief(at_ms, node, sim::Role::follower, epoch);
}

Event node_event(EventKind kind, std::int64_t at_ms, sim::NodeId node, std::int64_t a = 0) {
  Event e = make(kind, at_ms);
  e.node = node;
  e.a = a;
  return e;
}

Event fault(std::int64_t at_ms, FaultKind kind, sim::NodeId node, std::int64_t index,
            std::string_view groups = {}, sim::Endpoint peer = sim::kNoNode) {
  Event e = make(EventKind::fault, at_ms);
  e.code = static_cast<std::uint16_t>(kind);
  e.node = node;
  e.peer = peer;
  e.a = index;
  e.text = groups;
  return e;
}

Event sink_write(std::int64_t at_ms, sim::NodeId writer, sim::Token token, bool accepted) {
  Event e = make(EventKind::sink_write, at_ms);
  e.node = writer;
  e.a = token;
  e.b = 7;
  e.c = accepted ? 1 : 0;
  return e;
}

Event store_put(std::int64_t at_ms, std::string_view key, sim::NodeId owner) {
  Event e = make(EventKind::store_change, at_ms);
  e.code = 0;
  e.a = 10;
  e.node = owner;
  e.text = key;
  return e;
}

AnalysisConfig config(std::size_t nodes = 3, std::int64_t duration_ms = 1000) {
  AnalysisConfig c;
  c.node_count = nodes;
  c.duration = dms(duration_ms);
  c.message_types = {"ping", "vote"};
  c.topology = analysis::legacy_topology(nodes, 1);  // the store, the sink, postgres, redis:K
  return c;
}

Report analyze(const AnalysisConfig& c, const std::vector<Event>& events) {
  Analyzer analyzer(c);
  for (const Event& e : events) analyzer.on_event(e);
  return analyzer.finish();
}

}  // namespace

TEST_CASE("analyzer: two overlapping leaders give split-brain time and its first occurrence") {
  const Report r = analyze(config(), {run_start(3), leader(100, 0, 1), leader(300, 1, 2),
                                      follower(500, 0, 2), run_end(1000)});
  CHECK(r.split_brain_time == dms(200));
  CHECK(r.split_brain_episodes == 1);
  REQUIRE(r.first_split_brain);
  CHECK(r.first_split_brain->at == ms(300));
  CHECK(r.first_split_brain->nodes == std::vector<sim::NodeId>{0, 1});
  CHECK(r.first_split_brain->epochs == std::vector<sim::Epoch>{1, 2});
  REQUIRE(r.intervals.size() == 2);
  CHECK(r.intervals[0].start == ms(100));
  CHECK(r.intervals[0].end == ms(500));
  CHECK_FALSE(r.intervals[0].open_at_end);
  CHECK(r.intervals[1].end == ms(1000));
  CHECK(r.intervals[1].open_at_end);
  CHECK(r.first_leader_at == ms(100));
  CHECK(r.elections == 2);
}

TEST_CASE("analyzer: a hand-over at one instant is not a split brain") {
  // Node 1 announces at the same instant node 0 steps down: zero time with two leaders.
  const Report r = analyze(config(), {run_start(3), leader(100, 0, 1), leader(400, 1, 2),
                                      follower(400, 0, 2), run_end(1000)});
  CHECK(r.split_brain_time == Duration(0));
  CHECK(r.split_brain_episodes == 0);
  CHECK_FALSE(r.first_split_brain);
  CHECK(r.leaderless_time == dms(100));
}

TEST_CASE("analyzer: separate overlaps count as separate split-brain episodes") {
  const Report r =
      analyze(config(), {run_start(3), leader(0, 0, 1), leader(100, 1, 2), follower(150, 1, 2),
                         leader(600, 2, 3), node_event(EventKind::crash, 900, 2), run_end(1000)});
  CHECK(r.split_brain_time == dms(50 + 300));
  CHECK(r.split_brain_episodes == 2);
  REQUIRE(r.first_split_brain);
  CHECK(r.first_split_brain->at == ms(100));
  CHECK(r.leaderless_time == Duration(0));
}

TEST_CASE("analyzer: a paused leader keeps its interval through the pause") {
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), fault(200, FaultKind::pause, 0, 0),
                         node_event(EventKind::pause, 200, 0, dms(200).count()),
                         node_event(EventKind::resume, 400, 0), run_end(1000)});
  REQUIRE(r.intervals.size() == 1);
  CHECK(r.intervals[0].start == ms(100));
  CHECK(r.intervals[0].end == ms(1000));
  CHECK(r.intervals[0].open_at_end);
  CHECK(r.leaderless_time == dms(100));
}

TEST_CASE("analyzer: what ends a leader interval") {
  auto [kind, role, ends] = GENERATE(table<EventKind, sim::Role, bool>({
      {EventKind::crash, sim::Role::follower, true},
      {EventKind::belief, sim::Role::follower, true},
      {EventKind::belief, sim::Role::candidate, true},
      {EventKind::pause, sim::Role::follower, false},
      {EventKind::resume, sim::Role::follower, false},
      {EventKind::restart, sim::Role::follower, false},
      {EventKind::timer_fire, sim::Role::follower, false},
  }));
  INFO("event " << sim::event_kind_name(kind) << " role " << sim::role_name(role));
  Event next = kind == EventKind::belief ? belief(400, 0, role, 1) : node_event(kind, 400, 0);
  const Report r = analyze(config(), {run_start(3), leader(100, 0, 1), next, run_end(1000)});
  REQUIRE(r.intervals.size() == 1);
  CHECK(r.intervals[0].end == (ends ? ms(400) : ms(1000)));
  CHECK(r.intervals[0].open_at_end == !ends);
  CHECK(r.leaderless_time == (ends ? dms(100 + 600) : dms(100)));
  CHECK(r.leaderless_fraction == Approx(ends ? 0.7 : 0.1));
}

TEST_CASE("analyzer: a graceful stop (a crash with graceful set) ends the interval") {
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), fault(300, FaultKind::stop, 0, 0),
                         node_event(EventKind::crash, 300, 0, 1), run_end(1000)});
  REQUIRE(r.intervals.size() == 1);
  CHECK(r.intervals[0].end == ms(300));
  REQUIRE(r.failovers.size() == 1);
  CHECK(r.failovers[0].fault == FaultKind::stop);
  CHECK_FALSE(r.failovers[0].failover);
}

TEST_CASE("analyzer: a new epoch announced while leader starts a new interval") {
  const Report r = analyze(config(), {run_start(3), leader(100, 0, 1), leader(200, 0, 1),
                                      leader(300, 0, 2), run_end(1000)});
  REQUIRE(r.intervals.size() == 2);
  CHECK(r.intervals[0].end == ms(300));
  CHECK(r.intervals[1].epoch == 2);
  CHECK(r.elections == 2);
  CHECK(r.split_brain_time == Duration(0));
}

TEST_CASE("analyzer: two nodes leader in the same epoch are reported once per pair") {
  const Report r = analyze(
      config(), {run_start(3), leader(100, 0, 3), follower(200, 0, 3), leader(300, 1, 3),
                 node_event(EventKind::crash, 400, 1), node_event(EventKind::restart, 500, 1),
                 leader(600, 1, 3), leader(700, 2, 4), run_end(1000)});
  REQUIRE(r.same_epoch_leaders.size() == 1);
  CHECK(r.same_epoch_leaders_total == 1);
  CHECK(r.same_epoch_leaders[0].at == ms(300));
  CHECK(r.same_epoch_leaders[0].epoch == 3);
  CHECK(r.same_epoch_leaders[0].first == 0);
  CHECK(r.same_epoch_leaders[0].second == 1);
  // Node 1's second announcement of epoch 3 is no new election.
  CHECK(r.elections == 3);
  CHECK(r.intervals.size() == 4);
}

TEST_CASE("analyzer: a third leader in an epoch pairs with each earlier one") {
  const Report r = analyze(config(), {run_start(3), leader(100, 0, 5), leader(200, 1, 5),
                                      leader(300, 2, 5), run_end(1000)});
  CHECK(r.same_epoch_leaders_total == 3);
  CHECK(r.same_epoch_leaders.size() == 3);
}

TEST_CASE("analyzer: writes below the newest epoch are stale, accepted or rejected") {
  const Report r = analyze(
      config(), {run_start(3), sink_write(50, 2, 0, true), leader(100, 0, 1),
                 sink_write(150, 0, 1, true), leader(300, 1, 2), sink_write(350, 0, 1, true),
                 sink_write(400, 0, 1, false), sink_write(450, 1, 2, true), run_end(1000)});
  CHECK(r.sink_writes == 5);
  CHECK(r.writes_accepted == 4);
  CHECK(r.writes_rejected == 1);
  CHECK(r.stale_writes_accepted == 1);
  CHECK(r.stale_writes_rejected == 1);
  REQUIRE(r.stale_writes.size() == 2);
  CHECK(r.stale_writes[0].at == ms(350));
  CHECK(r.stale_writes[0].writer == 0);
  CHECK(r.stale_writes[0].token == 1);
  CHECK(r.stale_writes[0].newest_epoch == 2);
  CHECK(r.stale_writes[0].accepted);
  CHECK_FALSE(r.stale_writes[1].accepted);
}

TEST_CASE("analyzer: only a stale write below a token already accepted overwrote newer data") {
  // The sink reports the highest token it had accepted before each write (field d).
  auto write = [](std::int64_t at_ms, sim::NodeId writer, sim::Token token, bool accepted,
                  sim::Token highest_before) {
    Event e = sink_write(at_ms, writer, token, accepted);
    e.d = highest_before;
    return e;
  };
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), write(150, 0, 1, true, 0),
                         leader(300, 1, 2), write(320, 0, 1, true, 1), write(400, 1, 2, true, 1),
                         write(450, 0, 1, true, 2), write(460, 0, 1, false, 2), run_end(1000)});
  // 320: stale (epoch 2 announced) but nothing newer had reached the sink yet.
  // 450: stale and on top of token 2: an overwrite. 460: rejected, no overwrite.
  CHECK(r.stale_writes_accepted == 2);
  CHECK(r.stale_writes_overwriting == 1);
  CHECK(analysis::metric_value(r, "stale_writes_overwriting") == 1.0);
}

TEST_CASE("analyzer: stale-write findings are kept to the first 100 of each kind") {
  std::vector<Event> events = {run_start(3), leader(1, 0, 1), leader(2, 1, 9)};
  for (int i = 0; i < 150; ++i) events.push_back(sink_write(10 + i, 0, 1, true));
  for (int i = 0; i < 120; ++i) events.push_back(sink_write(200 + i, 0, 1, false));
  events.push_back(run_end(1000));
  const Report r = analyze(config(), events);
  CHECK(r.stale_writes_accepted == 150);
  CHECK(r.stale_writes_rejected == 120);
  CHECK(r.stale_writes.size() == 200);
}

TEST_CASE("analyzer: failover by belief runs from the fault to another node's leadership") {
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), sink_write(150, 0, 1, true),
                         sink_write(180, 0, 1, true), fault(200, FaultKind::crash, 0, 4),
                         node_event(EventKind::crash, 200, 0), leader(500, 1, 2),
                         sink_write(600, 1, 2, true), sink_write(700, 1, 2, true), run_end(1000)});
  REQUIRE(r.failovers.size() == 1);
  const auto& f = r.failovers[0];
  CHECK(f.fault_index == 4);
  CHECK(f.fault == FaultKind::crash);
  CHECK(f.fault_at == ms(200));
  CHECK(f.old_leader == 0);
  CHECK(f.old_epoch == 1);
  CHECK(f.new_leader == 1);
  CHECK(f.new_leader_at == ms(500));
  CHECK(f.failover == dms(300));
  CHECK(f.last_old_write == ms(180));
  CHECK(f.first_new_write == ms(600));
  CHECK(f.write_outage == dms(420));
}

Event deliver(std::int64_t at_ms, sim::NodeId to, sim::NodeId from, std::uint16_t type) {
  Event e = make(EventKind::msg_deliver, at_ms);
  e.node = to;
  e.peer = from;
  e.code = type;
  return e;
}

TEST_CASE(
    "analyzer: the heard endpoint is when every other live node has had a non-election message "
    "from the new leader") {
  // Types: 0 "ping" (a heartbeat), 1 "vote" (an election message).
  AnalysisConfig c = config(5);
  c.election_message_types = {"vote"};
  const std::vector<Event> before = {
      run_start(5), leader(100, 0, 1), fault(200, FaultKind::crash, 0, 0),
      node_event(EventKind::crash, 200, 0),
      // A vote from the candidate reaching node 2 late says nothing.
      leader(500, 1, 2), deliver(505, 2, 1, 1), deliver(510, 2, 1, 0), deliver(512, 3, 1, 0)};
  SECTION("all of them hear it") {
    std::vector<Event> events = before;
    events.push_back(deliver(520, 4, 1, 0));
    events.push_back(deliver(530, 4, 1, 0));
    events.push_back(run_end(1000));
    const Report r = analyze(c, events);
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].failover == dms(300));
    CHECK(r.failovers[0].heard_at == ms(520));
    CHECK(r.failovers[0].failover_heard == dms(320));
  }
  SECTION("a node that crashes before hearing it is no longer waited for") {
    std::vector<Event> events = before;
    events.push_back(node_event(EventKind::crash, 540, 4));
    events.push_back(run_end(1000));
    const Report r = analyze(c, events);
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].heard_at == ms(540));
  }
  SECTION("a node that never hears it leaves the endpoint unobserved") {
    std::vector<Event> events = before;
    events.push_back(run_end(1000));
    const Report r = analyze(c, events);
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].failover == dms(300));
    CHECK_FALSE(r.failovers[0].heard_at.has_value());
  }
  SECTION("a new leader that loses the lead before all hear it leaves it unobserved") {
    std::vector<Event> events = before;
    events.push_back(follower(515, 1, 3));
    events.push_back(deliver(520, 4, 1, 0));
    events.push_back(run_end(1000));
    const Report r = analyze(c, events);
    REQUIRE(r.failovers.size() == 1);
    CHECK_FALSE(r.failovers[0].heard_at.has_value());
  }
}

TEST_CASE("analyzer: the old leader winning again in a new epoch regained it, no failover") {
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), fault(200, FaultKind::step_down, 0, 0),
                         follower(200, 0, 1), leader(300, 0, 2), leader(800, 2, 3), run_end(1000)});
  REQUIRE(r.failovers.size() == 1);
  CHECK_FALSE(r.failovers[0].failover);
  CHECK(r.failovers[0].regained_at == ms(300));
  CHECK(r.failovers[0].regained_epoch == 2u);
  CHECK(analysis::metric_value(r, "failovers_unresolved") == 0.0);
  CHECK(analysis::metric_value(r, "failovers") == 0.0);
}

TEST_CASE("analyzer: the old leader announcing again in the same epoch keeps its failover open") {
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), fault(200, FaultKind::step_down, 0, 0),
                         follower(200, 0, 1), leader(300, 0, 1), leader(800, 2, 3), run_end(1000)});
  REQUIRE(r.failovers.size() == 1);
  CHECK_FALSE(r.failovers[0].regained_at);
  CHECK(r.failovers[0].new_leader == 2);
  CHECK(r.failovers[0].failover == dms(600));
}

TEST_CASE("analyzer: with a leader key, failover ends when another node holds the key") {
  AnalysisConfig c = config();
  c.leader_key = "/election/leader";
  const Report r =
      analyze(c, {run_start(3), leader(100, 0, 10), store_put(100, "/election/leader", 0),
                  fault(200, FaultKind::pause, 0, 0), store_put(250, "/election/leader", 0),
                  store_put(300, "/other", 1), store_put(350, "/election/leader", sim::kNoNode),
                  store_put(450, "/election/leader", 1), leader(480, 1, 20), run_end(1000)});
  REQUIRE(r.failovers.size() == 1);
  CHECK(r.failovers[0].new_leader == 1);
  CHECK(r.failovers[0].new_leader_at == ms(450));
  CHECK(r.failovers[0].failover == dms(250));
}

TEST_CASE("analyzer: with a leader key, another node's belief alone does not end failover") {
  AnalysisConfig c = config();
  c.leader_key = "/leader";
  const Report r =
      analyze(c, {run_start(3), leader(100, 0, 10), fault(200, FaultKind::crash, 0, 0),
                  node_event(EventKind::crash, 200, 0), leader(480, 1, 20), run_end(1000)});
  REQUIRE(r.failovers.size() == 1);
  CHECK_FALSE(r.failovers[0].failover);
  CHECK_FALSE(r.failovers[0].new_leader_at);
}

TEST_CASE("analyzer: which partitions take the leader away") {
  // Five nodes, node 0 leads. Endpoints in no group keep all their links.
  auto [groups, uses_store, taken] = GENERATE(table<std::string, bool, bool>({
      {"0,1|2,3,4", false, true},
      {"0,1,2|3,4", false, false},
      {"0,1,2|3,4,store", true, true},
      {"0,1,2|3,4,store", false, false},
      {"3,4|0,1,2,store", true, false},
      {"0,1,2,sink|3,4,store", true, true},
      {"1,2|3,4", true, false},
      {"0|1,2", false, false},
      {"0|1,2,3", false, true},
      {"0,store|1,2,3,4", true, true},
      {"0,1,2", true, false},
  }));
  INFO("groups " << groups << " uses_store " << uses_store);
  AnalysisConfig c = config(5);
  c.uses_store = uses_store;
  const Report r =
      analyze(c, {run_start(5), leader(100, 0, 1),
                  fault(200, FaultKind::partition, sim::kNoNode, 0, groups), run_end(1000)});
  CHECK(r.failovers.size() == (taken ? 1u : 0u));
}

TEST_CASE("analyzer: a cut from the leader to the store takes it away when the store is needed") {
  auto [from, to, uses_store, taken] = GENERATE(table<sim::Endpoint, sim::Endpoint, bool, bool>({
      {0, sim::kStoreEndpoint, true, true},
      {0, sim::kStoreEndpoint, false, false},
      {sim::kStoreEndpoint, 0, true, false},
      {1, sim::kStoreEndpoint, true, false},
      {0, 1, true, false},
  }));
  AnalysisConfig c = config();
  c.uses_store = uses_store;
  const Report r = analyze(c, {run_start(3), leader(100, 0, 1),
                               fault(200, FaultKind::cut, from, 0, {}, to), run_end(1000)});
  CHECK(r.failovers.size() == (taken ? 1u : 0u));
}

TEST_CASE("analyzer: faults that do not hit the current leader start no failover") {
  auto [kind, target, skipped] = GENERATE(table<FaultKind, sim::NodeId, bool>({
      {FaultKind::crash, 1, false},    // a follower
      {FaultKind::crash, 2, false},    // a deposed leader with a lower epoch
      {FaultKind::crash, 0, true},     // skipped: the role target resolved to nobody
      {FaultKind::restart, 0, false},  // not a fault that takes a node away
      {FaultKind::clock_step, 0, false},
  }));
  Event f = fault(300, kind, target, 0);
  f.c = skipped ? 1 : 0;
  const Report r =
      analyze(config(), {run_start(3), leader(50, 2, 1), leader(100, 0, 2), f, run_end(1000)});
  CHECK(r.failovers.empty());
}

TEST_CASE("analyzer: the highest-epoch leader is the one whose loss counts") {
  const Report r = analyze(config(), {run_start(3), leader(50, 2, 1), leader(100, 0, 2),
                                      fault(300, FaultKind::isolate, 0, 0), run_end(1000)});
  REQUIRE(r.failovers.size() == 1);
  CHECK(r.failovers[0].old_leader == 0);
  CHECK(r.failovers[0].old_epoch == 2);
  // Node 2 already leads, but no other node announces after the fault.
  CHECK_FALSE(r.failovers[0].failover);
}

TEST_CASE("analyzer: no failover record without a leader") {
  const Report r = analyze(config(), {run_start(3), fault(300, FaultKind::crash, 0, 0),
                                      node_event(EventKind::crash, 300, 0), run_end(1000)});
  CHECK(r.failovers.empty());
  CHECK(r.leaderless_time == dms(1000));
  CHECK(r.leaderless_fraction == Approx(1.0));
  CHECK_FALSE(r.first_leader_at);
}

TEST_CASE("analyzer: overlapping failovers each end at the next leader") {
  const Report r =
      analyze(config(), {run_start(3), leader(100, 0, 1), fault(200, FaultKind::pause, 0, 0),
                         fault(300, FaultKind::crash, 0, 1), node_event(EventKind::crash, 300, 0),
                         leader(700, 2, 2), run_end(1000)});
  REQUIRE(r.failovers.size() == 2);
  CHECK(r.failovers[0].failover == dms(500));
  CHECK(r.failovers[1].failover == dms(400));
  CHECK(r.failovers[1].fault_index == 1);
}

TEST_CASE("analyzer: write outage needs both the old leader's and the new leader's writes") {
  SECTION("the old leader never wrote") {
    const Report r =
        analyze(config(), {run_start(3), leader(100, 0, 1), fault(200, FaultKind::crash, 0, 0),
                           leader(300, 1, 2), sink_write(350, 1, 2, true), run_end(1000)});
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].failover == dms(100));
    CHECK_FALSE(r.failovers[0].last_old_write);
    CHECK(r.failovers[0].first_new_write == ms(350));
    CHECK_FALSE(r.failovers[0].write_outage);
  }
  SECTION("the new leader's write was rejected") {
    const Report r =
        analyze(config(), {run_start(3), leader(100, 0, 1), sink_write(150, 0, 1, true),
                           fault(200, FaultKind::crash, 0, 0), leader(300, 1, 2),
                           sink_write(350, 1, 2, false), run_end(1000)});
    REQUIRE(r.failovers.size() == 1);
    CHECK_FALSE(r.failovers[0].first_new_write);
    CHECK_FALSE(r.failovers[0].write_outage);
  }
  SECTION("the new leader wrote before its leadership was observed") {
    AnalysisConfig c = config();
    c.leader_key = "/l";
    const Report r = analyze(c, {run_start(3), leader(100, 0, 1), sink_write(150, 0, 1, true),
                                 fault(200, FaultKind::crash, 0, 0), sink_write(250, 2, 5, true),
                                 sink_write(260, 1, 4, true), store_put(300, "/l", 1),
                                 sink_write(320, 1, 4, true), run_end(1000)});
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].first_new_write == ms(260));
    CHECK(r.failovers[0].write_outage == dms(110));
  }
}

TEST_CASE("analyzer: cost counts messages by type, store requests by op, and per second") {
  std::vector<Event> events = {run_start(3)};
  auto msg = [](EventKind kind, std::uint16_t type) {
    Event e = make(kind, 10);
    e.node = 0;
    e.peer = 1;
    e.code = type;
    return e;
  };
  for (int i = 0; i < 3; ++i) events.push_back(msg(EventKind::msg_send, 0));
  events.push_back(msg(EventKind::msg_send, 1));
  events.push_back(msg(EventKind::msg_send, 9));
  events.push_back(msg(EventKind::msg_deliver, 0));
  events.push_back(msg(EventKind::msg_drop, 1));
  auto request = [](sim::StoreOp op) {
    Event e = make(EventKind::store_request, 20);
    e.node = 1;
    e.code = static_cast<std::uint16_t>(op);
    return e;
  };
  events.push_back(request(sim::StoreOp::txn));
  events.push_back(request(sim::StoreOp::lease_keepalive));
  events.push_back(request(sim::StoreOp::lease_keepalive));
  events.push_back(request(sim::StoreOp::get));
  events.push_back(run_end(2000));
  const Report r = analyze(config(3, 2000), events);
  CHECK(r.messages_sent == 5);
  CHECK(r.messages_delivered == 1);
  CHECK(r.messages_dropped == 1);
  CHECK(r.messages_by_type ==
        std::map<std::string, std::uint64_t>{{"ping", 3}, {"vote", 1}, {"type_9", 1}});
  CHECK(r.store_requests[static_cast<std::size_t>(sim::StoreOp::lease_keepalive)] == 2);
  CHECK(r.store_requests[static_cast<std::size_t>(sim::StoreOp::txn)] == 1);
  CHECK(r.store_requests[static_cast<std::size_t>(sim::StoreOp::put)] == 0);
  CHECK(r.store_requests_total == 4);
  CHECK(r.store_requests_per_second == Approx(2.0));
  CHECK(r.events == events.size());
  CHECK(r.duration == dms(2000));
}

TEST_CASE("analyzer: node count comes from run_start when the config leaves it out") {
  AnalysisConfig c = config(0);
  const Report r =
      analyze(c, {run_start(5), leader(100, 4, 1),
                  fault(200, FaultKind::partition, sim::kNoNode, 0, "4,0|1,2,3"), run_end(1000)});
  CHECK(r.node_count == 5);
  CHECK(r.failovers.size() == 1);
}

TEST_CASE("analyzer: a leader that writes on after its pause rode the fault out") {
  Event pause = fault(200, FaultKind::pause, 0, 0);
  pause.b = dms(100).count();  // the pause lasts 100 ms
  SECTION("a write after the pause settles it; a later crash is a failover of its own") {
    const Report r =
        analyze(config(), {run_start(3), leader(100, 0, 1), pause, sink_write(250, 0, 1, true),
                           sink_write(350, 0, 1, true), fault(500, FaultKind::crash, 0, 1),
                           node_event(EventKind::crash, 500, 0), leader(800, 1, 2), run_end(1000)});
    REQUIRE(r.failovers.size() == 2);
    CHECK(r.failovers[0].ridden_out);  // the write at 250 was inside the pause and did not count
    CHECK_FALSE(r.failovers[0].failover);
    CHECK(r.failovers[1].failover == dms(300));
    CHECK(*metric_value(r, "failovers_unresolved") == Approx(0));
    CHECK(*metric_value(r, "failover_max") == Approx(dms(300).count()));
  }
  SECTION("the writes a ridden-out pause stopped are a write outage, ended by its own write") {
    const Report r = analyze(
        config(), {run_start(3), leader(100, 0, 1), sink_write(150, 0, 1, true), pause,
                   sink_write(250, 0, 1, true), sink_write(350, 0, 1, true), run_end(1000)});
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].ridden_out);
    CHECK(r.failovers[0].last_old_write == ms(150));
    CHECK(r.failovers[0].first_new_write == ms(350));
    CHECK(r.failovers[0].write_outage == dms(200));
    CHECK(*metric_value(r, "write_outage_max") == Approx(dms(200).count()));
  }
  SECTION("still leading at the end, without writing, also rode it out") {
    const Report r = analyze(config(), {run_start(3), leader(100, 0, 1), pause, run_end(1000)});
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].ridden_out);
    CHECK(*metric_value(r, "failovers_unresolved") == Approx(0));
  }
  SECTION("a write inside the pause does not settle it; the takeover is its failover") {
    const Report r =
        analyze(config(), {run_start(3), leader(100, 0, 1), pause, sink_write(250, 0, 1, true),
                           leader(280, 1, 2), run_end(1000)});
    REQUIRE(r.failovers.size() == 1);
    CHECK_FALSE(r.failovers[0].ridden_out);
    CHECK(r.failovers[0].failover == dms(80));
  }
}

namespace {

Event store_request(std::int64_t at_ms, sim::NodeId node, std::int64_t id, sim::StoreOp op) {
  Event e = make(EventKind::store_request, at_ms);
  e.node = node;
  e.a = id;
  e.code = static_cast<std::uint16_t>(op);
  return e;
}
Event store_reply(std::int64_t at_ms, sim::NodeId node, std::int64_t id, sim::StoreOp op,
                  sim::Revision revision, sim::StoreError error = sim::StoreError::none) {
  Event e = make(EventKind::store_reply, at_ms);
  e.node = node;
  e.d = id;
  e.code = static_cast<std::uint16_t>(op);
  e.a = revision;
  e.b = error == sim::StoreError::none ? 1 : 0;
  e.c = static_cast<std::int64_t>(error);
  return e;
}
Event member_role(std::int64_t at_ms, std::size_t member, sim::Role role, sim::Epoch term) {
  Event e = make(EventKind::server_role, at_ms);
  e.node = sim::store_member_endpoint(member);
  e.code = static_cast<std::uint16_t>(role);
  e.a = term;
  return e;
}
Event raft_commit(std::int64_t at_ms, std::size_t leader, std::int64_t index, sim::Epoch term) {
  Event e = make(EventKind::raft_commit, at_ms);
  e.node = sim::store_member_endpoint(leader);
  e.a = index;
  e.b = term;
  e.c = 1'000'000;
  return e;
}

AnalysisConfig replicated() {
  AnalysisConfig c = config();
  c.uses_store = true;
  c.store_members = 3;
  c.topology = analysis::legacy_topology(c.node_count, 3);
  return c;
}

}  // namespace

TEST_CASE("analyzer: a read sent after a reply showed revision 5 must not show revision 4") {
  using sim::StoreOp;
  // Request 2 is sent at 30ms, after request 1's reply (revision 5) came at 20ms.
  const Report stale = analyze(
      replicated(), {run_start(3), store_request(10, 0, 1, StoreOp::txn),
                     store_reply(20, 0, 1, StoreOp::txn, 5), store_request(30, 1, 2, StoreOp::get),
                     store_reply(40, 1, 2, StoreOp::get, 4), run_end(1000)});
  CHECK(stale.store.linearizability_violations == 1);
  CHECK_FALSE(analysis::check(stale, {}).ok());
  // Overlapping requests may return in either order; failed ones and watches say nothing.
  const Report fine = analyze(
      replicated(), {run_start(3), store_request(10, 0, 1, StoreOp::txn),
                     store_request(15, 1, 2, StoreOp::get), store_reply(20, 0, 1, StoreOp::txn, 5),
                     store_reply(40, 1, 2, StoreOp::get, 4), store_request(50, 2, 3, StoreOp::get),
                     store_reply(60, 2, 3, StoreOp::get, 0, sim::StoreError::no_leader),
                     store_request(70, 2, 4, StoreOp::watch),
                     store_reply(80, 2, 4, StoreOp::watch, 1), run_end(1000)});
  CHECK(fine.store.linearizability_violations == 0);
  CHECK(analysis::check(fine, {}).ok());
}

TEST_CASE("analyzer: one client's many outstanding requests are each judged by their own floor") {
  using sim::StoreOp;
  // Node 0 has four requests out at once, all sent after a reply had shown revision 7, answered
  // out of order: the first's revision 5 and the last's 6 are stale, the others' 7 are not.
  const Report stale = analyze(
      replicated(), {run_start(3), store_request(10, 1, 1, StoreOp::txn),
                     store_reply(12, 1, 1, StoreOp::txn, 7), store_request(20, 0, 1, StoreOp::get),
                     store_request(21, 0, 2, StoreOp::get), store_request(22, 0, 3, StoreOp::get),
                     store_request(23, 0, 4, StoreOp::get), store_reply(30, 0, 3, StoreOp::get, 7),
                     store_reply(31, 0, 4, StoreOp::get, 6), store_reply(32, 0, 1, StoreOp::get, 5),
                     store_reply(33, 0, 2, StoreOp::get, 7), run_end(1000)});
  CHECK(stale.store.linearizability_violations == 2);
  // The same requests answered at revision 7 or later are fine, and a reply to a request already
  // answered (or never sent) is not judged again.
  const Report fine = analyze(
      replicated(), {run_start(3), store_request(10, 1, 1, StoreOp::txn),
                     store_reply(12, 1, 1, StoreOp::txn, 7), store_request(20, 0, 1, StoreOp::get),
                     store_request(21, 0, 2, StoreOp::get), store_request(22, 0, 3, StoreOp::get),
                     store_reply(30, 0, 3, StoreOp::get, 8), store_reply(31, 0, 1, StoreOp::get, 7),
                     store_reply(32, 0, 2, StoreOp::get, 9), store_reply(33, 0, 2, StoreOp::get, 1),
                     store_reply(34, 0, 9, StoreOp::get, 1), run_end(1000)});
  CHECK(fine.store.linearizability_violations == 0);
}

TEST_CASE("analyzer: two store leaders in one term or two terms committed at one index fail") {
  using sim::Role;
  const Report r = analyze(
      replicated(), {run_start(3), member_role(10, 0, Role::leader, 1), raft_commit(20, 0, 1, 1),
                     raft_commit(30, 0, 2, 1), member_role(40, 1, Role::leader, 1),
                     raft_commit(50, 1, 2, 2), raft_commit(60, 1, 1, 1), run_end(1000)});
  CHECK(r.store.same_term_leaders == 1);
  CHECK(r.store.commit_conflicts ==
        1);  // index 2: terms 1 and 2; index 1 again with term 1 is fine
  CHECK(r.store.commits == 4);
  REQUIRE(r.store.first_violation);
  CHECK(*r.store.first_violation == ms(40));
  const analysis::Verdict v = analysis::check(r, {});
  REQUIRE(v.breaches.size() == 1);
  CHECK(v.breaches[0].expectation.metric == "store_safety_violations");
}

TEST_CASE("analyzer: commits reported out of index order are still held to one term an index") {
  using sim::Role;
  // Index 3 and 5 come before the indices below them; then index 3 again with another term, 5
  // with two terms before 4 arrives, and finally 4, which takes 5 in: two conflicts.
  const Report r = analyze(
      replicated(), {run_start(3), member_role(10, 0, Role::leader, 1), raft_commit(20, 0, 1, 1),
                     raft_commit(21, 0, 3, 1), raft_commit(22, 0, 2, 1), raft_commit(23, 0, 3, 2),
                     raft_commit(24, 0, 5, 1), raft_commit(25, 0, 5, 2), raft_commit(26, 0, 4, 1),
                     raft_commit(27, 0, 5, 1), raft_commit(28, 0, 1, 1), run_end(1000)});
  CHECK(r.store.commits == 9);
  CHECK(r.store.commit_conflicts == 2);  // index 3 (terms 1 and 2), index 5 (terms 1 and 2)
  REQUIRE(r.store.first_violation);
  CHECK(*r.store.first_violation == ms(23));
}

TEST_CASE("analyzer: stall is time with no leader while no store member leads and runs") {
  using sim::Role;
  // The store's first leader at 100ms; the election's leader 200ms to 500ms; the store leader
  // crashes at 600ms and another member leads from 800ms.
  Event crash = make(EventKind::crash, 600);
  crash.node = sim::store_member_endpoint(0);
  const Report r = analyze(
      replicated(), {run_start(3), member_role(0, 0, Role::follower, 0),
                     member_role(100, 0, Role::leader, 1), leader(200, 0, 1), follower(500, 0, 1),
                     crash, member_role(800, 1, Role::leader, 2), run_end(1000)});
  CHECK(r.stall_time == dms(100 + 200));  // 0-100 and 600-800
  CHECK(r.store.unavailable_time == dms(300));
  CHECK(r.store.leader_changes == 1);
  CHECK(r.store.availability == Approx(0.7));
}

TEST_CASE(
    "analyzer: a store outage runs from the leader member's crash until a member leads again, "
    "and the first election is none") {
  using sim::Role;
  const Event crash = node_event(EventKind::crash, 500, sim::store_member_endpoint(0));
  const Event restart = node_event(EventKind::restart, 1460, sim::store_member_endpoint(0));
  // A follower's crash takes nothing away; the leader stepping down does.
  const Event follower_crash = node_event(EventKind::crash, 1500, sim::store_member_endpoint(2));
  const Report r = analyze(replicated(), {run_start(3), member_role(100, 0, Role::leader, 1), crash,
                                          member_role(1300, 1, Role::candidate, 2),
                                          member_role(1450, 1, Role::leader, 2), restart,
                                          follower_crash, member_role(1600, 1, Role::follower, 3),
                                          member_role(1700, 0, Role::leader, 3), run_end(2000)});
  CHECK(r.store.outages == std::vector<Duration>{dms(950), dms(100)});
  CHECK(r.store.leader_elections == 3);
}

TEST_CASE("analyzer: coordinator requests in steady state, before the first leader, and the herd") {
  // Two requests before anyone leads; one leader from 100 ms sends a keepalive every 500 ms (and
  // a database statement at 700 ms) until it crashes at 2000 ms; then five followers rush in the
  // same second (2400-2900 ms) and node 1 leads at 3000 ms; one more request at 3500 ms (inside
  // the second after the new leader) and one at 4500 ms (outside it).
  auto server_request = [](std::int64_t at_ms, sim::NodeId node) {
    Event e = make(EventKind::server_request, at_ms);
    e.node = node;
    e.peer = sim::kPostgresEndpoint;
    e.a = 99;
    e.text = "check";
    return e;
  };
  std::vector<Event> events = {run_start(6), store_request(0, 0, 1, sim::StoreOp::lease_grant),
                               store_request(50, 1, 2, sim::StoreOp::lease_grant),
                               leader(100, 0, 1)};
  std::int64_t id = 3;
  for (std::int64_t t = 500; t < 2000; t += 500) {
    events.push_back(store_request(t, 0, id++, sim::StoreOp::lease_keepalive));
    if (t == 500) events.push_back(server_request(700, 0));
  }
  events.push_back(fault(2000, FaultKind::crash, 0, 0));
  events.push_back(node_event(EventKind::crash, 2000, 0));
  events.push_back(store_request(2000, 0, id++, sim::StoreOp::get));  // at the fault: counts
  for (std::int64_t t = 2400; t <= 2900; t += 100) {
    events.push_back(
        store_request(t, static_cast<sim::NodeId>(1 + (t / 100) % 5), id++, sim::StoreOp::txn));
  }
  events.push_back(leader(3000, 1, 2));
  events.push_back(store_request(3500, 1, id++, sim::StoreOp::lease_keepalive));
  events.push_back(store_request(4500, 1, id++, sim::StoreOp::lease_keepalive));
  events.push_back(run_end(5000));
  const Report r = analyze(config(6, 5000), events);

  CHECK(r.requests_before_first_leader == 2);
  CHECK(r.server_requests_total == 1);
  CHECK(r.store_requests_total == 14);
  // Steady: 100-2000 ms and 3000-5000 ms (3.9 s); requests then: 3 keepalives, the statement,
  // and the two keepalives after the failover (the one at the fault's instant falls in the
  // failover).
  CHECK(r.steady_time == dms(3900));
  CHECK(r.steady_requests == 6);
  CHECK(r.steady_requests_per_second == Approx(6.0 / 3.9));
  // The busiest second from the fault on: 2000 ms plus the six txns at 2400-2900 ms; the
  // keepalive at 1500 ms came before the fault and does not count.
  REQUIRE(r.failovers.size() == 1);
  CHECK(r.failovers[0].requests_peak == 7);
  CHECK(r.failover_requests_peak == 7);
  CHECK(analysis::metric_value(r, "failover_requests_peak").value_or(-1) == Approx(7));
  CHECK(analysis::metric_value(r, "requests_before_first_leader").value_or(-1) == Approx(2));
  CHECK(analysis::metric_value(r, "coordinator_requests_steady_per_second").value_or(-1) ==
        Approx(6.0 / 3.9));
}

TEST_CASE("analyzer: the herd after the coordinator recovers, against the rate before its outage") {
  // Four requests a second until the store pauses at 12 s; two during the pause; it resumes at
  // 17 s, and ten requests come in its first second (17.0 to 17.9 s), three more at 18.05 to
  // 18.15 s; one refusal inside the window and one after it; the window closes 10 s after the
  // recovery.
  AnalysisConfig c = config(3, 30000);
  c.uses_store = true;
  std::vector<Event> events = {run_start(3)};
  std::int64_t id = 1;
  const auto request = [&](std::int64_t at_ms) {
    events.push_back(store_request(at_ms, 0, id++, sim::StoreOp::get));
  };
  for (std::int64_t t = 0; t < 12000; t += 250) request(t);
  events.push_back(make(EventKind::store_pause, 12000));
  request(13000);
  request(14000);
  events.push_back(make(EventKind::store_resume, 17000));
  for (std::int64_t t = 17000; t <= 17900; t += 100) {
    request(t);
    if (t == 17500) {
      events.push_back(
          store_reply(t, 1, 99, sim::StoreOp::txn, 0, sim::StoreError::too_many_requests));
    }
  }
  for (std::int64_t t = 18050; t <= 18150; t += 50) request(t);
  request(27100);  // after the window: closes it
  events.push_back(
      store_reply(27500, 1, 100, sim::StoreOp::txn, 0, sim::StoreError::too_many_requests));
  events.push_back(run_end(30000));
  const Report r = analyze(c, events);

  REQUIRE(r.store.recoveries.size() == 1);
  const analysis::CoordinatorRecovery& h = r.store.recoveries[0];
  CHECK(h.at == ms(17000));
  CHECK(h.outage == dms(5000));
  CHECK(h.first_second == 10);
  // The busiest second ends at 18.15 s: 17.2 to 17.9 s (eight) and the three after 18 s.
  CHECK(h.peak == 11);
  CHECK(h.peak_at == ms(18150));
  CHECK(h.refused == 1);
  // The ten whole seconds before the one the pause began in (2 to 11 s): four a second.
  REQUIRE(h.before_per_second);
  CHECK(*h.before_per_second == Approx(4.0));
  CHECK(analysis::metric_value(r, "recovery_requests_peak").value_or(-1) == Approx(11));
  CHECK(analysis::metric_value(r, "recovery_requests_refused").value_or(-1) == Approx(1));
  CHECK(r.store.requests_refused == 2);
}

TEST_CASE("analyzer: without a coordinator outage there is no recovery to measure") {
  AnalysisConfig c = config(3, 5000);
  c.uses_store = true;
  const Report r = analyze(c, {run_start(3), store_request(100, 0, 1, sim::StoreOp::get),
                               make(EventKind::store_pause, 200), run_end(5000)});
  // Paused to the end: an outage that never ended.
  CHECK(r.store.recoveries.empty());
  CHECK_FALSE(analysis::metric_value(r, "recovery_requests_peak"));
  CHECK_FALSE(analysis::metric_value(r, "recovery_requests_refused"));
}

namespace {

// A leader writing every 10 ms from `from_ms` to `to_ms` (inclusive), accepted, with its token.
void writes(std::vector<Event>& events, sim::NodeId writer, sim::Token token, std::int64_t from_ms,
            std::int64_t to_ms) {
  for (std::int64_t t = from_ms; t <= to_ms; t += 10) {
    events.push_back(sink_write(t, writer, token, true));
  }
}

AnalysisConfig writing_config(std::size_t nodes = 3, std::int64_t duration_ms = 1000) {
  AnalysisConfig c = config(nodes, duration_ms);
  c.write_interval = dms(10);  // an outage is a gap of more than 20 ms
  return c;
}

}  // namespace

TEST_CASE(
    "analyzer: a service outage runs from the last accepted write to the next legitimate one") {
  SECTION("a leader crash: one outage, named by the crash, ended by the new leader's write") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 300);
    events.push_back(fault(305, FaultKind::crash, 0, 0));
    events.push_back(node_event(EventKind::crash, 305, 0));
    events.push_back(leader(500, 1, 2));
    writes(events, 1, 2, 510, 990);
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    REQUIRE(r.outages_total == 1);
    const analysis::Outage& o = r.outages.front();
    CHECK(o.start == ms(300));
    CHECK(o.end == ms(510));
    CHECK(o.duration == dms(210));
    CHECK(o.writer_before == 0);
    CHECK(o.writer_after == 1);
    REQUIRE(o.causes.size() == 1);
    CHECK(o.causes[0].fault == FaultKind::crash);
    CHECK(o.causes[0].during);
    CHECK(analysis::outage_causes_text(o) == "during: crash of node 0 at 0.305s");
    CHECK(*metric_value(r, "outage_max") == Approx(dms(210).count()));
    CHECK(*metric_value(r, "outages_unresolved") == Approx(0));
    // From the first write at 20 ms to the end at 1000 ms, 210 ms were an outage.
    CHECK(*metric_value(r, "writable_fraction") == Approx(1.0 - 210.0 / 980.0));
    CHECK(r.coordinator_failovers.empty());  // the old leader's own crash: a node failover
  }
  SECTION("a gap no fault explains is an outage of its own: no fault, the leader changed") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 300);
    events.push_back(follower(310, 0, 1));
    events.push_back(leader(400, 2, 2));
    writes(events, 2, 2, 420, 990);
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    REQUIRE(r.outages_total == 1);
    CHECK(r.outages[0].no_fault());
    CHECK(analysis::outage_causes_text(r.outages[0]) == "no fault: the leader changed by itself");
    CHECK(r.failovers.empty());
  }
  SECTION("gaps up to two write intervals are no outage") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 300);
    writes(events, 0, 1, 320, 990);  // one write missed: a 20 ms gap
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    CHECK(r.outages_total == 0);
    CHECK(*metric_value(r, "outages") == Approx(0));
    CHECK(*metric_value(r, "writable_fraction") == Approx(1.0));
    CHECK_FALSE(metric_value(r, "outage_max"));
  }
  SECTION("a service that never writes again has an unresolved outage to the run's end") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 300);
    events.push_back(fault(305, FaultKind::crash, 0, 0));
    events.push_back(node_event(EventKind::crash, 305, 0));
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    REQUIRE(r.outages_total == 1);
    CHECK_FALSE(r.outages[0].end);
    CHECK(r.outages[0].duration == dms(700));
    CHECK(*metric_value(r, "outages_unresolved") == Approx(1));
    const std::vector<std::string> concerns = analysis::liveness_concerns(r);
    REQUIRE(concerns.size() == 1);
    CHECK(concerns[0] == "a service that never wrote again after 0.300s");
  }
  SECTION("a deposed leader's accepted write does not end the outage") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 300);
    events.push_back(leader(350, 1, 2));            // node 0 still believes: split-brain
    events.push_back(sink_write(400, 0, 1, true));  // its write is accepted (no fencing)
    writes(events, 1, 2, 500, 990);
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    REQUIRE(r.outages_total == 1);
    CHECK(r.outages[0].start == ms(300));
    CHECK(r.outages[0].end == ms(500));
  }
  SECTION("without a write interval (no workload) outages are not measured") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 300);
    events.push_back(run_end(1000));
    const Report r = analyze(config(), events);
    CHECK_FALSE(r.outages_measured);
    CHECK_FALSE(metric_value(r, "outages"));
    CHECK(analysis::liveness_concerns(r).empty());
  }
}

TEST_CASE(
    "analyzer: a leader change in an outage caused by a store fault is a coordinator failover") {
  std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
  writes(events, 0, 1, 20, 240);
  events.push_back(fault(250, FaultKind::crash, sim::store_member_endpoint(1), 0));
  events.push_back(node_event(EventKind::crash, 250, sim::store_member_endpoint(1)));
  writes(events, 0, 1, 250, 300);         // its lease still runs
  events.push_back(follower(320, 0, 1));  // its lease lapsed on the store
  events.push_back(leader(450, 2, 3));
  writes(events, 2, 3, 460, 990);
  events.push_back(run_end(1000));
  AnalysisConfig config = writing_config();
  config.topology = analysis::legacy_topology(config.node_count, 3);  // store:1 is a member
  const Report r = analyze(config, events);
  CHECK(r.failovers.empty());  // no fault hit a node
  REQUIRE(r.coordinator_failovers.size() == 1);
  const analysis::Failover& f = r.coordinator_failovers[0];
  CHECK(f.coordinator_target == sim::store_member_endpoint(1));
  CHECK(f.old_leader == 0);
  CHECK(f.new_leader == 2);
  CHECK(f.failover == dms(200));      // 250 -> 450
  CHECK(f.write_outage == dms(160));  // 300 -> 460
  CHECK(*metric_value(r, "coordinator_failovers") == Approx(1));
  CHECK(*metric_value(r, "coordinator_failover_max") == Approx(dms(160).count()));
  REQUIRE(r.outages_total == 1);
  CHECK(analysis::outage_causes_text(r.outages[0]) == "during: crash of store:1 at 0.250s");
}

TEST_CASE("analyzer: a fault ridden out with writes accepted throughout has no write outage") {
  Event partition = fault(200, FaultKind::partition, sim::kNoNode, 0, "0|1,2");
  partition.b = dms(300).count();
  SECTION("writes kept being accepted: zero") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 190);
    events.push_back(partition);
    writes(events, 0, 1, 200, 990);
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].ridden_out);
    CHECK(r.failovers[0].write_outage == Duration(0));
    CHECK(r.outages_total == 0);
  }
  SECTION("the writes stopped for a while: the longest gap the sink saw") {
    std::vector<Event> events = {run_start(3), leader(10, 0, 1)};
    writes(events, 0, 1, 20, 190);
    events.push_back(partition);
    writes(events, 0, 1, 200, 250);
    writes(events, 0, 1, 330, 990);
    events.push_back(run_end(1000));
    const Report r = analyze(writing_config(), events);
    REQUIRE(r.failovers.size() == 1);
    CHECK(r.failovers[0].ridden_out);
    CHECK(r.failovers[0].write_outage == dms(80));
    CHECK(r.failovers[0].last_old_write == ms(250));
  }
}

TEST_CASE("analyzer: two leaders interleaving writes under one token are equal-token writes") {
  SECTION("interleaved: counted, and an unbounded verdict fails") {
    const Report r =
        analyze(config(), {run_start(3), leader(10, 0, 1), leader(20, 1, 1),
                           sink_write(30, 0, 1, true), sink_write(40, 1, 1, true),
                           sink_write(50, 0, 1, true), sink_write(60, 1, 1, true), run_end(100)});
    CHECK(r.equal_token_writes == 2);
    REQUIRE(r.first_equal_token_write);
    CHECK(r.first_equal_token_write->at == ms(50));
    CHECK(r.first_equal_token_write->writer == 0);
    CHECK(r.first_equal_token_write->other == 1);
    const analysis::Verdict v = analysis::check(r, {});
    REQUIRE(v.breaches.size() == 1);
    CHECK(v.breaches[0].expectation.metric == "equal_token_writes");
    const std::vector<std::string> harm = analysis::harm_in(r);
    CHECK(std::find(harm.begin(), harm.end(),
                    "2 equal-token writes (two leaders under one token)") != harm.end());
    analysis::Expectation bound;
    bound.metric = "equal_token_writes";
    bound.min = 1;
    CHECK(analysis::check(r, std::vector<analysis::Expectation>{bound}).ok());
  }
  SECTION("a clean hand-over under the same token is no harm") {
    const Report r =
        analyze(config(),
                {run_start(3), leader(10, 0, 0), sink_write(30, 0, 0, true),
                 sink_write(40, 0, 0, true), node_event(EventKind::crash, 45, 0), leader(50, 1, 0),
                 sink_write(60, 1, 0, true), sink_write(70, 1, 0, true), run_end(100)});
    CHECK(r.equal_token_writes == 0);
    CHECK(analysis::check(r, {}).ok());
  }
}

TEST_CASE("analyzer: without ordered tokens, staleness follows the order of grants") {
  AnalysisConfig c = config();
  c.tokens_ordered = false;
  SECTION("the only live leader's writes are never stale, whatever number it writes") {
    // Node 1's token is a wall-clock reading taken after a step back: lower than node 0's.
    const Report r =
        analyze(c, {run_start(3), leader(10, 0, 500), sink_write(20, 0, 500, true),
                    node_event(EventKind::crash, 30, 0), leader(40, 1, 300),
                    sink_write(50, 1, 300, true), sink_write(60, 1, 300, true), run_end(100)});
    CHECK(r.stale_writes_accepted == 0);
    CHECK(r.stale_writes_overwriting == 0);
  }
  SECTION("a deposed leader's write after its successor's is stale and overwrites") {
    const Report r =
        analyze(c, {run_start(3), leader(10, 0, 0), sink_write(20, 0, 0, true), leader(40, 1, 0),
                    sink_write(50, 1, 0, true), sink_write(60, 0, 0, true), run_end(100)});
    CHECK(r.stale_writes_accepted == 1);
    CHECK(r.stale_writes_overwriting == 1);
    REQUIRE(r.first_overwrite);
    CHECK(r.first_overwrite->writer == 0);
    CHECK(r.equal_token_writes == 0);  // judged as overwrites, not by the equal numbers
  }
  SECTION("with ordered tokens the same numbers would be judged by value") {
    AnalysisConfig ordered = config();
    const Report r =
        analyze(ordered, {run_start(3), leader(10, 0, 500), sink_write(20, 0, 500, true),
                          node_event(EventKind::crash, 30, 0), leader(40, 1, 300),
                          sink_write(50, 1, 300, true), run_end(100)});
    CHECK(r.stale_writes_accepted == 1);
  }
}
