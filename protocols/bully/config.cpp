// Parameters of the Bully algorithm (protocols/bully/config.hpp). Every timeout must be positive,
// and heartbeats must come more often than followers give up on the coordinator, or a healthy
// coordinator would be deposed between two of its heartbeats. Cross-field problems are reported
// at the field the user wrote.
#include "protocols/bully/config.hpp"

#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace electsim::protocols::bully {
namespace {

constexpr const char* kStartNames[] = {"all", "lowest", "none"};  // StartMode's order

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const BullyConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "answer_timeout",
         .default_value = d.answer_timeout,
         .min = params::kShortestTimer,
         .meaning =
             "a candidate that hears no Answer from a higher id within this becomes coordinator"},
        {.name = "coordinator_timeout",
         .default_value = d.coordinator_timeout,
         .min = params::kShortestTimer,
         .meaning = "a candidate that was answered but hears no Coordinator within this holds a "
                    "new election"},
        {.name = "heartbeat_interval",
         .default_value = d.heartbeat_interval,
         .min = params::kShortestTimer,
         .meaning = "the coordinator sends a Heartbeat to every node this often"},
        {.name = "failure_timeout",
         .default_value = d.failure_timeout,
         .min = params::kShortestTimer,
         .meaning =
             "a follower that hears nothing from its coordinator for this holds an election"},
        {.name = "start",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kStartNames, d.start),
         .meaning = "which nodes hold an election when they first start: all; lowest (only the "
                    "lowest id, the worst case for messages); none (the cluster idles until a "
                    "restart or step_down)",
         .choices = params::choice_names(kStartNames)},
    };
  }();
  return table;
}

}  // namespace

std::span<const params::ParamSpec> bully_params() {
  return specs();
}

std::optional<BullyConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                       params::Problems& problems) {
  const std::size_t problems_before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  BullyConfig c;

  const auto answer_timeout = reader.timer("answer_timeout");
  const auto coordinator_timeout = reader.timer("coordinator_timeout");
  const auto heartbeat_interval = reader.timer("heartbeat_interval");
  const auto failure_timeout = reader.timer("failure_timeout");
  if (answer_timeout) c.answer_timeout = *answer_timeout;
  if (coordinator_timeout) c.coordinator_timeout = *coordinator_timeout;
  if (heartbeat_interval) c.heartbeat_interval = *heartbeat_interval;
  if (failure_timeout) c.failure_timeout = *failure_timeout;

  if (heartbeat_interval && failure_timeout && *heartbeat_interval >= *failure_timeout) {
    // Point at what the user wrote: a failure_timeout given alone is the one that is too short.
    if (reader.has("failure_timeout") && !reader.has("heartbeat_interval")) {
      reader.problem("failure_timeout",
                     fmt::format("a duration longer than heartbeat_interval ({}, the default)",
                                 sim::format_duration(*heartbeat_interval)),
                     params::json_excerpt(params.at("failure_timeout")));
    } else {
      const std::string shown =
          reader.has("failure_timeout") ? std::string() : std::string(", the default");
      reader.problem("heartbeat_interval",
                     fmt::format("a duration shorter than failure_timeout ({}{})",
                                 sim::format_duration(*failure_timeout), shown),
                     params::json_excerpt(params.at("heartbeat_interval")));
    }
  }

  c.start = static_cast<StartMode>(reader.choice_index("start"));

  if (problems.size() != problems_before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::bully
