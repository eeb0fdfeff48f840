// Parameters of the Bully algorithm: the table that drives validation, `electsim list` and the
// docs, and the reader that turns a scenario's protocol object into a BullyConfig. The timeouts
// are Garcia-Molina's (1982) T: how long a node waits for an answer, for the winner's
// announcement, and for the coordinator's sign of life.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/workload.hpp"
#include "sim/time.hpp"

namespace electsim::protocols::bully {

// Which nodes hold an election when they first start (every restart holds one regardless).
enum class StartMode : std::uint8_t {
  all,     // every node: the usual cold start
  lowest,  // only the lowest id: the textbook's worst case for message counts
  none,    // nobody: the cluster idles until a restart, a step_down or an Election prompts it
};

struct BullyConfig {
  // A candidate that hears no Answer from a higher id within this takes over.
  sim::Duration answer_timeout = std::chrono::milliseconds(100);
  // A candidate that was answered but hears no Coordinator within this holds a new election.
  sim::Duration coordinator_timeout = std::chrono::milliseconds(300);
  // The coordinator sends a Heartbeat to every node this often.
  sim::Duration heartbeat_interval = std::chrono::milliseconds(100);
  // A follower that hears nothing from its coordinator for this holds an election.
  sim::Duration failure_timeout = std::chrono::milliseconds(500);
  StartMode start = StartMode::all;
  WorkloadConfig workload;  // the cluster's, copied in by the registry
};

// The parameter table, in the order `electsim list` shows it.
std::span<const params::ParamSpec> bully_params();

// Reads and cross-checks the protocol object (without "name"); nullopt when anything was wrong,
// with every problem recorded at its JSON pointer under `pointer`.
std::optional<BullyConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                       params::Problems& problems);

}  // namespace electsim::protocols::bully
