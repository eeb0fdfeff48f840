// Faults: what the kernel can do to the world at a scheduled time. Targets are a node id or a role
// resolved when the fault fires (`leader`, `follower`, `random`), drawing from the faults stream.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/ids.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

enum class FaultKind : std::uint16_t {
  crash,      // volatile state lost; with duration: restarts after it
  restart,    // a crashed node comes back (durable state kept)
  pause,      // GC or VM stall for duration: nothing runs, the clock keeps running
  partition,  // symmetric: endpoints in different groups cannot talk; with duration: heals after
  cut,        // one-way: from cannot reach to; with duration: heals after
  isolate,    // the target can reach nobody, store and sink included; with duration: heals after
  heal,       // every partition, cut and isolation ends
  loss,       // extra message loss probability for duration
  duplicate,  // extra duplication probability for duration
  latency_spike,  // extra latency drawn from a distribution for duration
  clock_offset,   // the target's clock jumps to read true time + offset
  clock_drift,    // the target's clock drift changes
  clock_step,     // the target's clock jumps by a signed amount
  store_pause,    // the store stalls for duration; requests are answered late
  step_down,      // the target is told to give up leadership (voluntary release)
  stop,           // the target releases and shuts down gracefully; restart brings it back
};
inline constexpr int kFaultKindCount = 16;
const char* fault_kind_name(FaultKind kind);

enum class TargetKind : std::uint8_t { none, node, leader, follower, random, store };
struct Target {
  TargetKind kind = TargetKind::none;
  NodeId node = kNoNode;  // kind == node
};

struct FaultSpec {
  Time at;
  FaultKind kind = FaultKind::crash;
  Target target;
  Duration duration{0};
  // partition; endpoints in no group keep all links. Groups may name kLeaderMember,
  // kFollowerMember and kRestMember (sim/ids.hpp), resolved when the fault fires; if the leader or
  // a follower cannot be found then, the partition is skipped.
  std::vector<std::vector<Endpoint>> groups;
  Endpoint from = kNoNode;     // cut
  Endpoint to = kNoNode;       // cut
  Ppm probability = 0;         // loss, duplicate
  Distribution extra_latency;  // latency_spike
  Duration clock_amount{0};    // clock_offset, clock_step
  std::int64_t drift_ppb = 0;  // clock_drift
};

}  // namespace electsim::sim
