// Parameters of the postgres protocol (protocols/postgres/config.hpp). PostgreSQL has no leader
// election of its own, so the intervals are the application's: a follower retries the lock every
// retry_interval, and the holder runs a health-check query every check_interval. The defaults
// (1 s each) are electsim's choice, of the order libraries such as pglock or Patroni's loop use;
// the server-side settings that decide how long a dead holder's lock lingers are PostgreSQL's and
// live in the scenario's `postgres` section (docs/protocols/postgres.md cites each).
#include "protocols/postgres/config.hpp"

#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace electsim::protocols::postgres {
namespace {

constexpr const char* kLockNames[] = {"advisory", "row", "skip_locked"};  // LockMode's order
constexpr const char* kFencingNames[] = {"none", "txid", "epoch_row", "same_transaction"};

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const PostgresProtocolConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "lock",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kLockNames, d.lock),
         .meaning = "advisory: a session-level pg_try_advisory_lock; row: SELECT ... FOR UPDATE "
                    "in an open transaction (followers wait in the lock queue); skip_locked: FOR "
                    "UPDATE SKIP LOCKED (followers retry)",
         .choices = params::choice_names(kLockNames)},
        {.name = "fencing",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kFencingNames, d.fencing),
         .meaning = "none; txid: the token is txid_current() and the sink fences; epoch_row: the "
                    "token is an epoch row bumped when the lock is taken and the sink fences; "
                    "same_transaction: the database is the sink and each write checks, in its "
                    "own transaction, that its session still holds the lock",
         .choices = params::choice_names(kFencingNames)},
        {.name = "retry_interval",
         .default_value = d.retry_interval,
         .min = params::kShortestTimer,
         .meaning = "followers try the lock this often (row mode: re-send the waiting statement)"},
        {.name = "check_interval",
         .default_note = "retry_interval",
         .min = params::kShortestTimer,
         .meaning = "the holder runs SELECT 1 on its session this often, and stops believing it "
                    "leads when the previous one is still unanswered or the lock is no longer "
                    "its session's"},
    };
  }();
  return table;
}

}  // namespace

std::span<const params::ParamSpec> postgres_params() {
  return specs();
}

const char* lock_mode_name(LockMode mode) {
  return kLockNames[static_cast<std::size_t>(mode)];
}

const char* fencing_name(Fencing fencing) {
  return kFencingNames[static_cast<std::size_t>(fencing)];
}

std::optional<PostgresProtocolConfig> read_config(const nlohmann::json& params,
                                                  const std::string& pointer,
                                                  params::Problems& problems) {
  const std::size_t before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  PostgresProtocolConfig c;
  c.lock = static_cast<LockMode>(reader.choice_index("lock"));
  c.fencing = static_cast<Fencing>(reader.choice_index("fencing"));
  if (auto retry = reader.timer("retry_interval")) c.retry_interval = *retry;
  c.check_interval = c.retry_interval;
  if (auto check = reader.timer_opt("check_interval")) c.check_interval = *check;
  if (problems.size() != before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::postgres
