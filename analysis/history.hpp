// The clients' history of operations on a replicated store, for an external linearizability
// checker (Porcupine, Knossos): each request with its invocation and return times, as the clients
// saw them. Built from the event stream (a replicated store's store_request events name their key
// and store_reply events their request); written as JSON Lines, one operation per line, in
// invocation order (docs/trace-format.md, "History of operations").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/event.hpp"
#include "sim/store_types.hpp"

namespace electsim::analysis {

struct HistoryOp {
  sim::NodeId client = sim::kNoNode;
  std::int64_t request = 0;
  sim::StoreOp op = sim::StoreOp::get;
  std::string key;
  sim::Time call;
  std::optional<sim::Time> ret;  // none: the client never heard (its run ended first)
  sim::StoreError error = sim::StoreError::none;
  bool succeeded = false;
  sim::Revision revision = 0;
};

class HistoryRecorder : public sim::Observer {
 public:
  // Keeps at most `max_ops` operations; past that it records nothing more and says so.
  explicit HistoryRecorder(std::size_t max_ops) : max_ops_(max_ops) {}
  void on_event(const sim::Event& e) override;
  const std::vector<HistoryOp>& ops() const { return ops_; }
  bool overflowed() const { return overflowed_; }
  // JSON Lines; an operation whose outcome is unknown (unavailable, or no reply) has
  // "outcome": "unknown" and, for Porcupine, no return time.
  std::string jsonl() const;

 private:
  std::size_t max_ops_;
  bool overflowed_ = false;
  std::vector<HistoryOp> ops_;
};

}  // namespace electsim::analysis
