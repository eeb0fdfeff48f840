// Tests of the span model (drawing/spans.hpp) that the timeline and the Perfetto writer share:
// which spans open and close on which events, in which order, for nodes, a replicated store's
// members, servers with a lane and the single store.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/trace.hpp"
#include "drawing/spans.hpp"

namespace {

using namespace electsim;
using drawing::OpenDown;
using drawing::OpenPause;
using drawing::OpenRole;
using drawing::SpanLane;
using drawing::SpanModel;
using drawing::SpanOwner;
using sim::Event;
using sim::EventKind;

constexpr std::int64_t kMs = 1'000'000;

const char* lane_name(SpanLane lane) {
  switch (lane) {
    case SpanLane::node:
      return "node";
    case SpanLane::member:
      return "member";
    case SpanLane::server:
      return "server";
    case SpanLane::store:
      return "store";
  }
  return "?";
}

// Writes every call as one line, times in ms: "close pause node 1 100-250 extended".
struct Log final : drawing::SpanListener {
  std::vector<std::string> lines;

  static std::string who(const SpanOwner& o) {
    return fmt::format("{} {}", lane_name(o.lane), o.index);
  }
  void role_opened(const SpanOwner& o, OpenRole& s) override {
    lines.push_back(fmt::format("open role {} {} e{} of {} at {}", who(o), sim::role_name(s.role),
                                s.epoch, s.known_leader, s.start.ns / kMs));
  }
  void role_closed(const SpanOwner& o, const OpenRole& s, sim::Time end) override {
    lines.push_back(fmt::format("close role {} {} {}-{}", who(o), sim::role_name(s.role),
                                s.start.ns / kMs, end.ns / kMs));
  }
  void down_opened(const SpanOwner& o, OpenDown& s) override {
    lines.push_back(fmt::format("open down {}{} at {}", who(o), s.graceful ? " graceful" : "",
                                s.start.ns / kMs));
  }
  void down_closed(const SpanOwner& o, const OpenDown& s, sim::Time end) override {
    lines.push_back(fmt::format("close down {} {}-{}", who(o), s.start.ns / kMs, end.ns / kMs));
  }
  void pause_opened(const SpanOwner& o, OpenPause& s) override {
    lines.push_back(
        fmt::format("open pause {} at {} planned {}", who(o), s.start.ns / kMs, s.planned_ns));
  }
  void pause_closed(const SpanOwner& o, const OpenPause& s, sim::Time end) override {
    std::string line = fmt::format("close pause {} {}-{}", who(o), s.start.ns / kMs, end.ns / kMs);
    if (s.extended) line += " extended";
    if (s.boundary) line += fmt::format(" boundary {}", s.boundary->ns / kMs);
    lines.push_back(line);
  }
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.swap(lines);
    return out;
  }
};

Event make(EventKind kind, std::int64_t ms, sim::Endpoint node, std::int64_t a = 0) {
  Event e;
  e.time = sim::Time(ms * kMs);
  e.kind = kind;
  e.node = node;
  e.a = a;
  return e;
}

Event belief(std::int64_t ms, sim::NodeId node, sim::Role role, sim::Epoch epoch,
             sim::NodeId leader = sim::kNoNode) {
  Event e = make(EventKind::belief, ms, node, epoch);
  e.code = static_cast<std::uint16_t>(role);
  e.b = leader;
  return e;
}

Event server_role(std::int64_t ms, std::size_t member, sim::Role role, sim::Epoch term,
                  sim::Endpoint leader = sim::kNoNode) {
  Event e = make(EventKind::server_role, ms, sim::store_member_endpoint(member), term);
  e.code = static_cast<std::uint16_t>(role);
  e.b = leader;
  return e;
}

sim::Topology three_members() {
  const sim::ServerTraits member{true, sim::ServerLane::store, 0, false};
  const sim::ServerTraits database{false, sim::ServerLane::process, 0, false};
  return sim::Topology(3,
                       {{sim::store_member_endpoint(0), "store:0", "store", "store", member},
                        {sim::store_member_endpoint(1), "store:1", "store", "store", member},
                        {sim::store_member_endpoint(2), "store:2", "store", "store", member},
                        {sim::kSinkEndpoint, "sink", "sink", "", {}},
                        {sim::kPostgresEndpoint, "postgres", "postgres", "", database}},
                       {});
}

}  // namespace

TEST_CASE("a crash ends the pause, then the role, then opens the downtime a restart ends") {
  const sim::Topology topology = analysis::legacy_topology(3, 1);
  SpanModel model(3, topology, false);
  Log log;
  model.on_event(belief(100, 1, sim::Role::leader, 4), log);
  model.on_event(make(EventKind::pause, 200, 1, 500), log);
  model.on_event(make(EventKind::crash, 300, 1, 1), log);
  model.on_event(make(EventKind::restart, 900, 1), log);
  CHECK(log.take() == std::vector<std::string>{
                          "open role node 1 leader e4 of -1 at 100",
                          "open pause node 1 at 200 planned 500",
                          "close pause node 1 200-300",
                          "close role node 1 leader 100-300",
                          "open down node 1 graceful at 300",
                          "close down node 1 300-900",
                      });
  CHECK_FALSE(model.node(1).role);
  CHECK_FALSE(model.node(1).down);
  CHECK(model.newest_epoch() == 4);
}

TEST_CASE("the same role announced again continues its span, a different one replaces it") {
  const sim::Topology topology = analysis::legacy_topology(3, 1);
  SpanModel model(3, topology, false);
  Log log;
  model.on_event(belief(100, 0, sim::Role::follower, 2, 1), log);
  model.on_event(belief(150, 0, sim::Role::follower, 2, 1), log);
  model.on_event(belief(200, 0, sim::Role::follower, 2, 2), log);
  CHECK(log.take() == std::vector<std::string>{
                          "open role node 0 follower e2 of 1 at 100",
                          "close role node 0 follower 100-200",
                          "open role node 0 follower e2 of 2 at 200",
                      });
  REQUIRE(model.node(0).role);
  CHECK(model.node(0).role->start == sim::Time(200 * kMs));
  // A follower's leader that is no node is none; an unknown role code is no belief.
  model.on_event(belief(300, 0, sim::Role::follower, 3, -5), log);
  Event bad = belief(400, 0, sim::Role::leader, 9);
  bad.code = 7;
  model.on_event(bad, log);
  CHECK(log.take() == std::vector<std::string>{
                          "close role node 0 follower 200-300",
                          "open role node 0 follower e3 of -1 at 300",
                      });
  CHECK_FALSE(model.newest_epoch());
}

TEST_CASE("a pause extended while it runs stays one span, a down process does not pause") {
  const sim::Topology topology = analysis::legacy_topology(2, 1);
  SpanModel model(2, topology, false);
  Log log;
  model.on_event(make(EventKind::pause, 100, 0, 50), log);
  model.on_event(make(EventKind::pause, 120, 0, 200), log);
  model.on_event(make(EventKind::resume, 320, 0), log);
  model.on_event(make(EventKind::crash, 400, 1), log);
  model.on_event(make(EventKind::pause, 450, 1, 100), log);
  model.on_event(make(EventKind::resume, 550, 1), log);
  CHECK(log.take() == std::vector<std::string>{
                          "open pause node 0 at 100 planned 50",
                          "close pause node 0 100-320 extended",
                          "open down node 1 at 400",
                      });
  // A role announced while down ends the downtime: a stream without its restart.
  model.on_event(belief(600, 1, sim::Role::candidate, 1), log);
  CHECK(log.take() == std::vector<std::string>{
                          "close down node 1 400-600",
                          "open role node 1 candidate e1 of -1 at 600",
                      });
}

TEST_CASE("a pause records the first role boundary strictly inside it") {
  const sim::Topology topology = analysis::legacy_topology(1, 1);
  SpanModel model(1, topology, false);
  Log log;
  model.on_event(belief(100, 0, sim::Role::follower, 1), log);
  model.on_event(make(EventKind::pause, 200, 0, 300), log);
  model.on_event(belief(200, 0, sim::Role::candidate, 2), log);  // at its start: not inside
  model.on_event(belief(260, 0, sim::Role::leader, 2), log);
  model.on_event(belief(280, 0, sim::Role::leader, 3), log);
  model.on_event(make(EventKind::resume, 500, 0), log);
  const std::vector<std::string> lines = log.take();
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.back() == "close pause node 0 200-500 boundary 260");
  CHECK(model.newest_epoch() == 3);
}

TEST_CASE("members, servers with a lane and the single store get spans of their own") {
  const sim::Topology topology = three_members();
  SECTION("a replicated store") {
    SpanModel model(3, topology, true);
    Log log;
    REQUIRE(model.server_rows() == std::vector<sim::Endpoint>{sim::kPostgresEndpoint});
    model.on_event(server_role(100, 1, sim::Role::leader, 2), log);
    model.on_event(server_role(110, 2, sim::Role::follower, 2, sim::store_member_endpoint(1)), log);
    model.on_event(make(EventKind::store_pause, 200, sim::kStoreEndpoint, 100), log);
    model.on_event(make(EventKind::store_resume, 300, sim::kStoreEndpoint), log);
    model.on_event(make(EventKind::crash, 400, sim::kPostgresEndpoint), log);
    model.on_event(make(EventKind::pause, 450, sim::kPostgresEndpoint, 10), log);
    model.finish(sim::Time(1000 * kMs), log);
    CHECK(log.take() == std::vector<std::string>{
                            "open role member 1 leader e2 of -1 at 100",
                            fmt::format("open role member 2 follower e2 of {} at 110",
                                        sim::store_member_endpoint(1)),
                            "open pause member 0 at 200 planned 100",
                            "close pause member 0 200-300",
                            "open down server 0 at 400",
                            "close role member 1 leader 100-1000",
                            "close role member 2 follower 110-1000",
                            "close down server 0 400-1000",
                        });
  }
  SECTION("a single store: its pauses are the store's, and a member's role makes it replicated") {
    SpanModel model(3, topology, false);
    Log log;
    model.on_event(make(EventKind::store_pause, 200, sim::kStoreEndpoint, 100), log);
    model.on_event(make(EventKind::store_resume, 300, sim::kStoreEndpoint), log);
    CHECK_FALSE(model.replicated());
    CHECK_FALSE(model.member_at(sim::kStoreEndpoint));
    model.on_event(server_role(400, 0, sim::Role::leader, 1), log);
    CHECK(model.replicated());
    CHECK(model.member_at(sim::kStoreEndpoint) == 0u);
    // The sink has no lane: nothing of it is drawn.
    model.on_event(make(EventKind::crash, 500, sim::kSinkEndpoint), log);
    CHECK(log.take() == std::vector<std::string>{
                            "open pause store 0 at 200 planned 100",
                            "close pause store 0 200-300",
                            "open role member 0 leader e1 of -1 at 400",
                        });
  }
}

TEST_CASE("finish closes each process's pause, role and downtime, nodes first") {
  const sim::Topology topology = analysis::legacy_topology(2, 1);
  SpanModel model(2, topology, false);
  Log log;
  model.on_event(belief(100, 1, sim::Role::leader, 1), log);
  model.on_event(make(EventKind::pause, 150, 1, 900), log);
  model.on_event(make(EventKind::crash, 200, 0), log);
  model.on_event(make(EventKind::pause, 250, sim::kStoreEndpoint, 900), log);
  log.take();
  model.finish(sim::Time(800 * kMs), log);
  CHECK(log.take() == std::vector<std::string>{
                          "close down node 0 200-800",
                          "close pause node 1 150-800",
                          "close role node 1 leader 100-800",
                          "close pause store 0 250-800",
                      });
  int open = 0;
  model.for_each([&](const SpanOwner&, const drawing::ProcessSpans& p) {
    open += p.role.has_value() + p.down.has_value() + p.pause.has_value();
  });
  CHECK(open == 0);
}
