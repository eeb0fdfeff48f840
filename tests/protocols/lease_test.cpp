// Tests of the lease-plus-fencing protocol (protocols/lease/) as a state machine against the fake
// context, with a real sim::Store answering its requests by hand: acquisition, keepalives, the
// holder's own deadline, fencing rejections, watches and retries, voluntary release, the GC-pause
// race, client-mode takeover, and the parameter table with its cross-checks.
// Long on purpose: one case per rule of the protocol, all on the store harness defined here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/lease/config.hpp"
#include "protocols/lease/lease.hpp"
#include "protocols/registry.hpp"
#include "servers/store/store.hpp"
#include "tests/protocols/fake_context.hpp"
#include "tests/protocols/kit.hpp"
#include "tests/protocols/printers.hpp"

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::ClusterInfo;
using electsim::protocols::lease::Expiry;
using electsim::protocols::lease::LeaseConfig;
using electsim::protocols::lease::LeaseNode;
using electsim::sim::Belief;
using electsim::sim::Duration;
using electsim::sim::kNoNode;
using electsim::sim::LocalTime;
using electsim::sim::NodeId;
using electsim::sim::Revision;
using electsim::sim::StoreOp;
using electsim::sim::StoreReply;
using electsim::sim::StoreRequest;
using electsim::testing::FakeContext;
using electsim::testing::NodeBench;
using electsim::testing::valid_config;
using json = nlohmann::json;
namespace sim = electsim::sim;

constexpr const char* kKey = "/electsim/leader";

LeaseConfig config_of(const json& params, bool workload = false) {
  return valid_config(
      [&](Problems& p) { return electsim::protocols::lease::read_config(params, "/protocol", p); },
      workload);
}

// One lease node on a fake context, with a real store that the test lets answer. Not a
// StoreBench of one: that one moves every clock in 10ms steps, while these cases fire the node's
// timers at their exact due times, offset the store's clock and play other nodes at the store.
struct Bench : NodeBench<LeaseNode, LeaseConfig> {
  explicit Bench(const LeaseConfig& c, NodeId self = 0, std::uint64_t seed = 1)
      : NodeBench(c, self, 3, seed) {}

  electsim::servers::Store store;
  Duration store_offset{0};  // the store's clock minus the node's
  std::size_t answered = 0;
  std::map<sim::RequestId, StoreReply> replies;

  LocalTime store_now() const { return ctx.monotonic_now() + store_offset; }

  void notify(const electsim::servers::StoreOutput& out) {
    for (const auto& n : out.notifications) {
      if (n.to == ctx.self()) ctx.deliver(*node, n.event);
    }
  }
  // Applies every request the node has sent and not had answered, in order, and delivers each
  // reply (and this node's watch notifications) at once, until no request is left.
  void answer() {
    for (int guard = 0; answered < ctx.store_calls.size(); ++guard) {
      REQUIRE(guard < 1000);
      const StoreRequest request = ctx.store_calls[answered++].request;
      electsim::servers::StoreOutput out;
      const StoreReply reply = store.apply(ctx.self(), request, store_now(), out);
      replies[request.id] = reply;
      ctx.deliver(*node, reply);
      notify(out);
    }
  }
  // The requests sent so far are lost on the way.
  void drop() { answered = ctx.store_calls.size(); }
  // Another node's request, applied directly at the store.
  StoreReply other(NodeId from, StoreRequest request, bool deliver_notifications = true) {
    electsim::servers::StoreOutput out;
    const StoreReply reply = store.apply(from, request, store_now(), out);
    if (deliver_notifications) notify(out);
    return reply;
  }
  // A rival takes the key first (etcd's Campaign on the rival's own lease); returns its lease.
  sim::LeaseId rival_acquires(NodeId rival) {
    StoreRequest grant;
    grant.op = StoreOp::lease_grant;
    grant.ttl = config->ttl;
    const sim::LeaseId lease = other(rival, grant).lease;
    StoreRequest txn;
    txn.op = StoreOp::txn;
    txn.compares.push_back(
        sim::Compare{kKey, sim::Compare::Target::create_revision, sim::Compare::Op::equal, 0, {}});
    txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::put, kKey, std::to_string(rival), lease});
    REQUIRE(other(rival, txn).succeeded);
    return lease;
  }
  // Fires timers in due order for `d`, answering (or losing) the requests each one sends.
  void run_for(Duration d, bool answer_requests = true) {
    const LocalTime end = ctx.monotonic_now() + d;
    for (;;) {
      const auto t = ctx.next_timer();
      if (!t || t->due > end) break;
      ctx.fire_next(*node);
      if (answer_requests) {
        answer();
      } else {
        drop();
      }
    }
    if (end > ctx.monotonic_now()) ctx.advance(end - ctx.monotonic_now());
  }
  // The reply the store gave to the last request of this kind.
  StoreReply reply_to_last(StoreOp op) {
    const auto call = ctx.last_store_call(op);
    REQUIRE(call.has_value());
    REQUIRE(replies.count(call->id) == 1);
    return replies.at(call->id);
  }
  // Unrelated writes, so that revisions in a test are not small constants by accident.
  void unrelated_writes(int n) {
    for (int i = 0; i < n; ++i) {
      StoreRequest put;
      put.op = StoreOp::put;
      put.key = "/unrelated";
      put.value = std::to_string(i);
      other(2, put);
    }
  }
};

std::optional<FakeContext::Announcement> first_announcement_of(const FakeContext& ctx,
                                                               const Belief& belief) {
  for (const auto& a : ctx.announcements) {
    if (a.belief == belief) return a;
  }
  return std::nullopt;
}

// Node 1 creates the client-mode record (client-go's Create of the Lease), as another node's
// request applied at the store: its id, the lease duration it is configured with and its wall
// clock (here the test node's monotonic reading: a perfect clock). Returns the request so that
// renewals can reuse it.
StoreRequest node_1_takes_the_record(Bench& b, Duration lease_duration = 15s) {
  StoreRequest create;
  create.op = StoreOp::txn;
  create.compares.push_back(
      sim::Compare{kKey, sim::Compare::Target::create_revision, sim::Compare::Op::equal, 0, {}});
  create.success.push_back(sim::TxnOp{
      sim::TxnOp::Kind::put, kKey,
      electsim::protocols::lease::format_record(1, lease_duration, b.ctx.monotonic_now()),
      sim::kNoLease});
  REQUIRE(b.other(1, create).succeeded);
  return create;
}

// Node 1 renews the record by compare-and-swap on its mod_revision (client-go's Update), writing
// its renew time anew.
void node_1_renews(Bench& b, const StoreRequest& create) {
  StoreRequest renew = create;
  renew.compares = {sim::Compare{kKey,
                                 sim::Compare::Target::mod_revision,
                                 sim::Compare::Op::equal,
                                 b.store.peek(kKey)->mod_revision,
                                 {}}};
  const auto old = electsim::protocols::lease::parse_record(create.success.front().value);
  renew.success.front().value =
      electsim::protocols::lease::format_record(1, old.lease_duration, b.ctx.monotonic_now());
  REQUIRE(b.other(1, renew).succeeded);
}

// The record a txn of this node put.
electsim::protocols::lease::LeaseRecord record_put_by(const FakeContext::StoreCall& call) {
  REQUIRE(call.request.op == StoreOp::txn);
  REQUIRE(call.request.success.size() == 1);
  return electsim::protocols::lease::parse_record(call.request.success.front().value);
}

}  // namespace

// ---- Store mode: acquisition -------------------------------------------------------------------

TEST_CASE("lease: a node that finds the key absent leads with the acquiring txn's revision") {
  Bench b(config_of(json::object()));
  b.unrelated_writes(3);
  b.start();
  REQUIRE(!b.ctx.announcements.empty());
  CHECK(b.ctx.announcements.front().belief == Belief::follower(kNoNode, 0));
  b.answer();

  const StoreReply txn = b.reply_to_last(StoreOp::txn);
  REQUIRE(txn.succeeded);
  CHECK(txn.revision > 3);
  CHECK(b.ctx.belief() == Belief::leader(txn.revision));
  CHECK(b.node->token() == txn.revision);
  const auto kv = b.store.peek(kKey);
  REQUIRE(kv.has_value());
  CHECK(kv->value == "0");
  CHECK(kv->create_revision == txn.revision);
  CHECK(kv->lease == b.node->lease());
  CHECK(b.node->lease() == b.reply_to_last(StoreOp::lease_grant).lease);
}

TEST_CASE(
    "lease: a node that loses the race follows the holder at its create revision and "
    "watches the key") {
  Bench b(config_of(json::object()));
  b.unrelated_writes(2);
  b.rival_acquires(1);
  const Revision created = b.store.peek(kKey)->create_revision;
  b.start();
  b.answer();

  CHECK_FALSE(b.node->leads());
  CHECK(b.ctx.belief() == Belief::follower(1, created));
  const auto watches = b.ctx.store_calls_of(StoreOp::watch);
  REQUIRE(watches.size() == 1);
  CHECK(watches.front().request.key == kKey);
  CHECK(b.store.peek(kKey)->value == "1");
}

TEST_CASE("lease: the holder sends a keepalive every renew_interval") {
  const std::string ttl = GENERATE("2s", "3s", "900ms");
  Bench b(config_of({{"ttl", ttl}}));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::LeaseId lease = b.node->lease();
  b.run_for(b.config->ttl * 5);

  const Duration renew = b.config->renew_interval;
  CHECK(renew == *sim::parse_duration(ttl) / 3);
  const auto keepalives = b.ctx.store_calls_of(StoreOp::lease_keepalive);
  REQUIRE(keepalives.size() >= 10);
  const LocalTime granted = b.ctx.last_store_call(StoreOp::lease_grant)->at;
  CHECK(keepalives.front().at == granted + renew);
  for (std::size_t i = 1; i < keepalives.size(); ++i) {
    INFO("keepalive " << i);
    CHECK(keepalives[i].at - keepalives[i - 1].at == renew);
    CHECK(keepalives[i].request.lease == lease);
  }
  CHECK(b.node->leads());
  CHECK(b.ctx.belief() == Belief::leader(b.node->token()));
}

// ---- Store mode: stepping down -----------------------------------------------------------------

TEST_CASE("lease: a keepalive answered lease_not_found makes the holder step down") {
  Bench b(config_of(json::object(), /*workload=*/true));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  // The store's clock has run a whole ttl ahead: the lease is past its deadline there.
  b.store_offset = b.config->ttl;
  b.run_for(b.config->renew_interval);

  CHECK(b.reply_to_last(StoreOp::lease_keepalive).error == sim::StoreError::lease_not_found);
  CHECK_FALSE(b.node->leads());
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, token));
  CHECK_FALSE(b.node->writer().active());
  // It stepped down on the store's word, well before its own deadline.
  CHECK(b.ctx.now() < LocalTime(b.config->renew_deadline));
}

TEST_CASE(
    "lease: the holder steps down when its own clock passes renew_deadline after its last "
    "confirmed keepalive") {
  const int confirmed = GENERATE(0, 1, 3);
  Bench b(config_of(json::object()));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  const sim::LeaseId lease = b.node->lease();
  b.run_for(b.config->renew_interval * confirmed);  // these keepalives are answered
  b.run_for(b.config->ttl * 3, /*answer_requests=*/false);

  const auto down = first_announcement_of(b.ctx, Belief::follower(kNoNode, token));
  REQUIRE(down.has_value());
  // The send time of the last answered keepalive (or of the grant) plus renew_deadline.
  const LocalTime last_confirmed(b.config->renew_interval * confirmed);
  CHECK(down->at == last_confirmed + b.config->renew_deadline);
  const auto revoke = b.ctx.last_store_call(StoreOp::lease_revoke);
  REQUIRE(revoke.has_value());
  CHECK(revoke->request.lease == lease);
  CHECK(revoke->at == down->at);
}

TEST_CASE(
    "lease: a wall-clock step on the holder moves neither way its renew deadline, which runs on "
    "the monotonic clock as clientv3's does") {
  const sim::Duration step = GENERATE(sim::Duration(-5s), sim::Duration(1h));
  Bench b(config_of(json::object()));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  b.ctx.step_wall(step);
  b.run_for(b.config->ttl * 3, /*answer_requests=*/false);
  const auto down = first_announcement_of(b.ctx, Belief::follower(kNoNode, token));
  REQUIRE(down.has_value());
  // The grant's send time (0) plus renew_deadline, on the clock that no step moves.
  CHECK(down->at == LocalTime(b.config->renew_deadline));
}

TEST_CASE("lease: a sink rejection of the current token deposes the holder, of an older one not") {
  auto [token_delta, steps_down] = GENERATE(table<int, bool>({{0, true}, {-1, false}}));
  Bench b(config_of(json::object(), /*workload=*/true));
  b.unrelated_writes(4);
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  sim::SinkReply rejected;
  rejected.id = 99;
  rejected.token = token + token_delta;
  rejected.accepted = false;
  rejected.highest_accepted = token + 5;
  b.ctx.deliver(*b.node, rejected);

  CHECK(b.node->leads() == !steps_down);
  CHECK(b.node->writer().active() == !steps_down);
  CHECK(b.ctx.belief() == (steps_down ? Belief::follower(kNoNode, token) : Belief::leader(token)));
}

// ---- Store mode: followers ---------------------------------------------------------------------

TEST_CASE("lease: a follower races at once when its watch reports the holder's key deleted") {
  Bench b(config_of(json::object()));
  const sim::LeaseId rival_lease = b.rival_acquires(1);
  b.start();
  b.answer();
  REQUIRE_FALSE(b.node->leads());
  const LocalTime before = b.ctx.now();
  const std::size_t calls_before = b.ctx.store_calls.size();

  StoreRequest revoke;
  revoke.op = StoreOp::lease_revoke;
  revoke.lease = rival_lease;
  b.other(1, revoke);  // the rival resigns; the store tells the watchers
  b.answer();

  CHECK(b.ctx.now() == before);  // no timer was needed
  REQUIRE(b.ctx.store_calls.size() > calls_before);
  const StoreReply txn = b.reply_to_last(StoreOp::txn);
  REQUIRE(txn.succeeded);
  CHECK(b.node->leads());
  CHECK(b.ctx.belief() == Belief::leader(txn.revision));
}

TEST_CASE("lease: a follower whose watch event is lost acquires on its retry timer") {
  Bench b(config_of(json::object()));
  const sim::LeaseId rival_lease = b.rival_acquires(1);
  const Revision created = b.store.peek(kKey)->create_revision;
  b.start();
  b.answer();
  StoreRequest revoke;
  revoke.op = StoreOp::lease_revoke;
  revoke.lease = rival_lease;
  b.other(1, revoke, /*deliver_notifications=*/false);
  b.answer();
  CHECK(b.ctx.belief() == Belief::follower(1, created));

  b.run_for(b.config->retry_interval);
  CHECK(b.node->leads());
  const auto txn = b.ctx.last_store_call(StoreOp::txn);
  REQUIRE(txn.has_value());
  // Store mode draws no jitter by default: the retry comes exactly retry_interval after start.
  CHECK(txn->at == LocalTime(b.config->retry_interval));
  CHECK(b.ctx.belief() == Belief::leader(b.reply_to_last(StoreOp::txn).revision));
}

TEST_CASE("lease: with race_jitter a follower races for a freed key after its own draw") {
  // A 10s TTL retries every 3.3s, after any race_jitter's draw: only the draw moves the race.
  std::set<std::int64_t> waits;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    INFO("seed " << seed);
    Bench b(config_of({{"ttl", "10s"}, {"race_jitter", "1s"}}), 0, seed);
    const sim::LeaseId rival_lease = b.rival_acquires(1);
    b.start();
    b.answer();
    REQUIRE_FALSE(b.node->leads());
    // Its grant's lease is still young: the race is one txn on it.
    const auto txn_before = b.ctx.last_store_call(StoreOp::txn);
    REQUIRE(txn_before.has_value());
    const LocalTime freed = b.ctx.now();

    StoreRequest revoke;
    revoke.op = StoreOp::lease_revoke;
    revoke.lease = rival_lease;
    b.other(1, revoke);  // the store tells the watchers at once
    b.answer();
    // Nothing is asked at the instant of the deletion.
    CHECK(b.ctx.last_store_call(StoreOp::txn)->id == txn_before->id);
    CHECK_FALSE(b.node->leads());

    b.run_for(1s);
    REQUIRE(b.node->leads());
    const auto txn = b.ctx.last_store_call(StoreOp::txn);
    REQUIRE(txn.has_value());
    REQUIRE(txn->id != txn_before->id);
    const Duration wait = txn->at - freed;
    CHECK(wait >= Duration(0));
    CHECK(wait < 1s);
    waits.insert(wait.count());
  }
  // Each node draws its own wait: the followers of many expired leases spread out.
  CHECK(waits.size() >= 6);
}

namespace {

// The store refuses the node's last request of this kind as overloaded ("too many requests"),
// and answers none of the others it sent.
void refuse_last(Bench& b, StoreOp op) {
  const auto call = b.ctx.last_store_call(op);
  REQUIRE(call.has_value());
  StoreReply reply;
  reply.id = call->id;
  reply.op = op;
  reply.error = sim::StoreError::too_many_requests;
  b.drop();
  b.ctx.deliver(*b.node, reply);
}

}  // namespace

TEST_CASE(
    "lease: failed tries back off by backoff_factor up to backoff_max, and an answer resets it") {
  // TTL 3s: retry_interval 1s. A rival holds the key, so each retry is one read (a get).
  Bench b(config_of({{"ttl", "3s"}, {"backoff_max", "4s"}}));
  b.rival_acquires(1);
  b.start();
  b.answer();
  REQUIRE_FALSE(b.node->leads());
  const auto probe = [&](bool refuse) {
    REQUIRE(b.ctx.fire_next(*b.node));
    const auto call = b.ctx.last_store_call(StoreOp::get);
    REQUIRE(call.has_value());
    if (refuse) {
      refuse_last(b, StoreOp::get);
    } else {
      b.answer();
    }
    return call->at;
  };
  std::vector<LocalTime> at;
  for (int i = 0; i < 5; ++i) at.push_back(probe(/*refuse=*/true));
  at.push_back(probe(/*refuse=*/false));
  at.push_back(probe(/*refuse=*/false));
  // 1s after the start, then waits of 1s, 2s, 4s and 4s (the cap) after refusals; after the
  // answer at 12s, every retry_interval again.
  const std::vector<LocalTime> expected = {LocalTime(1s), LocalTime(2s),  LocalTime(4s),
                                           LocalTime(8s), LocalTime(12s), LocalTime(16s),
                                           LocalTime(17s)};
  CHECK(at == expected);
}

TEST_CASE("lease: without backoff_max a refused try waits retry_interval as any other") {
  Bench b(config_of({{"ttl", "3s"}}));
  b.rival_acquires(1);
  b.start();
  b.answer();
  std::vector<LocalTime> at;
  for (int i = 0; i < 4; ++i) {
    REQUIRE(b.ctx.fire_next(*b.node));
    const auto call = b.ctx.last_store_call(StoreOp::get);
    REQUIRE(call.has_value());
    at.push_back(call->at);
    refuse_last(b, StoreOp::get);
  }
  CHECK(at == std::vector<LocalTime>{LocalTime(1s), LocalTime(2s), LocalTime(3s), LocalTime(4s)});
}

// ---- Voluntary release -------------------------------------------------------------------------

TEST_CASE("lease: step_down and stop revoke the lease and announce a follower") {
  const sim::Command command = GENERATE(sim::Command::step_down, sim::Command::stop);
  Bench b(config_of(json::object(), /*workload=*/true));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  const sim::LeaseId lease = b.node->lease();
  b.node->on_command(b.ctx, command);

  const auto revoke = b.ctx.last_store_call(StoreOp::lease_revoke);
  REQUIRE(revoke.has_value());
  CHECK(revoke->request.lease == lease);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, token));
  CHECK_FALSE(b.node->writer().active());
  const std::size_t grants_before = b.ctx.store_calls_of(StoreOp::lease_grant).size();
  b.answer();  // the revoke deletes the key; the node's own watch reports it
  CHECK_FALSE(b.store.peek(kKey).has_value());
  // Neither races for the key it just gave up.
  CHECK(b.ctx.store_calls_of(StoreOp::lease_grant).size() == grants_before);

  if (command == sim::Command::stop) {
    CHECK(b.ctx.armed(LeaseNode::kRetryTag).empty());
  } else {
    const auto retry = b.ctx.armed(LeaseNode::kRetryTag);
    REQUIRE(retry.size() == 1);
    CHECK(retry.front().due - b.ctx.now() >= b.config->retry_interval);
    b.run_for(b.config->retry_interval);
    CHECK(b.node->leads());
    CHECK(b.node->token() > token);
  }
}

// ---- The GC-pause race -------------------------------------------------------------------------

TEST_CASE(
    "lease: a pause inside the work window: the careful client does not write, the "
    "careless one writes with its old token") {
  auto [recheck, pause, writes_old_token] = GENERATE(table<bool, bool, bool>(
      {{true, false, true}, {true, true, false}, {false, true, true}, {false, false, true}}));
  LeaseConfig c = config_of({{"recheck_before_write", recheck}}, /*workload=*/true);
  c.workload.interval = 100ms;
  c.workload.work = sim::Distribution::constant_of(50ms);
  Bench b(c);
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  b.run_for(120ms);  // the tick at 100ms checked leadership; its work ends at 150ms
  REQUIRE(b.ctx.sink_calls.empty());
  if (pause) b.ctx.advance(b.config->renew_deadline);  // frozen past the deadline, timers pending
  b.run_for(40ms, /*answer_requests=*/!pause);

  REQUIRE_FALSE((b.ctx.sink_calls.empty() && writes_old_token));
  if (writes_old_token) {
    CHECK(b.ctx.sink_calls.front().token == token);
    if (pause) CHECK(b.ctx.sink_calls.front().at > LocalTime(b.config->renew_deadline));
  } else {
    CHECK(b.ctx.sink_calls.empty());
  }
  // After the pause both know they no longer lead; without it both still do.
  CHECK(b.node->leads() == !pause);
}

// ---- Client mode -------------------------------------------------------------------------------

TEST_CASE(
    "lease: client mode: a follower takes the record over after ttl without change by its "
    "own clock") {
  const bool holder_renews = GENERATE(false, true);
  Bench b(config_of({{"expiry", "client"}}));
  const StoreRequest create = node_1_takes_the_record(b);
  b.start();
  b.answer();
  CHECK(b.ctx.belief()->known_leader == 1);

  LocalTime last_change_seen(0);
  if (holder_renews) {
    b.run_for(6s);
    node_1_renews(b, create);
  }
  const Revision holder_mod = b.store.peek(kKey)->mod_revision;
  b.run_for(b.config->ttl + 10s);
  if (holder_renews) {
    // The follower first sees the change at its first poll after it happened.
    for (const auto& get : b.ctx.store_calls_of(StoreOp::get)) {
      if (get.at > LocalTime(Duration(6s))) {
        last_change_seen = get.at;
        break;
      }
    }
    REQUIRE(last_change_seen > LocalTime(Duration(6s)));
  }

  REQUIRE(b.node->leads());
  const auto txns = b.ctx.store_calls_of(StoreOp::txn);
  REQUIRE(txns.size() >= 1);
  const auto& takeover = txns.front();
  REQUIRE(takeover.request.compares.size() == 1);
  CHECK(takeover.request.compares[0].target == sim::Compare::Target::mod_revision);
  CHECK(takeover.request.compares[0].number == holder_mod);
  CHECK(takeover.at - last_change_seen >= b.config->ttl);
  // Within one jittered poll (client-go: retry_interval times at most 1 + 1.2) of the expiry.
  CHECK(takeover.at - last_change_seen <= b.config->ttl + b.config->retry_interval * 22 / 10);
  CHECK(b.ctx.belief() == Belief::leader(b.replies.at(takeover.id).revision));
}

TEST_CASE(
    "lease: client mode: a follower polls the held record every retry_interval times 1 to 2.2, "
    "as client-go's wait.Jitter with JitterFactor 1.2") {
  Bench b(config_of({{"expiry", "client"}}));
  const StoreRequest create = node_1_takes_the_record(b);
  b.start();
  b.answer();
  // Less than the lease duration: the record stays held and every try is a probe.
  b.run_for(b.config->ttl - 1s);
  // Renew the record so that it stays held, and watch 200 more polls.
  Duration longest{0};
  Duration shortest = Duration::max();
  std::size_t polls = 0;
  while (polls < 200) {
    node_1_renews(b, create);
    b.run_for(b.config->ttl - 1s);
    const auto gets = b.ctx.store_calls_of(StoreOp::get);
    for (std::size_t i = polls + 1; i < gets.size(); ++i) {
      const Duration gap = gets[i].at - gets[i - 1].at;
      longest = std::max(longest, gap);
      shortest = std::min(shortest, gap);
    }
    polls = gets.size() - 1;
  }
  CHECK_FALSE(b.node->leads());
  CHECK(shortest >= b.config->retry_interval);
  CHECK(longest < b.config->retry_interval * 22 / 10);
  // The draws reach well past the old, mistaken bound of retry_interval * 1.2.
  CHECK(longest > b.config->retry_interval * 2);
}

TEST_CASE(
    "lease: client mode: the holder renews by compare-and-swap every renew_interval and "
    "keeps its token") {
  Bench b(config_of({{"expiry", "client"}}));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  const sim::Token token = b.node->token();
  CHECK(token == b.store.peek(kKey)->create_revision);
  b.run_for(9s);

  const auto txns = b.ctx.store_calls_of(StoreOp::txn);
  REQUIRE(txns.size() >= 5);  // the create and four renewals
  for (std::size_t i = 1; i < txns.size(); ++i) {
    INFO("renewal " << i);
    CHECK(txns[i].at - txns[0].at == b.config->renew_interval * static_cast<std::int64_t>(i));
    REQUIRE(txns[i].request.compares.size() == 1);
    CHECK(txns[i].request.compares[0].target == sim::Compare::Target::mod_revision);
    CHECK(txns[i].request.compares[0].number == b.replies.at(txns[i - 1].id).revision);
    CHECK(b.replies.at(txns[i].id).succeeded);
  }
  CHECK(b.node->token() == token);
  CHECK(b.ctx.belief() == Belief::leader(token));
  CHECK(b.store.peek(kKey)->mod_revision > token);
}

TEST_CASE(
    "lease: with keepalive_phase random the first renewal comes within renew_interval of the "
    "grant at a drawn point, then every renew_interval") {
  std::set<std::int64_t> offsets;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    LeaseConfig c = config_of({{"keepalive_phase", "random"}});
    Bench b(c, 0, seed);
    b.start();
    b.answer();
    REQUIRE(b.node->leads());
    const auto grant = b.ctx.last_store_call(StoreOp::lease_grant);
    REQUIRE(grant.has_value());
    b.run_for(c.renew_interval * 4);
    const auto renewals = b.ctx.store_calls_of(StoreOp::lease_keepalive);
    REQUIRE(renewals.size() >= 3);
    const Duration first = renewals[0].at - grant->at;
    CHECK(first > Duration(0));
    CHECK(first <= c.renew_interval);
    offsets.insert(first.count());
    for (std::size_t i = 1; i < renewals.size(); ++i) {
      CHECK(renewals[i].at - renewals[i - 1].at == c.renew_interval);
    }
  }
  CHECK(offsets.size() > 15);  // drawn, not fixed
}

// ---- Client mode: the record's duration, clocks and per-node timings
// -----------------------------

TEST_CASE(
    "lease: the record holds the holder's id, lease duration and renew time, and owner_of reads "
    "the id") {
  using electsim::protocols::lease::format_record;
  using electsim::protocols::lease::parse_record;
  CHECK(format_record(1, 15s, LocalTime(-3)) == "1 15000000000 -3");
  auto [value, holder, timed] = GENERATE(table<std::string, NodeId, bool>({
      {"2", 2, false},
      {"2 15000000000 -5", 2, true},
      {"0 30000000000 3600000000000", 0, true},
      {"2 15000000000", kNoNode, false},  // ZooKeeper's "<id> <czxid>" has two fields
      {"2 x 5", kNoNode, false},
      {"2 1 2 3", kNoNode, false},
      {"2 -1 5", kNoNode, false},
      {"2 ", kNoNode, false},
      {" 2", kNoNode, false},
      {"-1", kNoNode, false},
      {"", kNoNode, false},
  }));
  INFO(value);
  const auto record = parse_record(value);
  CHECK(record.holder == holder);
  CHECK(record.timed == timed);
  electsim::servers::StoreChange change;
  change.value = value;
  CHECK(electsim::servers::owner_of(change, 3) == holder);
  CHECK(electsim::servers::owner_of(change, 2) == (holder == 2 ? kNoNode : holder));
  if (timed) CHECK(format_record(record.holder, record.lease_duration, record.renew_time) == value);
}

TEST_CASE(
    "lease: client mode: the holder writes its own lease duration and wall clock into the record "
    "at every create and renewal") {
  Bench b(config_of({{"expiry", "client"}, {"ttl", "20s"}}));
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  b.run_for(3s);
  b.ctx.step_wall(1h);
  b.run_for(3s);
  const auto txns = b.ctx.store_calls_of(StoreOp::txn);
  REQUIRE(txns.size() >= 3);
  for (const auto& txn : txns) {
    const auto record = record_put_by(txn);
    CHECK(record.holder == 0);
    CHECK(record.lease_duration == 20s);
    // The renew time is the wall clock, steps included (txn.at is the monotonic reading).
    CHECK(record.renew_time == txn.at + (txn.at > LocalTime(Duration(3s)) ? Duration(1h) : 0s));
  }
}

TEST_CASE(
    "lease: client mode: a follower waits out the lease duration in the record, or its own "
    "with lease_duration_from own") {
  const bool own = GENERATE(false, true);
  json params = {{"expiry", "client"}, {"ttl", "10s"}, {"renew_deadline", "8s"}};
  if (own) params["lease_duration_from"] = "own";
  Bench b(config_of(params));
  node_1_takes_the_record(b, 30s);  // the holder is configured with 30s, and never renews
  b.start();
  b.answer();  // observed at 0
  b.run_for(25s);
  // Node 1 still holds its lease by its own configuration: only the own-duration follower
  // (kubernetes#47671) has taken it over.
  CHECK(b.node->leads() == own);
  b.run_for(10s);
  REQUIRE(b.node->leads());
  const auto takeover = b.ctx.store_calls_of(StoreOp::txn).front();
  const Duration waited = takeover.at - LocalTime(0);
  const Duration duration = own ? 10s : 30s;
  CHECK(waited >= duration);
  CHECK(waited < duration + b.config->retry_interval * 22 / 10);
}

TEST_CASE(
    "lease: client mode: a wall-clock step on a follower changes nothing when expiry is judged "
    "from the observed time, and expires the record at once when judged by its renew time") {
  const bool by_renew_time = GENERATE(false, true);
  json params = {{"expiry", "client"}};
  if (by_renew_time) params["expiry_judged_by"] = "renew_time";
  Bench b(config_of(params));
  const StoreRequest create = node_1_takes_the_record(b);
  b.start();
  b.answer();
  for (int i = 0; i < 5; ++i) {
    node_1_renews(b, create);  // every 2s, as a live holder does
    b.run_for(2s);
  }
  b.ctx.step_wall(1h);
  const LocalTime stepped_at = b.ctx.monotonic_now();
  // The holder goes quiet for 10s: by the monotonic clock the record was seen less than 15s
  // ago, by the stepped wall clock an hour ago.
  b.run_for(10s);
  CHECK(b.node->leads() == by_renew_time);
  if (by_renew_time) {
    // fabric8's rule: the record's renewTime + 15s is an hour behind this node's wall clock.
    const auto takeover = b.ctx.store_calls_of(StoreOp::txn).front();
    CHECK(takeover.at > stepped_at);
    CHECK(takeover.at - stepped_at < b.config->retry_interval * 22 / 10);
  } else {
    CHECK(b.ctx.store_calls_of(StoreOp::txn).empty());
  }
}

TEST_CASE(
    "lease: client mode: the holder's renew deadline runs on the monotonic clock, so a wall-clock "
    "step does not depose it") {
  LeaseConfig c = config_of({{"expiry", "client"}}, /*workload=*/true);
  c.workload.interval = 100ms;
  c.workload.work = sim::Distribution::constant_of(5ms);
  Bench b(c);
  b.start();
  b.answer();
  REQUIRE(b.node->leads());
  b.run_for(1s);
  const std::size_t writes_before = b.ctx.sink_calls.size();
  b.ctx.step_wall(1h);  // past renew_deadline (10s) by the wall clock
  b.run_for(5s);
  CHECK(b.node->leads());
  CHECK(b.ctx.sink_calls.size() > writes_before + 40);
  // Without renewals the deadline still comes, renew_deadline after the last confirmed one.
  b.run_for(20s, /*answer_requests=*/false);
  CHECK_FALSE(b.node->leads());
}

TEST_CASE(
    "lease: kubernetes per_node gives single nodes their own timings, which they write into "
    "their records and poll at") {
  const auto* info = electsim::protocols::find_protocol("kubernetes");
  REQUIRE(info != nullptr);
  ClusterInfo cluster;
  cluster.node_count = 3;
  Problems problems;
  const auto prepared = info->prepare(json::parse(R"({"per_node": {"2": {"ttl": "30s",
      "renew_deadline": "20s", "renew_interval": "20s", "retry_interval": "20s"}}})"),
                                      "/protocol", cluster, problems);
  INFO((problems.empty() ? std::string() : problems.front().format()));
  REQUIRE(prepared.has_value());
  CHECK(prepared->lease_ttl == std::optional<Duration>(15s));
  CHECK_FALSE(prepared->lease_judged_by_store);
  auto [node_id, ttl, retry_interval] = GENERATE(table<NodeId, Duration, Duration>({
      {0, 15s, 2s},
      {1, 15s, 2s},
      {2, 30s, 20s},
  }));
  INFO("node " << node_id);
  FakeContext ctx(node_id, 3);
  const auto node = prepared->factory(node_id);
  node->on_start(ctx);
  // The first poll of the retry timer comes retry_interval times 1 to 2.2 after the start.
  const auto retry = ctx.armed(LeaseNode::kRetryTag);
  REQUIRE(retry.size() == 1);
  CHECK(retry.front().due >= LocalTime(retry_interval));
  CHECK(retry.front().due < LocalTime(retry_interval * 22 / 10));
  // The probe finds no record: the node creates one with its own lease duration.
  StoreReply none;
  none.id = ctx.store_calls.back().id;
  none.op = StoreOp::get;
  ctx.deliver(*node, none);
  const auto create = ctx.last_store_call(StoreOp::txn);
  REQUIRE(create.has_value());
  const auto record = record_put_by(*create);
  CHECK(record.holder == node_id);
  CHECK(record.lease_duration == ttl);
}

// ---- Parameters and the registry ---------------------------------------------------------------

TEST_CASE("lease: each parameter has its documented default in each expiry mode") {
  using D = Duration;
  auto [params, ttl, renew_interval, renew_deadline, retry_interval, jitter_ppm] =
      GENERATE(table<std::string, D, D, D, D, std::int64_t>({
          {R"({})", 2s, D(2s) / 3, D(2s) * 2 / 3, D(2s) / 3, 0},
          {R"({"expiry": "store", "ttl": "9s"})", 9s, 3s, 6s, 3s, 0},
          {R"({"expiry": "client"})", 15s, 2s, 10s, 2s, 1'200'000},
          // Client mode's timings do not follow its ttl: they are client-go's fixed defaults.
          {R"({"expiry": "client", "ttl": "30s"})", 30s, 2s, 10s, 2s, 1'200'000},
      }));
  INFO(params);
  const LeaseConfig c = config_of(json::parse(params));
  CHECK(c.ttl == ttl);
  CHECK(c.renew_interval == renew_interval);
  CHECK(c.renew_deadline == renew_deadline);
  CHECK(c.retry_interval == retry_interval);
  CHECK(c.jitter_ppm == jitter_ppm);
  CHECK(c.fencing);
  CHECK(c.recheck_before_write);
  CHECK(c.key == kKey);
}

TEST_CASE("lease: given parameters override the defaults") {
  const LeaseConfig c = config_of(json::parse(R"({"expiry": "client", "ttl": "20s",
      "renew_interval": "3s", "renew_deadline": "12s", "retry_interval": "4s", "fencing": false,
      "recheck_before_write": false, "jitter_factor": 1.5, "key": "/svc/leader"})"));
  CHECK(c.expiry == Expiry::client);
  CHECK(c.ttl == 20s);
  CHECK(c.renew_interval == 3s);
  CHECK(c.renew_deadline == 12s);
  CHECK(c.retry_interval == 4s);
  CHECK_FALSE(c.fencing);
  CHECK_FALSE(c.recheck_before_write);
  CHECK(c.jitter_ppm == 1'500'000);
  CHECK(c.key == "/svc/leader");
}

TEST_CASE("lease: a wrong or inconsistent parameter is one problem at its own pointer") {
  auto [params, pointer, says] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"renew_interval": "3s"})", "/protocol/renew_interval",
       "renew_interval must be shorter than ttl"},
      {R"({"ttl": "3s", "renew_deadline": "3s"})", "/protocol/renew_deadline",
       "renew_deadline must be shorter than ttl"},
      {R"({"renew_interval": "1s", "renew_deadline": "900ms"})", "/protocol/renew_deadline",
       "renew_deadline must be at least renew_interval"},
      {R"({"expiry": "client", "ttl": "8s"})", "/protocol/renew_deadline",
       "10s (the default in client mode)"},
      {R"({"ttl": "0s"})", "/protocol/ttl", "at least \"1ms\""},
      {R"({"retry_interval": "0s"})", "/protocol/retry_interval", "at least \"1ms\""},
      {R"({"ttl": "999us"})", "/protocol/ttl", "the shortest protocol timer"},
      {R"({"ttl": "87601h"})", "/protocol/ttl", "ten years, the longest electsim accepts"},
      {R"({"ttl": "ten"})", "/protocol/ttl", "\"ten\""},
      {R"({"jitter_factor": -0.5})", "/protocol/jitter_factor", "a number from 0 to 10"},
      {R"({"jitter_factor": 10.5})", "/protocol/jitter_factor", "a number from 0 to 10"},
      // The parameter's meaning changed with its name: the old name is refused, not reread.
      {R"({"jitter": 1.2})", "/protocol/jitter", "did you mean \"jitter_factor\"?"},
      {R"({"key": ""})", "/protocol/key", "a non-empty string"},
      {R"({"expiry": "clock"})", "/protocol/expiry", "\"client\""},
      {R"({"fencing": "yes"})", "/protocol/fencing", "true or false"},
      {R"({"tll": "3s"})", "/protocol/tll", "did you mean \"ttl\"?"},
      {R"({"ttl": "3s", "backoff_max": "500ms"})", "/protocol/backoff_max",
       "at least retry_interval (1s)"},
      {R"({"backoff_factor": 3})", "/protocol/backoff_factor", "only beside backoff_max"},
      {R"({"backoff_max": "8s", "backoff_factor": 0.5})", "/protocol/backoff_factor",
       "a number from 1 to 10"},
      {R"({"race_jitter": "-1s"})", "/protocol/race_jitter", "\"-1s\""},
      {R"({"race_jitter": "2h"})", "/protocol/race_jitter", "\"2h\""},
      {R"({"expiry": "client", "race_jitter": "1s"})", "/protocol/race_jitter",
       "no race_jitter in client mode"},
  }));
  INFO(params);
  Problems problems;
  const auto config =
      electsim::protocols::lease::read_config(json::parse(params), "/protocol", problems);
  CHECK_FALSE(config.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == pointer);
  CHECK_THAT(problems[0].format(), Catch::Contains(says));
}

TEST_CASE(
    "lease: the registry lists it with its parameter table and prepares a fenced store "
    "protocol") {
  const bool fencing = GENERATE(true, false);
  const auto* info = electsim::protocols::find_protocol("lease");
  REQUIRE(info != nullptr);
  const auto names_listed = electsim::protocols::protocol_names();
  CHECK(std::count(names_listed.begin(), names_listed.end(), "lease") == 1);
  CHECK(electsim::protocols::find_protocol("leases") == nullptr);
  CHECK_FALSE(info->description.empty());
  CHECK(info->message_types.empty());
  std::vector<std::string> names;
  for (const auto& spec : info->params) names.push_back(spec.name);
  CHECK(names == std::vector<std::string>{"ttl", "renew_interval", "renew_deadline",
                                          "retry_interval", "fencing", "expiry",
                                          "recheck_before_write", "jitter_factor", "race_jitter",
                                          "backoff_max", "backoff_factor", "keepalive_phase", "key",
                                          "lease_duration_from", "expiry_judged_by", "per_node"});

  Problems problems;
  ClusterInfo cluster;
  cluster.node_count = 3;
  const auto prepared =
      info->prepare(json{{"fencing", fencing}, {"key", "/k"}}, "/protocol", cluster, problems);
  REQUIRE(prepared.has_value());
  CHECK(problems.empty());
  CHECK(prepared->leader_key == std::optional<std::string>("/k"));
  CHECK(prepared->uses_store);
  CHECK(prepared->fencing == std::optional<bool>(fencing));
  REQUIRE(prepared->factory);
  CHECK(prepared->factory(2) != nullptr);

  CHECK_FALSE(
      info->prepare(json{{"ttl", "1ms"}, {"renew_interval", "1s"}}, "/protocol", cluster, problems)
          .has_value());
  CHECK_FALSE(problems.empty());
}
