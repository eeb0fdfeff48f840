// The store as a kind of server (servers/registry.hpp): one logical server at the store's
// address, or a replicated cluster of members running Raft as etcd does.
#include <memory>
#include <string>

#include "servers/registry.hpp"
#include "servers/store/member.hpp"
#include "servers/store/store_server.hpp"
#include "sim/assert.hpp"

namespace electsim::servers {

namespace {

using sim::fault_bit;
using sim::FaultKind;

// The single store is one logical etcd, which does not crash in electsim's model: its own fault
// is the store_pause kind (a stall), a clock fault moves the clock its leases are judged on, and a
// person may delete the leader key (operator_clear).
const ServerForm kSingle{
    "the single store",
    {true, sim::ServerLane::store, sim::kClockFaults | fault_bit(FaultKind::operator_clear), true}};
// A member is a process like a node: every process fault, its disk's stalls, and etcd's MsgHup
// (campaign).
const ServerForm kMember{
    "a store member",
    {true, sim::ServerLane::store,
     sim::kProcessFaults | fault_bit(FaultKind::disk_stall) | fault_bit(FaultKind::campaign),
     true}};

void add_store(const Services& services, WorldBuilder& builder) {
  const ReplicationConfig& r = services.replication;
  const std::string kind(sim::server_kind::store);
  if (r.members <= 1) {
    builder.add(
        "store", kind, "store", kSingle, services.store_clock,
        [config = services.store] { return std::make_unique<StoreServer>(config); },
        sim::server_slot(sim::kStoreEndpoint));
    return;
  }
  auto config = std::make_shared<MemberConfig>();
  config->store = services.store;
  config->raft = r.raft;
  config->lease_checkpoint = r.lease_checkpoint;
  config->promote_extend = r.promote_extend.value_or(r.raft.election_timeout_min);
  ELECTSIM_ASSERT(r.members <= sim::kMaxStoreMembers, "store members within the scenario limit");
  for (std::size_t k = 0; k < r.members; ++k) {
    config->members.push_back(sim::store_member_endpoint(k));
  }
  for (std::size_t k = 0; k < r.members; ++k) {
    builder.add(
        "store:" + std::to_string(k), kind, "store", kMember, services.store_clock,
        [config, k] { return std::make_unique<StoreMember>(config, static_cast<raft::Member>(k)); },
        sim::server_slot(config->members[k]));
  }
  sim::StoreClientConfig& client = builder.world().store_client;
  client.members = config->members;
  client.request_timeout = r.request_timeout;
  client.home = r.home;
}

}  // namespace

ServerKindInfo store_kind() {
  return {std::string(sim::server_kind::store),
          "the coordination store (etcd-like): one logical server, or a replicated cluster of "
          "members running Raft",
          {kSingle, kMember},
          "store members",
          "store members exist only in a replicated store: set store.members to 3 or 5",
          add_store};
}

}  // namespace electsim::servers
