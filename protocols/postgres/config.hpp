// Parameters of the postgres protocol: leader election by a lock in one PostgreSQL server. The
// table drives validation, `electsim list` and the docs. PostgreSQL's own settings (keepalives,
// idle_in_transaction_session_timeout) are the server's, in the scenario's `postgres` section
// (servers/postgres/database.hpp); these are the client application's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/workload.hpp"
#include "sim/time.hpp"

namespace electsim::protocols::postgres {

// Which lock the leader holds.
enum class LockMode : std::uint8_t {
  advisory,     // SELECT pg_try_advisory_lock(k): a session-level advisory lock
  row,          // BEGIN; SELECT ... FOR UPDATE: a row lock held by an open transaction; the
                // followers' statements wait in the lock's queue
  skip_locked,  // BEGIN; SELECT ... FOR UPDATE SKIP LOCKED: the same row lock, followers retry
};

// What protects the data from a deposed leader.
enum class Fencing : std::uint8_t {
  none,              // nothing: the sink accepts every write
  txid,              // the token is txid_current() of the acquiring transaction; the sink fences
  epoch_row,         // the token is the leader row's epoch, bumped when the lock is taken
  same_transaction,  // the database is the sink: each write commits only if, in its own
                     // transaction, the writer's session still holds the lock
};

struct PostgresProtocolConfig {
  LockMode lock = LockMode::advisory;
  Fencing fencing = Fencing::same_transaction;
  sim::Duration retry_interval = std::chrono::seconds(1);
  sim::Duration check_interval = std::chrono::seconds(1);
  WorkloadConfig workload;  // the cluster's, copied in by the registry
};

std::span<const params::ParamSpec> postgres_params();
const char* lock_mode_name(LockMode mode);
const char* fencing_name(Fencing fencing);

std::optional<PostgresProtocolConfig> read_config(const nlohmann::json& params,
                                                  const std::string& pointer,
                                                  params::Problems& problems);

}  // namespace electsim::protocols::postgres
