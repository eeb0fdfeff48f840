// The election nodes other than one, in ascending order, as two runs of one list the kernel keeps
// once: a world of N nodes holds N ids for its peer lists, not N x (N - 1).
#pragma once

#include <cstddef>
#include <iterator>
#include <span>

#include "sim/assert.hpp"
#include "sim/ids.hpp"

namespace electsim::sim {

class PeerSet {
 public:
  PeerSet() = default;
  // Every id in `below`, then every id in `above`; each sorted, and every id of `below` smaller.
  PeerSet(std::span<const NodeId> below, std::span<const NodeId> above)
      : below_(below), above_(above) {}
  explicit PeerSet(std::span<const NodeId> all) : below_(all) {}

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NodeId;
    using difference_type = std::ptrdiff_t;
    using pointer = const NodeId*;
    using reference = const NodeId&;

    iterator() = default;
    iterator(const PeerSet* set, std::size_t index) : set_(set), index_(index) {}
    reference operator*() const { return set_->at(index_); }
    iterator& operator++() {
      ++index_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++index_;
      return old;
    }
    bool operator==(const iterator& other) const { return index_ == other.index_; }

   private:
    const PeerSet* set_ = nullptr;
    std::size_t index_ = 0;
  };

  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, size()); }
  std::size_t size() const { return below_.size() + above_.size(); }
  bool empty() const { return size() == 0; }
  const NodeId& operator[](std::size_t i) const { return at(i); }
  const NodeId& front() const { return at(0); }
  const NodeId& back() const { return at(size() - 1); }

 private:
  const NodeId& at(std::size_t i) const {
    ELECTSIM_ASSERT(i < size(), "a peer within the set");
    return i < below_.size() ? below_[i] : above_[i - below_.size()];
  }

  std::span<const NodeId> below_;
  std::span<const NodeId> above_;
};

}  // namespace electsim::sim
