// Tests of the consul protocol (protocols/consul/) as state machines on fake contexts, with one
// real servers::Store answering every candidate's requests by hand: the acquire, the session
// renewed every TTL/2 and invalidated after TTL x 2, the monitor that steps down when the key no
// longer names its session, the wait of lock_retry_time after a refused acquire, lock-delay after
// a holder's session ends, the two fencing tokens and the parameter table's checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/consul/consul.hpp"
#include "protocols/registry.hpp"
#include "servers/store/store.hpp"
#include "tests/protocols/kit.hpp"
#include "tests/protocols/store_bench.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::consul::Behavior;
using electsim::protocols::consul::ConsulConfig;
using electsim::protocols::consul::ConsulNode;
using electsim::protocols::consul::FencingToken;
using electsim::sim::Duration;
using electsim::sim::StoreOp;
using electsim::sim::StoreReply;
using electsim::sim::StoreRequest;
using electsim::testing::valid_config;
using json = nlohmann::json;
namespace sim = electsim::sim;

ConsulConfig config_of(const json& params) {
  return valid_config([&](Problems& p) {
    return electsim::protocols::consul::read_config(params, "/protocol", p);
  });
}

// n candidates on fake contexts sharing one store; the test decides whose requests arrive.
struct Cluster : electsim::testing::StoreBench<ConsulNode, ConsulConfig> {
  Cluster(const ConsulConfig& c, std::size_t n) : StoreBench(c, n) {
    on_apply = [this](std::size_t i, const StoreRequest& request, const StoreReply& reply) {
      if (request.lock_acquire) acquires.push_back(Acquire{store_now, i, reply});
    };
  }
  // Every lock acquire the store answered: when, whose, and the reply.
  struct Acquire {
    sim::LocalTime at;
    std::size_t node = 0;
    StoreReply reply;
  };
  std::vector<Acquire> acquires;

  std::optional<std::size_t> leader() const {
    std::optional<std::size_t> found;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (alive[i] && nodes[i]->leads()) {
        REQUIRE_FALSE(found);
        found = i;
      }
    }
    return found;
  }
};

}  // namespace

TEST_CASE(
    "consul: the first candidate takes the lock with the acquire's ModifyIndex as its token") {
  Cluster c(config_of(json::object()), 3);
  c.start();
  REQUIRE(c.leader() == std::size_t{0});
  const std::optional<sim::KeyValue> kv = c.store.peek("service/electsim/leader");
  REQUIRE(kv);
  CHECK(kv->lease == c.nodes[0]->session());
  CHECK(kv->value == "0");
  CHECK(kv->lock_index == 1);
  CHECK(c.nodes[0]->token() == kv->mod_revision);
  // The others found it held and block on the key: a watch each, no acquire sent.
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(c.ctxs[i]->store_calls_of(StoreOp::watch).size() == 1);
    CHECK(c.ctxs[i]->store_calls_of(StoreOp::txn).empty());
    REQUIRE(c.ctxs[i]->belief());
    CHECK(c.ctxs[i]->belief()->known_leader == 0);
  }
}

TEST_CASE("consul: a session is a store lease of TTL x 2 with the lock-delay and behavior") {
  const std::string behavior = GENERATE("release", "delete");
  Cluster c(config_of({{"ttl", "20s"}, {"lock_delay", "7s"}, {"behavior", behavior}}), 1);
  c.start();
  const auto grant = c.ctxs[0]->last_store_call(StoreOp::lease_grant);
  REQUIRE(grant);
  CHECK(grant->request.ttl == 40s);  // structs.SessionTTLMultiplier = 2
  CHECK(grant->request.lock_delay == 7s);
  CHECK(grant->request.release_keys == (behavior == "release"));
}

TEST_CASE("consul: the session is renewed every ttl/2, which keeps the lock") {
  Cluster c(config_of({{"ttl", "10s"}}), 2);
  c.start();
  c.run_for(60s);
  const auto renews = c.ctxs[0]->store_calls_of(StoreOp::lease_keepalive);
  REQUIRE(renews.size() >= 2);
  for (std::size_t k = 1; k < renews.size(); ++k) {
    CHECK(renews[k].at - renews[k - 1].at == 5s);
  }
  CHECK(c.leader() == std::size_t{0});
  CHECK(c.nodes[1]->acquires_refused() == 0);
}

TEST_CASE("consul: a holder steps down as soon as the key no longer names its session") {
  Cluster c(config_of(json::object()), 2);
  c.start();
  REQUIRE(c.leader() == std::size_t{0});
  // An operator deletes the key (consul kv delete): the monitor's blocking query returns.
  StoreRequest del;
  del.op = StoreOp::del;
  del.key = "service/electsim/leader";
  electsim::servers::StoreOutput out;
  c.store.apply(sim::kNoNode, del, c.store_now, out);
  c.deliver_out(out);
  CHECK_FALSE(c.nodes[0]->leads());
  REQUIRE(c.ctxs[0]->belief());
  CHECK(c.ctxs[0]->belief()->role == sim::Role::follower);
  // Its release finds nothing to release and its session destroy holds no key: no lock-delay.
  c.answer_all();
  CHECK_FALSE(c.store.lock_delay_until("service/electsim/leader"));
  // The waiter saw the key go and took it at once.
  CHECK(c.leader() == std::size_t{1});
}

TEST_CASE("consul: an acquire refused under lock-delay is tried again after lock_retry_time") {
  Cluster c(config_of({{"ttl", "10s"}, {"lock_delay", "15s"}}), 2);
  c.start();
  REQUIRE(c.leader() == std::size_t{0});
  c.crash(0);
  c.run_for(60s);
  REQUIRE(c.leader() == std::size_t{1});
  // Every acquire node 1 sent while the key was delayed was refused, and the next came
  // lock_retry_time (5s) after the refusal.
  std::vector<Cluster::Acquire> mine;
  for (const auto& a : c.acquires) {
    if (a.node == 1) mine.push_back(a);
  }
  REQUIRE(mine.size() >= 3);
  CHECK(c.nodes[1]->acquires_refused() >= 2);
  for (std::size_t k = 0; k + 1 < mine.size(); ++k) {
    CHECK(mine[k].reply.lock_delayed);
    CHECK(mine[k + 1].at - mine[k].at == 5s);
  }
  CHECK(mine.back().reply.succeeded);
}

TEST_CASE("consul: after the holder crashes nobody acquires before 2 x ttl + lock_delay") {
  const auto ttl = GENERATE(10s, 20s);
  const auto delay = GENERATE(0s, 15s);
  Cluster c(config_of({{"ttl", std::to_string(ttl.count()) + "s"},
                       {"lock_delay", std::to_string(delay.count()) + "s"}}),
            3);
  c.start();
  c.run_for(3s);
  REQUIRE(c.leader() == std::size_t{0});
  c.crash(0);
  const sim::LocalTime last_renew = [&] {
    const auto renews = c.ctxs[0]->store_calls_of(StoreOp::lease_keepalive);
    return renews.empty() ? c.ctxs[0]->store_calls_of(StoreOp::lease_grant).back().at
                          : renews.back().at;
  }();
  c.run_for(ttl * 2 + delay + 10s);
  REQUIRE(c.leader());
  const auto taken = std::find_if(c.acquires.begin(), c.acquires.end(),
                                  [](const auto& a) { return a.reply.succeeded && a.node != 0; });
  REQUIRE(taken != c.acquires.end());
  CHECK(taken->at >= last_renew + ttl * 2 + delay);
  // Waiters wake at the invalidation (their watch) and then every lock_retry_time.
  CHECK(taken->at <= last_renew + ttl * 2 + delay + 5s);
}

TEST_CASE("consul: with fencing_token lock_index the token counts acquisitions of the key") {
  Cluster c(config_of({{"fencing_token", "lock_index"}, {"lock_delay", "0s"}}), 2);
  c.start();
  REQUIRE(c.leader() == std::size_t{0});
  CHECK(c.nodes[0]->token() == 1);
  c.nodes[0]->on_command(*c.ctxs[0], sim::Command::step_down);
  c.answer_all();
  c.run_for(1s);
  REQUIRE(c.leader() == std::size_t{1});
  CHECK(c.nodes[1]->token() == 2);
}

TEST_CASE("consul: the monitor rides out monitor_retries failed queries, then the lock is lost") {
  const int retries = GENERATE(0, 2);
  Cluster c(config_of({{"monitor_retries", retries}, {"lock_wait_time", "1s"}}), 1);
  c.start();
  REQUIRE(c.nodes[0]->leads());
  // The holder's monitoring reads now fail (the servers have no leader).
  int failures = 0;
  while (c.nodes[0]->leads() && failures < 10) {
    const auto t = c.ctxs[0]->next_timer();
    REQUIRE(t);
    c.ctxs[0]->fire_next(*c.nodes[0]);
    for (; c.answered[0] < c.ctxs[0]->store_calls.size(); ++c.answered[0]) {
      const auto& call = c.ctxs[0]->store_calls[c.answered[0]];
      if (call.request.op != StoreOp::get) continue;
      StoreReply reply;
      reply.id = call.id;
      reply.op = StoreOp::get;
      reply.error = sim::StoreError::no_leader;
      reply.succeeded = false;
      ++failures;
      c.ctxs[0]->deliver(*c.nodes[0], reply);
    }
  }
  CHECK(failures == retries + 1);
  CHECK_FALSE(c.nodes[0]->leads());
}

TEST_CASE("consul: parameters are range-checked at their JSON pointers") {
  using Row = std::pair<json, std::string>;
  const auto [params, pointer] = GENERATE(table<json, std::string>({
      Row{{{"ttl", "9s"}}, "/protocol/ttl"},
      Row{{{"ttl", "86401s"}}, "/protocol/ttl"},
      Row{{{"lock_delay", "61s"}}, "/protocol/lock_delay"},
      Row{{{"lock_delay", "-1s"}}, "/protocol/lock_delay"},
      Row{{{"renew_interval", "15s"}}, "/protocol/renew_interval"},
      Row{{{"monitor_retries", -1}}, "/protocol/monitor_retries"},
      Row{{{"behavior", "keep"}}, "/protocol/behavior"},
      Row{{{"fencing_token", "lock_index"}, {"behavior", "delete"}}, "/protocol/fencing_token"},
      Row{{{"key", ""}}, "/protocol/key"},
  }));
  Problems problems;
  const auto config = electsim::protocols::consul::read_config(params, "/protocol", problems);
  CHECK_FALSE(config);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == pointer);
}

TEST_CASE("consul: the defaults are Consul's and api.Lock's") {
  const ConsulConfig c = config_of(json::object());
  CHECK(c.ttl == 15s);
  CHECK(c.store_lease_ttl() == 30s);
  CHECK(c.lock_delay == 15s);
  CHECK(c.behavior == Behavior::release);
  CHECK(c.renew_interval == 7500ms);
  CHECK(c.lock_wait_time == 15s);
  CHECK(c.lock_retry_time == 5s);
  CHECK(c.monitor_retry_time == 2s);
  CHECK(c.monitor_retries == 0);
  CHECK(c.fencing_token == FencingToken::modify_index);
  CHECK(c.fencing);
  CHECK(c.key == "service/electsim/leader");
  CHECK(config_of({{"ttl", "40s"}}).renew_interval == 20s);
  const auto* info = electsim::protocols::find_protocol("consul");
  REQUIRE(info != nullptr);
  CHECK(info->params.size() == 11);
}

TEST_CASE("consul: a step-down releases the key first and destroys the session once answered") {
  Cluster c(config_of(json::object()), 2);
  c.start();
  REQUIRE(c.leader() == std::size_t{0});
  const sim::LeaseId session = c.nodes[0]->session();
  c.nodes[0]->on_command(*c.ctxs[0], sim::Command::step_down);
  // The monitor's watch is closed and the release is out; the destroy waits for the release's
  // answer (api.Lock's Unlock).
  REQUIRE_FALSE(c.ctxs[0]->store_calls.empty());
  CHECK(c.ctxs[0]->store_calls.back().request.op == StoreOp::txn);
  CHECK(c.ctxs[0]->store_calls_of(StoreOp::lease_revoke).empty());
  c.answer_all();
  const auto destroy = c.ctxs[0]->last_store_call(StoreOp::lease_revoke);
  REQUIRE(destroy);
  CHECK(destroy->request.lease == session);
  // Released before its session went: no lock-delay, and the waiter took the key.
  CHECK_FALSE(c.store.lock_delay_until("service/electsim/leader"));
  CHECK(c.leader() == std::size_t{1});
}
