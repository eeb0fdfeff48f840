// The send times of the last second's requests, oldest first: a ring that grows by doubling, so
// that a herd's busiest second is found without an allocation per request.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/time.hpp"

namespace electsim::analysis {

class TimeRing {
 public:
  std::size_t size() const { return size_; }
  sim::Time at(std::size_t i) const { return items_[(head_ + i) % items_.size()]; }
  // Forgets every time at or before `t` (the ring is in time order).
  void drop_through(sim::Time t) {
    while (size_ > 0 && at(0) <= t) {
      head_ = (head_ + 1) % items_.size();
      --size_;
    }
  }
  // Adds `t`, no earlier than every time held.
  void push(sim::Time t) {
    if (size_ == items_.size()) {
      std::vector<sim::Time> grown(std::max<std::size_t>(16, items_.size() * 2));
      for (std::size_t i = 0; i < size_; ++i) grown[i] = at(i);
      items_ = std::move(grown);
      head_ = 0;
    }
    items_[(head_ + size_) % items_.size()] = t;
    ++size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  std::vector<sim::Time> items_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace electsim::analysis
