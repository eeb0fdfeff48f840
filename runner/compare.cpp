// Side-by-side runs of one scenario under several protocols. Every protocol sees the same seed,
// so the same network draws and fault schedule; role targets resolve against each protocol's own
// beliefs when the fault fires.
#include "runner/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "analysis/expect.hpp"
#include "analysis/summary.hpp"
#include "protocols/registry.hpp"

namespace electsim::runner {
namespace {

using analysis::Report;

// A row of the table: a label and, per run, a cell (empty when the metric was not observed).
struct Row {
  std::string label;
  std::string key;  // CSV and JSON name
  std::function<std::optional<double>(const RunResult&)> value;
  enum class Unit { duration, count, fraction, rate } unit;
};

std::optional<double> metric(const RunResult& r, const char* name) {
  return analysis::metric_value(r.report, name);
}

std::string cell(const Row& row, const std::optional<double>& v) {
  if (!v) return "-";
  switch (row.unit) {
    case Row::Unit::duration:
      return sim::format_seconds(sim::Duration(std::llround(*v)));
    case Row::Unit::count:
      return fmt::format("{}", std::llround(*v));
    case Row::Unit::fraction:
      return fmt::format("{:.2f}%", *v * 100);
    case Row::Unit::rate:
      return fmt::format("{:.2f}", *v);
  }
  return "?";
}

// Every message type sent by any protocol, by name, in name order.
std::set<std::string> message_types(const CompareResult& c) {
  std::set<std::string> names;
  for (const RunResult& r : c.runs) {
    for (const auto& [name, count] : r.report.messages_by_type) names.insert(name);
  }
  return names;
}

std::vector<Row> rows(const CompareResult& c) {
  using U = Row::Unit;
  std::vector<Row> out = {
      {"first leader at", "first_leader_at_ns",
       [](auto& r) { return metric(r, "first_leader_at"); }, U::duration},
      {"elections", "elections", [](auto& r) { return metric(r, "elections"); }, U::count},
      {"failover median", "failover_median_ns",
       [](auto& r) { return metric(r, "failover_median"); }, U::duration},
      {"failover max", "failover_max_ns", [](auto& r) { return metric(r, "failover_max"); },
       U::duration},
      {"failovers unresolved", "failovers_unresolved",
       [](auto& r) { return metric(r, "failovers_unresolved"); }, U::count},
      {"coordinator failovers", "coordinator_failovers",
       [](auto& r) { return metric(r, "coordinator_failovers"); }, U::count},
      {"write outage max", "write_outage_max_ns",
       [](auto& r) { return metric(r, "write_outage_max"); }, U::duration},
      {"service outages", "outages", [](auto& r) { return metric(r, "outages"); }, U::count},
      {"service outage max", "outage_max_ns", [](auto& r) { return metric(r, "outage_max"); },
       U::duration},
      {"never wrote again", "outages_unresolved",
       [](auto& r) { return metric(r, "outages_unresolved"); }, U::count},
      {"writable", "writable_fraction", [](auto& r) { return metric(r, "writable_fraction"); },
       U::fraction},
      {"leaderless", "leaderless_fraction",
       [](auto& r) { return metric(r, "leaderless_fraction"); }, U::fraction},
      {"leaderless time", "leaderless_time_ns",
       [](auto& r) { return metric(r, "leaderless_time"); }, U::duration},
      {"stall (coordinator could not grant)", "stall_time_ns",
       [](auto& r) { return metric(r, "stall_time"); }, U::duration},
      {"split-brain time", "split_brain_time_ns",
       [](auto& r) { return metric(r, "split_brain_time"); }, U::duration},
      {"same-epoch leaders", "same_epoch_leaders",
       [](auto& r) { return metric(r, "same_epoch_leaders"); }, U::count},
      {"stale writes accepted", "stale_writes_accepted",
       [](auto& r) { return metric(r, "stale_writes_accepted"); }, U::count},
      {"stale writes rejected", "stale_writes_rejected",
       [](auto& r) { return metric(r, "stale_writes_rejected"); }, U::count},
      {"overwrites", "stale_writes_overwriting",
       [](auto& r) { return metric(r, "stale_writes_overwriting"); }, U::count},
      {"equal-token writes", "equal_token_writes",
       [](auto& r) { return metric(r, "equal_token_writes"); }, U::count},
      {"election messages per election", "election_messages_per_election",
       [](auto& r) { return metric(r, "election_messages_per_election"); }, U::rate},
      {"all messages per election", "messages_per_election",
       [](auto& r) { return metric(r, "messages_per_election"); }, U::rate},
  };
  for (const std::string& name : message_types(c)) {
    out.push_back({"  " + name + " per election", "messages_per_election_" + name,
                   [name](const RunResult& r) -> std::optional<double> {
                     if (r.report.elections == 0) return std::nullopt;
                     const auto it = r.report.messages_by_type.find(name);
                     const double n = it == r.report.messages_by_type.end()
                                          ? 0.0
                                          : static_cast<double>(it->second);
                     return n / static_cast<double>(r.report.elections);
                   },
                   U::rate});
  }
  out.push_back({"store requests per second", "store_requests_per_second",
                 [](auto& r) { return metric(r, "store_requests_per_second"); }, U::rate});
  out.push_back({"coordinator requests per second", "coordinator_requests_per_second",
                 [](auto& r) { return metric(r, "coordinator_requests_per_second"); }, U::rate});
  out.push_back({"coordinator requests/s, steady", "coordinator_requests_steady_per_second",
                 [](auto& r) { return metric(r, "coordinator_requests_steady_per_second"); },
                 U::rate});
  out.push_back({"coordinator requests, peak second of a failover", "failover_requests_peak",
                 [](auto& r) { return metric(r, "failover_requests_peak"); }, U::count});
  return out;
}

std::string verdict_cell(const RunResult& r) {
  if (!r.errors.empty()) return "ERROR";
  if (!r.verdict.judged) {
    // No bounds of its own; harm that fails any run (an overwrite) still says so.
    return r.verdict.ok() ? "no bounds" : fmt::format("FAIL ({})", r.verdict.breaches.size());
  }
  return r.verdict.ok() ? "PASS" : fmt::format("FAIL ({})", r.verdict.breaches.size());
}

}  // namespace

CompareOutcome compare_protocols(const std::string& source_text, const std::string& source_name,
                                 const LoadOptions& options,
                                 const std::vector<std::string>& protocols,
                                 const RunOptions& run_options) {
  CompareOutcome outcome;
  std::vector<Scenario> scenarios;
  // A problem of the file shows up under every protocol: say it once, naming the protocols only
  // when it concerns some of them.
  std::vector<std::pair<std::string, std::vector<std::string>>> problems;
  for (const std::string& protocol : protocols) {
    LoadOptions o = options;
    o.protocol = protocol;
    LoadResult loaded = load_scenario_text(source_text, source_name, o);
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) {
        auto it = std::find_if(problems.begin(), problems.end(),
                               [&](const auto& p) { return p.first == m; });
        if (it == problems.end()) {
          problems.push_back({m, {protocol}});
        } else {
          it->second.push_back(protocol);
        }
      }
      continue;
    }
    Scenario& s = *loaded.scenario;
    // The file's bounds were written for its own protocol: another one is judged by its own
    // bounds (expect_by_protocol) or not at all.
    const nlohmann::json& doc = s.document;
    const bool own = doc.contains("protocol") && doc["protocol"].is_object() &&
                     doc["protocol"].value("name", std::string()) == s.protocol;
    if (!own) {
      s.expect = s.protocol_expect;
      s.judged = !s.protocol_expect.empty();
    }
    scenarios.push_back(std::move(s));
  }
  for (const auto& [message, names] : problems) {
    if (names.size() == protocols.size()) {
      outcome.problems.push_back(message);
    } else {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      outcome.problems.push_back(message + " (protocol " + list + ")");
    }
  }
  if (run_options.timeline && !scenarios.empty()) {
    if (auto refused = drawing_refused(scenarios.front(), "--svg")) {
      outcome.problems.push_back(source_name + ": " + *refused);
    }
  }
  if (!outcome.problems.empty()) return outcome;
  CompareResult result;
  result.protocols = protocols;
  for (const Scenario& s : scenarios) result.runs.push_back(run_scenario(s, run_options));
  outcome.result = std::move(result);
  return outcome;
}

std::string format_compare_table(const CompareResult& c) {
  std::string out;
  auto it = std::back_inserter(out);
  if (c.runs.empty()) return out;
  const analysis::RunInfo& info = c.runs.front().info;
  fmt::format_to(it, "seed {}\nscenario {}{}, {} protocols, same seed and fault schedule\n\n",
                 info.seed, info.scenario,
                 info.variant.empty() ? "" : " (variant " + info.variant + ")", c.runs.size());
  const std::vector<Row> table = rows(c);
  std::size_t label_width = 10;
  for (const Row& r : table) label_width = std::max(label_width, r.label.size());
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    std::size_t w = std::max<std::size_t>(c.protocols[i].size(), 8);
    for (const Row& r : table) w = std::max(w, cell(r, r.value(c.runs[i])).size());
    w = std::max(w, verdict_cell(c.runs[i]).size());
    widths.push_back(w);
  }
  fmt::format_to(it, "{:<{}}", "", label_width);
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    fmt::format_to(it, "  {:>{}}", c.protocols[i], widths[i]);
  }
  out += '\n';
  for (const Row& r : table) {
    fmt::format_to(it, "{:<{}}", r.label, label_width);
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      fmt::format_to(it, "  {:>{}}", cell(r, r.value(c.runs[i])), widths[i]);
    }
    out += '\n';
  }
  fmt::format_to(it, "{:<{}}", "verdict", label_width);
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    fmt::format_to(it, "  {:>{}}", verdict_cell(c.runs[i]), widths[i]);
  }
  out += "\n";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    for (const auto& b : c.runs[i].verdict.breaches) {
      fmt::format_to(it, "  {}: {}\n", c.protocols[i], b.message);
    }
    for (const auto& e : c.runs[i].errors) fmt::format_to(it, "  {}: {}\n", c.protocols[i], e);
  }
  out += "trace hashes:";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    fmt::format_to(it, " {} {}", c.protocols[i], c.runs[i].trace_hash);
  }
  out += "\n";
  return out;
}

std::string compare_csv(const CompareResult& c) {
  const std::vector<Row> table = rows(c);
  std::string out = "protocol,seed,verdict";
  for (const Row& r : table) out += "," + r.key;
  out += ",trace_hash\n";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const RunResult& run = c.runs[i];
    const char* verdict = !run.errors.empty()  ? "error"
                          : !run.verdict.ok()  ? "fail"
                          : run.verdict.judged ? "pass"
                                               : "unjudged";
    out += fmt::format("{},{},{}", c.protocols[i], run.info.seed, verdict);
    for (const Row& r : table) {
      const std::optional<double> v = r.value(run);
      if (!v) {
        out += ",";
      } else if (r.unit == Row::Unit::duration || r.unit == Row::Unit::count) {
        out += fmt::format(",{}", std::llround(*v));
      } else {
        out += fmt::format(",{:.6g}", *v);
      }
    }
    out += "," + run.trace_hash + "\n";
  }
  return out;
}

nlohmann::json compare_json(const CompareResult& c) {
  nlohmann::json j = nlohmann::json::object();
  if (!c.runs.empty()) {
    j["scenario"] = c.runs.front().info.scenario;
    j["variant"] = c.runs.front().info.variant;
    j["seed"] = c.runs.front().info.seed;
  }
  nlohmann::json runs = nlohmann::json::object();
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    runs[c.protocols[i]] =
        analysis::summary_json(c.runs[i].info, c.runs[i].report, c.runs[i].verdict);
  }
  j["protocols"] = std::move(runs);
  nlohmann::json table = nlohmann::json::object();
  for (const Row& r : rows(c)) {
    nlohmann::json row = nlohmann::json::object();
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      const std::optional<double> v = r.value(c.runs[i]);
      row[c.protocols[i]] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    }
    table[r.key] = std::move(row);
  }
  j["table"] = std::move(table);
  return j;
}

}  // namespace electsim::runner
