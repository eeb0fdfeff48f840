// The store and the sink put into a world: see servers/world.hpp.
#include "servers/world.hpp"

#include <memory>
#include <string>

#include "servers/postgres/postgres_server.hpp"
#include "servers/redis/redis_server.hpp"
#include "servers/sink/sink_server.hpp"
#include "servers/store/member.hpp"
#include "servers/store/store_server.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

void add_services(sim::WorldConfig& world, const Services& services) {
  const ReplicationConfig& r = services.replication;
  if (r.members <= 1) {
    world.servers.push_back(sim::ServerSpec{
        sim::kStoreEndpoint, "store", std::string(sim::server_kind::store), "store",
        services.store_clock,
        [config = services.store] { return std::make_unique<StoreServer>(config); }});
  } else {
    auto config = std::make_shared<MemberConfig>();
    config->store = services.store;
    config->raft = r.raft;
    config->lease_checkpoint = r.lease_checkpoint;
    config->promote_extend = r.promote_extend.value_or(r.raft.election_timeout_min);
    ELECTSIM_ASSERT(r.members <= sim::kMaxStoreMembers, "store members within the addresses");
    for (std::size_t k = 0; k < r.members; ++k)
      config->members.push_back(sim::store_member_endpoint(k));
    for (std::size_t k = 0; k < r.members; ++k) {
      world.servers.push_back(sim::ServerSpec{
          sim::store_member_endpoint(k), "store:" + std::to_string(k),
          std::string(sim::server_kind::store), "store", services.store_clock, [config, k] {
            return std::make_unique<StoreMember>(config, static_cast<raft::Member>(k));
          }});
    }
    world.store_client.members = config->members;
    world.store_client.request_timeout = r.request_timeout;
    world.store_client.home = r.home;
  }
  world.servers.push_back(sim::ServerSpec{
      sim::kSinkEndpoint, "sink", std::string(sim::server_kind::sink), "", sim::ClockConfig{},
      [config = services.sink] { return std::make_unique<SinkServer>(config); }});
  if (services.postgres) {
    world.servers.push_back(sim::ServerSpec{
        sim::kPostgresEndpoint, "postgres", std::string(sim::server_kind::postgres), "",
        sim::ClockConfig{},
        [config = *services.postgres] { return std::make_unique<PostgresServer>(config); }});
  }
  if (services.redis) {
    ELECTSIM_ASSERT(services.redis->masters <= sim::kMaxRedisMasters,
                    "masters within the addresses");
    for (std::size_t k = 0; k < services.redis->masters; ++k) {
      const sim::ClockConfig clock =
          k < services.redis_clocks.size() ? services.redis_clocks[k] : sim::ClockConfig{};
      world.servers.push_back(sim::ServerSpec{
          sim::redis_endpoint(k), "redis:" + std::to_string(k),
          std::string(sim::server_kind::redis), "redis", clock,
          [config = *services.redis, k] { return std::make_unique<RedisServer>(config, k); }});
    }
  }
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
