// The database server as a kind of server (servers/registry.hpp), in worlds whose protocol or
// scenario asks for it.
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <string>

#include "params/section.hpp"
#include "servers/postgres/postgres_server.hpp"
#include "servers/registry.hpp"

namespace electsim::servers {

namespace {

// A process like the nodes (any process fault), whose flag row and locks a person may clear.
const ServerForm kDatabase{"the database",
                           {true, sim::ServerLane::process,
                            sim::kProcessFaults | sim::fault_bit(sim::FaultKind::operator_clear),
                            true, sim::db_op_names()}};

using nlohmann::json;
using params::add_problem;
using params::as_unsigned;
using params::check_object;
using params::child_pointer;
using params::json_excerpt;
using params::member;
using params::read_duration;

// The database server's settings, with PostgreSQL's names and defaults (PostgreSQL 16
// documentation, "Connection Settings": tcp_keepalives_idle, tcp_keepalives_interval,
// tcp_keepalives_count, in whole seconds (a count), 0 selecting the operating system's default;
// "Statement Behavior": idle_in_transaction_session_timeout in milliseconds, 0 disabling it). The
// upper bounds are Linux's (man 7 tcp: TCP_KEEPIDLE and TCP_KEEPINTVL at most 32767 s, TCP_KEEPCNT
// at most 127) and PostgreSQL's (an int of milliseconds).
void read_postgres_section(const nlohmann::json& v, const SectionContext&,
                           params::Problems& problems, Services& services) {
  PostgresConfig config;
  if (!check_object(v, "/postgres",
                    {"tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count",
                     "idle_in_transaction_session_timeout"},
                    "the postgres section", problems)) {
    return;
  }
  const std::size_t before = problems.size();
  constexpr std::int64_t kMaxKeepaliveSeconds = 32767;
  const auto seconds = [&](const char* key, sim::Duration& out) {
    const json* value = member(v, key);
    if (value == nullptr) return;
    const std::string pointer = child_pointer("/postgres", key);
    const std::size_t problems_before = problems.size();
    const auto d = read_duration(*value, pointer, problems);
    if (problems.size() != problems_before || !d) return;
    if (d->count() % 1'000'000'000 != 0 || *d > std::chrono::seconds(kMaxKeepaliveSeconds)) {
      add_problem(problems, pointer,
                  fmt::format("a whole number of seconds from \"0s\" (the system default) to "
                              "\"{}s\" (Linux's limit)",
                              kMaxKeepaliveSeconds),
                  json_excerpt(*value));
      return;
    }
    out = *d;
  };
  seconds("tcp_keepalives_idle", config.tcp_keepalives_idle);
  seconds("tcp_keepalives_interval", config.tcp_keepalives_interval);
  if (const json* count = member(v, "tcp_keepalives_count")) {
    const auto n = as_unsigned(*count);
    if (!n || *n > 127) {
      add_problem(problems, "/postgres/tcp_keepalives_count",
                  "a whole number of probes from 0 (the system default) to 127 (Linux's limit)",
                  json_excerpt(*count));
    } else {
      config.tcp_keepalives_count = static_cast<std::int64_t>(*n);
    }
  }
  if (const json* idle = member(v, "idle_in_transaction_session_timeout")) {
    const std::string pointer = "/postgres/idle_in_transaction_session_timeout";
    const std::size_t problems_before = problems.size();
    const auto d = read_duration(*idle, pointer, problems);
    if (problems.size() == problems_before && d) {
      constexpr std::int64_t kMaxMs = 2147483647;  // PostgreSQL's int of milliseconds
      if (d->count() % 1'000'000 != 0 || *d > std::chrono::milliseconds(kMaxMs)) {
        add_problem(problems, pointer,
                    fmt::format("a whole number of milliseconds from \"0s\" (disabled) to \"{}ms\"",
                                kMaxMs),
                    json_excerpt(*idle));
      } else {
        config.idle_in_transaction_session_timeout = *d;
      }
    }
  }
  if (problems.size() == before) services.postgres = config;
}

// Zero keepalive settings select the operating system's (Linux's) values: PostgresConfig.
std::string postgres_setting_default(std::string_view key) {
  const PostgresConfig config;
  if (key == "tcp_keepalives_idle" || key == "tcp_keepalives_interval" ||
      key == "tcp_keepalives_count") {
    return "Linux default";
  }
  if (key == "idle_in_transaction_session_timeout") {
    return config.idle_in_transaction_session_timeout.count() == 0
               ? "disabled"
               : sim::format_duration(config.idle_in_transaction_session_timeout);
  }
  return "";
}

}  // namespace

ServerKindInfo postgres_kind() {
  return {std::string(sim::server_kind::postgres),
          "a PostgreSQL server: sessions, advisory locks and a leader row",
          {kDatabase},
          "",
          "the database server exists only with a database protocol or a postgres section",
          [](const Services& services, WorldBuilder& builder) {
            if (!services.postgres) return;
            builder.world().node_servers.database = builder.add(
                "postgres", sim::server_kind::postgres, "", kDatabase, sim::ClockConfig{},
                [config = *services.postgres] { return std::make_unique<PostgresServer>(config); },
                sim::server_slot(sim::kPostgresEndpoint));
          },
          "postgres",
          read_postgres_section,
          postgres_setting_default,
          [](Services& services) {
            if (!services.postgres) services.postgres.emplace();
          }};
}

}  // namespace electsim::servers
