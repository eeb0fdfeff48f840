// The kernel's event queue: (true time, order) keys, ties in insertion order, in one of two forms
// chosen by its size.
//
// A discrete-event kernel never schedules into the past, so the queue is monotone: every key
// pushed is at or after the time last popped.
//
// While few keys wait (a world of a few nodes holds a dozen), they sit in a binary heap: a push
// climbs a level or two, a pop sinks about log2(n) of them, and the whole heap stays in one or
// two cache lines. A radix heap's split, which nearly every pop of such a world needs (its events
// rarely share a time), costs several times that.
//
// Once many keys wait, they move to a radix heap, whose cost per event barely grows with the
// number queued, where a binary heap's grows with its depth and its cache misses. A key sits in
// the bucket named by the highest bit in which its time differs from the last popped time
// (bucket 0: the same time). Pushing is an append. Popping takes bucket 0 in order; when it runs
// dry, the lowest non-empty bucket is split: its earliest time becomes the last popped time and
// each of its keys moves to a lower bucket. A key moves down at most 64 times in all, usually a
// few, and every move is a sequential append.
//
// The queue moves to the radix heap when it reaches `to_radix` keys and back to the binary heap
// when it falls to a quarter of that, so a size near either bound does not move it back and
// forth. Both forms pop the same key, the least (time, order): which one holds the keys never
// changes an outcome.
//
// Equal times pop in `order` (the kernel's insertion sequence). In the radix heap bucket 0 is
// kept sorted by it: a key pushed at the current time normally has the highest order yet and is
// appended; one that returns to an earlier place in the sequence (an adopted timer entry) is
// inserted at it.
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

  // Where the queue moves to the radix heap, measured on the benchmark's small and large worlds
  // (electsim_bench heartbeat-5 and scale).
  static constexpr std::size_t kToRadix = 1024;

  explicit EventQueue(std::size_t to_radix = kToRadix)
      : to_radix_(std::max<std::size_t>(to_radix, 4)), to_heap_(to_radix_ / 4) {
    heap_.reserve(64);
    buckets_[0].reserve(64);
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Whether the keys are in the radix heap (for tests: both forms are exercised).
  bool radix() const { return radix_; }

  // Queues `key`; its time is at or after the last popped time.
  void push(Key key) {
    ELECTSIM_ASSERT(key.time >= last_, "the event queue is monotone");
    ++size_;
    if (!radix_) [[likely]] {
      if (hole_) {
        // The key just popped still sits at the root: the new one takes its place and sinks,
        // one pass where a pop and a push would make two.
        hole_ = false;
        sift_down(key);
        return;
      }
      heap_push(key);
      if (heap_.size() >= to_radix_) [[unlikely]]
        to_radix();
      return;
    }
    radix_push(key);
  }

  // Whether the earliest key's time is at most `until`. When it is not, nothing changed that a
  // later push before that time could contradict.
  bool ready(std::int64_t until) {
    if (!radix_) [[likely]] {
      if (hole_) {
        hole_ = false;
        heap_pop();
      }
      return !heap_.empty() && heap_.front().time <= until;
    }
    if (head_ == buckets_[0].size() && (occupied_ == 0 || !split_lowest(until))) return false;
    return last_ <= until;
  }

  // The key `ahead` places after the next one to pop, if the radix heap's bucket 0 holds it: what
  // the kernel will touch soon, for it to fetch ahead of time. A binary heap's keys are few, and
  // their entries already in the caches: nullptr.
  const Key* upcoming(std::size_t ahead) const {
    if (!radix_) return nullptr;
    const std::vector<Key>& now = buckets_[0];
    return head_ + ahead < now.size() ? &now[head_ + ahead] : nullptr;
  }

  // Removes the earliest key; only after ready() said yes.
  Key pop() {
    --size_;
    if (!radix_) [[likely]] {
      ELECTSIM_ASSERT(!heap_.empty() && !hole_, "pop() follows ready()");
      const Key top = heap_.front();
      last_ = top.time;
      // Taken out lazily: the next push fills the root, or the next ready() removes it.
      hole_ = true;
      return top;
    }
    ELECTSIM_ASSERT(head_ < buckets_[0].size(), "pop() follows ready()");
    const Key top = buckets_[0][head_++];
    if (size_ <= to_heap_) [[unlikely]]
      to_heap();
    return top;
  }

 private:
  static bool before(const Key& a, const Key& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }

  // ---- The binary heap: heap_[0] is the least key; a key's children are at 2i+1 and 2i+2.
  void heap_push(Key key) {
    std::size_t i = heap_.size();
    heap_.push_back(key);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(key, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = key;
  }

  // Removes heap_[0]: the last key sinks from the root into the hole.
  void heap_pop() {
    const Key last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
  }

  // Puts `key` at the root in place of what is there, and sinks it below every lesser child.
  void sift_down(Key key) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], key)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = key;
  }

  // ---- The radix heap.
  // 1 + the index of the highest bit in which `time` differs from last_ (times are never
  // negative, so the sign bit never differs).
  int bucket_of(std::int64_t time) const {
    const auto diff = static_cast<std::uint64_t>(time ^ last_);
    return 64 - std::countl_zero(diff);
  }

  void radix_push(Key key) {
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

  // ---- Moving between the forms. last_ stays the last popped time, below every key queued.
  [[gnu::noinline]] void to_radix() {
    ELECTSIM_ASSERT(!hole_, "the heap is whole when it moves");
    radix_ = true;
    head_ = 0;
    buckets_[0].clear();
    for (const Key& k : heap_) radix_push(k);
    heap_.clear();
    if (heap_.capacity() > kKeepCapacity) std::vector<Key>().swap(heap_);
  }

  [[gnu::noinline]] void to_heap() {
    radix_ = false;
    heap_.clear();
    const std::vector<Key>& now = buckets_[0];
    heap_.insert(heap_.end(), now.begin() + static_cast<std::ptrdiff_t>(head_), now.end());
    for (std::vector<Key>& bucket : buckets_) {
      if (&bucket != &now) heap_.insert(heap_.end(), bucket.begin(), bucket.end());
      bucket.clear();
    }
    head_ = 0;
    occupied_ = 0;
    std::make_heap(heap_.begin(), heap_.end(),
                   [](const Key& a, const Key& b) { return before(b, a); });
  }

  static constexpr std::size_t kKeepCapacity = 4096;

  std::size_t to_radix_;
  std::size_t to_heap_;
  bool radix_ = false;
  bool hole_ = false;  // the binary heap's root was popped and awaits a key or its removal
  std::vector<Key> heap_;
  std::array<std::vector<Key>, 65> buckets_;
  std::size_t head_ = 0;        // the next key of bucket 0 to pop
  std::uint64_t occupied_ = 0;  // bit b-1: bucket b (1 to 64) holds keys
  // The last popped time (radix heap: the time of bucket 0's keys, the last time split).
  std::int64_t last_ = 0;
  std::size_t size_ = 0;
};

}  // namespace electsim::sim
