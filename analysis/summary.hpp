// The human summary and the machine summary of one run (or of a saved trace read back): seed
// first, who led when, safety, liveness, cost, the verdict, and the trace hash last (TigerBeetle
// VOPR prints the seed first so any run can be replayed). Both are deterministic: no wall clock.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/expect.hpp"
#include "analysis/report.hpp"

namespace electsim::analysis {

// What identifies a run, beside its report.
struct RunInfo {
  std::string scenario;  // scenario name
  std::string variant;   // "" for the base scenario
  std::string protocol;  // registry name
  std::uint64_t seed = 0;
  std::string trace_hash;  // 16 hex digits (TraceHasher)
  // The events of the run's stream, one per line of its trace: the same count in run, check and
  // the replay page.
  std::uint64_t events_processed = 0;
  // Entries the kernel took off its queue (what limits.events bounds); 0 for a trace read back.
  std::uint64_t kernel_steps = 0;
  Duration duration{0};  // simulated time
};

// Text for people: a few dozen lines at most (the leader timeline shows the first 50 intervals).
std::string format_summary(const RunInfo& info, const Report& report, const Verdict& verdict);

// Stable keys for machines; every duration appears twice, as `<name>_ns` (integer) and
// `<name>_s` (seconds, double). Keys are documented in docs/metrics.md.
nlohmann::json summary_json(const RunInfo& info, const Report& report, const Verdict& verdict);

}  // namespace electsim::analysis
