// The server registry (servers/registry.hpp): the built-in kinds in the order a world adds them,
// then any registered from outside. Each entry comes from its kind's folder; this file only orders
// them and hands out addresses.
#include "servers/registry.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace electsim::servers {

// Each from its own folder.
ServerKindInfo store_kind();
ServerKindInfo sink_kind();
ServerKindInfo postgres_kind();
ServerKindInfo redis_kind();
ServerKindInfo aggregator_kind();

namespace {

// The kinds of this folder, the ones scenarios configure in sections of their own.
std::vector<ServerKindInfo> built_in_kinds() {
  // The order fixes the order of a world's processes, and so its traces: the store, the sink,
  // the database, the Redis masters, as worlds have always been built; the aggregators last,
  // after the store they renew at.
  return {store_kind(), sink_kind(), postgres_kind(), redis_kind(), aggregator_kind()};
}

std::vector<ServerKindInfo>& table() {
  static std::vector<ServerKindInfo> kinds = built_in_kinds();
  return kinds;
}

// How many kinds at the table's front are built in: registered kinds come after them.
std::size_t built_in_count() {
  static const std::size_t count = built_in_kinds().size();
  return count;
}

}  // namespace

WorldBuilder::WorldBuilder(sim::WorldConfig& world) : world_(world) {
  for (const sim::ServerSpec& s : world_.servers) mark(sim::server_slot(s.endpoint));
}

bool WorldBuilder::taken(std::size_t slot) const {
  return slot < used_.size() && used_[slot];
}

void WorldBuilder::mark(std::size_t slot) {
  if (slot >= used_.size()) used_.resize(slot + 1, false);
  used_[slot] = true;
}

sim::Endpoint WorldBuilder::add(std::string name, std::string_view kind, std::string group,
                                const ServerForm& form, sim::ClockConfig clock,
                                std::function<std::unique_ptr<sim::Process>()> make,
                                std::optional<std::size_t> slot) {
  if (!slot) {
    while (taken(next_free_)) ++next_free_;
    slot = next_free_++;
  }
  ELECTSIM_ASSERT(*slot < sim::kMaxServerSlots && !taken(*slot), "a free server address");
  mark(*slot);
  const sim::Endpoint address = sim::server_endpoint(*slot);
  world_.servers.push_back(sim::ServerSpec{address, std::move(name), std::string(kind),
                                           std::move(group), form.traits, clock, std::move(make)});
  return address;
}

const std::vector<ServerKindInfo>& all_server_kinds() {
  return table();
}

const ServerKindInfo* find_server_kind(std::string_view name) {
  const auto& kinds = table();
  const auto it = std::find_if(kinds.begin(), kinds.end(),
                               [&](const ServerKindInfo& k) { return k.name == name; });
  return it == kinds.end() ? nullptr : &*it;
}

void register_server_kind(ServerKindInfo kind) {
  ELECTSIM_ASSERT(find_server_kind(kind.name) == nullptr, "one kind of server per name");
  ELECTSIM_ASSERT(kind.add != nullptr, "a kind says how it adds its servers");
  table().push_back(std::move(kind));
}

bool is_built_in(std::string_view name) {
  const auto& kinds = table();
  const auto end = kinds.begin() + static_cast<std::ptrdiff_t>(built_in_count());
  return std::any_of(kinds.begin(), end, [&](const ServerKindInfo& k) { return k.name == name; });
}

std::size_t count_of(const ServerKindInfo& kind, const Services& services) {
  return kind.count ? kind.count(services) : servers_of(services, kind.name);
}

std::size_t servers_of(const Services& services, std::string_view kind) {
  std::size_t n = 0;
  for (const auto& [name, count] : services.more) n += name == kind ? count : 0;
  return n;
}

void require_servers(Services& services, std::string_view kind) {
  const ServerKindInfo* info = find_server_kind(kind);
  if (info == nullptr) return;
  if (info->require) {
    info->require(services);
  } else if (!is_built_in(kind) && servers_of(services, kind) == 0) {
    services.more.emplace_back(info->name, 1);
  }
}

std::string server_noun(const sim::Topology& topology, sim::Endpoint e) {
  const sim::NamedEndpoint* server = topology.server(e);
  if (server == nullptr) return {};
  const ServerKindInfo* kind = find_server_kind(server->kind);
  if (kind == nullptr) return {};
  for (const ServerForm& form : kind->forms) {
    if (form.traits == server->traits) return form.noun;
  }
  return {};
}

std::vector<std::string> nouns_taking(sim::FaultKind fault) {
  std::vector<std::string> nouns;
  for (const ServerKindInfo& kind : table()) {
    for (const ServerForm& form : kind.forms) {
      if ((form.traits.faults & sim::fault_bit(fault)) != 0) nouns.push_back(form.noun);
    }
  }
  return nouns;
}

}  // namespace electsim::servers
