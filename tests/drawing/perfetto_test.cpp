// Tests of the Perfetto / Chrome trace export (drawing/perfetto.hpp) on hand-made event streams:
// the file is valid JSON in the Trace Event Format, slices have the right times and names and
// nest on every track, messages are joined by flow arrows, a replicated store's members are tracks
// of their own, the file is whole or absent under its byte limit, and the same events give the
// same bytes.
// Long on purpose: one case per kind of track, all checked by the file reader defined here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "drawing/perfetto.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "tests/temp_files.hpp"

namespace {

using namespace electsim;
using analysis::TraceHeader;
using drawing::PerfettoWriter;
using nlohmann::json;
using sim::Event;
using sim::EventKind;
namespace fs = std::filesystem;

constexpr std::int64_t kMs = 1'000'000;

TraceHeader header() {
  TraceHeader h;
  h.scenario = "hand-made";
  h.protocol = "lease";
  h.seed = 7;
  h.node_count = 3;
  h.duration = std::chrono::seconds(2);
  h.message_types = {"vote", "ping"};
  h.leader_key = "/election/leader";
  h.uses_store = true;
  h.topology = analysis::legacy_topology(h.node_count, 1);
  return h;
}

Event make(EventKind kind, std::int64_t at_ns, sim::NodeId node = sim::kNoNode) {
  Event e;
  e.time = sim::Time(at_ns);
  e.kind = kind;
  e.node = node;
  return e;
}

Event belief(std::int64_t at_ns, sim::NodeId node, sim::Role role, sim::Epoch epoch,
             sim::NodeId leader = sim::kNoNode) {
  Event e = make(EventKind::belief, at_ns, node);
  e.code = static_cast<std::uint16_t>(role);
  e.a = epoch;
  e.b = leader;
  return e;
}

Event message(EventKind kind, std::int64_t at_ns, sim::NodeId node, sim::NodeId peer,
              std::uint16_t type, std::int64_t reason = 0) {
  Event e = make(kind, at_ns, node);
  e.peer = peer;
  e.code = type;
  e.a = reason;
  return e;
}

Event pause(std::int64_t at_ns, sim::NodeId node, std::int64_t duration_ns) {
  Event e = make(EventKind::pause, at_ns, node);
  e.a = duration_ns;
  return e;
}

Event sink_write(std::int64_t at_ns, sim::NodeId writer, sim::Token token, bool accepted) {
  Event e = make(EventKind::sink_write, at_ns, writer);
  e.a = token;
  e.c = accepted ? 1 : 0;
  return e;
}

// A replicated store's member K announcing its Raft role; `leader` is a member index or -1.
Event server_role(std::int64_t at_ns, std::size_t member, sim::Role role, sim::Epoch term,
                  int leader = -1) {
  Event e = make(EventKind::server_role, at_ns, sim::store_member_endpoint(member));
  e.code = static_cast<std::uint16_t>(role);
  e.a = term;
  e.b = leader < 0 ? sim::kNoNode : sim::store_member_endpoint(static_cast<std::size_t>(leader));
  return e;
}

// store:1 leads term 1 and crashes at 500 ms; store:2 leads term 2 from 700 ms and refreshes two
// leases; node 0's client gives up on store:1 and moves to store:2; store:0 stalls for 100 ms.
std::vector<Event> replicated_store_events() {
  std::vector<Event> v = {make(EventKind::run_start, 0)};
  for (std::size_t m = 0; m < 3; ++m) v.push_back(server_role(0, m, sim::Role::follower, 0));
  v.push_back(server_role(100 * kMs, 1, sim::Role::candidate, 1));
  v.push_back(server_role(110 * kMs, 1, sim::Role::leader, 1, 1));
  v.push_back(server_role(120 * kMs, 0, sim::Role::follower, 1, 1));
  v.push_back(server_role(120 * kMs, 2, sim::Role::follower, 1, 1));
  v.push_back(make(EventKind::crash, 500 * kMs, sim::store_member_endpoint(1)));
  v.push_back(server_role(690 * kMs, 2, sim::Role::candidate, 2));
  v.push_back(server_role(700 * kMs, 2, sim::Role::leader, 2, 2));
  Event refresh = make(EventKind::lease_refresh, 700 * kMs, sim::store_member_endpoint(2));
  refresh.a = 2;
  refresh.b = 2;
  v.push_back(refresh);
  Event failover = make(EventKind::client_failover, 800 * kMs, 0);
  failover.peer = sim::store_member_endpoint(2);
  failover.code = static_cast<std::uint16_t>(sim::FailoverReason::timeout);
  failover.a = 17;
  v.push_back(failover);
  Event stall = make(EventKind::store_pause, 1200 * kMs, sim::kStoreEndpoint);
  stall.a = 100 * kMs;
  v.push_back(stall);
  v.push_back(make(EventKind::store_resume, 1300 * kMs, sim::kStoreEndpoint));
  v.push_back(make(EventKind::restart, 1500 * kMs, sim::store_member_endpoint(1)));
  v.push_back(server_role(1500 * kMs, 1, sim::Role::follower, 2, 2));
  v.push_back(make(EventKind::run_end, 2000 * kMs));
  return v;
}

TraceHeader replicated_header() {
  TraceHeader h = header();
  h.store_members = 3;
  const sim::ServerTraits member{true, sim::ServerLane::store, 0, false};
  h.topology = sim::Topology(h.node_count,
                             {{sim::store_member_endpoint(0), "store:0", "store", "store", member},
                              {sim::store_member_endpoint(1), "store:1", "store", "store", member},
                              {sim::store_member_endpoint(2), "store:2", "store", "store", member},
                              {sim::kSinkEndpoint, "sink", "sink", "", {}}},
                             {});
  return h;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "electsim-perfetto-test";
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".json");
  fs::remove(path);
  return path;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Written {
  bool ok = false;
  std::string error;
  std::string text;  // "" when no file was written
};

Written write(const std::vector<Event>& events, const std::string& name,
              const TraceHeader& h = header(),
              std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max()) {
  const fs::path path = scratch(name);
  Written w;
  {
    PerfettoWriter writer(path.string(), h, max_bytes);
    for (const Event& e : events) writer.on_event(e);
    w.ok = writer.close();
    w.error = writer.error();
  }
  if (fs::exists(path)) w.text = read_text(path);
  CHECK_FALSE(electsim::testing::has_temporary(path));
  fs::remove(path);
  return w;
}

json parse(const std::vector<Event>& events, const std::string& name,
           const TraceHeader& h = header()) {
  const Written w = write(events, name, h);
  INFO(w.error);
  REQUIRE(w.ok);
  return json::parse(w.text);
}

// Timestamps are microseconds with three decimals: back to integer nanoseconds.
std::int64_t ns(const json& us) {
  return static_cast<std::int64_t>(std::llround(us.get<double>() * 1000.0));
}

// Thread names by tid, and the tid of a named thread.
std::map<int, std::string> thread_names(const json& doc) {
  std::map<int, std::string> names;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
  }
  return names;
}

int tid_of(const json& doc, const std::string& thread) {
  for (const auto& [tid, name] : thread_names(doc)) {
    if (name == thread) return tid;
  }
  FAIL("no thread named " << thread);
  return -1;
}

std::vector<json> events_where(const json& doc, const std::string& ph,
                               const std::string& name_prefix = "") {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph && e["name"].get<std::string>().rfind(name_prefix, 0) == 0) {
      out.push_back(e);
    }
  }
  return out;
}

// Complete events on one thread must be nested or disjoint, never partly overlapping (a viewer
// drops or truncates such slices). One line per offending pair.
std::vector<std::string> nesting_problems(const json& doc) {
  struct Slice {
    std::int64_t start;
    std::int64_t end;
    std::string name;
  };
  std::map<int, std::vector<Slice>> by_tid;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::int64_t start = ns(e["ts"]);
    by_tid[e["tid"].get<int>()].push_back({start, start + ns(e["dur"]), e["name"]});
  }
  std::vector<std::string> problems;
  for (auto& [tid, slices] : by_tid) {
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<const Slice*> open;
    for (const Slice& s : slices) {
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back()->end) {
        problems.push_back("tid " + std::to_string(tid) + ": " + open.back()->name + " and " +
                           s.name + " overlap partly");
      }
      open.push_back(&s);
    }
  }
  return problems;
}

// Reads the events as a viewer does (Perfetto's JSON importer): in time order, ties in file
// order, a stack of open slices per track, where a flow event binds to the topmost open slice.
// Returns each flow event that would bind to anything but a message slice at its own instant.
std::vector<std::string> misbound_flows(const json& doc) {
  const json& events = doc["traceEvents"];
  std::vector<std::pair<std::int64_t, std::size_t>> order;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i]["ph"] != "M") order.emplace_back(ns(events[i]["ts"]), i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  struct Open {
    std::int64_t start;
    std::int64_t dur;
    std::string name;
  };
  std::map<int, std::vector<Open>> stacks;
  std::vector<std::string> problems;
  for (const auto& [at, i] : order) {
    const json& e = events[i];
    const std::string ph = e["ph"];
    if (ph != "X" && ph != "i" && ph != "s" && ph != "f") continue;
    std::vector<Open>& stack = stacks[e["tid"].get<int>()];
    if (ph == "X" || ph == "i") {
      const std::int64_t dur = ph == "X" ? ns(e["dur"]) : 0;
      // Slices that ended before this one begins are closed (at the same instant too, unless
      // both have no length).
      while (!stack.empty()) {
        const Open& top = stack.back();
        const std::int64_t end = top.start + top.dur;
        if (end < at || (end == at && !(top.dur == 0 && dur == 0))) {
          stack.pop_back();
        } else {
          break;
        }
      }
      stack.push_back({at, dur, e["name"]});
      continue;
    }
    const std::string want = ph == "s" ? "send " : "recv ";
    const bool bound = !stack.empty() && stack.back().start == at &&
                       (stack.back().name.rfind(want, 0) == 0 ||
                        (ph == "f" && stack.back().name.rfind("drop ", 0) == 0));
    if (!bound) {
      problems.push_back(ph + " " + e["name"].get<std::string>() + " at " + std::to_string(at) +
                         " binds to " + (stack.empty() ? "nothing" : stack.back().name));
    }
  }
  return problems;
}

}  // namespace

TEST_CASE("perfetto: the nesting checker catches slices that overlap partly") {
  const json nested = json::parse(R"({"traceEvents":[
    {"ph":"X","name":"a","tid":1,"ts":0.0,"dur":10.0},
    {"ph":"X","name":"b","tid":1,"ts":2.0,"dur":8.0},
    {"ph":"X","name":"c","tid":1,"ts":10.0,"dur":1.0},
    {"ph":"X","name":"d","tid":2,"ts":5.0,"dur":10.0}]})");
  CHECK(nesting_problems(nested).empty());
  const json partial = json::parse(R"({"traceEvents":[
    {"ph":"X","name":"a","tid":1,"ts":0.0,"dur":10.0},
    {"ph":"X","name":"b","tid":1,"ts":5.0,"dur":10.0}]})");
  CHECK(nesting_problems(partial).size() == 1);
}

TEST_CASE("perfetto: the file is one JSON object with the events, the time unit and the run") {
  TraceHeader h = header();
  h.variant = "no-fencing";
  h.seed = 0xF00DF00DF00DF00Dull;
  const json doc =
      parse({make(EventKind::run_start, 0), make(EventKind::run_end, 2000 * kMs)}, "object", h);
  REQUIRE(doc.is_object());
  REQUIRE(doc["traceEvents"].is_array());
  CHECK(doc["displayTimeUnit"] == "ms");
  const json& m = doc["metadata"];
  CHECK(m["scenario"] == "hand-made");
  CHECK(m["variant"] == "no-fencing");
  CHECK(m["protocol"] == "lease");
  CHECK(m["seed"].get<std::uint64_t>() == 0xF00DF00DF00DF00Dull);
  CHECK(m["nodes"] == 3);
  CHECK(m["duration_ns"] == 2'000'000'000);
  CHECK(m["leader_key"] == "/election/leader");
  CHECK(m["message_types"] == json::array({"vote", "ping"}));
}

TEST_CASE("perfetto: the process is named after the run and its tracks are sorted nodes first") {
  const json doc = parse({make(EventKind::run_end, kMs)}, "names");
  const std::vector<json> process = events_where(doc, "M", "process_name");
  REQUIRE(process.size() == 1);
  CHECK(process[0]["args"]["name"] == "electsim: hand-made (lease, seed 7)");
  std::map<int, std::int64_t> sort_index;
  for (const json& e : events_where(doc, "M", "thread_sort_index")) {
    sort_index[e["tid"].get<int>()] = e["args"]["sort_index"].get<std::int64_t>();
  }
  const std::vector<std::string> order = {
      "node 0", "node 0 · messages", "node 1", "node 1 · messages",
      "node 2", "node 2 · messages", "store",  "sink",
      "faults"};
  std::int64_t previous = -1;
  for (const std::string& name : order) {
    const int tid = tid_of(doc, name);
    REQUIRE(sort_index.count(tid) == 1);
    CHECK(sort_index[tid] > previous);
    previous = sort_index[tid];
  }
  for (const json& e : doc["traceEvents"]) CHECK(e["pid"] == process[0]["pid"]);
}

TEST_CASE("perfetto: a leader slice runs from the leader belief to what ends it, through a pause") {
  auto [ending, end_ms] = GENERATE(table<std::string, std::int64_t>({
      {"follower belief", 900},
      {"candidate belief", 900},
      {"leader belief with a new epoch", 900},
      {"crash", 900},
      {"run end", 1500},
  }));
  INFO(ending);
  std::vector<Event> v = {make(EventKind::run_start, 0),
                          belief(100 * kMs + 5, 1, sim::Role::candidate, 4),
                          belief(120 * kMs + 345, 1, sim::Role::leader, 4),
                          // A paused leader still believes; the same belief again changes nothing.
                          pause(300 * kMs, 1, 200 * kMs), make(EventKind::resume, 500 * kMs, 1),
                          belief(600 * kMs, 1, sim::Role::leader, 4)};
  if (ending == "follower belief") v.push_back(belief(900 * kMs, 1, sim::Role::follower, 5, 2));
  if (ending == "candidate belief") v.push_back(belief(900 * kMs, 1, sim::Role::candidate, 5));
  if (ending == "leader belief with a new epoch")
    v.push_back(belief(900 * kMs, 1, sim::Role::leader, 6));
  if (ending == "crash") v.push_back(make(EventKind::crash, 900 * kMs, 1));
  v.push_back(make(EventKind::run_end, 1500 * kMs));
  const json doc = parse(v, "leader");

  const std::vector<json> leaders = events_where(doc, "X", "leader e4");
  REQUIRE(leaders.size() == 1);
  CHECK(leaders[0]["name"] == "leader e4");
  CHECK(leaders[0]["tid"] == tid_of(doc, "node 1"));
  CHECK(ns(leaders[0]["ts"]) == 120 * kMs + 345);
  CHECK(ns(leaders[0]["ts"]) + ns(leaders[0]["dur"]) == end_ms * kMs);
  CHECK(leaders[0]["args"]["epoch"] == 4);

  const std::vector<json> candidates = events_where(doc, "X", "candidate e4");
  REQUIRE(candidates.size() == 1);
  CHECK(ns(candidates[0]["ts"]) == 100 * kMs + 5);
  CHECK(ns(candidates[0]["dur"]) == 20 * kMs + 340);

  const std::vector<json> pauses = events_where(doc, "X", "GC pause");
  REQUIRE(pauses.size() == 1);
  CHECK(pauses[0]["tid"] == tid_of(doc, "node 1"));
  CHECK(ns(pauses[0]["ts"]) == 300 * kMs);
  CHECK(ns(pauses[0]["dur"]) == 200 * kMs);
  CHECK(nesting_problems(doc).empty());
}

TEST_CASE("perfetto: followers, candidates and downtime are slices of their own on the node") {
  const std::vector<Event> v = {
      belief(10 * kMs, 0, sim::Role::follower, 1, sim::kNoNode),
      belief(20 * kMs, 0, sim::Role::follower, 1, 2),
      make(EventKind::crash, 30 * kMs, 0),
      make(EventKind::restart, 50 * kMs, 0),
      [] {
        Event stop = make(EventKind::crash, 60 * kMs, 0);
        stop.a = 1;  // graceful
        return stop;
      }(),
      make(EventKind::run_end, 100 * kMs),
  };
  const json doc = parse(v, "roles");
  const int node0 = tid_of(doc, "node 0");
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> got;
  for (const json& e : events_where(doc, "X")) {
    if (e["tid"] == node0) got.emplace_back(e["name"], ns(e["ts"]), ns(e["dur"]));
  }
  std::sort(got.begin(), got.end(),
            [](const auto& a, const auto& b) { return std::get<1>(a) < std::get<1>(b); });
  const std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> want = {
      {"follower", 10 * kMs, 10 * kMs},
      {"follower of 2", 20 * kMs, 10 * kMs},
      {"crashed", 30 * kMs, 20 * kMs},
      {"stopped", 60 * kMs, 40 * kMs},
  };
  CHECK(got == want);
}

TEST_CASE("perfetto: timestamps are microseconds written with exactly three decimals") {
  auto [at_ns, text] = GENERATE(table<std::int64_t, std::string>({
      {12'345'678, "\"ts\":12345.678"},
      {5, "\"ts\":0.005"},
      {2'000'000'000, "\"ts\":2000000.000"},
  }));
  const Written w = write({sink_write(at_ns, 0, 1, true), make(EventKind::run_end, at_ns)}, "ts");
  REQUIRE(w.ok);
  CHECK(w.text.find(text) != std::string::npos);
}

TEST_CASE("perfetto: a delivered message is an arrow from its send slice to its delivery slice") {
  const std::vector<Event> v = {
      message(EventKind::msg_send, 10 * kMs, 0, 1, 0),
      message(EventKind::msg_send, 10 * kMs, 0, 2, 1),
      message(EventKind::msg_deliver, 13 * kMs + 250, 1, 0, 0),
      message(EventKind::msg_deliver, 14 * kMs, 2, 0, 1),
      make(EventKind::run_end, 100 * kMs),
  };
  const json doc = parse(v, "flow");
  const int sender = tid_of(doc, "node 0 · messages");
  const int receiver = tid_of(doc, "node 1 · messages");

  // Both sends of one instant are one slice; each delivery is its own.
  const std::vector<json> sends = events_where(doc, "X", "send");
  REQUIRE(sends.size() == 1);
  CHECK(sends[0]["name"] == "send 2 messages → 1,2");
  CHECK(sends[0]["tid"] == sender);
  CHECK(ns(sends[0]["ts"]) == 10 * kMs);
  const std::vector<json> recvs = events_where(doc, "X", "recv vote");
  REQUIRE(recvs.size() == 1);
  CHECK(recvs[0]["name"] == "recv vote ← 0");
  CHECK(recvs[0]["tid"] == receiver);
  CHECK(ns(recvs[0]["ts"]) == 13 * kMs + 250);

  std::map<std::int64_t, json> starts;
  for (const json& s : events_where(doc, "s")) starts[s["id"].get<std::int64_t>()] = s;
  const std::vector<json> ends = events_where(doc, "f");
  REQUIRE(starts.size() == 2);
  REQUIRE(ends.size() == 2);
  for (const json& f : ends) {
    REQUIRE(starts.count(f["id"].get<std::int64_t>()) == 1);
    const json& s = starts[f["id"].get<std::int64_t>()];
    CHECK(s["name"] == f["name"]);
    CHECK(s["cat"] == f["cat"]);
    CHECK(f["bp"] == "e");
    CHECK(s["tid"] == sender);
    CHECK(ns(s["ts"]) == 10 * kMs);
    if (f["name"] == "vote") {
      CHECK(f["tid"] == receiver);
      CHECK(ns(f["ts"]) == 13 * kMs + 250);
    } else {
      CHECK(f["tid"] == tid_of(doc, "node 2 · messages"));
      CHECK(ns(f["ts"]) == 14 * kMs);
    }
  }
  CHECK(nesting_problems(doc).empty());
}

TEST_CASE("perfetto: a burst names its peers, or counts them when there are many") {
  auto [peers, name] = GENERATE(table<int, std::string>({
      {1, "send ping → 1"},
      {8, "send ping → 1,2,3,4,5,6,7,8"},
      {11, "send ping → 11 peers"},
  }));
  TraceHeader h = header();
  h.node_count = 12;
  std::vector<Event> v;
  for (sim::NodeId to = 1; to <= peers; ++to)
    v.push_back(message(EventKind::msg_send, kMs, 0, to, 1));
  v.push_back(make(EventKind::run_end, 10 * kMs));
  const json doc = parse(v, "burst", h);
  const std::vector<json> sends = events_where(doc, "X", "send");
  REQUIRE(sends.size() == 1);
  CHECK(sends[0]["name"] == name);
  CHECK(sends[0]["args"]["count"] == peers);
  CHECK(events_where(doc, "s").size() == static_cast<std::size_t>(peers));
}

TEST_CASE("perfetto: a dropped message ends in a drop instant") {
  auto [reason, on_receiver, name] = GENERATE(table<sim::DropReason, bool, std::string>({
      {sim::DropReason::loss, false, "drop vote → 1 (loss)"},
      {sim::DropReason::cut_at_send, false, "drop vote → 1 (cut_at_send)"},
      {sim::DropReason::overload, false, "drop vote → 1 (overload)"},
      {sim::DropReason::node_down, true, "drop vote ← 0 (node_down)"},
      {sim::DropReason::cut_on_arrival, true, "drop vote ← 0 (cut_on_arrival)"},
  }));
  const std::int64_t dropped_at = on_receiver ? 15 * kMs : 10 * kMs;
  const std::vector<Event> v = {
      message(EventKind::msg_send, 10 * kMs, 0, 1, 0),
      message(EventKind::msg_drop, dropped_at, 0, 1, 0, static_cast<std::int64_t>(reason)),
      make(EventKind::run_end, 100 * kMs),
  };
  const json doc = parse(v, "drop");
  const std::vector<json> drops = events_where(doc, "i", "drop");
  REQUIRE(drops.size() == 1);
  CHECK(drops[0]["name"] == name);
  CHECK(drops[0]["s"] == "t");
  CHECK(ns(drops[0]["ts"]) == dropped_at);
  CHECK(drops[0]["tid"] == tid_of(doc, on_receiver ? "node 1 · messages" : "node 0 · messages"));
  CHECK(drops[0]["args"]["reason"] == sim::drop_reason_name(reason));
  // A message lost on the way has an arrow to where it was dropped; one that never left has none.
  CHECK(events_where(doc, "s").size() == (on_receiver ? 1u : 0u));
  const std::vector<json> ends = events_where(doc, "f");
  CHECK(ends.size() == (on_receiver ? 1u : 0u));
  CHECK(misbound_flows(doc).empty());
  if (on_receiver) CHECK(ns(ends[0]["ts"]) == dropped_at);
  // The send itself still shows.
  CHECK(events_where(doc, "X", "send vote → 1").size() == 1);
}

namespace {

// Each flow arrow of a Perfetto file: the time of its end (a delivery) to the time of its start.
std::map<std::int64_t, std::int64_t> arrows(const json& doc) {
  std::map<std::int64_t, std::int64_t> sent_at;
  for (const json& s : events_where(doc, "s")) sent_at[s["id"].get<std::int64_t>()] = ns(s["ts"]);
  std::map<std::int64_t, std::int64_t> arrow;
  for (const json& f : events_where(doc, "f")) {
    arrow[ns(f["ts"])] = sent_at.at(f["id"].get<std::int64_t>());
  }
  return arrow;
}

}  // namespace

TEST_CASE("perfetto: a delivery is joined to its own send by the message id, however reordered") {
  auto with_id = [](Event e, std::int64_t id) {
    e.b = id;
    return e;
  };
  // Two messages on one link, the second overtaking the first; the first is duplicated.
  const std::vector<Event> v = {
      with_id(message(EventKind::msg_send, 10 * kMs, 0, 1, 0), 1),
      with_id(message(EventKind::msg_send, 20 * kMs, 0, 1, 0), 2),
      with_id(message(EventKind::msg_deliver, 25 * kMs, 1, 0, 0), 2),
      with_id(message(EventKind::msg_deliver, 30 * kMs, 1, 0, 0), 1),
      with_id(message(EventKind::msg_deliver, 35 * kMs, 1, 0, 0), 1),
      make(EventKind::run_end, 100 * kMs),
  };
  const std::map<std::int64_t, std::int64_t> arrow = arrows(parse(v, "by-id"));
  // The duplicate's second copy shows without an arrow.
  CHECK(arrow == std::map<std::int64_t, std::int64_t>{{25 * kMs, 20 * kMs}, {30 * kMs, 10 * kMs}});
}

TEST_CASE("perfetto: without message ids, deliveries on a link are joined to its sends in order") {
  const std::vector<Event> v = {
      message(EventKind::msg_send, 10 * kMs, 0, 1, 0),
      message(EventKind::msg_send, 20 * kMs, 0, 1, 0),
      message(EventKind::msg_deliver, 25 * kMs, 1, 0, 0),
      message(EventKind::msg_deliver, 30 * kMs, 1, 0, 0),
      make(EventKind::run_end, 100 * kMs),
  };
  const std::map<std::int64_t, std::int64_t> arrow = arrows(parse(v, "fifo"));
  CHECK(arrow == std::map<std::int64_t, std::int64_t>{{25 * kMs, 10 * kMs}, {30 * kMs, 20 * kMs}});
}

TEST_CASE("perfetto: sink writes are instants and a stale accepted write is called out") {
  const std::vector<Event> v = {
      belief(10 * kMs, 0, sim::Role::leader, 3), sink_write(20 * kMs, 0, 3, true),
      belief(30 * kMs, 1, sim::Role::leader, 5), sink_write(40 * kMs, 1, 5, true),
      sink_write(50 * kMs, 0, 3, false),         sink_write(60 * kMs, 0, 3, true),
      make(EventKind::run_end, 100 * kMs),
  };
  const json doc = parse(v, "sink");
  std::vector<std::pair<std::int64_t, std::string>> got;
  for (const json& e : events_where(doc, "i")) {
    if (e["tid"] == tid_of(doc, "sink")) got.emplace_back(ns(e["ts"]), e["name"]);
  }
  const std::vector<std::pair<std::int64_t, std::string>> want = {
      {20 * kMs, "write token 3 accepted"},
      {40 * kMs, "write token 5 accepted"},
      {50 * kMs, "write token 3 REJECTED"},
      {60 * kMs, "STALE write accepted"},
  };
  CHECK(got == want);
  const std::vector<json> stale = events_where(doc, "i", "STALE");
  REQUIRE(stale.size() == 1);
  CHECK(stale[0]["args"]["token"] == 3);
  CHECK(stale[0]["args"]["newest_epoch"] == 5);
  CHECK(stale[0]["args"]["writer"] == 0);
}

TEST_CASE("perfetto: the store track shows who holds the leader key and when leases expire") {
  const std::string key = "/election/leader";
  const std::string other = "/elsewhere";
  auto change = [&](std::int64_t at, std::uint16_t code, sim::NodeId owner, sim::LeaseId lease,
                    bool expired, const std::string& k) {
    Event e = make(EventKind::store_change, at, owner);
    e.code = code;
    e.a = 9;
    e.b = lease;
    e.c = expired ? 1 : 0;
    e.text = k;
    return e;
  };
  Event expire = make(EventKind::lease_expire, 800 * kMs);
  expire.a = 7;
  const std::vector<Event> v = {
      change(100 * kMs, 0, 1, 7, false, key),
      change(150 * kMs, 0, 2, 0, false, other),  // another key: not the leader's
      change(200 * kMs, 0, 1, 7, false, key),    // the same holder again
      expire,
      change(800 * kMs, 1, sim::kNoNode, 7, true, key),
      change(900 * kMs, 0, 2, 8, false, key),
      make(EventKind::run_end, 1000 * kMs),
  };
  const json doc = parse(v, "store");
  const int store = tid_of(doc, "store");
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> got;
  for (const json& e : events_where(doc, "X")) {
    if (e["tid"] == store) got.emplace_back(e["name"], ns(e["ts"]), ns(e["dur"]));
  }
  std::sort(got.begin(), got.end());
  const std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> want = {
      {"held by node 1 (lease 7)", 100 * kMs, 700 * kMs},
      {"held by node 2 (lease 8)", 900 * kMs, 100 * kMs},
  };
  CHECK(got == want);
  const std::vector<json> expiries = events_where(doc, "i", "lease 7 expired");
  REQUIRE(expiries.size() == 1);
  CHECK(expiries[0]["tid"] == store);
  CHECK(ns(expiries[0]["ts"]) == 800 * kMs);
}

TEST_CASE("perfetto: a replicated store's members are tracks of a store process with their roles") {
  const json doc = parse(replicated_store_events(), "members", replicated_header());
  CHECK(nesting_problems(doc).empty());
  std::map<int, std::string> processes;
  for (const json& e : events_where(doc, "M", "process_name")) {
    processes[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
  }
  REQUIRE(processes.size() == 2);
  CHECK(processes[2] == "store");
  std::map<std::string, int> member_tid;
  for (int m = 0; m < 3; ++m) {
    const std::string name = "store:" + std::to_string(m);
    member_tid[name] = tid_of(doc, name);
    for (const json& e : doc["traceEvents"]) {
      if (e["ph"] == "M" && e.contains("tid") && e["tid"] == member_tid[name]) CHECK(e["pid"] == 2);
    }
  }
  // Each member's roles, named by role and term, end to end on its own track.
  std::map<int, std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>> slices;
  for (const json& e : events_where(doc, "X")) {
    if (e["pid"] != 2) continue;
    slices[e["tid"].get<int>()].emplace_back(e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]));
  }
  for (auto& [tid, list] : slices)
    std::sort(list.begin(), list.end(),
              [](auto& a, auto& b) { return std::get<1>(a) < std::get<1>(b); });
  using Slice = std::tuple<std::string, std::int64_t, std::int64_t>;
  CHECK(slices[member_tid["store:1"]] == std::vector<Slice>{
                                             {"follower t0", 0, 100 * kMs},
                                             {"candidate t1", 100 * kMs, 110 * kMs},
                                             {"leader t1", 110 * kMs, 500 * kMs},
                                             {"crashed", 500 * kMs, 1500 * kMs},
                                             {"follower t2 of store:2", 1500 * kMs, 2000 * kMs},
                                         });
  CHECK(slices[member_tid["store:2"]].back() == Slice{"leader t2", 700 * kMs, 2000 * kMs});
  const std::vector<json> leaders = events_where(doc, "X", "leader t");
  REQUIRE(leaders.size() == 2);
  for (const json& e : leaders) CHECK(e["args"]["role"] == "leader");
  CHECK(leaders[0]["args"]["leader"] == "store:1");
  // store:0's stall nests in its follower slice.
  const std::vector<json> stalls = events_where(doc, "X", "paused");
  REQUIRE(stalls.size() == 1);
  CHECK(stalls[0]["tid"] == member_tid["store:0"]);
  CHECK(ns(stalls[0]["dur"]) == 100 * kMs);
  // The new leader's lease refresh is on its track; the client's failover on the client's.
  const std::vector<json> refresh = events_where(doc, "i", "refreshed 2 leases (term 2)");
  REQUIRE(refresh.size() == 1);
  CHECK(refresh[0]["tid"] == member_tid["store:2"]);
  const std::vector<json> moved = events_where(doc, "i", "store failover → store:2 (timeout)");
  REQUIRE(moved.size() == 1);
  CHECK(moved[0]["tid"] == tid_of(doc, "node 0"));
  CHECK(moved[0]["pid"] == 1);
  CHECK(moved[0]["args"]["request"] == 17);
  CHECK(moved[0]["args"]["member"] == "store:2");
  CHECK(doc["metadata"]["store_members"] == 3);
}

TEST_CASE("perfetto: server_role events name the store's tracks even when the header does not") {
  std::vector<Event> v = {server_role(0, 0, sim::Role::follower, 0),
                          server_role(10 * kMs, 1, sim::Role::leader, 1, 1),
                          make(EventKind::run_end, 100 * kMs)};
  TraceHeader h = replicated_header();  // the members by name, but no store_members
  h.store_members = 1;
  const json doc = parse(v, "members-late", h);
  CHECK(tid_of(doc, "store:0") != tid_of(doc, "store:1"));
  CHECK(events_where(doc, "X", "leader t1").size() == 1);
  CHECK_FALSE(doc["metadata"].contains("store_members"));
}

TEST_CASE("perfetto: a single store's trace has one process and no member tracks") {
  const json doc = parse({make(EventKind::store_pause, 10 * kMs, sim::kStoreEndpoint),
                          make(EventKind::store_resume, 20 * kMs, sim::kStoreEndpoint),
                          make(EventKind::run_end, 100 * kMs)},
                         "single-store");
  for (const json& e : doc["traceEvents"]) CHECK(e["pid"] == 1);
  for (const auto& [tid, name] : thread_names(doc)) CHECK(name.rfind("store:", 0) != 0);
  CHECK(events_where(doc, "X", "store paused").size() == 1);
}

TEST_CASE("perfetto: store requests are counted per 100 ms") {
  std::vector<Event> v;
  for (std::int64_t at : {10, 20, 90, 520})
    v.push_back(make(EventKind::store_request, at * kMs, 0));
  v.push_back(make(EventKind::run_end, 1000 * kMs));
  const json doc = parse(v, "counter");
  std::vector<std::pair<std::int64_t, std::int64_t>> got;
  for (const json& e : events_where(doc, "C", "store requests")) {
    got.emplace_back(ns(e["ts"]), e["args"]["per 100 ms"].get<std::int64_t>());
  }
  const std::vector<std::pair<std::int64_t, std::int64_t>> want = {
      {0, 3}, {100 * kMs, 0}, {500 * kMs, 1}, {600 * kMs, 0}};
  CHECK(got == want);
}

TEST_CASE("perfetto: faults are instants and network windows are slices until they heal") {
  const std::string groups = "0|1,2,store";
  auto fault = [](std::int64_t at, sim::FaultKind kind, sim::NodeId target, std::int64_t index,
                  std::int64_t duration) {
    Event e = make(EventKind::fault, at, target);
    e.code = static_cast<std::uint16_t>(kind);
    e.a = index;
    e.b = duration;
    return e;
  };
  auto network = [](std::int64_t at, sim::FaultKind kind, std::int64_t index) {
    Event e = make(EventKind::network_change, at);
    e.code = static_cast<std::uint16_t>(kind);
    e.a = index;
    return e;
  };
  Event partition = fault(100 * kMs, sim::FaultKind::partition, sim::kNoNode, 0, 300 * kMs);
  partition.text = groups;
  Event cut = fault(200 * kMs, sim::FaultKind::cut, 1, 1, 0);
  cut.peer = 2;
  const std::vector<Event> v = {
      partition,
      network(100 * kMs, sim::FaultKind::partition, 0),
      cut,  // overlaps the partition partly: another lane
      network(200 * kMs, sim::FaultKind::cut, 1),
      network(400 * kMs, sim::FaultKind::heal, 0),
      fault(500 * kMs, sim::FaultKind::heal, sim::kNoNode, 2, 0),
      network(500 * kMs, sim::FaultKind::heal, 2),
      fault(600 * kMs, sim::FaultKind::loss, sim::kNoNode, 3, 100 * kMs),
      make(EventKind::run_end, 1000 * kMs),
  };
  const json doc = parse(v, "faults");
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> windows;
  for (const json& e : events_where(doc, "X")) {
    windows.emplace_back(e["name"], ns(e["ts"]), ns(e["dur"]));
  }
  std::sort(windows.begin(), windows.end());
  const std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> want = {
      {"cut 1 → 2", 200 * kMs, 300 * kMs},
      {"loss", 600 * kMs, 100 * kMs},
      {"partition 0|1,2,store", 100 * kMs, 300 * kMs},
  };
  CHECK(windows == want);
  const std::vector<json> instants = events_where(doc, "i");
  REQUIRE(instants.size() == 4);
  for (const json& e : instants) CHECK(e["tid"] == tid_of(doc, "faults"));
  const std::vector<json> first = events_where(doc, "i", "partition");
  REQUIRE(first.size() == 1);
  CHECK(first[0]["name"] == "partition 0|1,2,store for 300ms");
  CHECK(first[0]["args"]["kind"] == "partition");
  CHECK(first[0]["args"]["duration_ns"] == 300 * kMs);
  CHECK(first[0]["args"]["groups"] == groups);
  CHECK(events_where(doc, "i", "cut 1 → 2")[0]["args"]["target"] == 1);
  // The cut overlaps the partition partly, so it went to a second lane.
  for (const json& e : events_where(doc, "X")) {
    CHECK(e["tid"] == tid_of(doc, e["name"] == "cut 1 → 2" ? "faults 2" : "faults"));
  }
  CHECK(nesting_problems(doc).empty());
}

TEST_CASE("perfetto: a pause that a belief change cuts through goes to the node's pauses track") {
  const std::vector<Event> v = {
      belief(10 * kMs, 2, sim::Role::leader, 1),       pause(100 * kMs, 2, 300 * kMs),
      belief(200 * kMs, 2, sim::Role::follower, 2, 0),  // the pause overlaps both slices partly
      make(EventKind::resume, 400 * kMs, 2),           make(EventKind::run_end, 1000 * kMs),
  };
  const json doc = parse(v, "crossing");
  const std::vector<json> pauses = events_where(doc, "X", "GC pause");
  REQUIRE(pauses.size() == 1);
  CHECK(pauses[0]["tid"] == tid_of(doc, "node 2 · pauses"));
  CHECK(ns(pauses[0]["dur"]) == 300 * kMs);
  CHECK(nesting_problems(doc).empty());
}

TEST_CASE("perfetto: a crash ends the pause, the belief and starts the downtime at one instant") {
  const std::vector<Event> v = {
      belief(10 * kMs, 0, sim::Role::leader, 1),
      pause(100 * kMs, 0, 900 * kMs),
      make(EventKind::crash, 300 * kMs, 0),
      make(EventKind::run_end, 1000 * kMs),
  };
  const json doc = parse(v, "crash-in-pause");
  const int node0 = tid_of(doc, "node 0");
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> got;
  for (const json& e : events_where(doc, "X")) {
    CHECK(e["tid"] == node0);
    got.emplace_back(e["name"], ns(e["ts"]), ns(e["dur"]));
  }
  std::sort(got.begin(), got.end());
  const std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> want = {
      {"GC pause", 100 * kMs, 200 * kMs},
      {"crashed", 300 * kMs, 700 * kMs},
      {"leader e1", 10 * kMs, 290 * kMs},
  };
  CHECK(got == want);
  CHECK(nesting_problems(doc).empty());
}

TEST_CASE("perfetto: every slice has a time and a duration and slices nest on every track") {
  std::vector<Event> v = {make(EventKind::run_start, 0)};
  // Beliefs, pauses, crashes, messages at shared instants and store holders, interleaved.
  for (std::int64_t round = 0; round < 20; ++round) {
    const std::int64_t t = round * 50 * kMs;
    const auto leader = static_cast<sim::NodeId>(round % 3);
    v.push_back(belief(t, leader, sim::Role::candidate, round + 1));
    v.push_back(belief(t, leader, sim::Role::leader, round + 1));
    for (sim::NodeId n = 0; n < 3; ++n) {
      if (n == leader) continue;
      v.push_back(message(EventKind::msg_send, t, leader, n, 1));
      v.push_back(belief(t + 1, n, sim::Role::follower, round + 1, leader));
    }
    for (sim::NodeId n = 0; n < 3; ++n) {
      if (n == leader) continue;
      v.push_back(message(EventKind::msg_deliver, t + 2 * kMs, n, leader, 1));
      v.push_back(message(EventKind::msg_send, t + 2 * kMs, n, leader, 0));
    }
    for (sim::NodeId n = 0; n < 3; ++n) {
      if (n != leader) v.push_back(message(EventKind::msg_deliver, t + 2 * kMs, leader, n, 0));
    }
    if (round % 4 == 1) {
      v.push_back(pause(t + 10 * kMs, leader, 20 * kMs));
      v.push_back(make(EventKind::resume, t + 30 * kMs, leader));
    }
    if (round % 7 == 3) v.push_back(make(EventKind::crash, t + 40 * kMs, leader));
    if (round % 7 == 3) v.push_back(make(EventKind::restart, t + 45 * kMs, leader));
  }
  v.push_back(make(EventKind::run_end, 1000 * kMs));
  const json doc = parse(v, "rich");
  std::size_t slices = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    REQUIRE(e.contains("ts"));
    REQUIRE(e.contains("dur"));
    CHECK(e["dur"].get<double>() >= 0);
  }
  CHECK(slices > 100);
  CHECK(nesting_problems(doc).empty());
  CHECK(events_where(doc, "X", "GC pause").size() == 5);
  CHECK(events_where(doc, "f").size() == 80);
  CHECK(misbound_flows(doc).empty());
}

TEST_CASE("perfetto: the same events give the same bytes") {
  std::vector<Event> v;
  for (std::int64_t i = 0; i < 50; ++i) {
    v.push_back(belief(i * kMs, static_cast<sim::NodeId>(i % 3), sim::Role::leader, i));
    v.push_back(message(EventKind::msg_send, i * kMs, static_cast<sim::NodeId>(i % 3),
                        static_cast<sim::NodeId>((i + 1) % 3), 0));
    v.push_back(message(EventKind::msg_deliver, i * kMs + 500,
                        static_cast<sim::NodeId>((i + 1) % 3), static_cast<sim::NodeId>(i % 3), 0));
  }
  v.push_back(make(EventKind::run_end, 100 * kMs));
  const Written a = write(v, "same-a");
  const Written b = write(v, "same-b");
  REQUIRE(a.ok);
  CHECK(a.text.size() > 1000);
  CHECK(a.text == b.text);
}

TEST_CASE("perfetto: past the byte limit no file is written and the error names the limit") {
  auto limit = GENERATE(as<std::uint64_t>{}, 100, 5000);
  std::vector<Event> v;
  for (std::int64_t i = 0; i < 200; ++i) v.push_back(sink_write(i * kMs, 0, 1, true));
  v.push_back(make(EventKind::run_end, 1000 * kMs));
  const Written w = write(v, "limit", header(), limit);
  CHECK_FALSE(w.ok);
  CHECK(w.text.empty());
  CHECK(w.error.find(std::to_string(limit) + " bytes") != std::string::npos);
  // The same events fit under a limit that is large enough.
  const Written whole = write(v, "no-limit");
  REQUIRE(whole.ok);
  CHECK(whole.text.size() > limit);
  const Written exact = write(v, "exact-limit", header(), whole.text.size());
  CHECK(exact.ok);
  CHECK(exact.text == whole.text);
}

TEST_CASE("perfetto: a stream that stops without run_end ends its slices at its last event") {
  const std::vector<Event> v = {
      belief(10 * kMs, 0, sim::Role::leader, 2),
      sink_write(70 * kMs, 0, 2, true),
  };
  const json doc = parse(v, "cut-short");
  const std::vector<json> leaders = events_where(doc, "X", "leader e2");
  REQUIRE(leaders.size() == 1);
  CHECK(ns(leaders[0]["dur"]) == 60 * kMs);
}

TEST_CASE("perfetto: a path that cannot be written is an error, not a file") {
  const fs::path path = fs::temp_directory_path() / "electsim-no-such-dir" / "x" / "trace.json";
  PerfettoWriter writer(path.string(), header());
  writer.on_event(make(EventKind::run_end, 0));
  CHECK_FALSE(writer.close());
  CHECK(writer.error().find("cannot write") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
}
