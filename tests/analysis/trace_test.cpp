// Tests of traces: a written trace read back gives the same report and the same hash as the live
// stream; a trace is whole or absent (temporary file, byte limit); the hash covers every field;
// the reader reports malformed lines with their line number.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "sim/events.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"
#include "tests/temp_files.hpp"

namespace {

using namespace electsim;
using analysis::TraceHeader;
using sim::Event;
using sim::EventKind;
namespace fs = std::filesystem;

Event make(EventKind kind, std::int64_t at_ms, sim::NodeId node = sim::kNoNode) {
  Event e;
  e.time = sim::Time(at_ms * 1'000'000);
  e.kind = kind;
  e.node = node;
  return e;
}

// A typed event (sim/events.hpp) at `at_ms`.
Event at(Event e, std::int64_t at_ms) {
  e.time = sim::Time(at_ms * 1'000'000);
  return e;
}

TraceHeader header() {
  TraceHeader h;
  h.scenario = "round-trip";
  h.variant = "fenced";
  h.protocol = "lease";
  h.seed = 0xF00DF00DF00DF00Dull;  // above INT64_MAX: written unsigned
  h.node_count = 3;
  h.duration = std::chrono::seconds(2);
  h.message_types = {"ping", "vote"};
  h.leader_key = "/election/\"leader\"";
  h.uses_store = true;
  h.topology = analysis::legacy_topology(h.node_count, 1);
  return h;
}

// Texts live here so that the events' string_views stay valid.
const std::string kGroups = "0|1,2,store,sink";
const std::string kKey = "/election/\"leader\"";
const std::string kOddText = "line\nbreak\ttab \\ slash \x01 caf\xc3\xa9";

// One of every kind, with the odd values a schema must not lose: unsigned seed bits, endpoints,
// unknown message types, non-boolean flags, slots a kind does not name.
std::vector<Event> rich_stream() {
  std::vector<Event> v;
  Event e = make(EventKind::run_start, 0);
  e.a = 3;
  e.b = static_cast<std::int64_t>(0xF00DF00DF00DF00Dull);
  v.push_back(e);
  e = make(EventKind::belief, 10, 0);
  e.code = static_cast<std::uint16_t>(sim::Role::leader);
  e.a = 4;
  e.b = sim::kNoNode;
  v.push_back(e);
  e = make(EventKind::belief, 11, 1);
  e.code = static_cast<std::uint16_t>(sim::Role::follower);
  e.a = 4;
  e.b = 0;
  v.push_back(e);
  e = make(EventKind::store_change, 12, 0);
  e.a = 17;
  e.b = 99;
  e.text = kKey;
  v.push_back(e);
  v.push_back(at(sim::events::msg_send(0, 1, 1, 1), 20));
  v.push_back(at(sim::events::msg_send(0, 2, 9, 2), 20));  // type 9: not named by the protocol
  v.push_back(at(sim::events::msg_deliver(1, 0, 1, 1), 25));
  v.push_back(at(sim::events::msg_drop(0, 2, 9, sim::DropReason::cut_on_arrival, 2), 26));
  e = make(EventKind::timer_fire, 30, 2);
  e.a = 7;
  v.push_back(e);
  e = make(EventKind::store_request, 31, 0);
  e.code = static_cast<std::uint16_t>(sim::StoreOp::lease_keepalive);
  e.a = 12;
  v.push_back(e);
  e = make(EventKind::store_apply, 32, 0);
  e.code = static_cast<std::uint16_t>(sim::StoreOp::lease_keepalive);
  e.a = 17;
  e.b = 1;
  e.c = 99;
  e.d = 12;
  v.push_back(e);
  e = make(EventKind::store_reply, 33, 0);
  e.code = static_cast<std::uint16_t>(sim::StoreOp::txn);
  e.a = 17;
  e.c = 1;
  v.push_back(e);
  e = make(EventKind::watch_notify, 34, 1);
  e.code = 1;
  e.a = 18;
  e.text = kKey;
  v.push_back(e);
  e = make(EventKind::sink_write, 40, 0);
  e.a = 4;
  e.b = -5;
  e.c = 1;
  e.d = 3;
  v.push_back(e);
  e = make(EventKind::sink_reply, 41, 0);
  e.a = 4;
  e.c = 1;
  v.push_back(e);
  e = make(EventKind::fault, 50, sim::kNoNode);
  e.code = static_cast<std::uint16_t>(sim::FaultKind::partition);
  e.a = 0;
  e.b = 300'000'000;
  e.text = kGroups;
  v.push_back(e);
  e = make(EventKind::network_change, 50);
  e.code = static_cast<std::uint16_t>(sim::FaultKind::partition);
  v.push_back(e);
  e = make(EventKind::fault, 60, 0);
  e.code = static_cast<std::uint16_t>(sim::FaultKind::cut);
  e.peer = sim::kStoreEndpoint;
  e.a = 1;
  v.push_back(e);
  e = make(EventKind::fault, 61, sim::kNoNode);
  e.code = static_cast<std::uint16_t>(sim::FaultKind::crash);
  e.a = 2;
  e.c = 1;  // skipped
  v.push_back(e);
  e = make(EventKind::clock_change, 70, sim::kStoreEndpoint);
  e.code = 1;
  e.b = -250'000'000;
  e.c = 5;  // a slot the schema does not name
  v.push_back(e);
  e = make(EventKind::store_pause, 80, sim::kStoreEndpoint);
  e.a = 100'000'000;
  v.push_back(e);
  e = make(EventKind::store_resume, 180, sim::kStoreEndpoint);
  v.push_back(e);
  e = make(EventKind::lease_expire, 200);
  e.a = 99;
  v.push_back(e);
  e = make(EventKind::store_change, 200, sim::kNoNode);
  e.code = 1;
  e.a = 19;
  e.c = 1;
  e.text = kKey;
  v.push_back(e);
  e = make(EventKind::store_change, 300, 2);
  e.a = 20;
  e.text = kKey;
  v.push_back(e);
  e = make(EventKind::belief, 310, 2);
  e.code = static_cast<std::uint16_t>(sim::Role::leader);
  e.a = 20;
  e.b = sim::kNoNode;
  v.push_back(e);
  e = make(EventKind::pause, 400, 0);
  e.a = 50'000'000;
  v.push_back(e);
  e = make(EventKind::resume, 450, 0);
  v.push_back(e);
  e = make(EventKind::sink_write, 460, 0);
  e.a = 4;
  e.c = 0;
  e.d = 20;
  v.push_back(e);
  e = make(EventKind::crash, 500, 0);
  e.a = 2;  // not 0 or 1: written as a number
  v.push_back(e);
  e = make(EventKind::restart, 600, 0);
  e.text = kOddText;  // a slot the schema does not name
  v.push_back(e);
  e = make(EventKind::run_end, 2000);
  v.push_back(e);
  return v;
}

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("electsim-trace-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json report_json(const analysis::Report& r) {
  return analysis::summary_json(analysis::RunInfo{}, r, analysis::Verdict{});
}

}  // namespace

TEST_CASE("trace: a written trace read back gives the same report and the same hash") {
  const fs::path dir = scratch_dir("round-trip");
  const fs::path path = dir / "run.jsonl";
  const TraceHeader h = header();
  analysis::Analyzer live(h.analysis_config());
  analysis::TraceHasher live_hash;
  {
    analysis::TraceWriter writer(path.string(), h);
    REQUIRE(writer.ok());
    for (const Event& e : rich_stream()) {
      live.on_event(e);
      live_hash.on_event(e);
      writer.on_event(e);
    }
    REQUIRE(writer.close());
    CHECK(writer.bytes() == fs::file_size(path));
  }
  const analysis::Report live_report = live.finish();
  REQUIRE(live_report.failovers.size() ==
          2);  // partition and cut: the store-key takeover ends them

  const analysis::TraceReadResult read = analysis::read_trace_file(path.string());
  REQUIRE(read.error == "");
  CHECK(read.header.scenario == h.scenario);
  CHECK(read.header.variant == h.variant);
  CHECK(read.header.seed == h.seed);
  CHECK(read.header.node_count == h.node_count);
  CHECK(read.header.duration == h.duration);
  CHECK(read.header.message_types == h.message_types);
  CHECK(read.header.leader_key == h.leader_key);
  CHECK(read.header.uses_store == h.uses_store);
  CHECK(report_json(read.report) == report_json(live_report));
  CHECK(read.info.trace_hash == live_hash.hex());
  CHECK(read.info.events_processed == rich_stream().size());
  CHECK(read.info.seed == h.seed);
  CHECK(read.info.duration == live_report.duration);
  CHECK_FALSE(electsim::testing::has_temporary(path));
  fs::remove_all(dir);
}

namespace {

// The trace a writer leaves for `h`: run_start, `events`, run_end at 2 s.
std::string written(const TraceHeader& h, const char* name, const std::vector<Event>& events) {
  const fs::path dir = scratch_dir(name);
  const fs::path path = dir / "run.jsonl";
  {
    analysis::TraceWriter writer(path.string(), h);
    Event start = make(EventKind::run_start, 0);
    start.a = static_cast<std::int64_t>(h.node_count);
    start.b = static_cast<std::int64_t>(h.seed);
    writer.on_event(start);
    for (const Event& e : events) writer.on_event(e);
    writer.on_event(make(EventKind::run_end, 2000));
    REQUIRE(writer.close());
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove_all(dir);
  return text.str();
}

}  // namespace

TEST_CASE("trace: the header carries the world's servers and election groups") {
  TraceHeader h = header();
  const sim::ServerTraits member{true, sim::ServerLane::store,
                                 sim::kProcessFaults | sim::fault_bit(sim::FaultKind::campaign),
                                 true};
  std::vector<sim::NamedEndpoint> servers = {
      {sim::store_member_endpoint(0), "store:0", "store", "store", member},
      {sim::store_member_endpoint(1), "store:1", "store", "store", member},
      {sim::kSinkEndpoint, "sink", "sink", "", {false, sim::ServerLane::sink, 0, false}},
      {sim::server_endpoint(12),
       "echo",
       "echo",
       "",
       {false, sim::ServerLane::process, sim::kClockFaults, false}}};
  h.topology =
      sim::Topology(3, servers, {{"election", "lease", {0, 1, 2}, "/k"}, {"b", "raft", {}, {}}});
  std::stringstream text(written(h, "topology",
                                 {at(sim::events::conn_break(1, sim::server_endpoint(12)), 1),
                                  at(sim::events::client_failover(2, sim::store_member_endpoint(1),
                                                                  sim::FailoverReason::timeout, 0),
                                     2)}));
  // Servers by the names the world gave them, even a kind no reader knows.
  CHECK_THAT(text.str(), Catch::Contains(R"("node":1,"peer":"echo")"));
  CHECK_THAT(text.str(), Catch::Contains(R"("member":"store:1")"));
  const analysis::TraceReadResult read = analysis::read_trace(text);
  REQUIRE(read.error == "");
  REQUIRE(read.header.topology.servers().size() == servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const sim::NamedEndpoint& s = read.header.topology.servers()[i];
    CHECK(s.address == servers[i].address);
    CHECK(s.name == servers[i].name);
    CHECK(s.kind == servers[i].kind);
    CHECK(s.group == servers[i].group);
    CHECK(s.traits == servers[i].traits);
  }
  REQUIRE(read.header.topology.groups().size() == 2);
  CHECK(read.header.topology.groups()[0].nodes == std::vector<sim::NodeId>{0, 1, 2});
  CHECK(read.header.topology.groups()[0].key == std::optional<std::string>("/k"));
  CHECK(read.header.topology.groups()[1].protocol == "raft");
  CHECK(read.header.store_members == 2);  // from the store group
}

TEST_CASE("trace: the coordinator is a server the header names, at whatever address it has") {
  TraceHeader h = header();
  const sim::ServerTraits coordinating{true, sim::ServerLane::process, sim::kProcessFaults, true};
  const sim::Endpoint db = sim::server_endpoint(30);  // no built-in kind's address
  h.topology = sim::Topology(
      3,
      {{sim::kStoreEndpoint,
        "store",
        "store",
        "store",
        {true, sim::ServerLane::store, sim::kClockFaults, true}},
       {sim::kSinkEndpoint, "sink", "sink", "", {false, sim::ServerLane::sink, 0, false}},
       {db, "db", "postgres", "", coordinating}},
      {sim::election_group(3, "postgres", std::nullopt)});
  auto round_trip = [&](sim::Endpoint coordinator) {
    h.coordinator = coordinator;
    return written(h, "coordinator", {});
  };
  const std::string named = round_trip(db);
  CHECK_THAT(named, Catch::Contains(R"("coordinator":"db")"));
  std::istringstream in(named);
  const analysis::TraceReadResult read = analysis::read_trace(in);
  REQUIRE(read.error == "");
  CHECK(read.header.coordinator == db);
  // The store is the coordinator a header leaves unsaid.
  const std::string store = round_trip(sim::kStoreEndpoint);
  CHECK_THAT(store, !Catch::Contains(R"("coordinator":")"));
  std::istringstream store_in(store);
  const analysis::TraceReadResult store_read = analysis::read_trace(store_in);
  REQUIRE(store_read.error == "");
  CHECK(store_read.header.coordinator == sim::kStoreEndpoint);
  // A name that is no server leadership depends on is refused.
  for (const char* wrong :
       {R"("coordinator":"sink")", R"("coordinator":"nowhere")", R"("coordinator":3)"}) {
    std::string text = named;
    text.replace(text.find(R"("coordinator":"db")"), std::string(R"("coordinator":"db")").size(),
                 wrong);
    INFO(wrong);
    std::istringstream bad(text);
    CHECK_THAT(analysis::read_trace(bad).error,
               Catch::StartsWith("line 1: header field \"coordinator\" must name a server"));
  }
}

TEST_CASE("trace: the header carries the configured clocks and the lease, for the pictures") {
  TraceHeader h = header();
  const sim::ServerTraits store{true, sim::ServerLane::store, sim::kClockFaults, true};
  h.topology = sim::Topology(3, {{sim::kStoreEndpoint, "store", "store", "store", store}},
                             {sim::election_group(3, "lease", std::optional<std::string>("/k"))});
  // Without either, the header says nothing of them.
  const std::string plain = written(h, "drawing-plain", {});
  CHECK_THAT(plain, !Catch::Contains(R"("clocks":)") && !Catch::Contains(R"("lease":)"));
  h.clocks = {{1, sim::ClockConfig{sim::Duration(-250'000'000), 40'000, {}}},
              {sim::kStoreEndpoint, sim::ClockConfig{sim::Duration(0),
                                                     0,
                                                     {{sim::Time(sim::Duration(5'000'000'000)),
                                                       sim::Duration(3'000'000'000)}}}}};
  h.lease = TraceHeader::Lease{sim::Duration(2'000'000'000), false, sim::Duration(0)};
  const std::string text = written(h, "drawing", {});
  CHECK_THAT(text, Catch::Contains(R"("at":"1","drift_ppb":40000,"offset_ns":-250000000,)"
                                   R"("step_at_ns":[],"step_by_ns":[])"));
  CHECK_THAT(text, Catch::Contains(R"("at":"store","drift_ppb":0,"offset_ns":0,)"
                                   R"("step_at_ns":[5000000000],"step_by_ns":[3000000000])"));
  std::istringstream in(text);
  const analysis::TraceReadResult read = analysis::read_trace(in);
  REQUIRE(read.error == "");
  REQUIRE(read.header.clocks.size() == 2);
  CHECK(read.header.clocks[0].endpoint == 1);
  CHECK(read.header.clocks[0].config.offset == sim::Duration(-250'000'000));
  CHECK(read.header.clocks[0].config.drift_ppb == 40'000);
  CHECK(read.header.clocks[1].endpoint == sim::kStoreEndpoint);
  REQUIRE(read.header.clocks[1].config.steps.size() == 1);
  CHECK(read.header.clocks[1].config.steps[0].at == sim::Time(sim::Duration(5'000'000'000)));
  CHECK(read.header.clocks[1].config.steps[0].by == sim::Duration(3'000'000'000));
  REQUIRE(read.header.lease);
  CHECK(read.header.lease->ttl == sim::Duration(2'000'000'000));
  CHECK_FALSE(read.header.lease->judged_by_store);
  // Each malformed entry is refused at the header, saying what was expected.
  for (auto [from, to, expected] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {R"("at":"1")", R"("at":"9")", "each entry is {\"at\": an endpoint of the header"},
           {R"("drift_ppb":40000)", R"("drift_ppb":-1000000000)", "within a scenario's bounds"},
           {R"([5000000000],)", R"([-1],)", "within a scenario's bounds"},
           {R"([5000000000],)", R"([5000000000,6000000000],)", "of one length"},
           {R"("ttl_ns":2000000000)", R"("ttl_ns":0)", "\"ttl_ns\": from 1 ms to ten years"},
           {R"("judged_by_store":false)", R"("judged_by_store":1)",
            "\"judged_by_store\": true or false"},
       }) {
    INFO(to);
    std::string bad = text;
    REQUIRE(bad.find(from) != std::string::npos);
    bad.replace(bad.find(from), from.size(), to);
    std::istringstream bad_in(bad);
    CHECK_THAT(analysis::read_trace(bad_in).error,
               Catch::StartsWith("line 1: header field \"") && Catch::Contains(expected));
  }
}

TEST_CASE("trace: a header whose topology is malformed is refused, saying what was expected") {
  const std::string head =
      R"({"electsim_trace":2,"seed":1,"nodes":3,"duration_ns":1000,"message_types":[],)";
  const std::string group =
      R"("groups":[{"name":"election","protocol":"raft","nodes":[0,2],"key":null}])";
  auto [fields, expected] = GENERATE_REF(table<std::string, std::string>({
      {group, "header field \"endpoints\" must be the list of the world's servers"},
      {R"("endpoints":[{"address":3,"name":"x","kind":"x","group":""}],)" + group,
       "entry 0: \"address\" must be a server address"},
      {R"("endpoints":[{"address":-2,"name":"7","kind":"x","group":""}],)" + group,
       "a server's name is not a number"},
      {R"("endpoints":[{"address":-2,"name":"a","kind":"x","group":""},)"
       R"({"address":-3,"name":"a","kind":"y","group":""}],)" +
           group,
       "entry 1: a second server of one name"},
      {R"("endpoints":[{"address":-2,"name":"a","kind":"x","group":""},)"
       R"({"address":-2,"name":"b","kind":"y","group":""}],)" +
           group,
       "entry 1: a second server at one address"},
      {R"("endpoints":[],"groups":[{"name":"e","protocol":"raft","nodes":[0,5]}])",
       "\"nodes\" must be rising runs of the header's nodes"},
      {R"("endpoints":[],"groups":[{"name":"e","protocol":"raft","nodes":[2,2,1,1]}])",
       "\"nodes\" must be rising runs of the header's nodes"},
      {R"("endpoints":[])", "header field \"groups\" must be the list"},
      {R"("endpoints":[],"groups":[{"name":"e","protocol":"raft","nodes":[0,2],"store":7}])",
       "\"store\" must be a name"},
      {R"("endpoints":[],"groups":[{"name":"e","protocol":"raft","nodes":[0,2],"store":"s-1"}])",
       "\"store\" must name a shard of the store"},
      {R"("endpoints":[],"groups":[{"name":"e","protocol":"raft","nodes":[0,2],"via":"0"}])",
       "\"via\" must name a server of the header"},
  }));
  INFO(fields);
  std::istringstream in(head + fields + "}\n" + R"({"t":0,"ev":"run_start","nodes":3,"seed":1})" +
                        "\n");
  const analysis::TraceReadResult read = analysis::read_trace(in);
  CHECK_THAT(read.error, Catch::StartsWith("line 1: ") && Catch::Contains(expected));
}

TEST_CASE("trace: lines follow the documented schema") {
  const TraceHeader types = header();  // messages "ping" and "vote"
  const std::vector<Event> v = rich_stream();
  CHECK(analysis::format_trace_event(v[0], types) ==
        R"({"t":0,"ev":"run_start","nodes":3,"seed":17297745686452629517})");
  CHECK(analysis::format_trace_event(v[1], types) ==
        R"({"t":10000000,"ev":"belief","node":0,"role":"leader","epoch":4,"leader":null})");
  CHECK(analysis::format_trace_event(v[5], types) ==
        R"({"t":20000000,"ev":"msg_send","from":0,"to":2,"type":"type_9","id":2})");
  CHECK(
      analysis::format_trace_event(v[7], types) ==
      R"({"t":26000000,"ev":"msg_drop","from":0,"to":2,"type":"type_9","reason":"cut_on_arrival","id":2})");
  CHECK(
      analysis::format_trace_event(v[13], types) ==
      R"({"t":40000000,"ev":"sink_write","writer":0,"token":4,"payload":-5,"accepted":true,"highest_before":3})");
  CHECK(
      analysis::format_trace_event(v[15], types) ==
      R"({"t":50000000,"ev":"fault","fault":"partition","node":null,"index":0,"duration_ns":300000000,"skipped":false,"groups":"0|1,2,store,sink"})");
  CHECK(
      analysis::format_trace_event(v[17], types) ==
      R"({"t":60000000,"ev":"fault","fault":"cut","node":0,"peer":"store","index":1,"duration_ns":0,"skipped":false})");
  CHECK(
      analysis::format_trace_event(v[19], types) ==
      R"({"t":70000000,"ev":"clock_change","node":"store","what":"step","drift_ppb":0,"amount_ns":-250000000,"c":5})");
  CHECK(analysis::format_trace_event(v.back(), types) == R"({"t":2000000000,"ev":"run_end"})");
}

TEST_CASE("trace: message types named twice are written by number and still read back") {
  const fs::path dir = scratch_dir("duplicate-types");
  const fs::path path = dir / "t.jsonl";
  TraceHeader h = header();
  h.message_types = {"ping", "ping", "type_7"};
  Event start = make(EventKind::run_start, 0);
  start.a = static_cast<std::int64_t>(h.node_count);
  start.b = static_cast<std::int64_t>(h.seed);
  std::vector<Event> events = {start};
  for (std::uint16_t code : {0, 1, 2, 7}) {
    Event e = make(EventKind::msg_send, 1, 0);
    e.peer = 1;
    e.code = code;
    events.push_back(e);
  }
  events.push_back(make(EventKind::run_end, 5));
  analysis::TraceHasher live;
  {
    analysis::TraceWriter writer(path.string(), h);
    for (const Event& e : events) {
      writer.on_event(e);
      live.on_event(e);
    }
    REQUIRE(writer.close());
  }
  const std::string text = read_file(path);
  CHECK(text.find(R"("type":"type_0")") != std::string::npos);
  CHECK(text.find(R"("type":"type_1")") != std::string::npos);
  const analysis::TraceReadResult read = analysis::read_trace_file(path.string());
  REQUIRE(read.error == "");
  CHECK(read.info.trace_hash == live.hex());
  fs::remove_all(dir);
}

TEST_CASE("trace: a writer destroyed without close leaves no file behind") {
  const fs::path dir = scratch_dir("no-close");
  const fs::path path = dir / "run.jsonl";
  {
    analysis::TraceWriter writer(path.string(), header());
    for (const Event& e : rich_stream()) writer.on_event(e);
    CHECK(electsim::testing::has_temporary(path));
  }
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(electsim::testing::has_temporary(path));
  fs::remove_all(dir);
}

TEST_CASE("trace: a trace that cannot be opened is an error, not a crash") {
  const fs::path dir = scratch_dir("unwritable");
  const fs::path path = dir / "missing-dir" / "run.jsonl";
  analysis::TraceWriter writer(path.string(), header());
  CHECK_FALSE(writer.ok());
  CHECK_THAT(writer.error(), Catch::Contains("cannot write trace"));
  for (const Event& e : rich_stream()) writer.on_event(e);
  CHECK_FALSE(writer.close());
  CHECK_FALSE(fs::exists(path));
  fs::remove_all(dir);
}

TEST_CASE("trace: past its byte limit a trace stops, fails with the limit and is absent") {
  const fs::path dir = scratch_dir("limit");
  const fs::path path = dir / "run.jsonl";
  // Room for the header and a few events, not for the whole stream.
  const std::uint64_t header_bytes = analysis::TraceWriter(path.string(), header()).bytes();
  const std::uint64_t limit = header_bytes + 1000;
  analysis::TraceWriter writer(path.string(), header(), limit);
  std::size_t accepted_events = 0;
  for (const Event& e : rich_stream()) {
    writer.on_event(e);
    if (writer.ok()) ++accepted_events;
  }
  CHECK(accepted_events > 0);
  CHECK(accepted_events < rich_stream().size());
  CHECK(writer.bytes() <= limit);
  CHECK_FALSE(writer.ok());
  CHECK_THAT(writer.error(), Catch::Contains("limit of " + std::to_string(limit) + " bytes"));
  CHECK_FALSE(writer.close());
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(electsim::testing::has_temporary(path));
  fs::remove_all(dir);
}

TEST_CASE("trace: a limit large enough for the whole trace is no error") {
  const fs::path dir = scratch_dir("limit-ok");
  const fs::path path = dir / "run.jsonl";
  std::uint64_t needed = 0;
  {
    analysis::TraceWriter writer(path.string(), header());
    for (const Event& e : rich_stream()) writer.on_event(e);
    REQUIRE(writer.close());
    needed = writer.bytes();
  }
  analysis::TraceWriter exact(path.string(), header(), needed);
  for (const Event& e : rich_stream()) exact.on_event(e);
  CHECK(exact.close());
  CHECK(fs::file_size(path) == needed);
  fs::remove_all(dir);
}

TEST_CASE("trace: the hash changes when any one field of one event changes") {
  const std::string other_text = "/election/other";
  auto mutate = GENERATE(as<std::string>{}, "time", "kind", "code", "node", "peer", "a", "b", "c",
                         "d", "text");
  std::vector<Event> changed = rich_stream();
  Event& e = changed[3];  // a store_change, which uses a text
  if (mutate == "time") e.time = e.time + std::chrono::nanoseconds(1);
  if (mutate == "kind") e.kind = EventKind::watch_notify;
  if (mutate == "code") e.code = 1;
  if (mutate == "node") e.node = 1;
  if (mutate == "peer") e.peer = 0;
  if (mutate == "a") e.a += 1;
  if (mutate == "b") e.b += 1;
  if (mutate == "c") e.c = 1;
  if (mutate == "d") e.d = -1;
  if (mutate == "text") e.text = other_text;
  INFO("changed field " << mutate);
  analysis::TraceHasher original;
  analysis::TraceHasher modified;
  for (const Event& x : rich_stream()) original.on_event(x);
  for (const Event& x : changed) modified.on_event(x);
  CHECK(original.hex() != modified.hex());
  CHECK(original.hex().size() == 16);
}

TEST_CASE("trace: the hash of the empty stream is FNV-1a's offset basis") {
  CHECK(analysis::TraceHasher().hex() == "cbf29ce484222325");
}

TEST_CASE("trace: text bytes cannot slide between events without changing the hash") {
  const std::string ab = "ab";
  const std::string a = "a";
  const std::string b = "b";
  const std::string empty;
  auto hash_of = [](const std::string& first, const std::string& second) {
    analysis::TraceHasher h;
    Event e = make(EventKind::watch_notify, 1, 0);
    e.text = first;
    h.on_event(e);
    e.text = second;
    h.on_event(e);
    return h.hex();
  };
  CHECK(hash_of(ab, empty) != hash_of(a, b));
}

TEST_CASE("trace: malformed traces are reported with their line number") {
  const std::string head =
      R"({"electsim_trace":1,"scenario":"s","variant":"","protocol":"raft","seed":1,"nodes":3,)"
      R"("duration_ns":1000,"message_types":["ping"],"leader_key":null,"uses_store":false})"
      "\n";
  const std::string start = R"({"t":0,"ev":"run_start","nodes":3,"seed":1})"
                            "\n";
  const std::string end = R"({"t":1000,"ev":"run_end"})"
                          "\n";
  auto [text, expected] = GENERATE_REF(table<std::string, std::string>({
      {"", "line 1: empty trace"},
      {"{\"t\":0}\n", "line 1: expected the trace header"},
      {R"({"electsim_trace":3,"seed":1,"nodes":3,"duration_ns":1})"
       "\n",
       "line 1: trace schema version 3 is not supported (this electsim reads versions 1 to 2)"},
      {R"({"electsim_trace":0,"seed":1,"nodes":3,"duration_ns":1})"
       "\n",
       "line 1: trace schema version 0 is not supported"},
      {head + start + "{not json\n" + end, "line 3: not a trace line"},
      {head + start + R"({"t":5,"ev":"coronation","node":1})" + "\n" + end,
       "line 3: unknown event kind \"coronation\""},
      {head + start + R"({"t":5,"ev":"belief","node":1,"role":"emperor","epoch":1})" + "\n" + end,
       "line 3: field \"role\": unknown name \"emperor\""},
      {head + start + R"({"t":5,"ev":"belief","node":7,"role":"leader","epoch":1})" + "\n" + end,
       "line 3: field \"node\": 7 is not a node"},
      {head + start + R"({"t":5,"ev":"belief","node":1,"mood":"good"})" + "\n" + end,
       "line 3: unknown field \"mood\" in a belief event"},
      {head + start + R"({"t":5,"ev":"msg_send","from":1,"to":2,"type":"gossip"})" + "\n" + end,
       "line 3: field \"type\": unknown message type \"gossip\""},
      {head + start + R"({"t":"soon","ev":"run_end"})" + "\n", "line 3: \"t\" must be"},
      {head + R"({"t":5,"ev":"run_start","nodes":3,"seed":1})" + "\n" +
           R"({"t":4,"ev":"run_end"})" + "\n",
       "line 3: time goes backwards"},
      // What the kernel never writes: a damaged or spliced stream is refused, not analysed.
      {head + R"({"t":0,"ev":"belief","node":1,"role":"leader","epoch":1})" + "\n" + end,
       "line 2: expected run_start as the first event"},
      {head + R"({"t":0,"ev":"run_start","nodes":4,"seed":1})" + "\n" + end,
       "line 2: run_start names 4 nodes, the header 3"},
      {head + start + start + end, "line 3: a second run_start"},
      {head + start + R"({"t":5,"ev":"crash","node":1,"graceful":false})" + "\n" +
           R"({"t":6,"ev":"crash","node":1,"graceful":false})" + "\n" + end,
       "line 4: node 1 crashes while it is down"},
      {head + start + R"({"t":5,"ev":"restart","node":2})" + "\n" + end,
       "line 3: node 2 restarts while it is up"},
      {head + start + R"({"t":5,"ev":"belief","node":"store","role":"leader","epoch":1})" + "\n" +
           end,
       "line 3: field \"node\": expected a node of this trace (0 to 2), found \"store\""},
      {head + start + R"({"t":5,"ev":"sink_write","writer":1,"token":-4,"payload":1})" + "\n" + end,
       "line 3: a negative fencing token"},
      {head + start + R"({"t":5,"ev":"belief","node":1,"role":"leader","epoch":-1})" + "\n" + end,
       "line 3: field \"epoch\": expected a value from 0, found -1"},
      {head + start + R"({"t":5,"ev":"store_request","node":1,"op":"get","request":1})" + "\n" +
           R"({"t":5,"ev":"store_request","node":1,"op":"get","request":1})" + "\n" + end,
       "line 4: store request 1 after request 1 (ids only grow)"},
      {head + start + R"({"t":5,"ev":"store_apply","node":1,"op":"get","request":9})" + "\n" + end,
       "line 3: store request 9 applied before it was sent"},
      {head + start + R"({"t":2000,"ev":"run_end"})" + "\n",
       "line 3: an event at 2000 ns, after the run's duration of 1000 ns"},
      {head + std::string(70000, 'x') + "\n", "line 2: a line longer than 65536 bytes"},
      {head + std::string(300, '[') + "\n", "line 2: not a trace line (line 1, column 5"},
      {head + start, "line 2: the trace ends without run_end"},
      {head + start + end + start, "line 4: events after run_end"},
  }));
  std::istringstream in(text);
  const analysis::TraceReadResult read = analysis::read_trace(in);
  INFO(text);
  CHECK_THAT(read.error, Catch::StartsWith(expected));
  CHECK_FALSE(read.ok());
}

TEST_CASE("trace: blank lines are skipped and a missing file is an error") {
  std::istringstream in(
      R"({"electsim_trace":1,"seed":1,"nodes":2,"duration_ns":1000,"message_types":[]})"
      "\n\n"
      R"({"t":0,"ev":"run_start","nodes":2,"seed":1})"
      "\n"
      R"({"t":10,"ev":"belief","node":1,"role":"leader","epoch":1,"leader":null})"
      "\n\n"
      R"({"t":1000,"ev":"run_end"})"
      "\n\n");
  const analysis::TraceReadResult read = analysis::read_trace(in);
  REQUIRE(read.error == "");
  CHECK(read.report.intervals.size() == 1);
  CHECK(read.report.leaderless_time == std::chrono::nanoseconds(10));
  CHECK(read.info.events_processed == 3);

  const analysis::TraceReadResult missing =
      analysis::read_trace_file((fs::temp_directory_path() / "electsim-no-such-trace").string());
  CHECK_THAT(missing.error, Catch::StartsWith("cannot open the trace"));
}

namespace {

// The hash as docs/trace-format.md defines it: FNV-1a over each event's fields as little-endian
// bytes (time 8, kind 1, code 2, node 4, peer 4, a to d 8 each, the text's length 4), then the
// text, one byte at a time.
std::uint64_t fnv1a_by_the_book(const std::vector<Event>& events) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto byte = [&h](std::uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
  const auto field = [&](std::uint64_t v, int width) {
    for (int i = 0; i < width; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (const Event& e : events) {
    field(static_cast<std::uint64_t>(e.time.ns), 8);
    field(static_cast<std::uint64_t>(e.kind), 1);
    field(e.code, 2);
    field(static_cast<std::uint32_t>(e.node), 4);
    field(static_cast<std::uint32_t>(e.peer), 4);
    field(static_cast<std::uint64_t>(e.a), 8);
    field(static_cast<std::uint64_t>(e.b), 8);
    field(static_cast<std::uint64_t>(e.c), 8);
    field(static_cast<std::uint64_t>(e.d), 8);
    field(static_cast<std::uint32_t>(e.text.size()), 4);
    for (const char ch : e.text) byte(static_cast<std::uint8_t>(ch));
  }
  return h;
}

}  // namespace

TEST_CASE("trace: the hasher computes FNV-1a over the documented bytes, whatever the values") {
  std::vector<Event> events = rich_stream();
  // Values at every width's edges: zero, one byte, all bytes, negative (all bytes set).
  for (const std::int64_t v :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{255}, std::int64_t{256}, std::int64_t{-1},
        INT64_MIN, INT64_MAX, std::int64_t{1} << 40, std::int64_t{0x0100000000000000}}) {
    Event e = make(EventKind::sink_write, 3, static_cast<sim::NodeId>(v & 0x7fff));
    e.time = sim::Time(v < 0 ? 0 : v);
    e.code = static_cast<std::uint16_t>(v);
    e.peer = static_cast<sim::NodeId>(v);
    e.a = v;
    e.b = static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(v));  // -v, without overflow
    e.c = v >> 7;
    e.d = v ^ 0x5a5a;
    constexpr std::string_view kText = "xxxxxxx";  // outlives the events that view it
    e.text = kText.substr(0, static_cast<std::size_t>(v & 7));
    events.push_back(e);
  }
  analysis::TraceHasher hasher;
  for (const Event& e : events) hasher.on_event(e);
  CHECK(hasher.value() == fnv1a_by_the_book(events));
}
