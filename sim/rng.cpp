// Seeded randomness on pcg32 (O'Neill 2014), one stream per (seed, purpose, index). The seeding
// mixer is splitmix64's finalizer (Steele, Lea & Flood 2014); bounded integers use rejection as in
// OpenBSD's arc4random_uniform; the normal draw is Box-Muller (1958).
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/assert.hpp"
#include "sim/rng.hpp"

namespace electsim::sim {
namespace {

// splitmix64: a bijection on 64-bit values whose outputs for neighbouring inputs look unrelated.
constexpr std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Stream derivation. Every trace depends on it: changing any step below changes every run.
//   h1        = splitmix64(seed)
//   h2        = splitmix64(h1 ^ purpose)
//   h3        = splitmix64(h2 ^ index)
//   initstate = h3
//   stream    = splitmix64(h3 ^ 0x5851f42d4c957f2d)   (pcg32 uses it as (stream << 1) | 1)
// Each step is a bijection of its new input for a fixed prefix, so two triples that differ in
// one component never collide, and seeds 1, 2, 3 or node indexes 0, 1, 2 give unrelated streams
// rather than neighbouring states of one sequence.
pcg32 derive_engine(std::uint64_t seed, StreamPurpose purpose, std::uint64_t index) {
  const std::uint64_t h1 = splitmix64(seed);
  const std::uint64_t h2 = splitmix64(h1 ^ static_cast<std::uint64_t>(purpose));
  const std::uint64_t h3 = splitmix64(h2 ^ index);
  return pcg32(h3, splitmix64(h3 ^ 0x5851f42d4c957f2dULL));
}

constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;  // 2^-53
constexpr double kTwoPi = 6.283185307179586476925286766559;

}  // namespace

Rng::Rng(std::uint64_t seed, StreamPurpose purpose, std::uint64_t index)
    : engine_(derive_engine(seed, purpose, index)) {}

// High half first: the order is part of the stream's definition.
std::uint64_t Rng::next_u64() {
  const std::uint64_t hi = engine_();
  const std::uint64_t lo = engine_();
  return (hi << 32) | lo;
}

std::uint64_t Rng::below_wide(std::uint64_t bound) {
  ELECTSIM_ASSERT(bound > 0, "Rng::below needs a positive bound");
  const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const std::uint64_t r = next_u64();
    if (r >= threshold) return r % bound;
  }
}

std::int64_t Rng::between_wide(std::int64_t lo, std::int64_t hi) {
  ELECTSIM_ASSERT(lo <= hi, "Rng::between needs lo <= hi");
  // The span is computed modulo 2^64, so [INT64_MIN, INT64_MAX] does not overflow.
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const std::uint64_t offset =
      span == std::numeric_limits<std::uint64_t>::max() ? next_u64() : below(span + 1);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
}

// Always one draw, whatever ppm is, so that changing a probability never shifts later draws.
bool Rng::chance(Ppm ppm) {
  ELECTSIM_ASSERT(ppm <= kPpmOne, "Rng::chance takes parts per million, at most 1e6");
  return below(kPpmOne) < ppm;
}

double Rng::unit() {
  return static_cast<double>(next_u64() >> 11) * kTwoToMinus53;
}

double Rng::unit_open_zero() {
  return static_cast<double>((next_u64() >> 11) + 1) * kTwoToMinus53;
}

double Rng::standard_normal() {
  const double u1 = unit_open_zero();  // never 0: log() stays finite
  const double u2 = unit();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace electsim::sim
