// Duration distributions drawn from sim::Rng with our own code (FoundationDB's lesson: the standard
// library's distributions differ between implementations). Exponential by inversion, normal and
// lognormal from Box-Muller, Pareto by inversion (x_m / U^(1/alpha)); every sample is rounded to
// whole nanoseconds and kept within [0, 10^15 ns].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "sim/assert.hpp"
#include "sim/distribution.hpp"
#include "sim/number_text.hpp"

namespace electsim::sim {
namespace {

// Normal draws below zero are redrawn; a distribution that is almost all negative would loop for
// long, so after this many redraws the sample is 0.
constexpr int kNormalRedrawsMax = 64;

// A real-valued sample in nanoseconds to whole nanoseconds within [0, kMaxSampleNs]. NaN (from a
// degenerate shape) counts as 0 rather than reaching llround, whose result would be unspecified.
std::int64_t to_ns(double x) {
  if (!(x > 0)) return 0;
  if (x >= static_cast<double>(kMaxSampleNs)) return kMaxSampleNs;
  return std::llround(x);
}

// Nearest multiple of step (ties upward), staying within [0, kMaxSampleNs]. `ns` is already there.
std::int64_t round_to_step(std::int64_t ns, std::int64_t step) {
  if (step <= 0) return ns;
  const std::int64_t rest = ns % step;
  std::int64_t rounded = ns - rest;
  if (rest >= step - rest) rounded += step;
  if (rounded > kMaxSampleNs && rounded - step >= 0) rounded -= step;
  return rounded;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) == (b < 0)) ? q + 1 : q;
}

// The multiples of step inside [lo, hi] are k * step for k in [first, last] (empty if first >
// last).
struct StepRange {
  std::int64_t first;
  std::int64_t last;
};
StepRange step_range(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  return {ceil_div(lo, step), floor_div(hi, step)};
}

}  // namespace

Distribution Distribution::constant_of(Duration d) {
  Distribution dist;
  dist.kind = DistributionKind::constant;
  dist.value = d;
  return dist;
}

Distribution Distribution::uniform_of(Duration lo, Duration hi, Duration step) {
  Distribution dist;
  dist.kind = DistributionKind::uniform;
  dist.min = lo;
  dist.max = hi;
  dist.step = step;
  return dist;
}

PreparedDistribution::PreparedDistribution(const Distribution& d) : d_(d) {
  if (d.kind != DistributionKind::uniform || d.step.count() <= 0 || d.min > d.max) return;
  const StepRange r = step_range(d.min.count(), d.max.count(), d.step.count());
  if (r.first > r.last) return;
  stepped_ = true;
  first_ = r.first;
  last_ = r.last;
  step_ns_ = d.step.count();
}

Duration Distribution::sample(Rng& rng) const {
  const std::int64_t step_ns = step.count();
  switch (kind) {
    case DistributionKind::constant:
      return Duration(round_to_step(clamp_sample_ns(value.count()), step_ns));
    case DistributionKind::uniform: {
      ELECTSIM_ASSERT(min <= max, "uniform distribution needs min <= max");
      if (step_ns <= 0) return Duration(clamp_sample_ns(rng.between(min.count(), max.count())));
      const StepRange r = step_range(min.count(), max.count(), step_ns);
      // No multiple of step inside [min, max]: the nearest multiple of min is the best answer,
      // and no draw is taken (validation should have refused such a distribution).
      if (r.first > r.last) return Duration(round_to_step(clamp_sample_ns(min.count()), step_ns));
      return Duration(clamp_sample_ns(rng.between(r.first, r.last) * step_ns));
    }
    case DistributionKind::normal: {
      const double mean_ns = static_cast<double>(mean.count());
      const double stddev_ns = static_cast<double>(stddev.count());
      for (int attempt = 0; attempt <= kNormalRedrawsMax; ++attempt) {
        const double x = mean_ns + stddev_ns * rng.standard_normal();
        if (x >= 0) return Duration(round_to_step(to_ns(x), step_ns));
      }
      return Duration(0);
    }
    case DistributionKind::exponential: {
      const double x = -static_cast<double>(mean.count()) * std::log(rng.unit_open_zero());
      return Duration(round_to_step(to_ns(x), step_ns));
    }
    case DistributionKind::lognormal: {
      const double x =
          static_cast<double>(median.count()) * std::exp(sigma * rng.standard_normal());
      return Duration(round_to_step(to_ns(x), step_ns));
    }
    case DistributionKind::pareto: {
      const double u = rng.unit_open_zero();
      const double x = static_cast<double>(scale.count()) / std::pow(u, 1.0 / shape);
      return Duration(round_to_step(to_ns(x), step_ns));
    }
  }
  ELECTSIM_ASSERT(false, "unknown distribution kind");
  return Duration(0);
}

Duration Distribution::expected() const {
  switch (kind) {
    case DistributionKind::constant:
      return Duration(round_to_step(clamp_sample_ns(value.count()), step.count()));
    case DistributionKind::uniform: {
      const std::int64_t step_ns = step.count();
      if (step_ns <= 0) {
        // min + (max - min) / 2 rather than (min + max) / 2: the sum could overflow.
        const double mid =
            static_cast<double>(min.count()) +
            (static_cast<double>(max.count()) - static_cast<double>(min.count())) / 2;
        return Duration(to_ns(mid));
      }
      const StepRange r = step_range(min.count(), max.count(), step_ns);
      if (r.first > r.last) return Duration(round_to_step(clamp_sample_ns(min.count()), step_ns));
      const double mid_k = static_cast<double>(r.first) + static_cast<double>(r.last - r.first) / 2;
      return Duration(to_ns(mid_k * static_cast<double>(step_ns)));
    }
    case DistributionKind::normal: {
      // Mean of the normal truncated at 0 (redrawing is truncation): mu + sigma * phi(a) / (1 -
      // Phi(a)) with a = -mu / sigma.
      const double mu = static_cast<double>(mean.count());
      const double sd = static_cast<double>(stddev.count());
      if (sd <= 0) return Duration(to_ns(mu));
      const double a = -mu / sd;
      const double tail = 0.5 * std::erfc(a / std::sqrt(2.0));
      if (!(tail > 0)) return Duration(0);
      const double density = std::exp(-0.5 * a * a) / std::sqrt(2.0 * 3.14159265358979323846);
      return Duration(to_ns(mu + sd * density / tail));
    }
    case DistributionKind::exponential:
      return Duration(to_ns(static_cast<double>(mean.count())));
    case DistributionKind::lognormal:
      return Duration(to_ns(static_cast<double>(median.count()) * std::exp(sigma * sigma / 2)));
    case DistributionKind::pareto:
      if (shape <= 1) return Duration::max();
      return Duration(to_ns(static_cast<double>(scale.count()) * shape / (shape - 1)));
  }
  ELECTSIM_ASSERT(false, "unknown distribution kind");
  return Duration(0);
}

std::string Distribution::describe() const {
  const std::string step_text =
      step.count() > 0 ? ", step " + format_duration(step) : std::string();
  switch (kind) {
    case DistributionKind::constant:
      if (step.count() > 0) return "constant(" + format_duration(value) + step_text + ")";
      return format_duration(value);
    case DistributionKind::uniform:
      return "uniform(" + format_duration(min) + ".." + format_duration(max) + step_text + ")";
    case DistributionKind::normal:
      return "normal(mean " + format_duration(mean) + ", stddev " + format_duration(stddev) +
             step_text + ")";
    case DistributionKind::exponential:
      return "exponential(mean " + format_duration(mean) + step_text + ")";
    case DistributionKind::lognormal:
      return "lognormal(median " + format_duration(median) + ", sigma " + shortest_number(sigma) +
             step_text + ")";
    case DistributionKind::pareto:
      return "pareto(scale " + format_duration(scale) + ", shape " + shortest_number(shape) +
             step_text + ")";
  }
  return "?";
}

}  // namespace electsim::sim
