// Lease aggregators as a kind of server (servers/registry.hpp): one per tier of a fleet's
// services, each a proxy in front of the store that keeps one session for its tier
// (servers/aggregator/aggregator_server.hpp).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "params/section.hpp"
#include "servers/aggregator/aggregator_server.hpp"
#include "servers/registry.hpp"

namespace electsim::servers {

namespace {

// Leadership depends on it as on the store it stands in front of; it is a process like a node.
const ServerForm kAggregator{"a lease aggregator",
                             {true, sim::ServerLane::process, sim::kProcessFaults, false}};

constexpr std::uint64_t kMaxTiers = 64;

void read_aggregator_section(const nlohmann::json& v, const SectionContext& /*context*/,
                             params::Problems& problems, Services& services) {
  if (!params::check_object(v, "/aggregator", {"tiers", "ttl", "renew_interval"},
                            "the aggregator section", problems)) {
    return;
  }
  Services::Aggregators a;
  if (const nlohmann::json* tiers = params::member(v, "tiers")) {
    const auto n = params::as_unsigned(*tiers);
    if (!n || *n == 0 || *n > kMaxTiers) {
      params::add_problem(problems, "/aggregator/tiers",
                          fmt::format("a whole number of aggregators from 1 to {}, each in front "
                                      "of its share of the services",
                                      kMaxTiers),
                          params::json_excerpt(*tiers));
      return;
    }
    a.tiers = static_cast<std::size_t>(*n);
  }
  const nlohmann::json* ttl = params::member(v, "ttl");
  if (ttl == nullptr) {
    params::add_problem(problems, "/aggregator/ttl",
                        "the shared lease's TTL, at least every service's own, such as \"10s\"",
                        params::kRequired);
    return;
  }
  const auto d = params::read_server_timer(*ttl, "/aggregator/ttl", problems);
  if (!d) return;
  a.ttl = *d;
  if (const nlohmann::json* renew = params::member(v, "renew_interval")) {
    const auto r = params::read_server_timer(*renew, "/aggregator/renew_interval", problems);
    if (!r) return;
    if (*r > a.ttl / 3) {
      params::add_problem(problems, "/aggregator/renew_interval",
                          fmt::format("a duration of at most a third of the TTL ({}), so that a "
                                      "renewal is never older than a client may trust",
                                      sim::format_duration(a.ttl / 3)),
                          params::json_excerpt(*renew));
      return;
    }
    a.renew_interval = *r;
  }
  services.aggregator = a;
}

void add_aggregators(const Services& services, WorldBuilder& builder) {
  if (!services.aggregator) return;
  sim::NodeServers& node_servers = builder.world().node_servers;
  auto upstream = std::make_shared<const sim::StoreClientConfig>(node_servers.store);
  for (std::size_t t = 0; t < services.aggregator->tiers; ++t) {
    AggregatorConfig config{services.aggregator->ttl, services.aggregator->renew_interval,
                            upstream};
    const std::string name = "aggregator:" + std::to_string(t);
    const sim::Endpoint address = builder.add(
        name, sim::server_kind::aggregator, "aggregator", kAggregator, sim::ClockConfig{},
        [config] { return std::make_unique<AggregatorServer>(config); });
    sim::StoreClientConfig client;
    client.members = {address};
    // clientv3's requests give up after etcdctl's --command-timeout; a client of a crashed
    // aggregator learns it this way.
    client.request_timeout = std::chrono::seconds(5);
    node_servers.proxies.push_back({name, std::move(client)});
  }
}

}  // namespace

ServerKindInfo aggregator_kind() {
  ServerKindInfo kind{std::string(sim::server_kind::aggregator),
                      "a lease aggregator: a proxy that keeps one store session for a tier of a "
                      "fleet's services",
                      {kAggregator},
                      "aggregators",
                      "aggregators exist only with an aggregator section",
                      add_aggregators,
                      "aggregator",
                      read_aggregator_section,
                      [](std::string_view key) -> std::string {
                        if (key == "tiers") return "1";
                        if (key == "renew_interval") return "ttl/3";
                        return "";
                      },
                      nullptr};
  kind.count = [](const Services& services) {
    return services.aggregator ? services.aggregator->tiers : std::size_t{0};
  };
  return kind;
}

}  // namespace electsim::servers
