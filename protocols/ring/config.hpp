// Parameters of ring election (Chang and Roberts 1979): the table that drives validation,
// `electsim list` and the docs, and the reader that turns a scenario's protocol object into a
// RingConfig. `order` and `start` may be arrays of node ids, which ParamReader (scalars only) does
// not read: they are read here directly from the JSON, with a problem at each element's pointer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/workload.hpp"
#include "sim/ids.hpp"
#include "sim/time.hpp"

namespace electsim::protocols::ring {

// How the logical ring is laid over the node ids.
enum class RingOrder : std::uint8_t {
  ascending,   // the successor of i is i + 1, and of n - 1 is 0
  descending,  // the successor of i is i - 1, and of 0 is n - 1
  given,       // RingConfig::order, a permutation of the node ids
};

// Who starts an election at time 0.
enum class StartSet : std::uint8_t {
  all,     // every node at once: the simultaneous start of the paper's worst case
  lowest,  // node 0 only
  none,    // nobody: the first elections come from failure_timeout
  given,   // RingConfig::start_nodes
};

struct RingConfig {
  RingOrder order_kind = RingOrder::ascending;
  std::vector<sim::NodeId> order;  // order_kind == given: the ring, successor = next entry
  sim::Duration ack_timeout = std::chrono::milliseconds(100);
  sim::Duration heartbeat_interval = std::chrono::milliseconds(100);
  sim::Duration failure_timeout = std::chrono::milliseconds(500);
  StartSet start = StartSet::all;
  std::vector<sim::NodeId> start_nodes;  // start == given
  WorkloadConfig workload;               // the cluster's, copied in by the registry

  // The ring for a cluster of `node_count` nodes: ring[i + 1] is the successor of ring[i], and
  // ring[0] the successor of the last.
  std::vector<sim::NodeId> ring_of(std::size_t node_count) const;
  // Whether `node` starts an election when it first starts.
  bool starts_at_time_zero(sim::NodeId node) const;
};

// The parameter table, in the order `electsim list` shows it.
std::span<const params::ParamSpec> ring_params();

// Reads and cross-checks the protocol object (without "name") for a cluster of `node_count`
// nodes; nullopt when anything was wrong, with every problem recorded at its JSON pointer under
// `pointer`.
std::optional<RingConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                      std::size_t node_count, params::Problems& problems);

}  // namespace electsim::protocols::ring
