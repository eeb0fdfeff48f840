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
}  // namespace server_kind

// A server process of the world, as scenarios, traces and pictures name it.
struct NamedEndpoint {
  Endpoint address = kNoNode;
  std::string name;   // "store", "store:1", "sink", "postgres", "redis:0", ...
  std::string kind;   // what runs there: "store", "sink", "postgres", "redis", ...
  std::string group;  // the servers of one replicated service ("store"); "" for none
};

// A set of election nodes running one protocol instance against its own key or resources.
// Today's worlds have one, "election", holding every node.
struct ElectionGroup {
  std::string name;
  std::string protocol;
  std::vector<NodeId> nodes;
  std::optional<std::string> key;  // the store key that holds its leadership, if any
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
  // The position of `e` among the servers of its group (a store's member index), or -1 for a
  // server in no group, a node, or an unknown address.
  std::int32_t index_in_group(Endpoint e) const;
  // How many servers `group` has.
  std::size_t group_size(std::string_view group) const;
  // The server at `index` in `group`, or kNoNode.
  Endpoint group_member(std::string_view group, std::size_t index) const;

  // The store's members, its servers of kind "store" in the world's order (the single store is
  // member 0): how many, member m's address (kNoNode past the last), and the index of the member
  // at `e` (-1 for any other endpoint).
  std::size_t store_members() const;
  Endpoint store_member(std::size_t m) const;
  std::int32_t store_member_index(Endpoint e) const;

 private:
  std::size_t node_count_ = 0;
  std::vector<NamedEndpoint> servers_;  // in the world's order
  std::vector<ElectionGroup> groups_;
  std::vector<std::int32_t> by_slot_;  // server address -2 - k -> index into servers_, or -1
};

// The election group of today's worlds: "election", every one of `node_count` nodes, running
// `protocol` on `key`.
ElectionGroup election_group(std::size_t node_count, std::string protocol,
                             std::optional<std::string> key);

// The topology of a configured world: its nodes, its servers (WorldConfig::servers) and its
// election groups (WorldConfig::groups, or one group of every node).
Topology topology_of(const WorldConfig& world);

}  // namespace electsim::sim
