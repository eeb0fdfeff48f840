// A map from 64-bit keys to 32-bit values for lookups on the kernel's hot path: open addressing
// with linear probing in one array, so a lookup is a multiply and, nearly always, one cache line,
// where a node-based hash map chases a pointer and divides. It cannot be iterated at all, so no
// outcome can depend on its order.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace electsim::sim {

class FlatIndex {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  std::size_t size() const { return size_; }

  // The value under `key`, or nullopt.
  std::optional<std::uint32_t> find(std::uint64_t key) const {
    if (slots_.empty()) return std::nullopt;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.value == kNone) return std::nullopt;
      if (s.key == key) return s.value;
    }
  }

  // The value under `key`, storing `value` there first if the key is new; second says whether
  // it was. `value` is not kNone.
  std::pair<std::uint32_t, bool> try_emplace(std::uint64_t key, std::uint32_t value) {
    ELECTSIM_ASSERT(value != kNone, "kNone marks an empty slot");
    // At most half full, so that probe runs stay short.
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.value == kNone) {
        s = Slot{key, value};
        ++size_;
        return {value, true};
      }
      if (s.key == key) return {s.value, false};
    }
  }

  // Removes `key`; false if it was absent. The entries after it in its probe run move back into
  // the gap (backward-shift deletion), so no tombstone is left to lengthen later probes.
  bool erase(std::uint64_t key) {
    if (slots_.empty()) return false;
    std::size_t gap = home(key);
    for (;; gap = (gap + 1) & mask()) {
      if (slots_[gap].value == kNone) return false;
      if (slots_[gap].key == key) break;
    }
    for (std::size_t i = (gap + 1) & mask(); slots_[i].value != kNone; i = (i + 1) & mask()) {
      // An entry may fill the gap only if its home is not after the gap on the way to it: its
      // probe from home then still passes through the gap.
      const std::size_t from_home = (i - home(slots_[i].key)) & mask();
      const std::size_t from_gap = (i - gap) & mask();
      if (from_home >= from_gap) {
        slots_[gap] = slots_[i];
        gap = i;
      }
    }
    slots_[gap] = Slot{};
    --size_;
    return true;
  }

  // Removes every key, keeping the slots for the next ones.
  void clear() {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    size_ = 0;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t value = kNone;
  };

  std::size_t mask() const { return slots_.size() - 1; }
  // Fibonacci hashing: the high bits of key x 2^64/phi spread keys that differ in any bits.
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e37'79b9'7f4a'7c15ULL) >> shift_);
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const std::size_t capacity = old.empty() ? 16 : 2 * old.size();
    slots_.assign(capacity, Slot{});
    shift_ = 64 - std::countr_zero(capacity);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.value != kNone) try_emplace(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;  // a power of two long
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace electsim::sim
