// A node's (or the store's) clock: local = offset + (1 + drift)·true + steps.
// Drift is in parts per billion (integer): 100 ppm = 100'000 ppb. Steps are NTP-style jumps applied
// at a true time. Timers run on the oscillator: they advance at the drifted rate and are not moved
// by steps, like CLOCK_MONOTONIC; now() includes steps, like the wall clock a lease deadline is
// computed from, and monotonic_at() reads the oscillator alone. All conversions are exact integer
// arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/assert.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

struct ClockStep {
  Time at;
  Duration by;  // positive: jumps forward
};

// A machine's clock as a scenario configures it.
struct ClockConfig {
  Duration offset{0};
  std::int64_t drift_ppb = 0;
  std::vector<ClockStep> steps;
};

// floor(a * b / c) for c > 0, exact for the magnitudes a run reaches: how a clock's drift term
// rounds. Pictures that mirror a clock read it with the same rounding.
std::int64_t mul_div_floor(std::int64_t a, std::int64_t b, std::int64_t c);

class ClockModel {
 public:
  ClockModel() = default;
  ClockModel(Duration offset, std::int64_t drift_ppb, std::vector<ClockStep> steps);

  // What the clock reads at true time t.
  LocalTime local_at(Time t) const;
  // What the oscillator alone reads at true time t: the reading without steps, like
  // CLOCK_MONOTONIC (or the monotonic part of Go's time.Now). Only its differences mean anything;
  // it starts at the configured offset, so that without steps it equals local_at.
  LocalTime monotonic_at(Time t) const;
  // The true duration after which the oscillator has advanced by `local` (rounded up, so a timer
  // never fires before its local duration elapsed). local >= 0.
  // Inline for a clock without drift, where it is the identity: every timer asks it.
  Duration true_duration_for(Duration local) const {
    ELECTSIM_ASSERT(local.count() >= 0, "timers are set for non-negative durations");
    return drift_ppb_ == 0 ? local : drifted_duration_for(local);
  }

  // Faults may change the clock during a run; the change applies from true time `at` on, keeping
  // the reading continuous (drift) or jumping (step).
  void set_drift_at(Time at, std::int64_t drift_ppb);
  void add_step(Time at, Duration by);
  void set_offset_at(Time at, Duration offset);

  std::int64_t drift_ppb() const { return drift_ppb_; }

 private:
  Duration drifted_duration_for(Duration local) const;

  // The reading is anchored at (anchor_true_, anchor_local_) and advances at (1e9 + drift)/1e9.
  Time anchor_true_{};
  std::int64_t anchor_local_ = 0;
  std::int64_t anchor_monotonic_ = 0;  // the oscillator's reading at anchor_true_
  std::int64_t drift_ppb_ = 0;
  std::vector<ClockStep> steps_;  // sorted by time; applied after the anchor
};

}  // namespace electsim::sim
