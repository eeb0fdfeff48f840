// The world as data: its election nodes, its servers by name, kind and group, and its election
// groups. One description that the kernel's config yields (topology_of), the trace header carries
// and every reader of a trace, picture or report names endpoints by, instead of deriving names
// from the address plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/fault.hpp"
#include "sim/ids.hpp"

namespace electsim::sim {

struct WorldConfig;

// The kinds of server today's worlds have (servers/world.cpp gives them): readers ask the topology
// for a kind by these names, never by a literal of their own.
namespace server_kind {
inline constexpr std::string_view store =
    "store";  // the single store, or a replicated one's members
inline constexpr std::string_view sink = "sink";
inline constexpr std::string_view postgres = "postgres";
inline constexpr std::string_view redis = "redis";
inline constexpr std::string_view aggregator = "aggregator";  // a fleet's lease aggregators
}  // namespace server_kind

// How the pictures (the timeline, the replay page, Perfetto) give a server a place.
enum class ServerLane : std::uint8_t {
  none,     // no row of its own: it shows only in the messages and faults that name it
  store,    // the store's strip (a single store), or a row per member with its Raft role
  sink,     // the sink's strip: the writes it accepted and rejected
  process,  // a row of its own: when it was down, paused or cut off
};
inline constexpr ServerLane kServerLanes[] = {ServerLane::none, ServerLane::store, ServerLane::sink,
                                              ServerLane::process};
const char* server_lane_name(ServerLane lane);  // "none", "store", "sink", "process"
std::optional<ServerLane> server_lane_of(std::string_view name);

// A set of fault kinds, a bit per kind.
using FaultSet = std::uint32_t;
constexpr FaultSet fault_bit(FaultKind kind) {
  return FaultSet{1} << static_cast<unsigned>(kind);
}
static_assert(kFaultKindCount <= 32, "a fault set holds every kind");
// The fault kinds that act on any process: a node's or a server's (crash, restart, pause,
// isolate, the clock faults, stop).
inline constexpr FaultSet kProcessFaults =
    fault_bit(FaultKind::crash) | fault_bit(FaultKind::restart) | fault_bit(FaultKind::pause) |
    fault_bit(FaultKind::isolate) | fault_bit(FaultKind::clock_offset) |
    fault_bit(FaultKind::clock_drift) | fault_bit(FaultKind::clock_step) |
    fault_bit(FaultKind::stop);
inline constexpr FaultSet kClockFaults = fault_bit(FaultKind::clock_offset) |
                                         fault_bit(FaultKind::clock_drift) |
                                         fault_bit(FaultKind::clock_step);

// What a kind of server is to everything outside its own folder, as its registration in
// servers/registry.cpp declares it. It travels with every endpoint, in the kernel's config and in
// the trace header, so that readers of a trace need no knowledge of the kinds.
struct ServerTraits {
  // Leadership depends on it: while it cannot answer, the protocol stalls; a cut between the
  // leader and it takes the leader away (the store, its members, the database, a Redis master).
  bool coordinator = false;
  ServerLane lane = ServerLane::none;
  FaultSet faults = 0;   // the fault kinds that act on it when a fault names it as the target
  bool nemesis = false;  // `electsim search` may aim the faults it takes at it
  // The operations it answers, as `server_request` events name them (the database's statements,
  // a Redis master's commands); empty for a server that takes no such requests.
  std::vector<std::string> requests = {};

  friend bool operator==(const ServerTraits&, const ServerTraits&) = default;
};

// A server process of the world, as scenarios, traces and pictures name it.
struct NamedEndpoint {
  Endpoint address = kNoNode;
  std::string name;   // "store", "store:1", "sink", "postgres", "redis:0", ...
  std::string kind;   // what runs there: "store", "sink", "postgres", "redis", ...
  std::string group;  // the servers of one replicated service ("store"); "" for none
  ServerTraits traits;
};

// A set of election nodes running one protocol instance against its own key or resources.
// Today's worlds have one, "election", holding every node.
struct ElectionGroup {
  std::string name;
  std::string protocol;
  std::vector<NodeId> nodes;
  std::optional<std::string> key;  // the store key that holds its leadership, if any
  // A fleet's class of services the group belongs to ("batch"); "" when the fleet declares no
  // classes, or for a world of one election.
  std::string service_class = {};
  // The group of store servers it asks: one shard of a sharded store ("store-2"); "" for the
  // world's one store.
  std::string store = {};
  // The server its nodes send their store requests to instead of the store: a lease aggregator
  // ("aggregator:1"); "" for none.
  std::string via = {};
};

class Topology {
 public:
  Topology() = default;
  Topology(std::size_t node_count, std::vector<NamedEndpoint> servers,
           std::vector<ElectionGroup> groups);

  std::size_t node_count() const { return node_count_; }
  const std::vector<NamedEndpoint>& servers() const { return servers_; }
  const std::vector<ElectionGroup>& groups() const { return groups_; }

  // The server at `address`, or null.
  const NamedEndpoint* server(Endpoint address) const;
  // Whether `e` is one of the nodes or a server of this world.
  bool has(Endpoint e) const { return is_node(e) || server(e) != nullptr; }
  bool is_node(Endpoint e) const { return e >= 0 && static_cast<std::size_t>(e) < node_count_; }
  // A node as its number, a server by its name; anything else as its number.
  std::string name_of(Endpoint e) const;
  // The endpoint a name gives: a node's number, or a server's name.
  std::optional<Endpoint> find(std::string_view name) const;
  // The server's kind ("" for a node or an unknown address).
  std::string_view kind_of(Endpoint e) const;
  // Whether `e` is a server that leadership depends on (ServerTraits::coordinator).
  bool is_coordinator(Endpoint e) const;
  // The position of `e` among the servers of its group (a store's member index), or -1 for a
  // server in no group, a node, or an unknown address.
  std::int32_t index_in_group(Endpoint e) const;
  // How many servers `group` has.
  std::size_t group_size(std::string_view group) const;
  // The server at `index` in `group`, or kNoNode.
  Endpoint group_member(std::string_view group, std::size_t index) const;

  // Whether the world is a fleet: more than one election group, each one run of node ids, the
  // groups in node order and together every node.
  bool is_fleet() const;

  // The server at `index` among those of `kind`, in the world's order, or kNoNode.
  Endpoint of_kind(std::string_view kind, std::size_t index = 0) const;

  // The store's members, the servers of the world's first group of kind "store" in the world's
  // order (the single store is member 0; in a sharded store, the first shard's): how many, member
  // m's address (kNoNode past the last), and the index of the member at `e` (-1 for any other
  // endpoint, another shard's servers among them).
  std::size_t store_members() const;
  Endpoint store_member(std::size_t m) const;
  std::int32_t store_member_index(Endpoint e) const;
  // A sharded store's shards: the groups of its servers of kind "store", in the world's order
  // (empty for a world of one store, whose group is "store").
  std::vector<std::string> store_shards() const;

 private:
  std::size_t node_count_ = 0;
  std::vector<NamedEndpoint> servers_;  // in the world's order
  std::vector<ElectionGroup> groups_;
  std::vector<std::int32_t> by_slot_;  // server address -2 - k -> index into servers_, or -1
};

// Whether a fault of `kind` acts on `target` in `topology`'s world: an election node by the fault
// catalogue, a server by its kind's traits ("store" by the server at the store's address, a
// group's member by role by its group's).
bool obeys(FaultKind kind, const Target& target, const Topology& topology);

// The election group of today's worlds: "election", every one of `node_count` nodes, running
// `protocol` on `key`.
ElectionGroup election_group(std::size_t node_count, std::string protocol,
                             std::optional<std::string> key);

// The topology of a configured world: its nodes, its servers (WorldConfig::servers) and its
// election groups (WorldConfig::groups, or one group of every node).
Topology topology_of(const WorldConfig& world);

}  // namespace electsim::sim
