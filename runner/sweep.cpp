// Sweeps: plan (load every grid point once) and run (the executor's workers taking runs from a
// shared counter, each result stored in its run's slot); runner/sweep_summary.cpp summarises
// (pooled order statistics per point), runner/sweep_output.cpp writes, runner/sweep_merge.cpp
// merges shards. Threads only decide when a run happens, never what it computes or where its record
// goes, so the tables are the same for any --jobs and any sharding.
#include "runner/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "analysis/stats.hpp"
#include "io/input.hpp"
#include "protocols/registry.hpp"
#include "runner/run.hpp"
#include "runner/threads.hpp"

namespace electsim::runner {

namespace {

using json = nlohmann::json;

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

// A word the shell passes through unchanged needs no quotes; anything else is single-quoted.
std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '/' || c == '=' || c == ':' || c == ',' || c == '+';
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string override_text(const Override& o) {
  return o.path + "=" + o.value;
}

}  // namespace

// ---- Definition ----------------------------------------------------------------------------

std::uint64_t SweepDefinition::point_count() const {
  // Saturates instead of wrapping: eight axes of 10000 values are 10^32 points, which must be
  // refused by the limit on runs, never wrap to a small count that would pass it.
  std::uint64_t n = 1;
  for (const GridAxis& a : axes) {
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(a.values.size()), &n)) {
      return std::numeric_limits<std::uint64_t>::max();
    }
  }
  return n;
}

std::uint64_t SweepDefinition::run_count() const {
  return static_cast<std::uint64_t>(protocols.size()) * point_count() * seeds.count();
}

std::vector<std::string> SweepDefinition::point_values(std::uint64_t point) const {
  std::vector<std::string> values(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    const std::uint64_t size = axes[i].values.size();
    values[i] = axes[i].values[point % size];
    point /= size;
  }
  return values;
}

json SweepDefinition::to_json() const {
  json j;
  j["scenario"] = scenario_path;
  j["scenario_name"] = scenario_name;
  j["scenario_digest"] = scenario_digest;
  j["protocols"] = protocols;
  j["protocols_asked"] = protocols_asked;
  j["variant"] = variant ? json(*variant) : json(nullptr);
  json sets_json = json::array();
  for (const Override& o : sets) sets_json.push_back(override_text(o));
  j["set"] = std::move(sets_json);
  json grid = json::array();
  for (const GridAxis& a : axes) grid.push_back({{"path", a.path}, {"values", a.values}});
  j["grid"] = std::move(grid);
  j["seeds"] = {{"first", seeds.first}, {"last", seeds.last}};
  return j;
}

std::optional<SweepDefinition> SweepDefinition::from_json(const json& j, std::string& error) {
  try {
    SweepDefinition d;
    d.scenario_path = j.at("scenario").get<std::string>();
    d.scenario_name = j.at("scenario_name").get<std::string>();
    d.scenario_digest = j.at("scenario_digest").get<std::string>();
    d.protocols = j.at("protocols").get<std::vector<std::string>>();
    d.protocols_asked = j.at("protocols_asked").get<bool>();
    if (!j.at("variant").is_null()) d.variant = j.at("variant").get<std::string>();
    for (const json& s : j.at("set")) {
      const auto o = parse_override(s.get<std::string>());
      if (!o) throw std::runtime_error("a --set value without '='");
      d.sets.push_back(*o);
    }
    for (const json& a : j.at("grid")) {
      GridAxis axis;
      axis.path = a.at("path").get<std::string>();
      axis.values = a.at("values").get<std::vector<std::string>>();
      if (axis.values.empty()) throw std::runtime_error("an axis without values");
      classify_axis(axis);
      d.axes.push_back(std::move(axis));
    }
    // get<> of a float out of range (1e20, -1.5) is undefined behaviour: check the type first.
    for (const char* end : {"first", "last"}) {
      if (!j.at("seeds").at(end).is_number_unsigned()) {
        throw std::runtime_error(fmt::format("seeds.{} must be a whole number from 0", end));
      }
    }
    d.seeds.first = j.at("seeds").at("first").get<std::uint64_t>();
    d.seeds.last = j.at("seeds").at("last").get<std::uint64_t>();
    if (d.protocols.empty() || d.seeds.first > d.seeds.last) {
      throw std::runtime_error("no protocols or an empty seed range");
    }
    for (const std::string& p : d.protocols) {
      if (protocols::find_protocol(p) == nullptr) {
        throw std::runtime_error(fmt::format("unknown protocol \"{}\"", p));
      }
    }
    // The same bounds the sweep itself was planned under, computed without overflow.
    std::uint64_t runs = d.seeds.last - d.seeds.first;  // count - 1: the full range fits too
    if (runs >= kMaxSweepRuns) throw std::runtime_error("more runs than a sweep may have");
    runs += 1;
    for (const GridAxis& a : d.axes) {
      if (a.values.size() > kMaxGridValues || runs * a.values.size() > kMaxSweepRuns) {
        throw std::runtime_error("more runs than a sweep may have");
      }
      runs *= a.values.size();
    }
    if (runs * d.protocols.size() > kMaxSweepRuns) {
      throw std::runtime_error("more runs than a sweep may have");
    }
    return d;
  } catch (const std::exception& e) {
    error = fmt::format("expected a sweep definition ({})", e.what());
    return std::nullopt;
  }
}

namespace {

// Whether a --set or axis path names another protocol's parameter (`protocols.NAME.X`).
bool reaches(const std::string& path, const std::string& running) {
  const std::string prefix = "protocols.";
  if (path.rfind(prefix, 0) != 0) return true;
  return path.substr(prefix.size(), path.find('.', prefix.size()) - prefix.size()) == running;
}

// Whether the matched knob `detection` can be set to `value` in `protocol` (db-flag never can,
// Consul not below 20s, PostgreSQL only in whole seconds from 6s).
bool knob_reaches(const std::string& protocol, const std::string& value) {
  const protocols::ProtocolInfo* info = protocols::find_protocol(protocol);
  if (info == nullptr || !info->detection.sets) return false;
  params::Problems ignored;
  const auto d = params::read_duration(nlohmann::json(value), "/detection", ignored);
  if (!d || d->count() <= 0) return false;
  std::string why;
  return info->detection.sets(*d, why).has_value();
}

}  // namespace

std::vector<std::string> SweepDefinition::point_labels(std::size_t protocol,
                                                       std::uint64_t point) const {
  std::vector<std::string> values = point_values(point);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!reaches(axes[i].path, protocols.at(protocol))) values[i] = "-";
    if (axes[i].path == "detection" && !knob_reaches(protocols.at(protocol), values[i])) {
      values[i] = "-";
    }
  }
  return values;
}

std::vector<std::string> SweepDefinition::sets_not_reaching(std::size_t protocol) const {
  std::vector<std::string> out;
  const std::string& running = protocols.at(protocol);
  for (const Override& o : sets) {
    if (!reaches(o.path, running)) out.push_back(o.path + "=" + o.value);
  }
  for (const GridAxis& a : axes) {
    if (a.path == "detection") {
      std::string values;
      for (const std::string& v : a.values) {
        if (!knob_reaches(running, v)) values += (values.empty() ? "" : ",") + v;
      }
      if (!values.empty()) out.push_back("detection=" + values);
      continue;
    }
    if (reaches(a.path, running)) continue;
    std::string values;
    for (const std::string& v : a.values) values += (values.empty() ? "" : ",") + v;
    out.push_back(a.path + "=" + values);
  }
  return out;
}

std::string SweepDefinition::replay_command(std::size_t protocol, std::uint64_t point,
                                            std::uint64_t seed) const {
  std::string command = "electsim run " + shell_quote(scenario_path);
  if (variant) {
    command += " --variant ";
    command += shell_quote(*variant);
  }
  if (protocols_asked) {
    command += " --protocol ";
    command += shell_quote(protocols[protocol]);
  }
  for (const Override& o : sets) {
    command += " --set ";
    command += shell_quote(override_text(o));
  }
  const std::vector<std::string> values = point_values(point);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    command += " --set ";
    command += shell_quote(axes[i].path + "=" + values[i]);
  }
  return command + fmt::format(" --seed {}", seed);
}

// ---- Records -------------------------------------------------------------------------------

json RunRecord::to_json() const {
  json j;
  j["run"] = run;
  j["seed"] = seed;
  j["complete"] = complete;
  j["expect_ok"] = expect_ok;
  j["duration_ns"] = duration_ns;
  j["failovers_ns"] = failovers_ns;
  j["failovers_heard_ns"] = failovers_heard_ns;
  j["failovers_unresolved"] = failovers_unresolved;
  j["failovers_ridden_out"] = failovers_ridden_out;
  j["failovers_regained"] = failovers_regained;
  j["write_outages_ns"] = write_outages_ns;
  j["ridden_out_outages_ns"] = ridden_out_outages_ns;
  j["first_leader_at_ns"] = first_leader_at_ns ? json(*first_leader_at_ns) : json(nullptr);
  j["leaderless_ns"] = leaderless_ns;
  j["split_brain_ns"] = split_brain_ns;
  j["same_epoch_leaders"] = same_epoch_leaders;
  j["stale_writes_accepted"] = stale_writes_accepted;
  j["stale_writes_rejected"] = stale_writes_rejected;
  j["stale_writes_overwriting"] = stale_writes_overwriting;
  j["writes_accepted"] = writes_accepted;
  j["elections"] = elections;
  j["services"] = services;
  j["leader_changes"] = leader_changes;
  j["stall_ns"] = stall_ns;
  j["store_unavailable_ns"] = store_unavailable_ns;
  j["store_leader_changes"] = store_leader_changes;
  j["store_outages_ns"] = store_outages_ns;
  j["outages_ns"] = outages_ns;
  j["outages_unresolved"] = outages_unresolved;
  j["outage_time_ns"] = outage_time_ns;
  j["writing_span_ns"] = writing_span_ns;
  j["equal_token_writes"] = equal_token_writes;
  j["coordinator_requests"] = coordinator_requests;
  j["messages_sent"] = messages_sent;
  j["store_requests"] = store_requests;
  j["events"] = events;
  j["trace_hash"] = trace_hash;
  return j;
}

namespace {

// Strict readers for the numbers of a part: a count is a whole number from 0 (nlohmann would turn
// -1 into 2^64-1 and 1.5 into 1), a duration a whole number of nanoseconds within [0, max].
std::uint64_t part_count(const json& j, const char* key, std::uint64_t max) {
  const json& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    throw std::runtime_error(fmt::format("\"{}\" must be a whole number from 0", key));
  }
  const auto n = v.get<std::uint64_t>();
  if (n > max) throw std::runtime_error(fmt::format("\"{}\" is above {}", key, max));
  return n;
}

std::int64_t part_duration(const json& v, const char* key, std::int64_t max) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) ||
      v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > max) {
    throw std::runtime_error(fmt::format(
        "\"{}\" must be whole nanoseconds from 0 to {} (the run's duration)", key, max));
  }
  return v.get<std::int64_t>();
}

std::vector<std::int64_t> part_durations(const json& j, const char* key, std::int64_t max,
                                         std::uint64_t max_count) {
  const json& v = j.at(key);
  if (!v.is_array() || v.size() > max_count) {
    throw std::runtime_error(
        fmt::format("\"{}\" must be a list of at most {} durations", key, max_count));
  }
  std::vector<std::int64_t> out;
  out.reserve(v.size());
  for (const json& d : v) out.push_back(part_duration(d, key, max));
  return out;
}

// A run's events bound every count it reports (each message, write or election is an event).
constexpr std::uint64_t kMaxRunEvents = 100'000'000'000;
constexpr std::int64_t kMaxRunNs = std::int64_t{24} * 30 * 3600 * 1'000'000'000;  // 720h

}  // namespace

std::optional<RunRecord> RunRecord::from_json(const json& j, std::string& error) {
  try {
    if (!j.is_object()) throw std::runtime_error("not an object");
    RunRecord r;
    r.run = part_count(j, "run", kMaxSweepRuns - 1);
    if (!j.at("seed").is_number_unsigned()) throw std::runtime_error("\"seed\" must be unsigned");
    r.seed = j.at("seed").get<std::uint64_t>();
    r.complete = j.at("complete").get<bool>();
    r.expect_ok = j.at("expect_ok").get<bool>();
    r.duration_ns = part_duration(j.at("duration_ns"), "duration_ns", kMaxRunNs);
    r.events = part_count(j, "events", kMaxRunEvents);
    const std::int64_t d = r.duration_ns;
    r.failovers_ns = part_durations(j, "failovers_ns", d, r.events);
    r.failovers_heard_ns = part_durations(j, "failovers_heard_ns", d, r.events);
    r.failovers_unresolved = part_count(j, "failovers_unresolved", r.events);
    r.failovers_ridden_out = part_count(j, "failovers_ridden_out", r.events);
    r.failovers_regained = part_count(j, "failovers_regained", r.events);
    r.write_outages_ns = part_durations(j, "write_outages_ns", d, r.events);
    r.ridden_out_outages_ns = part_durations(j, "ridden_out_outages_ns", d, r.events);
    if (!j.at("first_leader_at_ns").is_null()) {
      r.first_leader_at_ns = part_duration(j.at("first_leader_at_ns"), "first_leader_at_ns", d);
    }
    r.leaderless_ns = part_duration(j.at("leaderless_ns"), "leaderless_ns", d);
    r.split_brain_ns = part_duration(j.at("split_brain_ns"), "split_brain_ns", d);
    r.same_epoch_leaders = part_count(j, "same_epoch_leaders", r.events);
    r.stale_writes_accepted = part_count(j, "stale_writes_accepted", r.events);
    r.stale_writes_rejected = part_count(j, "stale_writes_rejected", r.events);
    r.stale_writes_overwriting = part_count(j, "stale_writes_overwriting", r.stale_writes_accepted);
    r.writes_accepted = part_count(j, "writes_accepted", r.events);
    r.elections = part_count(j, "elections", r.events);
    r.services = part_count(j, "services", Limits{}.max_services);
    if (r.services == 0) throw std::runtime_error("\"services\" must be at least 1");
    r.leader_changes = part_count(j, "leader_changes", r.elections);
    r.messages_sent = part_count(j, "messages_sent", r.events);
    r.store_requests = part_count(j, "store_requests", r.events);
    r.stall_ns = part_duration(j.at("stall_ns"), "stall_ns", d);
    r.store_unavailable_ns = part_duration(j.at("store_unavailable_ns"), "store_unavailable_ns", d);
    r.store_leader_changes = part_count(j, "store_leader_changes", r.events);
    r.store_outages_ns = part_durations(j, "store_outages_ns", d, r.events);
    r.outages_ns = part_durations(j, "outages_ns", d, r.events);
    r.outages_unresolved = part_count(j, "outages_unresolved", 1);
    r.outage_time_ns = part_duration(j.at("outage_time_ns"), "outage_time_ns", d);
    r.writing_span_ns = part_duration(j.at("writing_span_ns"), "writing_span_ns", d);
    r.equal_token_writes = part_count(j, "equal_token_writes", r.events);
    r.coordinator_requests = part_count(j, "coordinator_requests", r.events);
    r.trace_hash = j.at("trace_hash").get<std::string>();
    if (r.trace_hash.size() != 16 ||
        r.trace_hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw std::runtime_error("\"trace_hash\" must be 16 hex digits");
    }
    return r;
  } catch (const std::exception& e) {
    error = fmt::format("expected a run record ({})", e.what());
    return std::nullopt;
  }
}

namespace {

RunRecord record_of(std::uint64_t run, std::uint64_t seed, const RunResult& result) {
  const analysis::Report& report = result.report;
  RunRecord r;
  r.run = run;
  r.seed = seed;
  r.complete = !result.stats.hit_event_limit;
  r.expect_ok = result.verdict.ok();
  r.duration_ns = result.stats.end.since_start().count();
  for (const analysis::Failover& f : report.failovers) {
    if (f.failover) {
      r.failovers_ns.push_back(f.failover->count());
      if (f.failover_heard) r.failovers_heard_ns.push_back(f.failover_heard->count());
    } else if (f.ridden_out) {
      ++r.failovers_ridden_out;
    } else if (f.regained_at) {
      ++r.failovers_regained;
    } else {
      ++r.failovers_unresolved;
    }
    if (f.write_outage) {
      (f.ridden_out ? r.ridden_out_outages_ns : r.write_outages_ns)
          .push_back(f.write_outage->count());
    }
  }
  if (report.first_leader_at) r.first_leader_at_ns = report.first_leader_at->ns;
  // A fleet's times are its services' sums: the record keeps the mean service's, each within
  // the run's duration as one world's are, rounded up so that no harm rounds away to nothing.
  const auto services =
      report.fleet ? static_cast<std::int64_t>(std::max<std::size_t>(report.fleet->services, 1))
                   : 1;
  const auto per_service = [services](sim::Duration d) {
    return (d.count() + services - 1) / services;
  };
  r.leaderless_ns = per_service(report.leaderless_time);
  r.split_brain_ns = per_service(report.split_brain_time);
  r.same_epoch_leaders = report.same_epoch_leaders_total;
  r.stale_writes_accepted = report.stale_writes_accepted;
  r.stale_writes_rejected = report.stale_writes_rejected;
  r.stale_writes_overwriting = report.stale_writes_overwriting;
  r.writes_accepted = report.writes_accepted;
  r.elections = report.elections;
  r.services = static_cast<std::uint64_t>(services);
  const auto changes = [](std::uint64_t elections) { return elections > 0 ? elections - 1 : 0; };
  if (report.fleet) {
    for (const analysis::ServiceFigures& one : report.fleet->by_service) {
      r.leader_changes += changes(one.elections);
    }
  } else {
    r.leader_changes = changes(report.elections);
  }
  r.messages_sent = report.messages_sent;
  r.store_requests = report.store_requests_total;
  r.stall_ns = per_service(report.stall_time);
  r.store_unavailable_ns = report.store.unavailable_time.count();
  r.store_leader_changes = report.store.leader_changes;
  for (const sim::Duration o : report.store.outages) r.store_outages_ns.push_back(o.count());
  for (const analysis::Outage& o : report.outages) r.outages_ns.push_back(o.duration.count());
  r.outages_unresolved = report.outages_unresolved;
  // The writable share is the mean service's: its outage time over one service's writing span.
  r.outage_time_ns = report.outage_time.count() / services;
  if (report.fleet) {
    // The mean service's span, each service's from its own first write (FleetReport).
    r.writing_span_ns = report.fleet->writing_span.count() / services;
  } else if (report.first_write_at) {
    r.writing_span_ns = std::max<std::int64_t>(0, r.duration_ns - report.first_write_at->ns);
  }
  r.equal_token_writes = report.equal_token_writes;
  r.coordinator_requests = report.store_requests_total + report.server_requests_total;
  r.events = result.stats.events;
  r.trace_hash = result.trace_hash;
  return r;
}

}  // namespace

// ---- Planning and running ------------------------------------------------------------------

PlanOutcome plan_sweep(const std::string& source_text, SweepDefinition definition,
                       const Limits& limits) {
  PlanOutcome outcome;
  definition.scenario_digest = fnv1a_hex(source_text);
  std::set<std::string> paths;
  for (const Override& o : definition.sets) paths.insert(o.path);
  for (const GridAxis& axis : definition.axes) {
    if (axis.values.empty()) {
      outcome.problems.push_back(fmt::format("--grid {}: expected at least one value", axis.path));
    }
    if (!paths.insert(axis.path).second) {
      outcome.problems.push_back(fmt::format(
          "--grid {}: the path is set twice (by two --grid axes, or by --grid and --set)",
          axis.path));
    }
  }
  if (!outcome.problems.empty()) return outcome;
  if (definition.protocols.empty()) {
    // The file's own protocol: load it once plainly to learn its name.
    LoadOptions options;
    options.overrides = definition.sets;
    options.variant = definition.variant;
    options.limits = limits;
    const LoadResult loaded = load_scenario_text(source_text, definition.scenario_path, options);
    if (!loaded.scenario) {
      outcome.problems = loaded.messages();
      return outcome;
    }
    definition.protocols.push_back(loaded.scenario->protocol);
    definition.protocols_asked = false;
  }
  if (definition.seeds.first > definition.seeds.last) {
    outcome.problems.emplace_back("--seeds: expected a non-empty seed range");
    return outcome;
  }
  const std::uint64_t points = definition.point_count();
  const std::uint64_t seeds = definition.seeds.count();
  const std::uint64_t protocols = definition.protocols.size();
  if (points == 0 || seeds == 0 || points > kMaxSweepRuns / protocols ||
      points * protocols > kMaxSweepRuns / seeds) {
    outcome.problems.push_back(fmt::format(
        "expected at most {} runs in a sweep (the limit on runs per sweep), found {} protocol(s) x "
        "{} grid point(s) x {} seed(s)",
        kMaxSweepRuns, protocols, points, seeds));
    return outcome;
  }

  SweepPlan plan;
  constexpr std::size_t kMaxMessages = 20;
  std::size_t failed_points = 0;
  for (std::size_t p = 0; p < definition.protocols.size(); ++p) {
    for (std::uint64_t point = 0; point < points; ++point) {
      LoadOptions options;
      options.overrides = definition.sets;
      const std::vector<std::string> values = definition.point_values(point);
      std::string where;
      for (std::size_t i = 0; i < definition.axes.size(); ++i) {
        options.overrides.push_back(Override{definition.axes[i].path, values[i]});
        where +=
            fmt::format("{}{}={}", where.empty() ? "" : ", ", definition.axes[i].path, values[i]);
      }
      options.variant = definition.variant;
      if (definition.protocols_asked) options.protocol = definition.protocols[p];
      // Across protocols a knob one of them cannot take leaves its rows unlabelled by it.
      options.all_protocols_run = definition.protocols.size() > 1;
      options.limits = limits;
      LoadResult loaded = load_scenario_text(source_text, definition.scenario_path, options);
      if (!loaded.scenario) {
        ++failed_points;
        for (const std::string& message : loaded.messages()) {
          if (outcome.problems.size() >= kMaxMessages) break;
          std::string context = definition.protocols_asked
                                    ? fmt::format("protocol {}", definition.protocols[p])
                                    : std::string();
          if (!where.empty()) context += (context.empty() ? "" : ", ") + where;
          outcome.problems.push_back(
              context.empty() ? message : fmt::format("{} (grid point {})", message, context));
        }
        continue;
      }
      plan.scenarios.push_back(std::move(*loaded.scenario));
    }
  }
  if (failed_points > 0) {
    if (failed_points > 1) {
      outcome.problems.push_back(fmt::format("{} of {} grid points could not be loaded",
                                             failed_points, points * protocols));
    }
    return outcome;
  }
  definition.scenario_name = plan.scenarios.front().name;
  plan.definition = std::move(definition);
  outcome.plan = std::move(plan);
  return outcome;
}

SweepResult run_sweep(const SweepPlan& plan, const SweepOptions& options) {
  const SweepDefinition& d = plan.definition;
  SweepResult result;
  result.definition = d;
  const std::uint64_t total = d.run_count();
  const Shard shard = options.shard.value_or(Shard{});
  // This shard's runs are its first, first + count, ...: the i-th is computed, never listed, so
  // a sweep of millions of runs costs memory only for the runs that finished.
  const std::uint64_t owned = shard.runs_of(total);
  result.runs_expected = owned;

  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;
  const std::uint64_t seeds = d.seeds.count();
  const WorkerCount jobs = worker_count(options.jobs, owned);
  if (jobs.capped && options.notice) options.notice(capped_notice(options.jobs, jobs.threads));
  // Each thread keeps its own records; they are put in run order at the end.
  std::vector<std::vector<RunRecord>> per_thread(jobs.threads);

  auto worker = [&](std::vector<RunRecord>& records) {
    for (;;) {
      if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) return;
      if (failed.load(std::memory_order_relaxed)) return;
      const std::uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= owned) return;
      const std::uint64_t run = shard.run_at(i);
      const std::uint64_t seed = d.seeds.first + run % seeds;
      try {
        RunOptions run_options;
        run_options.seed = seed;
        run_options.cancel = options.stop;
        const RunResult r = run_scenario(plan.scenarios[run / seeds], run_options);
        if (r.stats.cancelled) return;
        records.push_back(record_of(run, seed, r));
      } catch (const std::exception& e) {
        const std::lock_guard lock(error_mutex);
        if (error.empty()) error = fmt::format("run {} (seed {}): {}", run, seed, e.what());
        failed = true;
        return;
      }
      done.fetch_add(1, std::memory_order_relaxed);
      worker_poll();
    }
  };

  // Progress is reported as the work starts, then every 200 ms of wall time (runner/threads.hpp).
  std::function<void()> tick;
  if (options.progress) tick = [&] { options.progress(SweepProgress{done.load(), owned}); };
  run_workers(
      jobs.threads, [&](unsigned t) { worker(per_thread[t]); }, tick, options.notice);
  if (options.progress) options.progress(SweepProgress{done.load(), owned});
  if (!error.empty()) throw std::runtime_error(error);

  std::size_t count = 0;
  for (const auto& records : per_thread) count += records.size();
  result.records.reserve(count);
  for (auto& records : per_thread) {
    std::move(records.begin(), records.end(), std::back_inserter(result.records));
    records = {};
  }
  std::sort(result.records.begin(), result.records.end(),
            [](const RunRecord& a, const RunRecord& b) { return a.run < b.run; });
  result.interrupted = result.records.size() < owned;
  return result;
}

// ---- Defaults from the file ----------------------------------------------------------------

SweepDefaults read_sweep_defaults(const json& document, std::vector<std::string>& problems) {
  SweepDefaults defaults;
  if (!document.is_object() || !document.contains("sweep")) return defaults;
  const json& section = document["sweep"];
  auto problem = [&](const std::string& pointer, const std::string& expected, const json& found) {
    problems.push_back(
        fmt::format("at {}: expected {}, found {}", pointer, expected, found.dump()));
  };
  if (!section.is_object()) {
    problem("/sweep", "an object with grid, seeds, protocols and metrics", section);
    return defaults;
  }
  auto strings = [&](const char* key, const std::string& expected, std::vector<std::string>& out) {
    if (!section.contains(key)) return;
    const json& list = section[key];
    const std::string pointer = fmt::format("/sweep/{}", key);
    if (!list.is_array()) {
      problem(pointer, "an array of " + expected, list);
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) {
        problem(fmt::format("{}/{}", pointer, i), expected, list[i]);
        continue;
      }
      out.push_back(list[i].get<std::string>());
    }
  };
  for (const auto& [key, value] : section.items()) {
    if (key != "grid" && key != "seeds" && key != "protocols" && key != "metrics" &&
        key != "description") {
      problem("/sweep/" + key, "one of the keys grid, seeds, protocols, metrics, description",
              json(key));
    }
  }
  strings("grid", "axes such as \"protocol.ttl=1s..10s:1s\"", defaults.grid);
  strings("protocols", "protocol names", defaults.protocols);
  strings("metrics", "point metric names such as \"failover_p99\"", defaults.metrics);
  for (std::size_t i = 0; i < defaults.grid.size(); ++i) {
    const auto axis = parse_grid_axis(defaults.grid[i]);
    if (!axis.value) problems.push_back(fmt::format("at /sweep/grid/{}: {}", i, axis.error));
  }
  if (section.contains("seeds")) {
    const json& seeds = section["seeds"];
    if (seeds.is_number_unsigned()) {
      defaults.seeds = std::to_string(seeds.get<std::uint64_t>());
    } else if (seeds.is_string()) {
      defaults.seeds = seeds.get<std::string>();
    } else {
      problem("/sweep/seeds", "a number of seeds or a range such as \"1..200\"", seeds);
    }
    if (defaults.seeds) {
      const auto range = parse_seed_range(*defaults.seeds);
      if (!range.value) problems.push_back("at /sweep/seeds: " + range.error);
    }
  }
  for (std::size_t i = 0; i < defaults.metrics.size(); ++i) {
    if (find_point_metric(defaults.metrics[i]) == nullptr) {
      std::string names;
      for (const auto& m : point_metrics()) names += (names.empty() ? "" : ", ") + m.name;
      problem(fmt::format("/sweep/metrics/{}", i), "one of the sweep metrics " + names,
              json(defaults.metrics[i]));
    }
  }
  return defaults;
}

}  // namespace electsim::runner
