// The store and the sink put into a world: see servers/world.hpp.
#include "servers/world.hpp"

#include <memory>

#include "servers/sink/sink_server.hpp"
#include "servers/store/store_server.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

void add_services(sim::WorldConfig& world, const Services& services) {
  world.servers.push_back(
      sim::ServerSpec{sim::kStoreEndpoint, "store", services.store_clock,
                      [config = services.store] { return std::make_unique<StoreServer>(config); }});
  world.servers.push_back(
      sim::ServerSpec{sim::kSinkEndpoint, "sink", sim::ClockConfig{},
                      [config = services.sink] { return std::make_unique<SinkServer>(config); }});
}

sim::WorldConfig with_services(sim::WorldConfig world, const Services& services) {
  add_services(world, services);
  return world;
}

const Store& store_of(const sim::Kernel& kernel) {
  const auto* server = dynamic_cast<const StoreServer*>(kernel.process(sim::kStoreEndpoint));
  ELECTSIM_ASSERT(server != nullptr, "the world has a store");
  return server->store();
}

const Sink& sink_of(const sim::Kernel& kernel) {
  const auto* server = dynamic_cast<const SinkServer*>(kernel.process(sim::kSinkEndpoint));
  ELECTSIM_ASSERT(server != nullptr, "the world has a sink");
  return server->sink();
}

}  // namespace electsim::servers
