// The sink: the protected database a leader writes to. With fencing on it rejects a token lower
// than the highest it has accepted (Kleppmann's fencing token); with fencing off it accepts
// everything. Every decision is recorded and answered.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/ids.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

struct SinkConfig {
  bool fencing = true;
};

struct SinkDecision {
  Time at;
  NodeId writer = kNoNode;
  Token token = 0;
  std::int64_t payload = 0;
  bool accepted = false;
  Token highest_before = 0;  // highest token accepted before this write
};

struct SinkReply {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
  bool accepted = false;
  Token highest_accepted = 0;  // after this write
};

class Sink {
 public:
  explicit Sink(SinkConfig config = {}) : config_(config) {}

  SinkReply write(Time at, NodeId writer, RequestId id, Token token, std::int64_t payload);

  Token highest_accepted() const { return highest_; }
  const std::vector<SinkDecision>& decisions() const { return decisions_; }
  const SinkConfig& config() const { return config_; }

 private:
  SinkConfig config_;
  Token highest_ = 0;
  bool any_accepted_ = false;
  std::vector<SinkDecision> decisions_;
};

}  // namespace electsim::sim
