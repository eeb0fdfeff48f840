// The database server's state: PostgreSQL's sessions, a session-level advisory lock, a row lock
// held by an open transaction (with the queue of transactions waiting for it), the `leader` row
// (a flag column `holder` and an `epoch` column), the transaction id counter, and the protected
// data written with a fencing check in the same transaction. A pure state machine: the process
// around it (servers/postgres/postgres_server.hpp) owns the network, the timers and the clock.
// Behaviour follows the PostgreSQL 16 documentation: "Advisory Locks" (13.3.5), "Row-Level Locks"
// (13.3.2), SELECT's "The Locking Clause" (NOWAIT / SKIP LOCKED), and "Client Connection
// Defaults" for idle_in_transaction_session_timeout.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/ids.hpp"
#include "sim/time.hpp"
#include "sim/wire.hpp"

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types

// The server's settings (postgresql.conf), with PostgreSQL's names. Zero keepalive settings mean
// "the operating system's default", as in PostgreSQL ("Connections and Authentication", "Connection
// Settings": tcp_keepalives_idle, tcp_keepalives_interval, tcp_keepalives_count; "A value of 0 (the
// default) selects the operating system's default"); electsim's operating system is Linux, whose
// defaults are tcp_keepalive_time 7200 s, tcp_keepalive_intvl 75 s and tcp_keepalive_probes 9 (man
// 7 tcp).
struct PostgresConfig {
  Duration tcp_keepalives_idle{0};
  Duration tcp_keepalives_interval{0};
  std::int64_t tcp_keepalives_count = 0;
  // "Client Connection Defaults", "Statement Behavior": a session whose open transaction has
  // waited this long for the client's next statement is terminated; 0 (the default) disables it.
  Duration idle_in_transaction_session_timeout{0};

  static constexpr Duration kLinuxKeepaliveTime = std::chrono::seconds(7200);
  static constexpr Duration kLinuxKeepaliveIntvl = std::chrono::seconds(75);
  static constexpr std::int64_t kLinuxKeepaliveProbes = 9;
  Duration keepalive_idle() const {
    return tcp_keepalives_idle.count() == 0 ? kLinuxKeepaliveTime : tcp_keepalives_idle;
  }
  Duration keepalive_interval() const {
    return tcp_keepalives_interval.count() == 0 ? kLinuxKeepaliveIntvl : tcp_keepalives_interval;
  }
  std::int64_t keepalive_count() const {
    return tcp_keepalives_count == 0 ? kLinuxKeepaliveProbes : tcp_keepalives_count;
  }
  // How long a silent client's session outlives its client: idle, then count unanswered probes.
  Duration dead_client_detection() const {
    return keepalive_idle() + keepalive_interval() * keepalive_count();
  }
};

// Why a session ended.
enum class SessionEnd : std::uint8_t {
  keepalive,            // count keepalive probes went unanswered
  reset,                // the client's host answered a probe with RST (it restarted)
  idle_in_transaction,  // idle_in_transaction_session_timeout
  terminated,           // pg_terminate_backend (the operator_clear fault)
};

// One client connection and its backend.
struct Session {
  std::int64_t pid = 0;  // the backend's process id: the connection's name
  Endpoint client = kNoNode;
  std::uint32_t incarnation = 0;  // the client's life that opened it
  LocalTime last_heard;  // the last segment from the client (keepalive idle counts from it)
  std::int64_t probes_unanswered = 0;
  LocalTime last_probe;  // when the newest unanswered probe left
  bool in_transaction = false;
  LocalTime idle_since;  // in a transaction: when its last statement finished
  // Blocked in SELECT ... FOR UPDATE behind the row's holder: the request to answer when granted.
  bool waiting = false;
  RequestId waiting_request = 0;
  bool bump_epoch = false;  // its acquisitions' token: the epoch row bumped (else txid_current())
};

// A statement's outcome: the reply to send now (none while the statement waits for the row),
// and, when a row lock passed to a waiting session, that session's reply too.
struct DbOutcome {
  std::optional<DbReply> reply;
  std::optional<DbReply> granted;  // to the session granted_pid
  std::int64_t granted_pid = 0;
  // A write in one transaction with its fencing check (fencing same_transaction).
  bool wrote = false;
  bool accepted = false;
  Token highest_before = 0;
};

class Database {
 public:
  // What survives a crash of the server: committed rows and the transaction id counter (WAL).
  struct Durable {
    NodeId flag_holder = kNoNode;  // leader.holder; kNoNode is NULL
    Epoch epoch = 0;               // leader.epoch
    std::int64_t last_xid = 0;     // the newest transaction id handed out
    Token highest_accepted = 0;    // the protected data's newest token
    bool any_accepted = false;
  };

  Database() = default;
  explicit Database(Durable durable) : durable_(durable) {}

  // The session of (client, incarnation), opened on its first statement.
  Session& session_of(Endpoint client, std::uint32_t incarnation, LocalTime now);
  Session* find(std::int64_t pid);
  const std::vector<Session>& sessions() const { return sessions_; }
  std::vector<Session>& sessions() { return sessions_; }

  // Runs one statement of `session`'s client.
  DbOutcome execute(Session& session, const DbRequest& request, LocalTime now);
  // Ends a session: its advisory lock and its transaction's row lock are released (a waiting
  // session may be granted the row, reported in the outcome).
  DbOutcome end_session(std::int64_t pid, SessionEnd why, LocalTime now);
  // The operator_clear fault: UPDATE leader SET holder = NULL, and pg_terminate_backend() of the
  // lock holder's backend.
  DbOutcome operator_clear(LocalTime now);

  const Durable& durable() const { return durable_; }
  std::int64_t advisory_holder() const { return advisory_holder_; }  // pid, 0: free
  std::int64_t row_holder() const { return row_holder_; }            // pid, 0: free
  std::size_t row_waiters() const { return row_waiters_.size(); }
  std::uint64_t sessions_ended(SessionEnd why) const {
    return ended_[static_cast<std::size_t>(why)];
  }

  static constexpr std::size_t kMaxSessions = 4096;

 private:
  Token acquire_token(bool bump_epoch);
  // Passes the row to the first live waiter, if any.
  void grant_row(DbOutcome& out, LocalTime now);
  void release_row_of(std::int64_t pid, DbOutcome& out, LocalTime now);

  Durable durable_;
  std::vector<Session> sessions_;  // in pid order
  std::int64_t next_pid_ = 1000;
  std::int64_t advisory_holder_ = 0;
  std::int64_t row_holder_ = 0;
  std::deque<std::int64_t> row_waiters_;  // pids, first come first served
  std::uint64_t ended_[4] = {};
};

}  // namespace electsim::servers
