// The database server as a kind of server (servers/registry.hpp), in worlds whose protocol or
// scenario asks for it.
#include <memory>
#include <string>

#include "servers/postgres/postgres_server.hpp"
#include "servers/registry.hpp"

namespace electsim::servers {

namespace {

// A process like the nodes (any process fault), whose flag row and locks a person may clear.
const ServerForm kDatabase{
    "the database",
    {true, sim::ServerLane::process,
     sim::kProcessFaults | sim::fault_bit(sim::FaultKind::operator_clear), true}};

}  // namespace

ServerKindInfo postgres_kind() {
  return {std::string(sim::server_kind::postgres),
          "a PostgreSQL server: sessions, advisory locks and a leader row",
          {kDatabase},
          "",
          "the database server exists only with a database protocol or a postgres section",
          [](const Services& services, WorldBuilder& builder) {
            if (!services.postgres) return;
            builder.add(
                "postgres", sim::server_kind::postgres, "", kDatabase, sim::ClockConfig{},
                [config = *services.postgres] { return std::make_unique<PostgresServer>(config); },
                sim::server_slot(sim::kPostgresEndpoint));
          }};
}

}  // namespace electsim::servers
