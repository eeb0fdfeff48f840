// Tests of the db-flag protocol (protocols/db_flag/) against the fake context, with a real
// servers::Database answering its UPDATEs by hand: the first UPDATE wins, followers keep polling,
// the holder never looks again, a crashed holder's flag blocks everyone (its own next life
// included) until a person clears it, only a clean stop clears it, and writes carry token 0.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/db_flag/db_flag.hpp"
#include "protocols/registry.hpp"
#include "servers/postgres/database.hpp"
#include "tests/protocols/kit.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::db_flag::DbFlagConfig;
using electsim::protocols::db_flag::DbFlagNode;
using electsim::servers::Database;
using electsim::testing::DbBench;
using json = nlohmann::json;
namespace sim = electsim::sim;

// The defaults, with the leader's write workload on only when a case asks for it.
DbFlagConfig config_of(bool workload) {
  DbFlagConfig c;
  c.workload.enabled = workload;
  c.workload.interval = 100ms;
  return c;
}

// One db-flag node on a fake context; the database answers its UPDATEs when the test says so.
struct Bench : DbBench<DbFlagNode, DbFlagConfig> {
  explicit Bench(sim::NodeId self, bool workload = false, std::uint32_t life = 0)
      : DbBench(config_of(workload), self, life) {}
};

}  // namespace

TEST_CASE("db-flag: the first UPDATE wins, the others follow it and keep polling") {
  Database db;
  Bench a(0), b(1);
  a.start();
  b.start();
  REQUIRE(a.ctx.db_calls.front().request.op == sim::DbOp::set_flag);
  a.answer(db);
  b.answer(db);
  CHECK(a.node->leads());
  CHECK(a.ctx.belief() == sim::Belief::leader(0));
  CHECK_FALSE(b.node->leads());
  CHECK(b.ctx.belief() == sim::Belief::follower(0, 0));
  b.run_for(5s);
  CHECK(b.ctx.db_calls.size() == 6);
  // The holder never runs another statement: nothing could tell it that it lost the flag.
  a.run_for(5s);
  CHECK(a.ctx.db_calls.size() == 1);
}

TEST_CASE("db-flag: a crashed holder blocks election forever, its own next life included") {
  Database db;
  Bench a(0);
  a.start();
  a.answer(db);
  REQUIRE(a.node->leads());
  // Node 0 crashes (its process and connection are gone) and comes back as a new life.
  Bench again(0, false, 1);
  Bench b(1);
  again.start();
  b.start();
  for (int round = 0; round < 100; ++round) {
    again.answer(db);
    b.answer(db);
    again.run_for(1s);
    b.run_for(1s);
  }
  CHECK_FALSE(again.node->leads());
  CHECK_FALSE(b.node->leads());
  CHECK(again.ctx.belief() == sim::Belief::follower(sim::kNoNode, 0));
  // A person clears the row: the next UPDATE wins.
  db.operator_clear(b.ctx.now());
  b.run_for(1s);
  b.answer(db);
  CHECK(b.node->leads());
}

TEST_CASE("db-flag: only a clean stop clears the flag") {
  Database db;
  Bench a(0);
  a.start();
  a.answer(db);
  REQUIRE(a.node->leads());
  a.node->on_command(a.ctx, sim::Command::stop);
  CHECK(a.ctx.db_calls.back().request.op == sim::DbOp::clear_flag);
  a.answer(db);
  CHECK(db.durable().flag_holder == sim::kNoNode);
  CHECK_FALSE(a.node->leads());
}

TEST_CASE("db-flag: every write carries the constant token 0") {
  Database db;
  Bench a(0, /*workload=*/true);
  a.start();
  a.answer(db);
  a.run_for(1s);
  REQUIRE(a.ctx.sink_calls.size() == 10);
  for (const auto& w : a.ctx.sink_calls) CHECK(w.token == electsim::protocols::db_flag::kNoToken);
}

TEST_CASE("db-flag: the registry entry leaves the sink's fencing off and needs the database") {
  const auto* info = electsim::protocols::find_protocol("db-flag");
  REQUIRE(info != nullptr);
  Problems problems;
  auto prepared = info->prepare(json::object(), "/protocol", {3, {}}, problems);
  REQUIRE(prepared.has_value());
  CHECK(prepared->fencing == false);
  CHECK(info->servers == std::vector<std::string>{"postgres"});
  CHECK(prepared->coordinator == sim::server_kind::postgres);
  CHECK_FALSE(info->prepare({{"retry_interval", "-1s"}}, "/protocol", {3, {}}, problems));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/retry_interval");
}
