// The protocol registry: name, one-line description and parameter table of every protocol. The
// table drives validation of scenario files, `electsim list` and the docs; prepare() turns
// validated parameters into a factory of nodes for the kernel.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/workload.hpp"
#include "sim/kernel.hpp"

namespace electsim::protocols {

struct ClusterInfo {
  std::size_t node_count = 0;
  WorkloadConfig workload;
  // How many servers of each kind the protocol needs (ProtocolInfo::servers) its world holds, by
  // kind: the Redis masters of the scenario's redis section, or the kind's default.
  std::vector<std::pair<std::string, std::size_t>> servers = {};
  // The count of `kind`'s servers, or nullopt when the world's count was not given.
  std::optional<std::size_t> servers_of(std::string_view kind) const {
    for (const auto& [name, count] : servers) {
      if (name == kind) return count;
    }
    return std::nullopt;
  }
};

struct PreparedProtocol {
  sim::ProtocolFactory factory;
  // The store key whose holder is the leader, when leadership lives in the store (lease): failover
  // ends when another node holds it there.
  std::optional<std::string> leader_key;
  bool uses_store = false;
  // The protocol's own `fencing` parameter, if it has one: the sink fences unless the scenario's
  // sink section says otherwise.
  std::optional<bool> fencing;
  // How long a claim on the leader key lasts without renewal (the lease protocol's ttl: judged by
  // the store, or by followers' clocks in client mode). Pictures use it to draw the lease draining.
  std::optional<sim::Duration> lease_ttl;
  bool lease_judged_by_store = false;  // false: followers judge expiry on their own clocks
  // The kind of server leadership depends on (stall is measured while it cannot answer; a
  // partition that cuts the leader from it takes the leader away): the store, or the database
  // server. The world's first server of the kind is the one (sim::Topology::of_kind).
  std::string_view coordinator = sim::server_kind::store;
  // The tokens on its writes grow with every grant of leadership (a revision, a term, a fencing
  // counter). False where they do not (Redlock without fencing writes its start's wall-clock
  // reading, the database flag writes 0): analysis then judges stale writes and overwrites by
  // the true order of grants, never by the number.
  bool tokens_ordered = true;
  // How long a silent leader (paused, cut off) keeps the others from taking over, from the
  // parameters: a fault must last longer to threaten safety. None: nothing bounds it (the database
  // flag; the PostgreSQL lock, which the server's keepalives decide).
  std::optional<sim::Duration> silent_hold;
  // The longest a healed world may take to have one leader again, from the parameters: the
  // search's healing bound defaults to it. None where nothing bounds it.
  std::optional<sim::Duration> worst_recovery;
  // A protocol with a resource parameter (ProtocolInfo::resource): the factory of the same
  // configuration contending for `resource` instead, for a fleet's services, without reading the
  // parameters again. Its leader key, where it has one, is that resource.
  std::function<sim::ProtocolFactory(const std::string& resource)> with_resource = {};
};

// One `--set` a knob expands to: a scenario path and its value, as text.
struct KnobSet {
  std::string path;
  std::string value;
};

// The matched knob `detection`: how long a silent leader keeps the others from taking over (a
// lease TTL, a session timeout, an election timeout...). `--set detection=20s` (and a sweep's
// `--grid detection=...`) sets each protocol's own parameters so that this time is the same for
// every design, and comparisons then judge designs instead of defaults.
struct DetectionKnob {
  // What the knob sets in this protocol, in its own words ("the lease TTL").
  std::string what;
  // The parameters that give `d`, or nullopt with `why` said when the protocol cannot.
  std::function<std::optional<std::vector<KnobSet>>(sim::Duration d, std::string& why)> sets;
  // The parameters that decide this time, as `electsim list` and the comparison page name them.
  std::vector<std::string> timing_params;
};

struct ProtocolInfo {
  std::string name;
  std::string description;
  std::vector<params::ParamSpec> params;
  std::vector<std::string> message_types;  // index = sim::MessageType
  // The message types that elect (votes, election and coordinator messages), as opposed to those
  // that keep a leader in place (heartbeats): "election messages per election" counts these.
  std::vector<std::string> election_message_types;
  // The kinds of server (servers/registry.hpp) its world needs beyond the store and the sink,
  // which every world has: {"postgres"}, {"redis"}. The loader puts them in the world when the
  // scenario configures none, and the search's nemesis aims at them only when the protocol
  // running needs them. Known before the parameters are read, so that faults naming them are
  // judged rightly even when a parameter is wrong.
  std::vector<std::string> servers;
  DetectionKnob detection;
  // The text parameter naming what its nodes contend for in their servers (the lease's "key",
  // ZooKeeper's "prefix"); "" for a protocol that contends for nothing outside its nodes (Bully,
  // Ring, Raft) or for one fixed resource. A fleet (`services`) gives each service its own value
  // (fleet_resource); a protocol that needs servers and has none cannot run as a fleet.
  std::string resource = {};
  // Validates `params` (the protocol object without "name"), reporting problems under `pointer`.
  // Returns nullopt when there were problems.
  std::function<std::optional<PreparedProtocol>(
      const nlohmann::json& params, const std::string& pointer, const ClusterInfo& cluster,
      params::Problems& problems)>
      prepare;
};

// The factory part of prepare(): every node of the cluster shares one read-only copy of the
// protocol's validated configuration.
template <typename Node, typename Config>
sim::ProtocolFactory shared_config_factory(Config config) {
  auto shared = std::make_shared<const Config>(std::move(config));
  return [shared](sim::NodeId) -> std::unique_ptr<sim::Protocol> {
    return std::make_unique<Node>(shared);
  };
}

// The resource `service` contends for, from the protocol's own `base` value: "/electsim/leader"
// gives "/electsim/leader/svc-7"; a prefix that ends in "/" stays one ("/electsim/election/"
// gives "/electsim/election/svc-7/").
std::string fleet_resource(std::string_view base, std::string_view service);

// The value text of a duration for a knob's --set ("6.666666666s").
std::string knob_duration(sim::Duration d);

// Every protocol, in a fixed order.
std::span<const ProtocolInfo> all_protocols();
const ProtocolInfo* find_protocol(std::string_view name);
std::vector<std::string> protocol_names();
// Every protocol's parameters as markdown: "Parameters of `<name>`:" and a table each, as
// docs/scenario-format.md carries them (a test keeps the page current).
std::string protocol_params_markdown();

}  // namespace electsim::protocols
