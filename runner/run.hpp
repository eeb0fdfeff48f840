// Running a scenario: builds the kernel from a Scenario, attaches the analysis (and a trace writer
// when asked), runs, and returns the report, the verdict on the expect block and the trace hash.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/expect.hpp"
#include "analysis/report.hpp"
#include "analysis/summary.hpp"
#include "runner/scenario.hpp"
#include "sim/kernel.hpp"

namespace electsim::runner {

struct RunOptions {
  std::optional<std::string> trace_path;  // JSON Lines trace, written whole or not at all
};

struct RunResult {
  analysis::RunInfo info;
  analysis::Report report;
  analysis::Verdict verdict;
  sim::RunStats stats;
  std::string trace_hash;           // 16 hex digits over the event stream
  std::vector<std::string> errors;  // trace could not be written, event limit hit, ...
  bool ok() const { return errors.empty() && verdict.ok(); }
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace electsim::runner
