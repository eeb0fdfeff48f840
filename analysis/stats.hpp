// Order statistics over many runs, in integers so that a sweep's table is exact and the same on
// every machine. Percentiles use the nearest-rank definition (the value itself is one of the
// samples, never an interpolation): the p-th percentile of n sorted samples is the
// ceil(p·n/100)-th smallest, so p50 of {1, 2, 3, 4} is 2 and p100 is the maximum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace electsim::analysis {

// `sorted` is in ascending order; `percent` from 1 to 100. nullopt for no samples.
inline std::optional<std::int64_t> nearest_rank_percentile(const std::vector<std::int64_t>& sorted,
                                                           int percent) {
  if (sorted.empty() || percent < 1 || percent > 100) return std::nullopt;
  const std::size_t n = sorted.size();
  const std::size_t rank = (static_cast<std::size_t>(percent) * n + 99) / 100;  // ceil, >= 1
  return sorted[std::min(rank, n) - 1];
}

}  // namespace electsim::analysis
