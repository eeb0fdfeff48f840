// The scenario loader (runner/loader_detail.hpp): the readers of single values every section
// shares: strings, booleans, durations, times, drift, node ids, endpoints and fault targets.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "runner/loader_detail.hpp"
#include "servers/registry.hpp"

namespace electsim::runner::detail {

bool Loader::check_object(const json& value, const std::string& pointer,
                          const std::vector<std::string>& keys, const std::string& what) {
  return params::check_object(value, pointer, keys, what, problems_);
}

std::optional<std::string> Loader::read_string(const json& v, const std::string& pointer) {
  if (!v.is_string()) {
    problem(pointer, "a string", json_excerpt(v));
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<bool> Loader::read_bool(const json& v, const std::string& pointer) {
  return params::read_bool(v, pointer, problems_);
}

std::optional<sim::Duration> Loader::read_positive_duration(const json& v,
                                                            const std::string& pointer) {
  return params::read_positive_duration(v, pointer, problems_);
}

std::optional<sim::Duration> Loader::read_server_timer(const json& v, const std::string& pointer,
                                                       const char* zero_means) {
  return params::read_server_timer(v, pointer, problems_, zero_means);
}

// A moment of the run: from 0 up to (not including) the end.
std::optional<sim::Time> Loader::read_time(const json& v, const std::string& pointer) {
  const auto d = params::read_duration(v, pointer, problems_);
  if (!d) return std::nullopt;
  if (duration_ && *d >= *duration_) {
    problem(pointer,
            fmt::format("a time before the end of the run ({})", sim::format_duration(*duration_)),
            json_excerpt(v));
    return std::nullopt;
  }
  return sim::Time(*d);
}

std::optional<std::int64_t> Loader::read_drift_ppb(const json& v, const std::string& pointer) {
  const double ppm = v.is_number() ? v.get<double>() : std::nan("");
  if (!std::isfinite(ppm) || std::fabs(ppm) > kMaxDriftPpm) {
    problem(pointer,
            "a drift in ppm from -500000 to 500000 (a clock at most 50% fast or slow), such as 50",
            json_excerpt(v));
    return std::nullopt;
  }
  return std::llround(ppm * 1000.0);
}

std::string Loader::node_expected() const {
  if (!nodes_) return "a node id (a whole number from 0)";
  if (*nodes_ == 1) return "the node id 0 (the scenario has 1 node)";
  return fmt::format("a node id from 0 to {} (the scenario has {} nodes)", *nodes_ - 1, *nodes_);
}

std::optional<sim::NodeId> Loader::read_node(const json& v, const std::string& pointer) {
  const auto n = as_unsigned(v);
  if (!n || (nodes_ && *n >= *nodes_) ||
      *n > static_cast<std::uint64_t>(std::numeric_limits<sim::NodeId>::max())) {
    problem(pointer, node_expected(), json_excerpt(v));
    return std::nullopt;
  }
  return static_cast<sim::NodeId>(*n);
}

void Loader::build_topology(const servers::Services& services) {
  servers::Services world_services = services;
  // A file whose protocol failed to validate still has the servers its sections or its protocol
  // ask for, so that its faults are judged against the world it means.
  for (const std::string& kind : required_kinds_) servers::require_servers(world_services, kind);
  sim::WorldConfig world;
  world.node_count = nodes_.value_or(0);
  servers::add_services(world, world_services);
  topology_ = sim::topology_of(world);
  record_keepers_.clear();
  for (const sim::NamedEndpoint& s : topology_.servers()) {
    if (s.kind != sim::server_kind::store &&
        (s.traits.faults & sim::fault_bit(sim::FaultKind::operator_clear)) != 0) {
      record_keepers_.push_back(s.name);
    }
  }
}

std::optional<sim::Endpoint> Loader::fault_target(const std::string& text) const {
  const auto e = topology_.find(text);
  if (!e || *e >= 0 || topology_.server(*e)->traits.faults == 0) return std::nullopt;
  return e;
}

// A hint for a server name this world does not have, from the kind it names ("redis:7",
// "postgres" in a world without the database, "store:1" with a single store, "echo: 1"): how the
// index is written, which servers of the kind there are, or when the world has them.
std::string Loader::server_name_hint(const json& v) const {
  if (!v.is_string()) return {};
  const std::string& text = v.get_ref<const std::string&>();
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    const std::string prefix = kind.name + ":";
    const bool indexed = starts_with(text, prefix);
    if (!indexed && text != kind.name) continue;
    std::vector<std::string> names;
    for (const sim::NamedEndpoint& s : topology_.servers()) {
      if (s.kind == kind.name && starts_with(s.name, prefix) == indexed) names.push_back(s.name);
    }
    if (names.empty()) return kind.absent_hint;
    if (!indexed) return {};
    const std::string_view index = std::string_view(text).substr(prefix.size());
    if (!index.empty() && !parse_index(index)) {
      return fmt::format(
          "the index after \"{}\" is written in plain digits, with no space, sign or leading zero",
          prefix);
    }
    if (!kind.plural.empty()) {
      return fmt::format("{} are \"{}\" to \"{}\"", kind.plural, names.front(), names.back());
    }
    return {};
  }
  return {};
}

// The servers an endpoint may name, for a message: "store" (the store's address in any world),
// then the world's servers, a group's run of indexed names as "\"g:0\" to \"g:N-1\"".
std::string Loader::server_names_expected() const {
  std::vector<std::string> parts = {"\"store\""};
  const auto& servers = topology_.servers();
  for (std::size_t i = 0; i < servers.size();) {
    std::size_t k = i;
    while (k + 1 < servers.size() && !servers[i].group.empty() &&
           servers[k + 1].group == servers[i].group) {
      ++k;
    }
    if (k > i) {
      parts.push_back(fmt::format("\"{}\" to \"{}\"", servers[i].name, servers[k].name));
    } else if (servers[i].name != "store") {
      parts.push_back(json_quoted(servers[i].name));
    }
    i = k + 1;
  }
  return or_list(parts);
}

std::string or_list(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += i == 0 ? "" : i + 1 == parts.size() ? " or " : ", ";
    out += parts[i];
  }
  return out;
}

bool Loader::refused_in_sharded_store(const std::string& text, const std::string& pointer) {
  if (store_shards_ <= 1 ||
      (text != "store" && text != "store_leader" && text != "store_follower")) {
    return false;
  }
  const std::vector<std::string> shards = topology_.store_shards();
  problem(pointer,
          fmt::format("a shard's server by its name (\"{}\" to \"{}\"{}): a sharded store has "
                      "no one store",
                      shards.front(), shards.back(),
                      store_members_ > 1
                          ? fmt::format(", each with members \"{}:0\" to \"{}:{}\"", shards.front(),
                                        shards.front(), store_members_ - 1)
                          : ""),
          json_quoted(text));
  return true;
}

std::optional<sim::Endpoint> Loader::read_endpoint(const json& v, const std::string& pointer) {
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    // "store" is the store's address in any world with one store: a replicated store's member 0.
    if (text == "store" && store_shards_ <= 1) return topology_.store_member(0);
    if (refused_in_sharded_store(text, pointer)) return std::nullopt;
    if (const auto server = topology_.find(text); server && *server < 0) return server;
  }
  if (v.is_number_integer()) return read_node(v, pointer);
  problem(pointer, node_expected() + ", " + server_names_expected(), json_excerpt(v),
          server_name_hint(v));
  return std::nullopt;
}

std::optional<sim::Target> Loader::read_target(const json& v, const std::string& pointer,
                                               bool allow_store) {
  std::vector<std::string> roles = {"leader", "follower", "random"};
  if (allow_store) roles.emplace_back("store");
  // The servers faults act on, the store's members last, after their roles.
  for (const sim::NamedEndpoint& server : topology_.servers()) {
    if (server.traits.faults != 0 && server.kind != sim::server_kind::store) {
      roles.push_back(server.name);
    }
  }
  if (store_members_ > 1) {
    roles.emplace_back("store_leader");
    roles.emplace_back("store_follower");
    for (std::size_t k = 0; k < store_members_; ++k) roles.push_back(fmt::format("store:{}", k));
  }
  if (v.is_number_integer()) {
    const auto node = read_node(v, pointer);
    if (!node) return std::nullopt;
    return sim::Target{sim::TargetKind::node, *node, {}};
  }
  if (v.is_string() && refused_in_sharded_store(v.get_ref<const std::string&>(), pointer)) {
    return std::nullopt;
  }
  if (v.is_string() && services_ > 0) {
    // A fleet's roles are each service's: "svc-K:leader", "svc-K:follower".
    const auto& text = v.get_ref<const std::string&>();
    if (text == "leader" || text == "follower" || text == "random") {
      problem(pointer,
              fmt::format("a node id, a server, or a service's role such as \"svc-0:{}\" (in a "
                          "fleet each service has its own {})",
                          text == "random" ? "follower" : text, text == "random" ? "nodes" : text),
              json_excerpt(v));
      return std::nullopt;
    }
    const std::size_t colon = text.rfind(':');
    if (text.starts_with("svc-") && colon != std::string::npos) {
      const std::string role = text.substr(colon + 1);
      const std::optional<std::size_t> k = service_index(std::string_view(text).substr(0, colon));
      if (k && (role == "leader" || role == "follower")) {
        return sim::Target{
            role == "leader" ? sim::TargetKind::service_leader : sim::TargetKind::service_follower,
            static_cast<sim::NodeId>(*k), text.substr(0, colon)};
      }
      problem(pointer,
              fmt::format("a service's role: \"svc-K:leader\" or \"svc-K:follower\", K from 0 "
                          "to {}",
                          services_ - 1),
              json_excerpt(v));
      return std::nullopt;
    }
  }
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    if (text == "leader") return sim::Target{sim::TargetKind::leader, sim::kNoNode, {}};
    if (text == "follower") return sim::Target{sim::TargetKind::follower, sim::kNoNode, {}};
    if (text == "random") return sim::Target{sim::TargetKind::random, sim::kNoNode, {}};
    if (allow_store && text == "store")
      return sim::Target{sim::TargetKind::store, sim::kNoNode, {}};
    // A replicated store's members are targets by their Raft role when the fault fires too.
    if (store_members_ > 1) {
      if (text == "store_leader")
        return sim::Target{sim::TargetKind::group_leader, sim::kNoNode, "store"};
      if (text == "store_follower") {
        return sim::Target{sim::TargetKind::group_follower, sim::kNoNode, "store"};
      }
    }
    // Any other server that some fault acts on, by its name: whether this fault does is the
    // caller's check (sim::obeys).
    if (auto server = fault_target(text)) return sim::Target{sim::TargetKind::node, *server, {}};
  }
  std::string hint =
      v.is_string() ? did_you_mean(v.get_ref<const std::string&>(), roles) : std::string();
  if (std::string known = server_name_hint(v); !known.empty()) hint = known;
  if (store_members_ <= 1 && v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    if (text == "store_leader" || text == "store_follower") {
      hint = "store members are targets only in a replicated store: set store.members to 3 or 5";
    }
  }
  problem(pointer, node_expected() + " or one of " + joined(roles, true), json_excerpt(v), hint);
  return std::nullopt;
}

}  // namespace electsim::runner::detail
