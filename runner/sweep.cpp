// Sweeps: plan (load every grid point once), run (a pool of threads taking runs from a shared
// counter, each result stored in its run's slot), summarise (pooled order statistics per point)
// and write. Threads only decide when a run happens, never what it computes or where its record
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

__extension__ typedef __int128 Int128;  // exact sums of nanoseconds over a whole sweep
namespace {

using json = nlohmann::json;

constexpr int kPartFormat = 1;

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

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Exact seconds from nanoseconds: "1.5", "0.000001", "12".
std::string seconds_text(std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t magnitude =
      negative ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  std::string fraction = fmt::format("{:09}", magnitude % 1'000'000'000u);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  std::string text = fmt::format("{}{}", negative ? "-" : "", magnitude / 1'000'000'000u);
  if (!fraction.empty()) {
    text += ".";
    text += fraction;
  }
  return text;
}

std::string optional_seconds(const std::optional<std::int64_t>& ns) {
  return ns ? seconds_text(*ns) : std::string();
}

json seconds_json(const std::optional<double>& ns) {
  if (!ns) return nullptr;
  return *ns / 1e9;
}

std::string number_text(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : std::string();
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
  protocols::Problems ignored;
  const auto d = protocols::read_duration(nlohmann::json(value), "/detection", ignored);
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
  r.leaderless_ns = report.leaderless_time.count();
  r.split_brain_ns = report.split_brain_time.count();
  r.same_epoch_leaders = report.same_epoch_leaders_total;
  r.stale_writes_accepted = report.stale_writes_accepted;
  r.stale_writes_rejected = report.stale_writes_rejected;
  r.stale_writes_overwriting = report.stale_writes_overwriting;
  r.writes_accepted = report.writes_accepted;
  r.elections = report.elections;
  r.messages_sent = report.messages_sent;
  r.store_requests = report.store_requests_total;
  r.stall_ns = report.stall_time.count();
  r.store_unavailable_ns = report.store.unavailable_time.count();
  r.store_leader_changes = report.store.leader_changes;
  for (const sim::Duration o : report.store.outages) r.store_outages_ns.push_back(o.count());
  for (const analysis::Outage& o : report.outages) r.outages_ns.push_back(o.duration.count());
  r.outages_unresolved = report.outages_unresolved;
  r.outage_time_ns = report.outage_time.count();
  if (report.first_write_at) {
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
  // This shard's runs are first, first + step, ...: the i-th is computed, never listed, so a
  // sweep of millions of runs costs memory only for the runs that finished.
  const std::uint64_t first = shard.index - 1;
  const std::uint64_t step = shard.count;
  const std::uint64_t owned = first < total ? (total - first + step - 1) / step : 0;
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
      const std::uint64_t run = first + i * step;
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

// ---- Summaries -----------------------------------------------------------------------------

std::vector<PointSummary> summarise(const SweepResult& result) {
  const SweepDefinition& d = result.definition;
  const std::uint64_t points = d.point_count();
  const std::uint64_t seeds = d.seeds.count();
  std::vector<PointSummary> out;
  std::size_t r = 0;
  const auto& records = result.records;
  for (std::size_t p = 0; p < d.protocols.size(); ++p) {
    for (std::uint64_t point = 0; point < points; ++point) {
      const std::uint64_t first_run = (p * points + point) * seeds;
      const std::uint64_t end_run = first_run + seeds;
      PointSummary s;
      s.protocol = p;
      s.point = point;
      std::vector<std::int64_t> failovers;
      std::vector<std::int64_t> heard;
      std::vector<std::int64_t> store_outages;
      std::vector<std::int64_t> outages;
      std::vector<std::int64_t> ridden;
      // Sums over up to 10^8 runs of up to 720h each: 128 bits, so no sweep can overflow them.
      Int128 simulated_ns = 0;
      Int128 leaderless_ns = 0;
      Int128 stall_ns = 0;
      Int128 store_unavailable_ns = 0;
      std::uint64_t store_leader_changes = 0;
      Int128 split_brain_total_ns = 0;
      std::int64_t split_brain_max_ns = 0;
      std::uint64_t runs_split = 0;
      std::uint64_t runs_stale = 0;
      std::uint64_t runs_overwrite = 0;
      std::uint64_t runs_same_epoch = 0;
      std::uint64_t messages = 0;
      std::uint64_t store_requests = 0;
      std::uint64_t coordinator_requests = 0;
      std::vector<std::int64_t> service_outages;
      Int128 outage_time_ns = 0;
      Int128 writing_span_ns = 0;
      std::uint64_t runs_equal_token = 0;
      const RunRecord* worst_split = nullptr;
      const RunRecord* worst_failover = nullptr;
      std::int64_t worst_failover_ns = -1;
      while (r < records.size() && records[r].run < end_run) {
        const RunRecord& rec = records[r++];
        if (rec.run < first_run) continue;
        ++s.runs;
        s.runs_incomplete += rec.complete ? 0 : 1;
        s.runs_breaking_expect += rec.expect_ok ? 0 : 1;
        failovers.insert(failovers.end(), rec.failovers_ns.begin(), rec.failovers_ns.end());
        heard.insert(heard.end(), rec.failovers_heard_ns.begin(), rec.failovers_heard_ns.end());
        store_outages.insert(store_outages.end(), rec.store_outages_ns.begin(),
                             rec.store_outages_ns.end());
        outages.insert(outages.end(), rec.write_outages_ns.begin(), rec.write_outages_ns.end());
        ridden.insert(ridden.end(), rec.ridden_out_outages_ns.begin(),
                      rec.ridden_out_outages_ns.end());
        s.failovers_unresolved += rec.failovers_unresolved;
        s.failovers_ridden_out += rec.failovers_ridden_out;
        s.failovers_regained += rec.failovers_regained;
        simulated_ns += rec.duration_ns;
        leaderless_ns += rec.leaderless_ns;
        stall_ns += rec.stall_ns;
        store_unavailable_ns += rec.store_unavailable_ns;
        store_leader_changes += rec.store_leader_changes;
        split_brain_total_ns += rec.split_brain_ns;
        split_brain_max_ns = std::max(split_brain_max_ns, rec.split_brain_ns);
        runs_split += rec.split_brain_ns > 0 ? 1 : 0;
        runs_stale += rec.stale_writes_accepted > 0 ? 1 : 0;
        runs_overwrite += rec.stale_writes_overwriting > 0 ? 1 : 0;
        runs_same_epoch += rec.same_epoch_leaders > 0 ? 1 : 0;
        s.stale_writes_accepted += rec.stale_writes_accepted;
        s.stale_writes_rejected += rec.stale_writes_rejected;
        s.same_epoch_leaders += rec.same_epoch_leaders;
        messages += rec.messages_sent;
        store_requests += rec.store_requests;
        coordinator_requests += rec.coordinator_requests;
        service_outages.insert(service_outages.end(), rec.outages_ns.begin(), rec.outages_ns.end());
        s.outages_unresolved += rec.outages_unresolved;
        outage_time_ns += rec.outage_time_ns;
        writing_span_ns += rec.writing_span_ns;
        runs_equal_token += rec.equal_token_writes > 0 ? 1 : 0;
        if (rec.split_brain_ns > 0 &&
            (worst_split == nullptr || rec.split_brain_ns > worst_split->split_brain_ns)) {
          worst_split = &rec;
        }
        for (std::int64_t f : rec.failovers_ns) {
          if (f > worst_failover_ns) {
            worst_failover_ns = f;
            worst_failover = &rec;
          }
        }
      }
      s.failovers = failovers.size();
      s.write_outages = outages.size();
      std::sort(failovers.begin(), failovers.end());
      std::sort(outages.begin(), outages.end());
      s.failover_p50_ns = analysis::nearest_rank_percentile(failovers, 50);
      s.failover_p90_ns = analysis::nearest_rank_percentile(failovers, 90);
      s.failover_p99_ns = analysis::nearest_rank_percentile(failovers, 99);
      s.failover_max_ns = analysis::nearest_rank_percentile(failovers, 100);
      s.failovers_heard = heard.size();
      std::sort(heard.begin(), heard.end());
      s.failover_heard_p50_ns = analysis::nearest_rank_percentile(heard, 50);
      s.failover_heard_p99_ns = analysis::nearest_rank_percentile(heard, 99);
      s.failover_heard_max_ns = analysis::nearest_rank_percentile(heard, 100);
      s.store_outages = store_outages.size();
      std::sort(store_outages.begin(), store_outages.end());
      s.store_outage_p50_ns = analysis::nearest_rank_percentile(store_outages, 50);
      s.store_outage_p99_ns = analysis::nearest_rank_percentile(store_outages, 99);
      s.store_outage_max_ns = analysis::nearest_rank_percentile(store_outages, 100);
      s.write_outage_p50_ns = analysis::nearest_rank_percentile(outages, 50);
      s.write_outage_p99_ns = analysis::nearest_rank_percentile(outages, 99);
      s.ridden_out_outages = ridden.size();
      std::sort(ridden.begin(), ridden.end());
      s.ridden_out_outage_p50_ns = analysis::nearest_rank_percentile(ridden, 50);
      s.ridden_out_outage_p99_ns = analysis::nearest_rank_percentile(ridden, 99);
      s.ridden_out_outage_max_ns = analysis::nearest_rank_percentile(ridden, 100);
      s.outages = service_outages.size();
      std::sort(service_outages.begin(), service_outages.end());
      s.outage_p50_ns = analysis::nearest_rank_percentile(service_outages, 50);
      s.outage_p99_ns = analysis::nearest_rank_percentile(service_outages, 99);
      s.outage_max_ns = analysis::nearest_rank_percentile(service_outages, 100);
      if (writing_span_ns > 0) {
        s.writable_fraction =
            1.0 - static_cast<double>(outage_time_ns) / static_cast<double>(writing_span_ns);
      }
      if (s.runs > 0) {
        s.equal_token_probability =
            static_cast<double>(runs_equal_token) / static_cast<double>(s.runs);
        const auto runs = static_cast<double>(s.runs);
        if (simulated_ns > 0) {
          const double simulated_s = static_cast<double>(simulated_ns) / 1e9;
          s.leaderless_fraction =
              static_cast<double>(leaderless_ns) / static_cast<double>(simulated_ns);
          s.messages_per_second = static_cast<double>(messages) / simulated_s;
          s.store_requests_per_second = static_cast<double>(store_requests) / simulated_s;
          s.coordinator_requests_per_second =
              static_cast<double>(coordinator_requests) / simulated_s;
          s.stall_fraction = static_cast<double>(stall_ns) / static_cast<double>(simulated_ns);
          s.store_availability =
              1.0 - static_cast<double>(store_unavailable_ns) / static_cast<double>(simulated_ns);
        }
        s.store_leader_changes_mean = static_cast<double>(store_leader_changes) / runs;
        s.split_brain_probability = static_cast<double>(runs_split) / runs;
        s.split_brain_time_mean_ns = static_cast<std::int64_t>(
            (split_brain_total_ns + static_cast<Int128>(s.runs / 2)) / static_cast<Int128>(s.runs));
        s.split_brain_time_max_ns = split_brain_max_ns;
        s.stale_write_probability = static_cast<double>(runs_stale) / runs;
        s.overwrite_probability = static_cast<double>(runs_overwrite) / runs;
        s.same_epoch_probability = static_cast<double>(runs_same_epoch) / runs;
      }
      if (worst_split != nullptr) {
        s.worst_seed = worst_split->seed;
      } else if (worst_failover != nullptr) {
        s.worst_seed = worst_failover->seed;
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

const std::vector<PointMetric>& point_metrics() {
  auto ns = [](const std::optional<std::int64_t>& v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return static_cast<double>(*v);
  };
  static const std::vector<PointMetric> metrics = {
      {"failover_p50", true, false, "median failover over every observed failover of the point",
       [ns](const PointSummary& s) { return ns(s.failover_p50_ns); }},
      {"failover_p90", true, false, "90th percentile failover (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.failover_p90_ns); }},
      {"failover_p99", true, false, "99th percentile failover (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.failover_p99_ns); }},
      {"failover_max", true, false, "longest observed failover",
       [ns](const PointSummary& s) { return ns(s.failover_max_ns); }},
      {"failover_heard_p50", true, false,
       "median failover to the Raft paper's endpoint: every other live node has heard the new "
       "leader (its first heartbeat)",
       [ns](const PointSummary& s) { return ns(s.failover_heard_p50_ns); }},
      {"failover_heard_p99", true, false,
       "99th percentile failover to the paper's endpoint (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.failover_heard_p99_ns); }},
      {"failover_heard_max", true, false, "longest failover to the paper's endpoint",
       [ns](const PointSummary& s) { return ns(s.failover_heard_max_ns); }},
      {"store_outage_p50", true, false,
       "median store outage: from the moment a store that could grant no longer can (its leader "
       "crashed) until it can again",
       [ns](const PointSummary& s) { return ns(s.store_outage_p50_ns); }},
      {"store_outage_p99", true, false, "99th percentile store outage (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.store_outage_p99_ns); }},
      {"store_outage_max", true, false, "longest store outage",
       [ns](const PointSummary& s) { return ns(s.store_outage_max_ns); }},
      {"write_outage_p50", true, false,
       "median write outage (old leader's last accepted write to "
       "the new leader's first)",
       [ns](const PointSummary& s) { return ns(s.write_outage_p50_ns); }},
      {"write_outage_p99", true, false, "99th percentile write outage (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.write_outage_p99_ns); }},
      {"ridden_out_outage_p50", true, false,
       "median write outage of a fault the leader rode out (its last accepted write before the "
       "fault to its first after: a pause shorter than the lease still stops the writes)",
       [ns](const PointSummary& s) { return ns(s.ridden_out_outage_p50_ns); }},
      {"ridden_out_outage_p99", true, false,
       "99th percentile write outage of a ridden-out fault (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.ridden_out_outage_p99_ns); }},
      {"ridden_out_outage_max", true, false, "longest write outage of a ridden-out fault",
       [ns](const PointSummary& s) { return ns(s.ridden_out_outage_max_ns); }},
      {"outage_p50", true, false,
       "median service outage, whatever the cause (a gap of more than two write intervals "
       "between accepted writes from the newest leader; one the service never recovered from "
       "runs to the run's end), over every outage of the point",
       [ns](const PointSummary& s) { return ns(s.outage_p50_ns); }},
      {"outage_p99", true, false, "99th percentile service outage (nearest rank)",
       [ns](const PointSummary& s) { return ns(s.outage_p99_ns); }},
      {"outage_max", true, false, "longest service outage",
       [ns](const PointSummary& s) { return ns(s.outage_max_ns); }},
      {"writable_fraction", false, true,
       "time the service could write (from its first accepted write, outside outages) over that "
       "time, all runs pooled",
       [](const PointSummary& s) { return s.writable_fraction; }},
      {"equal_token_probability", false, true,
       "fraction of runs in which two leaders' writes under one token were both accepted, "
       "interleaved",
       [](const PointSummary& s) { return s.equal_token_probability; }},
      {"leaderless_fraction", false, true, "leaderless time over simulated time, all runs pooled",
       [](const PointSummary& s) { return s.leaderless_fraction; }},
      {"split_brain_probability", false, true, "fraction of runs with any split-brain time",
       [](const PointSummary& s) { return s.split_brain_probability; }},
      {"split_brain_time_mean", true, false, "split-brain time per run, averaged over all runs",
       [ns](const PointSummary& s) { return ns(s.split_brain_time_mean_ns); }},
      {"split_brain_time_max", true, false, "the longest split-brain time of one run",
       [ns](const PointSummary& s) { return ns(s.split_brain_time_max_ns); }},
      {"stale_write_probability", false, true,
       "fraction of runs in which the sink accepted a stale write (a deposed leader acted; "
       "corruption where it overwrote newer data, overwrite_probability)",
       [](const PointSummary& s) { return s.stale_write_probability; }},
      {"overwrite_probability", false, true,
       "fraction of runs in which a stale write overwrote a newer leader's data: corruption, "
       "what fencing prevents",
       [](const PointSummary& s) { return s.overwrite_probability; }},
      {"same_epoch_probability", false, true,
       "fraction of runs with two leaders in one epoch or term",
       [](const PointSummary& s) { return s.same_epoch_probability; }},
      {"messages_per_second", false, false, "messages sent per simulated second, all runs pooled",
       [](const PointSummary& s) { return s.messages_per_second; }},
      {"store_requests_per_second", false, false,
       "store requests per simulated second, all runs pooled",
       [](const PointSummary& s) { return s.store_requests_per_second; }},
      {"coordinator_requests_per_second", false, false,
       "requests to every coordinator (store, database, Redis masters) per simulated second, all "
       "runs pooled",
       [](const PointSummary& s) { return s.coordinator_requests_per_second; }},
      {"stall_fraction", false, true,
       "time with no leader while the store could not grant, over simulated time, all runs pooled",
       [](const PointSummary& s) { return s.stall_fraction; }},
      {"store_availability", false, true,
       "time the store could grant (a replicated store: a member led and ran), all runs pooled",
       [](const PointSummary& s) { return s.store_availability; }},
      {"store_leader_changes_mean", false, false, "store leader changes per run",
       [](const PointSummary& s) { return s.store_leader_changes_mean; }},
  };
  return metrics;
}

const PointMetric* find_point_metric(std::string_view name) {
  for (const PointMetric& m : point_metrics()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// ---- Outputs -------------------------------------------------------------------------------

namespace {

std::string metric_cell(const PointMetric& m, const PointSummary& s) {
  const std::optional<double> v = m.value(s);
  if (!v) return {};
  if (m.duration) {
    return seconds_text(static_cast<std::int64_t>(*v));  // every duration is whole nanoseconds
  }
  return number_text(v);
}

std::string metric_column(const PointMetric& m) {
  return m.duration ? m.name + "_s" : m.name;
}

}  // namespace

std::string sweep_points_csv(const SweepResult& result, const std::vector<PointSummary>& points) {
  const SweepDefinition& d = result.definition;
  std::string out = "protocol";
  for (const GridAxis& a : d.axes) {
    out += ",";
    out += csv_field(a.path);
  }
  out +=
      ",runs,runs_incomplete,runs_breaking_expect,failovers,failovers_unresolved,"
      "failovers_ridden_out,failovers_regained,"
      "stale_writes_accepted,stale_writes_rejected,same_epoch_leaders";
  for (const PointMetric& m : point_metrics()) {
    out += ",";
    out += metric_column(m);
  }
  out +=
      ",worst_seed,replay_worst,write_outages,failover_p99_unstable,write_outage_p99_unstable,"
      "ridden_out_outages,ridden_out_outage_p99_unstable,outages,outage_p99_unstable,"
      "outages_unresolved,sets_not_reaching\n";
  for (const PointSummary& s : points) {
    out += csv_field(d.protocols[s.protocol]);
    for (const std::string& v : d.point_labels(s.protocol, s.point)) {
      out += ",";
      out += csv_field(v);
    }
    out += fmt::format(",{},{},{},{},{},{},{},{},{},{}", s.runs, s.runs_incomplete,
                       s.runs_breaking_expect, s.failovers, s.failovers_unresolved,
                       s.failovers_ridden_out, s.failovers_regained, s.stale_writes_accepted,
                       s.stale_writes_rejected, s.same_epoch_leaders);
    for (const PointMetric& m : point_metrics()) {
      out += ",";
      out += metric_cell(m, s);
    }
    if (s.worst_seed) {
      out += fmt::format(",{},{}", *s.worst_seed,
                         csv_field(d.replay_command(s.protocol, s.point, *s.worst_seed)));
    } else {
      out += ",,";
    }
    // A p99 from fewer than kStableP99Samples samples is flagged, never silently printed as one.
    out += fmt::format(",{},{},{},{},{},{},{},{}", s.write_outages, s.failovers < kStableP99Samples,
                       s.write_outages < kStableP99Samples, s.ridden_out_outages,
                       s.ridden_out_outages < kStableP99Samples, s.outages,
                       s.outages < kStableP99Samples, s.outages_unresolved);
    // --set values this protocol's runs never saw (another protocol's parameters).
    std::string unreached;
    for (const std::string& set : d.sets_not_reaching(s.protocol)) {
      unreached += (unreached.empty() ? "" : " ") + set;
    }
    out += "," + csv_field(unreached) + "\n";
  }
  return out;
}

std::string sweep_runs_csv(const SweepResult& result) {
  const SweepDefinition& d = result.definition;
  const std::uint64_t points = d.point_count();
  const std::uint64_t seeds = d.seeds.count();
  std::string out = "protocol";
  for (const GridAxis& a : d.axes) {
    out += ",";
    out += csv_field(a.path);
  }
  out +=
      ",seed,complete,expect_ok,failovers,failovers_unresolved,failover_max_s,"
      "write_outage_max_s,first_leader_at_s,leaderless_fraction,split_brain_time_s,"
      "same_epoch_leaders,stale_writes_accepted,stale_writes_rejected,stale_writes_overwriting,"
      "writes_accepted,elections,"
      "messages_sent,store_requests,stall_time_s,store_leader_changes,outages,outage_max_s,"
      "outage_time_s,outages_unresolved,equal_token_writes,coordinator_requests,events,"
      "trace_hash,replay\n";
  for (const RunRecord& r : result.records) {
    const std::size_t protocol = static_cast<std::size_t>(r.run / seeds / points);
    const std::uint64_t point = (r.run / seeds) % points;
    out += csv_field(d.protocols[protocol]);
    for (const std::string& v : d.point_labels(protocol, point)) {
      out += ",";
      out += csv_field(v);
    }
    const auto max_of = [](const std::vector<std::int64_t>& v) -> std::optional<std::int64_t> {
      if (v.empty()) return std::nullopt;
      return *std::max_element(v.begin(), v.end());
    };
    const std::optional<double> leaderless =
        r.duration_ns > 0 ? std::optional<double>(static_cast<double>(r.leaderless_ns) /
                                                  static_cast<double>(r.duration_ns))
                          : std::nullopt;
    const std::string leaderless_text = number_text(leaderless);
    out += fmt::format(
        ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        r.seed, r.complete, r.expect_ok, r.failovers_ns.size(), r.failovers_unresolved,
        optional_seconds(max_of(r.failovers_ns)), optional_seconds(max_of(r.write_outages_ns)),
        optional_seconds(r.first_leader_at_ns), leaderless_text, seconds_text(r.split_brain_ns),
        r.same_epoch_leaders, r.stale_writes_accepted, r.stale_writes_rejected,
        r.stale_writes_overwriting, r.writes_accepted, r.elections, r.messages_sent,
        r.store_requests, seconds_text(r.stall_ns), r.store_leader_changes, r.outages_ns.size(),
        optional_seconds(max_of(r.outages_ns)), seconds_text(r.outage_time_ns),
        r.outages_unresolved, r.equal_token_writes, r.coordinator_requests, r.events, r.trace_hash,
        csv_field(d.replay_command(protocol, point, r.seed)));
  }
  return out;
}

json sweep_json(const SweepResult& result, const std::vector<PointSummary>& points) {
  const SweepDefinition& d = result.definition;
  json j;
  j["sweep"] = d.to_json();
  j["runs_total"] = d.run_count();
  j["runs_done"] = result.records.size();
  j["complete"] = result.records.size() == d.run_count();
  json metrics = json::object();
  for (const PointMetric& m : point_metrics()) {
    metrics[metric_column(m)] = m.meaning + (m.duration ? " (seconds)" : "");
  }
  j["metrics"] = std::move(metrics);
  json rows = json::array();
  for (const PointSummary& s : points) {
    json row;
    row["protocol"] = d.protocols[s.protocol];
    json grid = json::object();
    const std::vector<std::string> values = d.point_labels(s.protocol, s.point);
    for (std::size_t i = 0; i < d.axes.size(); ++i) grid[d.axes[i].path] = values[i];
    row["grid"] = std::move(grid);
    row["runs"] = s.runs;
    row["runs_incomplete"] = s.runs_incomplete;
    row["runs_breaking_expect"] = s.runs_breaking_expect;
    row["failovers"] = s.failovers;
    row["failovers_heard"] = s.failovers_heard;
    row["store_outages"] = s.store_outages;
    row["write_outages"] = s.write_outages;
    row["failover_p99_unstable"] = s.failovers < kStableP99Samples;
    row["write_outage_p99_unstable"] = s.write_outages < kStableP99Samples;
    row["ridden_out_outages"] = s.ridden_out_outages;
    row["ridden_out_outage_p99_unstable"] = s.ridden_out_outages < kStableP99Samples;
    row["outages"] = s.outages;
    row["outage_p99_unstable"] = s.outages < kStableP99Samples;
    row["outages_unresolved"] = s.outages_unresolved;
    row["sets_not_reaching"] = d.sets_not_reaching(s.protocol);
    row["failovers_unresolved"] = s.failovers_unresolved;
    row["failovers_ridden_out"] = s.failovers_ridden_out;
    row["failovers_regained"] = s.failovers_regained;
    row["stale_writes_accepted"] = s.stale_writes_accepted;
    row["stale_writes_rejected"] = s.stale_writes_rejected;
    row["same_epoch_leaders"] = s.same_epoch_leaders;
    for (const PointMetric& m : point_metrics()) {
      const std::optional<double> v = m.value(s);
      row[metric_column(m)] = m.duration ? seconds_json(v) : (v ? json(*v) : json(nullptr));
    }
    row["worst_seed"] = s.worst_seed ? json(*s.worst_seed) : json(nullptr);
    row["replay"] = d.replay_command(s.protocol, s.point, d.seeds.first);
    if (s.worst_seed) {
      row["replay_worst"] = d.replay_command(s.protocol, s.point, *s.worst_seed);
    }
    rows.push_back(std::move(row));
  }
  j["points"] = std::move(rows);
  return j;
}

std::string format_sweep_table(const SweepResult& result, const std::vector<PointSummary>& points) {
  const SweepDefinition& d = result.definition;
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {"protocol"};
  for (const GridAxis& a : d.axes) header.push_back(a.path);
  for (const char* h : {"runs", "failovers", "failover p50", "p99", "max", "unresolved",
                        "ridden out", "outages", "outage p50", "p99", "max", "writable",
                        "split-brain", "stale write", "overwrite", "msgs/s", "coord req/s"}) {
    header.emplace_back(h);
  }
  table.push_back(header);
  auto seconds = [](const std::optional<std::int64_t>& ns) {
    return ns ? sim::format_seconds(sim::Duration(*ns)) : std::string("-");
  };
  auto percent = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.1f}%", *v * 100) : std::string("-");
  };
  auto rate = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.1f}", *v) : std::string("-");
  };
  bool any_unstable = false;
  for (const PointSummary& s : points) {
    std::vector<std::string> row = {d.protocols[s.protocol]};
    for (const std::string& v : d.point_labels(s.protocol, s.point)) row.push_back(v);
    row.push_back(fmt::format("{}", s.runs));
    row.push_back(fmt::format("{}", s.failovers));
    row.push_back(seconds(s.failover_p50_ns));
    const bool unstable = s.failover_p99_ns && s.failovers < kStableP99Samples;
    any_unstable = any_unstable || unstable;
    row.push_back(seconds(s.failover_p99_ns) + (unstable ? "*" : " "));
    row.push_back(seconds(s.failover_max_ns));
    row.push_back(fmt::format("{}", s.failovers_unresolved));
    row.push_back(fmt::format("{}", s.failovers_ridden_out));
    row.push_back(s.outages_unresolved == 0
                      ? fmt::format("{}", s.outages)
                      : fmt::format("{} ({} open)", s.outages, s.outages_unresolved));
    row.push_back(seconds(s.outage_p50_ns));
    const bool outage_unstable = s.outage_p99_ns && s.outages < kStableP99Samples;
    any_unstable = any_unstable || outage_unstable;
    row.push_back(seconds(s.outage_p99_ns) + (outage_unstable ? "*" : " "));
    row.push_back(seconds(s.outage_max_ns));
    row.push_back(percent(s.writable_fraction));
    row.push_back(percent(s.split_brain_probability));
    row.push_back(percent(s.stale_write_probability));
    row.push_back(percent(s.overwrite_probability));
    row.push_back(rate(s.messages_per_second));
    row.push_back(rate(s.coordinator_requests_per_second));
    table.push_back(std::move(row));
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& row : table) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out = fmt::format(
      "sweep of {} ({}): {} protocol(s) x {} grid point(s) x seeds {}..{}, {} of {} runs\n",
      d.scenario_name, d.scenario_path, d.protocols.size(), d.point_count(), d.seeds.first,
      d.seeds.last, result.records.size(), d.run_count());
  for (const auto& row : table) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      // Names left-aligned, figures right-aligned.
      const bool left = c <= d.axes.size();
      line += c == 0 ? "" : "  ";
      line += left ? fmt::format("{:<{}}", row[c], widths[c])
                   : fmt::format("{:>{}}", row[c], widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out +=
      "failover percentiles pool every observed failover of a point (nearest rank); ridden "
      "out: faults the leader survived without a failover; outages: what the service lived "
      "through whatever the cause (more than two write intervals without an accepted write from "
      "the newest leader; \"open\": runs that never wrote again), pooled over the point's runs, "
      "writable: the share of time it could write; split-brain (two nodes believed they led), "
      "stale write (a deposed leader's write accepted) and overwrite (one accepted over newer "
      "data: corruption): share of runs; coord req/s: requests to the store, database and Redis "
      "masters\n";
  if (any_unstable) {
    out += fmt::format(
        "* a p99 from fewer than {} samples (failovers or outages) is the largest one or next to "
        "it, not a stable estimate: run more seeds\n",
        kStableP99Samples);
  }
  return out;
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

// ---- Shards --------------------------------------------------------------------------------

std::string sweep_part(const SweepResult& result, const Shard& shard) {
  json header;
  header["electsim_sweep_part"] = kPartFormat;
  header["definition"] = result.definition.to_json();
  header["shard"] = fmt::format("{}/{}", shard.index, shard.count);
  header["runs_expected"] = result.runs_expected;
  header["interrupted"] = result.interrupted;
  if (!result.plot_metrics.empty()) header["metrics"] = result.plot_metrics;
  std::string out = header.dump() + "\n";
  for (const RunRecord& r : result.records) out += r.to_json().dump() + "\n";
  return out;
}

MergeOutcome merge_parts(const std::vector<PartText>& parts) {
  MergeOutcome outcome;
  if (parts.empty()) {
    outcome.problems.emplace_back("expected at least one part to merge");
    return outcome;
  }
  std::optional<json> definition_json;
  std::optional<SweepDefinition> definition;
  std::map<std::uint64_t, RunRecord> records;
  std::map<std::uint64_t, std::string> owner;
  std::vector<std::string> interrupted;
  std::vector<std::string> plot_metrics;
  for (const PartText& part : parts) {
    std::size_t line_start = 0;
    std::size_t line_number = 0;
    bool header_seen = false;
    Shard shard;
    std::uint64_t owned = 0;
    std::uint64_t in_part = 0;
    bool part_interrupted = false;
    while (line_start < part.text.size()) {
      std::size_t line_end = part.text.find('\n', line_start);
      if (line_end == std::string::npos) line_end = part.text.size();
      const std::string_view line(part.text.data() + line_start, line_end - line_start);
      line_start = line_end + 1;
      ++line_number;
      if (line.empty()) continue;
      const io::JsonParse parsed = io::parse_json(line, 8);
      const json& j = parsed.value;
      const std::string where = fmt::format("{}:{}", part.name, line_number);
      if (!parsed.ok() || !j.is_object()) {
        outcome.problems.push_back(where + ": expected a JSON object on every line of a part");
        break;
      }
      if (!header_seen) {
        header_seen = true;
        if (!j.contains("electsim_sweep_part") || j["electsim_sweep_part"] != kPartFormat ||
            !j.contains("definition")) {
          outcome.problems.push_back(
              where +
              ": expected a sweep part written by `electsim sweep --shard` (its first line "
              "names the sweep)");
          break;
        }
        if (!definition_json) {
          std::string error;
          definition = SweepDefinition::from_json(j["definition"], error);
          if (!definition) {
            outcome.problems.push_back(where + ": " + error);
            break;
          }
          definition_json = j["definition"];
        } else if (j["definition"] != *definition_json) {
          outcome.problems.push_back(fmt::format(
              "{}: this part comes from a different sweep than {} (scenario, grid, seeds, "
              "protocols or --set differ)",
              where, parts.front().name));
          break;
        }
        const json* shard_text = j.contains("shard") ? &j["shard"] : nullptr;
        const auto parsed_shard = shard_text != nullptr && shard_text->is_string()
                                      ? parse_shard(shard_text->get<std::string>())
                                      : Parsed<Shard>{};
        if (!parsed_shard.value || !j.contains("runs_expected") ||
            !j["runs_expected"].is_number_unsigned() || !j.contains("interrupted") ||
            !j["interrupted"].is_boolean()) {
          outcome.problems.push_back(
              where +
              ": expected the part header's \"shard\" (\"i/n\"), \"runs_expected\" and "
              "\"interrupted\"");
          break;
        }
        shard = *parsed_shard.value;
        const std::uint64_t total = definition->run_count();
        const std::uint64_t first = shard.index - 1;
        owned = first < total ? (total - first + shard.count - 1) / shard.count : 0;
        if (j["runs_expected"].get<std::uint64_t>() != owned) {
          outcome.problems.push_back(fmt::format(
              "{}: shard {}/{} of this sweep owns {} runs, but the header says {}", where,
              shard.index, shard.count, owned, j["runs_expected"].get<std::uint64_t>()));
          break;
        }
        part_interrupted = j["interrupted"].get<bool>();
        if (j.contains("metrics")) {
          std::vector<std::string> metrics;
          const json& list = j["metrics"];
          bool valid = list.is_array();
          for (std::size_t i = 0; valid && i < list.size(); ++i) {
            valid = list[i].is_string() && find_point_metric(list[i].get<std::string>()) != nullptr;
            if (valid) metrics.push_back(list[i].get<std::string>());
          }
          if (!valid) {
            outcome.problems.push_back(where + ": expected \"metrics\" to list sweep metrics");
            break;
          }
          if (plot_metrics.empty()) plot_metrics = std::move(metrics);
        }
        if (part_interrupted) interrupted.push_back(part.name);
        continue;
      }
      std::string error;
      auto record = RunRecord::from_json(j, error);
      if (!record) {
        outcome.problems.push_back(where + ": " + error);
        break;
      }
      if (record->run >= definition->run_count() ||
          record->seed != definition->seeds.first + record->run % definition->seeds.count()) {
        outcome.problems.push_back(fmt::format("{}: run {} with seed {} is not a run of this sweep",
                                               where, record->run, record->seed));
        break;
      }
      if (record->run % shard.count != shard.index - 1) {
        outcome.problems.push_back(fmt::format("{}: run {} does not belong to shard {}/{}", where,
                                               record->run, shard.index, shard.count));
        break;
      }
      ++in_part;
      const auto [it, inserted] = owner.emplace(record->run, part.name);
      if (!inserted) {
        outcome.problems.push_back(fmt::format("{}: run {} (seed {}) is also in {}", where,
                                               record->run, record->seed, it->second));
        break;
      }
      const std::uint64_t run = record->run;
      records.emplace(run, std::move(*record));
    }
    if (!header_seen && outcome.problems.empty()) {
      outcome.problems.push_back(part.name + ": expected a sweep part, found an empty file");
    }
    if (header_seen && outcome.problems.empty() &&
        (in_part > owned || (!part_interrupted && in_part != owned))) {
      outcome.problems.push_back(
          fmt::format("{}: holds {} runs, but shard {}/{} {} {}", part.name, in_part, shard.index,
                      shard.count, part_interrupted ? "owns only" : "finished and owns", owned));
    }
  }
  if (!outcome.problems.empty()) return outcome;
  const std::uint64_t total = definition->run_count();
  if (records.size() != total) {
    std::string first_missing;
    for (std::uint64_t run = 0; run < total; ++run) {
      if (records.count(run) == 0) {
        first_missing = fmt::format("run {} (seed {})", run,
                                    definition->seeds.first + run % definition->seeds.count());
        break;
      }
    }
    std::string message = fmt::format("the parts hold {} of the sweep's {} runs; missing {} first",
                                      records.size(), total, first_missing);
    if (!interrupted.empty()) {
      message += "; interrupted parts: ";
      for (std::size_t i = 0; i < interrupted.size(); ++i) {
        message += (i == 0 ? "" : ", ") + interrupted[i];
      }
    } else {
      message += "; is a shard's part missing?";
    }
    outcome.problems.push_back(message);
    return outcome;
  }
  SweepResult result;
  result.definition = std::move(*definition);
  result.runs_expected = total;
  result.plot_metrics = std::move(plot_metrics);
  result.records.reserve(records.size());
  for (auto& [run, record] : records) result.records.push_back(std::move(record));
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace electsim::runner
