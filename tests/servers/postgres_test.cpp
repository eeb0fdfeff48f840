// The database server (servers/postgres): the state of sessions, locks, the leader row and the
// fenced data as a pure state machine, and, in a kernel-backed world, how long a client's session
// outlives the client: TCP keepalive probes that a dead host leaves unanswered, a paused host
// answers, and a rebooted host resets; idle_in_transaction_session_timeout; a server crash.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "servers/postgres/database.hpp"
#include "servers/world.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim::sim;
using namespace electsim::servers;
using namespace std::chrono_literals;

DbRequest statement(DbOp op, RequestId id = 1, bool bump_epoch = false) {
  DbRequest r;
  r.id = id;
  r.op = op;
  r.bump_epoch = bump_epoch;
  return r;
}

const LocalTime kT0{};

}  // namespace

TEST_CASE("postgres: one session holds the advisory lock until it unlocks or ends") {
  Database db;
  Session& a = db.session_of(0, 0, kT0);
  const std::int64_t a_pid = a.pid;
  REQUIRE(db.execute(a, statement(DbOp::try_advisory_lock), kT0).reply->ok);
  Session& b = db.session_of(1, 0, kT0);
  const std::int64_t b_pid = b.pid;
  CHECK_FALSE(db.execute(b, statement(DbOp::try_advisory_lock), kT0).reply->ok);
  // Reentrant for its holder.
  CHECK(db.execute(*db.find(a_pid), statement(DbOp::try_advisory_lock), kT0).reply->ok);
  // Another life of the same client is another session: it cannot take its old session's lock.
  Session& a2 = db.session_of(0, 1, kT0);
  CHECK_FALSE(db.execute(a2, statement(DbOp::try_advisory_lock), kT0).reply->ok);
  db.end_session(a_pid, SessionEnd::keepalive, kT0);
  CHECK(db.advisory_holder() == 0);
  CHECK(db.sessions_ended(SessionEnd::keepalive) == 1);
  CHECK(db.execute(*db.find(b_pid), statement(DbOp::try_advisory_lock), kT0).reply->ok);
  CHECK(db.execute(*db.find(b_pid), statement(DbOp::advisory_unlock), kT0).reply->ok);
  CHECK(db.advisory_holder() == 0);
}

TEST_CASE("postgres: tokens are txid_current() or the epoch row, and both only grow") {
  Database db;
  Session& a = db.session_of(0, 0, kT0);
  const Token first = db.execute(a, statement(DbOp::try_advisory_lock), kT0).reply->token;
  db.execute(a, statement(DbOp::set_flag), kT0);  // another transaction consumes a txid
  db.execute(a, statement(DbOp::advisory_unlock), kT0);
  const Token second = db.execute(a, statement(DbOp::try_advisory_lock), kT0).reply->token;
  CHECK(second > first + 1);
  db.execute(a, statement(DbOp::advisory_unlock), kT0);
  const Token epoch1 = db.execute(a, statement(DbOp::try_advisory_lock, 1, true), kT0).reply->token;
  db.execute(a, statement(DbOp::advisory_unlock), kT0);
  const Token epoch2 = db.execute(a, statement(DbOp::try_advisory_lock, 2, true), kT0).reply->token;
  CHECK(epoch1 == 1);
  CHECK(epoch2 == 2);
  // They survive a restart of the server (committed rows and the WAL's xid counter).
  Database restarted(db.durable());
  Session& c = restarted.session_of(0, 0, kT0);
  CHECK(restarted.execute(c, statement(DbOp::try_advisory_lock, 3, true), kT0).reply->token == 3);
  // The flag this client set before the restart is data: still there, still blocking it.
  CHECK_FALSE(restarted.execute(c, statement(DbOp::set_flag), kT0).reply->ok);
  CHECK(restarted.durable().last_xid > db.durable().last_xid);
}

TEST_CASE("postgres: FOR UPDATE waits in line, SKIP LOCKED returns nothing at once") {
  Database db;
  Session& a = db.session_of(0, 0, kT0);
  const std::int64_t a_pid = a.pid;
  REQUIRE(db.execute(a, statement(DbOp::lock_row, 1), kT0).reply->ok);
  const std::int64_t b_pid = db.session_of(1, 0, kT0).pid;
  const std::int64_t c_pid = db.session_of(2, 0, kT0).pid;
  // b waits (no reply), c skips.
  CHECK_FALSE(db.execute(*db.find(b_pid), statement(DbOp::lock_row, 7), kT0).reply.has_value());
  const DbOutcome skipped = db.execute(*db.find(c_pid), statement(DbOp::lock_row_skip_locked), kT0);
  REQUIRE(skipped.reply.has_value());
  CHECK_FALSE(skipped.reply->ok);
  CHECK_FALSE(db.find(c_pid)->in_transaction);
  CHECK(db.row_waiters() == 1);
  // The holder's ROLLBACK passes the row to b, answering b's waiting statement.
  const DbOutcome released = db.execute(*db.find(a_pid), statement(DbOp::end_transaction), kT0);
  REQUIRE(released.granted.has_value());
  CHECK(released.granted_pid == b_pid);
  CHECK(released.granted->id == 7);
  CHECK(released.granted->ok);
  CHECK(db.row_holder() == b_pid);
  // A session that ends releases the row too.
  db.end_session(b_pid, SessionEnd::idle_in_transaction, kT0);
  CHECK(db.row_holder() == 0);
}

TEST_CASE("postgres: the flag row is set only while NULL, even for its holder's next life") {
  Database db;
  // A new session may move the others in memory: keep pids, not references, across them.
  const std::int64_t a_pid = db.session_of(0, 0, kT0).pid;
  CHECK(db.execute(*db.find(a_pid), statement(DbOp::set_flag), kT0).reply->ok);
  const std::int64_t b_pid = db.session_of(1, 0, kT0).pid;
  const DbReply other = *db.execute(*db.find(b_pid), statement(DbOp::set_flag), kT0).reply;
  CHECK_FALSE(other.ok);
  CHECK(other.token == 0);  // the holder it found
  Session& a2 = db.session_of(0, 1, kT0);
  CHECK_FALSE(db.execute(a2, statement(DbOp::set_flag), kT0).reply->ok);
  // Sessions ending (keepalive, crash of the server) leave data alone.
  db.end_session(a_pid, SessionEnd::keepalive, kT0);
  CHECK(db.durable().flag_holder == 0);
  CHECK(Database(db.durable()).durable().flag_holder == 0);
  db.operator_clear(kT0);
  CHECK(db.durable().flag_holder == kNoNode);
  CHECK(db.execute(*db.find(b_pid), statement(DbOp::set_flag), kT0).reply->ok);
}

TEST_CASE("postgres: operator_clear terminates the lock holder's backend") {
  Database db;
  Session& a = db.session_of(0, 0, kT0);
  const std::int64_t a_pid = a.pid;
  db.execute(a, statement(DbOp::try_advisory_lock), kT0);
  db.operator_clear(kT0);
  CHECK(db.find(a_pid) == nullptr);
  CHECK(db.advisory_holder() == 0);
  CHECK(db.sessions_ended(SessionEnd::terminated) == 1);
}

TEST_CASE("postgres: a write commits only if its session holds the lock in the same transaction") {
  Database db;
  Session& a = db.session_of(0, 0, kT0);
  const std::int64_t a_pid = a.pid;
  const Token t = db.execute(a, statement(DbOp::try_advisory_lock, 1, true), kT0).reply->token;
  DbRequest write = statement(DbOp::write, 2);
  write.token = t;
  DbOutcome ok = db.execute(*db.find(a_pid), write, kT0);
  CHECK(ok.wrote);
  CHECK(ok.accepted);
  CHECK(db.durable().highest_accepted == t);
  // The session loses the lock (the server ended it); the client's next connection writes
  // with its old token and is refused, whatever the token says.
  db.end_session(a_pid, SessionEnd::keepalive, kT0);
  Session& again = db.session_of(0, 1, kT0);
  DbOutcome refused = db.execute(again, write, kT0);
  CHECK(refused.wrote);
  CHECK_FALSE(refused.accepted);
  CHECK(refused.highest_before == t);
}

TEST_CASE("postgres: zero keepalive settings are Linux's defaults (man 7 tcp)") {
  PostgresConfig c;
  CHECK(c.keepalive_idle() == 7200s);
  CHECK(c.keepalive_interval() == 75s);
  CHECK(c.keepalive_count() == 9);
  CHECK(c.dead_client_detection() == 7875s);
  c.tcp_keepalives_idle = 5s;
  c.tcp_keepalives_interval = 1s;
  c.tcp_keepalives_count = 3;
  CHECK(c.dead_client_detection() == 8s);
}

// ---- In a world -------------------------------------------------------------------------------

namespace {

// A client that takes the advisory lock at start (node 0 first, the others 500 ms later) and
// notes every grant; node 0 then stays silent.
struct LockClient final : Protocol {
  std::vector<std::pair<NodeId, LocalTime>>* grants;
  NodeId self = kNoNode;
  explicit LockClient(std::vector<std::pair<NodeId, LocalTime>>* out) : grants(out) {}
  void on_start(Context& ctx) override {
    self = ctx.self();
    ctx.set_timer(self == 0 ? Duration(0) : Duration(500ms), 0);
  }
  void on_timer(Context& ctx, TimerId, TimerTag) override {
    DbRequest r;
    r.op = DbOp::try_advisory_lock;
    ctx.db(r);
    // Node 0 asks once; the others retry every second.
    if (self != 0) ctx.set_timer(1s, 0);
  }
  void on_db_reply(Context& ctx, const DbReply& reply) override {
    if (reply.ok) grants->emplace_back(self, ctx.now());
  }
  void on_message(Context&, NodeId, const Message&) override {}
  void on_store_reply(Context&, const StoreReply&) override {}
  void on_watch(Context&, const WatchEvent&) override {}
  void on_sink_reply(Context&, const SinkReply&) override {}
  void on_command(Context&, Command) override {}
};

struct LockWorld {
  std::vector<std::pair<NodeId, LocalTime>> grants;
  std::unique_ptr<Kernel> kernel;
  LockWorld(PostgresConfig config, std::vector<FaultSpec> faults, Duration run) {
    WorldConfig world;
    world.node_count = 2;
    world.duration = run;
    world.seed = 1;
    world.network.latency = Distribution::constant_of(1ms);
    world.faults = std::move(faults);
    Services services;
    services.postgres = config;
    world = with_services(std::move(world), services);
    kernel = std::make_unique<Kernel>(
        std::move(world), [this](NodeId) { return std::make_unique<LockClient>(&grants); });
    kernel->run();
  }
  // When node 1 got the lock (true time = its clock here), if it did.
  std::optional<LocalTime> taken_over() const {
    for (const auto& [node, at] : grants) {
      if (node == 1) return at;
    }
    return std::nullopt;
  }
};

FaultSpec fault(Duration at, FaultKind kind, Endpoint target, Duration duration = Duration(0)) {
  FaultSpec f;
  f.at = Time(at.count());
  f.kind = kind;
  f.target = Target{TargetKind::node, target, {}};
  f.duration = duration;
  return f;
}

PostgresConfig tuned() {
  PostgresConfig c;
  c.tcp_keepalives_idle = 10s;
  c.tcp_keepalives_interval = 2s;
  c.tcp_keepalives_count = 3;
  return c;
}

}  // namespace

TEST_CASE("postgres world: a dead client's lock lasts idle + count x interval of silence") {
  // Node 0 last spoke when its lock request arrived (1 ms); it crashes at 5 s and stays dead.
  const LockWorld w(tuned(), {fault(5s, FaultKind::crash, 0)}, 60s);
  REQUIRE(w.taken_over().has_value());
  // Dropped at 1 ms + 10 s + 3 x 2 s; node 1's next retry (every second from 0.5 s) gets it.
  CHECK(*w.taken_over() == LocalTime(16s + 500ms + 2ms));
}

TEST_CASE("postgres world: with Linux's defaults the lock outlives its dead client for hours") {
  const LockWorld w(PostgresConfig{}, {fault(5s, FaultKind::crash, 0)}, 7875s);
  CHECK_FALSE(w.taken_over().has_value());
  const LockWorld longer(PostgresConfig{}, {fault(5s, FaultKind::crash, 0)}, 7877s);
  REQUIRE(longer.taken_over().has_value());
  CHECK(*longer.taken_over() == LocalTime(7875s + 500ms + 2ms));
}

TEST_CASE("postgres world: a paused client's host answers probes, so its session lives") {
  const LockWorld w(tuned(), {fault(5s, FaultKind::pause, 0, 40s)}, 60s);
  CHECK_FALSE(w.taken_over().has_value());
  const Database* db = database_of(*w.kernel);
  REQUIRE(db != nullptr);
  CHECK(db->sessions_ended(SessionEnd::keepalive) == 0);
}

TEST_CASE("postgres world: a partitioned client is dropped like a dead one") {
  FaultSpec isolate = fault(5s, FaultKind::isolate, 0);
  const LockWorld w(tuned(), {isolate}, 60s);
  REQUIRE(w.taken_over().has_value());
  CHECK(*w.taken_over() == LocalTime(16s + 500ms + 2ms));
}

TEST_CASE("postgres world: a rebooted client's host resets the old connection at the first probe") {
  const LockWorld w(tuned(), {fault(5s, FaultKind::crash, 0, 1s)}, 60s);
  REQUIRE(w.taken_over().has_value());
  // The first probe leaves at 10.001 s and draws a RST: no waiting for count probes.
  CHECK(*w.taken_over() == LocalTime(10s + 500ms + 2ms));
  const Database* db = database_of(*w.kernel);
  REQUIRE(db != nullptr);
  CHECK(db->sessions_ended(SessionEnd::reset) == 1);
}

TEST_CASE("postgres world: a server crash drops every session and lock") {
  const LockWorld w(PostgresConfig{}, {fault(5s, FaultKind::crash, kPostgresEndpoint, 1s)}, 30s);
  REQUIRE(w.taken_over().has_value());
  // Node 1 retries every second from 0.5 s; the server is back at 6 s.
  CHECK(*w.taken_over() == LocalTime(6s + 500ms + 2ms));
}

TEST_CASE("postgres world: idle_in_transaction_session_timeout ends an idle row holder") {
  // A client that opens the row lock once and then says nothing.
  std::vector<std::pair<NodeId, LocalTime>> grants;
  struct RowClient final : Protocol {
    std::vector<std::pair<NodeId, LocalTime>>* grants;
    explicit RowClient(std::vector<std::pair<NodeId, LocalTime>>* out) : grants(out) {}
    void on_start(Context& ctx) override { ctx.set_timer(ctx.self() == 0 ? 0ms : 500ms, 0); }
    void on_timer(Context& ctx, TimerId, TimerTag) override {
      DbRequest r;
      r.op = DbOp::lock_row;
      ctx.db(r);
    }
    void on_db_reply(Context& ctx, const DbReply& reply) override {
      if (reply.ok) grants->emplace_back(ctx.self(), ctx.now());
    }
    void on_message(Context&, NodeId, const Message&) override {}
    void on_store_reply(Context&, const StoreReply&) override {}
    void on_watch(Context&, const WatchEvent&) override {}
    void on_sink_reply(Context&, const SinkReply&) override {}
    void on_command(Context&, Command) override {}
  };
  WorldConfig world;
  world.node_count = 2;
  world.duration = 30s;
  world.network.latency = Distribution::constant_of(1ms);
  Services services;
  services.postgres = PostgresConfig{};
  services.postgres->idle_in_transaction_session_timeout = 3s;
  world = with_services(std::move(world), services);
  Kernel kernel(std::move(world), [&](NodeId) { return std::make_unique<RowClient>(&grants); });
  kernel.run();
  // Node 0 holds from 1 ms; node 1 waits in line and is granted when node 0's session is ended
  // at 3.001 s, and is itself ended 3 s later: nobody is left waiting.
  REQUIRE(grants.size() == 2);
  CHECK(grants[1].first == 1);
  CHECK(grants[1].second == LocalTime(3s + 2ms));
  const Database* db = database_of(kernel);
  REQUIRE(db != nullptr);
  CHECK(db->sessions_ended(SessionEnd::idle_in_transaction) == 2);
  CHECK(db->row_holder() == 0);
}
