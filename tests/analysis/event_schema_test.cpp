// The event schema is written once (sim/event_schema.cpp): the typed emitters fill exactly the
// fields it names, docs/trace-format.md's table is generated from it, and traces of the previous
// version still read.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/trace.hpp"
#include "sim/event_schema.hpp"
#include "sim/events.hpp"
#include "tests/files.hpp"

namespace {

using namespace electsim;
using nlohmann::json;
using sim::EventKind;
namespace ev = sim::events;
using std::chrono::nanoseconds;

struct Expected {
  sim::Event event;
  json fields;  // every field the trace line carries besides "t" and "ev"
};

// One event of every kind, built by its typed emitter with values that differ from each other and
// from every slot's default, and the fields its trace line must carry.
std::vector<Expected> one_of_each() {
  const std::vector<std::string> no_text;
  return {
      {ev::run_start(5, 42), {{"nodes", 5}, {"seed", 42}}},
      {ev::run_end(), json::object()},
      {ev::fault(sim::FaultKind::cut, 1, 2, 3, nanoseconds(4), true, ""),
       {{"fault", "cut"},
        {"node", 1},
        {"peer", 2},
        {"index", 3},
        {"duration_ns", 4},
        {"skipped", true}}},
      {ev::belief(1, sim::Role::leader, 7, 3),
       {{"node", 1}, {"role", "leader"}, {"epoch", 7}, {"leader", 3}}},
      {ev::crash(2, true), {{"node", 2}, {"graceful", true}}},
      {ev::restart(2), {{"node", 2}}},
      {ev::pause(3, nanoseconds(9)), {{"node", 3}, {"duration_ns", 9}}},
      {ev::resume(3), {{"node", 3}}},
      {ev::clock_change(4, ev::ClockWhat::offset, 11, nanoseconds(12)),
       {{"node", 4}, {"what", "offset"}, {"drift_ppb", 11}, {"amount_ns", 12}}},
      {ev::timer_fire(1, 13), {{"node", 1}, {"tag", 13}}},
      {ev::msg_send(1, 2, 1, 14), {{"from", 1}, {"to", 2}, {"type", "vote"}, {"id", 14}}},
      {ev::msg_deliver(2, 1, 1, 14), {{"to", 2}, {"from", 1}, {"type", "vote"}, {"id", 14}}},
      {ev::msg_drop(1, 2, 0, sim::DropReason::node_down, 15),
       {{"from", 1}, {"to", 2}, {"type", "ping"}, {"reason", "node_down"}, {"id", 15}}},
      {ev::store_request(3, sim::StoreOp::txn, 16, "/k"),
       {{"node", 3}, {"op", "txn"}, {"request", 16}, {"key", "/k"}}},
      {ev::store_apply(3, sim::StoreOp::lease_grant, 17, true, 18, 16, "40s"),
       {{"node", 3},
        {"op", "lease_grant"},
        {"revision", 17},
        {"succeeded", true},
        {"lease", 18},
        {"request", 16},
        {"negotiated_timeout", "40s"}}},
      {ev::store_change("/k", ev::Change::del, 19, 2, 18, true),
       {{"key", "/k"},
        {"change", "delete"},
        {"revision", 19},
        {"owner", 2},
        {"lease", 18},
        {"expired", true}}},
      {ev::lease_expire(18), {{"lease", 18}}},
      {ev::store_reply(3, sim::StoreOp::put, 20, true, sim::StoreError::no_leader, 16),
       {{"node", 3},
        {"op", "put"},
        {"revision", 20},
        {"succeeded", true},
        {"error", 4},
        {"request", 16}}},
      {ev::watch_notify(4, "/k", ev::Change::del, 21),
       {{"node", 4}, {"key", "/k"}, {"change", "delete"}, {"revision", 21}}},
      {ev::sink_write(1, 22, 23, true, 24),
       {{"writer", 1}, {"token", 22}, {"payload", 23}, {"accepted", true}, {"highest_before", 24}}},
      {ev::sink_reply(1, 22, true), {{"node", 1}, {"token", 22}, {"accepted", true}}},
      {ev::store_pause(sim::kStoreEndpoint, nanoseconds(25)),
       {{"node", "store"}, {"duration_ns", 25}}},
      {ev::store_resume(sim::kStoreEndpoint), {{"node", "store"}}},
      {ev::network_change(sim::FaultKind::partition, 26), {{"fault", "partition"}, {"index", 26}}},
      {ev::sink_send(2, 27, 28, nanoseconds(29), nanoseconds(30)),
       {{"writer", 2}, {"token", 27}, {"payload", 28}, {"send_delay_ns", 29}, {"late_ns", 30}}},
      {ev::server_role(sim::store_member_endpoint(1), sim::Role::candidate, 31,
                       sim::store_member_endpoint(2)),
       {{"member", "store:1"}, {"role", "candidate"}, {"term", 31}, {"leader", "store:2"}}},
      {ev::raft_commit(sim::store_member_endpoint(1), 32, 31, 33),
       {{"leader", "store:1"}, {"index", 32}, {"term", 31}, {"latency_ns", 33}}},
      {ev::lease_refresh(sim::store_member_endpoint(1), 34, 31),
       {{"leader", "store:1"}, {"leases", 34}, {"term", 31}}},
      {ev::client_failover(3, sim::store_member_endpoint(2), sim::FailoverReason::disconnect, 16),
       {{"node", 3}, {"member", "store:2"}, {"reason", "disconnect"}, {"request", 16}}},
      {ev::server_request(1, sim::kPostgresEndpoint, 35, "check"),
       {{"node", 1}, {"server", "postgres"}, {"request", 35}, {"op", "check"}}},
      {ev::conn_break(1, sim::kSinkEndpoint), {{"node", 1}, {"peer", "sink"}}},
  };
}

}  // namespace

TEST_CASE("event schema: each typed emitter fills exactly the fields its kind names") {
  const std::vector<Expected> all = one_of_each();
  analysis::TraceHeader header;
  header.node_count = 5;
  header.message_types = {"ping", "vote"};
  header.topology = analysis::legacy_topology(5, 3);  // store, store:1, store:2, sink, ...
  std::set<EventKind> kinds;
  for (const Expected& x : all) {
    kinds.insert(x.event.kind);
    INFO(sim::event_kind_name(x.event.kind));
    json line = json::parse(analysis::format_trace_event(x.event, header));
    CHECK(line["ev"] == sim::event_kind_name(x.event.kind));
    line.erase("t");
    line.erase("ev");
    // A slot the schema does not name would be written under its generic name (a, b, ...) and
    // fail here, as would a value in the wrong slot.
    CHECK(line == x.fields);
  }
  CHECK(kinds.size() == static_cast<std::size_t>(sim::kEventKindCount));
}

TEST_CASE("event schema: the kind count counts the last kind") {
  // Every kind has a name; the value one past the count has none, so a kind added after the last
  // one counted is caught here.
  for (int k = 0; k < sim::kEventKindCount; ++k) {
    CHECK(std::string(sim::event_kind_name(static_cast<EventKind>(k))) != "?");
  }
  CHECK(std::string(sim::event_kind_name(static_cast<EventKind>(sim::kEventKindCount))) == "?");
}

TEST_CASE("event schema: within a kind, every field has its own name and its own slot") {
  for (int k = 0; k < sim::kEventKindCount; ++k) {
    const auto kind = static_cast<EventKind>(k);
    INFO(sim::event_kind_name(kind));
    std::set<std::string_view> names;
    std::set<sim::Slot> slots;
    for (const sim::EventField& f : sim::event_schema(kind).fields) {
      CHECK(names.insert(f.name).second);
      CHECK(slots.insert(f.slot).second);
      CHECK((f.format == sim::FieldFormat::text) == (f.slot == sim::Slot::text));
    }
  }
}

TEST_CASE("event schema: docs/trace-format.md's event table is the schema's") {
  // On a difference, `electsim list events` prints the table to paste.
  CHECK(testing::block_at(testing::source_file("docs/trace-format.md"), "| `ev` | fields |") ==
        sim::event_table_markdown());
}

TEST_CASE("event schema: a version 1 trace reads, its messages without ids") {
  const std::string events = R"({"t":0,"ev":"run_start","nodes":2,"seed":1})"
                             "\n"
                             R"({"t":5,"ev":"msg_send","from":0,"to":1,"type":"ping"})"
                             "\n"
                             R"({"t":9,"ev":"msg_deliver","to":1,"from":0,"type":"ping"})"
                             "\n"
                             R"({"t":1000,"ev":"run_end"})"
                             "\n";
  auto header = [](int version) {
    return fmt::format(
        R"({{"electsim_trace":{},"seed":1,"nodes":2,"duration_ns":1000,"message_types":["ping"]}})"
        "\n",
        version);
  };
  std::istringstream old_trace(header(1) + events);
  const analysis::TraceReadResult old_read = analysis::read_trace(old_trace);
  REQUIRE(old_read.error == "");
  CHECK(old_read.header.schema_version == 1);
  CHECK(old_read.info.events_processed == 4);
  CHECK(old_read.report.messages_sent == 1);
  // Its hash is the one such a trace had: messages hashed with id 0.
  analysis::TraceHasher zero_ids;
  const std::vector<std::pair<std::int64_t, sim::Event>> stream = {{0, ev::run_start(2, 1)},
                                                                   {5, ev::msg_send(0, 1, 0, 0)},
                                                                   {9, ev::msg_deliver(1, 0, 0, 0)},
                                                                   {1000, ev::run_end()}};
  for (auto [t, e] : stream) {
    e.time = sim::Time(t);
    zero_ids.on_event(e);
  }
  CHECK(old_read.info.trace_hash == zero_ids.hex());
  CHECK(old_read.report.messages_delivered == 1);
}
