// The sink: the protected database. With fencing on it refuses a write whose token is lower than
// the highest token it has accepted (Kleppmann, "How to do distributed locking", 2016); equal
// tokens pass, since one leader writes many times with its token.
#include "servers/sink/sink.hpp"

#include <algorithm>

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types

SinkReply Sink::write(Time at, NodeId writer, RequestId id, Token token, std::int64_t payload,
                      std::uint32_t resource) {
  if (resources_.size() <= resource) resources_.resize(std::size_t{resource} + 1);
  Resource& r = resources_[resource];
  const Token highest_before = r.highest;
  // Before the first acceptance there is nothing to be lower than.
  const bool accepted = !config_.fences(resource) || !r.any_accepted || token >= r.highest;
  if (accepted) {
    r.highest = r.any_accepted ? std::max(r.highest, token) : token;
    r.any_accepted = true;
  }
  ++decision_count_;
  if (decisions_.size() < kDecisionsKept) {
    decisions_.push_back(
        SinkDecision{at, writer, token, payload, accepted, highest_before, resource});
  }
  return SinkReply{id, token, payload, accepted, r.highest};
}

}  // namespace electsim::servers
