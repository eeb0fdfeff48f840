// Clock model: local = offset + (1 + drift)·true + steps, in exact integer arithmetic (128-bit
// intermediates), anchored so that changes of drift keep the reading continuous.
#include "sim/clock.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace electsim::sim {
namespace {
constexpr std::int64_t kBillion = 1'000'000'000;
// The farthest a clock reads from zero: 2^62 ns, so a reading plus any duration a scenario may
// give (io and protocols bound those at ten years) still fits in 64 bits.
constexpr std::int64_t kLocalLimit = std::int64_t{1} << 62;
__extension__ typedef __int128 Int128;  // exact products of ns and ppb

}  // namespace

// A product that fits 64 bits (every reading of a clock without drift, most with it) is divided
// in 64 bits: a 128-bit division is a library call, and clocks are read on every event.
std::int64_t mul_div_floor(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t p64 = 0;
  if (!__builtin_mul_overflow(a, b, &p64)) {
    std::int64_t q = p64 / c;
    if ((p64 % c != 0) && ((p64 < 0) != (c < 0))) --q;
    return q;
  }
  Int128 p = static_cast<Int128>(a) * b;
  Int128 q = p / c;
  if ((p % c != 0) && ((p < 0) != (c < 0))) --q;
  return static_cast<std::int64_t>(q);
}

ClockModel::ClockModel(Duration offset, std::int64_t drift_ppb, std::vector<ClockStep> steps)
    : anchor_local_(offset.count()),
      anchor_monotonic_(offset.count()),
      drift_ppb_(drift_ppb),
      steps_(std::move(steps)) {
  ELECTSIM_ASSERT(drift_ppb > -kBillion, "a clock cannot run backwards or stand still");
  std::stable_sort(steps_.begin(), steps_.end(),
                   [](const ClockStep& a, const ClockStep& b) { return a.at < b.at; });
}

LocalTime ClockModel::local_at(Time t) const {
  const std::int64_t elapsed = t.ns - anchor_true_.ns;
  Int128 local =
      static_cast<Int128>(anchor_local_) + elapsed + mul_div_floor(elapsed, drift_ppb_, kBillion);
  for (const ClockStep& step : steps_) {
    if (step.at > t) break;
    local += step.by.count();
  }
  // Many large steps could carry a reading past 64 bits; a clock pinned at its limit (146 years
  // either side of the start) is as broken as a clock can usefully be, and stays well defined.
  return LocalTime(static_cast<std::int64_t>(std::clamp<Int128>(local, -kLocalLimit, kLocalLimit)));
}

LocalTime ClockModel::monotonic_at(Time t) const {
  const std::int64_t elapsed = t.ns - anchor_true_.ns;
  const Int128 reading = static_cast<Int128>(anchor_monotonic_) + elapsed +
                         mul_div_floor(elapsed, drift_ppb_, kBillion);
  return LocalTime(
      static_cast<std::int64_t>(std::clamp<Int128>(reading, -kLocalLimit, kLocalLimit)));
}

Duration ClockModel::drifted_duration_for(Duration local) const {
  // Smallest true d with d + floor(d * drift / 1e9) >= local: start from the exact quotient, then
  // correct for rounding by at most a step or two.
  const std::int64_t rate = kBillion + drift_ppb_;
  std::int64_t d = mul_div_floor(local.count(), kBillion, rate);
  auto advanced = [&](std::int64_t x) { return x + mul_div_floor(x, drift_ppb_, kBillion); };
  while (advanced(d) < local.count()) ++d;
  while (d > 0 && advanced(d - 1) >= local.count()) --d;
  return Duration(d);
}

void ClockModel::set_drift_at(Time at, std::int64_t drift_ppb) {
  ELECTSIM_ASSERT(drift_ppb > -kBillion, "a clock cannot run backwards or stand still");
  const LocalTime reading = local_at(at);
  const LocalTime oscillator = monotonic_at(at);
  anchor_true_ = at;
  anchor_local_ = reading.ns;
  anchor_monotonic_ = oscillator.ns;
  // Steps up to `at` are now part of the anchor.
  steps_.erase(
      std::remove_if(steps_.begin(), steps_.end(), [&](const ClockStep& s) { return s.at <= at; }),
      steps_.end());
  drift_ppb_ = drift_ppb;
}

void ClockModel::add_step(Time at, Duration by) {
  ClockStep step{at, by};
  auto pos = std::upper_bound(steps_.begin(), steps_.end(), step,
                              [](const ClockStep& a, const ClockStep& b) { return a.at < b.at; });
  steps_.insert(pos, step);
}

void ClockModel::set_offset_at(Time at, Duration offset) {
  // The clock jumps so that it reads true time + offset from `at` on.
  const LocalTime reading = local_at(at);
  add_step(at, Duration(at.ns + offset.count() - reading.ns));
}

}  // namespace electsim::sim
