// The replicated log and the leader's progress: see raft/log.hpp.
#include "raft/log.hpp"

#include <algorithm>
#include <functional>

#include "sim/assert.hpp"

namespace electsim::raft {

sim::Epoch Log::term_at(std::int64_t index) const {
  ELECTSIM_ASSERT(index >= 0 && index <= last_index(), "a log index within the log");
  return index == 0 ? 0 : (*entries_)[static_cast<std::size_t>(index - 1)].term;
}

const sim::LogEntry& Log::at(std::int64_t index) const {
  ELECTSIM_ASSERT(index >= 1 && index <= last_index(), "an entry of the log");
  return (*entries_)[static_cast<std::size_t>(index - 1)];
}

std::int64_t Log::merge(std::int64_t prev_index, std::span<const sim::LogEntry> entries,
                        std::int64_t committed) {
  ELECTSIM_ASSERT(prev_index >= 0 && prev_index <= last_index(), "entries follow a held entry");
  std::int64_t first_written = 0;
  std::int64_t index = prev_index;
  for (const sim::LogEntry& entry : entries) {
    ++index;
    if (index <= last_index()) {
      if (term_at(index) == entry.term) continue;  // already held
      // Raft §5.3: "If an existing entry conflicts with a new one (same index but different
      // terms), delete the existing entry and all that follow it".
      ELECTSIM_ASSERT(index > committed, "a committed entry never conflicts (Raft §5.4)");
      truncate(index - 1);
    }
    entries_->push_back(entry);
    if (first_written == 0) first_written = index;
  }
  return first_written;
}

void Log::truncate(std::int64_t length) {
  ELECTSIM_ASSERT(length >= 0 && length <= last_index(), "truncating to a length within the log");
  entries_->resize(static_cast<std::size_t>(length));
}

void Progress::reset(std::size_t size, Member self, std::int64_t last) {
  peers_.assign(size, Peer{0, last + 1});
  // The leader's own match grows as its log reaches its disk (the host acknowledges it).
  (void)index(self);
}

void Progress::acknowledged(Member m, std::int64_t index_acked) {
  Peer& p = peers_[index(m)];
  p.match = std::max(p.match, index_acked);
  p.next = std::max(p.next, index_acked + 1);
}

void Progress::rejected(Member m, std::int64_t hint) {
  Peer& p = peers_[index(m)];
  // Back off to just after the follower's last entry, or by one (Raft §5.3's "decrements
  // nextIndex and retries"), but never below what it is known to hold.
  p.next = std::max(p.match + 1, std::min(p.next - 1, hint + 1));
  p.next = std::max<std::int64_t>(p.next, 1);
}

void Progress::sent(Member m, std::int64_t last) {
  Peer& p = peers_[index(m)];
  p.next = std::max(p.next, last + 1);
}

std::int64_t Progress::quorum_commit(const Log& log, sim::Epoch term, std::int64_t commit) const {
  scratch_.clear();
  for (const Peer& p : peers_) scratch_.push_back(p.match);
  std::sort(scratch_.begin(), scratch_.end(), std::greater<>());
  // The majority()-th highest match index is held by a majority.
  const std::int64_t held = scratch_[peers_.size() / 2];
  // Raft §5.4.2: "Raft never commits log entries from previous terms by counting replicas. Only
  // log entries from the leader's current term are committed by counting replicas".
  if (held > commit && log.term_at(held) == term) return held;
  return commit;
}

std::size_t Progress::index(Member m) const {
  ELECTSIM_ASSERT(m >= 0 && static_cast<std::size_t>(m) < peers_.size(), "a member of the group");
  return static_cast<std::size_t>(m);
}

}  // namespace electsim::raft
