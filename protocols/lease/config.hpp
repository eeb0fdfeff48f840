// Parameters of the lease-plus-fencing protocol: the table that drives validation, `electsim list`
// and the docs, and the reader that turns a scenario's protocol object into a LeaseConfig.
// Store-mode defaults follow etcd's concurrency package (session TTL, keepalive at TTL/3);
// client-mode defaults are Kubernetes client-go leaderelection's (15s / 10s / 2s, jitter 1.2).
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
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace electsim::protocols::lease {

// Who judges that a claim has expired.
enum class Expiry : std::uint8_t {
  store,   // etcd: the key is attached to a lease; the store's clock expires it and deletes the key
  client,  // Kubernetes Lease: a plain record; followers judge expiry on their own clocks
};

// Client mode: whose lease duration a follower waits out.
enum class DurationFrom : std::uint8_t {
  record,  // the holder's, written in the record (client-go since v0.27, kubernetes#114872)
  own,     // the follower's own configuration (older client-go, kubernetes#47671; fabric8 #7160)
};

// Client mode: how a follower decides the duration has passed.
enum class ExpiryJudge : std::uint8_t {
  // client-go: from the local moment it saw the record change (observedTime), on its monotonic
  // clock, so that neither skew between machines nor a wall-clock step changes the outcome.
  observed_time,
  // fabric8's canBecomeLeader: the record's renewTime (the holder's wall clock) plus the duration,
  // against the follower's own wall clock.
  renew_time,
};

// Which registry entry reads the parameters: `lease` (both expiry modes) or `kubernetes` (client
// mode only, with client-go's defaults and no `expiry` parameter).
enum class Flavor : std::uint8_t { lease, kubernetes };

// The timings one node may be configured with apart from the rest (client mode's per_node).
struct NodeTimings {
  sim::NodeId node = sim::kNoNode;
  sim::Duration ttl{0};
  sim::Duration renew_interval{0};
  sim::Duration renew_deadline{0};
  sim::Duration retry_interval{0};
};

struct LeaseConfig {
  Expiry expiry = Expiry::store;
  sim::Duration ttl = std::chrono::seconds(2);
  sim::Duration renew_interval = ttl / 3;
  // The holder stops believing it leads when its own clock says this long has passed since the
  // send time of its last confirmed renewal (client-go's RenewDeadline).
  sim::Duration renew_deadline = ttl * 2 / 3;
  sim::Duration retry_interval = ttl / 3;
  bool fencing = true;
  bool recheck_before_write = true;
  // client-go's JitterFactor: a follower waits retry_interval * (1 + u) between tries, u drawn
  // uniformly from [0, factor) (k8s.io/apimachinery wait.Jitter). Kept as parts per million of
  // the factor from load on, so no floating point reaches a run; 0 is no jitter.
  std::int64_t jitter_ppm = 0;
  // The first renewal after a grant comes renew_interval after it (false: the renewals keep the
  // grant's phase), or after a uniform draw from (0, renew_interval] (true: the phase a client
  // connecting at an arbitrary moment gets), so that renewals need not lock onto a replicated
  // store's expiry scans.
  bool random_keepalive_phase = false;
  // Store mode: a follower that sees the key freed waits a uniform draw from [0, race_jitter)
  // before it races for it; 0 races at once (etcd's Campaign).
  sim::Duration race_jitter{0};
  // After a try the coordinator failed (no answer in time, unavailable, no leader, too many
  // requests) the next comes retry_interval later, each further failure multiplies that wait by
  // backoff_factor up to backoff_max, and an answer resets it: client-go's wait.Backoff
  // (Duration, Factor, Cap). 0: every retry after retry_interval. The factor in parts per million.
  sim::Duration backoff_max{0};
  std::int64_t backoff_factor_ppm = 2'000'000;
  std::string key = "/electsim/leader";
  // Client mode only.
  DurationFrom lease_duration_from = DurationFrom::record;
  ExpiryJudge expiry_judged_by = ExpiryJudge::observed_time;
  // Nodes configured apart from the cluster-wide timings above, in node order, each entry
  // complete (cross-checked like the cluster-wide values). Empty: every node alike.
  std::vector<NodeTimings> per_node;
  WorkloadConfig workload;  // the cluster's, copied in by the registry
};

// The configuration node `node` runs with: the cluster-wide one with its per_node timings, if any.
LeaseConfig config_for_node(const LeaseConfig& cluster, sim::NodeId node);

// The defaults of one expiry mode, before any parameter is read.
LeaseConfig default_config(Expiry expiry);

// The parameter tables, in the order `electsim list` shows them.
std::span<const params::ParamSpec> lease_params();
std::span<const params::ParamSpec> kubernetes_params();

struct ReadOptions {
  Flavor flavor = Flavor::lease;
  // Node ids in per_node must be below this (the scenario's cluster size).
  std::size_t node_count = 1000;
};

// Reads and cross-checks the protocol object (without "name"); nullopt when anything was wrong,
// with every problem recorded at its JSON pointer under `pointer`.
std::optional<LeaseConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                       params::Problems& problems, const ReadOptions& options = {});

}  // namespace electsim::protocols::lease
