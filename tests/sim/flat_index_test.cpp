// The kernel's connection index and the store's lease index: every key finds the value first
// stored under it, through growth, colliding homes and erasures, and an absent or erased key is
// never found.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "sim/flat_index.hpp"
#include "sim/rng.hpp"

using namespace electsim::sim;

TEST_CASE("flat index: the first value stored under a key stays, through growth") {
  FlatIndex index;
  CHECK_FALSE(index.find(7).has_value());
  CHECK(index.try_emplace(7, 1) == std::pair<std::uint32_t, bool>{1, true});
  CHECK(index.try_emplace(7, 2) == std::pair<std::uint32_t, bool>{1, false});
  CHECK(index.find(7) == std::optional<std::uint32_t>{1});
  CHECK(index.size() == 1);
}

TEST_CASE("flat index: random keys agree with a map") {
  // Keys shaped like the kernel's (from << 32 | to, endpoints negative for servers) and keys
  // that differ only in high bits, which a hash of the low bits alone would pile up.
  Rng rng(11, StreamPurpose::bench, 0);
  FlatIndex index;
  std::map<std::uint64_t, std::uint32_t> reference;
  for (std::uint32_t i = 0; i < 20000; ++i) {
    std::uint64_t key = 0;
    switch (rng.between(0, 2)) {
      case 0: {
        const auto from = static_cast<std::int32_t>(rng.between(-40, 1000));
        const auto to = static_cast<std::int32_t>(rng.between(-40, 1000));
        key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
              static_cast<std::uint32_t>(to);
        break;
      }
      case 1:
        key = static_cast<std::uint64_t>(rng.between(0, 4000)) << 40;
        break;
      default:
        key = static_cast<std::uint64_t>(rng.between(0, 1'000'000));
        break;
    }
    const auto [it, created] = reference.try_emplace(key, i);
    const auto [value, inserted] = index.try_emplace(key, i);
    REQUIRE(inserted == created);
    REQUIRE(value == it->second);
    const std::uint64_t probe = static_cast<std::uint64_t>(rng.between(0, 1'000'000)) << 20;
    const auto found = reference.find(probe);
    REQUIRE(
        index.find(probe) ==
        (found == reference.end() ? std::nullopt : std::optional<std::uint32_t>{found->second}));
  }
  REQUIRE(index.size() == reference.size());
  for (const auto& [key, value] : reference) REQUIRE(index.find(key) == value);
}

TEST_CASE("flat index: erasing keys in any order agrees with a map") {
  // Many keys share a home in a small table, so erasures shift long probe runs, including runs
  // that wrap past the table's end.
  Rng rng(12, StreamPurpose::bench, 0);
  FlatIndex index;
  std::map<std::uint64_t, std::uint32_t> reference;
  CHECK_FALSE(index.erase(3));
  for (std::uint32_t i = 0; i < 40000; ++i) {
    const std::uint64_t key = static_cast<std::uint64_t>(rng.between(0, 300));
    if (rng.between(0, 2) == 0) {
      REQUIRE(index.erase(key) == (reference.erase(key) == 1));
    } else {
      const auto [it, created] = reference.try_emplace(key, i);
      REQUIRE(index.try_emplace(key, i) == std::pair<std::uint32_t, bool>{it->second, created});
    }
    REQUIRE(index.size() == reference.size());
    const std::uint64_t probe = static_cast<std::uint64_t>(rng.between(0, 300));
    const auto found = reference.find(probe);
    REQUIRE(
        index.find(probe) ==
        (found == reference.end() ? std::nullopt : std::optional<std::uint32_t>{found->second}));
  }
  for (const auto& [key, value] : reference) REQUIRE(index.find(key) == value);
  for (const auto& [key, value] : reference) REQUIRE(index.erase(key));
  CHECK(index.size() == 0);
  CHECK_FALSE(index.find(0).has_value());
}

TEST_CASE("flat index: clear forgets every key and takes new ones") {
  FlatIndex index;
  for (std::uint64_t key = 1; key <= 100; ++key) index.try_emplace(key, 0);
  REQUIRE(index.size() == 100);
  index.clear();
  CHECK(index.size() == 0);
  for (std::uint64_t key = 1; key <= 100; ++key) CHECK_FALSE(index.find(key).has_value());
  CHECK(index.try_emplace(42, 3) == std::pair<std::uint32_t, bool>{3, true});
  CHECK(index.find(42) == std::optional<std::uint32_t>{3});
  CHECK(index.size() == 1);
}
