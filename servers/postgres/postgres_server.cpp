// The database server's process: see servers/postgres/postgres_server.hpp.
#include "servers/postgres/postgres_server.hpp"

#include <algorithm>
#include <utility>

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::servers {

void PostgresServer::on_start(sim::ProcessContext& ctx) {
  // Committed rows and the xid counter come back from the WAL; sessions and locks do not.
  const sim::DurableState& d = ctx.durable();
  Database::Durable durable;
  durable.flag_holder = static_cast<NodeId>(d.get("leader.holder", kNoNode));
  durable.epoch = d.get("leader.epoch");
  durable.last_xid = d.get("last_xid");
  durable.highest_accepted = d.get("data.highest_token");
  durable.any_accepted = d.get("data.written") != 0;
  db_ = Database(durable);
}

LocalTime PostgresServer::clock(const sim::ProcessContext& ctx) {
  // The server's timers read the monotonic clock: Linux's TCP keepalive timer counts jiffies
  // (net/ipv4/tcp_timer.c, tcp_keepalive_timer), so a wall-clock step neither fires nor holds it.
  // Simplified: PostgreSQL's idle_in_transaction_session_timeout arms setitimer for the time left
  // and, when the alarm rings, compares GetCurrentTimestamp (the wall clock) with the timeout's end
  // (utils/misc/timeout.c, handle_sig_alarm). A forward step so changes nothing, as here; a step
  // back holds a real timeout by the step, where here it does not.
  return ctx.monotonic_now();
}

void PostgresServer::on_message(sim::ProcessContext& /*ctx*/, sim::Endpoint /*from*/,
                                const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "the database speaks only its statement payloads");
}

void PostgresServer::on_payload(sim::ProcessContext& ctx, sim::Endpoint from,
                                std::uint32_t from_incarnation, sim::Payload&& payload) {
  if (const auto* ack = payload.get_if<TcpProbeAck>()) {
    Session* s = db_.find(ack->connection);
    if (s == nullptr || s->client != from) return;  // a session already ended
    if (ack->reset) {
      deliver(ctx, db_.end_session(s->pid, SessionEnd::reset, clock(ctx)));
    } else {
      s->last_heard = clock(ctx);
      s->probes_unanswered = 0;
    }
    persist(ctx);
    schedule(ctx);
    return;
  }
  const auto* request = payload.get_if<DbRequest>();
  ELECTSIM_ASSERT(request != nullptr, "the database receives statements and probe answers");
  ELECTSIM_ASSERT(from >= 0, "database clients are election nodes");
  Session& session = db_.session_of(from, from_incarnation, clock(ctx));
  const DbOutcome outcome = db_.execute(session, *request, clock(ctx));
  if (outcome.wrote && ctx.traced()) {
    // The database is the sink here: its decisions are the sink's events, for the same checkers.
    ctx.trace(sim::events::sink_write(from, request->token, request->payload, outcome.accepted,
                                      outcome.highest_before));
  }
  if (outcome.reply) ctx.reply(from, from_incarnation, sim::Payload(*outcome.reply));
  deliver(ctx, outcome);  // a row passed on (none for statements other than ROLLBACK)
  persist(ctx);
  schedule(ctx);
}

void PostgresServer::deliver(sim::ProcessContext& ctx, const DbOutcome& outcome) {
  if (!outcome.granted) return;
  const Session* s = db_.find(outcome.granted_pid);
  ELECTSIM_ASSERT(s != nullptr, "a granted row goes to a live session");
  ctx.reply(s->client, s->incarnation, sim::Payload(*outcome.granted));
}

void PostgresServer::on_command(sim::ProcessContext& ctx, sim::Command command) {
  if (command != sim::Command::operator_clear) return;
  deliver(ctx, db_.operator_clear(clock(ctx)));
  persist(ctx);
  schedule(ctx);
}

LocalTime PostgresServer::deadline_of(const Session& s) const {
  LocalTime due = s.probes_unanswered == 0 ? s.last_heard + config_.keepalive_idle()
                                           : s.last_probe + config_.keepalive_interval();
  const Duration idle = config_.idle_in_transaction_session_timeout;
  if (idle.count() > 0 && s.in_transaction && !s.waiting) due = std::min(due, s.idle_since + idle);
  return due;
}

void PostgresServer::on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag /*tag*/) {
  if (id == timer_) timer_ = sim::kNoTimer;
  const LocalTime now = clock(ctx);
  const Duration idle = config_.idle_in_transaction_session_timeout;
  due_.clear();
  for (Session& s : db_.sessions()) {
    if (deadline_of(s) > now) continue;
    if (idle.count() > 0 && s.in_transaction && !s.waiting && s.idle_since + idle <= now) {
      due_.emplace_back(s.pid, SessionEnd::idle_in_transaction);
      continue;
    }
    // Linux tcp_keepalive_timer: after the idle time a probe, then one every interval; when
    // count probes are unanswered at the next interval, the connection is dead.
    if (s.probes_unanswered >= config_.keepalive_count()) {
      due_.emplace_back(s.pid, SessionEnd::keepalive);
      continue;
    }
    ++s.probes_unanswered;
    s.last_probe = now;
    ctx.reply(s.client, s.incarnation, sim::Payload(TcpProbe{s.pid}));
  }
  for (const auto& [pid, why] : due_) deliver(ctx, db_.end_session(pid, why, now));
  persist(ctx);
  schedule(ctx);
}

void PostgresServer::persist(sim::ProcessContext& ctx) {
  // Setting an unchanged value writes nothing (sim/protocol.hpp, DurableState::set).
  sim::DurableState& d = ctx.durable();
  const Database::Durable& v = db_.durable();
  d.set("leader.holder", v.flag_holder);
  d.set("leader.epoch", v.epoch);
  d.set("last_xid", v.last_xid);
  d.set("data.highest_token", v.highest_accepted);
  d.set("data.written", v.any_accepted ? 1 : 0);
}

void PostgresServer::schedule(sim::ProcessContext& ctx) {
  if (db_.sessions().empty()) return;
  LocalTime earliest = deadline_of(db_.sessions().front());
  for (const Session& s : db_.sessions()) earliest = std::min(earliest, deadline_of(s));
  const LocalTime now = clock(ctx);
  const Duration wait = earliest > now ? earliest - now : Duration(0);
  if (ctx.timer_fires_by(timer_, wait)) return;
  timer_ = ctx.set_timer(wait, kDeadline);
}

}  // namespace electsim::servers
