// Distributions of durations (message latency, work time, pause lengths), sampled from a pcg stream
// with our own code. Every sample is rounded to whole nanoseconds, clamped at zero from below, and
// optionally rounded to a multiple of `step` ("uniform whole milliseconds").
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

// The largest sample in nanoseconds, about eleven and a half days: far beyond any run, small
// enough that sums of a few samples never overflow int64 nanoseconds.
inline constexpr std::int64_t kMaxSampleNs = 1'000'000'000'000'000;
// A sample in nanoseconds brought within [0, kMaxSampleNs].
inline std::int64_t clamp_sample_ns(std::int64_t ns) {
  return std::clamp<std::int64_t>(ns, 0, kMaxSampleNs);
}

enum class DistributionKind { constant, uniform, normal, exponential, lognormal, pareto };

struct Distribution {
  DistributionKind kind = DistributionKind::constant;
  Duration value{0};  // constant
  Duration min{0};    // uniform: inclusive bounds
  Duration max{0};
  Duration mean{0};    // normal, exponential
  Duration stddev{0};  // normal (truncated at 0 by redrawing)
  Duration median{0};  // lognormal: exp(mu) = median
  double sigma = 0;    // lognormal shape
  Duration scale{0};   // pareto: minimum value x_m
  double shape = 0;    // pareto: alpha > 0
  Duration step{0};    // > 0: uniform draws whole multiples of step; others round to it

  static Distribution constant_of(Duration d);
  static Distribution uniform_of(Duration lo, Duration hi, Duration step = Duration(0));

  Duration sample(Rng& rng) const;
  // The mean where it is finite (for reports and validation messages); pareto with shape <= 1 gives
  // Duration::max().
  Duration expected() const;
  // "uniform(1ms..10ms)", "lognormal(median 200ms, sigma 0.5)": for summaries and error messages.
  std::string describe() const;
};

// A distribution with the part of each draw that never changes worked out once: for a uniform
// on whole steps, the range of step multiples, which costs two divisions a draw otherwise. Every
// sample is the distribution's own, drawn from the same stream in the same way. The kernel's
// network draws a latency per message from one of these.
class PreparedDistribution {
 public:
  explicit PreparedDistribution(const Distribution& d);
  // Inline: the network draws one per message.
  Duration sample(Rng& rng) const {
    if (stepped_) {
      return Duration(clamp_sample_ns(rng.between(first_, last_) * step_ns_));
    }
    return d_.sample(rng);
  }

 private:
  Distribution d_;
  bool stepped_ = false;  // a uniform on whole steps with at least one inside [min, max]
  std::int64_t first_ = 0;
  std::int64_t last_ = 0;
  std::int64_t step_ns_ = 0;
};

}  // namespace electsim::sim
