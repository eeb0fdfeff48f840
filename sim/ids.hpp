// Identifiers shared by the kernel, the protocols and the analysis.
// Nodes are numbered 0..n-1; the store and the sink are network endpoints too, numbered after the
// nodes, so that partitions and link cuts can include them.
#pragma once

#include <cstdint>

namespace electsim::sim {

using NodeId = std::int32_t;
inline constexpr NodeId kNoNode = -1;

// A network endpoint: a node id, or one of the two services.
using Endpoint = std::int32_t;
inline constexpr Endpoint kStoreEndpoint = -2;
inline constexpr Endpoint kSinkEndpoint = -3;
// Members of a partition group resolved when the fault fires: the current leader, one follower
// drawn from the faults stream, and every node no other group names.
inline constexpr Endpoint kLeaderMember = -10;
inline constexpr Endpoint kFollowerMember = -11;
inline constexpr Endpoint kRestMember = -12;

// Opaque handle of a timer; 0 is never a live timer.
using TimerId = std::uint64_t;
inline constexpr TimerId kNoTimer = 0;

// What a protocol labels its timers with, so on_timer can tell them apart.
using TimerTag = std::uint32_t;

using LeaseId = std::int64_t;
inline constexpr LeaseId kNoLease = 0;

using Revision = std::int64_t;
using Epoch = std::int64_t;
using Token = std::int64_t;  // fencing token carried on sink writes
using RequestId = std::uint64_t;

}  // namespace electsim::sim
