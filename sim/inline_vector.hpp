// A sequence whose first N elements live inside it, and only a longer one on the heap: for values
// made and dropped on every event (a Raft append's entries: one or two in steady state), so that
// carrying them allocates nothing. Contiguous like a std::vector; only what its users need.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace electsim::sim {

template <typename T, std::size_t N>
class InlineVector {
 public:
  InlineVector() = default;
  InlineVector(const InlineVector&) = default;
  InlineVector& operator=(const InlineVector&) = default;
  // A moved-from one is empty (the default would keep its size over moved-from elements).
  InlineVector(InlineVector&& other) noexcept
      : inline_(std::move(other.inline_)),
        spill_(std::move(other.spill_)),
        size_(std::exchange(other.size_, 0)) {}
  InlineVector& operator=(InlineVector&& other) noexcept {
    inline_ = std::move(other.inline_);
    spill_ = std::move(other.spill_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~InlineVector() = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return size_ <= N ? inline_.data() : spill_.data(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  operator std::span<const T>() const {  // NOLINT(google-explicit-constructor): a view of it
    return {data(), size_};
  }

  void push_back(T value) {
    if (size_ < N) {
      inline_[size_++] = std::move(value);
      return;
    }
    if (size_ == N) {
      // The N+1st: every element moves to the heap, where the rest follow.
      spill_.reserve(2 * N);
      for (T& v : inline_) spill_.push_back(std::exchange(v, T{}));
    }
    spill_.push_back(std::move(value));
    ++size_;
  }

 private:
  std::array<T, N> inline_{};
  std::vector<T> spill_;  // all the elements, once there are more than N
  std::size_t size_ = 0;
};

}  // namespace electsim::sim
