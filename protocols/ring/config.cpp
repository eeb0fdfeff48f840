// Parameters of ring election (protocols/ring/config.hpp). The ring order and the set of
// initiators are what Chang and Roberts' message counts depend on (n(n+1)/2 Election messages when
// every node starts and ids decrease along the ring, n when only the highest starts), so both are
// parameters. Cross-field problems are reported at the dependent field.
#include "protocols/ring/config.hpp"

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace electsim::protocols::ring {
namespace {

const std::vector<std::string>& order_names() {
  static const std::vector<std::string> names = {"ascending", "descending"};
  return names;
}

const std::vector<std::string>& start_names() {
  static const std::vector<std::string> names = {"all", "lowest", "none"};
  return names;
}

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const RingConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "order",
         .type = params::ParamType::choice,
         .default_value = order_names()[static_cast<std::size_t>(d.order_kind)],
         .meaning = "the logical ring: ascending (the successor of i is i+1, wrapping), "
                    "descending, or an array of node ids naming every node once",
         .choices = order_names()},
        {.name = "ack_timeout",
         .default_value = d.ack_timeout,
         .min = params::kShortestTimer,
         .meaning = "a sender without an Ack from its successor this long after an Election or "
                    "Elected suspects it and sends to the next node of the ring"},
        {.name = "heartbeat_interval",
         .default_value = d.heartbeat_interval,
         .min = params::kShortestTimer,
         .meaning = "the leader sends a Heartbeat to every node this often"},
        {.name = "failure_timeout",
         .default_value = d.failure_timeout,
         .min = params::kShortestTimer,
         .meaning = "a node that hears nothing from a leader this long starts an election; a "
                    "participant waits this plus ack_timeout per other node for its election to "
                    "finish"},
        {.name = "start",
         .type = params::ParamType::choice,
         .default_value = start_names()[static_cast<std::size_t>(d.start)],
         .meaning = "who starts an election at time 0: all (the simultaneous start), lowest, "
                    "none, or an array of node ids; a restarted node always starts one",
         .choices = start_names()},
    };
  }();
  return table;
}

void read_order(const nlohmann::json& value, const std::string& pointer, std::size_t node_count,
                RingConfig& c, params::Problems& problems) {
  auto read = params::read_name_or_node_ids(
      value, pointer, order_names(),
      "\"ascending\", \"descending\" or an array naming every node id once, such as [2, 0, 1]",
      node_count, problems);
  if (!read) return;
  if (const auto* name = std::get_if<std::string>(&*read)) {
    c.order_kind = *name == "ascending" ? RingOrder::ascending : RingOrder::descending;
    return;
  }
  auto ids = std::get<std::vector<sim::NodeId>>(std::move(*read));
  if (ids.size() != node_count) {
    // Every entry was a distinct valid id, so some ids are missing: name the first few.
    std::vector<bool> present(node_count, false);
    for (sim::NodeId id : ids) present[static_cast<std::size_t>(id)] = true;
    std::string missing;
    int named = 0;
    for (std::size_t id = 0; id < node_count; ++id) {
      if (present[id]) continue;
      if (named == 5) {
        missing += ", ...";
        break;
      }
      missing += (named == 0 ? "" : ", ") + std::to_string(id);
      ++named;
    }
    problems.push_back(params::Problem{
        pointer,
        fmt::format("every node id from 0 to {} exactly once", node_count - 1),
        fmt::format("an order without {} {}", named == 1 ? "node" : "nodes", missing),
        {},
        {}});
    return;
  }
  c.order_kind = RingOrder::given;
  c.order = std::move(ids);
}

void read_start(const nlohmann::json& value, const std::string& pointer, std::size_t node_count,
                RingConfig& c, params::Problems& problems) {
  auto read = params::read_name_or_node_ids(
      value, pointer, start_names(),
      "\"all\", \"lowest\", \"none\" or an array of distinct node ids, such as [0, 3]", node_count,
      problems);
  if (!read) return;
  if (const auto* name = std::get_if<std::string>(&*read)) {
    c.start = *name == "all"      ? StartSet::all
              : *name == "lowest" ? StartSet::lowest
                                  : StartSet::none;
    return;
  }
  c.start = StartSet::given;
  c.start_nodes = std::get<std::vector<sim::NodeId>>(std::move(*read));
  std::sort(c.start_nodes.begin(), c.start_nodes.end());
}

}  // namespace

std::vector<sim::NodeId> RingConfig::ring_of(std::size_t node_count) const {
  std::vector<sim::NodeId> ring(node_count);
  for (std::size_t i = 0; i < node_count; ++i) {
    switch (order_kind) {
      case RingOrder::ascending:
        ring[i] = static_cast<sim::NodeId>(i);
        break;
      case RingOrder::descending:
        ring[i] = static_cast<sim::NodeId>(node_count - 1 - i);
        break;
      case RingOrder::given:
        ring[i] = i < order.size() ? order[i] : sim::kNoNode;
        break;
    }
  }
  return ring;
}

bool RingConfig::starts_at_time_zero(sim::NodeId node) const {
  switch (start) {
    case StartSet::all:
      return true;
    case StartSet::lowest:
      return node == 0;
    case StartSet::none:
      return false;
    case StartSet::given:
      return std::binary_search(start_nodes.begin(), start_nodes.end(), node);
  }
  return false;
}

std::span<const params::ParamSpec> ring_params() {
  return specs();
}

std::optional<RingConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                      std::size_t node_count, params::Problems& problems) {
  const std::size_t problems_before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  RingConfig c;

  const auto ack = reader.timer("ack_timeout");
  const auto heartbeat = reader.timer("heartbeat_interval");
  const auto failure = reader.timer("failure_timeout");
  if (ack) c.ack_timeout = *ack;
  if (heartbeat) c.heartbeat_interval = *heartbeat;
  if (failure) c.failure_timeout = *failure;

  // "500ms", or "500ms (the default)" when the user did not write the field.
  const auto shown = [&](const char* name, sim::Duration value) {
    if (reader.has(name)) return params::json_excerpt(params.at(std::string(name)));
    return fmt::format("{} (the default)", sim::format_duration(value));
  };
  // A heartbeat no shorter than the failure timeout would let nodes give up on a healthy leader.
  if (heartbeat && failure && *heartbeat >= *failure) {
    reader.problem(
        "heartbeat_interval",
        fmt::format("a duration shorter than failure_timeout ({})", sim::format_duration(*failure)),
        shown("heartbeat_interval", *heartbeat));
  }

  if (reader.has("order")) {
    read_order(params.at("order"), reader.pointer_of("order"), node_count, c, problems);
  }
  if (reader.has("start")) {
    read_start(params.at("start"), reader.pointer_of("start"), node_count, c, problems);
  }

  if (problems.size() != problems_before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::ring
