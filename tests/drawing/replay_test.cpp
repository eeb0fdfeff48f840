// Tests of the replay report: the page is self-contained and escapes what it embeds; its data
// holds every kept event and matches every send with its arrival; its clock segments read what
// the kernel's clocks read; its stale-write flags and split-brain findings agree with the
// analyzer; a replicated store's members are named in its data; the same run gives the same
// bytes. Runs are real kernel runs of a small protocol.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"
#include "analysis/expect.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "drawing/replay_html.hpp"
#include "drawing/timeline.hpp"
#include "drawing/timeline_svg.hpp"
#include "servers/world.hpp"
#include "sim/event_schema.hpp"
#include "sim/kernel.hpp"
#include "sim/protocol.hpp"
#include "tests/fault_specs.hpp"

namespace {

using namespace electsim;
using namespace electsim::analysis;
using namespace electsim::drawing;
using namespace std::chrono_literals;
using electsim::testing::node_fault_at;
using sim::EventKind;

// ---- A small protocol: node 0 leads epoch 1 from the start and keeps "/leader" on a store lease;
// at 1s node 1 declares itself leader in epoch 2 too (two leaders: split-brain, and node 0's
// writes become stale). Leaders ping every follower and write to the sink every 100ms; followers
// answer pings.

constexpr sim::MessageType kPing = 0;
constexpr sim::MessageType kPong = 1;
constexpr sim::TimerTag kTick = 1;
constexpr sim::TimerTag kUsurp = 2;
constexpr sim::Duration kLeaseTtl = 1s;

class Beacon final : public sim::Protocol {
 public:
  void on_start(sim::Context& ctx) override {
    if (ctx.self() == 0) {
      lead(ctx, 1);
      sim::StoreRequest grant;
      grant.op = sim::StoreOp::lease_grant;
      grant.ttl = kLeaseTtl;
      ctx.store(std::move(grant));
    } else {
      ctx.announce(sim::Belief::follower(0, 1));
      if (ctx.self() == 1) ctx.set_timer(1s, kUsurp);
    }
  }
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    if (message.type == kPing) ctx.send(from, sim::Message{kPong, {}});
  }
  void on_timer(sim::Context& ctx, sim::TimerId, sim::TimerTag tag) override {
    if (tag == kUsurp) {
      lead(ctx, 2);
      return;
    }
    ctx.broadcast(sim::Message{kPing, {}});
    ctx.sink_write(epoch_, ++payload_, sim::Duration(0));
    if (lease_ != sim::kNoLease) {
      sim::StoreRequest keepalive;
      keepalive.op = sim::StoreOp::lease_keepalive;
      keepalive.lease = lease_;
      ctx.store(std::move(keepalive));
    }
    ctx.set_timer(100ms, kTick);
  }
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override {
    if (reply.op != sim::StoreOp::lease_grant || reply.error != sim::StoreError::none) return;
    lease_ = reply.lease;
    sim::StoreRequest put;
    put.op = sim::StoreOp::put;
    put.key = "/leader";
    put.value = std::to_string(ctx.self());
    put.lease = lease_;
    ctx.store(std::move(put));
  }
  void on_watch(sim::Context&, const sim::WatchEvent&) override {}
  void on_sink_reply(sim::Context&, const sim::SinkReply&) override {}
  void on_command(sim::Context&, sim::Command) override {}

 private:
  void lead(sim::Context& ctx, sim::Epoch epoch) {
    epoch_ = epoch;
    ctx.announce(sim::Belief::leader(epoch));
    ctx.set_timer(100ms, kTick);
  }
  sim::Epoch epoch_ = 0;
  std::int64_t payload_ = 0;
  sim::LeaseId lease_ = sim::kNoLease;
};

// Node 0 freezes at 2s for 1.5s (its lease runs out in the store) and a partition cuts node 2
// off from 2.5s to 3s.
sim::WorldConfig small_world(std::uint64_t seed = 7, sim::ClockConfig store_clock = {}) {
  sim::WorldConfig world;
  world.seed = seed;
  world.duration = 4s;
  world.node_count = 3;
  world.network.latency = sim::Distribution::uniform_of(1ms, 9ms);
  world.faults.push_back(node_fault_at(2s, sim::FaultKind::pause, 0, 1500ms));
  sim::FaultSpec partition = node_fault_at(2500ms, sim::FaultKind::partition, sim::kNoNode, 500ms);
  partition.target = {};
  partition.groups = {{0, 1, sim::kStoreEndpoint, sim::kSinkEndpoint}, {2}};
  world.faults.push_back(partition);
  servers::Services services;
  services.store_clock = store_clock;
  return servers::with_services(std::move(world), services);
}

TraceHeader header_for(const sim::WorldConfig& world, std::string scenario = "beacon") {
  TraceHeader h;
  h.scenario = std::move(scenario);
  h.protocol = "beacon";
  h.seed = world.seed;
  h.node_count = world.node_count;
  h.duration = world.duration;
  h.message_types = {"ping", "pong"};
  h.leader_key = "/leader";
  h.uses_store = true;
  h.topology = sim::topology_of(world);  // as every run's header has it
  return h;
}

// Every event, for checks against the recorder.
struct Tape : sim::Observer {
  struct Kept {
    sim::Event event;
    std::string text;
  };
  std::vector<Kept> events;
  void on_event(const sim::Event& e) override {
    events.push_back({e, std::string(e.text)});
    events.back().event.text = {};
  }
};

struct Run {
  std::unique_ptr<ReplayRecorder> recorder;
  Report report;
  Verdict verdict;
  RunInfo info;
  sim::RunStats stats;
  Tape tape;
  std::string html;
};

// Mirrors runner::run_scenario: analyzer, hasher and the recorder watch one kernel run.
std::unique_ptr<Run> run_world(const sim::WorldConfig& world, const TraceHeader& header,
                               const std::string& svg = "") {
  auto run = std::make_unique<Run>();
  run->recorder = std::make_unique<ReplayRecorder>(header, world, kLeaseTtl, true);
  Analyzer analyzer(header.analysis_config());
  TraceHasher hasher;
  sim::Kernel kernel(world, [](sim::NodeId) { return std::make_unique<Beacon>(); });
  kernel.add_observer(&analyzer);
  kernel.add_observer(&hasher);
  kernel.add_observer(run->recorder.get());
  kernel.add_observer(&run->tape);
  run->stats = kernel.run();
  run->report = analyzer.finish();
  run->verdict = check(run->report, {});
  run->info.scenario = header.scenario;
  run->info.variant = header.variant;
  run->info.protocol = header.protocol;
  run->info.seed = world.seed;
  run->info.trace_hash = hasher.hex();
  run->info.events_processed = run->stats.events;
  run->info.duration = world.duration;
  run->html = render_replay_html(*run->recorder, run->report, run->verdict, run->info, svg);
  return run;
}

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The page's data blob, parsed.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"replay-data\">";
  const std::size_t from = html.find(open);
  REQUIRE(from != std::string::npos);
  const std::size_t begin = from + open.size();
  const std::size_t end = html.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(html.substr(begin, end - begin));
}

struct DecodedEvent {
  std::int64_t time = 0;
  int kind = 0;
  std::vector<std::int64_t> fields;
};

// Walks the flat event array the way the page's script does.
std::vector<DecodedEvent> decode_events(const nlohmann::json& data) {
  std::vector<std::size_t> arity;
  for (const auto& fields : data.at("fields")) arity.push_back(fields.size());
  const auto& ev = data.at("ev");
  std::vector<DecodedEvent> out;
  std::int64_t t = 0;
  for (std::size_t p = 0; p < ev.size();) {
    DecodedEvent e;
    t += ev.at(p).get<std::int64_t>();
    e.time = t;
    e.kind = ev.at(p + 1).get<int>();
    REQUIRE(e.kind >= 0);
    REQUIRE(static_cast<std::size_t>(e.kind) < arity.size());
    for (std::size_t j = 0; j < arity[static_cast<std::size_t>(e.kind)]; ++j) {
      e.fields.push_back(ev.at(p + 2 + j).get<std::int64_t>());
    }
    p += 2 + arity[static_cast<std::size_t>(e.kind)];
    out.push_back(std::move(e));
  }
  return out;
}

int kind_of(const nlohmann::json& data, const std::string& name) {
  const auto& kinds = data.at("names").at("kinds");
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == name) return static_cast<int>(i);
  }
  FAIL("no event kind " << name);
  return -1;
}

std::size_t field_of(const nlohmann::json& data, const std::string& kind, const std::string& name) {
  const auto& fields = data.at("fields").at(static_cast<std::size_t>(kind_of(data, kind)));
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i] == name) return i;
  }
  FAIL("no field " << name << " in " << kind);
  return 0;
}

const char* kSvgWithNamespaces =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
    "width=\"400\" height=\"100\" data-time-left=\"40\" data-time-right=\"380\" "
    "data-time-domain-ns=\"4000000000\"><rect x=\"40\" y=\"10\" width=\"340\" height=\"80\"/>"
    "</svg>\n";

}  // namespace

TEST_CASE("replay: the page is self-contained: no address, no link, no outside source") {
  const auto run = run_world(small_world(), header_for(small_world()), kSvgWithNamespaces);
  const std::string page = lower(run->html);
  CHECK(page.rfind("<!doctype html>", 0) == 0);
  for (const char* forbidden : {"http://", "https://", "<link", " src=", "url(", "@import",
                                "<iframe", "<img", "fetch(", "xmlhttprequest", "<?xml"}) {
    INFO("forbidden: " << forbidden);
    CHECK(page.find(forbidden) == std::string::npos);
  }
  // The picture is inline and scales: it got a viewBox from its width and height.
  CHECK(page.find("<svg width=\"400\"") == std::string::npos);
  CHECK(page.find("<svg viewbox=\"0 0 400 100\"") != std::string::npos);
  CHECK(count_of(page, "<script") == 2);
  CHECK(count_of(page, "</script>") == 2);
}

TEST_CASE("replay: the page embeds every kept event and counts the timer fires it leaves out") {
  const auto run = run_world(small_world(), header_for(small_world()));
  const nlohmann::json data = page_data(run->html);
  const std::vector<DecodedEvent> events = decode_events(data);

  std::map<int, std::size_t> expected;  // events by kind, timer fires left out
  std::size_t timer_fires = 0;
  for (const auto& kept : run->tape.events) {
    if (kept.event.kind == EventKind::timer_fire) {
      ++timer_fires;
    } else {
      ++expected[static_cast<int>(kept.event.kind)];
    }
  }
  std::map<int, std::size_t> found;
  for (const DecodedEvent& e : events) ++found[e.kind];

  CHECK(timer_fires > 0);
  CHECK(found == expected);
  CHECK(data.at("run").at("events_kept") == events.size());
  CHECK(data.at("run").at("events_total") == run->tape.events.size());
  CHECK(data.at("run").at("timer_fires") == timer_fires);
  CHECK(events.size() + timer_fires == run->tape.events.size());
  // Times survive the step encoding: the last event is run_end at the configured duration.
  REQUIRE_FALSE(events.empty());
  CHECK(events.back().kind == kind_of(data, "run_end"));
  CHECK(events.back().time == run->tape.events.back().event.time.ns);
  CHECK(data.at("run").at("seed") == "7");
}

TEST_CASE("replay: a replicated store's page names its members and keeps their roles") {
  TraceHeader h = header_for(small_world());
  h.store_members = 3;
  ReplayRecorder recorder(h, sim::WorldConfig{}, std::nullopt, false);
  auto at = [](std::int64_t ms, EventKind kind, sim::Endpoint node) {
    sim::Event e;
    e.time = sim::Time(ms * 1'000'000);
    e.kind = kind;
    e.node = node;
    return e;
  };
  auto role = [&](std::int64_t ms, std::size_t member, sim::Role r, sim::Epoch term,
                  sim::Endpoint leader) {
    sim::Event e = at(ms, EventKind::server_role, sim::store_member_endpoint(member));
    e.code = static_cast<std::uint16_t>(r);
    e.a = term;
    e.b = leader;
    return e;
  };
  recorder.on_event(at(0, EventKind::run_start, sim::kNoNode));
  for (std::size_t m = 0; m < 3; ++m) {
    recorder.on_event(role(0, m, sim::Role::follower, 0, sim::kNoNode));
  }
  recorder.on_event(role(100, 1, sim::Role::leader, 1, sim::store_member_endpoint(1)));
  recorder.on_event(at(500, EventKind::crash, sim::store_member_endpoint(1)));
  sim::Event failover = at(600, EventKind::client_failover, 0);
  failover.peer = sim::store_member_endpoint(2);
  failover.code = static_cast<std::uint16_t>(sim::FailoverReason::timeout);
  failover.a = 17;
  recorder.on_event(failover);
  sim::Event refresh = at(700, EventKind::lease_refresh, sim::store_member_endpoint(2));
  refresh.a = 2;
  refresh.b = 2;
  recorder.on_event(refresh);
  recorder.on_event(at(1000, EventKind::run_end, sim::kNoNode));
  CHECK(recorder.store_members() == 3);

  RunInfo info;
  info.scenario = "members";
  info.protocol = "beacon";
  const std::string html = render_replay_html(recorder, Report{}, Verdict{}, info, "");
  CHECK(html.find("a store of 3 members") != std::string::npos);
  const nlohmann::json data = page_data(html);
  CHECK(data.at("run").at("store_members") == 3);
  CHECK(data.at("names").at("failover_reasons") ==
        nlohmann::json({"timeout", "no_leader", "disconnect"}));
  const std::vector<DecodedEvent> events = decode_events(data);
  const int server_role = kind_of(data, "server_role");
  const std::size_t member = field_of(data, "server_role", "member");
  const std::size_t term = field_of(data, "server_role", "term");
  std::size_t roles = 0;
  bool leader_seen = false;
  for (const DecodedEvent& e : events) {
    if (e.kind != server_role) continue;
    ++roles;
    if (e.fields[field_of(data, "server_role", "role")] != static_cast<int>(sim::Role::leader)) {
      continue;
    }
    leader_seen = true;
    CHECK(e.fields[member] == sim::store_member_endpoint(1));
    CHECK(e.fields[term] == 1);
  }
  CHECK(roles == 4);
  CHECK(leader_seen);
  const auto moved = std::find_if(events.begin(), events.end(), [&](const DecodedEvent& e) {
    return e.kind == kind_of(data, "client_failover");
  });
  REQUIRE(moved != events.end());
  CHECK(moved->fields[field_of(data, "client_failover", "node")] == 0);
  CHECK(moved->fields[field_of(data, "client_failover", "member")] ==
        sim::store_member_endpoint(2));
  CHECK(moved->fields[field_of(data, "client_failover", "reason")] ==
        static_cast<int>(sim::FailoverReason::timeout));
  CHECK(moved->fields[field_of(data, "client_failover", "request")] == 17);
  // The page's script builds the member cards from store_members.
  CHECK(html.find("D.run.store_members") != std::string::npos);
  CHECK(html.find("member-cards") != std::string::npos);
}

TEST_CASE("replay: a single store's page data names no store members") {
  const auto run = run_world(small_world(), header_for(small_world()));
  CHECK(run->recorder->store_members() == 0);
  const nlohmann::json data = page_data(run->html);
  CHECK_FALSE(data.at("run").contains("store_members"));
  CHECK_FALSE(data.at("names").contains("failover_reasons"));
  CHECK(run->html.find("a store of") == std::string::npos);
}

TEST_CASE("replay: text that could close the script element or open a comment is escaped") {
  const sim::WorldConfig world = small_world();
  TraceHeader header = header_for(world, "</script><script>alert(1)</script>");
  header.message_types = {"</SCRIPT>", "<!--pong"};
  header.variant = "a&b";
  const auto run = run_world(world, header);
  const std::string& html = run->html;
  CHECK(count_of(lower(html), "</script") == 2);
  CHECK(html.find("<!--") == std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  // The data still carries the names exactly.
  const nlohmann::json data = page_data(html);
  CHECK(data.at("run").at("scenario") == "</script><script>alert(1)</script>");
  CHECK(data.at("names").at("types") == nlohmann::json({"</SCRIPT>", "<!--pong"}));
}

TEST_CASE("replay: clock segments read what the kernel's clocks read, at every instant tried") {
  sim::WorldConfig world = small_world();
  world.faults.clear();
  world.clocks.resize(3);
  world.clocks[0] = {5ms, 100'000, {{sim::Time(300ms), 2ms}, {sim::Time(1700ms), -3ms}}};
  world.clocks[1] = {-40ms, -250'000'000, {}};
  world.clocks[2] = {0ms, 333'333, {{sim::Time(2500ms), 11ms}}};
  sim::FaultSpec drift = node_fault_at(400ms, sim::FaultKind::clock_drift, 0);
  drift.drift_ppb = 123'456'789;
  sim::FaultSpec step = node_fault_at(500ms, sim::FaultKind::clock_step, 1);
  step.clock_amount = -7ms;
  sim::FaultSpec offset = node_fault_at(600ms, sim::FaultKind::clock_offset, 2);
  offset.clock_amount = 1s;
  sim::FaultSpec drift_again = node_fault_at(2200ms, sim::FaultKind::clock_drift, 2);
  drift_again.drift_ppb = -999'999;
  world.faults = {drift, step, offset, drift_again};

  const TraceHeader header = header_for(world);
  ReplayRecorder recorder(header, world, std::nullopt, false);
  sim::Kernel kernel(world, [](sim::NodeId) { return std::make_unique<Beacon>(); });
  kernel.add_observer(&recorder);
  kernel.start();
  // Every 37ms and a bit, and at the changes themselves and just before and after them.
  std::vector<std::int64_t> times;
  for (std::int64_t t = 0; t <= 4'000'000'000; t += 37'000'001) times.push_back(t);
  for (const std::int64_t at : {300'000'000LL, 400'000'000LL, 500'000'000LL, 600'000'000LL,
                                1'700'000'000LL, 2'200'000'000LL, 2'500'000'000LL}) {
    times.insert(times.end(), {at - 1, at, at + 1});
  }
  std::sort(times.begin(), times.end());
  std::vector<std::array<std::int64_t, 4>> readings;  // t, then each node's clock
  for (const std::int64_t t : times) {
    kernel.run_until(sim::Time(t));
    readings.push_back({t, kernel.local_now(0).ns, kernel.local_now(1).ns, kernel.local_now(2).ns});
  }
  kernel.finish();

  Report report;
  const std::string html = render_replay_html(recorder, report, Verdict{}, RunInfo{}, "");
  const nlohmann::json data = page_data(html);
  REQUIRE(data.at("clocks").size() == 3);
  for (std::size_t n = 0; n < 3; ++n) {
    std::vector<ClockSegment> segments;
    const auto& flat = data.at("clocks").at(n);
    for (std::size_t i = 0; i + 3 < flat.size(); i += 4) {
      segments.push_back({flat[i].get<std::int64_t>(), flat[i + 1].get<std::int64_t>(),
                          flat[i + 2].get<std::int64_t>(), flat[i + 3].get<std::int64_t>()});
    }
    REQUIRE_FALSE(segments.empty());
    CHECK(segments.front().from_ns == 0);
    for (const auto& r : readings) {
      const std::int64_t t = r[0];
      const auto at =
          std::upper_bound(segments.begin(), segments.end(), t,
                           [](std::int64_t v, const ClockSegment& s) { return v < s.from_ns; });
      REQUIRE(at != segments.begin());
      INFO("node " << n << " at t=" << t);
      CHECK(clock_segment_reading(*std::prev(at), t) == r[n + 1]);
    }
  }
}

TEST_CASE("replay: a granted or renewed lease carries its deadline on the store's clock") {
  sim::ClockConfig fast;
  fast.drift_ppb = 50'000'000;  // the store's clock runs 5% fast: TTLs end early
  const sim::WorldConfig world = small_world(7, fast);
  const auto run = run_world(world, header_for(world));
  const nlohmann::json data = page_data(run->html);
  const int apply = kind_of(data, "store_apply");
  const std::size_t op = field_of(data, "store_apply", "op");
  const std::size_t ok = field_of(data, "store_apply", "succeeded");
  const std::size_t deadline = field_of(data, "store_apply", "lease_deadline_ns");
  const sim::ClockModel store_clock(0s, fast.drift_ppb, {});
  const std::int64_t ttl_true = store_clock.true_duration_for(kLeaseTtl).count();
  CHECK(ttl_true < kLeaseTtl.count());
  std::size_t renewals = 0;
  for (const DecodedEvent& e : decode_events(data)) {
    if (e.kind != apply) continue;
    const auto o = static_cast<sim::StoreOp>(e.fields[op]);
    const bool renews = o == sim::StoreOp::lease_grant || o == sim::StoreOp::lease_keepalive;
    if (renews && e.fields[ok] == 1) {
      ++renewals;
      CHECK(e.fields[deadline] == e.time + ttl_true);
    } else {
      CHECK(e.fields[deadline] == 0);
    }
  }
  CHECK(renewals > 5);
}

TEST_CASE("replay: every message is matched to its own arrival, drop or the run's end") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  INFO("seed=" << seed);
  sim::WorldConfig world = small_world(seed);
  world.network.loss = 100'000;       // 10%
  world.network.duplicate = 100'000;  // 10%
  world.faults.push_back(node_fault_at(1500ms, sim::FaultKind::crash, 2, 300ms));
  const auto run = run_world(world, header_for(world));
  const std::vector<ReplayEvent>& events = run->recorder->events();
  const std::vector<ReplayFlight> flights = run->recorder->flights();

  std::size_t sends = 0, delivers = 0, drops_at_send = 0, drops_on_arrival = 0;
  for (const ReplayEvent& e : events) {
    if (e.kind == EventKind::msg_send) ++sends;
    if (e.kind == EventKind::msg_deliver) ++delivers;
    if (e.kind == EventKind::msg_drop) {
      const auto reason = static_cast<sim::DropReason>(e.x);
      const bool at_send = reason == sim::DropReason::loss ||
                           reason == sim::DropReason::cut_at_send ||
                           reason == sim::DropReason::overload;
      ++(at_send ? drops_at_send : drops_on_arrival);
    }
  }
  using S = ReplayFlight::Status;
  std::map<S, std::size_t> messages;
  for (const ReplayFlight& f : flights) {
    REQUIRE(f.start < f.end);
    REQUIRE(f.end <= events.size());
    const ReplayEvent& from = events[f.start];
    if (from.kind != EventKind::msg_send) continue;
    ++messages[f.status];
    if (f.status == S::travelling_at_end) continue;
    const ReplayEvent& to = events[f.end];
    // The arrival is on the same channel: deliveries name the receiver first, drops the sender.
    const auto sent = std::make_tuple(from.node, from.peer, from.code);
    const auto arrived = to.kind == EventKind::msg_deliver
                             ? std::make_tuple(to.peer, to.node, to.code)
                             : std::make_tuple(to.node, to.peer, to.code);
    CHECK(sent == arrived);
    CHECK(from.time_ns <= to.time_ns);
  }
  CHECK(drops_at_send > 0);
  CHECK(messages[S::duplicate_arrived] > 0);
  CHECK(messages[S::arrived] + messages[S::duplicate_arrived] == delivers);
  CHECK(messages[S::dropped] + messages[S::duplicate_dropped] == drops_on_arrival);
  CHECK(messages[S::arrived] + messages[S::dropped] + messages[S::travelling_at_end] ==
        sends - drops_at_send);
}

TEST_CASE("replay: store requests are matched to the store's apply by request id") {
  const auto run = run_world(small_world(), header_for(small_world()));
  const std::vector<ReplayEvent>& events = run->recorder->events();
  std::size_t requests = 0;
  for (const ReplayFlight& f : run->recorder->flights()) {
    if (events[f.start].kind != EventKind::store_request) continue;
    ++requests;
    REQUIRE(f.end < events.size());
    CHECK(events[f.end].kind == EventKind::store_apply);
    CHECK(events[f.end].node == events[f.start].node);
    CHECK(events[f.end].code == events[f.start].code);
  }
  std::size_t applies = 0;
  for (const ReplayEvent& e : events) applies += e.kind == EventKind::store_apply ? 1 : 0;
  CHECK(requests > 10);
  CHECK(requests == applies);
}

TEST_CASE("replay: stale-write flags and split-brain findings agree with the analyzer") {
  const auto run = run_world(small_world(), header_for(small_world()));
  const nlohmann::json data = page_data(run->html);
  const int sink_write = kind_of(data, "sink_write");
  const std::size_t accepted = field_of(data, "sink_write", "accepted");
  const std::size_t stale = field_of(data, "sink_write", "stale");
  std::uint64_t stale_accepted = 0, stale_rejected = 0;
  for (const DecodedEvent& e : decode_events(data)) {
    if (e.kind != sink_write || e.fields[stale] == 0) continue;
    ++(e.fields[accepted] == 1 ? stale_accepted : stale_rejected);
  }
  CHECK(stale_rejected > 0);
  CHECK(stale_accepted == run->report.stale_writes_accepted);
  CHECK(stale_rejected == run->report.stale_writes_rejected);

  const auto& episodes = data.at("findings").at("split_brain");
  REQUIRE(run->report.first_split_brain);
  REQUIRE(episodes.size() == run->report.split_brain_episodes);
  const auto& first = episodes.at(0);
  CHECK(first.at(0) == run->report.first_split_brain->at.ns);
  std::vector<std::int64_t> leaders;
  for (std::size_t i = 0; i < run->report.first_split_brain->nodes.size(); ++i) {
    leaders.push_back(run->report.first_split_brain->nodes[i]);
    leaders.push_back(run->report.first_split_brain->epochs[i]);
  }
  CHECK(first.at(2).get<std::vector<std::int64_t>>() == leaders);
  std::int64_t total = 0;
  for (const auto& e : episodes) total += e.at(1).get<std::int64_t>() - e.at(0).get<std::int64_t>();
  CHECK(total == run->report.split_brain_time.count());
}

TEST_CASE("replay: the same run gives the same bytes") {
  const auto a = run_world(small_world(), header_for(small_world()), kSvgWithNamespaces);
  const auto b = run_world(small_world(), header_for(small_world()), kSvgWithNamespaces);
  CHECK(a->html.size() > 10'000);
  CHECK(a->html == b->html);
  const auto other = run_world(small_world(8), header_for(small_world(8)), kSvgWithNamespaces);
  CHECK(other->html != a->html);
}

TEST_CASE("replay: a broken bound is highlighted in the verdict and in the summary") {
  auto run = run_world(small_world(), header_for(small_world()));
  Expectation no_split;
  no_split.metric = "split_brain_time";
  no_split.max = 0;
  const Verdict verdict = check(run->report, std::vector<Expectation>{no_split});
  REQUIRE_FALSE(verdict.ok());
  const std::string html = render_replay_html(*run->recorder, run->report, verdict, run->info, "");
  CHECK(html.find("verdict fail") != std::string::npos);
  CHECK(html.find("<mark class=\"breach\">verdict: FAIL") != std::string::npos);
  CHECK(count_of(html, "<li class=\"breach\">") == verdict.breaches.size());
  CHECK(run->html.find("verdict pass") != std::string::npos);
  CHECK(run->html.find("<mark") == std::string::npos);
}

// Writes the page of a saved trace, for trying the page in a browser by hand and in the browser
// test before `electsim run --html` exists: ELECTSIM_REPLAY_TRACE (a JSON Lines trace) and
// ELECTSIM_REPLAY_HTML (where to write); optional ELECTSIM_REPLAY_LEASE_TTL_NS and
// ELECTSIM_REPLAY_LEASE_BY_CLIENTS=1. Hidden: it runs only when named.
TEST_CASE("replay: writes the page of a saved trace named by the environment", "[.page]") {
  const char* trace = std::getenv("ELECTSIM_REPLAY_TRACE");
  const char* out = std::getenv("ELECTSIM_REPLAY_HTML");
  REQUIRE(trace != nullptr);
  REQUIRE(out != nullptr);
  std::optional<sim::Duration> ttl;
  if (const char* v = std::getenv("ELECTSIM_REPLAY_LEASE_TTL_NS"))
    ttl = sim::Duration(std::atoll(v));
  const char* clients = std::getenv("ELECTSIM_REPLAY_LEASE_BY_CLIENTS");
  const bool by_store = clients == nullptr || std::string(clients) != "1";

  // The header comes first: read it to build the recorders, then read the whole trace.
  std::ifstream in(trace);
  REQUIRE(in);
  std::string first_line;
  std::getline(in, first_line);
  const nlohmann::json h = nlohmann::json::parse(first_line);
  TraceHeader header;
  header.scenario = h.value("scenario", "");
  header.variant = h.value("variant", "");
  header.protocol = h.value("protocol", "");
  header.seed = h.at("seed").get<std::uint64_t>();
  header.node_count = h.at("nodes").get<std::size_t>();
  header.duration = sim::Duration(h.at("duration_ns").get<std::int64_t>());
  header.message_types = h.value("message_types", std::vector<std::string>());
  if (h.at("leader_key").is_string()) header.leader_key = h.at("leader_key").get<std::string>();
  header.uses_store = h.value("uses_store", false);
  sim::WorldConfig world;
  world.node_count = header.node_count;
  world.duration = header.duration;

  ReplayRecorder recorder(header, world, ttl, by_store);
  TimelineRecorder timeline(header, ttl, by_store);
  struct Both : sim::Observer {
    sim::Observer* a;
    sim::Observer* b;
    void on_event(const sim::Event& e) override {
      a->on_event(e);
      b->on_event(e);
    }
  } both;
  both.a = &recorder;
  both.b = &timeline;
  const TraceReadResult result = read_trace_file(trace, &both);
  REQUIRE(result.ok());
  TimelineStyle style;
  const std::string svg = render_timeline_svg(timeline.finish(result.report), style);
  const std::string html = render_replay_html(recorder, result.report, Verdict{}, result.info, svg);
  std::ofstream file(out, std::ios::binary);
  file << html;
  REQUIRE(file.good());
}

TEST_CASE("replay: the page's fields are the trace schema's, or derived by the page") {
  const std::span<const std::string_view> derived = drawing::replay_derived_fields();
  for (int k = 0; k < sim::kEventKindCount; ++k) {
    const auto kind = static_cast<EventKind>(k);
    INFO(sim::event_kind_name(kind));
    std::set<std::string_view> schema;
    for (const sim::EventField& f : sim::event_schema(kind).fields) schema.insert(f.name);
    for (const std::string_view field : drawing::replay_fields(kind)) {
      INFO(field);
      CHECK((schema.count(field) == 1 ||
             std::find(derived.begin(), derived.end(), field) != derived.end()));
    }
  }
}
