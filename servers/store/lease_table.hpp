// The store's live leases, found by id, and their deadlines in time order
// (servers/store/store.hpp).
//
// A fleet's store holds a lease per service and renews thousands a second, so the two lookups a
// keepalive makes are kept flat: the records sit in one array, found through an open-addressing
// index (sim/flat_index.hpp), and the deadlines in a binary min-heap. A renewal pushes its new
// deadline, which is nearly always the latest, so the push stops at once; the entry it replaced is
// left in place, marked stale by the lease's filing count, and dropped when it reaches the top.
// The heap is rebuilt from the live leases when stale entries outnumber them, so it holds at most
// about twice as many entries as there are leases. Nothing here is ever iterated in a hashed
// order: the records are visited by position, and what leaves is handed out in id order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "sim/flat_index.hpp"
#include "sim/ids.hpp"
#include "sim/time.hpp"

namespace electsim::servers {

template <class Lease>
class LeaseTable {
 public:
  // A live lease as the table holds it, with its deadline. Its place stays put until the lease
  // is erased; its deadline changes only through set_deadline(), which files it.
  class Held {
   public:
    sim::LeaseId id() const { return id_; }
    Lease& lease() { return lease_; }
    const Lease& lease() const { return lease_; }
    sim::LocalTime deadline() const { return deadline_; }

   private:
    friend class LeaseTable;
    sim::LeaseId id_ = sim::kNoLease;
    Lease lease_{};
    sim::LocalTime deadline_;
    std::uint32_t filings_ = 0;  // how many times its deadline was filed: names its live entry
    bool live_ = false;
  };

  std::size_t size() const { return index_.size(); }
  // The deadline entries held, stale ones included: its memory, at most about twice size().
  std::size_t heap_size() const { return heap_.size(); }
  bool contains(sim::LeaseId id) const { return index_.find(key(id)).has_value(); }

  // The live lease `id`, or nullptr.
  Held* find(sim::LeaseId id) {
    const std::optional<std::uint32_t> slot = index_.find(key(id));
    return slot ? &records_[*slot] : nullptr;
  }
  const Held* find(sim::LeaseId id) const {
    const std::optional<std::uint32_t> slot = index_.find(key(id));
    return slot ? &records_[*slot] : nullptr;
  }

  // Files a new lease under `id` with its deadline; the id is not live.
  void insert(sim::LeaseId id, Lease lease, sim::LocalTime deadline) {
    std::uint32_t slot = 0;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(records_.size());
      records_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    Held& r = records_[slot];
    r.id_ = id;
    r.lease_ = std::move(lease);
    r.live_ = true;
    const bool created = index_.try_emplace(key(id), slot).second;
    ELECTSIM_ASSERT(created, "a lease id is granted once");
    file(r, deadline);
  }

  // A live lease's new deadline.
  void set_deadline(Held& held, sim::LocalTime deadline) {
    file(held, deadline);
    drop_stale_top();
  }

  void erase(sim::LeaseId id) {
    const std::optional<std::uint32_t> slot = index_.find(key(id));
    ELECTSIM_ASSERT(slot.has_value(), "erasing a live lease");
    index_.erase(key(id));
    Held& r = records_[*slot];
    r.lease_ = Lease{};  // its key list goes now, not when the slot is reused
    r.live_ = false;
    ++r.filings_;  // its heap entry is stale from now on
    free_.push_back(*slot);
    drop_stale_top();
  }

  // The earliest deadline of a live lease.
  std::optional<sim::LocalTime> next_deadline() const {
    if (heap_.empty()) return std::nullopt;
    return heap_.front().deadline;
  }

  // Appends to `due` the live leases whose deadline is <= now and that `skip(id)` does not pass
  // over, at most `limit` of them, in id order. Past the limit the earliest deadlines go first
  // (ties by id), as etcd's lessor takes expired leases from its heap (findExpiredLeases). Only
  // the heap's entries at or before `now` are visited: a later entry's subtree holds none.
  template <class Skip>
  void due(sim::LocalTime now, std::size_t limit, Skip&& skip,
           std::vector<sim::LeaseId>& due) const {
    std::vector<std::size_t>& stack = walk_;
    std::vector<std::pair<sim::LocalTime, sim::LeaseId>>& found = found_;
    stack.clear();
    found.clear();
    if (!heap_.empty()) stack.push_back(0);
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      const Entry& e = heap_[i];
      if (e.deadline > now) continue;
      if (is_live(e) && !skip(e.id)) found.emplace_back(e.deadline, e.id);
      for (const std::size_t child : {2 * i + 1, 2 * i + 2}) {
        if (child < heap_.size()) stack.push_back(child);
      }
    }
    if (found.size() > limit) {
      const auto cut = found.begin() + static_cast<std::ptrdiff_t>(limit);
      std::nth_element(found.begin(), cut, found.end());
      found.erase(cut, found.end());
    }
    const std::size_t first = due.size();
    for (const auto& f : found) due.push_back(f.second);
    std::sort(due.begin() + static_cast<std::ptrdiff_t>(first), due.end());
  }
  // The same, passing over none.
  void due(sim::LocalTime now, std::size_t limit, std::vector<sim::LeaseId>& due) const {
    this->due(
        now, limit, [](sim::LeaseId) { return false; }, due);
  }

  // Calls f(held) for each live lease, in the order of their records; f may set its deadline.
  template <class F>
  void for_each(F&& f) {
    for (Held& r : records_) {
      if (r.live_) f(r);
    }
  }

 private:
  struct Entry {
    sim::LocalTime deadline;
    sim::LeaseId id = sim::kNoLease;
    std::uint32_t slot = 0;
    std::uint32_t filing = 0;
  };
  // The heap's order: the earliest deadline on top; ties by id and filing, so its shape, and
  // every walk of it, depends on nothing but the requests.
  static bool later(const Entry& a, const Entry& b) {
    return std::tie(a.deadline, a.id, a.filing) > std::tie(b.deadline, b.id, b.filing);
  }
  static std::uint64_t key(sim::LeaseId id) { return static_cast<std::uint64_t>(id); }

  bool is_live(const Entry& e) const {
    const Held& r = records_[e.slot];
    return r.live_ && r.id_ == e.id && r.filings_ == e.filing;
  }

  void file(Held& r, sim::LocalTime deadline) {
    ELECTSIM_ASSERT(r.live_ && &r >= records_.data() && &r < records_.data() + records_.size(),
                    "a live lease of this table");
    r.deadline_ = deadline;
    ++r.filings_;
    const auto slot = static_cast<std::uint32_t>(&r - records_.data());
    heap_.push_back(Entry{deadline, r.id_, slot, r.filings_});
    std::push_heap(heap_.begin(), heap_.end(), later);
    if (heap_.size() > 2 * size() + 64) rebuild();
  }

  // Keeps the top live, so that next_deadline() is the earliest live deadline.
  void drop_stale_top() {
    while (!heap_.empty() && !is_live(heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    }
  }

  void rebuild() {
    std::erase_if(heap_, [this](const Entry& e) { return !is_live(e); });
    std::make_heap(heap_.begin(), heap_.end(), later);
  }

  std::vector<Held> records_;
  std::vector<std::uint32_t> free_;  // records no live lease holds
  sim::FlatIndex index_;             // lease id -> record
  std::vector<Entry> heap_;          // (deadline, id) of each filing; stale ones until they surface
  // due()'s stack and finds, kept to save an allocation per call.
  mutable std::vector<std::size_t> walk_;
  mutable std::vector<std::pair<sim::LocalTime, sim::LeaseId>> found_;
};

}  // namespace electsim::servers
