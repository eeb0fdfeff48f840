// Identifiers shared by the kernel, the protocols and the analysis.
// Nodes are numbered 0..n-1; servers are network endpoints too, at negative addresses (the store
// at -2, the sink at -3, further servers below), so that partitions and link cuts can include them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace electsim::sim {

using NodeId = std::int32_t;
inline constexpr NodeId kNoNode = -1;

// A network endpoint: a node id, or a server's address.
using Endpoint = std::int32_t;
// Server k listens at -2 - k: the store is server 0, the sink server 1, a replicated store's
// members 2 to 7, the database server (servers/postgres) 8, the Redis masters (servers/redis) 9
// to 17.
inline constexpr std::size_t kMaxServers = 18;
constexpr Endpoint server_endpoint(std::size_t k) {
  return -2 - static_cast<Endpoint>(k);
}
constexpr std::size_t server_slot(Endpoint e) {
  return static_cast<std::size_t>(-2 - e);
}
constexpr bool is_server_address(Endpoint e) {
  return e <= server_endpoint(0) && server_slot(e) < kMaxServers;
}
inline constexpr Endpoint kStoreEndpoint = server_endpoint(0);
inline constexpr Endpoint kSinkEndpoint = server_endpoint(1);
// A replicated store's members ("store:K"): member 0 at the store's address, the others after the
// sink's. Traces write member 0 as "store".
inline constexpr std::size_t kMaxStoreMembers = 7;
constexpr Endpoint store_member_endpoint(std::size_t k) {
  return k == 0 ? kStoreEndpoint : server_endpoint(k + 1);
}
// The member index at `e`, or -1 if no store member listens there.
constexpr std::int32_t store_member_of(Endpoint e) {
  if (e == kStoreEndpoint) return 0;
  if (!is_server_address(e) || e == kSinkEndpoint) return -1;
  const std::size_t member = server_slot(e) - 1;
  return member < kMaxStoreMembers ? static_cast<std::int32_t>(member) : -1;
}
// The database server (servers/postgres), named "postgres" in scenarios and traces.
inline constexpr Endpoint kPostgresEndpoint = server_endpoint(kMaxStoreMembers + 1);
static_assert(server_slot(kPostgresEndpoint) < kMaxServers, "the database has an address");
// The independent Redis masters of a Redlock world (servers/redis), named "redis:0" to "redis:N-1"
// in scenarios and traces.
inline constexpr std::size_t kMaxRedisMasters = 9;
constexpr Endpoint redis_endpoint(std::size_t k) {
  return server_endpoint(kMaxStoreMembers + 2 + k);
}
// The master index at `e`, or -1 if no Redis master listens there.
constexpr std::int32_t redis_master_of(Endpoint e) {
  if (!is_server_address(e) || e > redis_endpoint(0)) return -1;
  return static_cast<std::int32_t>(server_slot(e) - server_slot(redis_endpoint(0)));
}
static_assert(server_slot(redis_endpoint(kMaxRedisMasters - 1)) < kMaxServers,
              "every Redis master has an address");
static_assert(redis_master_of(kPostgresEndpoint) == -1 && redis_master_of(redis_endpoint(3)) == 3);
// An endpoint as traces, reports and scenario files name it: a node's id, "store" (the single
// store, or a replicated store's member 0), "store:K", "sink", "postgres", "redis:K". Any other
// address is written as its number.
std::string endpoint_name(Endpoint e);
// Whether `e` is a coordinator's address: the store or one of its members, the database server or
// a Redis master (the sink is the protected database, not a coordinator).
constexpr bool is_coordinator_address(Endpoint e) {
  return is_server_address(e) && e != kSinkEndpoint;
}

// Members of a partition group resolved when the fault fires: the current leader, one follower
// drawn from the faults stream, and every node no other group names.
// Far below every server address.
inline constexpr Endpoint kLeaderMember = -100;
inline constexpr Endpoint kFollowerMember = -101;
inline constexpr Endpoint kRestMember = -102;

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
