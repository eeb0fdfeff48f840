// Redlock's independent Redis masters as a kind of server (servers/registry.hpp), in worlds whose
// protocol or scenario asks for them.
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <string>

#include "params/section.hpp"
#include "servers/redis/redis_server.hpp"
#include "servers/registry.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

namespace {

// Each master is a process of its own: crash, pause, isolate, stop and clock faults apply.
const ServerForm kMaster{
    "a Redis master",
    {true, sim::ServerLane::process, sim::kProcessFaults, true, sim::redis_op_names()}};

void add_masters(const Services& services, WorldBuilder& builder) {
  if (!services.redis) return;
  ELECTSIM_ASSERT(services.redis->masters <= sim::kMaxRedisMasters,
                  "masters within the scenario limit");
  for (std::size_t k = 0; k < services.redis->masters; ++k) {
    const sim::ClockConfig clock = clock_of(services, sim::server_kind::redis, k);
    builder.world().node_servers.redis.push_back(builder.add(
        "redis:" + std::to_string(k), sim::server_kind::redis, "redis", kMaster, clock,
        [config = *services.redis, k] { return std::make_unique<RedisServer>(config, k); },
        sim::server_slot(sim::redis_endpoint(k))));
  }
}

using nlohmann::json;
using params::add_problem;
using params::as_unsigned;
using params::check_object;
using params::did_you_mean;
using params::joined;
using params::json_excerpt;
using params::member;

// Redlock's independent Redis masters ("Distributed Locks with Redis": N = 5 in its example; any
// count from 1 to electsim's 9 addresses) and their AOF fsync policy (redis.conf "appendfsync":
// always, everysec, no; "Redis Persistence", redis.io/docs/management/persistence).
void read_redis_section(const nlohmann::json& v, const SectionContext&, params::Problems& problems,
                        Services& services) {
  RedisConfig config;
  if (!check_object(v, "/redis", {"masters", "appendfsync"}, "the redis section", problems)) return;
  const std::size_t before = problems.size();
  if (const json* masters = member(v, "masters")) {
    const auto n = as_unsigned(*masters);
    if (!n || *n < 1 || *n > sim::kMaxRedisMasters) {
      add_problem(problems, "/redis/masters",
                  fmt::format("a whole number of masters from 1 to {}", sim::kMaxRedisMasters),
                  json_excerpt(*masters));
    } else {
      config.masters = static_cast<std::size_t>(*n);
    }
  }
  if (const json* mode = member(v, "appendfsync")) {
    const std::vector<std::string> modes = {"always", "everysec", "no"};
    const std::string text = mode->is_string() ? mode->get<std::string>() : std::string();
    if (text == "always") {
      config.appendfsync = Appendfsync::always;
    } else if (text == "everysec") {
      config.appendfsync = Appendfsync::everysec;
    } else if (text == "no") {
      config.appendfsync = Appendfsync::no;
    } else {
      add_problem(problems, "/redis/appendfsync", "one of " + joined(modes, true),
                  json_excerpt(*mode),
                  mode->is_string() ? did_you_mean(text, modes) : std::string());
    }
  }
  if (problems.size() == before) services.redis = config;
}

}  // namespace

ServerKindInfo redis_kind() {
  return {std::string(sim::server_kind::redis),
          "Redlock's independent Redis masters: SET NX PX keys and a counter",
          {kMaster},
          "Redis masters",
          "Redis masters exist only with the redlock protocol or a redis section",
          add_masters,
          "redis",
          read_redis_section,
          [](std::string_view key) -> std::string {
            const RedisConfig config;
            if (key == "masters") return std::to_string(config.masters);
            if (key == "appendfsync") return appendfsync_name(config.appendfsync);
            return "";
          },
          [](Services& services) {
            if (!services.redis) services.redis.emplace();
          },
          // Each master keeps its own clock (Redis expires keys on its wall clock).
          "master",
          "redis.masters",
          [](const Services& services) {
            return services.redis ? services.redis->masters : RedisConfig{}.masters;
          }};
}

}  // namespace electsim::servers
