// electsim search's report (runner/search.hpp): the text a search prints, and the names of the
// files it saves.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "runner/search.hpp"
#include "runner/search_detail.hpp"

namespace electsim::runner {

using search_detail::store_kind;
using sim::FaultKind;

std::string found_file_name(const std::string& scenario, const std::string& protocol,
                            Property property) {
  std::string name = fmt::format("{}-{}-{}", scenario, protocol, property_name(property));
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  if (!name.empty() && name.front() == '.') name.front() = '_';
  if (name.size() > 200) name.resize(200);  // within any file system's name limit
  return name + ".json";
}

std::string format_search_report(const SearchResult& r, const SearchConfig& config) {
  std::string out;
  auto it = std::back_inserter(out);
  const std::string stopped = !r.stopped      ? std::string()
                              : r.interrupted ? fmt::format(" of {} (interrupted)", r.runs_planned)
                                              : std::string(" (the time budget ran out)");
  fmt::format_to(it, "search {} ({}): {} runs{}, seeds {} to {}\n", r.scenario_name, r.protocol,
                 r.runs_done, stopped, config.first_seed,
                 config.first_seed + (r.runs_done == 0 ? 0 : r.runs_done - 1));
  const sim::Duration heal = r.heal_bound.count() > 0 ? r.heal_bound : config.heal_bound;
  fmt::format_to(it, "safety phase {}, then every fault heals; liveness bound {}{}\n",
                 sim::format_duration(config.safety), sim::format_duration(heal),
                 config.heal_bound_given
                     ? ""
                     : " (none given: the protocol's own worst-case recovery, at least 20s)");
  for (const std::string& w : r.warnings) fmt::format_to(it, "warning: {}\n", w);
  out += "\n";
  // Safety properties a silent leader must outlast the protocol's hold to threaten.
  auto threatened_only_by_silence = [](Property p) {
    return p == Property::stale_write || p == Property::overwrite || p == Property::same_epoch ||
           p == Property::stale_action;
  };
  const bool untested_safety = r.silent_hold && r.longest_threat <= *r.silent_hold;
  out += "properties\n";
  for (int p = 0; p < kPropertyCount; ++p) {
    const auto prop = static_cast<Property>(p);
    if (!config.wants(prop)) continue;
    const std::uint64_t n = r.violations[static_cast<std::size_t>(p)];
    std::string first;
    for (const Finding& f : r.first) {
      if (f.property == prop) first = fmt::format("; first: seed {} ({} faults)", f.seed, f.faults);
    }
    std::string verdict = fmt::format("broken in {} of {} runs", n, r.runs_done);
    if (n == 0 && untested_safety && threatened_only_by_silence(prop)) {
      verdict = fmt::format(
          "untested: no fault silenced a leader longer than {} ({}); the longest was {}",
          sim::format_duration(*r.silent_hold), r.silent_hold_what,
          sim::format_duration(r.longest_threat));
    } else if (n == 0 && prop == Property::no_recovery && r.runs_healed == 0) {
      verdict = "untested: no run had a fault to heal";
    } else if (n == 0) {
      verdict = "held in every run";
    }
    fmt::format_to(it, "  {:<13} {}{}\n", property_name(prop), verdict, first);
  }
  if (r.runs_incomplete > 0) {
    fmt::format_to(it,
                   "\n{} of {} runs hit the limit on events (limits.events): their recovery, "
                   "failover and expect block were not judged, only what they saw of safety\n",
                   r.runs_incomplete, r.runs_done);
  }
  if (r.longest_outage.count() > 0) {
    fmt::format_to(it,
                   "\nservice: the longest outage {} (seed {}); {} of {} runs never wrote again\n",
                   sim::format_seconds(r.longest_outage), r.longest_outage_seed,
                   r.runs_never_wrote_again, r.runs_done);
  }
  if (!r.shrunk.empty()) {
    out += "\nshrunk\n";
    for (const Shrunk& s : r.shrunk) {
      fmt::format_to(it, "  {:<13} seed {}: {} faults -> {} in {} runs{}{}\n",
                     property_name(s.property), s.seed, s.faults_before, s.faults_after, s.runs,
                     s.budget_exhausted ? " (budget spent)" : "",
                     s.reproduced ? ""
                                  : "; its file does not break its expect block when run, so "
                                    "it is not saved");
    }
  }
  out += "\ncoverage (what \"no violation\" covers)\n";
  if (!r.kinds_inapplicable.empty()) {
    fmt::format_to(
        it, "  fault kinds that cannot apply to this world (the protocol uses no store): {}\n",
        fmt::join(r.kinds_inapplicable, ", "));
  }
  std::vector<std::string> kinds_missing;
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    if (config.weights[static_cast<std::size_t>(k)] == 0) continue;
    if (store_kind(static_cast<FaultKind>(k)) && !r.uses_store) continue;
    if (((r.coverage.fault_kinds >> k) & 1u) == 0) {
      kinds_missing.push_back(sim::fault_kind_name(static_cast<FaultKind>(k)));
    }
  }
  fmt::format_to(it, "  fault kinds never drawn: {}\n",
                 kinds_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(kinds_missing, ", ")));
  std::vector<std::string> roles_missing;
  for (int role = 0; role < 3; ++role) {
    if (((r.coverage.roles >> role) & 1u) == 0) {
      roles_missing.push_back(sim::role_name(static_cast<sim::Role>(role)));
    }
  }
  fmt::format_to(it, "  roles never announced: {}\n",
                 roles_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(roles_missing, ", ")));
  std::vector<std::string> types_missing;
  for (std::size_t t = 0; t < r.message_type_names.size() && t < 64; ++t) {
    if (r.message_type_names[t].empty()) continue;
    if (((r.coverage.message_types >> t) & 1u) == 0)
      types_missing.push_back(r.message_type_names[t]);
  }
  fmt::format_to(it, "  message types never sent: {}\n",
                 types_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(types_missing, ", ")));
  if (r.uses_store && r.coverage.store_ops != 0) {
    std::vector<std::string> ops_missing;
    for (int op = 0; op < sim::kStoreOpCount; ++op) {
      if (((r.coverage.store_ops >> op) & 1u) == 0) {
        ops_missing.push_back(sim::store_op_name(static_cast<sim::StoreOp>(op)));
      }
    }
    fmt::format_to(it, "  store requests never sent: {}\n",
                   ops_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(ops_missing, ", ")));
  }
  return out;
}
}  // namespace electsim::runner
