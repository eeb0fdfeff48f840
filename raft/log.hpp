// The replicated log of Raft §5.3, as a store member keeps it: entries from index 1, kept in the
// process's durable bulk storage (sim::DurableState::bulk), and the leader's view of its
// followers (etcd-io/raft's Progress: a match and a next index per member) with the commit rule
// of §5.3 and §5.4.2.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "raft/core.hpp"
#include "raft/messages.hpp"
#include "sim/wire.hpp"

namespace electsim::raft {

class Log {
 public:
  explicit Log(std::vector<sim::LogEntry>& entries) : entries_(&entries) {}

  std::int64_t last_index() const { return static_cast<std::int64_t>(entries_->size()); }
  LogPosition last() const { return LogPosition{last_index(), term_at(last_index())}; }
  // The term of the entry at `index`; 0 for index 0 (before the first entry).
  sim::Epoch term_at(std::int64_t index) const;
  // Whether the log holds an entry at `index` with `term` (Raft's log matching check).
  bool matches(std::int64_t index, sim::Epoch term) const {
    return index <= last_index() && term_at(index) == term;
  }
  const sim::LogEntry& at(std::int64_t index) const;
  void append(sim::LogEntry entry) { entries_->push_back(std::move(entry)); }
  // Raft Figure 2, AppendEntries receiver steps 3 and 4: entries that conflict with `entries`
  // (same index, other term) are deleted with all that follow; new ones are appended. Returns
  // the first index it wrote, 0 if the log did not change. Entries up to `committed` never
  // conflict (Raft §5.4's safety).
  std::int64_t merge(std::int64_t prev_index, std::span<const sim::LogEntry> entries,
                     std::int64_t committed);
  // Keeps the first `length` entries (a restart trims to what the disk holds).
  void truncate(std::int64_t length);

 private:
  std::vector<sim::LogEntry>* entries_;
};

// The leader's view of each member's log (etcd-io/raft's Progress), by member index.
class Progress {
 public:
  // A new leader with `last` as its last index: every follower is probed from last + 1 (Raft
  // §5.3: "it initializes all nextIndex values to the index just after the last one in its log").
  // Every match starts at 0, the leader's own too: it acknowledges what its disk holds.
  void reset(std::size_t size, Member self, std::int64_t last);
  std::int64_t next(Member m) const { return peers_[index(m)].next; }
  std::int64_t match(Member m) const { return peers_[index(m)].match; }
  // The member holds everything up to `index`.
  void acknowledged(Member m, std::int64_t index);
  // The member's log did not match before `next`; its last index is `hint` (etcd's RejectHint).
  void rejected(Member m, std::int64_t hint);
  // Entries up to `last` are on their way to `m` (etcd's optimistic pipelining).
  void sent(Member m, std::int64_t last);
  // Raft §5.3 and §5.4.2: the highest index a majority holds, if its entry is of `term`.
  std::int64_t quorum_commit(const Log& log, sim::Epoch term, std::int64_t commit) const;

 private:
  struct Peer {
    std::int64_t match = 0;
    std::int64_t next = 1;
  };
  std::size_t index(Member m) const;
  std::vector<Peer> peers_;
  mutable std::vector<std::int64_t> scratch_;
};

}  // namespace electsim::raft
