// Test helper: run a loaded scenario with its JSON Lines trace written to a temporary file, and
// return the trace's events, the file removed.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/run.hpp"

namespace electsim::testing {

inline std::vector<nlohmann::json> traced_events(const runner::Scenario& scenario,
                                                 const std::string& name) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  const runner::RunResult r =
      runner::run_scenario(scenario, runner::RunOptions{}.output("trace", path.string()));
  REQUIRE(r.errors.empty());
  std::vector<nlohmann::json> events;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) events.push_back(nlohmann::json::parse(line));
  std::filesystem::remove(path);
  return events;
}

}  // namespace electsim::testing
