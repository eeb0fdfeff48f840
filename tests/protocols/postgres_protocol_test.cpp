// Tests of the postgres protocol (protocols/postgres/) against the fake context, with a real
// servers::Database answering its statements by hand: the statement each lock mode sends, a
// granted lock making a leader with the token of its fencing choice, the holder's health check,
// writes going to the database (same_transaction) or the sink, a clean release, and the
// parameter table.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/postgres/config.hpp"
#include "protocols/postgres/postgres.hpp"
#include "protocols/registry.hpp"
#include "servers/postgres/database.hpp"
#include "tests/protocols/kit.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::postgres::Fencing;
using electsim::protocols::postgres::LockMode;
using electsim::protocols::postgres::PostgresNode;
using electsim::protocols::postgres::PostgresProtocolConfig;
using electsim::servers::Database;
using electsim::testing::DbBench;
using electsim::testing::valid_config;
using json = nlohmann::json;
namespace sim = electsim::sim;

PostgresProtocolConfig config_of(const json& params, bool workload = false) {
  auto config = valid_config(
      [&](Problems& p) {
        return electsim::protocols::postgres::read_config(params, "/protocol", p);
      },
      workload);
  config.workload.interval = 100ms;
  return config;
}

// One node on a fake context; the database answers its statements when the test says so.
using Bench = DbBench<PostgresNode, PostgresProtocolConfig>;

}  // namespace

TEST_CASE("postgres protocol: each lock mode sends its statement, retried every retry_interval") {
  const auto [mode, op] = GENERATE(table<std::string, sim::DbOp>({
      {"advisory", sim::DbOp::try_advisory_lock},
      {"row", sim::DbOp::lock_row},
      {"skip_locked", sim::DbOp::lock_row_skip_locked},
  }));
  INFO(mode);
  Bench b(config_of({{"lock", mode}, {"retry_interval", "2s"}}));
  b.start();
  REQUIRE(b.ctx.db_calls.size() == 1);
  CHECK(b.ctx.db_calls[0].request.op == op);
  CHECK(b.ctx.belief() == sim::Belief::follower(sim::kNoNode, 0));
  b.ctx.fire_tag(*b.node, PostgresNode::kRetryTag);
  REQUIRE(b.ctx.db_calls.size() == 2);
  CHECK(b.ctx.db_calls[1].at == sim::LocalTime(2s));
}

TEST_CASE("postgres protocol: the token is the epoch row or txid_current(), as fencing says") {
  const auto [fencing, bump] = GENERATE(table<std::string, bool>({
      {"none", false},
      {"txid", false},
      {"epoch_row", true},
      {"same_transaction", true},
  }));
  INFO(fencing);
  Database db;
  Bench other(config_of({{"fencing", fencing}}), 1);
  other.start();
  other.answer(db);  // node 1 takes the lock first
  db.execute(db.session_of(1, 0, sim::LocalTime{}), sim::DbRequest{0, sim::DbOp::advisory_unlock},
             sim::LocalTime{});
  Bench b(config_of({{"fencing", fencing}}));
  b.start();
  CHECK(b.ctx.db_calls[0].request.bump_epoch == bump);
  b.answer(db);
  REQUIRE(b.node->leads());
  // Epochs count acquisitions (1, 2); txids count every transaction and only grow.
  CHECK(b.node->token() == 2);
  CHECK(b.ctx.belief() == sim::Belief::leader(b.node->token()));
}

TEST_CASE("postgres protocol: a follower stays one while the lock is another session's") {
  Database db;
  db.execute(db.session_of(2, 0, sim::LocalTime{}), sim::DbRequest{0, sim::DbOp::try_advisory_lock},
             sim::LocalTime{});
  Bench b(config_of(json::object()));
  b.start();
  b.answer(db);
  CHECK_FALSE(b.node->leads());
  b.run_for(10s);
  b.answer(db);
  CHECK_FALSE(b.node->leads());
  CHECK(b.ctx.db_calls.size() == 11);
}

TEST_CASE("postgres protocol: the holder steps down when its check goes unanswered") {
  Database db;
  Bench b(config_of({{"check_interval", "500ms"}}));
  b.start();
  b.answer(db);
  REQUIRE(b.node->leads());
  b.ctx.fire_tag(*b.node, PostgresNode::kCheckTag);
  REQUIRE(b.ctx.db_calls.back().request.op == sim::DbOp::check);
  b.answer(db);  // answered: still the holder
  b.ctx.fire_tag(*b.node, PostgresNode::kCheckTag);
  CHECK(b.node->leads());
  // This check is never answered: at the next one the holder gives up.
  b.ctx.fire_tag(*b.node, PostgresNode::kCheckTag);
  CHECK_FALSE(b.node->leads());
  CHECK(b.ctx.belief()->role == sim::Role::follower);
  CHECK(b.ctx.now() == sim::LocalTime(1500ms));
}

TEST_CASE("postgres protocol: a check that finds the lock gone deposes the holder") {
  Database db;
  Bench b(config_of(json::object()));
  b.start();
  b.answer(db);
  REQUIRE(b.node->leads());
  // The server restarted: a fresh database knows no session and no lock.
  Database restarted(db.durable());
  b.ctx.fire_tag(*b.node, PostgresNode::kCheckTag);
  b.answer(restarted);
  CHECK_FALSE(b.node->leads());
}

TEST_CASE("postgres protocol: same_transaction writes go to the database, the others to the sink") {
  const auto [fencing, to_db] = GENERATE(table<std::string, bool>({
      {"same_transaction", true},
      {"epoch_row", false},
      {"txid", false},
      {"none", false},
  }));
  INFO(fencing);
  Database db;
  Bench b(config_of({{"fencing", fencing}}, /*workload=*/true));
  b.start();
  b.answer(db);
  REQUIRE(b.node->leads());
  b.run_for(350ms);
  std::size_t db_writes = 0;
  for (const auto& call : b.ctx.db_calls) {
    if (call.request.op == sim::DbOp::write) {
      ++db_writes;
      CHECK(call.request.token == b.node->token());
    }
  }
  CHECK(db_writes == (to_db ? 3u : 0u));
  CHECK(b.ctx.sink_calls.size() == (to_db ? 0u : 3u));
}

TEST_CASE("postgres protocol: a write the database refuses deposes the holder") {
  Database db;
  Bench b(config_of(json::object(), /*workload=*/true));
  b.start();
  b.answer(db);
  REQUIRE(b.node->leads());
  // pg_terminate_backend: the session is gone; the client's statements now open a new one
  // (here: a new life of the same client), which holds nothing.
  db.operator_clear(b.ctx.now());
  b.life = 1;
  b.run_for(100ms);
  b.answer(db);
  CHECK_FALSE(b.node->leads());
}

TEST_CASE("postgres protocol: step_down and stop release the lock cleanly") {
  const auto [mode, release] = GENERATE(table<std::string, sim::DbOp>({
      {"advisory", sim::DbOp::advisory_unlock},
      {"row", sim::DbOp::end_transaction},
      {"skip_locked", sim::DbOp::end_transaction},
  }));
  INFO(mode);
  Database db;
  Bench b(config_of({{"lock", mode}}));
  b.start();
  b.answer(db);
  REQUIRE(b.node->leads());
  b.node->on_command(b.ctx, sim::Command::stop);
  CHECK(b.ctx.db_calls.back().request.op == release);
  CHECK_FALSE(b.node->leads());
  b.answer(db);
  CHECK(db.advisory_holder() == 0);
  CHECK(db.row_holder() == 0);
  // Stopped: no retry.
  const std::size_t sent = b.ctx.db_calls.size();
  b.run_for(10s);
  CHECK(b.ctx.db_calls.size() == sent);
}

TEST_CASE("postgres protocol: the registry entry prepares a database world") {
  const auto* info = electsim::protocols::find_protocol("postgres");
  REQUIRE(info != nullptr);
  Problems problems;
  electsim::protocols::ClusterInfo cluster{3, {}};
  auto prepared = info->prepare({{"fencing", "none"}}, "/protocol", cluster, problems);
  REQUIRE(prepared.has_value());
  CHECK(info->servers == std::vector<std::string>{"postgres"});
  CHECK(prepared->coordinator == sim::server_kind::postgres);
  CHECK(prepared->fencing == false);
  CHECK_FALSE(prepared->leader_key.has_value());
}

TEST_CASE("postgres protocol: bad parameters are located problems") {
  const auto [params, pointer, part] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"lock": "advisery"})", "/protocol/lock", "did you mean \"advisory\"?"},
      {R"({"fencing": "epoch"})", "/protocol/fencing", "one of"},
      {R"({"retry_interval": "0s"})", "/protocol/retry_interval", "1ms"},
      {R"({"check_interval": 5})", "/protocol/check_interval", "unit"},
      {R"({"retry_intervl": "1s"})", "/protocol/retry_intervl", "did you mean \"retry_interval\"?"},
  }));
  INFO(params);
  Problems problems;
  CHECK_FALSE(
      electsim::protocols::postgres::read_config(json::parse(params), "/protocol", problems));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == pointer);
  CHECK_THAT(problems[0].format(), Catch::Contains(part));
}
