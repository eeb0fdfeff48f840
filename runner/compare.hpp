// One scenario under several protocols, with the same seed and the same fault schedule (a fault
// aimed at `leader` hits each protocol's own leader at that time), and the side-by-side table a
// teacher or an SRE reads: failover, outage, leaderless time, safety findings and cost.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/loader.hpp"
#include "runner/run.hpp"

namespace electsim::runner {

struct CompareResult {
  std::vector<RunResult> runs;  // one per protocol, in the order asked
  std::vector<std::string> protocols;
};

// Loads the scenario once per protocol (LoadOptions.protocol) and runs each. Problems of any load
// come back in `problems` (with the protocol named), and nothing runs.
struct CompareOutcome {
  std::optional<CompareResult> result;
  std::vector<std::string> problems;
};
CompareOutcome compare_protocols(const std::string& source_text, const std::string& source_name,
                                 const LoadOptions& options,
                                 const std::vector<std::string>& protocols,
                                 const RunOptions& run_options = {});

// The table's rows, each a metric over every protocol: text for people, CSV and JSON for tools.
std::string format_compare_table(const CompareResult& result);
std::string compare_csv(const CompareResult& result);
nlohmann::json compare_json(const CompareResult& result);

}  // namespace electsim::runner
