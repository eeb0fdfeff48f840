// The sink: the protected database a leader writes to. With fencing on it rejects a token lower
// than the highest it has accepted (Kleppmann's fencing token); with fencing off it accepts
// everything. Each election group writes its own resource (a fleet's services each their own
// table), and each resource is fenced by its own tokens. Every decision is answered and emitted as
// a sink_write event; the sink itself keeps only the first kDecisionsKept of them (for tests and
// inspection), so its memory stays bounded however long a run writes.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/ids.hpp"
#include "sim/time.hpp"
#include "sim/wire.hpp"

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types

struct SinkConfig {
  bool fencing = true;
  // A fleet whose classes fence differently (a class's own `fencing`): by resource (the world's
  // group index), whether that resource fences; empty when every resource fences as `fencing`.
  std::vector<bool> fencing_by_resource;
  bool fences(std::uint32_t resource) const {
    return resource < fencing_by_resource.size() ? fencing_by_resource[resource] : fencing;
  }
};

struct SinkDecision {
  Time at;
  NodeId writer = kNoNode;
  Token token = 0;
  std::int64_t payload = 0;
  bool accepted = false;
  Token highest_before = 0;  // highest token accepted before this write
  std::uint32_t resource = 0;
};

class Sink {
 public:
  explicit Sink(SinkConfig config = {}) : config_(config) {}

  SinkReply write(Time at, NodeId writer, RequestId id, Token token, std::int64_t payload,
                  std::uint32_t resource = 0);

  static constexpr std::size_t kDecisionsKept = 10'000;

  // The highest token accepted on `resource` (0 before any).
  Token highest_accepted(std::uint32_t resource = 0) const {
    return resource < resources_.size() ? resources_[resource].highest : 0;
  }
  // The first kDecisionsKept decisions; decision_count() counts them all.
  const std::vector<SinkDecision>& decisions() const { return decisions_; }
  std::uint64_t decision_count() const { return decision_count_; }
  const SinkConfig& config() const { return config_; }

 private:
  struct Resource {
    Token highest = 0;
    bool any_accepted = false;
  };
  SinkConfig config_;
  std::vector<Resource> resources_;  // by resource: as many as the world's groups at most
  std::vector<SinkDecision> decisions_;
  std::uint64_t decision_count_ = 0;
};

}  // namespace electsim::servers
