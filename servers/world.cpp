// The servers put into a world: see servers/world.hpp.
#include "servers/world.hpp"

#include <memory>
#include <string>
#include <vector>

#include "servers/postgres/postgres_server.hpp"
#include "servers/redis/redis_server.hpp"
#include "servers/registry.hpp"
#include "servers/sink/sink_server.hpp"
#include "servers/store/member.hpp"
#include "servers/store/store_server.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

sim::ClockConfig clock_of(const Services& services, std::string_view kind, std::size_t k) {
  const auto it = services.clocks.find(kind);
  if (it == services.clocks.end() || k >= it->second.size()) return sim::ClockConfig{};
  return it->second[k];
}

void add_services(sim::WorldConfig& world, const Services& services) {
  WorldBuilder builder(world);
  for (const ServerKindInfo& kind : all_server_kinds()) kind.add(services, builder);
}

sim::WorldConfig with_services(sim::WorldConfig world, const Services& services) {
  add_services(world, services);
  return world;
}

const Store& store_of(const sim::Kernel& kernel) {
  const std::vector<sim::Endpoint>& members = kernel.config().node_servers.store.members;
  ELECTSIM_ASSERT(!members.empty(), "the world has a store");
  const sim::Process* process = kernel.process(members.front());
  if (const auto* member = dynamic_cast<const StoreMember*>(process)) return member->store();
  const auto* server = dynamic_cast<const StoreServer*>(process);
  ELECTSIM_ASSERT(server != nullptr, "the world has a store");
  return server->store();
}

const Sink& sink_of(const sim::Kernel& kernel) {
  const auto* server =
      dynamic_cast<const SinkServer*>(kernel.process(kernel.config().node_servers.sink));
  ELECTSIM_ASSERT(server != nullptr, "the world has a sink");
  return server->sink();
}

const Database* database_of(const sim::Kernel& kernel) {
  const auto* server =
      dynamic_cast<const PostgresServer*>(kernel.process(kernel.config().node_servers.database));
  return server != nullptr ? &server->database() : nullptr;
}

const Redis* redis_of(const sim::Kernel& kernel, std::size_t k) {
  const std::vector<sim::Endpoint>& masters = kernel.config().node_servers.redis;
  if (k >= masters.size()) return nullptr;
  const auto* server = dynamic_cast<const RedisServer*>(kernel.process(masters[k]));
  return server != nullptr ? &server->redis() : nullptr;
}

}  // namespace electsim::servers
