// The store (etcd v3 model) driven request by request: revisions, txn compares and atomicity,
// leases (grant, keepalive, revoke, expiry), watches and limits. No kernel: the test is the client
// and moves the store's clock itself.
// Long on purpose: one case per rule of etcd's API the store models, all driven by the client here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "servers/store/store.hpp"

using namespace electsim::sim;
using namespace electsim::servers;

namespace {

StoreRequest get(const std::string& key) {
  StoreRequest r;
  r.op = StoreOp::get;
  r.key = key;
  return r;
}

StoreRequest put(const std::string& key, const std::string& value, LeaseId lease = kNoLease) {
  StoreRequest r;
  r.op = StoreOp::put;
  r.key = key;
  r.value = value;
  r.lease = lease;
  return r;
}

StoreRequest del(const std::string& key) {
  StoreRequest r;
  r.op = StoreOp::del;
  r.key = key;
  return r;
}

StoreRequest txn(std::vector<Compare> compares, std::vector<TxnOp> success,
                 std::vector<TxnOp> failure = {}) {
  StoreRequest r;
  r.op = StoreOp::txn;
  r.compares = std::move(compares);
  r.success = std::move(success);
  r.failure = std::move(failure);
  return r;
}

StoreRequest grant(Duration ttl) {
  StoreRequest r;
  r.op = StoreOp::lease_grant;
  r.ttl = ttl;
  return r;
}

StoreRequest keepalive(LeaseId lease) {
  StoreRequest r;
  r.op = StoreOp::lease_keepalive;
  r.lease = lease;
  return r;
}

StoreRequest revoke(LeaseId lease) {
  StoreRequest r;
  r.op = StoreOp::lease_revoke;
  r.lease = lease;
  return r;
}

StoreRequest watch(const std::string& key) {
  StoreRequest r;
  r.op = StoreOp::watch;
  r.key = key;
  return r;
}

StoreRequest unwatch(std::int64_t id) {
  StoreRequest r;
  r.op = StoreOp::unwatch;
  r.watch_id = id;
  return r;
}

Compare compare(const std::string& key, Compare::Target target, Compare::Op op,
                std::int64_t number) {
  Compare c;
  c.key = key;
  c.target = target;
  c.op = op;
  c.number = number;
  return c;
}

Compare compare_value(const std::string& key, Compare::Op op, const std::string& text) {
  Compare c;
  c.key = key;
  c.target = Compare::Target::value;
  c.op = op;
  c.text = text;
  return c;
}

TxnOp put_op(const std::string& key, const std::string& value, LeaseId lease = kNoLease) {
  return TxnOp{TxnOp::Kind::put, key, value, lease};
}
TxnOp del_op(const std::string& key) {
  return TxnOp{TxnOp::Kind::del, key, "", kNoLease};
}
TxnOp get_op(const std::string& key) {
  return TxnOp{TxnOp::Kind::get, key, "", kNoLease};
}

// The client side: sends requests at the store's current local time and keeps the last output.
struct Client {
  explicit Client(StoreConfig config = {}) : store(config) {}

  StoreReply send(const StoreRequest& r, NodeId from = 0) {
    out.clear();
    return store.apply(from, r, now, out);
  }
  void expire() {
    out.clear();
    store.expire_leases(now, out);
  }

  Store store;
  StoreOutput out;
  LocalTime now{0};
};

}  // namespace

TEST_CASE("store: two racing txns on an absent key: exactly one wins") {
  Client c;
  // Both nodes ask "create the key if nobody has": the first applied takes it.
  const auto campaign = [](NodeId node) {
    return txn({compare("leader", Compare::Target::create_revision, Compare::Op::equal, 0)},
               {put_op("leader", std::to_string(node))}, {get_op("leader")});
  };
  const StoreReply first = c.send(campaign(1), 1);
  const StoreReply second = c.send(campaign(2), 2);
  CHECK(first.error == StoreError::none);
  CHECK(first.succeeded);
  CHECK(first.revision == 1);
  CHECK(second.error == StoreError::none);
  CHECK_FALSE(second.succeeded);
  CHECK(second.revision == 1);
  REQUIRE(second.responses.size() == 1);
  REQUIRE(second.responses[0].has_value());
  CHECK(second.responses[0]->value == "1");
  CHECK(second.responses[0]->create_revision == 1);
  REQUIRE(c.store.peek("leader").has_value());
  CHECK(c.store.peek("leader")->value == "1");
}

TEST_CASE("store: a request takes one revision if it writes and none otherwise") {
  // Starting state: "a" at revision 1, lease 1 holding "b" at revision 2, lease 2 holding nothing.
  auto [name, request, revision_after,
        changes] = GENERATE(table<std::string, StoreRequest, Revision, std::size_t>({
      {"get", get("a"), 2, 0},
      {"get of an absent key", get("zz"), 2, 0},
      {"put of a new key", put("c", "x"), 3, 1},
      {"put of an existing key", put("a", "y"), 3, 1},
      {"delete", del("a"), 3, 1},
      {"delete of an absent key", del("zz"), 2, 0},
      {"txn writing three keys", txn({}, {put_op("c", "1"), put_op("d", "2"), del_op("a")}), 3, 3},
      {"txn that only reads", txn({}, {get_op("a"), get_op("b")}), 2, 0},
      {"txn deleting an absent key", txn({}, {del_op("zz")}), 2, 0},
      {"failed compare running nothing",
       txn({compare("a", Compare::Target::create_revision, Compare::Op::equal, 0)},
           {put_op("a", "z")}),
       2, 0},
      {"lease grant", grant(5s), 2, 0},
      {"keepalive", keepalive(1), 2, 0},
      {"revoke of a lease with keys", revoke(1), 3, 1},
      {"revoke of a lease without keys", revoke(2), 2, 0},
      {"watch", watch("a"), 2, 0},
  }));
  INFO(name);
  Client c;
  c.send(put("a", "v"));
  const LeaseId with_keys = c.send(grant(10s)).lease;
  c.send(put("b", "v", with_keys));
  c.send(grant(10s));
  REQUIRE(c.store.revision() == 2);

  const StoreReply reply = c.send(request);
  CHECK(reply.error == StoreError::none);
  CHECK(reply.revision == revision_after);
  CHECK(c.store.revision() == revision_after);
  CHECK(c.out.changes.size() == changes);
  for (const StoreChange& change : c.out.changes) CHECK(change.revision == revision_after);
}

TEST_CASE("store: a multi-op txn writes all its keys at one revision, in op order") {
  Client c;
  c.send(put("a", "old"));
  const StoreReply reply =
      c.send(txn({}, {del_op("a"), put_op("c", "3"), put_op("b", "2"), get_op("b")}));
  CHECK(reply.succeeded);
  CHECK(reply.revision == 2);
  REQUIRE(c.out.changes.size() == 3);
  CHECK(c.out.changes[0].kind == WatchEvent::Kind::del);
  CHECK(c.out.changes[0].key == "a");
  CHECK(c.out.changes[1].key == "c");
  CHECK(c.out.changes[2].key == "b");
  for (const StoreChange& change : c.out.changes) CHECK(change.revision == 2);
  CHECK(c.store.peek("b")->mod_revision == 2);
  CHECK(c.store.peek("c")->mod_revision == 2);
  // One response per op; the get sees the put made before it in the same txn.
  REQUIRE(reply.responses.size() == 4);
  CHECK_FALSE(reply.responses[0].has_value());
  CHECK_FALSE(reply.responses[1].has_value());
  CHECK_FALSE(reply.responses[2].has_value());
  REQUIRE(reply.responses[3].has_value());
  CHECK(reply.responses[3]->value == "2");
}

TEST_CASE("store: put sets create_revision once, and mod_revision and version on every put") {
  Client c;
  c.send(put("other", "x"));  // revision 1, so the key's revisions differ from its version
  c.send(put("k", "1"));
  c.send(put("k", "2"));
  const StoreReply reply = c.send(get("k"));
  REQUIRE(reply.kv.has_value());
  CHECK(reply.kv->key == "k");
  CHECK(reply.kv->value == "2");
  CHECK(reply.kv->create_revision == 2);
  CHECK(reply.kv->mod_revision == 3);
  CHECK(reply.kv->version == 2);
  CHECK(reply.revision == 3);
  // A deleted and re-created key starts over.
  c.send(del("k"));
  c.send(put("k", "3"));
  CHECK(c.store.peek("k")->create_revision == 5);
  CHECK(c.store.peek("k")->version == 1);
  CHECK_FALSE(c.send(get("gone")).kv.has_value());
}

TEST_CASE("store: txn compares on value, create_revision, mod_revision and lease") {
  using T = Compare::Target;
  using O = Compare::Op;
  // "k" is created at revision 2 with lease 1 and value "b", then put again at revision 3.
  auto [name, cmp, holds] = GENERATE(table<std::string, Compare, bool>({
      {"value equal", compare_value("k", O::equal, "b"), true},
      {"value equal, wrong", compare_value("k", O::equal, "a"), false},
      {"value not equal", compare_value("k", O::not_equal, "a"), true},
      {"value less", compare_value("k", O::less, "c"), true},
      {"value greater", compare_value("k", O::greater, "c"), false},
      {"create_revision equal", compare("k", T::create_revision, O::equal, 2), true},
      {"create_revision equal 0 on a present key", compare("k", T::create_revision, O::equal, 0),
       false},
      {"mod_revision equal", compare("k", T::mod_revision, O::equal, 3), true},
      {"mod_revision less", compare("k", T::mod_revision, O::less, 3), false},
      {"mod_revision greater", compare("k", T::mod_revision, O::greater, 2), true},
      {"lease equal", compare("k", T::lease, O::equal, 1), true},
      {"lease not equal", compare("k", T::lease, O::not_equal, 1), false},
      {"missing key: create_revision 0", compare("none", T::create_revision, O::equal, 0), true},
      {"missing key: mod_revision 0", compare("none", T::mod_revision, O::equal, 0), true},
      {"missing key: lease 0", compare("none", T::lease, O::equal, 0), true},
      {"missing key: empty value", compare_value("none", O::equal, ""), true},
      {"missing key: value not empty", compare_value("none", O::not_equal, ""), false},
  }));
  INFO(name);
  Client c;
  const LeaseId lease = c.send(grant(10s)).lease;
  REQUIRE(lease == 1);
  c.send(put("x", "x"));
  c.send(put("k", "a", lease));
  c.send(put("k", "b", lease));
  const StoreReply reply = c.send(txn({cmp}, {put_op("r", "success")}, {put_op("r", "failure")}));
  CHECK(reply.succeeded == holds);
  CHECK(c.store.peek("r")->value == (holds ? "success" : "failure"));
}

TEST_CASE("store: every compare of a txn must hold") {
  Client c;
  c.send(put("a", "1"));
  const Compare a_is_1 = compare_value("a", Compare::Op::equal, "1");
  const Compare b_absent = compare("b", Compare::Target::create_revision, Compare::Op::equal, 0);
  const Compare a_is_2 = compare_value("a", Compare::Op::equal, "2");
  CHECK(c.send(txn({a_is_1, b_absent}, {})).succeeded);
  CHECK_FALSE(c.send(txn({a_is_1, a_is_2}, {})).succeeded);
  CHECK_FALSE(c.send(txn({a_is_2, b_absent}, {})).succeeded);
}

TEST_CASE("store: a put or txn naming an unknown lease fails and applies nothing") {
  Client c;
  c.send(put("a", "1"));
  const std::int64_t w = c.send(watch("b"), 3).watch_id;
  REQUIRE(w > 0);

  const StoreReply plain = c.send(put("b", "2", 99));
  CHECK(plain.error == StoreError::lease_not_found);
  CHECK_FALSE(plain.succeeded);
  CHECK(plain.revision == 1);
  CHECK_FALSE(c.store.peek("b").has_value());
  CHECK(c.out.changes.empty());
  CHECK(c.out.notifications.empty());

  const StoreReply in_txn = c.send(txn({}, {put_op("b", "2"), del_op("a"), put_op("c", "3", 99)}));
  CHECK(in_txn.error == StoreError::lease_not_found);
  CHECK_FALSE(in_txn.succeeded);
  CHECK(in_txn.responses.empty());
  CHECK(in_txn.revision == 1);
  CHECK(c.store.revision() == 1);
  CHECK_FALSE(c.store.peek("b").has_value());
  CHECK(c.store.peek("a").has_value());
  CHECK(c.out.changes.empty());
  CHECK(c.out.notifications.empty());
}

TEST_CASE("store: lease_grant raises TTLs shorter than min_ttl") {
  auto [min_ttl, requested, granted] = GENERATE(table<Duration, Duration, Duration>({
      {Duration(0), Duration(1s), Duration(1s)},
      {Duration(2s), Duration(1s), Duration(2s)},
      {Duration(2s), Duration(2s), Duration(2s)},
      {Duration(2s), Duration(5s), Duration(5s)},
      {Duration(2s), Duration(0), Duration(2s)},
  }));
  INFO("min_ttl=" << min_ttl.count() << " requested=" << requested.count());
  StoreConfig config;
  config.min_ttl = min_ttl;
  Client c(config);
  c.now = LocalTime(Duration(100ms));
  const StoreReply reply = c.send(grant(requested));
  CHECK(reply.error == StoreError::none);
  CHECK(reply.ttl == granted);
  REQUIRE(c.store.lease_deadline(reply.lease).has_value());
  CHECK(*c.store.lease_deadline(reply.lease) == c.now + granted);
}

// ZooKeeper sessions (the zookeeper protocol's lease_grant with `session`), against a timing
// model written from ZooKeeper's source: ZooKeeperServer.processConnectRequest clamps the asked
// timeout to [minSessionTimeout, maxSessionTimeout] = [2, 20] x tickTime, and SessionTrackerImpl
// files a session touched at t under ExpiryQueue.roundToNextInterval(t + timeout) =
// (floor((t + timeout) / tick) + 1) x tick, where SessionTrackerImpl.run expires it.
namespace {

StoreRequest session(Duration asked) {
  StoreRequest r = grant(asked);
  r.session = true;
  return r;
}

Duration model_negotiated(Duration asked, Duration tick) {
  if (asked < 2 * tick) return 2 * tick;
  if (asked > 20 * tick) return 20 * tick;
  return asked;
}

LocalTime model_expiry(LocalTime touch, Duration timeout, Duration tick) {
  const std::int64_t t = (touch + timeout).ns;
  return LocalTime((t / tick.count() + 1) * tick.count());
}

}  // namespace

TEST_CASE("store: a ZooKeeper session's timeout is negotiated into [2, 20] ticks") {
  auto [tick, asked, granted] = GENERATE(table<Duration, Duration, Duration>({
      {Duration(2s), Duration(60s), Duration(40s)},  // Curator's 60s under zoo_sample.cfg's tick
      {Duration(2s), Duration(40s), Duration(40s)},
      {Duration(2s), Duration(6s), Duration(6s)},
      {Duration(2s), Duration(3s), Duration(4s)},
      {Duration(2s), Duration(1s), Duration(4s)},
      {Duration(3s), Duration(60s), Duration(60s)},  // ZooKeeperServer's DEFAULT_TICK_TIME
      {Duration(3s), Duration(90s), Duration(60s)},
      {Duration(500ms), Duration(3s), Duration(3s)},
  }));
  INFO("tick=" << tick.count() << " asked=" << asked.count());
  CHECK(negotiate_session_timeout(asked, tick) == granted);
  CHECK(model_negotiated(asked, tick) == granted);
  StoreConfig config;
  config.tick_time = tick;
  config.min_ttl = 10s;  // etcd's raise does not apply to sessions
  Client c(config);
  const StoreReply reply = c.send(session(asked));
  CHECK(reply.error == StoreError::none);
  CHECK(reply.ttl == granted);
  // The store_apply trace names the negotiated timeout, as ZooKeeper's server logs it.
  CHECK(negotiated_timeout_text(session(asked), reply) == format_duration(granted));
  CHECK(negotiated_timeout_text(grant(asked), reply).empty());
}

TEST_CASE("store: a ZooKeeper session expires on the first tick after its timeout") {
  auto [tick, asked, touches] = GENERATE(table<Duration, Duration, std::vector<Duration>>({
      {Duration(2s), Duration(60s), {Duration(0), Duration(13333ms), Duration(26666ms)}},
      {Duration(2s), Duration(4s), {Duration(1ms), Duration(1333ms), Duration(2667ms)}},
      {Duration(2s), Duration(6s), {Duration(750ms), Duration(2750ms), Duration(4000ms)}},
      {Duration(3s), Duration(10s), {Duration(2999ms), Duration(6s)}},
  }));
  INFO("tick=" << tick.count() << " asked=" << asked.count());
  StoreConfig config;
  config.tick_time = tick;
  Client c(config);
  const Duration timeout = model_negotiated(asked, tick);
  c.now = LocalTime(touches.front());
  const LeaseId lease = c.send(session(asked)).lease;
  LocalTime expiry = model_expiry(c.now, timeout, tick);
  REQUIRE(c.store.lease_deadline(lease) == expiry);
  for (std::size_t i = 1; i < touches.size(); ++i) {
    c.now = LocalTime(touches[i]);
    REQUIRE(c.send(keepalive(lease)).error == StoreError::none);
    expiry = model_expiry(c.now, timeout, tick);
    CHECK(c.store.lease_deadline(lease) == expiry);
  }
  // Never before touch + timeout, and less than one tick after it, on a tick boundary.
  CHECK(expiry > c.now + timeout);
  CHECK(expiry <= c.now + timeout + tick);
  CHECK(expiry.ns % tick.count() == 0);
  c.now = expiry - Duration(1);
  c.expire();
  CHECK(c.out.expired_leases.empty());
  c.now = expiry;
  c.expire();
  CHECK(c.out.expired_leases == std::vector<LeaseId>{lease});
}

TEST_CASE("store: a session touched exactly at a boundary goes to the next tick, as in ZooKeeper") {
  // roundToNextInterval is (t / tick + 1) * tick: strictly after, even on a boundary.
  CHECK(round_to_next_tick(LocalTime(Duration(4s)), 2s) == LocalTime(Duration(6s)));
  CHECK(round_to_next_tick(LocalTime(Duration(4s) - Duration(1)), 2s) == LocalTime(Duration(4s)));
  CHECK(round_to_next_tick(LocalTime(Duration(0)), 2s) == LocalTime(Duration(2s)));
  // A store clock behind the run's start still rounds forward.
  CHECK(round_to_next_tick(LocalTime(Duration(-1s)), 2s) == LocalTime(Duration(0)));
  CHECK(round_to_next_tick(LocalTime(Duration(-2s)), 2s) == LocalTime(Duration(0)));
}

TEST_CASE("store: lease ids count up from 1") {
  Client c;
  CHECK(c.send(grant(1s)).lease == 1);
  CHECK(c.send(grant(1s)).lease == 2);
  c.send(revoke(1));
  CHECK(c.send(grant(1s)).lease == 3);
}

TEST_CASE("store: lease expiry deletes the lease's keys at one revision and tells watchers") {
  Client c;
  const LeaseId lease = c.send(grant(1s)).lease;
  c.send(put("b", "1", lease));
  c.send(put("a", "1", lease));
  c.send(put("keep", "1"));
  const std::int64_t w = c.send(watch("a"), 2).watch_id;
  REQUIRE(c.store.revision() == 3);

  c.now = LocalTime(Duration(999ms));
  c.expire();
  CHECK(c.out.expired_leases.empty());
  CHECK(c.store.peek("a").has_value());

  c.now = LocalTime(Duration(1s));
  c.expire();
  CHECK(c.store.revision() == 4);
  CHECK(c.out.expired_leases == std::vector<LeaseId>{lease});
  REQUIRE(c.out.changes.size() == 2);
  CHECK(c.out.changes[0].key == "a");  // key order
  CHECK(c.out.changes[1].key == "b");
  for (const StoreChange& change : c.out.changes) {
    CHECK(change.kind == WatchEvent::Kind::del);
    CHECK(change.revision == 4);
    CHECK(change.by_lease_expiry);
    CHECK(change.lease == lease);
  }
  REQUIRE(c.out.notifications.size() == 1);
  const WatchNotification& n = c.out.notifications[0];
  CHECK(n.to == 2);
  CHECK(n.event.watch_id == w);
  CHECK(n.event.kind == WatchEvent::Kind::del);
  CHECK(n.event.kv.key == "a");
  CHECK(n.event.kv.mod_revision == 4);
  CHECK(n.event.revision == 4);
  CHECK(n.event.by_lease_expiry);

  CHECK_FALSE(c.store.peek("a").has_value());
  CHECK_FALSE(c.store.peek("b").has_value());
  CHECK(c.store.peek("keep").has_value());
  CHECK_FALSE(c.store.lease_deadline(lease).has_value());
  CHECK(c.send(keepalive(lease)).error == StoreError::lease_not_found);
  // Nothing left to expire.
  c.expire();
  CHECK(c.out.expired_leases.empty());
  CHECK(c.store.revision() == 4);
}

TEST_CASE("store: a lease without keys expires without taking a revision") {
  Client c;
  const LeaseId lease = c.send(grant(1s)).lease;
  c.now = LocalTime(Duration(2s));
  c.expire();
  CHECK(c.out.expired_leases == std::vector<LeaseId>{lease});
  CHECK(c.out.changes.empty());
  CHECK(c.store.revision() == 0);
}

TEST_CASE("store: expiry handles due leases in id order, one revision each") {
  Client c;
  const LeaseId long_lease = c.send(grant(3s)).lease;
  const LeaseId short_lease = c.send(grant(1s)).lease;
  c.send(put("long", "1", long_lease));
  c.send(put("short", "1", short_lease));
  c.now = LocalTime(Duration(5s));
  c.expire();
  CHECK(c.out.expired_leases == std::vector<LeaseId>{long_lease, short_lease});
  REQUIRE(c.out.changes.size() == 2);
  CHECK(c.out.changes[0].key == "long");
  CHECK(c.out.changes[0].revision == 3);
  CHECK(c.out.changes[1].key == "short");
  CHECK(c.out.changes[1].revision == 4);
}

TEST_CASE("store: keepalive postpones expiry by the lease's TTL") {
  StoreConfig config;
  config.min_ttl = 2s;
  Client c(config);
  const LeaseId lease = c.send(grant(1s)).lease;  // raised to 2s
  c.send(put("k", "v", lease));
  c.now = LocalTime(Duration(1500ms));
  const StoreReply reply = c.send(keepalive(lease));
  CHECK(reply.error == StoreError::none);
  CHECK(reply.lease == lease);
  CHECK(reply.ttl == 2s);
  CHECK(*c.store.lease_deadline(lease) == LocalTime(Duration(3500ms)));
  CHECK(*c.store.next_lease_deadline() == LocalTime(Duration(3500ms)));

  c.now = LocalTime(Duration(2s));  // the original deadline
  c.expire();
  CHECK(c.out.expired_leases.empty());
  CHECK(c.store.peek("k").has_value());

  c.now = LocalTime(Duration(3500ms));
  c.expire();
  CHECK(c.out.expired_leases == std::vector<LeaseId>{lease});
  CHECK_FALSE(c.store.peek("k").has_value());
}

TEST_CASE("store: keepalive of an unknown lease fails with ttl 0") {
  Client c;
  const StoreReply reply = c.send(keepalive(7));
  CHECK(reply.error == StoreError::lease_not_found);
  CHECK(reply.ttl == Duration(0));
  CHECK(reply.revision == 0);
}

TEST_CASE("store: keepalive after the deadline fails even before expiry has run") {
  Client c;
  const LeaseId lease = c.send(grant(1s)).lease;
  c.send(put("k", "v", lease));
  c.now = LocalTime(Duration(1s));
  CHECK(c.send(keepalive(lease)).error == StoreError::lease_not_found);
  CHECK(*c.store.lease_deadline(lease) == LocalTime(Duration(1s)));
  c.expire();
  CHECK_FALSE(c.store.peek("k").has_value());
}

TEST_CASE("store: revoke deletes the lease's keys at one revision, an unknown lease fails") {
  Client c;
  const LeaseId lease = c.send(grant(10s)).lease;
  c.send(put("y", "1", lease));
  c.send(put("x", "1", lease));
  const std::int64_t w = c.send(watch("y"), 4).watch_id;
  const StoreReply reply = c.send(revoke(lease));
  CHECK(reply.error == StoreError::none);
  CHECK(reply.lease == lease);
  CHECK(reply.revision == 3);
  REQUIRE(c.out.changes.size() == 2);
  CHECK(c.out.changes[0].key == "x");
  CHECK(c.out.changes[1].key == "y");
  for (const StoreChange& change : c.out.changes) {
    CHECK(change.revision == 3);
    CHECK_FALSE(change.by_lease_expiry);
  }
  REQUIRE(c.out.notifications.size() == 1);
  CHECK(c.out.notifications[0].event.watch_id == w);
  CHECK_FALSE(c.out.notifications[0].event.by_lease_expiry);
  CHECK(c.out.expired_leases.empty());
  CHECK_FALSE(c.store.lease_deadline(lease).has_value());

  const StoreReply again = c.send(revoke(lease));
  CHECK(again.error == StoreError::lease_not_found);
  CHECK(again.revision == 3);
}

TEST_CASE("store: a key put under another lease or no lease leaves its old lease") {
  Client c;
  const LeaseId first = c.send(grant(10s)).lease;
  const LeaseId second = c.send(grant(10s)).lease;
  c.send(put("moved", "1", first));
  c.send(put("moved", "2", second));
  c.send(put("freed", "1", first));
  c.send(put("freed", "2"));
  c.send(put("deleted", "1", first));
  c.send(del("deleted"));
  CHECK(c.store.peek("moved")->lease == second);
  CHECK(c.store.peek("freed")->lease == kNoLease);
  const Revision before = c.store.revision();

  c.send(revoke(first));  // holds nothing any more
  CHECK(c.out.changes.empty());
  CHECK(c.store.revision() == before);
  CHECK(c.store.peek("moved").has_value());
  CHECK(c.store.peek("freed").has_value());

  c.send(revoke(second));
  REQUIRE(c.out.changes.size() == 1);
  CHECK(c.out.changes[0].key == "moved");
}

TEST_CASE("store: watches fire once per change of their key, in watch-id order") {
  Client c;
  c.send(put("a", "before"));  // no history replay for watches made later
  const std::int64_t w1 = c.send(watch("a"), 1).watch_id;
  const std::int64_t w2 = c.send(watch("a"), 2).watch_id;
  const std::int64_t w3 = c.send(watch("b"), 1).watch_id;
  CHECK(w1 < w2);
  CHECK(w2 < w3);
  CHECK(c.out.notifications.empty());

  c.send(put("a", "1"));
  REQUIRE(c.out.notifications.size() == 2);
  CHECK(c.out.notifications[0].to == 1);
  CHECK(c.out.notifications[0].event.watch_id == w1);
  CHECK(c.out.notifications[1].to == 2);
  CHECK(c.out.notifications[1].event.watch_id == w2);
  for (const WatchNotification& n : c.out.notifications) {
    CHECK(n.event.kind == WatchEvent::Kind::put);
    CHECK(n.event.kv.value == "1");
    CHECK(n.event.kv.mod_revision == 2);
    CHECK(n.event.revision == 2);
    CHECK_FALSE(n.event.by_lease_expiry);
  }

  c.send(put("b", "1"));
  REQUIRE(c.out.notifications.size() == 1);
  CHECK(c.out.notifications[0].event.watch_id == w3);

  c.send(put("ab", "1"));  // exactly the key, not a prefix
  CHECK(c.out.notifications.empty());

  // Two changes of "a" in one txn: two notifications per watch, in change order.
  c.send(txn({}, {put_op("a", "2"), del_op("a")}));
  REQUIRE(c.out.notifications.size() == 4);
  CHECK(c.out.notifications[0].event.kind == WatchEvent::Kind::put);
  CHECK(c.out.notifications[1].event.kind == WatchEvent::Kind::put);
  CHECK(c.out.notifications[2].event.kind == WatchEvent::Kind::del);
  CHECK(c.out.notifications[2].event.kv.key == "a");
  CHECK(c.out.notifications[2].event.kv.mod_revision == 5);
  CHECK(c.out.notifications[3].event.kind == WatchEvent::Kind::del);

  c.send(del("a"));  // already gone: no change, no notification
  CHECK(c.out.notifications.empty());
}

TEST_CASE("store: unwatch removes a watch, an unknown or foreign watch id fails") {
  Client c;
  const std::int64_t w = c.send(watch("a"), 1).watch_id;
  const StoreReply foreign = c.send(unwatch(w), 2);
  CHECK(foreign.error == StoreError::watch_not_found);
  CHECK(c.send(unwatch(w), 1).error == StoreError::none);
  c.send(put("a", "1"));
  CHECK(c.out.notifications.empty());
  CHECK(c.send(unwatch(w), 1).error == StoreError::watch_not_found);
  CHECK(c.send(unwatch(12345), 1).error == StoreError::watch_not_found);
}

TEST_CASE("store: a key's watchers stay in watch-id order through unwatches and new watches") {
  Client c;
  const std::int64_t w1 = c.send(watch("a"), 1).watch_id;
  const std::int64_t w2 = c.send(watch("a"), 2).watch_id;
  const std::int64_t w3 = c.send(watch("a"), 3).watch_id;
  c.send(watch("b"), 4);
  CHECK(c.send(unwatch(w2), 2).error == StoreError::none);
  const std::int64_t w5 = c.send(watch("a"), 2).watch_id;
  c.store.drop_watches_of(4);
  c.send(put("a", "1"));
  std::vector<std::int64_t> ids;
  for (const WatchNotification& n : c.out.notifications) ids.push_back(n.event.watch_id);
  CHECK(ids == std::vector<std::int64_t>{w1, w3, w5});
  c.send(put("b", "1"));
  CHECK(c.out.notifications.empty());
  // Every watch of "a" gone: the key has no watchers left, and a new one is found again.
  for (const std::int64_t w : {w1, w3, w5}) {
    const NodeId owner = w == w1 ? 1 : w == w3 ? 3 : 2;
    CHECK(c.send(unwatch(w), owner).error == StoreError::none);
  }
  c.send(put("a", "2"));
  CHECK(c.out.notifications.empty());
  const std::int64_t w6 = c.send(watch("a"), 1).watch_id;
  c.send(put("a", "3"));
  REQUIRE(c.out.notifications.size() == 1);
  CHECK(c.out.notifications[0].event.watch_id == w6);
}

TEST_CASE("store: drop_watches_of removes that node's watches only") {
  Client c;
  c.send(watch("a"), 1);
  c.send(watch("b"), 1);
  const std::int64_t kept = c.send(watch("a"), 2).watch_id;
  c.store.drop_watches_of(1);
  c.send(put("a", "1"));
  REQUIRE(c.out.notifications.size() == 1);
  CHECK(c.out.notifications[0].to == 2);
  CHECK(c.out.notifications[0].event.watch_id == kept);
  c.send(put("b", "1"));
  CHECK(c.out.notifications.empty());
}

TEST_CASE("store: next_lease_deadline is the earliest live deadline") {
  Client c;
  CHECK_FALSE(c.store.next_lease_deadline().has_value());
  c.send(grant(5s));
  const LeaseId soon = c.send(grant(2s)).lease;
  c.send(grant(9s));
  CHECK(*c.store.next_lease_deadline() == LocalTime(Duration(2s)));
  c.send(revoke(soon));
  CHECK(*c.store.next_lease_deadline() == LocalTime(Duration(5s)));
}

TEST_CASE("store: exceeding a limit fails with resource_exhausted and applies nothing") {
  auto [name, request, error] = GENERATE(table<std::string, StoreRequest, StoreError>({
      {"put of a new key at max_keys", put("new", "1"), StoreError::resource_exhausted},
      {"put of an existing key at max_keys", put("k1", "2"), StoreError::none},
      {"txn creating a key at max_keys", txn({}, {put_op("k1", "2"), put_op("new", "1")}),
       StoreError::resource_exhausted},
      {"txn deleting one key and creating another", txn({}, {del_op("k1"), put_op("new", "1")}),
       StoreError::none},
      {"grant at max_leases", grant(1s), StoreError::resource_exhausted},
      {"watch at max_watches", watch("k1"), StoreError::resource_exhausted},
  }));
  INFO(name);
  StoreConfig config;
  config.max_keys = 2;
  config.max_leases = 1;
  config.max_watches = 1;
  Client c(config);
  c.send(put("k1", "1"));
  c.send(put("k2", "1"));
  REQUIRE(c.send(grant(1s)).error == StoreError::none);
  REQUIRE(c.send(watch("k2"), 5).error == StoreError::none);
  const Revision before = c.store.revision();

  const StoreReply reply = c.send(request);
  CHECK(reply.error == error);
  if (error != StoreError::none) {
    CHECK_FALSE(reply.succeeded);
    CHECK(reply.revision == before);
    CHECK(c.out.changes.empty());
    CHECK_FALSE(c.store.peek("new").has_value());
    CHECK(c.store.peek("k1")->value == "1");
  }
  // The limits hold afterwards whatever happened.
  CHECK((c.store.peek("k1").has_value() ? 1 : 0) + (c.store.peek("k2").has_value() ? 1 : 0) +
            (c.store.peek("new").has_value() ? 1 : 0) <=
        2);
}

// ---- Consul's sessions and lock-delay (protocols/consul) --------------------------------------

namespace {

StoreRequest session(Duration ttl, Duration lock_delay, bool release_keys) {
  StoreRequest r = grant(ttl);
  r.lock_delay = lock_delay;
  r.release_keys = release_keys;
  return r;
}

// Consul's PUT ?acquire=<session>: take the key if no session holds it.
StoreRequest acquire(const std::string& key, LeaseId lease, const std::string& value = "v") {
  StoreRequest r = txn({compare(key, Compare::Target::lease, Compare::Op::equal, kNoLease)},
                       {put_op(key, value, lease)}, {get_op(key)});
  r.lock_acquire = true;
  return r;
}

}  // namespace

TEST_CASE("store: a lock acquire counts LockIndex only when the key moves to a new lease") {
  Client c;
  const LeaseId a = c.send(session(std::chrono::seconds(10), Duration(0), true)).lease;
  const LeaseId b = c.send(session(std::chrono::seconds(10), Duration(0), true)).lease;
  REQUIRE(c.send(acquire("lock", a)).succeeded);
  CHECK(c.store.peek("lock")->lock_index == 1);
  // A plain put by the holder (a value update) is no acquisition.
  c.send(put("lock", "w", a));
  CHECK(c.store.peek("lock")->lock_index == 1);
  CHECK_FALSE(c.send(acquire("lock", b)).succeeded);  // held by a
  CHECK(c.store.peek("lock")->lock_index == 1);
  c.send(revoke(a));
  REQUIRE(c.send(acquire("lock", b)).succeeded);
  CHECK(c.store.peek("lock")->lock_index == 2);
}

TEST_CASE(
    "store: Behavior release leaves the key unheld with its value, Behavior delete removes it") {
  const bool release = GENERATE(true, false);
  Client c;
  const LeaseId a = c.send(session(std::chrono::seconds(10), Duration(0), release)).lease;
  REQUIRE(c.send(acquire("lock", a, "3")).succeeded);
  const std::int64_t w = c.send(watch("lock")).watch_id;
  const Revision before = c.store.revision();
  c.now = LocalTime(std::chrono::seconds(11));
  c.expire();
  CHECK(c.store.revision() == before + 1);
  REQUIRE(c.out.changes.size() == 1);
  CHECK(c.out.changes[0].by_lease_expiry);
  REQUIRE(c.out.notifications.size() == 1);
  CHECK(c.out.notifications[0].event.watch_id == w);
  if (release) {
    const std::optional<KeyValue> kv = c.store.peek("lock");
    REQUIRE(kv);
    CHECK(kv->lease == kNoLease);
    CHECK(kv->value == "3");
    CHECK(kv->lock_index == 1);
    CHECK(kv->mod_revision == before + 1);
    CHECK(c.out.changes[0].released);
    // The checkers see nobody holding the key, though its value names the old holder.
    CHECK(owner_of(c.out.changes[0], 5) == kNoNode);
    CHECK(c.out.notifications[0].event.kind == WatchEvent::Kind::put);
  } else {
    CHECK_FALSE(c.store.peek("lock"));
    CHECK(c.out.notifications[0].event.kind == WatchEvent::Kind::del);
  }
}

TEST_CASE("store: after a session ends, its keys refuse lock acquires for the lock-delay") {
  const bool by_expiry = GENERATE(true, false);
  Client c;
  const auto s = [](auto n) { return Duration(std::chrono::seconds(n)); };
  const LeaseId a = c.send(session(s(10), s(15), true)).lease;
  const LeaseId b = c.send(session(s(100), Duration(0), true)).lease;
  REQUIRE(c.send(acquire("lock", a)).succeeded);
  c.now = LocalTime(s(11));
  if (by_expiry) {
    c.expire();
  } else {
    c.send(revoke(a));  // Consul's session destroy starts the lock-delay too
  }
  const LocalTime ended = c.now;
  REQUIRE(c.store.lock_delay_until("lock") == ended + s(15));
  const Revision before = c.store.revision();
  c.now = ended + s(15) - Duration(1);
  const StoreReply refused = c.send(acquire("lock", b));
  CHECK_FALSE(refused.succeeded);
  CHECK(refused.lock_delayed);
  CHECK(refused.error == StoreError::none);
  CHECK(refused.responses.empty());  // nothing ran
  CHECK(c.store.revision() == before);
  // A plain put is no lock acquire: lock-delay does not stop it (Consul's KVS set).
  CHECK_FALSE(c.store.lock_delayed(put("lock", "x", b), c.now));
  c.now = ended + s(15);
  const StoreReply taken = c.send(acquire("lock", b));
  CHECK(taken.succeeded);
  CHECK_FALSE(taken.lock_delayed);
  CHECK(c.store.peek("lock")->lock_index == 2);
}

TEST_CASE("store: a voluntary release (a put without the lease) sets no lock-delay") {
  Client c;
  const auto s = [](auto n) { return Duration(std::chrono::seconds(n)); };
  const LeaseId a = c.send(session(s(10), s(15), true)).lease;
  const LeaseId b = c.send(session(s(10), s(15), true)).lease;
  REQUIRE(c.send(acquire("lock", a)).succeeded);
  // Consul's ?release=: the holder clears the key's session, then destroys its session.
  REQUIRE(c.send(txn({compare("lock", Compare::Target::lease, Compare::Op::equal, a)},
                     {put_op("lock", "v")}))
              .succeeded);
  c.send(revoke(a));
  CHECK_FALSE(c.store.lock_delay_until("lock"));
  CHECK(c.send(acquire("lock", b)).succeeded);
}

TEST_CASE("store: a lease granted without lock_delay leaves no lock-delay behind") {
  Client c;
  const LeaseId a = c.send(grant(std::chrono::seconds(10))).lease;
  c.send(put("leader", "0", a));
  c.now = LocalTime(std::chrono::seconds(11));
  c.expire();
  CHECK_FALSE(c.store.peek("leader"));
  CHECK_FALSE(c.store.lock_delay_until("leader"));
}

TEST_CASE("store: a replica leaves the lock-delay judgement to its leader, but records delays") {
  Client c;
  ReplicaMode mode;
  mode.leader_judges_lock_delay = true;
  c.store.set_replica_mode(mode);
  const auto s = [](auto n) { return Duration(std::chrono::seconds(n)); };
  const LeaseId a = c.send(session(s(10), s(15), true)).lease;
  const LeaseId b = c.send(session(s(100), Duration(0), true)).lease;
  REQUIRE(c.send(acquire("lock", a)).succeeded);
  c.now = LocalTime(s(11));
  REQUIRE(c.store.revoke_expired(a, c.now, c.out));
  // This member's own clock started the delay; its leader asks lock_delayed() before proposing.
  CHECK(c.store.lock_delay_until("lock") == LocalTime(s(26)));
  CHECK(c.store.lock_delayed(acquire("lock", b), c.now));
  // A committed acquire (the leader found no delay on its clock) applies here whatever this
  // member's clock says: every member applies the same entries alike.
  CHECK(c.send(acquire("lock", b)).succeeded);
}

TEST_CASE("store: with scans, a scan expires at most lease_revoke_rate x interval leases") {
  // etcd's lessor takes at most leaseRevokeRate / 2 = 500 expired leases at each 500ms check,
  // the earliest deadlines first; the rest wait for the next checks.
  StoreConfig config;
  config.expiry_scan_interval = 500ms;
  Client c(config);
  std::vector<LeaseId> late;   // granted first, expiring last
  std::vector<LeaseId> early;  // granted last, expiring first
  for (int i = 0; i < 700; ++i) late.push_back(c.send(grant(2s)).lease);
  for (int i = 0; i < 500; ++i) early.push_back(c.send(grant(1s)).lease);
  c.now = LocalTime(Duration(3s));
  c.expire();
  CHECK(c.out.expired_leases == early);
  c.expire();
  CHECK(c.out.expired_leases == std::vector<LeaseId>(late.begin(), late.begin() + 500));
  c.expire();
  CHECK(c.out.expired_leases == std::vector<LeaseId>(late.begin() + 500, late.end()));
  c.expire();
  CHECK(c.out.expired_leases.empty());

  // A member asks which leases are due, passing over those it is revoking already.
  for (int i = 0; i < 600; ++i) c.send(grant(1s));
  c.now = LocalTime(Duration(5s));
  FlatIndex skip;
  std::vector<LeaseId> due;
  c.store.due_leases(c.now, skip, due);
  REQUIRE(due.size() == 500);
  for (LeaseId id : due) skip.try_emplace(static_cast<std::uint64_t>(id), 0);
  due.clear();
  c.store.due_leases(c.now, skip, due);
  CHECK(due.size() == 100);
  for (LeaseId id : due) CHECK_FALSE(skip.find(static_cast<std::uint64_t>(id)).has_value());

  // The rate is the user's; without scans every due lease expires at once.
  config.lease_revoke_rate = 10;
  Client slow(config);
  for (int i = 0; i < 20; ++i) slow.send(grant(1s));
  slow.now = LocalTime(Duration(2s));
  slow.expire();
  CHECK(slow.out.expired_leases.size() == 5);
  Client exact;
  for (int i = 0; i < 1200; ++i) exact.send(grant(1s));
  exact.now = LocalTime(Duration(2s));
  exact.expire();
  CHECK(exact.out.expired_leases.size() == 1200);
}

TEST_CASE("store: a promoted lessor spreads piled-up deadlines as etcd's Promote does") {
  // lessor.Promote: with leaseRevokeRate (1000) leases or more, no more than three quarters of
  // the rate keep a deadline in any one second; the k-th past them moves k / 750 s on.
  const auto promoted = [](int count) {
    Client c;
    std::vector<LeaseId> leases;
    for (int i = 0; i < count; ++i) leases.push_back(c.send(grant(10s)).lease);
    const LeaseId later = c.send(grant(30s)).lease;
    c.now = LocalTime(Duration(1s));
    c.store.refresh_leases(c.now, 1s, [](LeaseId, Duration) {});
    std::vector<Duration> deadlines;
    for (LeaseId id : leases) deadlines.push_back(c.store.lease_deadline(id)->since_start());
    // A lease far past the pile keeps its refreshed deadline: 1s + 1s + 30s.
    CHECK(c.store.lease_deadline(later)->since_start() == 32s);
    return deadlines;
  };
  const std::vector<Duration> few = promoted(998);  // 999 leases with the later one
  CHECK(std::all_of(few.begin(), few.end(), [](Duration d) { return d == 12s; }));

  const std::vector<Duration> pile = promoted(2000);
  CHECK(std::count(pile.begin(), pile.end(), Duration(12s)) == 750);
  CHECK(*std::max_element(pile.begin(), pile.end()) == 12s + Duration(1s) * 2000 / 750);
  std::vector<Duration> sorted = pile;
  std::sort(sorted.begin(), sorted.end());
  std::ptrdiff_t busiest = 0;  // the most deadlines in a second from any deadline on
  for (auto it = sorted.begin(); it != sorted.end(); ++it) {
    busiest = std::max(busiest, std::lower_bound(it, sorted.end(), *it + 1s) - it);
  }
  CHECK(busiest == 750);
}
