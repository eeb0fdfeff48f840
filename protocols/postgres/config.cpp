// Parameters of the postgres protocol (protocols/postgres/config.hpp). PostgreSQL has no leader
// election of its own, so the intervals are the application's: a follower retries the lock every
// retry_interval, and the holder runs a health-check query every check_interval. The defaults
// (1 s each) are electsim's choice, of the order libraries such as pglock or Patroni's loop use;
// the server-side settings that decide how long a dead holder's lock lingers are PostgreSQL's and
// live in the scenario's `postgres` section (docs/protocols/postgres.md cites each).
#include "protocols/postgres/config.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

namespace electsim::protocols::postgres {
namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> table = {
      {"lock",
       ParamType::choice,
       "advisory",
       "",
       "advisory: a session-level pg_try_advisory_lock; row: SELECT ... FOR UPDATE in an open "
       "transaction (followers wait in the lock queue); skip_locked: FOR UPDATE SKIP LOCKED "
       "(followers retry)",
       {"advisory", "row", "skip_locked"},
       false},
      {"fencing",
       ParamType::choice,
       "same_transaction",
       "",
       "none; txid: the token is txid_current() and the sink fences; epoch_row: the token is an "
       "epoch row bumped when the lock is taken and the sink fences; same_transaction: the "
       "database is the sink and each write checks, in its own transaction, that its session "
       "still holds the lock",
       {"none", "txid", "epoch_row", "same_transaction"},
       false},
      {"retry_interval",
       ParamType::duration,
       "1s",
       "duration",
       "followers try the lock this often (row mode: re-send the waiting statement)",
       {},
       false},
      {"check_interval",
       ParamType::duration,
       "retry_interval",
       "duration",
       "the holder runs SELECT 1 on its session this often, and stops believing it leads when "
       "the previous one is still unanswered or the lock is no longer its session's",
       {},
       false},
  };
  return table;
}

}  // namespace

std::span<const ParamSpec> postgres_params() {
  return specs();
}

const char* lock_mode_name(LockMode mode) {
  switch (mode) {
    case LockMode::advisory:
      return "advisory";
    case LockMode::row:
      return "row";
    case LockMode::skip_locked:
      return "skip_locked";
  }
  return "?";
}

const char* fencing_name(Fencing fencing) {
  switch (fencing) {
    case Fencing::none:
      return "none";
    case Fencing::txid:
      return "txid";
    case Fencing::epoch_row:
      return "epoch_row";
    case Fencing::same_transaction:
      return "same_transaction";
  }
  return "?";
}

std::optional<PostgresProtocolConfig> read_config(const nlohmann::json& params,
                                                  const std::string& pointer, Problems& problems) {
  const std::size_t before = problems.size();
  ParamReader reader(params, pointer, specs(), problems);
  PostgresProtocolConfig c;
  const std::string lock = reader.choice("lock");
  c.lock = lock == "row"           ? LockMode::row
           : lock == "skip_locked" ? LockMode::skip_locked
                                   : LockMode::advisory;
  const std::string fencing = reader.choice("fencing");
  c.fencing = fencing == "none"        ? Fencing::none
              : fencing == "txid"      ? Fencing::txid
              : fencing == "epoch_row" ? Fencing::epoch_row
                                       : Fencing::same_transaction;
  if (auto retry = reader.timer_opt("retry_interval")) c.retry_interval = *retry;
  c.check_interval = c.retry_interval;
  if (auto check = reader.timer_opt("check_interval")) c.check_interval = *check;
  if (problems.size() != before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::postgres
