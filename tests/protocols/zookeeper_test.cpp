// Tests of the zookeeper protocol (protocols/zookeeper/) as state machines on fake contexts, with
// one real sim::Store answering every candidate's requests by hand: the recipe (the lowest
// sequence leads, each other candidate watches only its predecessor), the czxid token, the
// negotiated session timeout and its pings, session expiry on the ensemble's ticks, SUSPENDED
// for careful and careless clients, and the parameter table's checks.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/registry.hpp"
#include "protocols/zookeeper/zookeeper.hpp"
#include "servers/store/store.hpp"
#include "tests/protocols/kit.hpp"
#include "tests/protocols/store_bench.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::zookeeper::czxid;
using electsim::protocols::zookeeper::OnSuspended;
using electsim::protocols::zookeeper::ZookeeperConfig;
using electsim::protocols::zookeeper::ZookeeperNode;
using electsim::sim::Duration;
using electsim::sim::StoreOp;
using electsim::sim::StoreReply;
using electsim::sim::StoreRequest;
using electsim::testing::valid_config;
using json = nlohmann::json;
namespace sim = electsim::sim;

ZookeeperConfig config_of(const json& params) {
  return valid_config([&](Problems& p) {
    return electsim::protocols::zookeeper::read_config(params, "/protocol", p);
  });
}

// n candidates on fake contexts sharing one store; the test decides whose requests arrive.
using Ensemble = electsim::testing::StoreBench<ZookeeperNode, ZookeeperConfig>;

// The ensemble's tickTime (store.tick_time): 1s lets the 3s and 6s sessions below be granted as
// asked, with expiry on the first whole second after the timeout.
void set_tick(Ensemble& e, Duration tick) {
  electsim::servers::StoreConfig config;
  config.tick_time = tick;
  e.store = electsim::servers::Store(config);
}

}  // namespace

TEST_CASE(
    "zookeeper: the lowest sequence leads and every other candidate watches its predecessor") {
  Ensemble e(config_of(json{{"session_timeout", "3s"}}), 5);
  set_tick(e, 1s);
  e.start();
  REQUIRE(e.nodes[0]->leads());
  CHECK(e.leaders() == 1);
  CHECK(e.nodes[0]->watched_key().empty());
  for (std::size_t i = 1; i < 5; ++i) {
    INFO("candidate " << i);
    CHECK_FALSE(e.nodes[i]->leads());
    CHECK(e.nodes[i]->watched_key() == "/electsim/election/" + std::to_string(i - 1));
    CHECK(e.nodes[i]->node_revision() > e.nodes[i - 1]->node_revision());
  }
  // The token is the node's czxid: epoch in the high 32 bits, the create's revision below.
  CHECK(e.nodes[0]->token() == czxid(1, e.nodes[0]->node_revision()));
  CHECK((e.nodes[0]->token() >> 32) == 1);
  // Followers know the leader and its czxid, which the leader wrote into its node.
  const auto belief = e.ctxs[4]->belief();
  REQUIRE(belief.has_value());
  CHECK(belief->known_leader == 0);
  CHECK(belief->epoch == e.nodes[0]->token());
}

TEST_CASE("zookeeper: pings every third of the session timeout keep every session alive") {
  Ensemble e(config_of(json{{"session_timeout", "3s"}}), 3);
  set_tick(e, 1s);
  e.start();
  const std::size_t pings_before = e.ctxs[1]->store_calls_of(StoreOp::lease_keepalive).size();
  e.run_for(10s);
  CHECK(e.nodes[0]->leads());
  CHECK(e.leaders() == 1);
  // 10s / 1s: ten pings each, and nobody expired.
  CHECK(e.ctxs[1]->store_calls_of(StoreOp::lease_keepalive).size() - pings_before == 10);
  CHECK(e.store.lease_count() == 3);
}

TEST_CASE("zookeeper: the holder's death wakes exactly one watcher, its successor, who leads") {
  const std::size_t n = GENERATE(3u, 5u, 7u);
  INFO("candidates=" << n);
  Ensemble e(config_of(json{{"session_timeout", "3s"}}), n);
  set_tick(e, 1s);
  e.start();
  REQUIRE(e.nodes[0]->leads());
  const sim::Token old_token = e.nodes[0]->token();
  e.alive[0] = false;  // crashes: no more pings
  e.watch_events = 0;
  e.run_for(4s);
  CHECK(e.watch_events == 1);
  CHECK(e.nodes[1]->leads());
  CHECK(e.leaders() == 1);
  CHECK(e.nodes[1]->token() > old_token);
  for (std::size_t i = 2; i < n; ++i) {
    CHECK(e.nodes[i]->watched_key() == "/electsim/election/" + std::to_string(i - 1));
  }
}

TEST_CASE("zookeeper: a middle candidate's death moves one watch, and leadership stays put") {
  Ensemble e(config_of(json{{"session_timeout", "3s"}}), 5);
  set_tick(e, 1s);
  e.start();
  e.alive[2] = false;
  e.watch_events = 0;
  e.run_for(4s);
  CHECK(e.watch_events == 1);
  CHECK(e.nodes[0]->leads());
  CHECK(e.leaders() == 1);
  CHECK(e.nodes[3]->watched_key() == "/electsim/election/1");
}

TEST_CASE(
    "zookeeper: cut off from the ensemble, a careful leader stops at two thirds of the session "
    "timeout and a careless one keeps acting until it learns its session expired") {
  const auto [policy, acting] =
      GENERATE(table<std::string, bool>({{"stop", false}, {"keep_acting", true}}));
  INFO("on_suspended=" << policy);
  Ensemble e(config_of(json{{"session_timeout", "6s"}, {"on_suspended", policy}}), 3);
  set_tick(e, 1s);
  e.start();
  REQUIRE(e.nodes[0]->leads());
  e.run_for(3900ms, {0});
  CHECK(e.nodes[0]->leads());  // not yet 4s (2/3 of 6s) without an answer
  CHECK_FALSE(e.nodes[0]->suspended());
  e.run_for(200ms, {0});
  CHECK(e.nodes[0]->suspended());
  CHECK(e.nodes[0]->leads() == acting);
  // The store expires the session on the first tick after 6s from the last ping it had (the
  // grant at 0): at 7s. Candidate 1 then leads with a higher czxid.
  e.run_for(2890ms, {0});
  CHECK_FALSE(e.nodes[1]->leads());
  e.run_for(10ms, {0});
  CHECK(e.nodes[1]->leads());
  CHECK(e.nodes[1]->token() > e.nodes[0]->token());
  CHECK(e.nodes[0]->leads() == acting);  // two leaders for the careless client
  // Healed: the first ping's answer says the session is gone (Curator's LOST).
  e.run_for(2s);
  CHECK_FALSE(e.nodes[0]->leads());
  CHECK(e.leaders() == 1);
  CHECK(e.nodes[0]->session() != sim::kNoLease);  // a new session, at the back of the queue
  CHECK(e.nodes[0]->node_revision() > e.nodes[2]->node_revision());
}

TEST_CASE("zookeeper: a lost watch request is asked again, so the successor still leads") {
  Ensemble e(config_of(json{{"session_timeout", "3s"}}), 3);
  set_tick(e, 1s);
  e.start();
  REQUIRE(e.nodes[0]->leads());
  REQUIRE(e.nodes[2]->watched_key() == "/electsim/election/1");
  // Candidate 1 dies. When its session expires, candidate 2 looks again and watches candidate 0,
  // but the network loses every watch request it sends meanwhile.
  bool losing = true;
  e.lose = [&](std::size_t i, const StoreRequest& r) {
    return losing && i == 2 && r.op == StoreOp::watch;
  };
  e.crash(1);
  e.run_for(4s);
  REQUIRE(e.nodes[2]->watched_key() == "/electsim/election/0");
  losing = false;
  e.run_for(2s);  // a ping interval (1 s with a 3 s session) without an answer: asked again
  // Now the leader dies: the watch that was asked again reports it, and candidate 2 leads.
  e.crash(0);
  e.run_for(5s);  // the timeout, and up to a tick more
  CHECK(e.nodes[2]->leads());
  CHECK(e.leaders() == 1);
}

TEST_CASE("zookeeper: a careful leader reconnected within the session timeout leads again") {
  Ensemble e(config_of(json{{"session_timeout", "6s"}}), 3);
  set_tick(e, 1s);
  e.start();
  const sim::Token token = e.nodes[0]->token();
  e.run_for(4500ms, {0});
  CHECK(e.nodes[0]->suspended());
  CHECK_FALSE(e.nodes[0]->leads());
  CHECK(e.leaders() == 0);
  // Pings every 2s (a third of 6s): the one at 6s reaches the ensemble before the session's
  // expiry at 7s (the first tick after 0 + 6s).
  e.run_for(1s);
  CHECK_FALSE(e.nodes[0]->leads());
  e.run_for(1s);
  CHECK(e.nodes[0]->leads());
  CHECK(e.nodes[0]->token() == token);
  CHECK(e.leaders() == 1);
}

TEST_CASE("zookeeper: an idle client pings every readTimeout / 2, a third of the timeout") {
  // ClientCnxn.SendThread.run: readTimeout = timeout * 2 / 3; the idle send thread sleeps until
  // readTimeout / 2 - idleSend, so neither the 1 s subtraction nor MAX_SEND_PING_INTERVAL comes
  // into play.
  const auto [timeout, ping] = GENERATE(table<Duration, Duration>({
      {1500ms, 500ms},
      {3s, 1s},
      {6s, 2s},
      {12s, 4s},
      {40s, Duration(13'333'333'333)},  // above MAX_SEND_PING_INTERVAL (10 s)
  }));
  INFO("session_timeout=" << timeout.count());
  CHECK(electsim::protocols::zookeeper::read_timeout(timeout) == timeout * 2 / 3);
  CHECK(electsim::protocols::zookeeper::ping_interval(timeout) == ping);
}

TEST_CASE("zookeeper: the client asks for its timeout and times itself by the negotiated one") {
  // Curator asks 60s; zoo_sample.cfg's tickTime of 2s grants at most 20 ticks, 40s.
  Ensemble e(config_of(json::object()), 2);
  e.start();
  const auto grants = e.ctxs[0]->store_calls_of(StoreOp::lease_grant);
  REQUIRE(grants.size() == 1);
  CHECK(grants[0].request.ttl == 60s);
  CHECK(grants[0].request.session);
  CHECK(e.nodes[0]->session_timeout() == 40s);
  REQUIRE(e.nodes[0]->leads());
  // Pings every 40s / 3 from the grant on: three in 45 s, and the sessions live on.
  const std::size_t before = e.ctxs[0]->store_calls_of(StoreOp::lease_keepalive).size();
  e.run_for(45s);
  const auto pings = e.ctxs[0]->store_calls_of(StoreOp::lease_keepalive);
  CHECK(pings.size() - before == 3);
  // Due at 13.333s; the bench fires timers on its 10ms steps.
  CHECK(pings[before].at == sim::LocalTime(Duration(13'340ms)));
  CHECK(e.store.lease_count() == 2);
  CHECK(e.nodes[0]->leads());
}

TEST_CASE("zookeeper: a crashed holder's session expires on the first tick after its timeout") {
  // The timing model from ZooKeeper's SessionTrackerImpl and ExpiryQueue.roundToNextInterval:
  // a session last touched at t with timeout T goes at (floor((t + T) / tick) + 1) x tick.
  const auto [tick, asked, crash_at] = GENERATE(table<Duration, Duration, Duration>({
      {2s, 4s, 10s},
      {2s, 6s, 10'500ms},
      {2s, 60s, 30s},  // negotiated 40s
      {3s, 10s, 7s},
  }));
  INFO("tick=" << tick.count() << " asked=" << asked.count() << " crash=" << crash_at.count());
  Ensemble e(config_of(json{{"session_timeout", electsim::sim::format_duration(asked)}}), 3);
  set_tick(e, tick);
  sim::LocalTime last_touch{0};
  e.on_apply = [&](std::size_t node, const StoreRequest& r, const StoreReply&) {
    if (node == 0 && (r.op == StoreOp::lease_keepalive || r.op == StoreOp::lease_grant)) {
      last_touch = e.store_now;
    }
  };
  e.start();
  REQUIRE(e.nodes[0]->leads());
  e.run_for(crash_at);
  e.crash(0);
  const Duration timeout = electsim::servers::negotiate_session_timeout(asked, tick);
  const std::int64_t due = (last_touch + timeout).ns;
  const sim::LocalTime expiry((due / tick.count() + 1) * tick.count());
  INFO("last_touch=" << last_touch.ns << " expiry=" << expiry.ns);
  e.run_for(expiry - e.store_now - 10ms);
  CHECK_FALSE(e.nodes[1]->leads());
  e.run_for(10ms);
  CHECK(e.store_now == expiry);
  CHECK(e.nodes[1]->leads());
}

TEST_CASE("zookeeper: parameters are range-checked at their JSON pointers") {
  const auto [params, pointer] = GENERATE(table<std::string, std::string>({
      {R"({"session_timeout": "2ms"})", "/protocol/session_timeout"},
      {R"({"session_timeout": "-1s"})", "/protocol/session_timeout"},
      {R"({"on_suspended": "panic"})", "/protocol/on_suspended"},
      {R"({"fencing": 1})", "/protocol/fencing"},
      {R"({"prefix": ""})", "/protocol/prefix"},
      {R"({"sesion_timeout": "3s"})", "/protocol/sesion_timeout"},
  }));
  INFO(params);
  Problems problems;
  const auto config =
      electsim::protocols::zookeeper::read_config(json::parse(params), "/protocol", problems);
  CHECK_FALSE(config.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == pointer);
}

TEST_CASE("zookeeper: the defaults are ZooKeeper's and Curator's") {
  const ZookeeperConfig c = config_of(json::object());
  CHECK(c.session_timeout == 60s);  // asked: Curator's DEFAULT_SESSION_TIMEOUT_MS
  CHECK(electsim::servers::StoreConfig{}.tick_time == 2s);  // zoo_sample.cfg
  CHECK(c.on_suspended == OnSuspended::stop);
  CHECK(c.fencing);
  const auto* info = electsim::protocols::find_protocol("zookeeper");
  REQUIRE(info != nullptr);
  CHECK(info->params.size() == 4);
}
