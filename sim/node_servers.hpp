// Where an election node's requests go: the store's members, the sink, the database and the Redis
// masters, the servers the protocol context names (sim/protocol.hpp). Each server kind's
// registration fills its part as it adds its servers to a world (servers/), so that neither the
// kernel nor the node's process holds an address of its own.
#pragma once

#include <vector>

#include "sim/ids.hpp"
#include "sim/store_client.hpp"

namespace electsim::sim {

struct NodeServers {
  StoreClientConfig store;      // the store's members: one for the single store, none without
  Endpoint sink = kNoNode;      // where sink_write goes
  Endpoint database = kNoNode;  // where db goes
  std::vector<Endpoint> redis;  // where redis(k) goes, by master index
};

}  // namespace electsim::sim
