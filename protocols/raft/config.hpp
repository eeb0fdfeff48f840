// Parameters of Raft leader election: the table that drives validation, `electsim list` and the
// docs, and the reader that turns a scenario's protocol object into a RaftConfig. Defaults are
// the paper's (Ongaro and Ousterhout 2014 §5.2: election timeouts of 150-300ms); pre_vote and
// check_quorum are etcd-io/raft's options of the same names (dissertation §9.6 and §6.2).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/workload.hpp"
#include "raft/core.hpp"
#include "raft/messages.hpp"
#include "sim/ids.hpp"
#include "sim/time.hpp"

namespace electsim::protocols::raft {

using electsim::raft::LogPosition;

struct RaftConfig {
  sim::Duration election_timeout_min = std::chrono::milliseconds(150);
  sim::Duration election_timeout_max = std::chrono::milliseconds(300);
  sim::Duration heartbeat_interval = std::chrono::milliseconds(50);
  bool pre_vote = false;
  bool check_quorum = false;
  electsim::raft::TimerRule timer_rule = electsim::raft::TimerRule::etcd;
  sim::Duration tick{0};                // 0: continuous timers (see raft::ElectionConfig)
  sim::Duration check_quorum_lease{0};  // 0: election_timeout_min
  // The log each node starts with on its first start, by node id (one per configured node).
  std::vector<LogPosition> initial_log;
  // By node id: followers whose logs never take the leader's entries (replication to them is
  // broken), so they keep the log they had; empty when none lag.
  std::vector<bool> lagging;
  WorkloadConfig workload;  // the cluster's, copied in by the registry

  bool lags(sim::NodeId node) const {
    const auto i = static_cast<std::size_t>(node);
    return i < lagging.size() && lagging[i];
  }
  LogPosition initial_log_of(sim::NodeId node) const {
    const auto i = static_cast<std::size_t>(node);
    return i < initial_log.size() ? initial_log[i] : LogPosition{};
  }
};

// A bound on the log positions a scenario may give, far from overflow of index + 1.
inline constexpr std::int64_t kLogValueMax = 1'000'000'000'000;

// The parameter table, in the order `electsim list` shows it.
std::span<const params::ParamSpec> raft_params();

// Reads and cross-checks the protocol object (without "name") for a cluster of `node_count`
// nodes; nullopt when anything was wrong, with every problem recorded at its JSON pointer under
// `pointer`.
std::optional<RaftConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                      std::size_t node_count, params::Problems& problems);

}  // namespace electsim::protocols::raft
