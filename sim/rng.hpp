// Seeded randomness: one pcg32 stream per (purpose, index), derived from the run's root seed, so
// that adding a node or a message never shifts the draws of another component (ns-3's stream
// numbers). Distributions are written here on top of raw pcg draws: std::*_distribution differs
// between standard libraries and would break g++/clang++ trace equality.
#pragma once

#include <cstdint>

#include <pcg_random.hpp>

namespace electsim::sim {

// Who draws. The numeric values are part of the trace format's reproducibility: never renumber.
enum class StreamPurpose : std::uint32_t {
  network = 1,
  node = 2,      // a protocol's own draws (election timeouts, jitter), index = node id
  workload = 3,  // the leader's write workload, index = node id
  faults = 4,    // role resolution (`random`, `follower`) when a fault fires
  server = 5,    // a server's streams: index 2 x its address slot (sim/ids.hpp), + 1 for the second
  bench = 6,
  fault_schedule = 7,  // the times and durations of `random_faults`, index = generator
  clock_draw = 8,      // clock ranges drawn per run, index = node id (node count: the store)
  disk = 9,            // fsync latencies: index 2 x node id, or 2 x server slot + 1
  nemesis = 10,        // electsim search: a run's fault schedule, index 0
};

// Probabilities live as integer parts per million from load time on.
using Ppm = std::uint32_t;
inline constexpr Ppm kPpmOne = 1'000'000;

class Rng {
 public:
  Rng(std::uint64_t seed, StreamPurpose purpose, std::uint64_t index);

  std::uint32_t next_u32() { return engine_(); }
  std::uint64_t next_u64();
  // Uniform integer in [0, bound), unbiased; bound > 0. Bounds up to 2^32 take Lemire's nearly
  // divisionless path (one 32-bit draw, a division only in the rare rejection band); it is inline
  // because latencies and timeouts draw it on every message.
  std::uint64_t below(std::uint64_t bound) {
    if (bound - 1 < (std::uint64_t{1} << 32)) {  // 1 <= bound <= 2^32
      std::uint64_t m = static_cast<std::uint64_t>(engine_()) * bound;
      if ((m & 0xffff'ffffu) < bound) [[unlikely]] {
        const std::uint64_t threshold = ((std::uint64_t{1} << 32) - bound) % bound;
        while ((m & 0xffff'ffffu) < threshold) m = static_cast<std::uint64_t>(engine_()) * bound;
      }
      return m >> 32;
    }
    return below_wide(bound);
  }
  // Uniform integer in [lo, hi], inclusive; lo <= hi.
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (lo <= hi && span < (std::uint64_t{1} << 32)) {
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + below(span + 1));
    }
    return between_wide(lo, hi);
  }
  // True with probability ppm / 1e6.
  bool chance(Ppm ppm);
  // Uniform double in [0, 1) with 53 random bits.
  double unit();
  // Uniform double in (0, 1], safe for log().
  double unit_open_zero();
  // Standard normal by Box-Muller (no cached second value: the stream stays easy to reason about).
  double standard_normal();

 private:
  std::uint64_t below_wide(std::uint64_t bound);
  std::int64_t between_wide(std::int64_t lo, std::int64_t hi);
  pcg32 engine_;
};

}  // namespace electsim::sim
