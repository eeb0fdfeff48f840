// The servers put into a world: see servers/world.hpp.
#include "servers/world.hpp"

#include <memory>
#include <string>

#include "servers/postgres/postgres_server.hpp"
#include "servers/redis/redis_server.hpp"
#include "servers/registry.hpp"
#include "servers/sink/sink_server.hpp"
#include "servers/store/member.hpp"
#include "servers/store/store_server.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

void add_services(sim::WorldConfig& world, const Services& services) {
  WorldBuilder builder(world);
  for (const ServerKindInfo& kind : all_server_kinds()) kind.add(services, builder);
}

sim::WorldConfig with_services(sim::WorldConfig world, const Services& services) {
  add_services(world, services);
  return world;
}

const Store& store_of(const sim::Kernel& kernel) {
  const sim::Process* process = kernel.process(sim::kStoreEndpoint);
  if (const auto* member = dynamic_cast<const StoreMember*>(process)) return member->store();
  const auto* server = dynamic_cast<const StoreServer*>(process);
  ELECTSIM_ASSERT(server != nullptr, "the world has a store");
  return server->store();
}

const Sink& sink_of(const sim::Kernel& kernel) {
  const auto* server = dynamic_cast<const SinkServer*>(kernel.process(sim::kSinkEndpoint));
  ELECTSIM_ASSERT(server != nullptr, "the world has a sink");
  return server->sink();
}

const Database* database_of(const sim::Kernel& kernel) {
  const auto* server = dynamic_cast<const PostgresServer*>(kernel.process(sim::kPostgresEndpoint));
  return server != nullptr ? &server->database() : nullptr;
}

const Redis* redis_of(const sim::Kernel& kernel, std::size_t k) {
  const auto* server = dynamic_cast<const RedisServer*>(kernel.process(sim::redis_endpoint(k)));
  return server != nullptr ? &server->redis() : nullptr;
}

}  // namespace electsim::servers
