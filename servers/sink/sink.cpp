// The sink: the protected database. With fencing on it refuses a write whose token is lower than
// the highest token it has accepted (Kleppmann, "How to do distributed locking", 2016); equal
// tokens pass, since one leader writes many times with its token.
#include "servers/sink/sink.hpp"

#include <algorithm>

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types

SinkReply Sink::write(Time at, NodeId writer, RequestId id, Token token, std::int64_t payload) {
  const Token highest_before = highest_;
  // Before the first acceptance there is nothing to be lower than.
  const bool accepted = !config_.fencing || !any_accepted_ || token >= highest_;
  if (accepted) {
    highest_ = any_accepted_ ? std::max(highest_, token) : token;
    any_accepted_ = true;
  }
  ++decision_count_;
  if (decisions_.size() < kDecisionsKept) {
    decisions_.push_back(SinkDecision{at, writer, token, payload, accepted, highest_before});
  }
  return SinkReply{id, token, payload, accepted, highest_};
}

}  // namespace electsim::servers
