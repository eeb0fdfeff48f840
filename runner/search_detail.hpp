// What the parts of `electsim search` share (runner/search.cpp runs and shrinks, runner/nemesis.cpp
// draws the faults, runner/search_report.cpp writes the report): not for use outside them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/search.hpp"
#include "sim/fault.hpp"
#include "sim/time.hpp"

namespace electsim::runner::search_detail {

// A duration as a scenario writes it in whole milliseconds: "1500ms".
std::string ms_text(sim::Duration d);
// Whether a fault kind stalls the store itself (store_pause): drawn only where the protocol uses
// the store.
bool store_kind(sim::FaultKind k);
// A run's faults: the nemesis's, in time order, then the end of the safety phase.
nlohmann::json schedule_of(const std::vector<nlohmann::json>& nemesis, const SearchConfig& config);

}  // namespace electsim::runner::search_detail
