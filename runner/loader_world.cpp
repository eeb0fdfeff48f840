// The scenario loader (runner/loader_detail.hpp): the world's sections: nodes, duration,
// network, disk, clocks, limits, workload and the registered servers; each server kind reads its
// own section (servers/registry.hpp).
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

void Loader::read_nodes(const json& document) {
  const json* v = get(document, "nodes");
  if (const json* services = get(document, "services")) {
    if (v != nullptr) {
      problem("/nodes", "no node count beside services (services gives count x replicas nodes)",
              json_excerpt(*v));
    }
    read_services(*services);
    return;
  }
  if (v == nullptr) {
    problem("/nodes", "the number of nodes, such as 5", kRequired);
    return;
  }
  const std::size_t limit = options_.limits.max_nodes;
  const auto n = as_unsigned(*v);
  if (!n || *n < 1) {
    problem("/nodes", "a whole number of nodes from 1", json_excerpt(*v));
    return;
  }
  if (*n > limit) {
    problem("/nodes", fmt::format("at most {} nodes (the limit on nodes)", limit),
            json_excerpt(*v));
    // The protocol's own checks still deserve a cluster size to judge by; the limit is the
    // largest one it can be handed safely.
    cluster_size_ = limit;
    return;
  }
  nodes_ = static_cast<std::size_t>(*n);
  cluster_size_ = nodes_;
}

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

void Loader::read_duration(const json& document) {
  const json* v = get(document, "duration");
  if (v == nullptr) {
    problem("/duration", "how long the run lasts, such as \"60s\"", kRequired);
    return;
  }
  const auto d = read_positive_duration(*v, "/duration");
  if (!d) return;
  const sim::Duration limit = options_.limits.max_duration;
  if (*d > limit) {
    problem(
        "/duration",
        fmt::format("at most {} (the limit on duration)", json_quoted(sim::format_duration(limit))),
        json_excerpt(*v));
    return;
  }
  duration_ = d;
}

sim::NetworkConfig Loader::read_network(const json& v) {
  sim::NetworkConfig network;
  if (!check_object(
          v, "/network",
          {"latency", "links", "loss", "duplicate", "in_flight", "clients", "peers", "tcp"},
          "the network section")) {
    return network;
  }
  network_links_ = true;
  if (const json* latency = get(v, "latency")) {
    if (auto d = params::read_distribution(*latency, "/network/latency", problems_)) {
      network.latency = *d;
    }
  }
  // The links are read once the world's servers are known (read_links), since they may name any.
  if (const json* loss = get(v, "loss")) {
    if (auto p = params::read_probability(*loss, "/network/loss", problems_)) network.loss = *p;
  }
  if (const json* dup = get(v, "duplicate")) {
    if (auto p = params::read_probability(*dup, "/network/duplicate", problems_)) {
      network.duplicate = *p;
    }
  }
  if (const json* in_flight = get(v, "in_flight")) {
    const std::vector<std::string> choices = {"drop_if_cut_on_arrival", "deliver"};
    if (in_flight->is_string() && *in_flight == "deliver") {
      network.in_flight = sim::InFlightPolicy::deliver;
    } else if (in_flight->is_string() && *in_flight == "drop_if_cut_on_arrival") {
      network.in_flight = sim::InFlightPolicy::drop_if_cut_on_arrival;
    } else {
      problem("/network/in_flight", "one of " + joined(choices, true), json_excerpt(*in_flight),
              in_flight->is_string()
                  ? did_you_mean(in_flight->get_ref<const std::string&>(), choices)
                  : std::string());
    }
  }
  // The transport of client-server links (TCP, as every real client library's) and of peer
  // links (datagrams, as electsim's peer protocols assume, unless a scenario asks for TCP).
  const auto transport = [&](const char* key, sim::Transport& out) {
    const json* value = get(v, key);
    if (value == nullptr) return;
    const std::vector<std::string> choices = {"tcp", "datagram"};
    const std::string text = value->is_string() ? value->get<std::string>() : std::string();
    if (text == "tcp" || text == "datagram") {
      out = text == "tcp" ? sim::Transport::tcp : sim::Transport::datagram;
    } else {
      problem(std::string("/network/") + key, "one of " + joined(choices, true),
              json_excerpt(*value), value->is_string() ? did_you_mean(text, choices) : "");
    }
  };
  transport("clients", network.clients);
  transport("peers", network.peers);
  if (const json* tcp = get(v, "tcp")) read_tcp(*tcp, network.tcp);
  return network;
}

// The network section's links, each between two endpoints of the world: read after the topology
// (build_topology), so that a link may name any server.
void Loader::read_links(const json& v, sim::NetworkConfig& network) {
  if (!network_links_) return;  // the section's shape was wrong: read_network said so
  if (const json* links = get(v, "links")) {
    if (!links->is_array()) {
      problem("/network/links",
              "an array of links such as [{\"from\": 0, \"to\": 1, \"latency\": "
              "\"20ms\"}]",
              json_excerpt(*links));
    } else {
      for (std::size_t i = 0; i < links->size(); ++i) {
        const json& link = (*links)[i];
        const std::string pointer = child("/network/links", i);
        if (!check_object(link, pointer, {"from", "to", "both_ways", "latency"}, "a link")) {
          continue;
        }
        sim::LinkLatency out;
        bool ok = true;
        for (const char* end : {"from", "to"}) {
          const json* e = get(link, end);
          if (e == nullptr) {
            problem(child(pointer, end), node_expected() + ", " + server_names_expected(),
                    kRequired);
            ok = false;
            continue;
          }
          const auto endpoint = read_endpoint(*e, child(pointer, end));
          if (!endpoint) {
            ok = false;
          } else if (end[0] == 'f') {
            out.from = *endpoint;
          } else {
            out.to = *endpoint;
          }
        }
        if (ok && out.from == out.to) {
          problem(child(pointer, "to"), "an endpoint other than \"from\"",
                  json_excerpt(link.at("to")));
        }
        if (const json* both = get(link, "both_ways")) {
          if (auto b = read_bool(*both, child(pointer, "both_ways"))) out.both_ways = *b;
        }
        if (const json* latency = get(link, "latency")) {
          if (auto d = params::read_distribution(*latency, child(pointer, "latency"), problems_)) {
            out.latency = *d;
          }
        } else {
          problem(child(pointer, "latency"), "the link's latency, such as \"20ms\"", kRequired);
        }
        network.links.push_back(std::move(out));
      }
    }
  }
}

// Linux's retransmission settings: TCP_RTO_MIN, TCP_RTO_MAX (net.ipv4.tcp_rto_max_ms since Linux
// 6.15, at most 120s there) and net.ipv4.tcp_retries2.
void Loader::read_tcp(const json& v, sim::TcpConfig& tcp) {
  if (!check_object(v, "/network/tcp", {"rto_min", "rto_max", "retries2"}, "the tcp section")) {
    return;
  }
  // A timer of at least 1ms and at most `most`, read into `out` when it is one.
  const auto timer = [&](const char* key, sim::Duration most, const char* expected,
                         sim::Duration& out) {
    const json* value = get(v, key);
    if (value == nullptr) return;
    const std::string pointer = std::string("/network/tcp/") + key;
    if (auto d = read_server_timer(*value, pointer)) {
      if (*d > most) {
        problem(pointer, expected, json_excerpt(*value));
      } else {
        out = *d;
      }
    }
  };
  timer("rto_min", std::chrono::seconds(120),
        "a duration from \"1ms\" to \"120s\" (Linux: \"200ms\")", tcp.rto_min);
  timer("rto_max", std::chrono::hours(1), "a duration from rto_min to \"1h\" (Linux: \"120s\")",
        tcp.rto_max);
  if (tcp.rto_max < tcp.rto_min) {
    problem(
        "/network/tcp/rto_max",
        fmt::format("a duration of at least rto_min (\"{}\")", sim::format_duration(tcp.rto_min)),
        fmt::format("\"{}\"", sim::format_duration(tcp.rto_max)));
  }
  if (const json* value = get(v, "retries2")) {
    const auto n = as_unsigned(*value);
    if (!n || *n == 0 || *n > 100) {
      problem("/network/tcp/retries2",
              "a whole number of retransmissions from 1 to 100 (Linux's tcp_retries2: 15)",
              json_excerpt(*value));
    } else {
      tcp.retries2 = static_cast<std::uint32_t>(*n);
    }
  }
}

// {"min": a, "max": b} for a clock's drift (numbers in ppm, to whole ppb) or offset (durations,
// may be negative, to whole ns); min <= max.
sim::DiskConfig Loader::read_disk(const json& v) {
  sim::DiskConfig disk;
  if (!check_object(v, "/disk", {"fsync"}, "the disk section")) return disk;
  if (const json* fsync = get(v, "fsync")) {
    if (auto d = params::read_distribution(*fsync, "/disk/fsync", problems_)) disk.fsync = *d;
  }
  return disk;
}

std::optional<DrawRange> Loader::read_range(const json& v, const std::string& pointer, bool drift) {
  const std::string what = drift ? "a drift range" : "an offset range";
  if (!check_object(v, pointer, {"min", "max"}, what)) return std::nullopt;
  const std::size_t before = problems_.size();
  std::optional<std::int64_t> bounds[2];
  const char* keys[2] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    const std::string bound_pointer = child(pointer, keys[i]);
    const json* bound = get(v, keys[i]);
    if (bound == nullptr) {
      problem(bound_pointer,
              drift ? "a drift in ppm, such as -50 (a range needs both min and max)"
                    : "a duration that may be negative, such as \"-50ms\" (a range needs both "
                      "min and max)",
              kRequired);
      continue;
    }
    if (drift) {
      bounds[i] = read_drift_ppb(*bound, bound_pointer);
    } else if (auto d = params::read_duration(*bound, bound_pointer, problems_, true)) {
      bounds[i] = d->count();
    }
  }
  if (problems_.size() != before || !bounds[0] || !bounds[1]) return std::nullopt;
  if (*bounds[0] > *bounds[1]) {
    problem(child(pointer, "max"), "a max of at least the min (" + json_excerpt(v.at("min")) + ")",
            json_excerpt(v.at("max")));
    return std::nullopt;
  }
  return DrawRange{*bounds[0], *bounds[1]};
}

// Each key present replaces that part of `clock` and `ranges` (which hold the defaults on entry):
// a fixed value clears the default's range, a range zeroes the fixed value it stands for.
void Loader::read_clock(const json& v, const std::string& pointer, sim::ClockConfig& clock,
                        ClockRanges& ranges) {
  if (!check_object(v, pointer, {"offset", "drift_ppm", "steps"}, "a clock")) return;
  if (const json* offset = get(v, "offset")) {
    const std::string offset_pointer = child(pointer, "offset");
    if (offset->is_object()) {
      if (auto range = read_range(*offset, offset_pointer, false)) {
        ranges.offset_ns = *range;
        clock.offset = sim::Duration(0);
      }
    } else if (auto d = params::read_duration(*offset, offset_pointer, problems_, true)) {
      clock.offset = *d;
      ranges.offset_ns.reset();
    }
  }
  if (const json* drift = get(v, "drift_ppm")) {
    const std::string drift_pointer = child(pointer, "drift_ppm");
    if (drift->is_object()) {
      if (auto range = read_range(*drift, drift_pointer, true)) {
        ranges.drift_ppb = *range;
        clock.drift_ppb = 0;
      }
    } else if (auto ppb = read_drift_ppb(*drift, drift_pointer)) {
      clock.drift_ppb = *ppb;
      ranges.drift_ppb.reset();
    }
  }
  if (const json* steps = get(v, "steps")) {
    const std::string steps_pointer = child(pointer, "steps");
    if (!steps->is_array()) {
      problem(steps_pointer, "an array of steps such as [{\"at\": \"10s\", \"by\": \"-500ms\"}]",
              json_excerpt(*steps));
      return;
    }
    clock.steps.clear();
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const json& step = (*steps)[i];
      const std::string step_pointer = child(steps_pointer, i);
      if (!check_object(step, step_pointer, {"at", "by"}, "a clock step")) continue;
      sim::ClockStep out;
      bool ok = true;
      if (const json* at = get(step, "at")) {
        if (auto t = read_time(*at, child(step_pointer, "at"))) {
          out.at = *t;
        } else {
          ok = false;
        }
      } else {
        problem(child(step_pointer, "at"), "the true time of the step, such as \"10s\"", kRequired);
        ok = false;
      }
      if (const json* by = get(step, "by")) {
        if (auto d = params::read_duration(*by, child(step_pointer, "by"), problems_, true)) {
          out.by = *d;
        } else {
          ok = false;
        }
      } else {
        problem(child(step_pointer, "by"), "how far the clock jumps, such as \"-500ms\"",
                kRequired);
        ok = false;
      }
      if (ok) clock.steps.push_back(out);
    }
  }
}

void Loader::read_clocks(const json& v, Scenario& s) {
  sim::WorldConfig& world = s.world;
  // The nodes', the store's, and each kind's whose servers keep clocks of their own.
  std::vector<std::string> keys = {"default", "nodes", "store"};
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (!kind.clock_index.empty()) keys.push_back(kind.name);
  }
  if (!check_object(v, "/clocks", keys, "the clocks section")) return;
  sim::ClockConfig base;
  ClockRanges base_ranges;
  if (const json* d = get(v, "default")) read_clock(*d, "/clocks/default", base, base_ranges);
  world.clocks.assign(nodes_.value_or(0), base);
  s.clock_ranges.assign(nodes_.value_or(0), base_ranges);
  if (const json* nodes = get(v, "nodes")) {
    if (!nodes->is_object()) {
      problem("/clocks/nodes",
              "an object from node id to clock, such as {\"1\": {\"drift_ppm\": 50}}",
              json_excerpt(*nodes));
    } else {
      for (const auto& [key, clock] : nodes->items()) {
        const std::string pointer = child("/clocks/nodes", key);
        const auto id = parse_index(key);
        sim::ClockConfig scratch = base;
        ClockRanges scratch_ranges = base_ranges;
        if (!id || (nodes_ && static_cast<std::size_t>(*id) >= *nodes_)) {
          problem(pointer, node_expected() + " as the key", json_quoted(key));
          read_clock(clock, pointer, scratch, scratch_ranges);  // still report what is wrong inside
          continue;
        }
        const auto index = static_cast<std::size_t>(*id);
        if (index < world.clocks.size()) {
          read_clock(clock, pointer, world.clocks[index], s.clock_ranges[index]);
        } else {
          read_clock(clock, pointer, scratch, scratch_ranges);
        }
      }
    }
  }
  if (const json* store = get(v, "store")) {
    read_clock(*store, "/clocks/store", s.services.store_clock, s.store_clock_ranges);
  }
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (kind.clock_index.empty()) continue;
    if (const json* clocks = get(v, kind.name.c_str())) read_server_clocks(*clocks, kind, s);
  }
}

void Loader::read_server_clocks(const json& v, const servers::ServerKindInfo& kind, Scenario& s) {
  const std::string section = child("/clocks", kind.name);
  // Fixed values only (no drawn ranges): a server's clock is not drawn per seed.
  if (!v.is_object()) {
    problem(
        section,
        fmt::format("an object from {} index to clock, such as {{\"2\": {{\"drift_ppm\": 50}}}}",
                    kind.clock_index),
        json_excerpt(v));
    return;
  }
  const std::size_t count = servers::count_of(kind, s.services);
  std::vector<sim::ClockConfig>& clocks = s.services.clocks[kind.name];
  clocks.assign(count, sim::ClockConfig{});
  for (const auto& [key, clock] : v.items()) {
    const std::string pointer = child(section, key);
    const auto id = parse_index(key);
    sim::ClockConfig scratch;
    ClockRanges ranges;
    if (!id || static_cast<std::size_t>(*id) >= count) {
      problem(pointer,
              count == 0
                  ? fmt::format("no key: the world has no {} ({})", kind.plural, kind.count_setting)
                  : fmt::format("{} {} index from 0 to {} ({}) as the key",
                                std::string_view("aeiou").find(kind.clock_index.front()) ==
                                        std::string_view::npos
                                    ? "a"
                                    : "an",
                                kind.clock_index, count - 1, kind.count_setting),
              json_quoted(key));
      read_clock(clock, pointer, scratch, ranges);
      continue;
    }
    read_clock(clock, pointer, clocks[static_cast<std::size_t>(*id)], ranges);
    if (ranges.offset_ns || ranges.drift_ppb) {
      problem(pointer,
              fmt::format("a fixed offset and drift ({}'s clock is not drawn)",
                          kind.forms.empty() ? "a server" : kind.forms.front().noun),
              "a range");
    }
  }
}

// A file may lower or raise the limits on events and trace size, never past their ceilings: a run
// that needs more is better split (a shorter duration, no trace, or a sweep).
void Loader::read_limits(const json& v, Limits& limits) {
  if (!check_object(v, "/limits", {"events", "trace_bytes"}, "the limits section")) return;
  auto read = [&](const char* key, std::uint64_t ceiling, const char* what, std::uint64_t& out) {
    const json* value = get(v, key);
    if (value == nullptr) return;
    const auto n = as_unsigned(*value);
    if (!n || *n == 0 || *n > ceiling) {
      problem(child("/limits", key), fmt::format("a whole number from 1 to {} ({})", ceiling, what),
              json_excerpt(*value));
      return;
    }
    out = *n;
  };
  read("events", kEventsCeiling, "the ceiling on events per run", limits.max_events);
  read("trace_bytes", kTraceBytesCeiling, "the ceiling on trace size", limits.max_trace_bytes);
}

void Loader::read_found(const json& v, Scenario& s) {
  // Written by `electsim search --save`: the figures are for people; the property and the
  // unsafe_by_design flag decide what the corpus test expects of the file.
  if (!check_object(v, "/found",
                    {"property", "unsafe_by_design", "search_seed", "run", "faults_before",
                     "faults_after", "shrink_runs"},
                    "the found section")) {
    return;
  }
  if (const json* property = get(v, "property")) {
    if (auto text = read_string(*property, "/found/property")) s.found_property = *text;
  } else {
    problem("/found/property", "the property the scenario violates, such as \"overwrite\"",
            kRequired);
  }
  if (const json* unsafe = get(v, "unsafe_by_design")) {
    if (auto b = read_bool(*unsafe, "/found/unsafe_by_design")) s.found_unsafe_by_design = *b;
  }
  for (const char* key : {"search_seed", "run", "faults_before", "faults_after", "shrink_runs"}) {
    const json* value = get(v, key);
    if (value != nullptr && !as_unsigned(*value)) {
      problem(child("/found", key), "a whole number from 0", json_excerpt(*value));
    }
  }
}

protocols::WorkloadConfig Loader::read_workload(const json& v) {
  protocols::WorkloadConfig workload;
  if (!check_object(v, "/workload", {"enabled", "interval", "work", "send_delay"},
                    "the workload section")) {
    return workload;
  }
  if (const json* enabled = get(v, "enabled")) {
    if (auto b = read_bool(*enabled, "/workload/enabled")) workload.enabled = *b;
  }
  if (const json* interval = get(v, "interval")) {
    if (auto d = read_positive_duration(*interval, "/workload/interval")) {
      if (*d < params::kShortestTimer) {
        problem("/workload/interval",
                fmt::format("a duration of at least {} (the shortest protocol timer)",
                            json_quoted(sim::format_duration(params::kShortestTimer))),
                json_excerpt(*interval));
      } else {
        workload.interval = *d;
      }
    }
  }
  if (const json* work = get(v, "work")) {
    if (auto d = params::read_distribution(*work, "/workload/work", problems_)) {
      workload.work = *d;
    }
  }
  if (const json* send_delay = get(v, "send_delay")) {
    if (auto d = params::read_distribution(*send_delay, "/workload/send_delay", problems_)) {
      workload.send_delay = *d;
    }
  }
  return workload;
}

}  // namespace electsim::runner::detail

namespace electsim::runner::detail {

void Loader::read_server_sections(const json& document, servers::Services& services) {
  const servers::SectionContext context{nodes_.value_or(0)};
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (kind.section.empty() || !kind.read) continue;
    if (const json* section = get(document, kind.section.c_str())) {
      kind.read(*section, context, problems_, services);
    }
  }
  store_members_ = services.replication.members;
  if (services.shards > 1 && services_ == 0) {
    // Shards divide a fleet's services; one election has one key and asks one store.
    problem("/store/shards",
            "1 for a world of one election (shards divide a fleet's services among independent "
            "stores: declare \"services\")",
            std::to_string(services.shards));
    services.shards = 1;
  }
  store_shards_ = services.shards;
  if (services.aggregator && services_ == 0) {
    problem("/aggregator",
            "no aggregator section for a world of one election (aggregators stand in front of a "
            "fleet's services: declare \"services\")",
            "an aggregator section");
    services.aggregator.reset();
  }
}

// Servers of kinds registered beside the built-in ones (servers/registry.hpp), each kind with how
// many it has: {"echo": 2} gives "echo:0" and "echo:1". The built-in kinds have sections of their
// own (store, sink, postgres, redis, aggregator).
void Loader::read_servers(const json& v, servers::Services& services) {
  std::vector<std::string> extra;
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (!servers::is_built_in(kind.name)) extra.push_back(kind.name);
  }
  if (!v.is_object()) {
    problem("/servers",
            "an object giving each added kind of server its count, such as {\"echo\": 1}",
            json_excerpt(v));
    return;
  }
  for (const auto& [name, count] : v.items()) {
    const std::string pointer = child("/servers", name);
    if (servers::find_server_kind(name) == nullptr || servers::is_built_in(name)) {
      std::string hint;
      if (servers::is_built_in(name)) {
        hint = fmt::format("the {} has its own section, \"{}\"", name, name);
      } else if (auto close = params::closest_name(name, extra)) {
        hint = fmt::format("did you mean \"{}\"?", *close);
      }
      problem(pointer,
              extra.empty() ? std::string("no key: no kind of server beyond the built-in ones is "
                                          "registered")
                            : "a registered kind of server: " + joined(extra, true),
              json_quoted(name), hint);
      continue;
    }
    const auto n = as_unsigned(count);
    if (!n || *n < 1 || *n > servers::kMaxServersOfKind) {
      problem(pointer,
              fmt::format("a whole number of servers from 1 to {}", servers::kMaxServersOfKind),
              json_excerpt(count));
      continue;
    }
    services.more.emplace_back(name, static_cast<std::size_t>(*n));
  }
}

}  // namespace electsim::runner::detail
