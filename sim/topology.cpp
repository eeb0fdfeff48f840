// The world's description (sim/topology.hpp).
#include "sim/topology.hpp"

#include <charconv>
#include <utility>

#include "sim/assert.hpp"
#include "sim/kernel.hpp"

namespace electsim::sim {

namespace {

// Servers listen at -2, -3, ...: their place in a dense index.
std::optional<std::size_t> slot_of(Endpoint address) {
  if (address > server_endpoint(0)) return std::nullopt;
  return static_cast<std::size_t>(-2 - static_cast<std::int64_t>(address));
}

}  // namespace

const char* server_lane_name(ServerLane lane) {
  switch (lane) {
    case ServerLane::none:
      return "none";
    case ServerLane::store:
      return "store";
    case ServerLane::sink:
      return "sink";
    case ServerLane::process:
      return "process";
  }
  return "none";
}

std::optional<ServerLane> server_lane_of(std::string_view name) {
  for (const ServerLane lane : kServerLanes) {
    if (name == server_lane_name(lane)) return lane;
  }
  return std::nullopt;
}

Topology::Topology(std::size_t node_count, std::vector<NamedEndpoint> servers,
                   std::vector<ElectionGroup> groups)
    : node_count_(node_count), servers_(std::move(servers)), groups_(std::move(groups)) {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    const auto slot = slot_of(servers_[i].address);
    ELECTSIM_ASSERT(slot.has_value(), "servers listen at server addresses");
    if (*slot >= by_slot_.size()) by_slot_.resize(*slot + 1, -1);
    ELECTSIM_ASSERT(by_slot_[*slot] < 0, "one server per address");
    by_slot_[*slot] = static_cast<std::int32_t>(i);
  }
}

const NamedEndpoint* Topology::server(Endpoint address) const {
  const auto slot = slot_of(address);
  if (!slot || *slot >= by_slot_.size() || by_slot_[*slot] < 0) return nullptr;
  return &servers_[static_cast<std::size_t>(by_slot_[*slot])];
}

std::string Topology::name_of(Endpoint e) const {
  if (const NamedEndpoint* s = server(e)) return s->name;
  return std::to_string(e);
}

std::optional<Endpoint> Topology::find(std::string_view name) const {
  for (const NamedEndpoint& s : servers_) {
    if (s.name == name) return s.address;
  }
  Endpoint value = 0;
  const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (ec == std::errc{} && ptr == name.data() + name.size() && is_node(value)) return value;
  return std::nullopt;
}

bool Topology::is_coordinator(Endpoint e) const {
  const NamedEndpoint* s = server(e);
  return s != nullptr && s->traits.coordinator;
}

std::string_view Topology::kind_of(Endpoint e) const {
  const NamedEndpoint* s = server(e);
  return s != nullptr ? std::string_view(s->kind) : std::string_view();
}

std::int32_t Topology::index_in_group(Endpoint e) const {
  const NamedEndpoint* s = server(e);
  if (s == nullptr || s->group.empty()) return -1;
  std::int32_t index = 0;
  for (const NamedEndpoint& other : servers_) {
    if (&other == s) return index;
    if (other.group == s->group) ++index;
  }
  return -1;
}

std::size_t Topology::group_size(std::string_view group) const {
  std::size_t n = 0;
  for (const NamedEndpoint& s : servers_) n += !group.empty() && s.group == group ? 1 : 0;
  return n;
}

Endpoint Topology::group_member(std::string_view group, std::size_t index) const {
  for (const NamedEndpoint& s : servers_) {
    if (group.empty() || s.group != group) continue;
    if (index == 0) return s.address;
    --index;
  }
  return kNoNode;
}

namespace {
// The group of the world's first server of kind "store", or "" for a world without one.
std::string_view first_store_group(const std::vector<NamedEndpoint>& servers) {
  for (const NamedEndpoint& s : servers) {
    if (s.kind == server_kind::store) return s.group;
  }
  return {};
}
}  // namespace

std::size_t Topology::store_members() const {
  const std::string_view group = first_store_group(servers_);
  std::size_t n = 0;
  for (const NamedEndpoint& s : servers_) {
    n += s.kind == server_kind::store && s.group == group ? 1 : 0;
  }
  return n;
}

std::vector<std::string> Topology::store_shards() const {
  std::vector<std::string> shards;
  for (const NamedEndpoint& s : servers_) {
    if (s.kind != server_kind::store) continue;
    if (shards.empty() || shards.back() != s.group) shards.push_back(s.group);
  }
  if (shards.size() == 1) shards.clear();
  return shards;
}

Endpoint Topology::of_kind(std::string_view kind, std::size_t index) const {
  for (const NamedEndpoint& s : servers_) {
    if (s.kind != kind) continue;
    if (index == 0) return s.address;
    --index;
  }
  return kNoNode;
}

Endpoint Topology::store_member(std::size_t m) const {
  const std::string_view group = first_store_group(servers_);
  for (const NamedEndpoint& s : servers_) {
    if (s.kind != server_kind::store || s.group != group) continue;
    if (m == 0) return s.address;
    --m;
  }
  return kNoNode;
}

std::int32_t Topology::store_member_index(Endpoint e) const {
  const NamedEndpoint* member = server(e);
  if (member == nullptr || member->kind != server_kind::store) return -1;
  const std::string_view group = first_store_group(servers_);
  if (member->group != group) return -1;
  std::int32_t index = 0;
  for (const NamedEndpoint& s : servers_) {
    if (&s == member) return index;
    if (s.kind == server_kind::store && s.group == group) ++index;
  }
  return -1;
}

bool obeys(FaultKind kind, const Target& target, const Topology& topology) {
  const auto takes = [&](Endpoint server) {
    const NamedEndpoint* s = topology.server(server);
    return s != nullptr && (s->traits.faults & fault_bit(kind)) != 0;
  };
  switch (target.kind) {
    case TargetKind::none:
      return false;
    case TargetKind::leader:
    case TargetKind::follower:
    case TargetKind::random:
    case TargetKind::service_leader:
    case TargetKind::service_follower:
      return fault_info(kind).nodes_obey;
    case TargetKind::store:
      return takes(topology.store_member(0));
    case TargetKind::group_leader:
    case TargetKind::group_follower:
      return takes(topology.group_member(target.group, 0));
    case TargetKind::node:
      return target.node >= 0 ? fault_info(kind).nodes_obey : takes(target.node);
  }
  return false;
}

bool Topology::is_fleet() const {
  if (groups_.size() < 2) return false;
  std::size_t next = 0;
  for (const ElectionGroup& g : groups_) {
    if (g.nodes.empty()) return false;
    for (const NodeId n : g.nodes) {
      if (n < 0 || static_cast<std::size_t>(n) != next) return false;
      ++next;
    }
  }
  return next == node_count_;
}

ElectionGroup election_group(std::size_t node_count, std::string protocol,
                             std::optional<std::string> key) {
  ElectionGroup election{"election", std::move(protocol), {}, std::move(key)};
  election.nodes.reserve(node_count);
  for (std::size_t n = 0; n < node_count; ++n) election.nodes.push_back(static_cast<NodeId>(n));
  return election;
}

Topology topology_of(const WorldConfig& world) {
  std::vector<NamedEndpoint> servers;
  servers.reserve(world.servers.size());
  for (const ServerSpec& spec : world.servers) {
    servers.push_back(NamedEndpoint{spec.endpoint, spec.name, spec.kind, spec.group, spec.traits});
  }
  std::vector<ElectionGroup> groups = world.groups;
  if (groups.empty()) groups.push_back(election_group(world.node_count, {}, std::nullopt));
  return Topology(world.node_count, std::move(servers), std::move(groups));
}

}  // namespace electsim::sim
