// The picture of a sweep: the chosen per-point metrics (one panel each) against the first grid
// axis, one line per protocol and per value of the other axes.
#pragma once

#include <string>
#include <vector>

#include "runner/sweep.hpp"

namespace electsim::runner {

// `metrics` are point metric names (runner::point_metrics()), checked by the caller.
std::string sweep_plot_svg(const SweepResult& result, const std::vector<PointSummary>& points,
                           const std::vector<std::string>& metrics);

}  // namespace electsim::runner
