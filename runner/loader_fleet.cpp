// The scenario loader (runner/loader_detail.hpp): a fleet's `services` section (classes, their
// protocols and autoscaling), and the fleet built from it: election groups, the store shards
// services are assigned to by hash, the aggregator in front of them, each service's sink fencing.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runner/loader_detail.hpp"
#include "servers/registry.hpp"

namespace electsim::runner::detail {

std::optional<Loader::ServiceClass> Loader::read_service_class(const json& v,
                                                               const std::string& pointer,
                                                               bool named) {
  const std::vector<std::string> keys =
      named ? std::vector<std::string>{"name", "count", "replicas", "protocol", "autoscale"}
            : std::vector<std::string>{"count", "replicas", "autoscale"};
  if (!check_object(v, pointer, keys, named ? "a class of services" : "the services section")) {
    return std::nullopt;
  }
  const Limits& limits = options_.limits;
  ServiceClass c;
  c.pointer = pointer;
  const auto read = [&](const char* key, std::size_t ceiling, const char* what) {
    const json* value = get(v, key);
    if (value == nullptr) {
      problem(child(pointer, key), fmt::format("{}, such as 3", what), kRequired);
      return std::size_t{0};
    }
    const auto n = as_unsigned(*value);
    if (!n || *n < 1 || *n > ceiling) {
      problem(child(pointer, key), fmt::format("{}: a whole number from 1 to {}", what, ceiling),
              json_excerpt(*value));
      return std::size_t{0};
    }
    return static_cast<std::size_t>(*n);
  };
  if (named) {
    const json* name = get(v, "name");
    const std::string text = name != nullptr && name->is_string() ? name->get<std::string>() : "";
    const bool plain =
        !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_';
        });
    if (!plain) {
      problem(child(pointer, "name"),
              "the class's name: 1 to 64 letters, digits, '-' or '_', such as \"batch\"",
              name == nullptr ? std::string(kRequired) : json_excerpt(*name));
    } else {
      c.name = text;
    }
    if (const json* protocol = get(v, "protocol")) {
      const std::string at = child(pointer, "protocol");
      if (!protocol->is_object()) {
        problem(at,
                "the class's protocol: an object of parameters over the file's protocol section, "
                "or with \"name\" a protocol of its own, such as {\"name\": \"kubernetes\"}",
                json_excerpt(*protocol));
      } else {
        c.protocol = *protocol;
        if (const json* name = get(*protocol, "name")) {
          if (const protocols::ProtocolInfo* info = read_protocol_name(*name, child(at, "name"))) {
            c.protocol_name = info->name;
          }
          c.protocol.erase("name");
        }
      }
    }
  }
  c.count = read("count", limits.max_services, "how many services");
  c.replicas = read("replicas", limits.max_nodes, "the election nodes of each service");
  c.running = c.replicas;
  if (c.count == 0 || c.replicas == 0 || (named && c.name.empty())) return std::nullopt;
  if (const json* autoscale = get(v, "autoscale")) {
    if (!read_autoscale(*autoscale, child(pointer, "autoscale"), c)) return std::nullopt;
  }
  return c;
}

bool Loader::read_autoscale(const json& v, const std::string& pointer, ServiceClass& c) {
  if (!check_object(v, pointer, {"to", "at", "over"}, "an auto-scaler")) return false;
  const std::size_t before = problems_.size();
  const json* to = get(v, "to");
  const std::uint64_t want = to != nullptr ? as_unsigned(*to).value_or(0) : 0;
  const std::size_t most = options_.limits.max_nodes;
  if (want <= c.replicas || want > most) {
    problem(child(pointer, "to"),
            fmt::format("the replicas each service grows to: a whole number from {} to {}",
                        c.replicas + 1, most),
            to == nullptr ? std::string(kRequired) : json_excerpt(*to));
  }
  const json* at = get(v, "at");
  std::optional<sim::Time> start;
  if (at == nullptr) {
    problem(child(pointer, "at"), "when the auto-scaler starts the first replica, such as \"30s\"",
            kRequired);
  } else {
    start = read_time(*at, child(pointer, "at"));
  }
  sim::Duration over{0};
  if (const json* spread = get(v, "over")) {
    if (auto d = read_time(*spread, child(pointer, "over"))) over = d->since_start();
  }
  if (problems_.size() != before) return false;
  if (duration_ && start->since_start() + over >= *duration_) {
    problem(
        pointer,
        fmt::format("an auto-scaler that is done before the run ends (at {})",
                    sim::format_duration(*duration_)),
        fmt::format("\"at\" + \"over\" = {}", sim::format_duration(start->since_start() + over)));
    return false;
  }
  c.running = c.replicas;
  c.replicas = static_cast<std::size_t>(want);
  c.scale_at = *start;
  c.scale_over = over;
  return true;
}

void Loader::scale_fleet(Scenario& s) const {
  for (const ServiceClass& c : classes_) {
    if (c.running == c.replicas) continue;
    // Round by round, each service gains one replica, so that every service grows alike: the
    // i-th of the class's M new replicas starts at at + over x i / M.
    const std::size_t added = c.replicas - c.running;
    const std::size_t total = added * c.count;
    std::size_t i = 0;
    for (std::size_t r = c.running; r < c.replicas; ++r) {
      for (std::size_t k = 0; k < c.count; ++k, ++i) {
        const auto node = static_cast<sim::NodeId>(c.first_node + k * c.replicas + r);
        s.world.start_stopped.push_back(node);
        sim::FaultSpec start;
        start.kind = sim::FaultKind::restart;
        start.target = sim::Target{sim::TargetKind::node, node, {}};
        start.at = c.scale_at + sim::Duration(static_cast<std::int64_t>(
                                    static_cast<long double>(c.scale_over.count()) *
                                    static_cast<long double>(i) / static_cast<long double>(total)));
        s.world.faults.push_back(std::move(start));
      }
    }
  }
  std::sort(s.world.start_stopped.begin(), s.world.start_stopped.end());
}

void Loader::read_services(const json& v) {
  services_given_ = true;
  const Limits& limits = options_.limits;
  std::vector<ServiceClass> classes;
  bool whole = true;  // every class read
  if (v.is_object() && v.contains("classes")) {
    if (!check_object(v, "/services", {"classes"}, "the services section")) return;
    const json& list = v.at("classes");
    constexpr std::size_t kMaxClasses = 64;
    if (!list.is_array() || list.empty() || list.size() > kMaxClasses) {
      problem("/services/classes",
              fmt::format("a list of 1 to {} classes, each {{\"name\", \"count\", "
                          "\"replicas\", \"protocol\"}}",
                          kMaxClasses),
              json_excerpt(list));
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string pointer = fmt::format("/services/classes/{}", i);
      std::optional<ServiceClass> c = read_service_class(list[i], pointer, true);
      if (c && std::any_of(classes.begin(), classes.end(),
                           [&](const ServiceClass& o) { return o.name == c->name; })) {
        problem(child(pointer, "name"), "a name no other class has", json_quoted(c->name));
        c.reset();
      }
      if (c) {
        classes.push_back(std::move(*c));
      } else {
        whole = false;
      }
    }
  } else if (std::optional<ServiceClass> c = read_service_class(v, "/services", false)) {
    classes.push_back(std::move(*c));
  } else {
    whole = false;
  }
  // What each service's protocol is checked against: the first class's service.
  if (!classes.empty()) cluster_size_ = classes.front().replicas;
  if (!whole) return;
  std::size_t services = 0;
  std::size_t nodes = 0;
  for (ServiceClass& c : classes) {
    c.first_service = services;
    c.first_node = nodes;
    if (c.count > limits.max_services - services) {
      problem("/services",
              fmt::format("at most {} services in all (the limit on a fleet's services)",
                          limits.max_services),
              fmt::format("{} by {}", services + c.count, c.pointer));
      return;
    }
    if (c.count > (limits.max_fleet_nodes - nodes) / c.replicas) {
      problem(
          "/services",
          fmt::format("at most {} nodes in all, count x replicas (the limit on a fleet's nodes)",
                      limits.max_fleet_nodes),
          classes.size() == 1
              ? fmt::format("{} x {}", c.count, c.replicas)
              : fmt::format("{} nodes by {}", nodes + c.count * c.replicas, c.pointer));
      return;
    }
    services += c.count;
    nodes += c.count * c.replicas;
  }
  classes_ = std::move(classes);
  services_ = services;
  nodes_ = nodes;
}

const Loader::ServiceClass& Loader::class_of(std::size_t service) const {
  // The last class whose first service is at most `service` (classes_ is in service order).
  const auto it =
      std::upper_bound(classes_.begin(), classes_.end(), service,
                       [](std::size_t k, const ServiceClass& c) { return k < c.first_service; });
  return *std::prev(it);
}

std::size_t Loader::first_node_of(std::size_t service) const {
  const ServiceClass& c = class_of(service);
  return c.first_node + (service - c.first_service) * c.replicas;
}

std::string Loader::service_name(std::size_t k) {
  return fmt::format("svc-{}", k);
}

std::optional<std::size_t> Loader::service_index(std::string_view name) const {
  if (!name.starts_with("svc-")) return std::nullopt;
  const std::string_view number = name.substr(4);
  std::size_t k = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), k);
  // Written as service_name writes it: digits only, no leading zero.
  if (ec != std::errc{} || end != number.data() + number.size() || number.empty() ||
      (number.size() > 1 && number.front() == '0') || k >= services_) {
    return std::nullopt;
  }
  return k;
}

std::size_t store_shard_of(std::string_view service, std::size_t shards) {
  // FNV-1a, 64 bits, of the service's name: a fixed hash, the same on every platform, so that a
  // service's shard never depends on the run (as a client's hash ring would be configured).
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : service) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return static_cast<std::size_t>(h % shards);
}

bool Loader::check_aggregated(const Scenario& s, const std::vector<params::ParamSpec>& specs) {
  // An aggregator keeps etcd-style sessions: the lease protocol's, whose holders renew a lease.
  if (s.protocol != "lease") {
    problem("/aggregator",
            "a fleet of the lease protocol (an aggregator keeps etcd sessions for its services)",
            json_quoted(s.protocol));
    return false;
  }
  if (store_shards_ > 1 || store_members_ > 1) {
    problem("/aggregator",
            "a fleet on one single store (aggregators in front of a sharded or replicated store "
            "are not modelled)",
            store_shards_ > 1 ? fmt::format("store.shards {}", store_shards_)
                              : fmt::format("store.members {}", store_members_));
    return false;
  }
  // A client's claim must end before the shared lease can: its TTL at most the aggregator's.
  const sim::Duration shared = s.services.aggregator->ttl;
  sim::Duration fallback{0};
  for (const params::ParamSpec& spec : specs) {
    if (spec.name != "ttl") continue;
    if (const auto* d = std::get_if<sim::Duration>(&spec.default_value)) fallback = *d;
  }
  for (const ServiceClass& c : classes_) {
    const bool own = !c.protocol_name.empty() && c.protocol_name != s.protocol;
    if (own && c.protocol_name != "lease") {
      problem(child(c.pointer, "protocol/name"),
              "the lease protocol (an aggregator keeps etcd sessions for its services)",
              json_quoted(c.protocol_name));
      return false;
    }
    const json* ttl = c.protocol.contains("ttl")                  ? &c.protocol.at("ttl")
                      : !own && s.protocol_params.contains("ttl") ? &s.protocol_params.at("ttl")
                                                                  : nullptr;
    const std::size_t before = problems_.size();
    const std::optional<sim::Duration> d =
        ttl != nullptr ? read_positive_duration(*ttl, "/protocol/ttl") : fallback;
    if (problems_.size() != before || !d) return false;
    if (*d > shared) {
      problem("/aggregator/ttl",
              fmt::format("a TTL at least every service's own ({} of {})", sim::format_duration(*d),
                          c.name.empty() ? std::string("the services") : "class " + c.name),
              sim::format_duration(shared));
      return false;
    }
  }
  return true;
}

bool Loader::compatible_in_fleet(const protocols::ProtocolInfo& file,
                                 const protocols::PreparedProtocol& file_prepared,
                                 const protocols::ProtocolInfo& runs,
                                 const protocols::PreparedProtocol& prepared,
                                 const std::string& pointer) {
  // One trace header and one analysis judge every service of a run: the protocols of a fleet's
  // classes must agree on what those read (the nodes' own message types, the coordinator, the
  // servers, whether tokens grow with every grant). Store-based protocols (lease, kubernetes,
  // consul, zookeeper) mix; a protocol with messages of its own mixes only with itself.
  std::string differs;
  if (runs.resource.empty() && (prepared.uses_store || !runs.servers.empty())) {
    differs = "it contends for one fixed resource of its servers";
  } else if (runs.message_types != file.message_types ||
             runs.election_message_types != file.election_message_types) {
    differs = "its nodes send messages of other types";
  } else if (prepared.uses_store != file_prepared.uses_store ||
             prepared.coordinator != file_prepared.coordinator || runs.servers != file.servers) {
    differs = "it depends on other servers";
  } else if (prepared.tokens_ordered != file_prepared.tokens_ordered) {
    differs = "its tokens are ordered otherwise";
  }
  if (differs.empty()) return true;
  problem(pointer,
          fmt::format("a protocol that can share a fleet with the file's {} (one trace header "
                      "and one analysis judge every service)",
                      file.name),
          fmt::format("{}: {}", json_quoted(runs.name), differs));
  return false;
}

void Loader::set_sink_fencing(Scenario& s) const {
  const bool fencing = s.services.sink_fencing.value_or(s.prepared.fencing.value_or(true));
  s.services.sink.fencing = fencing;
  s.services.sink.fencing_by_resource.clear();
  if (s.services.sink_fencing || class_fencing_.empty()) return;
  const auto fences = [&](std::size_t ci) { return class_fencing_[ci].value_or(true); };
  bool differ = false;
  for (std::size_t ci = 0; ci < classes_.size(); ++ci) differ = differ || fences(ci) != fencing;
  if (!differ) return;
  // A service's resource is its group's index in the world (sim::ElectionGroup).
  s.services.sink.fencing_by_resource.resize(services_);
  for (std::size_t ci = 0; ci < classes_.size(); ++ci) {
    const ServiceClass& c = classes_[ci];
    for (std::size_t k = c.first_service; k < c.first_service + c.count; ++k) {
      s.services.sink.fencing_by_resource[k] = fences(ci);
    }
  }
}

void Loader::build_fleet(Scenario& s) {
  const protocols::ProtocolInfo* info = protocols::find_protocol(s.protocol);
  if (info == nullptr || !s.prepared.factory) return;
  s.fleet.services = services_;
  s.fleet.replicas = 0;
  for (const ServiceClass& c : classes_) s.fleet.replicas = std::max(s.fleet.replicas, c.replicas);
  if (info->resource.empty() && (s.prepared.uses_store || !info->servers.empty())) {
    // A protocol that needs its servers for one fixed resource would make every service contend
    // for it.
    problem("/services",
            fmt::format("a protocol that can run as a fleet: {} contends for one fixed resource "
                        "of its servers, so its services would share one election",
                        s.protocol),
            json_quoted(s.protocol));
    return;
  }
  // Each class's own configuration, checked as the protocol checks any (for its first and last
  // service, with their own resource: the others differ only in the service's number), for a
  // service of the class's size: the file's protocol with the class's parameters over the file's,
  // or the class's own protocol with its parameters over that protocol's defaults. Each service
  // contends for its own resource: its protocol's, with the service's name appended.
  std::vector<sim::ProtocolFactory> factories;
  std::vector<std::optional<std::string>> keys;
  std::vector<std::size_t> factory_of(services_);  // the factory of service k
  std::vector<std::size_t> first_node(services_);
  std::vector<std::string> protocol_of(classes_.size());
  class_fencing_.assign(classes_.size(), std::nullopt);
  for (std::size_t ci = 0; ci < classes_.size(); ++ci) {
    const ServiceClass& c = classes_[ci];
    const bool own = !c.protocol_name.empty() && c.protocol_name != s.protocol;
    const protocols::ProtocolInfo* runs = own ? protocols::find_protocol(c.protocol_name) : info;
    const std::string pointer =
        c.protocol.empty() && !own ? "/protocol" : child(c.pointer, "protocol");
    json params = own ? json::object() : s.protocol_params;
    for (const auto& [key, value] : c.protocol.items()) params[key] = value;
    std::string base;
    if (!runs->resource.empty()) {
      if (params.contains(runs->resource) && params.at(runs->resource).is_string()) {
        base = params.at(runs->resource).get<std::string>();
      } else {
        for (const params::ParamSpec& spec : runs->params) {
          if (spec.name != runs->resource) continue;
          if (const auto* text = std::get_if<std::string>(&spec.default_value)) base = *text;
        }
      }
    }
    const auto resource_of = [&](std::size_t k) {
      return protocols::fleet_resource(base, service_name(k));
    };
    protocols::ClusterInfo cluster{c.replicas, s.workload};
    for (const std::string& name : runs->servers) {
      if (const servers::ServerKindInfo* kind = servers::find_server_kind(name)) {
        cluster.servers.emplace_back(name, servers::count_of(*kind, s.services));
      }
    }
    std::optional<protocols::PreparedProtocol> prepared;
    for (const std::size_t k : {c.first_service, c.first_service + c.count - 1}) {
      if (!runs->resource.empty()) params[runs->resource] = resource_of(k);
      const std::size_t before = problems_.size();
      prepared = runs->prepare(params, pointer, cluster, problems_);
      if (!prepared && problems_.size() == before) {
        problem(pointer, "parameters the " + runs->name + " protocol accepts",
                "a refusal without a reason");
      }
      if (!prepared) return;
      if (!runs->resource.empty() && !prepared->with_resource) {
        problem(own || c.protocol.contains(runs->resource) ? child(pointer, runs->resource)
                                                           : child("/protocol", runs->resource),
                fmt::format("a {} from which every service's own can be made", runs->resource),
                json_quoted(params[runs->resource].get<std::string>()));
        return;
      }
    }
    if (own && !compatible_in_fleet(*info, s.prepared, *runs, *prepared, child(pointer, "name"))) {
      return;
    }
    protocol_of[ci] = runs->name;
    class_fencing_[ci] = prepared->fencing;
    for (std::size_t k = c.first_service; k < c.first_service + c.count; ++k) {
      first_node[k] = first_node_of(k);
    }
    if (runs->resource.empty()) {
      // A protocol that contends for nothing outside its nodes runs alike in every service of
      // the class.
      for (std::size_t k = c.first_service; k < c.first_service + c.count; ++k) {
        factory_of[k] = factories.size();
      }
      factories.push_back(prepared->factory);
      keys.emplace_back(prepared->leader_key);
      continue;
    }
    for (std::size_t k = c.first_service; k < c.first_service + c.count; ++k) {
      std::string resource = resource_of(k);
      factory_of[k] = factories.size();
      factories.push_back(prepared->with_resource(resource));
      keys.push_back(prepared->leader_key ? std::optional<std::string>(std::move(resource))
                                          : std::nullopt);
    }
  }
  // A sharded store's shards, as its servers' groups name them, and the aggregators' tiers.
  const std::vector<std::string> shards = topology_.store_shards();
  const std::size_t tiers = s.services.aggregator ? s.services.aggregator->tiers : 0;
  if (tiers > 0 && !check_aggregated(s, info->params)) return;
  s.world.groups.clear();
  s.world.groups.reserve(services_);
  for (std::size_t k = 0; k < services_; ++k) {
    const ServiceClass& c = class_of(k);
    const std::string& protocol = protocol_of[static_cast<std::size_t>(&c - classes_.data())];
    sim::ElectionGroup group{service_name(k), protocol, {}, keys[factory_of[k]], c.name};
    if (!shards.empty()) group.store = shards[store_shard_of(group.name, shards.size())];
    // Tier t is the services from t x services / tiers on: each aggregator a run of them.
    if (tiers > 0) group.via = fmt::format("aggregator:{}", k * tiers / services_);
    const std::size_t replicas = c.replicas;
    group.nodes.reserve(replicas);
    for (std::size_t r = 0; r < replicas; ++r) {
      group.nodes.push_back(static_cast<sim::NodeId>(first_node[k] + r));
    }
    s.world.groups.push_back(std::move(group));
  }
  // Node n runs its service's protocol as that service's node n - the service's first (the ids
  // its protocol sees, per_node's among them). Found by a binary search once per node made.
  s.prepared.factory =
      [factories = std::move(factories), factory_of = std::move(factory_of),
       first_node = std::move(first_node)](sim::NodeId self) -> std::unique_ptr<sim::Protocol> {
    const auto node = static_cast<std::size_t>(self);
    const std::size_t k =
        static_cast<std::size_t>(std::upper_bound(first_node.begin(), first_node.end(), node) -
                                 first_node.begin()) -
        1;
    return factories[factory_of[k]](static_cast<sim::NodeId>(node - first_node[k]));
  };
  s.prepared.leader_key.reset();  // each service's is its group's
  scale_fleet(s);
}

}  // namespace electsim::runner::detail
