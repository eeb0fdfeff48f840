// A scenario: the validated, typed form of a scenario file (docs/scenario-format.md). Everything
// the kernel, the protocol and the analysis need for one run; durations are sim::Duration,
// probabilities integer ppm. Produced only by the loader (runner/loader.hpp), so a Scenario is
// always valid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/expect.hpp"
#include "protocols/params.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/kernel.hpp"

namespace electsim::runner {

// Upper bounds on everything a file can ask for; each error message names the limit it hit.
struct Limits {
  std::size_t max_nodes = 1000;
  sim::Duration max_duration = std::chrono::hours(24 * 30);
  std::size_t max_faults = 100'000;
  std::uint64_t max_events = 200'000'000;
  std::uint64_t max_trace_bytes = 2ull << 30;  // 2 GiB
};

struct Scenario {
  std::string source;  // file name, or "<built-in flagship>"
  std::string name;
  std::string description;
  std::string variant;     // the variant loaded, "" for the base scenario
  sim::WorldConfig world;  // seed, duration, nodes, clocks, network, store, sink, faults
  std::string protocol;    // registry name
  nlohmann::json protocol_params = nlohmann::json::object();  // without "name", as written
  protocols::PreparedProtocol prepared;
  protocols::WorkloadConfig workload;
  std::vector<analysis::Expectation> expect;
  Limits limits;
  nlohmann::json document;  // the whole document after --set overrides (for replay and --json)
};

}  // namespace electsim::runner
