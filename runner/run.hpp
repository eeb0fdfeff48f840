// Running a scenario: builds the kernel from a Scenario, attaches the analysis (and a trace writer
// when asked), runs, and returns the report, the verdict on the expect block and the trace hash.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/expect.hpp"
#include "analysis/report.hpp"
#include "analysis/summary.hpp"
#include "drawing/replay_html.hpp"
#include "drawing/timeline.hpp"
#include "runner/scenario.hpp"
#include "sim/kernel.hpp"

namespace electsim::runner {

struct RunOptions {
  std::optional<std::string> trace_path;  // JSON Lines trace, written whole or not at all
  // Runs with this root seed instead of the scenario's. The run is then exactly the one
  // `electsim run --seed SEED` makes of the same scenario: sweeps load a grid point once and run
  // every seed from it.
  std::optional<std::uint64_t> seed;
  // When it becomes true the run stops early and says so in `errors` (sweeps, on Ctrl-C).
  const std::atomic<bool>* cancel = nullptr;
  // Pictures and exports (docs/labs, docs/perfetto.md); none of them changes the run.
  bool timeline = false;                     // keep RunResult::timeline (for --svg)
  bool replay_html = false;                  // render RunResult::replay_html (implies a timeline)
  std::optional<std::string> perfetto_path;  // Trace Event Format JSON, whole or not at all
  // Bounds on what the pictures keep in memory; a run past one reports it in `errors`.
  std::size_t replay_events_max = drawing::ReplayRecorder::kMaxEvents;
  std::size_t timeline_items_max = drawing::TimelineRecorder::kMaxItems;
};

// The world of one run: the scenario's world with `seed` as its root seed, and the scenario's
// random faults and clock ranges drawn from that seed (each from its own stream).
sim::WorldConfig world_for_seed(const Scenario& scenario, std::uint64_t seed);

struct RunResult {
  analysis::RunInfo info;
  analysis::Report report;
  analysis::Verdict verdict;
  sim::RunStats stats;
  std::string trace_hash;                     // 16 hex digits over the event stream
  std::vector<std::string> errors;            // trace could not be written, event limit hit, ...
  std::optional<drawing::Timeline> timeline;  // with RunOptions::timeline or replay_html
  std::string replay_html;                    // with RunOptions::replay_html
  bool ok() const { return errors.empty() && verdict.ok(); }
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace electsim::runner
