// A scenario: the validated, typed form of a scenario file (docs/scenario-format.md). Everything
// the kernel, the protocol and the analysis need for one run; durations are sim::Duration,
// probabilities integer ppm. Produced only by the loader (runner/loader.hpp), so a Scenario is
// always valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/expect.hpp"
#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "servers/world.hpp"
#include "sim/distribution.hpp"
#include "sim/fault.hpp"
#include "sim/kernel.hpp"

namespace electsim::runner {

// Upper bounds on everything a file can ask for; each error message names the limit it hit.
struct Limits {
  std::size_t max_nodes = 1000;  // of a world of one election group, and of each service
  // A fleet (`services`): its services, and its nodes (services x replicas).
  std::size_t max_services = 100'000;
  std::size_t max_fleet_nodes = 300'000;
  sim::Duration max_duration = std::chrono::hours(24 * 30);
  std::size_t max_faults = 100'000;
  std::uint64_t max_events = 200'000'000;
  std::uint64_t max_trace_bytes = 2ull << 30;  // 2 GiB
};

// One entry of `random_faults`: a fault whose times, and possibly durations, each run draws from
// its own seed (runner/run.hpp, world_for_seed). Faults happen at from + e1, from + e1 + e2, ...
// (each e drawn from `every`) while before `until`, at most `max` of them.
struct RandomFault {
  sim::FaultSpec fault;  // kind, target and the other fixed keys; `at` unused
  sim::Distribution every;
  // Set when the file gives `duration` as a distribution object: each fault draws its own (a draw
  // of 0 becomes 1ns). Otherwise fault.duration is the duration, the same for every fault.
  std::optional<sim::Distribution> duration;
  sim::Time from;
  sim::Time until;
  std::size_t max = 1000;
};

// An inclusive range a clock's field is drawn from, uniformly, per run.
struct DrawRange {
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// The fields of one clock given as ranges; the drawn value replaces the field of the world's
// ClockConfig, which holds 0 there.
struct ClockRanges {
  std::optional<DrawRange> drift_ppb;  // whole parts per billion
  std::optional<DrawRange> offset_ns;  // whole nanoseconds
  bool any() const { return drift_ppb.has_value() || offset_ns.has_value(); }
};

struct Scenario {
  std::string source;  // file name, or "<built-in flagship>"
  std::string name;
  std::string description;
  std::string variant;         // the variant loaded, "" for the base scenario
  sim::WorldConfig world;      // seed, duration, nodes, clocks, network, fixed faults (no servers)
  servers::Services services;  // the store, the sink and the store's clock
  // Drawn per run by world_for_seed (runner/run.hpp); world.faults holds only the fixed faults.
  std::vector<RandomFault> random_faults;
  std::vector<ClockRanges> clock_ranges;  // one per node
  ClockRanges store_clock_ranges;
  // A fleet: services of a few nodes each, in classes, each service's group electing on its own
  // resource (docs/fleets.md). 0 services: one election group of every node.
  struct Fleet {
    std::size_t services = 0;
    std::size_t replicas = 0;  // the most of any class (each group's class: world.groups)
  } fleet;
  std::string protocol;                                       // registry name
  nlohmann::json protocol_params = nlohmann::json::object();  // without "name", as written
  protocols::PreparedProtocol prepared;
  protocols::WorkloadConfig workload;
  std::vector<analysis::Expectation> expect;
  Limits limits;
  nlohmann::json document;  // the whole document after --set overrides (for replay and --json)
  // The file's `sweep` section as written (null when absent): the sweep command's defaults,
  // validated by the sweep code (docs/sweeps.md).
  nlohmann::json sweep;
  // The file's `search` section as written (null when absent), validated by the search code.
  nlohmann::json search;
  // A scenario `electsim search` found and shrank (its `found` section): the property it
  // violates, and whether the protocol is unsafe by design there, so the violation must stay.
  std::string found_property;
  bool found_unsafe_by_design = false;
  // The running protocol's own bounds (`expect_by_protocol.NAME`), and whether any expect block
  // judges this run: `compare` judges a protocol other than the file's by its own bounds only,
  // and without them gives no verdict (the file's bounds were written for another design).
  std::vector<analysis::Expectation> protocol_expect;
  bool judged = true;
};

}  // namespace electsim::runner
