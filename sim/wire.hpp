// What travels on the simulated network besides the small peer messages of sim/message.hpp: the
// requests and replies of the built-in servers (the store's etcd-like API of sim/store_types.hpp,
// the sink's fenced writes, the database's statements, the Redis masters' commands), each carried
// in a Payload (sim/payload.hpp). A new kind of server defines its own in its own folder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/ids.hpp"
#include "sim/inline_vector.hpp"
#include "sim/message.hpp"
#include "sim/payload.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

// A write to the sink with a fencing token (Kleppmann, "How to do distributed locking", 2016).
// Each election group protects its own resource (a service's table): the sink fences each
// resource by its own tokens.
struct SinkWrite {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
  std::uint32_t resource = 0;  // the writer's election group
};

struct SinkReply {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
  bool accepted = false;
  Token highest_accepted = 0;  // after this write
};

// An entry's command in a replicated store's log (etcd's InternalRaftRequest): what to apply,
// and for a client's request, who asked and which member took it, so that member answers once it
// has applied the entry (etcd's wait registry).
struct StoreCommand {
  enum class Kind : std::uint8_t {
    request,       // a client's request
    lease_expiry,  // the leader's lessor revokes a lease whose TTL ran out (etcd LeaseRevoke)
    lock_delayed,  // a lock acquire the leader refused: a key was under lock-delay on its clock
    // The leader's lessor records a lease's remaining TTL (request.ttl; 0 clears it) on every
    // member (etcd's LeaseCheckpoint, with --experimental-enable-lease-checkpoint).
    checkpoint,
  };
  Kind kind = Kind::request;
  StoreRequest request;
  Endpoint client = kNoNode;
  std::uint32_t client_incarnation = 0;
  Endpoint member = kNoNode;  // the member that took the request and answers it
};

// The command is shared, never changed once proposed: the leader's log, the messages that carry
// it and the followers' logs hold the same bytes, as a real WAL entry is copied but never edited.
// Null for a new leader's empty entry.
struct LogEntry {
  Epoch term = 0;
  std::shared_ptr<const StoreCommand> command;
};

// Raft traffic between a replicated store's members: a Raft message (raft/messages.hpp) and,
// for an AppendEntries, the entries it carries.
struct ReplicaMessage {
  Message header;
  // Inline up to four: a leader in steady state sends each new entry at once, so an append
  // carries one or two, and a store at capacity sends tens of thousands a second.
  using Entries = InlineVector<LogEntry, 4>;
  Entries entries;
  // The leader's heartbeat round, echoed by the follower's response: what confirms a read
  // (etcd-io/raft's ReadIndex sends its heartbeat with a context the same way).
  std::int64_t round = 0;
};

// A request a member without the lead passes to its leader (etcd-io/raft's MsgProp).
struct ForwardedProposal {
  StoreCommand command;
};

// A statement on a client's session with the database server (servers/postgres). Each names
// the SQL it stands for; the session is the client's connection, so a crashed client's session
// lingers on the server until the server notices the connection is gone.
enum class DbOp : std::uint8_t {
  try_advisory_lock,     // SELECT pg_try_advisory_lock(k) (and the token: txid_current() or the
                         // epoch row bumped, in the same round trip)
  advisory_unlock,       // SELECT pg_advisory_unlock(k)
  lock_row,              // BEGIN; SELECT ... FROM leader FOR UPDATE: waits while another holds it
  lock_row_skip_locked,  // BEGIN; SELECT ... FROM leader FOR UPDATE SKIP LOCKED: no row if held
  end_transaction,       // ROLLBACK: ends the transaction, releasing its row lock
  check,                 // SELECT 1 (inside the open transaction, if any): the session lives
  set_flag,              // UPDATE leader SET holder = $me WHERE holder IS NULL
  clear_flag,            // UPDATE leader SET holder = NULL WHERE holder = $me
  write,  // the protected write, in one transaction with its fencing check (the database as sink)
};
inline constexpr int kDbOpCount = 9;
const char* db_op_name(DbOp op);         // for the trace (server_request)
std::vector<std::string> db_op_names();  // every one, in the enum's order

struct DbRequest {
  RequestId id = 0;
  DbOp op = DbOp::check;
  Token token = 0;           // write: the writer's token
  std::int64_t payload = 0;  // write
  // Acquisitions: the token is the `leader` row's epoch bumped in the same transaction;
  // otherwise txid_current() of the acquiring transaction.
  bool bump_epoch = false;
};

struct DbReply {
  RequestId id = 0;
  DbOp op = DbOp::check;
  // try_advisory_lock, lock_row*: the lock is this session's; set_flag: one row updated;
  // check: the session holds the lock (or the flag); write: accepted.
  bool ok = false;
  // An acquisition's fencing token: txid_current() or the bumped epoch; write: the token written.
  Token token = 0;
  Token highest_accepted = 0;  // write: the highest token the database accepted, after it
};

// A TCP keepalive probe from a server to a client's connection, and the client's host's answer.
// The host's kernel answers, not the process: a paused process's connection still answers, a
// crashed host's does not, and a restarted host resets a connection it no longer knows.
struct TcpProbe {
  std::int64_t connection = 0;  // the server's name for the connection (a backend pid)
};
struct TcpProbeAck {
  std::int64_t connection = 0;
  bool reset = false;  // RST: the host no longer knows the connection
};

// A command to one Redis master (servers/redis) on the lock's key or the fencing counter's
// ("Distributed Locks with Redis", redis.io/docs/manual/patterns/distributed-locks; redsync's
// scripts, github.com/go-redsync/redsync mutex.go).
enum class RedisOp : std::uint8_t {
  set_nx_px,  // SET lock <value> NX PX <ttl>: OK only if the key does not exist
  release,    // if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1])
  extend,     // if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", ...)
  incr,       // INCR fence: the optional fencing counter
};
inline constexpr int kRedisOpCount = 4;
const char* redis_op_name(RedisOp op);      // for the trace (server_request)
std::vector<std::string> redis_op_names();  // every one, in the enum's order

struct RedisRequest {
  RequestId id = 0;
  RedisOp op = RedisOp::set_nx_px;
  std::int64_t value = 0;  // the lock's random value (redsync's genValueFunc)
  Duration ttl{0};         // PX and PEXPIRE, in the master's milliseconds
};

struct RedisReply {
  RequestId id = 0;
  RedisOp op = RedisOp::set_nx_px;
  std::int32_t master = 0;  // which master answers (0 to N-1)
  bool ok = false;          // SET answered OK; a script returned 1; INCR always
  std::int64_t value = 0;   // incr: the counter after it
};

}  // namespace electsim::sim
