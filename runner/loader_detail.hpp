// The scenario loader's internals, shared by its files (runner/loader*.cpp) and by nothing else:
// the validating reader class, its text helpers and the limits it checks. The public interface is
// runner/loader.hpp.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/expect.hpp"
#include "params/params.hpp"
#include "params/section.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "servers/registry.hpp"
#include "servers/world.hpp"
#include "sim/fault.hpp"
#include "sim/topology.hpp"

namespace electsim::runner::detail {

using nlohmann::json;
using params::json_excerpt;
using params::Problem;
using params::Problems;

// A clock at most 50% fast or slow: far beyond any real oscillator, but lessons on the lease
// inequality exaggerate drift to make it visible (scenarios/lease-clock-drift.json runs at 25%).
inline constexpr double kMaxDriftPpm = 500'000;
using params::kRequired;
inline constexpr std::size_t kMaxVariants = 64;
inline constexpr std::uint64_t kEventsCeiling = 100'000'000'000;  // the kernel orders 2^40 pushes
inline constexpr std::uint64_t kTraceBytesCeiling = 64ull << 30;  // 64 GiB

// ---- Small text helpers ---------------------------------------------------------------------

inline std::string child(const std::string& pointer, std::string_view key) {
  return params::child_pointer(pointer, key);
}

inline std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

using params::as_unsigned;
using params::did_you_mean;
using params::joined;
using params::json_quoted;

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A canonical decimal number ("0", "12"; not "012", "+1", " 1" or "-0"): digits only, so that no
// two keys or names ("store:1", "store: 1") mean the same index.
inline std::optional<std::int64_t> parse_index(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  if (text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

inline std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    segments.emplace_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return segments;
}

inline bool valid_path(std::string_view path) {
  const auto segments = split_path(path);
  return std::none_of(segments.begin(), segments.end(),
                      [](const std::string& s) { return s.empty(); });
}

inline void add(Problems& problems, std::string pointer, std::string expected, std::string found,
                std::string hint = {}) {
  params::add_problem(problems, std::move(pointer), std::move(expected), std::move(found),
                      std::move(hint));
}

// ---- The validating reader ------------------------------------------------------------------

// "a, b or c".
std::string or_list(const std::vector<std::string>& parts);
// The shard of a sharded store that a fleet's service asks: a fixed hash of its name, modulo the
// shards.
std::size_t store_shard_of(std::string_view service, std::size_t shards);

class Loader {
 public:
  Loader(const LoadOptions& options, Problems& problems) : options_(options), problems_(problems) {}

  // `document` is an object (the caller checked). `variant` is the selected variant, if any.
  std::optional<Scenario> load(const json& document, const std::optional<std::string>& variant);

 private:
  void problem(std::string pointer, std::string expected, std::string found,
               std::string hint = {}) {
    add(problems_, std::move(pointer), std::move(expected), std::move(found), std::move(hint));
  }

  static const json* get(const json& object, const char* key) {
    return params::member(object, key);
  }

  // True when `value` is an object; reports each key outside `keys`, naming `what`.
  bool check_object(const json& value, const std::string& pointer,
                    const std::vector<std::string>& keys, const std::string& what);

  std::optional<std::string> read_string(const json& v, const std::string& pointer);
  std::optional<bool> read_bool(const json& v, const std::string& pointer);
  std::optional<sim::Duration> read_positive_duration(const json& v, const std::string& pointer);
  void read_tcp(const json& v, sim::TcpConfig& tcp);
  // A server's timer: from params::kShortestTimer up, or "0s" where `zero_means` says what 0
  // does (nullptr: 0 is refused too).
  std::optional<sim::Duration> read_server_timer(const json& v, const std::string& pointer,
                                                 const char* zero_means = nullptr);
  std::optional<sim::Time> read_time(const json& v, const std::string& pointer);
  std::optional<std::int64_t> read_drift_ppb(const json& v, const std::string& pointer);
  std::string node_expected() const;
  std::optional<sim::NodeId> read_node(const json& v, const std::string& pointer);
  std::optional<sim::Endpoint> read_endpoint(const json& v, const std::string& pointer);
  std::string server_name_hint(const json& v) const;
  std::string server_names_expected() const;
  std::optional<sim::Target> read_target(const json& v, const std::string& pointer,
                                         bool allow_store);

  // A fleet's classes of services, in the file's order (one, unnamed, when /services gives
  // count and replicas): class c's services follow those of the classes before it, and so do
  // their nodes, `replicas` to a service.
  struct ServiceClass {
    std::string name;
    std::size_t count = 0;
    std::size_t replicas = 0;
    // With an auto-scaler (`autoscale`): how many of each service's replicas run from the start
    // (the rest start stopped and are started from scale_at, spread over scale_over); otherwise
    // every replica.
    std::size_t running = 0;
    sim::Time scale_at;
    sim::Duration scale_over{0};
    std::size_t first_service = 0;
    std::size_t first_node = 0;
    // The protocol its services run: "" for the file's. Its parameters are over the file's
    // protocol section when it runs the file's protocol, over that protocol's defaults otherwise.
    std::string protocol_name;
    json protocol = json::object();
    std::string pointer;  // "/services" or "/services/classes/C"
  };
  void read_nodes(const json& document);
  // `services` instead of `nodes`: a fleet's shape, then (once the protocol is read) its groups.
  void read_services(const json& v);
  // One class's count, replicas and parameters (`v` the class, or /services itself).
  std::optional<ServiceClass> read_service_class(const json& v, const std::string& pointer,
                                                 bool named);
  void build_fleet(Scenario& s);
  // The protocol `name` (at `pointer`) names, or nullptr with the problem reported.
  const protocols::ProtocolInfo* read_protocol_name(const json& name, const std::string& pointer);
  // `expect_by_class` (at `pointer`: the file's, or a variant's): bounds on one class's
  // services, added to `into`.
  void read_expect_by_class(const json& v, const std::string& pointer,
                            std::vector<analysis::Expectation>& into);
  // The sink's fencing: the sink section's, else the protocol's; in a fleet whose classes' own
  // `fencing` differ, each service's resource fences as its class's protocol says.
  void set_sink_fencing(Scenario& s) const;
  // Whether a class may run `runs` (prepared as `prepared`) in a fleet of the file's protocol:
  // one trace header and one analysis must judge both alike. Reports at `pointer` otherwise.
  bool compatible_in_fleet(const protocols::ProtocolInfo& file,
                           const protocols::PreparedProtocol& file_prepared,
                           const protocols::ProtocolInfo& runs,
                           const protocols::PreparedProtocol& prepared, const std::string& pointer);
  // Whether a fleet's aggregators can stand in front of its services (the lease protocol, one
  // store, no service's TTL above the shared lease's).
  bool check_aggregated(const Scenario& s, const std::vector<params::ParamSpec>& specs);
  // A class's `autoscale`: its replicas grow to `to`, started from `at` over `over`.
  bool read_autoscale(const json& v, const std::string& pointer, ServiceClass& c);
  // The auto-scaler's work: the replicas that start stopped, and a restart for each.
  void scale_fleet(Scenario& s) const;
  // A fleet's service K is named "svc-K"; the K of such a name for a service of this fleet.
  static std::string service_name(std::size_t k);
  std::optional<std::size_t> service_index(std::string_view name) const;
  void read_duration(const json& document);
  sim::NetworkConfig read_network(const json& v);
  void read_links(const json& v, sim::NetworkConfig& network);
  sim::DiskConfig read_disk(const json& v);
  std::optional<DrawRange> read_range(const json& v, const std::string& pointer, bool drift);
  void read_clock(const json& v, const std::string& pointer, sim::ClockConfig& clock,
                  ClockRanges& ranges);
  void read_clocks(const json& v, Scenario& s);
  // /clocks/<kind>: the clocks of a kind's servers, by index
  // (servers::ServerKindInfo::clock_index).
  void read_server_clocks(const json& v, const servers::ServerKindInfo& kind, Scenario& s);
  void read_servers(const json& v, servers::Services& services);
  // Every server kind's section of `document` (servers/registry.hpp), read by its kind.
  void read_server_sections(const json& document, servers::Services& services);
  // The world's servers as the server registry will build them from `services`: known before
  // faults are read, which name servers by the topology's names.
  void build_topology(const servers::Services& services);
  // A server of the topology that some fault kind acts on, by its name.
  std::optional<sim::Endpoint> fault_target(const std::string& text) const;
  std::string target_noun(const sim::Target& target) const;
  protocols::WorkloadConfig read_workload(const json& v);
  void read_limits(const json& v, Limits& limits);
  void read_found(const json& v, Scenario& s);
  void read_protocol(const json* v, const protocols::WorkloadConfig& workload, Scenario& s);
  void read_protocol_choice(const json& document, Scenario& s);
  void read_protocol_at(const json& params, const std::string& name, const std::string& pointer,
                        const protocols::WorkloadConfig& workload, Scenario& s);
  void read_expect_by_protocol(const json& v, Scenario& s);
  // In a sharded store, "store" and its roles name no one server: a problem at `pointer`.
  bool refused_in_sharded_store(const std::string& text, const std::string& pointer);
  void read_paused_shard(const json& v, const std::string& pointer, sim::FaultSpec& fault);
  std::optional<sim::FaultSpec> read_fault(const json& v, const std::string& pointer,
                                           RandomFault* generator = nullptr);
  std::vector<sim::FaultSpec> read_faults(const json& v);
  // A fleet's fault on many nodes, as the faults it stands for (each with "services" removed and
  // its target one node or one service's role): a whole service ("svc-K"), or a role of a share
  // of the services ("services": 0.25). Nullopt for any other fault; an empty list after a
  // problem.
  std::optional<std::vector<json>> fleet_faults(const json& v, const std::string& pointer);
  std::optional<RandomFault> read_random_fault(const json& v, const std::string& pointer);
  std::vector<RandomFault> read_random_faults(const json& v, const json* fixed);
  std::vector<analysis::Expectation> read_expect(const json& v, const std::string& pointer);
  std::optional<std::vector<analysis::Expectation>> read_variants(
      const json& v, const std::optional<std::string>& variant);

  const LoadOptions& options_;
  Problems& problems_;
  std::optional<std::size_t> nodes_;  // known once /nodes (or /services) is valid
  std::size_t services_ = 0;          // a fleet's services in all, once /services is valid
  std::vector<ServiceClass> classes_;
  std::vector<std::optional<bool>> class_fencing_;  // by class: its protocol's own `fencing`
  bool services_given_ = false;                     // the file has a services section
  // The bounds on classes: the selected variant's expect_by_class when it has one, else the
  // file's.
  std::optional<std::vector<analysis::Expectation>> class_bounds_;
  const ServiceClass& class_of(std::size_t service) const;
  // The first node of a service of the fleet, and how many it has.
  std::size_t first_node_of(std::size_t service) const;
  std::size_t store_members_ = 1;  // known once /store is read
  std::size_t store_shards_ = 1;   // likewise
  // The kinds of server the world has because the protocol needs them or the file has their
  // section, even where that section or the protocol's parameters are wrong.
  std::vector<std::string> required_kinds_;
  // The servers besides the store that keep a leadership record a person can clear (those whose
  // kind takes operator_clear: the database), by name: known before faults are read.
  std::vector<std::string> record_keepers_;
  // The single store keeps a leadership record (the protocol's leader key) that a person can
  // clear: known before faults are read.
  bool store_keeps_record_ = false;
  sim::Topology topology_;                 // build_topology's
  bool network_links_ = false;             // the network section's shape was right: read its links
  std::optional<sim::Duration> duration_;  // known once /duration is valid
  std::optional<std::size_t> cluster_size_;  // /nodes if it is a number from 1, even over the limit
};

}  // namespace electsim::runner::detail
