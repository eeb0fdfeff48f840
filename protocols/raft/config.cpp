// Parameters of Raft leader election (protocols/raft/config.hpp). Timeouts follow the paper
// (Ongaro and Ousterhout 2014 §5.2: 150-300ms, heartbeats well below the minimum); the initial
// log positions are read here directly from the JSON, since ParamReader reads scalars only.
// Cross-field problems are reported at the dependent field.
#include "protocols/raft/config.hpp"

#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "params/section.hpp"

namespace electsim::protocols::raft {
namespace {

constexpr const char* kTimerRuleNames[] = {"etcd", "paper"};  // raft::TimerRule's order

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const RaftConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "election_timeout_min",
         .default_value = d.election_timeout_min,
         .min = params::kShortestTimer,
         .meaning = "lower bound of the election timeout, drawn afresh at every reset (Raft §5.2)"},
        {.name = "election_timeout_max",
         .default_value = d.election_timeout_max,
         .min = params::kShortestTimer,
         .meaning = "upper bound of the election timeout (inclusive)"},
        {.name = "heartbeat_interval",
         .default_value = d.heartbeat_interval,
         .min = params::kShortestTimer,
         .meaning = "the leader sends an empty AppendEntries to every peer this often"},
        {.name = "pre_vote",
         .type = params::ParamType::boolean,
         .default_value = d.pre_vote,
         .meaning = "ask peers with term+1 before a real election; only a majority of pre-votes "
                    "starts one (etcd PreVote, dissertation §9.6)"},
        {.name = "check_quorum",
         .type = params::ParamType::boolean,
         .default_value = d.check_quorum,
         .meaning = "the leader steps down without a majority of contact each election timeout, "
                    "and followers in touch with a leader ignore RequestVote (etcd CheckQuorum)"},
        {.name = "log",
         .type = params::ParamType::object,
         .default_note = "none",
         .meaning = "initial last log position per node, {\"<id>\": {\"index\": n, \"term\": "
                    "t}}; others start empty"},
        {.name = "lagging",
         .type = params::ParamType::object,
         .default_note = "none",
         .meaning = "node ids whose logs never take the leader's entries (broken replication): "
                    "they keep the log they have, so with a workload they soon cannot win an "
                    "election"},
        {.name = "timer_rule",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kTimerRuleNames, d.timer_rule),
         .meaning = "etcd: stepping down always re-arms the election timer and a candidate "
                    "refused by a majority follows; paper: only a stepping-down leader re-arms "
                    "it and a refused candidate waits for its timer (the paper's and LogCabin's "
                    "rule)",
         .choices = params::choice_names(kTimerRuleNames)},
        {.name = "tick",
         .default_note = "none",
         .meaning = "count every timer in whole ticks of this length from a random per-node "
                    "phase, as etcd-io/raft's Tick (etcd: the heartbeat interval); none or 0s: "
                    "continuous time"},
        {.name = "check_quorum_lease",
         .default_note = "election_timeout_min",
         .min = params::kShortestTimer,
         .meaning = "CheckQuorum's lease: a leader steps down without a majority's contact "
                    "within it, and a follower that heard its leader within it refuses votes "
                    "(etcd: electionTimeout)"},
    };
  }();
  return table;
}

// A node id written the one way std::to_string writes it ("1", never "01" or "+1"), so that no
// two keys name the same node.
std::optional<sim::NodeId> parse_node_id(const std::string& key, std::size_t node_count) {
  sim::NodeId id = sim::kNoNode;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
  if (ec != std::errc() || end != key.data() + key.size()) return std::nullopt;
  if (id < 0 || static_cast<std::size_t>(id) >= node_count || std::to_string(id) != key) {
    return std::nullopt;
  }
  return id;
}

std::optional<std::int64_t> read_log_value(const nlohmann::json& entry, const char* name,
                                           const std::string& pointer, params::Problems& problems) {
  const auto it = entry.find(name);
  if (it == entry.end()) {
    params::add_problem(problems, pointer, fmt::format("a whole number from 0 to {}", kLogValueMax),
                        fmt::format("nothing (a log position needs \"{}\")", name));
    return std::nullopt;
  }
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t{kLogValueMax}) ||
      (!it->is_number_unsigned() &&
       (it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > kLogValueMax))) {
    params::add_problem(problems, pointer, fmt::format("a whole number from 0 to {}", kLogValueMax),
                        params::json_excerpt(*it));
    return std::nullopt;
  }
  return it->get<std::int64_t>();
}

// `log`: {"<node id>": {"index": n, "term": t}, ...}. Nodes not named start with an empty log.
void read_log(const nlohmann::json& log, const std::string& pointer, std::size_t node_count,
              std::vector<LogPosition>& out, params::Problems& problems) {
  if (!log.is_object()) {
    params::add_problem(
        problems, pointer,
        "an object mapping node ids to log positions, such as {\"0\": {\"index\": 3, "
        "\"term\": 2}}",
        params::json_excerpt(log));
    return;
  }
  static const std::vector<std::string> kEntryKeys = {"index", "term"};
  // nlohmann::json keeps object keys sorted: problems come out in a stable order.
  for (const auto& [key, entry] : log.items()) {
    const std::string entry_pointer = params::child_pointer(pointer, key);
    const auto id = parse_node_id(key, node_count);
    if (!id) {
      params::add_problem(
          problems, entry_pointer,
          fmt::format("a node id written in decimal, below the cluster size ({})", node_count),
          fmt::format("the key {}", nlohmann::json(key).dump()));
      continue;
    }
    if (!entry.is_object()) {
      params::add_problem(problems, entry_pointer,
                          "a log position such as {\"index\": 3, \"term\": 2}",
                          params::json_excerpt(entry));
      continue;
    }
    const std::size_t before = problems.size();
    params::reject_unknown_keys(entry, entry_pointer, kEntryKeys, problems);
    const auto index = read_log_value(entry, "index", entry_pointer + "/index", problems);
    const auto term = read_log_value(entry, "term", entry_pointer + "/term", problems);
    if (problems.size() != before || !index || !term) continue;
    // Every entry is written in some term >= 1, and only the empty log has index 0.
    if (*index == 0 && *term != 0) {
      params::add_problem(problems, entry_pointer + "/term", "term 0 for an empty log (index 0)",
                          params::json_excerpt(entry.at("term")));
      continue;
    }
    if (*index > 0 && *term == 0) {
      params::add_problem(problems, entry_pointer + "/term",
                          "a term of at least 1 (every entry is written in a term)",
                          params::json_excerpt(entry.at("term")));
      continue;
    }
    out[static_cast<std::size_t>(*id)] = LogPosition{*index, *term};
  }
}

// `lagging`: [node id, ...], each a node of the cluster, none twice.
void read_lagging(const nlohmann::json& list, const std::string& pointer, std::size_t node_count,
                  std::vector<bool>& out, params::Problems& problems) {
  const std::string expected = fmt::format(
      "a list of distinct node ids below the cluster size ({}), such as [3, 4]", node_count);
  if (!list.is_array()) {
    params::add_problem(problems, pointer, expected, params::json_excerpt(list));
    return;
  }
  out.assign(node_count, false);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& id = list[i];
    const std::string item = pointer + "/" + std::to_string(i);
    const bool valid = id.is_number_integer() && !id.is_number_float() &&
                       (id.is_number_unsigned()
                            ? id.get<std::uint64_t>() < node_count
                            : id.get<std::int64_t>() >= 0 &&
                                  id.get<std::int64_t>() < static_cast<std::int64_t>(node_count));
    if (!valid) {
      params::add_problem(problems, item, expected, params::json_excerpt(id));
      continue;
    }
    const auto node = id.get<std::size_t>();
    if (out[node]) {
      params::add_problem(problems, item, expected, fmt::format("node {} a second time", node));
      continue;
    }
    out[node] = true;
  }
}

}  // namespace

std::span<const params::ParamSpec> raft_params() {
  return specs();
}

std::optional<RaftConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                      std::size_t node_count, params::Problems& problems) {
  const std::size_t problems_before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  RaftConfig c;

  const auto min = reader.timer("election_timeout_min");
  const auto max = reader.timer("election_timeout_max");
  const auto heartbeat = reader.timer("heartbeat_interval");
  if (min) c.election_timeout_min = *min;
  if (max) c.election_timeout_max = *max;
  if (heartbeat) c.heartbeat_interval = *heartbeat;
  c.pre_vote = reader.boolean("pre_vote");
  c.check_quorum = reader.boolean("check_quorum");

  // "400ms", or "300ms (the default)" when the user did not write the field.
  const auto shown = [&](const char* name, sim::Duration value) {
    if (reader.has(name)) return params::json_excerpt(params.at(std::string(name)));
    return fmt::format("{} (the default)", sim::format_duration(value));
  };
  if (min && max && *max < *min) {
    reader.problem(
        "election_timeout_max",
        fmt::format("a duration of at least election_timeout_min ({})", sim::format_duration(*min)),
        shown("election_timeout_max", *max));
  }
  // Raft §5.6: broadcastTime << electionTimeout; a heartbeat no shorter than the minimum timeout
  // would let followers time out under a healthy leader.
  if (min && heartbeat && *heartbeat >= *min) {
    reader.problem("heartbeat_interval",
                   fmt::format("a duration shorter than election_timeout_min ({})",
                               sim::format_duration(*min)),
                   shown("heartbeat_interval", *heartbeat));
  }

  c.timer_rule = static_cast<electsim::raft::TimerRule>(reader.choice_index("timer_rule"));
  // "0s" is continuous time too, so that a sweep can put both on one axis.
  std::optional<sim::Duration> tick;
  if (const auto given = reader.duration_opt("tick"); given && given->count() != 0) {
    if (*given < params::kShortestTimer) {
      reader.problem("tick",
                     fmt::format("0s (continuous time) or a duration of at least \"{}\" (the "
                                 "shortest protocol timer)",
                                 sim::format_duration(params::kShortestTimer)),
                     params::json_excerpt(params.at("tick")));
    } else {
      tick = *given;
    }
  }
  if (tick) {
    c.tick = *tick;
    // etcd's heartbeat is a whole number of ticks, at least one.
    if (heartbeat && *tick > *heartbeat) {
      reader.problem("tick",
                     fmt::format("a duration of at most heartbeat_interval ({})",
                                 sim::format_duration(*heartbeat)),
                     shown("tick", *tick));
    }
  }
  if (reader.has("check_quorum_lease") && !c.check_quorum) {
    // Only CheckQuorum reads the lease (the leader's step-down, a follower's refusal of votes):
    // without it the value would change nothing and say nothing.
    reader.problem("check_quorum_lease",
                   "no check_quorum_lease without \"check_quorum\": true (the lease is "
                   "CheckQuorum's: the leader's step-down and a follower's refusal of votes)",
                   params::json_excerpt(params.at("check_quorum_lease")));
  } else if (const auto lease = reader.timer_opt("check_quorum_lease")) {
    c.check_quorum_lease = *lease;
    if (heartbeat && *lease <= *heartbeat) {
      reader.problem("check_quorum_lease",
                     fmt::format("a duration longer than heartbeat_interval ({}): a shorter lease "
                                 "deposes every leader between two heartbeats",
                                 sim::format_duration(*heartbeat)),
                     shown("check_quorum_lease", *lease));
    }
  }

  c.initial_log.assign(node_count, LogPosition{});
  if (reader.has("log")) {
    read_log(params.at("log"), reader.pointer_of("log"), node_count, c.initial_log, problems);
  }
  if (reader.has("lagging")) {
    read_lagging(params.at("lagging"), reader.pointer_of("lagging"), node_count, c.lagging,
                 problems);
  }

  if (problems.size() != problems_before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::raft
