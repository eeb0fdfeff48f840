// Clock model: offset, drift both ways, steps both ways, and the inverse used to arm timers.
#include <catch2/catch.hpp>

#include "sim/clock.hpp"
#include "sim/rng.hpp"

using namespace electsim::sim;

TEST_CASE("clock: a perfect clock reads true time plus its offset") {
  ClockModel clock(Duration(250ms), 0, {});
  CHECK(clock.local_at(Time(0)).ns == Duration(250ms).count());
  CHECK(clock.local_at(Time(Duration(10s))).ns == Duration(10s + 250ms).count());
  CHECK(clock.true_duration_for(150ms) == 150ms);
}

TEST_CASE("clock: drift in ppb speeds up or slows down the reading, both ways") {
  auto [drift_ppb, after_1000s] = GENERATE(table<std::int64_t, std::int64_t>({
      {100'000, 1000'100'000'000},  // +100 ppm: 100 ms ahead after 1000 s
      {-100'000, 999'900'000'000},  // -100 ppm: 100 ms behind
      {1, 1000'000'001'000},        // 1 ppb: 1 us after 1000 s
      {0, 1000'000'000'000},
  }));
  ClockModel clock(Duration(0), drift_ppb, {});
  CHECK(clock.local_at(Time(Duration(1000s))).ns == after_1000s);
}

TEST_CASE("clock: steps jump the reading forward and backward at their true time") {
  ClockModel clock(Duration(0), 0, {{Time(Duration(5s)), Duration(-2s)}, {Time(Duration(2s)), 1s}});
  CHECK(clock.local_at(Time(Duration(1s))).ns == Duration(1s).count());
  CHECK(clock.local_at(Time(Duration(2s))).ns == Duration(3s).count());
  CHECK(clock.local_at(Time(Duration(4s))).ns == Duration(5s).count());
  CHECK(clock.local_at(Time(Duration(5s))).ns == Duration(4s).count());  // stepped back 2 s
  CHECK(clock.local_at(Time(Duration(6s))).ns == Duration(5s).count());
}

TEST_CASE("clock: a timer's true duration is the least that advances the oscillator enough") {
  Rng rng(7, StreamPurpose::bench, 1);
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t drift = rng.between(-500'000, 500'000);
    const Duration local(rng.between(0, 10'000'000'000));
    ClockModel clock(Duration(rng.between(-1'000'000'000, 1'000'000'000)), drift, {});
    const Duration d = clock.true_duration_for(local);
    INFO("drift=" << drift << " local=" << local.count() << " true=" << d.count());
    // Measured from any start: the oscillator advances by at least `local` over d, and by less
    // than `local` over d - 1 (up to the floor of the reading).
    const Time start(rng.between(0, 100'000'000'000));
    CHECK((clock.local_at(start + d) - clock.local_at(start)).count() >= local.count() - 1);
    if (d.count() > 0) {
      CHECK((clock.local_at(start + d - Duration(1)) - clock.local_at(start)).count() <=
            local.count());
    }
  }
}

TEST_CASE("clock: steps do not move timers, which run on the oscillator") {
  ClockModel clock(Duration(0), 0, {{Time(Duration(1s)), Duration(10s)}});
  CHECK(clock.true_duration_for(500ms) == 500ms);
}

TEST_CASE("clock: changing drift mid-run keeps the reading continuous") {
  ClockModel clock(Duration(0), 1'000'000, {});  // +1000 ppm
  const LocalTime before = clock.local_at(Time(Duration(100s)));
  CHECK(before.ns == Duration(100s + 100ms).count());
  clock.set_drift_at(Time(Duration(100s)), -1'000'000);
  CHECK(clock.local_at(Time(Duration(100s))) == before);
  CHECK(clock.local_at(Time(Duration(200s))).ns == Duration(200s).count());
}

TEST_CASE("clock: set_offset makes the clock read true time plus the new offset") {
  ClockModel clock(Duration(3s), 50'000, {});
  clock.set_offset_at(Time(Duration(20s)), Duration(-1s));
  CHECK(clock.local_at(Time(Duration(20s))).ns == Duration(19s).count());
}

TEST_CASE(
    "clock: the monotonic reading follows the oscillator through drift changes and ignores "
    "steps and offset changes") {
  ClockModel clock(Duration(250ms), 100'000, {{Time(Duration(2s)), Duration(1h)}});
  // Before any step it reads as the wall clock does.
  CHECK(clock.monotonic_at(Time(Duration(1s))) == clock.local_at(Time(Duration(1s))));
  // A configured step, a fault's step and an offset change move the wall reading only.
  clock.add_step(Time(Duration(3s)), -5s);
  clock.set_offset_at(Time(Duration(4s)), Duration(-10s));
  const auto elapsed = [&](Duration from, Duration to) {
    return clock.monotonic_at(Time(to)) - clock.monotonic_at(Time(from));
  };
  CHECK(elapsed(1s, 5s) == Duration(4s + 400us));  // 4 s at +100 ppm
  CHECK(clock.local_at(Time(Duration(5s))).ns == Duration(-5s).count() + 100'000);
  // A drift change keeps the monotonic reading continuous and changes its rate from then on.
  const LocalTime before = clock.monotonic_at(Time(Duration(6s)));
  clock.set_drift_at(Time(Duration(6s)), -100'000);
  CHECK(clock.monotonic_at(Time(Duration(6s))) == before);
  CHECK(elapsed(6s, 16s) == Duration(10s - 1ms));
  // Timers run on the same oscillator: a timer's true duration advances it exactly as asked.
  const Duration local = 3s;
  const Duration true_d = clock.true_duration_for(local);
  CHECK(elapsed(16s, 16s + true_d) >= local);
}
