// The database server's state: see servers/postgres/database.hpp.
#include "servers/postgres/database.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace electsim::servers {

Session& Database::session_of(Endpoint client, std::uint32_t incarnation, LocalTime now) {
  for (Session& s : sessions_) {
    if (s.client == client && s.incarnation == incarnation) return s;
  }
  // max_connections (default 100) would refuse beyond; electsim's clients open one each, so the
  // bound only guards against a runaway.
  ELECTSIM_ASSERT(sessions_.size() < kMaxSessions, "sessions stay bounded");
  Session s;
  s.pid = next_pid_++;
  s.client = client;
  s.incarnation = incarnation;
  s.last_heard = now;
  sessions_.push_back(s);  // pids grow, so the vector stays in pid order
  return sessions_.back();
}

Session* Database::find(std::int64_t pid) {
  for (Session& s : sessions_) {
    if (s.pid == pid) return &s;
  }
  return nullptr;
}

Token Database::acquire_token(bool bump_epoch) {
  // Either UPDATE leader SET epoch = epoch + 1 RETURNING epoch, or txid_current(): both are
  // handed out by a transaction, so both consume a transaction id.
  ++durable_.last_xid;
  if (bump_epoch) return ++durable_.epoch;
  return durable_.last_xid;
}

DbOutcome Database::execute(Session& session, const DbRequest& request, LocalTime now) {
  DbOutcome out;
  DbReply reply;
  reply.id = request.id;
  reply.op = request.op;
  const std::int64_t pid = session.pid;
  session.last_heard = now;
  session.probes_unanswered = 0;
  const bool bump_epoch = request.bump_epoch;
  session.bump_epoch = bump_epoch;
  switch (request.op) {
    case DbOp::try_advisory_lock:
      // 13.3.5: a session-level advisory lock is held until explicitly released or the session
      // ends; pg_try_advisory_lock returns false at once if another session holds it, and
      // succeeds again for the session that holds it (the lock is reentrant).
      if (advisory_holder_ == 0 || advisory_holder_ == pid) {
        advisory_holder_ = pid;
        reply.ok = true;
        reply.token = acquire_token(bump_epoch);
      }
      break;
    case DbOp::advisory_unlock:
      reply.ok = advisory_holder_ == pid;
      if (reply.ok) advisory_holder_ = 0;
      break;
    case DbOp::lock_row:
    case DbOp::lock_row_skip_locked:
      session.in_transaction = true;
      if (row_holder_ == 0 || row_holder_ == pid) {
        row_holder_ = pid;
        reply.ok = true;
        reply.token = acquire_token(bump_epoch);
      } else if (request.op == DbOp::lock_row) {
        // 13.3.2: FOR UPDATE waits for the holding transaction to end (lock_timeout 0: forever).
        if (!session.waiting) {
          session.waiting = true;
          row_waiters_.push_back(pid);
        }
        session.waiting_request = request.id;  // a re-sent statement keeps its place
        out.reply.reset();
        return out;
      } else {
        // SKIP LOCKED: the locked row is skipped, the result is empty. The client ends its empty
        // transaction in the same round trip (a simplification: one message, not two).
        session.in_transaction = false;
      }
      session.idle_since = now;
      break;
    case DbOp::end_transaction:
      session.in_transaction = false;
      reply.ok = row_holder_ == pid;
      release_row_of(pid, out, now);
      break;
    case DbOp::check:
      reply.ok = advisory_holder_ == pid || row_holder_ == pid ||
                 (durable_.flag_holder != kNoNode && durable_.flag_holder == session.client);
      if (session.in_transaction) session.idle_since = now;
      break;
    case DbOp::set_flag:
      // UPDATE leader SET holder = $me WHERE holder IS NULL: one row only while it is NULL, even
      // when the holder is this very client's earlier life.
      ++durable_.last_xid;
      if (durable_.flag_holder == kNoNode) {
        durable_.flag_holder = static_cast<NodeId>(session.client);
        reply.ok = true;
      }
      reply.token = durable_.flag_holder;
      break;
    case DbOp::clear_flag:
      ++durable_.last_xid;
      reply.ok = durable_.flag_holder == static_cast<NodeId>(session.client);
      if (reply.ok) durable_.flag_holder = kNoNode;
      break;
    case DbOp::write: {
      // One transaction: the fencing check and the write commit together or not at all. The
      // check is that this session holds the leader's lock now (pg_locks for the advisory lock;
      // for the row lock the write runs inside the transaction that holds it), so a session the
      // server has ended cannot write, whatever token its client still believes in.
      ++durable_.last_xid;
      const bool holds = advisory_holder_ == pid || row_holder_ == pid;
      out.wrote = true;
      out.highest_before = durable_.highest_accepted;
      out.accepted = holds;
      if (holds) {
        durable_.highest_accepted = durable_.any_accepted
                                        ? std::max(durable_.highest_accepted, request.token)
                                        : request.token;
        durable_.any_accepted = true;
      }
      reply.ok = holds;
      reply.token = request.token;
      reply.highest_accepted = durable_.highest_accepted;
      if (session.in_transaction) session.idle_since = now;
      break;
    }
  }
  out.reply = reply;
  return out;
}

void Database::release_row_of(std::int64_t pid, DbOutcome& out, LocalTime now) {
  row_waiters_.erase(std::remove(row_waiters_.begin(), row_waiters_.end(), pid),
                     row_waiters_.end());
  if (row_holder_ != pid) return;
  row_holder_ = 0;
  grant_row(out, now);
}

void Database::grant_row(DbOutcome& out, LocalTime now) {
  while (row_holder_ == 0 && !row_waiters_.empty()) {
    const std::int64_t next = row_waiters_.front();
    row_waiters_.pop_front();
    Session* s = find(next);
    if (s == nullptr || !s->waiting) continue;
    s->waiting = false;
    s->idle_since = now;  // its statement finished: idle in transaction from here
    row_holder_ = next;
    DbReply reply;
    reply.id = s->waiting_request;
    reply.op = DbOp::lock_row;
    reply.ok = true;
    reply.token = acquire_token(s->bump_epoch);
    out.granted = reply;
    out.granted_pid = next;
  }
}

DbOutcome Database::end_session(std::int64_t pid, SessionEnd why, LocalTime now) {
  DbOutcome out;
  const auto it = std::find_if(sessions_.begin(), sessions_.end(),
                               [&](const Session& s) { return s.pid == pid; });
  if (it == sessions_.end()) return out;
  ++ended_[static_cast<std::size_t>(why)];
  // A backend that exits releases its session-level advisory locks and aborts its transaction,
  // which releases its row locks. The flag row is data: it stays.
  if (advisory_holder_ == pid) advisory_holder_ = 0;
  sessions_.erase(it);
  release_row_of(pid, out, now);
  return out;
}

DbOutcome Database::operator_clear(LocalTime now) {
  ++durable_.last_xid;
  durable_.flag_holder = kNoNode;
  DbOutcome out;
  for (std::int64_t holder : {advisory_holder_, row_holder_}) {
    if (holder == 0) continue;
    DbOutcome ended = end_session(holder, SessionEnd::terminated, now);
    if (ended.granted) {
      out.granted = ended.granted;
      out.granted_pid = ended.granted_pid;
    }
  }
  return out;
}

}  // namespace electsim::servers
