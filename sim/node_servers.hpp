// Where an election node's requests go: the store's members, the sink, the database and the Redis
// masters, the servers the protocol context names (sim/protocol.hpp). Each server kind's
// registration fills its part as it adds its servers to a world (servers/), so that neither the
// kernel nor the node's process holds an address of its own.
#pragma once

#include <string>
#include <vector>

#include "sim/ids.hpp"
#include "sim/store_client.hpp"

namespace electsim::sim {

// One of a sharded store's independent clusters (store.shards): the servers of its group, as the
// election groups that use it name it (ElectionGroup::store).
struct StoreShard {
  std::string group;  // "store-2"
  StoreClientConfig client;
};

struct NodeServers {
  StoreClientConfig store;  // the store's members: one for the single store, none without
  // A sharded store's clusters, in order; empty for a world of one store. A group's requests go
  // to the shard it names (ElectionGroup::store), `store` above being the first shard's.
  std::vector<StoreShard> store_shards;
  // Proxies in front of the store (a fleet's lease aggregators), by name: a group whose
  // ElectionGroup::via names one asks it instead.
  std::vector<StoreShard> proxies;
  Endpoint sink = kNoNode;      // where sink_write goes
  Endpoint database = kNoNode;  // where db goes
  std::vector<Endpoint> redis;  // where redis(k) goes, by master index
};

}  // namespace electsim::sim
