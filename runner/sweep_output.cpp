// Sweep outputs (runner/sweep.hpp): the points and runs CSV, the JSON, and the table printed.
#include "runner/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/stats.hpp"

namespace electsim::runner {

namespace {

using json = nlohmann::json;

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

}  // namespace

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
  for (const char* h :
       {"runs", "failovers", "failover p50", "p99", "max", "unresolved", "ridden out", "outages",
        "outage p50", "p99", "max", "writable", "split-brain", "stale write", "overwrite", "msgs/s",
        "coord req/s", "changes/svc/h"}) {
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
    row.push_back(rate(s.leader_changes_per_service_hour));
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
      "masters; changes/svc/h: thrash, leader changes (elections after each service's first) "
      "per service per simulated hour\n";
  if (any_unstable) {
    out += fmt::format(
        "* a p99 from fewer than {} samples (failovers or outages) is the largest one or next to "
        "it, not a stable estimate: run more seeds\n",
        kStableP99Samples);
  }
  return out;
}

}  // namespace electsim::runner
