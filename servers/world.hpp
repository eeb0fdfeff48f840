// The settings of a world's servers: the store (an etcd-like coordination service) and the sink
// (the fenced database) that every world has, and the servers some worlds have. add_services puts
// them into a world through the server registry (servers/registry.hpp); the kernel only sees
// ServerSpecs.
#pragma once

#include <any>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "raft/core.hpp"
#include "servers/postgres/database.hpp"
#include "servers/redis/redis.hpp"
#include "servers/sink/sink.hpp"
#include "servers/store/store.hpp"
#include "sim/kernel.hpp"

namespace electsim::servers {

// A replicated store (etcd's cluster): its size and its members' Raft and lessor settings.
struct ReplicationConfig {
  std::size_t members = 1;  // 1: the single logical store of servers/store/store_server.hpp
  raft::ElectionConfig raft;
  bool lease_checkpoint = false;
  // etcd's --experimental-lease-checkpoint-interval: only leases with more TTL left than this are
  // checkpointed, this often.
  Duration lease_checkpoint_interval = std::chrono::minutes(5);
  // Added to every lease on promotion; etcd adds its election timeout (Promote(ElectionTimeout)).
  std::optional<Duration> promote_extend;
  Duration request_timeout{0};    // the clients'
  std::vector<std::size_t> home;  // by node id: the member it talks to first (default: spread)
};

struct Services {
  StoreConfig store;
  SinkConfig sink;
  // The sink section's fencing, when it gives one: it overrides the protocol's own.
  std::optional<bool> sink_fencing;
  sim::ClockConfig store_clock;  // every member's; the sink's clock is perfect
  ReplicationConfig replication;
  // Independent store clusters, each of the section's configuration, a fleet's services assigned
  // to them by hash (store.shards); 1: the world's one store.
  std::size_t shards = 1;
  // Lease aggregators (servers/aggregator), one per tier of a fleet's services, in worlds whose
  // scenario has an aggregator section.
  struct Aggregators {
    std::size_t tiers = 1;
    Duration ttl{0};
    Duration renew_interval{0};  // 0: a third of the TTL
  };
  std::optional<Aggregators> aggregator;
  // The database server (servers/postgres), in worlds whose protocol or scenario asks for it.
  std::optional<PostgresConfig> postgres;
  // Redlock's independent Redis masters (servers/redis), in worlds whose protocol asks for them.
  std::optional<RedisConfig> redis;
  // The clocks of a kind's servers, by kind and server index (/clocks/<kind>: the Redis
  // masters'); missing ones are perfect.
  std::map<std::string, std::vector<sim::ClockConfig>, std::less<>> clocks;
  // Servers of kinds registered from outside this folder (a test's), by kind: how many of each.
  std::vector<std::pair<std::string, std::size_t>> more;
  // Such a kind's settings, as its section reader validated them, by kind; its `add` knows the
  // type it stored.
  std::map<std::string, std::any, std::less<>> settings;
};

// The clock `services` gives server `k` of `kind` (/clocks/<kind>), or a perfect one.
sim::ClockConfig clock_of(const Services& services, std::string_view kind, std::size_t k);

// Adds every registered kind's servers that `services` asks for to `world`, in the registry's
// order: the store (its members, when replicated), the sink and, if configured, the database
// server and the Redis masters.
void add_services(sim::WorldConfig& world, const Services& services);
// `world` with the store and the sink added: for tests and tools that build worlds by hand.
sim::WorldConfig with_services(sim::WorldConfig world, const Services& services = {});

// The state of a running world's store and sink, for white-box tests and inspection. A
// replicated store's state is that of member 0 (the store's first address).
const Store& store_of(const sim::Kernel& kernel);
const Sink& sink_of(const sim::Kernel& kernel);
// The database server's state; nullptr when the world has none.
const Database* database_of(const sim::Kernel& kernel);
// Redis master `k`'s state; nullptr when the world has none.
const Redis* redis_of(const sim::Kernel& kernel, std::size_t k);

}  // namespace electsim::servers
