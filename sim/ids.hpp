// Identifiers shared by the kernel, the protocols and the analysis.
// Nodes are numbered 0..n-1; servers are network endpoints too, at negative addresses (the store
// at -2, the sink at -3, further servers below), so that partitions and link cuts can include them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace electsim::sim {

using NodeId = std::int32_t;
inline constexpr NodeId kNoNode = -1;

// A network endpoint: a node id, or a server's address.
using Endpoint = std::int32_t;
// Server k listens at -2 - k. The server registry (servers/registry.hpp) hands the slots out as
// it builds a world, with no cap but kMaxServerSlots; the kinds below keep the slots they have
// always had, so that the traces of today's worlds stay byte for byte what they were (a trace hash
// covers addresses): the store 0, the sink 1, a replicated store's members 2 to 7, the database
// server 8, the Redis masters 9 to 17. Other servers take the next free slot from 18.
// Only the kinds' registrations (servers/*/..._kind.cpp) and the reader of version-1 traces, which
// carry no topology (analysis/trace.cpp's legacy_topology), use the fixed slots below. Everything
// else finds a server by kind or name in the world's topology (sim::Topology), and the election
// nodes' requests go where sim::NodeServers says.
inline constexpr std::size_t kMaxServerSlots = 999'999;  // addresses -2 to -1000000
constexpr Endpoint server_endpoint(std::size_t k) {
  return -2 - static_cast<Endpoint>(k);
}
constexpr std::size_t server_slot(Endpoint e) {
  return static_cast<std::size_t>(-2 - static_cast<std::int64_t>(e));
}
constexpr bool is_server_address(Endpoint e) {
  return e <= server_endpoint(0) && server_slot(e) < kMaxServerSlots;
}
inline constexpr Endpoint kStoreEndpoint = server_endpoint(0);
inline constexpr Endpoint kSinkEndpoint = server_endpoint(1);
// A replicated store's members ("store:K"): member 0 at the store's address, the others after the
// sink's. Traces write member 0 as "store".
inline constexpr std::size_t kMaxStoreMembers = 7;
constexpr Endpoint store_member_endpoint(std::size_t k) {
  return k == 0 ? kStoreEndpoint : server_endpoint(k + 1);
}
// The database server (servers/postgres), named "postgres" in scenarios and traces.
inline constexpr Endpoint kPostgresEndpoint = server_endpoint(kMaxStoreMembers + 1);
// The independent Redis masters of a Redlock world (servers/redis), named "redis:0" to "redis:N-1"
// in scenarios and traces.
inline constexpr std::size_t kMaxRedisMasters = 9;
constexpr Endpoint redis_endpoint(std::size_t k) {
  return server_endpoint(kMaxStoreMembers + 2 + k);
}
// The first slot no built-in server keeps: where the registry starts handing slots out.
inline constexpr std::size_t kFirstFreeServerSlot = kMaxStoreMembers + 2 + kMaxRedisMasters;
// Members of a partition group resolved when the fault fires: the current leader, one follower
// drawn from the faults stream, and every node no other group names.
// Far below every server address.
inline constexpr Endpoint kLeaderMember = -2'000'000'001;
inline constexpr Endpoint kFollowerMember = -2'000'000'002;
inline constexpr Endpoint kRestMember = -2'000'000'003;

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
