// The kernel's event queue: a radix heap on true time, with ties in insertion order.
//
// A discrete-event kernel never schedules into the past, so the queue is monotone: every key
// pushed is at or after the time last popped. A radix heap uses that. A key sits in the bucket
// named by the highest bit in which its time differs from the last popped time (bucket 0: the
// same time). Pushing is an append. Popping takes bucket 0 in order; when it runs dry, the
// lowest non-empty bucket is split: its earliest time becomes the last popped time and each of
// its keys moves to a lower bucket. A key moves down at most 64 times in all, usually a few,
// and every move is a sequential append, so the cost per event barely grows with the number
// of events queued, where a heap's grows with its depth and its cache misses.
//
// Equal times pop in `order` (the kernel's insertion sequence): bucket 0 is kept sorted by it.
// A key pushed at the current time normally has the highest order yet and is appended; one that
// returns to an earlier place in the sequence (an adopted timer entry) is inserted at it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/assert.hpp"

namespace electsim::sim {

class EventQueue {
 public:
  // A queued event's place in the total order: true time, then `order` (FIFO ties). The kernel
  // packs its sequence number into the high 40 bits of `order` and the entry's slot into the low
  // 24, so a key is 16 bytes.
  struct Key {
    std::int64_t time;
    std::uint64_t order;
    std::uint32_t slot() const { return static_cast<std::uint32_t>(order & 0xff'ffff); }
  };

  EventQueue() { buckets_[0].reserve(64); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // Queues `key`; its time is at or after the last popped time.
  void push(Key key) {
    ELECTSIM_ASSERT(key.time >= last_, "the event queue is monotone");
    ++size_;
    if (key.time == last_) {
      std::vector<Key>& now = buckets_[0];
      if (now.size() == head_ || now.back().order < key.order) {
        now.push_back(key);
        return;
      }
      const auto at =
          std::upper_bound(now.begin() + static_cast<std::ptrdiff_t>(head_), now.end(), key,
                           [](const Key& a, const Key& b) { return a.order < b.order; });
      now.insert(at, key);
      return;
    }
    const int b = bucket_of(key.time);
    buckets_[static_cast<std::size_t>(b)].push_back(key);
    occupied_ |= std::uint64_t{1} << (b - 1);
  }

  // Whether the earliest key's time is at most `until`. When it is not, nothing changed that a
  // later push before that time could contradict.
  bool ready(std::int64_t until) {
    if (head_ == buckets_[0].size() && (occupied_ == 0 || !split_lowest(until))) return false;
    return last_ <= until;
  }

  // The slot of the key `ahead` places after the next one to pop, if bucket 0 holds it: what the
  // kernel will touch soon, for it to fetch ahead of time.
  const Key* upcoming(std::size_t ahead) const {
    const std::vector<Key>& now = buckets_[0];
    return head_ + ahead < now.size() ? &now[head_ + ahead] : nullptr;
  }

  // Removes the earliest key; only after ready() said yes.
  Key pop() {
    ELECTSIM_ASSERT(head_ < buckets_[0].size(), "pop() follows ready()");
    --size_;
    return buckets_[0][head_++];
  }

 private:
  // 1 + the index of the highest bit in which `time` differs from last_ (times are never
  // negative, so the sign bit never differs).
  int bucket_of(std::int64_t time) const {
    const auto diff = static_cast<std::uint64_t>(time ^ last_);
    return 64 - std::countl_zero(diff);
  }

  // Bucket 0 is empty: moves the keys of the lowest occupied bucket down, if its earliest time
  // is at most `until`. Left alone otherwise, so that a push before that time stays legal.
  bool split_lowest(std::int64_t until) {
    const int b = std::countr_zero(occupied_) + 1;
    std::vector<Key>& from = buckets_[static_cast<std::size_t>(b)];
    std::int64_t earliest = from.front().time;
    for (const Key& k : from) earliest = std::min(earliest, k.time);
    if (earliest > until) return false;
    std::vector<Key>& now = buckets_[0];
    now.clear();
    head_ = 0;
    last_ = earliest;
    occupied_ &= ~(std::uint64_t{1} << (b - 1));
    for (const Key& k : from) {
      if (k.time == earliest) {
        now.push_back(k);
        continue;
      }
      const int to = bucket_of(k.time);
      buckets_[static_cast<std::size_t>(to)].push_back(k);
      occupied_ |= std::uint64_t{1} << (to - 1);
    }
    from.clear();
    // A bucket that held a burst gives its memory back rather than keep it for the next: the
    // buckets' capacities would otherwise add up to several times the largest queue.
    if (from.capacity() > kKeepCapacity) std::vector<Key>().swap(from);
    if (now.size() > 1) {
      std::sort(now.begin(), now.end(),
                [](const Key& x, const Key& y) { return x.order < y.order; });
    }
    return true;
  }

  static constexpr std::size_t kKeepCapacity = 4096;

  std::array<std::vector<Key>, 65> buckets_;
  std::size_t head_ = 0;        // the next key of bucket 0 to pop
  std::uint64_t occupied_ = 0;  // bit b-1: bucket b (1 to 64) holds keys
  std::int64_t last_ = 0;       // the time of bucket 0's keys, the last time split
  std::size_t size_ = 0;
};

}  // namespace electsim::sim
