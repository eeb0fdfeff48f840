// Redlock's independent Redis masters as a kind of server (servers/registry.hpp), in worlds whose
// protocol or scenario asks for them.
#include <memory>
#include <string>

#include "servers/redis/redis_server.hpp"
#include "servers/registry.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

namespace {

// Each master is a process of its own: crash, pause, isolate, stop and clock faults apply.
const ServerForm kMaster{"a Redis master",
                         {true, sim::ServerLane::process, sim::kProcessFaults, true}};

void add_masters(const Services& services, WorldBuilder& builder) {
  if (!services.redis) return;
  ELECTSIM_ASSERT(services.redis->masters <= sim::kMaxRedisMasters,
                  "masters within the scenario limit");
  for (std::size_t k = 0; k < services.redis->masters; ++k) {
    const sim::ClockConfig clock =
        k < services.redis_clocks.size() ? services.redis_clocks[k] : sim::ClockConfig{};
    builder.add(
        "redis:" + std::to_string(k), sim::server_kind::redis, "redis", kMaster, clock,
        [config = *services.redis, k] { return std::make_unique<RedisServer>(config, k); },
        sim::server_slot(sim::redis_endpoint(k)));
  }
}

}  // namespace

ServerKindInfo redis_kind() {
  return {std::string(sim::server_kind::redis),
          "Redlock's independent Redis masters: SET NX PX keys and a counter",
          {kMaster},
          "Redis masters",
          "Redis masters exist only with the redlock protocol or a redis section",
          add_masters};
}

}  // namespace electsim::servers
