// Tests of the run timeline: the recorder fed hand-made event sequences (beliefs, crashes, pauses,
// partitions, store and sink events, clock changes, a replicated store's members) and the SVG
// renderer (well formed, labelled, shared axis across compare panels, byte-identical output,
// bounded size for long runs).
// Long on purpose: the recorder and the renderer share the stream helpers here.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/trace.hpp"
#include "drawing/timeline.hpp"
#include "drawing/timeline_svg.hpp"
#include "servers/world.hpp"
#include "sim/clock.hpp"
#include "sim/store_types.hpp"
#include "tests/drawing/svg_check.hpp"

namespace {

using electsim::test::well_formed_error;

using namespace electsim;
using namespace electsim::analysis;
using namespace electsim::drawing;
using sim::EventKind;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kS = 1'000'000'000;

Time ms(std::int64_t v) {
  return Time(v * kMs);
}

// ---- Events by hand

sim::Event event(std::int64_t t_ms, EventKind kind) {
  sim::Event e;
  e.time = ms(t_ms);
  e.kind = kind;
  return e;
}

sim::Event belief(std::int64_t t_ms, NodeId node, sim::Role role, Epoch epoch,
                  NodeId known = sim::kNoNode) {
  sim::Event e = event(t_ms, EventKind::belief);
  e.node = node;
  e.code = static_cast<std::uint16_t>(role);
  e.a = epoch;
  e.b = known;
  return e;
}

sim::Event on_node(std::int64_t t_ms, EventKind kind, NodeId node, std::int64_t a = 0) {
  sim::Event e = event(t_ms, kind);
  e.node = node;
  e.a = a;
  return e;
}

sim::Event fault(std::int64_t t_ms, sim::FaultKind kind, std::size_t index, sim::Endpoint node,
                 std::int64_t duration_ms = 0, std::string_view groups = {}) {
  sim::Event e = event(t_ms, EventKind::fault);
  e.code = static_cast<std::uint16_t>(kind);
  e.node = node;
  e.a = static_cast<std::int64_t>(index);
  e.b = duration_ms * kMs;
  e.text = groups;
  return e;
}

sim::Event network_change(std::int64_t t_ms, sim::FaultKind kind, std::size_t index) {
  sim::Event e = event(t_ms, EventKind::network_change);
  e.code = static_cast<std::uint16_t>(kind);
  e.a = static_cast<std::int64_t>(index);
  return e;
}

const std::string kKey = "/election/leader";

sim::Event key_put(std::int64_t t_ms, NodeId owner, sim::LeaseId lease, sim::Revision revision) {
  sim::Event e = event(t_ms, EventKind::store_change);
  e.code = 0;
  e.node = owner;
  e.a = revision;
  e.b = lease;
  e.text = kKey;
  return e;
}

sim::Event key_delete(std::int64_t t_ms, sim::LeaseId lease, bool expired, sim::Revision revision) {
  sim::Event e = event(t_ms, EventKind::store_change);
  e.code = 1;
  e.a = revision;
  e.b = lease;
  e.c = expired ? 1 : 0;
  e.text = kKey;
  return e;
}

sim::Event keepalive(std::int64_t t_ms, NodeId node, sim::LeaseId lease, bool succeeded) {
  sim::Event e = event(t_ms, EventKind::store_apply);
  e.node = node;
  e.code = static_cast<std::uint16_t>(sim::StoreOp::lease_keepalive);
  e.b = succeeded ? 1 : 0;
  e.c = lease;
  return e;
}

sim::Event sink_write(std::int64_t t_ms, NodeId writer, sim::Token token, bool accepted) {
  sim::Event e = event(t_ms, EventKind::sink_write);
  e.node = writer;
  e.a = token;
  e.c = accepted ? 1 : 0;
  return e;
}

// A replicated store's member K announcing its Raft role; `leader` is a member index or -1.
sim::Event server_role(std::int64_t t_ms, std::size_t member, sim::Role role, Epoch term,
                       int leader = -1) {
  sim::Event e = event(t_ms, EventKind::server_role);
  e.node = sim::store_member_endpoint(member);
  e.code = static_cast<std::uint16_t>(role);
  e.a = term;
  e.b = leader < 0 ? sim::kNoNode : sim::store_member_endpoint(static_cast<std::size_t>(leader));
  return e;
}

TraceHeader header(std::size_t nodes, std::int64_t duration_ms, bool leader_key = false) {
  TraceHeader h;
  h.scenario = "hand-made";
  h.protocol = "test";
  h.seed = 7;
  h.node_count = nodes;
  h.duration = Duration(duration_ms * kMs);
  h.message_types = {"ping", "pong"};
  if (leader_key) h.leader_key = kKey;
  h.topology = legacy_topology(nodes, 1);
  return h;
}

// Feeds the same events to an analyzer and a recorder, as a run does.
struct Feed {
  TraceHeader h;
  Analyzer analyzer;
  TimelineRecorder recorder;

  explicit Feed(TraceHeader hdr, const sim::WorldConfig& world = {},
                std::optional<Duration> ttl = std::nullopt)
      : h(hdr), analyzer(hdr.analysis_config()), recorder(hdr, world, ttl, true) {
    sim::Event start = event(0, EventKind::run_start);
    start.a = static_cast<std::int64_t>(h.node_count);
    start.b = static_cast<std::int64_t>(h.seed);
    *this << start;
  }
  std::vector<sim::Event> fed;  // texts point at literals and kKey, which outlive the feed

  Feed& operator<<(const sim::Event& given) {
    sim::Event e = given;
    if (e.kind == EventKind::store_apply) {
      // The kernel sends every request it applies: a trace read back insists on it.
      sim::Event request = e;
      request.kind = EventKind::store_request;
      request.a = next_request;
      request.b = request.c = request.d = 0;
      push(request);
      e.d = next_request++;
    }
    push(e);
    return *this;
  }
  std::int64_t next_request = 1;
  void push(const sim::Event& e) {
    fed.push_back(e);
    analyzer.on_event(e);
    recorder.on_event(e);
  }
  Timeline finish(std::int64_t end_ms) {
    *this << event(end_ms, EventKind::run_end);
    return recorder.finish(analyzer.finish());
  }
};

std::vector<const BeliefSpan*> spans_of(const Timeline& tl, NodeId node) {
  std::vector<const BeliefSpan*> out;
  for (const BeliefSpan& b : tl.beliefs) {
    if (b.node == node) out.push_back(&b);
  }
  return out;
}

// ---- SVG checks (the tag-balance checker of plot_test.cpp)

// Set ELECTSIM_TIMELINE_DIR to a folder to look at the pictures these tests draw.
void keep(const std::string& name, const std::string& doc) {
  const char* dir = std::getenv("ELECTSIM_TIMELINE_DIR");
  if (dir == nullptr || *dir == 0) return;
  std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
  out << doc;
  CHECK(out.good());
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + what.size())) {
    ++n;
  }
  return n;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The whole <g ...> element that opens with `opening` (nested groups included), from `from`.
std::string group(const std::string& doc, const std::string& opening, std::size_t from = 0) {
  const std::size_t start = doc.find(opening, from);
  if (start == std::string::npos) return "";
  int depth = 0;
  std::size_t pos = start;
  while (pos < doc.size()) {
    const std::size_t open = doc.find("<g", pos + 1);
    const std::size_t close = doc.find("</g>", pos + 1);
    if (close == std::string::npos) return "";
    if (open != std::string::npos && open < close) {
      ++depth;
      pos = open;
    } else {
      if (depth == 0) return doc.substr(start, close + 4 - start);
      --depth;
      pos = close;
    }
  }
  return "";
}

// The x1 values of the lines in a group, in order.
std::vector<std::string> line_xs(const std::string& g) {
  std::vector<std::string> xs;
  const std::regex x1("x1=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(g.begin(), g.end(), x1); it != std::sregex_iterator(); ++it) {
    xs.push_back((*it)[1]);
  }
  return xs;
}

// A small run with everything the picture draws: 5 nodes, a leader paused past its lease, a new
// leader elected in the store, two leaders at once, a rejected stale write and a partition.
void sample_events(Feed& f) {
  for (NodeId n = 0; n < 5; ++n) f << belief(0, n, sim::Role::follower, 0);
  f << key_put(900, 1, 5, 3) << belief(1000, 1, sim::Role::leader, 3);
  for (NodeId n : {0, 2, 3, 4}) f << belief(1010, n, sim::Role::follower, 3, 1);
  f << sink_write(1200, 1, 3, true);
  for (std::int64_t t = 1500; t < 5000; t += 600) f << keepalive(t, 1, 5, true);
  f << sink_write(4800, 1, 3, true);
  f << fault(5000, sim::FaultKind::pause, 0, 1, 6000)
    << on_node(5000, EventKind::pause, 1, 6000 * kMs);
  f << key_delete(6700, 5, true, 4) << belief(6710, 2, sim::Role::candidate, 3);
  f << key_put(6800, 2, 6, 9) << belief(6800, 2, sim::Role::leader, 9);
  f << sink_write(7000, 2, 9, true);
  f << on_node(11000, EventKind::resume, 1) << sink_write(11010, 1, 3, false);
  f << belief(11020, 1, sim::Role::follower, 9, 2);
  f << fault(14000, sim::FaultKind::partition, 1, sim::kNoNode, 3000, "0,1|2,3,4,store")
    << network_change(14000, sim::FaultKind::partition, 1);
  f << network_change(17000, sim::FaultKind::heal, 1);
  f << fault(18000, sim::FaultKind::crash, 2, 3) << on_node(18000, EventKind::crash, 3);
}

// A store of three members: store:1 wins term 1, crashes at 5s and comes back at 8s; store:2
// wins term 2 meanwhile; store:0 stalls from 9s to 9.5s.
void replicated_store_events(Feed& f) {
  for (std::size_t m = 0; m < 3; ++m) f << server_role(0, m, sim::Role::follower, 0);
  for (NodeId n = 0; n < 3; ++n) f << belief(0, n, sim::Role::follower, 0);
  f << server_role(1000, 1, sim::Role::candidate, 1)
    << server_role(1010, 1, sim::Role::leader, 1, 1)
    << server_role(1020, 0, sim::Role::follower, 1, 1)
    << server_role(1020, 2, sim::Role::follower, 1, 1);
  f << fault(5000, sim::FaultKind::crash, 0, sim::store_member_endpoint(1), 3000)
    << on_node(5000, EventKind::crash, sim::store_member_endpoint(1));
  f << server_role(6000, 2, sim::Role::candidate, 2)
    << server_role(6010, 2, sim::Role::leader, 2, 2)
    << server_role(6020, 0, sim::Role::follower, 2, 2);
  f << on_node(8000, EventKind::restart, sim::store_member_endpoint(1))
    << server_role(8000, 1, sim::Role::follower, 1)
    << server_role(8030, 1, sim::Role::follower, 2, 2);
  f << on_node(9000, EventKind::store_pause, sim::kStoreEndpoint, 500 * kMs)
    << on_node(9500, EventKind::store_resume, sim::kStoreEndpoint);
}

TraceHeader replicated_header(std::size_t nodes, std::int64_t duration_ms) {
  TraceHeader h = header(nodes, duration_ms, true);
  h.uses_store = true;
  h.store_members = 3;
  const sim::ServerTraits member{true, sim::ServerLane::store, 0, false};
  h.topology = sim::Topology(nodes,
                             {{sim::store_member_endpoint(0), "store:0", "store", "store", member},
                              {sim::store_member_endpoint(1), "store:1", "store", "store", member},
                              {sim::store_member_endpoint(2), "store:2", "store", "store", member},
                              {sim::kSinkEndpoint, "sink", "sink", "", {}}},
                             {});
  return h;
}

std::pair<Timeline, Report> sample_run() {
  Feed f(header(5, 20'000, true), {}, Duration(2 * kS));
  sample_events(f);
  Timeline tl = f.finish(20'000);
  Report r = f.analyzer.finish();
  return {tl, r};
}

}  // namespace

// ---- The recorder

TEST_CASE("timeline: belief spans start and end at the announcements that bound them") {
  Feed f(header(2, 1000));
  f << belief(0, 0, sim::Role::follower, 0) << belief(100, 0, sim::Role::candidate, 1)
    << belief(150, 0, sim::Role::leader, 1) << belief(160, 1, sim::Role::follower, 1, 0);
  const Timeline tl = f.finish(1000);
  const auto zero = spans_of(tl, 0);
  REQUIRE(zero.size() == 3);
  CHECK(zero[0]->role == sim::Role::follower);
  CHECK(zero[0]->start == ms(0));
  CHECK(zero[0]->end == ms(100));
  CHECK(zero[1]->role == sim::Role::candidate);
  CHECK(zero[1]->epoch == 1);
  CHECK(zero[1]->end == ms(150));
  CHECK(zero[2]->role == sim::Role::leader);
  CHECK(zero[2]->start == ms(150));
  CHECK(zero[2]->end == ms(1000));
  CHECK(zero[2]->open_at_end);
  CHECK_FALSE(zero[1]->open_at_end);
  const auto one = spans_of(tl, 1);
  REQUIRE(one.size() == 1);
  CHECK(one[0]->known_leader == 0);
  CHECK(tl.duration == Duration(1000 * kMs));
  CHECK(tl.node_count == 2);
}

TEST_CASE("timeline: two beliefs at one instant leave no span of zero length") {
  Feed f(header(1, 1000));
  f << belief(100, 0, sim::Role::candidate, 1) << belief(100, 0, sim::Role::leader, 1);
  const Timeline tl = f.finish(1000);
  REQUIRE(tl.beliefs.size() == 1);
  CHECK(tl.beliefs[0].role == sim::Role::leader);
  CHECK(tl.beliefs[0].start == ms(100));
}

TEST_CASE("timeline: a crash ends a leader span and opens a down span until the restart") {
  Feed f(header(2, 10'000));
  f << belief(0, 0, sim::Role::leader, 1) << on_node(3000, EventKind::crash, 0)
    << on_node(5000, EventKind::restart, 0) << belief(5000, 0, sim::Role::follower, 1)
    << on_node(7000, EventKind::crash, 1, /*graceful*/ 1);
  const Timeline tl = f.finish(10'000);
  const auto zero = spans_of(tl, 0);
  REQUIRE(zero.size() == 2);
  CHECK(zero[0]->role == sim::Role::leader);
  CHECK(zero[0]->end == ms(3000));
  CHECK(zero[1]->start == ms(5000));
  REQUIRE(tl.downs.size() == 2);
  CHECK(tl.downs[0].node == 0);
  CHECK(tl.downs[0].start == ms(3000));
  CHECK(tl.downs[0].end == ms(5000));
  CHECK_FALSE(tl.downs[0].graceful);
  CHECK(tl.downs[1].node == 1);
  CHECK(tl.downs[1].graceful);
  CHECK(tl.downs[1].end == ms(10'000));
  CHECK(tl.downs[1].open_at_end);
}

TEST_CASE("timeline: a pause does not end a leader span and is a span of its own") {
  Feed f(header(1, 10'000));
  f << belief(0, 0, sim::Role::leader, 4) << on_node(2000, EventKind::pause, 0, 3000 * kMs)
    << on_node(3000, EventKind::pause, 0, 4000 * kMs)  // extended while frozen
    << on_node(7000, EventKind::resume, 0);
  const Timeline tl = f.finish(10'000);
  REQUIRE(tl.beliefs.size() == 1);
  CHECK(tl.beliefs[0].role == sim::Role::leader);
  CHECK(tl.beliefs[0].end == ms(10'000));
  REQUIRE(tl.pauses.size() == 1);
  CHECK(tl.pauses[0].endpoint == 0);
  CHECK(tl.pauses[0].start == ms(2000));
  CHECK(tl.pauses[0].end == ms(7000));
}

TEST_CASE("timeline: a crash during a pause ends the pause") {
  Feed f(header(1, 10'000));
  f << belief(0, 0, sim::Role::leader, 4) << on_node(2000, EventKind::pause, 0, 6000 * kMs)
    << on_node(4000, EventKind::crash, 0);
  const Timeline tl = f.finish(10'000);
  REQUIRE(tl.pauses.size() == 1);
  CHECK(tl.pauses[0].end == ms(4000));
  REQUIRE(tl.downs.size() == 1);
  CHECK(tl.downs[0].start == ms(4000));
}

TEST_CASE("timeline: split-brain spans cover exactly the overlap of leaders") {
  // Leader spans of nodes 0 and 1 (ms), and the split-brain stretches expected.
  using Case = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                          std::int64_t, std::size_t>;
  const auto [a0, a1, b0, b1, s0, s1, expected] =
      GENERATE(table<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                     std::int64_t, std::size_t>({
          Case{1000, 5000, 3000, 8000, 3000, 5000, 1},  // overlapping
          Case{1000, 8000, 3000, 4000, 3000, 4000, 1},  // one inside the other
          Case{1000, 3000, 3000, 8000, 0, 0, 0},        // touching: no time with two leaders
          Case{1000, 2000, 5000, 8000, 0, 0, 0},        // apart
      }));
  Feed f(header(3, 10'000));
  std::vector<std::pair<std::int64_t, sim::Event>> events = {
      {a0, belief(a0, 0, sim::Role::leader, 1)},
      {a1, belief(a1, 0, sim::Role::follower, 2)},
      {b0, belief(b0, 1, sim::Role::leader, 2)},
      {b1, belief(b1, 1, sim::Role::follower, 2)}};
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [t, e] : events) f << e;
  const Timeline tl = f.finish(10'000);
  const Report report = f.analyzer.finish();
  REQUIRE(tl.split_brain.size() == expected);
  Duration total{0};
  for (const SplitBrainSpan& s : tl.split_brain) total += s.end - s.start;
  CHECK(total == report.split_brain_time);
  CHECK(tl.split_brain.size() == report.split_brain_episodes);
  if (expected == 1) {
    CHECK(tl.split_brain[0].start == ms(s0));
    CHECK(tl.split_brain[0].end == ms(s1));
    CHECK(tl.split_brain[0].nodes == std::vector<NodeId>{0, 1});
  }
}

TEST_CASE("timeline: a split-brain stretch names every node that led during it") {
  Feed f(header(3, 10'000));
  f << belief(1000, 0, sim::Role::leader, 1) << belief(2000, 1, sim::Role::leader, 2)
    << belief(3000, 1, sim::Role::follower, 2) << belief(3000, 2, sim::Role::leader, 3)
    << belief(4000, 0, sim::Role::follower, 3);
  const Timeline tl = f.finish(10'000);
  REQUIRE(tl.split_brain.size() == 1);
  CHECK(tl.split_brain[0].start == ms(2000));
  CHECK(tl.split_brain[0].end == ms(4000));
  CHECK(tl.split_brain[0].nodes == std::vector<NodeId>{0, 1, 2});
}

TEST_CASE("timeline: a partition fault and its heal give each endpoint its side") {
  Feed f(header(5, 20'000));
  f << fault(5000, sim::FaultKind::partition, 0, sim::kNoNode, 4000, "0,1|2,3,4,store")
    << network_change(5000, sim::FaultKind::partition, 0)
    << network_change(9000, sim::FaultKind::heal, 0);
  const Timeline tl = f.finish(20'000);
  REQUIRE(tl.partitions.size() == 1);
  const PartitionSpan& p = tl.partitions[0];
  CHECK(p.start == ms(5000));
  CHECK(p.end == ms(9000));
  CHECK_FALSE(p.open_at_end);
  CHECK(p.side_count == 2);
  CHECK(p.side(0) == 0);
  CHECK(p.side(1) == 0);
  CHECK(p.side(2) == 1);
  CHECK(p.side(4) == 1);
  CHECK(p.side(sim::kStoreEndpoint) == 1);
  CHECK(p.side(sim::kSinkEndpoint) == -1);
  CHECK(p.label == "0,1 | 2,3,4,store");
  CHECK(p.causes == std::vector<std::size_t>{0});
  REQUIRE(tl.faults.size() == 1);
  CHECK(tl.faults[0].groups == "0,1|2,3,4,store");
}

TEST_CASE("timeline: a heal fault ends every partition, isolation and cut at once") {
  Feed f(header(5, 20'000));
  f << fault(1000, sim::FaultKind::isolate, 0, 3, 10'000)
    << network_change(1000, sim::FaultKind::isolate, 0);
  sim::Event cut = fault(2000, sim::FaultKind::cut, 1, 0, 10'000);
  cut.peer = sim::kStoreEndpoint;
  f << cut << network_change(2000, sim::FaultKind::cut, 1);
  f << fault(4000, sim::FaultKind::heal, 2, sim::kNoNode)
    << network_change(4000, sim::FaultKind::heal, 2);
  // The isolation's own end comes later and changes nothing any more.
  f << network_change(11'000, sim::FaultKind::heal, 0);
  const Timeline tl = f.finish(20'000);
  REQUIRE(tl.partitions.size() == 2);
  CHECK(tl.partitions[0].label == "3 isolated");
  CHECK(tl.partitions[0].side(3) == 0);
  CHECK(tl.partitions[0].side(0) == -1);
  CHECK(tl.partitions[0].end == ms(2000));
  // Isolation and cut together: node 3 alone, node 0 on the sending side, the store receiving.
  const PartitionSpan& both = tl.partitions[1];
  CHECK(both.start == ms(2000));
  CHECK(both.end == ms(4000));
  CHECK(both.side_count == 3);
  CHECK(both.side(3) != both.side(0));
  CHECK(both.side(0) != both.side(sim::kStoreEndpoint));
  CHECK(both.side(1) == -1);
  CHECK(both.causes == std::vector<std::size_t>{0, 1});
}

TEST_CASE("timeline: a one-way cut is labelled with who cannot reach whom") {
  Feed f(header(3, 5000));
  sim::Event cut = fault(1000, sim::FaultKind::cut, 0, 2, 1000);
  cut.peer = sim::kSinkEndpoint;
  f << cut << network_change(1000, sim::FaultKind::cut, 0)
    << network_change(2000, sim::FaultKind::heal, 0);
  const Timeline tl = f.finish(5000);
  REQUIRE(tl.partitions.size() == 1);
  CHECK(tl.partitions[0].label == "2 cannot reach sink");
  CHECK(tl.partitions[0].side(sim::kSinkEndpoint) == 1);
}

TEST_CASE("timeline: lease holder spans and renewals come from store events") {
  Feed f(header(3, 10'000, true));
  f << key_put(1000, 1, 5, 3) << keepalive(1500, 1, 5, true) << keepalive(2000, 1, 5, true)
    << keepalive(2100, 2, 8, true)    // another lease: not this hold's renewal
    << keepalive(2500, 1, 5, false);  // refused: not a renewal
  sim::Event other_key = key_put(2600, 2, 8, 4);
  other_key.text = "/other";
  f << other_key << key_delete(4000, 5, true, 5) << key_put(4200, 2, 8, 6)
    << key_delete(6000, 8, false, 7) << key_put(7000, 0, 9, 8) << key_put(8000, 1, 10, 9);
  const Timeline tl = f.finish(10'000);
  REQUIRE(tl.leader_key.size() == 4);
  const LeaseHold& first = tl.leader_key[0];
  CHECK(first.holder == 1);
  CHECK(first.lease == 5);
  CHECK(first.revision == 3);
  CHECK(first.start == ms(1000));
  CHECK(first.end == ms(4000));
  CHECK(first.ended_by == HoldEnd::expired);
  CHECK(first.renewals == std::vector<Time>{ms(1500), ms(2000)});
  CHECK(first.last_renewal() == ms(2000));
  CHECK(tl.leader_key[1].holder == 2);
  CHECK(tl.leader_key[1].ended_by == HoldEnd::deleted);
  CHECK(tl.leader_key[1].last_renewal() == ms(4200));
  CHECK(tl.leader_key[2].ended_by == HoldEnd::replaced);
  CHECK(tl.leader_key[2].end == ms(8000));
  CHECK(tl.leader_key[3].ended_by == HoldEnd::held_at_end);
  CHECK(tl.leader_key[3].end == ms(10'000));
}

TEST_CASE("timeline: a lease-less record rewritten by its holder counts as renewed") {
  Feed f(header(2, 10'000, true));
  f << key_put(1000, 0, sim::kNoLease, 2) << key_put(3000, 0, sim::kNoLease, 3)
    << key_put(5000, 0, sim::kNoLease, 4) << key_put(9000, 1, sim::kNoLease, 5);
  const Timeline tl = f.finish(10'000);
  REQUIRE(tl.leader_key.size() == 2);
  CHECK(tl.leader_key[0].renewals == std::vector<Time>{ms(3000), ms(5000)});
  CHECK(tl.leader_key[0].ended_by == HoldEnd::replaced);
}

TEST_CASE("timeline: clock segments read exactly what sim::ClockModel reads") {
  sim::WorldConfig world;
  world.node_count = 2;
  world.clocks.resize(2);
  world.clocks[0].offset = Duration(5 * kMs + 3);
  world.clocks[0].drift_ppb = 37'123;
  world.clocks[0].steps = {{ms(2000), Duration(100 * kMs)}, {ms(4500), Duration(-7 * kMs)}};
  world.clocks[1].drift_ppb = -250'000'001;
  sim::ClockConfig store_clock;
  store_clock.drift_ppb = 999;
  servers::Services services;
  services.store_clock = store_clock;
  world = servers::with_services(std::move(world), services);
  Feed f(header(2, 6000), world);

  // The kernel's clock faults: code 0 sets the drift, 1 steps, 2 sets the offset.
  auto change = [](std::int64_t t_ms, sim::Endpoint node, std::uint16_t what, std::int64_t drift,
                   std::int64_t amount) {
    sim::Event e = on_node(t_ms, EventKind::clock_change, node, drift);
    e.code = what;
    e.b = amount;
    return e;
  };
  f << change(1500, 1, 1, 0, 250 * kMs) << change(3000, 0, 0, -12'345, 0)
    << change(3000, sim::kStoreEndpoint, 0, 5000, 0) << change(4000, 0, 2, 0, 1 * kS)
    << change(4500, 1, 0, 777, 0);
  const Timeline tl = f.finish(6000);

  // The same history applied to models, checked at times in order.
  sim::ClockModel zero(world.clocks[0].offset, world.clocks[0].drift_ppb, world.clocks[0].steps);
  sim::ClockModel one(world.clocks[1].offset, world.clocks[1].drift_ppb, {});
  sim::ClockModel store(Duration(0), 999, {});
  bool applied_1500 = false, applied_3000 = false, applied_4000 = false, applied_4500 = false;
  for (std::int64_t t = 0; t <= 6000 * kMs; t += 123'456'789) {
    for (std::int64_t probe : {t, t + 1, t + 999'999}) {
      const Time at(probe);
      if (!applied_1500 && at >= ms(1500)) {
        one.add_step(ms(1500), Duration(250 * kMs));
        applied_1500 = true;
      }
      if (!applied_3000 && at >= ms(3000)) {
        zero.set_drift_at(ms(3000), -12'345);
        store.set_drift_at(ms(3000), 5000);
        applied_3000 = true;
      }
      if (!applied_4000 && at >= ms(4000)) {
        zero.set_offset_at(ms(4000), Duration(1 * kS));
        applied_4000 = true;
      }
      if (!applied_4500 && at >= ms(4500)) {
        one.set_drift_at(ms(4500), 777);
        applied_4500 = true;
      }
      INFO("t = " << probe);
      CHECK(tl.local_at(0, at) == zero.local_at(at));
      CHECK(tl.local_at(1, at) == one.local_at(at));
      CHECK(tl.local_at(sim::kStoreEndpoint, at) == store.local_at(at));
    }
  }
  // Segments start at 0 and at each change: node 0 at 0, 2s (step), 3s, 4s, 4.5s (step).
  REQUIRE(tl.clocks.size() == 2);
  std::vector<Time> starts;
  for (const TimelineClockSegment& s : tl.clocks[0]) starts.push_back(s.from);
  CHECK(starts == std::vector<Time>{ms(0), ms(2000), ms(3000), ms(4000), ms(4500)});
}

TEST_CASE(
    "timeline: sink writes are stale against the newest announced epoch, as the analyzer "
    "counts them") {
  Feed f(header(3, 10'000));
  f << sink_write(500, 0, 1, true)  // before any leader: not stale
    << belief(1000, 0, sim::Role::leader, 3) << sink_write(1100, 0, 3, true)
    << belief(2000, 1, sim::Role::leader, 5) << sink_write(2100, 0, 3, true)  // stale, accepted
    << sink_write(2200, 1, 5, true) << sink_write(2300, 0, 3, false);         // stale, rejected
  const Timeline tl = f.finish(10'000);
  const Report report = f.analyzer.finish();
  REQUIRE(tl.writes.size() == 5);
  const std::vector<bool> stale = {false, false, true, false, true};
  const std::vector<bool> accepted = {true, true, true, true, false};
  std::size_t stale_accepted = 0;
  std::size_t stale_rejected = 0;
  for (std::size_t i = 0; i < tl.writes.size(); ++i) {
    INFO("write " << i);
    CHECK(tl.writes[i].stale == stale[i]);
    CHECK(tl.writes[i].accepted == accepted[i]);
    if (tl.writes[i].stale) ++(tl.writes[i].accepted ? stale_accepted : stale_rejected);
  }
  CHECK(stale_accepted == report.stale_writes_accepted);
  CHECK(stale_rejected == report.stale_writes_rejected);
  CHECK(tl.writes[4].token == 3);
  CHECK(tl.writes[4].writer == 0);
}

TEST_CASE("timeline: faults, failovers and message counts are kept") {
  Feed f(header(3, 10'000));
  f << belief(0, 0, sim::Role::leader, 1) << fault(2000, sim::FaultKind::crash, 0, 0, 3000)
    << on_node(2000, EventKind::crash, 0) << belief(2600, 1, sim::Role::leader, 2);
  sim::Event skipped = fault(3000, sim::FaultKind::pause, 1, sim::kNoNode, 1000);
  skipped.c = 1;
  f << skipped;
  for (int i = 0; i < 5; ++i) {
    sim::Event send = event(3000 + i, EventKind::msg_send);
    send.code = i < 3 ? 0 : 1;
    f << send;
  }
  const Timeline tl = f.finish(10'000);
  const Report report = f.analyzer.finish();
  REQUIRE(tl.faults.size() == 2);
  CHECK(tl.faults[0].kind == sim::FaultKind::crash);
  CHECK(tl.faults[0].target == 0);
  CHECK(tl.faults[0].duration == Duration(3000 * kMs));
  CHECK(tl.faults[1].skipped);
  REQUIRE(tl.failovers.size() == 1);
  REQUIRE(report.failovers.size() == 1);
  CHECK(tl.failovers[0].failover == Duration(600 * kMs));
  CHECK(tl.failovers[0].new_leader == 1);
  CHECK(tl.messages_by_type == std::map<std::string, std::uint64_t>{{"ping", 3}, {"pong", 2}});
  CHECK(tl.summary.elections == report.elections);
}

TEST_CASE("timeline: a saved trace read back gives the timeline of the live run") {
  Feed f(header(5, 20'000, true), {}, Duration(2 * kS));
  sample_events(f);
  const Timeline live = f.finish(20'000);
  nlohmann::json h = {{"electsim_trace", 1},
                      {"scenario", f.h.scenario},
                      {"variant", f.h.variant},
                      {"protocol", f.h.protocol},
                      {"seed", f.h.seed},
                      {"nodes", f.h.node_count},
                      {"duration_ns", f.h.duration.count()},
                      {"message_types", f.h.message_types},
                      {"leader_key", *f.h.leader_key},
                      {"uses_store", f.h.uses_store}};
  std::string trace = h.dump() + "\n";
  for (const sim::Event& e : f.fed) trace += format_trace_event(e, f.h) + "\n";
  std::istringstream in(trace);
  TimelineRecorder offline(f.h, Duration(2 * kS), true);
  const TraceReadResult read = read_trace(in, &offline);
  INFO(read.error);
  REQUIRE(read.ok());
  const Timeline back = offline.finish(read.report);
  CHECK(back.beliefs.size() == live.beliefs.size());
  CHECK(back.leader_key.size() == live.leader_key.size());
  CHECK(back.partitions.size() == live.partitions.size());
  CHECK(render_timeline_svg(back) == render_timeline_svg(live));
}

TEST_CASE("timeline: a replicated store's members get role spans, downtime, pauses and leaders") {
  Feed f(replicated_header(3, 12'000));
  replicated_store_events(f);
  const Timeline tl = f.finish(12'000);
  CHECK(tl.replicated());
  CHECK(tl.store_members == 3);
  // store:1: follower, candidate, leader until its crash, then a follower of term 1 and of 2.
  std::vector<const BeliefSpan*> one;
  for (const BeliefSpan& b : tl.member_roles) {
    if (b.node == sim::store_member_endpoint(1)) one.push_back(&b);
  }
  REQUIRE(one.size() == 5);
  CHECK(one[1]->role == sim::Role::candidate);
  CHECK(one[2]->role == sim::Role::leader);
  CHECK(one[2]->epoch == 1);
  CHECK(one[2]->start == ms(1010));
  CHECK(one[2]->end == ms(5000));
  CHECK(one[4]->known_leader == sim::store_member_endpoint(2));
  CHECK(one[4]->open_at_end);
  // Member spans never reach the nodes' beliefs, so no split-brain is made of them.
  CHECK(tl.beliefs.size() == 3);
  REQUIRE(tl.member_downs.size() == 1);
  CHECK(tl.member_downs[0].node == sim::store_member_endpoint(1));
  CHECK(tl.member_downs[0].start == ms(5000));
  CHECK(tl.member_downs[0].end == ms(8000));
  // The store's stall is its member 0's, not the whole store's.
  CHECK(tl.store_pauses.empty());
  REQUIRE(tl.member_pauses.size() == 1);
  CHECK(tl.member_pauses[0].endpoint == sim::kStoreEndpoint);
  CHECK(tl.member_pauses[0].end == ms(9500));
  REQUIRE(tl.store_leaders.size() == 2);
  CHECK(tl.store_leaders[0].at == ms(1010));
  CHECK(tl.store_leaders[0].member == sim::store_member_endpoint(1));
  CHECK(tl.store_leaders[0].term == 1);
  CHECK(tl.store_leaders[0].previous == sim::kNoNode);
  CHECK(tl.store_leaders[1].member == sim::store_member_endpoint(2));
  CHECK(tl.store_leaders[1].term == 2);
  CHECK(tl.store_leaders[1].previous == sim::store_member_endpoint(1));
}

TEST_CASE("timeline: a single store has no member rows and keeps its own stalls") {
  Feed f(header(3, 5'000, true));
  f << on_node(1000, EventKind::store_pause, sim::kStoreEndpoint, 500 * kMs)
    << on_node(1500, EventKind::store_resume, sim::kStoreEndpoint);
  const Timeline tl = f.finish(5'000);
  CHECK_FALSE(tl.replicated());
  CHECK(tl.store_pauses.size() == 1);
  CHECK(tl.member_pauses.empty());
}

TEST_CASE("timeline: server_role events show the members the topology names, whatever the count") {
  TraceHeader h = header(3, 5'000);
  h.topology = legacy_topology(3, 2);  // the members are named; store_members still says 1
  Feed f(h);
  f << server_role(0, 0, sim::Role::follower, 0) << server_role(0, 1, sim::Role::follower, 0)
    << server_role(100, 1, sim::Role::leader, 1, 1);
  const Timeline tl = f.finish(5'000);
  CHECK(tl.replicated());
  CHECK(tl.store_members == 2);
  CHECK(tl.store_leaders.size() == 1);
}

TEST_CASE("timeline: a partition among the store's members gives each member its side") {
  Feed f(replicated_header(3, 20'000));
  f << fault(5000, sim::FaultKind::partition, 0, sim::kNoNode, 4000, "store:0|store:1,store:2")
    << network_change(5000, sim::FaultKind::partition, 0)
    << network_change(9000, sim::FaultKind::heal, 0);
  const Timeline tl = f.finish(20'000);
  REQUIRE(tl.partitions.size() == 1);
  const PartitionSpan& p = tl.partitions[0];
  CHECK(p.side(sim::kStoreEndpoint) == 0);
  CHECK(p.side(sim::store_member_endpoint(1)) == 1);
  CHECK(p.side(sim::store_member_endpoint(2)) == 1);
  CHECK(p.side(0) == -1);
  CHECK(p.side(sim::kSinkEndpoint) == -1);
  CHECK(p.label == "store:0 | store:1,store:2");
}

TEST_CASE("timeline: member spans and leader marks count toward the picture's item limit") {
  Feed f(replicated_header(3, 100'000));
  f.recorder.set_max_items(1000);
  for (std::int64_t k = 1; k <= 1000; ++k) {
    f << server_role(k * 10, 1, sim::Role::candidate, k)
      << server_role(k * 10 + 1, 1, sim::Role::leader, k, 1);
  }
  CHECK(f.recorder.overflowed());
}

TEST_CASE("timeline: a replicated store's saved trace read back gives the live picture") {
  Feed f(replicated_header(3, 12'000));
  replicated_store_events(f);
  const Timeline live = f.finish(12'000);
  nlohmann::json endpoints = nlohmann::json::array();
  for (const sim::NamedEndpoint& s : f.h.topology.servers()) {
    endpoints.push_back(
        {{"address", s.address}, {"name", s.name}, {"kind", s.kind}, {"group", s.group}});
  }
  nlohmann::json h = {{"electsim_trace", analysis::kTraceSchemaVersion},
                      {"scenario", f.h.scenario},
                      {"variant", f.h.variant},
                      {"protocol", f.h.protocol},
                      {"seed", f.h.seed},
                      {"nodes", f.h.node_count},
                      {"duration_ns", f.h.duration.count()},
                      {"message_types", f.h.message_types},
                      {"leader_key", *f.h.leader_key},
                      {"uses_store", f.h.uses_store},
                      {"endpoints", endpoints},
                      {"groups", nlohmann::json::array()}};
  std::string trace = h.dump() + "\n";
  for (const sim::Event& e : f.fed) trace += format_trace_event(e, f.h) + "\n";
  std::istringstream in(trace);
  TimelineRecorder offline(f.h);
  const TraceReadResult read = read_trace(in, &offline);
  INFO(read.error);
  REQUIRE(read.ok());
  const Timeline back = offline.finish(read.report);
  CHECK(back.member_roles.size() == live.member_roles.size());
  CHECK(back.store_leaders.size() == live.store_leaders.size());
  CHECK(render_timeline_svg(back) == render_timeline_svg(live));
}

// ---- The picture

TEST_CASE("timeline svg: the picture is well formed and labels every row, mark and finding") {
  const auto [tl, report] = sample_run();
  REQUIRE(tl.split_brain.size() == 1);
  REQUIRE(tl.failovers.size() == 1);
  REQUIRE(tl.failovers[0].failover);
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  for (int n = 0; n < 5; ++n) CHECK(contains(doc, ">node " + std::to_string(n) + "</text>"));
  CHECK(contains(doc, ">store</text>"));
  CHECK(contains(doc, ">sink</text>"));
  // Split-brain from 6.8s (node 2 leads) to 11.02s (node 1 steps down): 4.22s.
  CHECK(tl.split_brain[0].start == ms(6800));
  CHECK(tl.split_brain[0].end == ms(11'020));
  CHECK(contains(doc, ">split-brain 4.22s</text>"));
  // The pause at 5s took leader 1 away; node 2 led at 6.8s: failover 1.8s.
  CHECK(*tl.failovers[0].failover == Duration(1800 * kMs));
  CHECK(contains(doc, ">failover 1.8s</text>"));
  CHECK(contains(doc, ">GC pause 6s</text>"));
  CHECK(contains(doc, ">crashed</text>"));
  CHECK(contains(doc, "class=\"write-rejected\""));
  CHECK(contains(doc, ">rejected t3</text>"));
  CHECK(contains(doc, ">L e3</text>"));
  CHECK(contains(doc, ">L e9</text>"));
  // The store row names the holder's epoch, as every other row does, never the lease id.
  CHECK(contains(doc, ">node 1 (epoch 3)</text>"));
  CHECK_FALSE(contains(doc, "(lease 5)"));
  CHECK(contains(doc, "class=\"draining\""));
  CHECK(contains(doc, ">expired</text>"));
  // Partition sides by letter, and spelled out in the legend.
  CHECK(contains(doc, "data-side=\"A\""));
  CHECK(contains(doc, "data-side=\"B\""));
  CHECK(contains(doc, "= 2,3,4,store"));
  CHECK(contains(doc, "hand-made \xC2\xB7 test \xC2\xB7 seed 7"));
  // Nothing from outside the document.
  CHECK_FALSE(contains(doc, "href"));
  CHECK_FALSE(contains(doc, "@import"));
  CHECK_FALSE(contains(doc, "<image"));
  keep("timeline-sample.svg", doc);
}

TEST_CASE("timeline svg: split-brain is marked by a dashed outline and a label, not colour alone") {
  const auto [tl, report] = sample_run();
  const std::string doc = render_timeline_svg(tl);
  const std::string marks = group(doc, "<g class=\"split-brain\">");
  REQUIRE_FALSE(marks.empty());
  CHECK(contains(marks, "stroke-dasharray"));
  CHECK(contains(group(doc, "<g class=\"split-brain-label\">"), "split-brain 4.22s"));
}

TEST_CASE("timeline svg: a stale write the sink accepted is circled and labelled") {
  Feed f(header(2, 5000));
  f << belief(0, 0, sim::Role::leader, 1) << belief(1000, 1, sim::Role::leader, 2)
    << sink_write(1500, 0, 1, true);
  const Timeline tl = f.finish(5000);
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  CHECK(contains(doc, "class=\"write-stale\""));
  CHECK(contains(doc, ">stale t1</text>"));
  CHECK_FALSE(contains(doc, "class=\"write-rejected\""));
}

TEST_CASE("timeline svg: compare panels share one time axis spanning the longest run") {
  Feed a(header(3, 10'000));
  a << belief(0, 0, sim::Role::leader, 1);
  const Timeline short_run = a.finish(10'000);
  Feed b(header(5, 30'000));
  b << belief(0, 1, sim::Role::leader, 4);
  const Timeline long_run = b.finish(30'000);
  const std::string doc =
      render_timelines_svg({&short_run, &long_run}, {"raft", "lease"}, TimelineStyle{});
  keep("timeline-two-panels.svg", doc);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  CHECK(count(doc, "<g class=\"x-axis\"") == 1);
  CHECK(count(doc, "<g class=\"panel\"") == 2);
  const std::string axis = group(doc, "<g class=\"x-axis\"");
  CHECK(contains(axis, ">30s</text>"));
  CHECK(contains(axis, ">0s</text>"));
  // The same tick positions in both panels' grids.
  const std::string first = group(doc, "<g class=\"panel\" data-panel=\"0\">");
  const std::string second = group(doc, "<g class=\"panel\" data-panel=\"1\">");
  const std::vector<std::string> grid0 = line_xs(group(first, "<g class=\"grid\""));
  const std::vector<std::string> grid1 = line_xs(group(second, "<g class=\"grid\""));
  CHECK(grid0.size() >= 3);
  CHECK(grid0 == grid1);
  CHECK(contains(first, ">raft</text>"));
  CHECK(contains(second, ">lease</text>"));
  CHECK(contains(first, ">node 2</text>"));
  CHECK_FALSE(contains(first, ">node 3</text>"));
  CHECK(contains(second, ">node 4</text>"));
  // The shorter run shows where it ended.
  CHECK(contains(first, ">run ended</text>"));
  CHECK_FALSE(contains(second, ">run ended</text>"));
}

TEST_CASE("timeline svg: the same timeline gives the same bytes") {
  const auto [tl, report] = sample_run();
  const auto [again, report_again] = sample_run();
  CHECK(render_timeline_svg(tl) == render_timeline_svg(tl));
  CHECK(render_timeline_svg(tl) == render_timeline_svg(again));
  CHECK(render_timelines_svg({&tl, &again}, {"a", "b"}) ==
        render_timelines_svg({&tl, &again}, {"a", "b"}));
}

TEST_CASE("timeline svg: pattern ids carry the chosen prefix") {
  const auto [tl, report] = sample_run();
  TimelineStyle style;
  style.id_prefix = "run2";
  const std::string doc = render_timeline_svg(tl, style);
  CHECK(contains(doc, "id=\"run2-down\""));
  CHECK(contains(doc, "url(#run2-pause)"));
  CHECK_FALSE(contains(doc, "url(#tl-"));
}

TEST_CASE("timeline svg: labels are escaped") {
  auto [tl, report] = sample_run();
  tl.header.scenario = "a<b & \"c\"";
  tl.verdict = "2 bounds broken: <split>";
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  CHECK(well_formed_error(doc).empty());
  CHECK(contains(doc, "a&lt;b &amp; &quot;c&quot;"));
  CHECK(contains(doc, "2 bounds broken: &lt;split&gt;"));
}

TEST_CASE("timeline svg: 50000 short spans are merged into a picture of bounded size") {
  // An hour of 9 nodes flapping between candidate, leader and follower every few hundred ms.
  Timeline tl;
  tl.header = header(9, 3'600'000);
  tl.node_count = 9;
  tl.duration = Duration(3600 * kS);
  const std::size_t spans = 50'000;
  const std::int64_t step = tl.duration.count() / static_cast<std::int64_t>(spans / 9 + 1);
  for (std::size_t i = 0; i < spans; ++i) {
    const auto node = static_cast<NodeId>(i % 9);
    const auto k = static_cast<std::int64_t>(i / 9);
    BeliefSpan b;
    b.node = node;
    b.role = static_cast<sim::Role>((i / 9 + i) % 3);
    b.epoch = k;
    b.start = Time(k * step);
    b.end = Time((k + 1) * step);
    tl.beliefs.push_back(b);
    if (i % 7 == 0) {
      tl.writes.push_back(SinkWriteMark{Time(k * step + 1), node, k, i % 21 != 0, i % 63 == 0});
    }
  }
  for (std::int64_t k = 0; k < 2000; ++k) {
    tl.split_brain.push_back(
        SplitBrainSpan{Time(k * 1'800'000'000), Time(k * 1'800'000'000 + 9), {0, 1}});
    tl.faults.push_back(FaultMark{Time(k * 1'800'000'000), static_cast<std::size_t>(k),
                                  sim::FaultKind::pause, 1, sim::kNoNode, Duration(kS), false, ""});
  }
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  keep("timeline-50000-spans.svg", doc);
  CHECK(doc.size() < 3'000'000);
  // Bars are bounded by the pixels across, not by the spans: at most a few per pixel per row.
  CHECK(count(doc, "<rect") < 9 * 3 * 1200);
  CHECK(contains(doc, "spans under a pixel, merged"));
}

TEST_CASE("timeline svg: a run of many nodes is still a valid picture") {
  Feed f(header(60, 10'000));
  for (NodeId n = 0; n < 60; ++n) f << belief(n * 10, n, sim::Role::follower, 0, 59);
  f << belief(1000, 59, sim::Role::leader, 1);
  const Timeline tl = f.finish(10'000);
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  keep("timeline-60-nodes.svg", doc);
  CHECK(count(doc, "class=\"node-row\"") == 60);
  CHECK(contains(doc, ">node 0</text>"));
}

TEST_CASE("timeline svg: an empty timeline still renders an axis") {
  const Timeline tl;
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  CHECK(contains(doc, "<g class=\"x-axis\""));
  const std::string none = render_timelines_svg({}, {});
  CHECK(well_formed_error(none).empty());
}

TEST_CASE(
    "timeline svg: a replicated store has a row per member with its roles and leader changes") {
  Feed f(replicated_header(3, 12'000));
  replicated_store_events(f);
  const Timeline tl = f.finish(12'000);
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  keep("timeline-store-members.svg", doc);
  for (int m = 0; m < 3; ++m) {
    CHECK(contains(doc, ">store:" + std::to_string(m) + "</text>"));
    CHECK(contains(doc, "<g class=\"member-row\" data-member=\"" + std::to_string(m) + "\">"));
  }
  // store:1 leads term 1 until its crash, drawn on its own row; store:2 leads term 2.
  const std::string one = group(doc, "<g class=\"member-row\" data-member=\"1\">");
  CHECK(contains(one, "class=\"leader\" data-term=\"1\""));
  CHECK(contains(one, ">L t1</text>"));
  CHECK(contains(one, "store:1: leader, term 1, 1.010s to 5.000s"));
  CHECK(contains(one, ">crashed</text>"));
  const std::string two = group(doc, "<g class=\"member-row\" data-member=\"2\">");
  CHECK(contains(two, ">L t2</text>"));
  CHECK_FALSE(contains(two, ">L t1</text>"));
  // store:0's stall is on its row.
  const std::string zero = group(doc, "<g class=\"member-row\" data-member=\"0\">");
  CHECK(contains(zero, "class=\"pause\""));
  // Each change of leader is marked and labelled with the new leader and its term.
  const std::string marks = group(doc, "<g class=\"store-leaders\">");
  CHECK(count(marks, "<g class=\"store-leader\"") == 2);
  CHECK(contains(marks, "data-member=\"2\" data-term=\"2\""));
  CHECK(contains(marks, ">store leader \xE2\x86\x92 store:1, term 1</text>"));
  CHECK(contains(marks, ">store leader \xE2\x86\x92 store:2, term 2</text>"));
  CHECK(contains(marks, "(was store:1)"));
  CHECK(contains(doc, "store leader change: the new leader and its term"));
  CHECK(contains(doc, "store member leading in term 1 (each term its own colour)"));
  CHECK(contains(doc, "store of 3 members, 2 leaders elected"));
  // The member rows are not node rows.
  CHECK(count(doc, "class=\"node-row\"") == 3);
}

TEST_CASE("timeline svg: a single store draws no member rows and no store leader marks") {
  const auto [tl, report] = sample_run();
  const std::string doc = render_timeline_svg(tl);
  CHECK_FALSE(contains(doc, "member-row"));
  CHECK_FALSE(contains(doc, "store-leader"));
  CHECK_FALSE(contains(doc, "store:0"));
  CHECK_FALSE(contains(doc, "store:1"));
  CHECK_FALSE(contains(doc, "store of"));
}

TEST_CASE("timeline svg: many store leader changes close together share one mark") {
  Feed f(replicated_header(3, 3'600'000));
  for (std::int64_t k = 1; k <= 2000; ++k) {
    const auto m = static_cast<std::size_t>(k % 3);
    f << server_role(k * 1000, m, sim::Role::candidate, k)
      << server_role(k * 1000 + 1, m, sim::Role::leader, k, static_cast<int>(m))
      << server_role(k * 1000 + 2, m, sim::Role::follower, k);
  }
  const Timeline tl = f.finish(3'600'000);
  REQUIRE(tl.store_leaders.size() == 2000);
  const std::string doc = render_timeline_svg(tl);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  // An hour on about a thousand pixels: the marks are bounded by the pixels, not the changes.
  CHECK(count(doc, "<g class=\"store-leader\"") < 1200);
  CHECK(contains(doc, "store leader changes</text>"));
}

TEST_CASE("timeline svg: the colour legend names an epoch the run has, and none without leaders") {
  const auto [tl, report] = sample_run();  // leaders in epochs 3 and 9
  const std::string doc = render_timeline_svg(tl);
  CHECK_THAT(doc, Catch::Contains("leader in epoch 3 (each epoch its own colour)"));
  CHECK_THAT(doc, !Catch::Contains("leader in epoch 7"));
  Feed idle(header(3, 1'000));
  for (NodeId n = 0; n < 3; ++n) idle << belief(0, n, sim::Role::follower, 0);
  const std::string none = render_timeline_svg(idle.finish(1'000));
  CHECK_THAT(none, !Catch::Contains("leader in epoch"));
}
