// The scenario loader (runner/loader_detail.hpp): the world's sections: nodes, duration,
// network, disk, clocks, limits, workload and the registered servers; each server kind reads its
// own section (servers/registry.hpp). A fleet's services are read in loader_fleet.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
