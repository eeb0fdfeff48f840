// The human and the machine summary of a run. The text reads top to bottom the way a run is
// debugged: the seed to replay it, who led when, what went wrong (safety), how fast it recovered
// (liveness), what it cost, the verdict, and the trace hash last (TigerBeetle VOPR's order).
#include "analysis/summary.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <vector>

#include "sim/fault.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::analysis {

namespace {

constexpr std::size_t kIntervalsShown = 50;
constexpr std::size_t kFailoversShown = 50;

std::string secs(Time t) {
  return sim::format_seconds(t.since_start());
}
std::string secs(Duration d) {
  return sim::format_seconds(d);
}

std::string percent(double fraction) {
  return fmt::format("{:.2f}%", fraction * 100.0);
}

std::string describe_fault(const Failover& f) {
  return fmt::format("{} of node {} (epoch {}) at {}", sim::fault_kind_name(f.fault), f.old_leader,
                     f.old_epoch, secs(f.fault_at));
}

std::string join_and(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == items.size() ? " and " : ", ");
    out += items[i];
  }
  return out;
}

constexpr std::size_t kOutagesShown = 50;

// What the service lived through: its outages, whatever caused them.
void service_section(std::string& out, const Report& r) {
  auto it = std::back_inserter(out);
  out += "\nservice\n";
  if (!r.outages_measured) {
    out += "  outages not measured: the leaders do not write (the workload is off)\n";
    return;
  }
  if (!r.first_write_at) {
    out += "  no write was ever accepted from a leader: the service never wrote\n";
    return;
  }
  fmt::format_to(it, "  writes accepted from the newest leader: first at {}, last at {}\n",
                 secs(*r.first_write_at), secs(*r.last_write_at));
  if (r.outages_total == 0) {
    out += "  outages: none (no gap of more than two write intervals)\n";
  } else {
    fmt::format_to(it, "  outages: {}, {} in all, the longest {}; writable {} of the time\n",
                   r.outages_total, secs(r.outage_time), secs(*r.outage_max),
                   percent(r.writable_fraction.value_or(0)));
  }
  const std::size_t shown = std::min(r.outages.size(), kOutagesShown);
  for (std::size_t i = 0; i < shown; ++i) {
    const Outage& o = r.outages[i];
    std::string who;
    if (!o.end) {
      who = fmt::format("node {}, never wrote again", o.writer_before);
    } else if (o.writer_after == o.writer_before) {
      who = fmt::format("node {} again", o.writer_after);
    } else {
      who = fmt::format("node {} -> node {}", o.writer_before, o.writer_after);
    }
    fmt::format_to(it, "  {:>10} - {:<10} {:>9}  {}; {}\n", secs(o.start),
                   o.end ? secs(*o.end) : "end", secs(o.duration), who, outage_causes_text(o));
  }
  if (r.outages_total > shown) {
    fmt::format_to(it, "  ... and {} more outages\n", r.outages_total - shown);
  }
}

std::string spread_text(const Spread& s, bool duration) {
  const auto one = [duration](std::int64_t v) {
    return duration ? secs(Duration(v)) : std::to_string(v);
  };
  return fmt::format("p50 {}, p90 {}, p99 {}, max {}", one(s.p50), one(s.p90), one(s.p99),
                     one(s.max));
}

// A fleet: how its services fared, one by one; the sections after it sum over services.
void fleet_section(std::string& out, const Report& r) {
  if (!r.fleet) return;
  const FleetReport& f = *r.fleet;
  auto it = std::back_inserter(out);
  out += "\nfleet\n";
  if (f.by_class.empty()) {
    fmt::format_to(it,
                   "  {} services of {} nodes, each electing on its own key and writing its own "
                   "resource; the sections below sum over services\n",
                   f.services, f.replicas);
  } else {
    fmt::format_to(it,
                   "  {} services in {} classes, each electing on its own key and writing its "
                   "own resource; the sections below sum over services\n",
                   f.services, f.by_class.size());
  }
  const double hours = static_cast<double>(r.duration.count()) / 3.6e12;
  fmt::format_to(it, "  leader changes per service: {}", spread_text(f.leader_changes, false));
  if (hours > 0) {
    fmt::format_to(it, " ({:.1f} per hour at p99)",
                   static_cast<double>(f.leader_changes.p99) / hours);
  }
  out += '\n';
  // What each service lived through, whatever the cause, before what faults did to leaders.
  if (r.outages_measured) {
    fmt::format_to(it, "  outage per service: {}\n", spread_text(f.outage_time, true));
  }
  fmt::format_to(it, "  leaderless per service: {}\n", spread_text(f.leaderless_time, true));
  if (f.failover.samples > 0) {
    fmt::format_to(it, "  failover, over {} observed: {}\n", f.failover.samples,
                   spread_text(f.failover, true));
  }
  fmt::format_to(it,
                 "  services with split brain: {}, with stale writes accepted: {}, overwritten: "
                 "{}\n",
                 f.services_split_brain, f.services_stale_accepted, f.services_overwritten);
  fmt::format_to(it, "  services stalled (no leader while the store could not grant): {}{}\n",
                 f.services_stalled,
                 f.services_stalled > 0
                     ? fmt::format(", stall per service {}", spread_text(f.stall_time, true))
                     : std::string());
  if (f.services_never_led > 0) {
    fmt::format_to(it, "  services that never had a leader: {}\n", f.services_never_led);
  }
  // Each class as the lines above tell the whole fleet.
  const double seconds = static_cast<double>(r.duration.count()) * 1e-9;
  // A class's protocol is named where the classes run more than one.
  const bool mixed = std::any_of(f.by_class.begin(), f.by_class.end(), [&](const ClassFigures& c) {
    return c.protocol != f.by_class.front().protocol;
  });
  for (const ClassFigures& c : f.by_class) {
    fmt::format_to(it, "  class {}: {} services of {} nodes{}\n", c.name, c.services, c.replicas,
                   mixed ? fmt::format(", running {}", c.protocol) : std::string());
    fmt::format_to(it, "    leader changes per service: {}\n",
                   spread_text(c.leader_changes, false));
    if (r.outages_measured) {
      fmt::format_to(it, "    outage per service: {}\n", spread_text(c.outage_time, true));
    }
    fmt::format_to(it, "    leaderless per service: {}\n", spread_text(c.leaderless_time, true));
    fmt::format_to(it,
                   "    services with split brain: {}, with stale writes accepted: {}, "
                   "overwritten: {}, stalled: {}, never led: {}\n",
                   c.services_split_brain, c.services_stale_accepted, c.services_overwritten,
                   c.services_stalled, c.services_never_led);
    fmt::format_to(it, "    coordinator requests: {} ({:.1f}/s)\n", c.coordinator_requests,
                   seconds > 0 ? static_cast<double>(c.coordinator_requests) / seconds : 0.0);
  }
  if (f.aggregators > 0) {
    // The services ask their aggregators; the store serves what the aggregators ask it.
    const std::uint64_t asked = r.store_requests_total + r.server_requests_total;
    fmt::format_to(
        it,
        "  behind {} lease aggregator{}: the services asked them {} requests ({:.1f}/s), "
        "the store served {} ({:.1f}/s)\n",
        f.aggregators, f.aggregators == 1 ? "" : "s", asked,
        seconds > 0 ? static_cast<double>(asked) / seconds : 0.0, r.store.requests_served,
        seconds > 0 ? static_cast<double>(r.store.requests_served) / seconds : 0.0);
  }
  // Each shard of a sharded store: what it was asked and what its services lived through.
  for (const ShardFigures& shard : f.by_shard) {
    fmt::format_to(it,
                   "  shard {}: {} services, {} requests ({:.1f}/s), {} refused; unavailable {}, "
                   "{} services stalled, {} leader changes, leaderless {} in all\n",
                   shard.name, shard.services, shard.coordinator_requests,
                   shard.requests_per_second, shard.requests_refused, secs(shard.unavailable_time),
                   shard.services_stalled, shard.leader_changes, secs(shard.leaderless_time));
  }
  if (!f.most_changes.empty()) {
    out += "  most leader changes:";
    for (std::size_t i = 0; i < f.most_changes.size(); ++i) {
      fmt::format_to(it, "{} {} ({})", i == 0 ? "" : ",", f.most_changes[i].first,
                     f.most_changes[i].second);
    }
    out += '\n';
  }
}

void leaders_section(std::string& out, const Report& r) {
  auto it = std::back_inserter(out);
  out += "\nleaders\n";
  if (r.intervals.empty()) out += "  no node was ever leader\n";
  const std::size_t shown = std::min(r.intervals.size(), kIntervalsShown);
  for (std::size_t i = 0; i < shown; ++i) {
    const LeaderInterval& li = r.intervals[i];
    fmt::format_to(it, "  {:>10} - {:<10} node {:<3} epoch {:<6} ({}{})\n", secs(li.start),
                   li.open_at_end ? "end" : secs(li.end), li.node, li.epoch,
                   secs(li.end - li.start), li.open_at_end ? ", still leader" : "");
  }
  if (r.intervals.size() > shown) {
    fmt::format_to(it, "  ... and {} more intervals\n", r.intervals.size() - shown);
  }
  if (r.first_leader_at) {
    fmt::format_to(it, "  {} at {}; {} election{}\n",
                   r.fleet ? "every service had led" : "first leader", secs(*r.first_leader_at),
                   r.elections, r.elections == 1 ? "" : "s");
  }
}

void safety_section(std::string& out, const Report& r) {
  auto it = std::back_inserter(out);
  out += "\nsafety\n";
  if (r.split_brain_time.count() == 0) {
    out += "  split brain: none\n";
  } else {
    fmt::format_to(it, "  split brain: {} in {} episode{}", secs(r.split_brain_time),
                   r.split_brain_episodes, r.split_brain_episodes == 1 ? "" : "s");
    if (r.first_split_brain) {
      fmt::format_to(it, "; first at {}:", secs(r.first_split_brain->at));
      for (std::size_t i = 0; i < r.first_split_brain->nodes.size(); ++i) {
        fmt::format_to(it, "{} node {} (epoch {})", i == 0 ? "" : ",",
                       r.first_split_brain->nodes[i], r.first_split_brain->epochs[i]);
      }
    }
    out += '\n';
  }
  if (r.same_epoch_leaders_total == 0) {
    out += "  same-epoch leaders: none\n";
  } else {
    const SameEpochLeaders& s = r.same_epoch_leaders.front();
    fmt::format_to(it, "  same-epoch leaders: {}; first at {}: nodes {} and {} in epoch {}\n",
                   r.same_epoch_leaders_total, secs(s.at), s.first, s.second, s.epoch);
  }
  fmt::format_to(it, "  stale writes: {} accepted, {} rejected by fencing{}\n",
                 r.stale_writes_accepted, r.stale_writes_rejected,
                 r.tokens_ordered ? ""
                                  : " (judged by the order of grants: this protocol's tokens "
                                    "carry no order)");
  for (const bool accepted : {true, false}) {
    for (const StaleWrite& w : r.stale_writes) {
      if (w.accepted != accepted) continue;
      fmt::format_to(it, "    first {} at {}: node {} wrote token {} after epoch {}{}\n",
                     accepted ? "accepted" : "rejected", secs(w.at), w.writer, w.token,
                     w.newest_epoch, accepted ? " (a deposed leader's write was accepted)" : "");
      break;
    }
  }
  if (r.stale_writes_overwriting == 0) {
    out += "  overwrites: none\n";
  } else {
    fmt::format_to(it,
                   "  overwrites: {} (corruption: an old token's write accepted over newer data)",
                   r.stale_writes_overwriting);
    if (r.first_overwrite) {
      const Report::Overwrite& w = *r.first_overwrite;
      fmt::format_to(it, "; first at {}: node {} wrote token {} after the sink had accepted {}",
                     secs(w.at), w.writer, w.token, w.over);
    }
    out += '\n';
  }
  if (r.equal_token_writes == 0) {
    out += "  equal-token writes: none\n";
  } else {
    fmt::format_to(it,
                   "  equal-token writes: {} (two leaders' writes under one token, both "
                   "accepted: fencing cannot separate them)",
                   r.equal_token_writes);
    if (r.first_equal_token_write) {
      const Report::EqualTokenWrite& w = *r.first_equal_token_write;
      fmt::format_to(it, "; first at {}: node {} wrote token {} again after node {} had",
                     secs(w.at), w.writer, w.token, w.other);
    }
    out += '\n';
  }
  fmt::format_to(it, "  writes at the sink: {} accepted, {} rejected\n", r.writes_accepted,
                 r.writes_rejected);
}

void liveness_section(std::string& out, const Report& r) {
  auto it = std::back_inserter(out);
  out += "\nliveness\n";
  if (r.failovers.empty() && r.coordinator_failovers.empty()) {
    out += "  no fault took the leader away\n";
  } else if (r.failovers.empty()) {
    out += "  no fault on a node took the leader away\n";
  }
  const std::size_t shown = std::min(r.failovers.size(), kFailoversShown);
  std::size_t observed = 0;
  std::size_t ridden_out = 0;
  std::size_t regained = 0;
  for (const Failover& f : r.failovers) {
    observed += f.failover ? 1 : 0;
    ridden_out += f.ridden_out ? 1 : 0;
    regained += f.regained_at ? 1 : 0;
  }
  for (std::size_t i = 0; i < shown; ++i) {
    const Failover& f = r.failovers[i];
    fmt::format_to(it, "  {}: ", describe_fault(f));
    if (f.failover) {
      fmt::format_to(it, "node {} leads at {}, failover {}", f.new_leader, secs(*f.new_leader_at),
                     secs(*f.failover));
      if (f.failover_heard) {
        fmt::format_to(it, " (heard by all at {}: {})", secs(*f.heard_at), secs(*f.failover_heard));
      }
    } else if (f.ridden_out) {
      fmt::format_to(it, "node {} rode it out and kept leading (no failover)", f.old_leader);
    } else if (f.regained_at) {
      fmt::format_to(it,
                     "node {} lost leadership and won it back at {} (epoch {}), no other leader",
                     f.old_leader, secs(*f.regained_at), *f.regained_epoch);
    } else {
      out += "no other leader by the run's end";
    }
    if (f.write_outage && f.write_outage->count() == 0) {
      out += "; no write outage (writes kept being accepted)";
    } else if (f.write_outage) {
      fmt::format_to(it, "; write outage {} ({} to {})", secs(*f.write_outage),
                     secs(*f.last_old_write), secs(*f.first_new_write));
    }
    out += '\n';
  }
  if (r.failovers.size() > shown) {
    fmt::format_to(it, "  ... and {} more failovers\n", r.failovers.size() - shown);
  }
  if (!r.failovers.empty()) {
    fmt::format_to(it, "  failovers: {} observed, {} ridden out, {} regained, {} unresolved\n",
                   observed, ridden_out, regained,
                   r.failovers.size() - observed - ridden_out - regained);
  }
  const std::size_t coordinator_shown = std::min(r.coordinator_failovers.size(), kFailoversShown);
  for (std::size_t i = 0; i < coordinator_shown; ++i) {
    const Failover& f = r.coordinator_failovers[i];
    fmt::format_to(it, "  {} of {} at {}: node {} -> node {}", sim::fault_kind_name(f.fault),
                   f.coordinator_target == sim::kNoNode ? std::string("the coordinator")
                                                        : f.coordinator_target_name,
                   secs(f.fault_at), f.old_leader, f.new_leader);
    if (f.new_leader_at) {
      fmt::format_to(it, ", leading at {} (failover {})", secs(*f.new_leader_at),
                     secs(*f.failover));
    }
    if (f.write_outage) {
      fmt::format_to(it, "; write outage {} ({} to {})", secs(*f.write_outage),
                     secs(*f.last_old_write), secs(*f.first_new_write));
    }
    out += '\n';
  }
  if (r.coordinator_failovers.size() > coordinator_shown) {
    fmt::format_to(it, "  ... and {} more coordinator failovers\n",
                   r.coordinator_failovers.size() - coordinator_shown);
  }
  if (!r.coordinator_failovers.empty()) {
    fmt::format_to(it,
                   "  coordinator failovers: {} (a leader change caused by a coordinator fault)\n",
                   r.coordinator_failovers.size());
  }
  fmt::format_to(it, "  leaderless: {} ({} of the run)\n", secs(r.leaderless_time),
                 percent(r.leaderless_fraction));
  if (r.stall_time.count() > 0 || r.store.members > 1) {
    fmt::format_to(it, "  stall: {} with no leader while the {} could not grant\n",
                   secs(r.stall_time), r.store.database ? "database" : "store");
  }
}

// The herd after each of the coordinator's recoveries, the first few in order.
void recoveries_text(std::string& out, const CoordinatorReport& s) {
  constexpr std::size_t kShown = 5;
  auto it = std::back_inserter(out);
  for (std::size_t i = 0; i < s.recoveries.size() && i < kShown; ++i) {
    const CoordinatorRecovery& c = s.recoveries[i];
    fmt::format_to(it,
                   "  recovered at {} after {} unable to grant: {} requests in its first second, "
                   "{} in the busiest (to {})",
                   secs(c.at), secs(c.outage), c.first_second, c.peak, secs(c.peak_at));
    if (c.before_per_second) {
      fmt::format_to(it, ", against {:.1f}/s before the outage", *c.before_per_second);
      if (*c.before_per_second > 0) {
        fmt::format_to(it, " ({:.1f}x)", static_cast<double>(c.peak) / *c.before_per_second);
      }
    }
    if (c.refused > 0) fmt::format_to(it, "; {} refused for overload", c.refused);
    out += '\n';
  }
  if (s.recoveries.size() > kShown) {
    std::uint64_t peak = 0;
    for (const CoordinatorRecovery& c : s.recoveries) peak = std::max(peak, c.peak);
    fmt::format_to(it, "  {} more recoveries; the busiest second after any: {} requests\n",
                   s.recoveries.size() - kShown, peak);
  }
}

// A replicated store's own figures, or a single store's outage.
void store_section(std::string& out, const Report& r) {
  const CoordinatorReport& s = r.store;
  if (s.members <= 1 && s.shards <= 1 && s.unavailable_time.count() == 0 &&
      s.requests_refused == 0) {
    return;
  }
  auto it = std::back_inserter(out);
  out += s.database ? "\ndatabase\n" : "\nstore\n";
  if (s.shards > 1) {
    fmt::format_to(it,
                   "  {} shards, independent stores each serving the services its hash gives it; "
                   "summed over shards below (unavailable time in shard-seconds), each shard in "
                   "the fleet section\n",
                   s.shards);
  }
  if (s.members > 1) {
    fmt::format_to(it, "  {} members; available {} of the run ({} without a running leader)\n",
                   s.members, percent(s.availability), secs(s.unavailable_time));
    if (!s.outages.empty()) {
      const Duration longest = *std::max_element(s.outages.begin(), s.outages.end());
      fmt::format_to(it, "  outages after it had led: {}, the longest {}\n", s.outages.size(),
                     secs(longest));
    }
    fmt::format_to(it, "  leader elections: {} ({} changes); {} entries committed",
                   s.leader_elections, s.leader_changes, s.commits);
    if (s.commit_latency_p50) {
      fmt::format_to(it, ", commit latency p50 {} p99 {}", secs(*s.commit_latency_p50),
                     secs(*s.commit_latency_p99));
    }
    out += '\n';
    fmt::format_to(it,
                   "  clients: {} requests failed, {} retried on another member, {} moves to "
                   "another member\n",
                   s.requests_failed, s.requests_retried, s.client_failovers);
    fmt::format_to(it, "  leases refreshed by new leaders: {}\n", s.lease_refreshes);
    if (s.same_term_leaders + s.commit_conflicts + s.linearizability_violations == 0) {
      out +=
          "  store safety: one leader per term, no conflicting commits, replies in real-time "
          "order\n";
    } else {
      fmt::format_to(it,
                     "  store safety: BROKEN, {} same-term leaders, {} conflicting commits, {} "
                     "replies out of real-time order\n",
                     s.same_term_leaders, s.commit_conflicts, s.linearizability_violations);
    }
  } else if (s.unavailable_time.count() > 0) {
    fmt::format_to(it, "  unavailable (paused or down): {} ({} available)\n",
                   secs(s.unavailable_time), percent(s.availability));
  }
  if (s.requests_refused > 0) {
    fmt::format_to(it, "  refused for overload (too many requests, store.capacity): {}\n",
                   s.requests_refused);
  }
  recoveries_text(out, s);
}

void cost_section(std::string& out, const Report& r) {
  auto it = std::back_inserter(out);
  out += "\ncost\n";
  fmt::format_to(it, "  messages: {} sent, {} delivered, {} dropped", r.messages_sent,
                 r.messages_delivered, r.messages_dropped);
  if (r.elections > 0) {
    fmt::format_to(it, "; {:.1f} per election, heartbeats included",
                   static_cast<double>(r.messages_sent) / static_cast<double>(r.elections));
    if (r.election_messages_sent > 0) {
      fmt::format_to(
          it, "; {} election messages, {:.1f} per election", r.election_messages_sent,
          static_cast<double>(r.election_messages_sent) / static_cast<double>(r.elections));
    }
  }
  out += '\n';
  for (const auto& [name, n] : r.messages_by_type) fmt::format_to(it, "    {:<24} {}\n", name, n);
  fmt::format_to(it, "  store requests: {} ({:.2f}/s)", r.store_requests_total,
                 r.store_requests_per_second);
  bool first = true;
  for (int op = 0; op < sim::kStoreOpCount; ++op) {
    const std::uint64_t n = r.store_requests[static_cast<std::size_t>(op)];
    if (n == 0) continue;
    fmt::format_to(it, "{} {} {}", first ? ":" : ",",
                   sim::store_op_name(static_cast<sim::StoreOp>(op)), n);
    first = false;
  }
  out += '\n';
  if (r.server_requests_total > 0) {
    fmt::format_to(it, "  database/Redis requests: {}\n", r.server_requests_total);
  }
  if (r.connections_broken > 0) {
    fmt::format_to(it,
                   "  connections given up: {} (every retransmission failed; what was in flight on "
                   "them was lost)\n",
                   r.connections_broken);
  }
  if (r.store_requests_total + r.server_requests_total > 0) {
    fmt::format_to(it, "  coordinator requests: {:.2f}/s with one leader",
                   r.steady_requests_per_second);
    if (r.failover_requests_peak > 0) {
      fmt::format_to(it, "; {} in the busiest second of a failover", r.failover_requests_peak);
    }
    out += '\n';
  }
  fmt::format_to(it, "  sink writes: {}\n", r.sink_writes);
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Puts `<name>_ns` and `<name>_s` (null, null when absent).
void put_duration(nlohmann::json& j, const std::string& name, std::optional<Duration> d) {
  if (d) {
    j[name + "_ns"] = d->count();
    // Divided, not multiplied by 1e-9: the nearest double to the exact decimal, which JSON then
    // prints as that decimal (1.979255346, never 1.9792553460000002).
    j[name + "_s"] = static_cast<double>(d->count()) / 1e9;
  } else {
    j[name + "_ns"] = nullptr;
    j[name + "_s"] = nullptr;
  }
}
void put_time(nlohmann::json& j, const std::string& name, std::optional<Time> t) {
  put_duration(j, name, t ? std::optional<Duration>(t->since_start()) : std::nullopt);
}

}  // namespace

std::string format_summary(const RunInfo& info, const Report& r, const Verdict& verdict) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "seed {}\n", info.seed);
  // A fleet of classes names the protocols its classes run, in the classes' order.
  std::vector<std::string> protocols;
  if (r.fleet) {
    for (const ClassFigures& c : r.fleet->by_class) {
      if (std::find(protocols.begin(), protocols.end(), c.protocol) == protocols.end()) {
        protocols.push_back(c.protocol);
      }
    }
  }
  if (protocols.empty()) protocols.push_back(info.protocol);
  fmt::format_to(it, "scenario {}{}, protocol{} {}, {} nodes\n", info.scenario,
                 info.variant.empty() ? "" : " (variant " + info.variant + ")",
                 protocols.size() > 1 ? "s" : "", fmt::join(protocols, ", "), r.node_count);
  fmt::format_to(it, "simulated {}, {} events in the trace{}\n",
                 sim::format_duration(info.duration), info.events_processed,
                 info.kernel_steps == 0 ? std::string()
                                        : fmt::format(" ({} kernel steps)", info.kernel_steps));
  fleet_section(out, r);
  leaders_section(out, r);
  safety_section(out, r);
  liveness_section(out, r);
  service_section(out, r);
  store_section(out, r);
  cost_section(out, r);
  out += '\n';
  // PASS judges the expect block only; harm it does not bound is still named here, so that a
  // damaged run never reads as simply fine.
  std::vector<std::string> notes = harm_in(r);
  for (std::string& concern : liveness_concerns(r)) notes.push_back(std::move(concern));
  if (!verdict.judged) {
    out += "verdict: not judged, no expect block (give the scenario to judge its bounds); ";
    out += notes.empty() ? "no harm found" : "the run has " + join_and(notes);
    out += "\n";
    for (const Breach& b : verdict.breaches) fmt::format_to(it, "  {}\n", b.message);
  } else if (verdict.ok()) {
    out += "verdict: PASS";
    if (!notes.empty()) {
      out += " (every bound of the expect block holds; the run still has " + join_and(notes) + ")";
    }
    out += "\n";
  } else {
    fmt::format_to(it, "verdict: FAIL, {} expectation{} broke{}\n", verdict.breaches.size(),
                   verdict.breaches.size() == 1 ? "" : "s",
                   notes.empty() ? "" : "; the run has " + join_and(notes));
    for (const Breach& b : verdict.breaches) {
      fmt::format_to(it, "  {}{}\n", b.message,
                     b.expectation.pointer.empty() ? "" : " [" + b.expectation.pointer + "]");
    }
  }
  fmt::format_to(it, "trace hash {}\n", info.trace_hash);
  return out;
}

nlohmann::json summary_json(const RunInfo& info, const Report& r, const Verdict& verdict) {
  using nlohmann::json;
  json j = json::object();
  j["seed"] = info.seed;
  j["scenario"] = info.scenario;
  j["variant"] = info.variant;
  j["protocol"] = info.protocol;
  j["nodes"] = r.node_count;
  j["events_processed"] = info.events_processed;
  if (info.kernel_steps != 0) j["kernel_steps"] = info.kernel_steps;
  put_duration(j, "duration", info.duration);
  j["trace_hash"] = info.trace_hash;

  json leadership = json::object();
  json intervals = json::array();
  for (const LeaderInterval& li : r.intervals) {
    json x = {{"node", li.node}, {"epoch", li.epoch}, {"open_at_end", li.open_at_end}};
    put_time(x, "start", li.start);
    put_time(x, "end", li.end);
    intervals.push_back(std::move(x));
  }
  leadership["intervals"] = std::move(intervals);
  put_time(leadership, "first_leader_at", r.first_leader_at);
  leadership["elections"] = r.elections;
  put_duration(leadership, "leaderless_time", r.leaderless_time);
  leadership["leaderless_fraction"] = r.leaderless_fraction;
  j["leadership"] = std::move(leadership);

  json safety = json::object();
  put_duration(safety, "split_brain_time", r.split_brain_time);
  safety["split_brain_episodes"] = r.split_brain_episodes;
  if (r.first_split_brain) {
    json x = {{"nodes", r.first_split_brain->nodes}, {"epochs", r.first_split_brain->epochs}};
    put_time(x, "at", r.first_split_brain->at);
    safety["first_split_brain"] = std::move(x);
  } else {
    safety["first_split_brain"] = nullptr;
  }
  safety["same_epoch_leaders"] = r.same_epoch_leaders_total;
  json pairs = json::array();
  for (const SameEpochLeaders& s : r.same_epoch_leaders) {
    json x = {{"epoch", s.epoch}, {"first", s.first}, {"second", s.second}};
    put_time(x, "at", s.at);
    pairs.push_back(std::move(x));
  }
  safety["same_epoch_leader_pairs"] = std::move(pairs);
  safety["writes_accepted"] = r.writes_accepted;
  safety["writes_rejected"] = r.writes_rejected;
  safety["stale_writes_accepted"] = r.stale_writes_accepted;
  safety["stale_writes_rejected"] = r.stale_writes_rejected;
  safety["stale_writes_overwriting"] = r.stale_writes_overwriting;
  safety["equal_token_writes"] = r.equal_token_writes;
  if (r.first_equal_token_write) {
    json w;
    put_time(w, "at", r.first_equal_token_write->at);
    w["writer"] = r.first_equal_token_write->writer;
    w["other"] = r.first_equal_token_write->other;
    w["token"] = r.first_equal_token_write->token;
    safety["first_equal_token_write"] = std::move(w);
  } else {
    safety["first_equal_token_write"] = nullptr;
  }
  if (r.first_overwrite) {
    json w;
    put_time(w, "at", r.first_overwrite->at);
    w["writer"] = r.first_overwrite->writer;
    w["token"] = r.first_overwrite->token;
    w["over"] = r.first_overwrite->over;
    safety["first_overwrite"] = std::move(w);
  } else {
    safety["first_overwrite"] = nullptr;
  }
  json stale = json::array();
  for (const StaleWrite& w : r.stale_writes) {
    json x = {{"writer", w.writer},
              {"token", w.token},
              {"newest_epoch", w.newest_epoch},
              {"accepted", w.accepted}};
    put_time(x, "at", w.at);
    stale.push_back(std::move(x));
  }
  safety["stale_writes"] = std::move(stale);
  j["safety"] = std::move(safety);

  json liveness = json::object();
  json failovers = json::array();
  for (const Failover& f : r.failovers) {
    json x = {{"fault_index", f.fault_index},
              {"fault", sim::fault_kind_name(f.fault)},
              {"old_leader", f.old_leader},
              {"old_epoch", f.old_epoch}};
    x["new_leader"] = f.new_leader_at ? json(f.new_leader) : json(nullptr);
    put_time(x, "fault_at", f.fault_at);
    put_time(x, "new_leader_at", f.new_leader_at);
    put_duration(x, "failover", f.failover);
    put_time(x, "heard_at", f.heard_at);
    put_duration(x, "failover_heard", f.failover_heard);
    x["requests_peak"] = f.requests_peak;
    put_time(x, "last_old_write", f.last_old_write);
    put_time(x, "first_new_write", f.first_new_write);
    put_duration(x, "write_outage", f.write_outage);
    x["ridden_out"] = f.ridden_out;
    put_time(x, "regained_at", f.regained_at);
    failovers.push_back(std::move(x));
  }
  liveness["failovers"] = std::move(failovers);
  json coordinator_failovers = json::array();
  for (const Failover& f : r.coordinator_failovers) {
    json x = {{"fault_index", f.fault_index},
              {"fault", sim::fault_kind_name(f.fault)},
              {"target", f.coordinator_target == sim::kNoNode ? json(nullptr)
                                                              : json(f.coordinator_target_name)},
              {"old_leader", f.old_leader},
              {"new_leader", f.new_leader}};
    put_time(x, "fault_at", f.fault_at);
    put_time(x, "new_leader_at", f.new_leader_at);
    put_duration(x, "failover", f.failover);
    put_time(x, "last_old_write", f.last_old_write);
    put_time(x, "first_new_write", f.first_new_write);
    put_duration(x, "write_outage", f.write_outage);
    coordinator_failovers.push_back(std::move(x));
  }
  liveness["coordinator_failovers"] = std::move(coordinator_failovers);
  auto as_duration = [&](const char* metric) -> std::optional<Duration> {
    const std::optional<double> v = metric_value(r, metric);
    if (!v) return std::nullopt;
    return Duration(static_cast<std::int64_t>(*v));
  };
  liveness["failovers_observed"] = static_cast<std::uint64_t>(*metric_value(r, "failovers"));
  liveness["failovers_unresolved"] =
      static_cast<std::uint64_t>(*metric_value(r, "failovers_unresolved"));
  put_duration(liveness, "failover_max", as_duration("failover_max"));
  put_duration(liveness, "failover_median", as_duration("failover_median"));
  put_duration(liveness, "failover_heard_max", as_duration("failover_heard_max"));
  put_duration(liveness, "failover_heard_median", as_duration("failover_heard_median"));
  put_duration(liveness, "write_outage_max", as_duration("write_outage_max"));
  put_duration(liveness, "stall_time", r.stall_time);
  j["liveness"] = std::move(liveness);

  json service = json::object();
  service["measured"] = r.outages_measured;
  put_time(service, "first_write_at", r.first_write_at);
  put_time(service, "last_write_at", r.last_write_at);
  service["outages"] = r.outages_total;
  service["outages_unresolved"] = r.outages_unresolved;
  put_duration(service, "outage_time", r.outage_time);
  put_duration(service, "outage_max", r.outage_max);
  service["writable_fraction"] = optional_number(r.writable_fraction);
  json episodes = json::array();
  for (const Outage& o : r.outages) {
    json x = {{"writer_before", o.writer_before},
              {"writer_after", o.end ? json(o.writer_after) : json(nullptr)},
              {"resolved", o.end.has_value()},
              {"causes_total", o.causes_total},
              {"causes_text", outage_causes_text(o)}};
    put_time(x, "start", o.start);
    put_time(x, "end", o.end);
    put_duration(x, "duration", o.duration);
    json causes = json::array();
    for (const OutageCause& c : o.causes) {
      json y = {{"fault_index", c.fault_index},
                {"fault", sim::fault_kind_name(c.fault)},
                {"target", c.target == sim::kNoNode ? json(nullptr)
                           : c.target >= 0          ? json(c.target)
                                                    : json(c.target_name)},
                {"during", c.during},
                {"coordinator", c.coordinator}};
      if (!c.groups.empty()) y["groups"] = c.groups;
      put_time(y, "at", c.at);
      causes.push_back(std::move(y));
    }
    x["causes"] = std::move(causes);
    episodes.push_back(std::move(x));
  }
  service["episodes"] = std::move(episodes);
  j["service"] = std::move(service);

  json store = json::object();
  store["members"] = r.store.members;
  if (r.store.shards > 1) store["shards"] = r.store.shards;  // a sharded store's only
  put_duration(store, "unavailable_time", r.store.unavailable_time);
  store["availability"] = r.store.availability;
  store["outages"] = r.store.outages.size();
  std::optional<Duration> longest_outage;
  for (const Duration d : r.store.outages) {
    if (!longest_outage || d > *longest_outage) longest_outage = d;
  }
  put_duration(store, "outage_max", longest_outage);
  store["leader_elections"] = r.store.leader_elections;
  store["leader_changes"] = r.store.leader_changes;
  store["commits"] = r.store.commits;
  put_duration(store, "commit_latency_p50", r.store.commit_latency_p50);
  put_duration(store, "commit_latency_p99", r.store.commit_latency_p99);
  store["requests_failed"] = r.store.requests_failed;
  store["requests_retried"] = r.store.requests_retried;
  store["requests_refused"] = r.store.requests_refused;
  store["client_failovers"] = r.store.client_failovers;
  store["lease_refreshes"] = r.store.lease_refreshes;
  store["same_term_leaders"] = r.store.same_term_leaders;
  store["commit_conflicts"] = r.store.commit_conflicts;
  store["linearizability_violations"] = r.store.linearizability_violations;
  json recoveries = json::array();
  for (const CoordinatorRecovery& c : r.store.recoveries) {
    json x = {{"first_second", c.first_second}, {"peak", c.peak}, {"refused", c.refused}};
    put_time(x, "at", c.at);
    put_duration(x, "outage", c.outage);
    put_time(x, "peak_at", c.peak_at);
    x["before_per_second"] = c.before_per_second ? json(*c.before_per_second) : json(nullptr);
    recoveries.push_back(std::move(x));
  }
  store["recoveries"] = std::move(recoveries);
  j["store"] = std::move(store);

  json cost = json::object();
  cost["messages_sent"] = r.messages_sent;
  cost["election_messages_sent"] = r.election_messages_sent;
  cost["messages_delivered"] = r.messages_delivered;
  cost["messages_dropped"] = r.messages_dropped;
  cost["messages_by_type"] = r.messages_by_type;
  cost["messages_per_election"] = optional_number(metric_value(r, "messages_per_election"));
  json ops = json::object();
  for (int op = 0; op < sim::kStoreOpCount; ++op) {
    ops[sim::store_op_name(static_cast<sim::StoreOp>(op))] =
        r.store_requests[static_cast<std::size_t>(op)];
  }
  cost["store_requests"] = std::move(ops);
  cost["store_requests_total"] = r.store_requests_total;
  cost["store_requests_per_second"] = r.store_requests_per_second;
  cost["server_requests_total"] = r.server_requests_total;
  cost["connections_broken"] = r.connections_broken;
  cost["coordinator_requests_per_second"] = r.coordinator_requests_per_second;
  cost["requests_before_first_leader"] = r.requests_before_first_leader;
  cost["coordinator_requests_steady_per_second"] =
      optional_number(metric_value(r, "coordinator_requests_steady_per_second"));
  cost["failover_requests_peak"] = optional_number(metric_value(r, "failover_requests_peak"));
  cost["sink_writes"] = r.sink_writes;
  cost["events"] = r.events;
  j["cost"] = std::move(cost);

  if (r.fleet) {
    const FleetReport& f = *r.fleet;
    // Durations as everywhere in this output: whole nanoseconds (_ns) and seconds (_s).
    const auto spread = [](const Spread& s, bool duration) {
      json x = {{"samples", s.samples}};
      const std::pair<const char*, std::int64_t> values[] = {
          {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
      for (const auto& [name, v] : values) {
        if (duration) {
          put_duration(x, name, Duration(v));
        } else {
          x[name] = v;
        }
      }
      return x;
    };
    json most = json::array();
    for (const auto& [name, changes] : f.most_changes) {
      most.push_back({{"service", name}, {"leader_changes", changes}});
    }
    json by_service = json::array();
    for (std::size_t k = 0; k < f.by_service.size(); ++k) {
      const ServiceFigures& one = f.by_service[k];
      json x = {{"service", one.name},
                {"elections", one.elections},
                {"failovers_observed", one.failovers_observed},
                {"writes_accepted", one.writes_accepted},
                {"stale_writes_accepted", one.stale_writes_accepted},
                {"coordinator_requests", one.coordinator_requests}};
      put_duration(x, "leaderless_time", one.leaderless_time);
      put_duration(x, "split_brain_time", one.split_brain_time);
      put_duration(x, "stall_time", one.stall_time);
      put_duration(x, "outage_time", one.outage_time);
      put_duration(x, "writing_span", one.writing_span);
      if (!one.service_class.empty()) x["class"] = one.service_class;
      by_service.push_back(std::move(x));
    }
    json by_class = json::array();
    for (const ClassFigures& c : f.by_class) {
      by_class.push_back({{"class", c.name},
                          {"protocol", c.protocol},
                          {"services", c.services},
                          {"replicas", c.replicas},
                          {"leader_changes", spread(c.leader_changes, false)},
                          {"leaderless_time", spread(c.leaderless_time, true)},
                          {"outage_time", spread(c.outage_time, true)},
                          {"stall_time", spread(c.stall_time, true)},
                          {"services_split_brain", c.services_split_brain},
                          {"services_stale_accepted", c.services_stale_accepted},
                          {"services_overwritten", c.services_overwritten},
                          {"services_stalled", c.services_stalled},
                          {"services_never_led", c.services_never_led},
                          {"coordinator_requests", c.coordinator_requests}});
    }
    j["fleet"] = {{"services", f.services},
                  {"replicas", f.replicas},
                  {"leader_changes", spread(f.leader_changes, false)},
                  {"leaderless_time", spread(f.leaderless_time, true)},
                  {"split_brain_time", spread(f.split_brain_time, true)},
                  {"stall_time", spread(f.stall_time, true)},
                  {"outage_time", spread(f.outage_time, true)},
                  {"failover", spread(f.failover, true)},
                  {"services_split_brain", f.services_split_brain},
                  {"services_stale_accepted", f.services_stale_accepted},
                  {"services_overwritten", f.services_overwritten},
                  {"services_stalled", f.services_stalled},
                  {"services_never_led", f.services_never_led},
                  {"most_leader_changes", std::move(most)},
                  {"by_service", std::move(by_service)}};
    if (!by_class.empty()) j["fleet"]["by_class"] = std::move(by_class);
    if (f.aggregators > 0) {
      j["fleet"]["aggregators"] = f.aggregators;
      j["fleet"]["store_requests_served"] = r.store.requests_served;
    }
    if (!f.by_shard.empty()) {
      json by_shard = json::array();
      for (const ShardFigures& shard : f.by_shard) {
        json x = {{"shard", shard.name},
                  {"services", shard.services},
                  {"coordinator_requests", shard.coordinator_requests},
                  {"requests_per_second", shard.requests_per_second},
                  {"requests_refused", shard.requests_refused},
                  {"services_stalled", shard.services_stalled},
                  {"leader_changes", shard.leader_changes}};
        put_duration(x, "unavailable_time", shard.unavailable_time);
        put_duration(x, "leaderless_time", shard.leaderless_time);
        by_shard.push_back(std::move(x));
      }
      j["fleet"]["by_shard"] = std::move(by_shard);
    }
  }

  json metrics = json::object();
  for (const MetricInfo& m : metric_catalogue()) {
    metrics[m.name] = optional_number(metric_value(r, m.name));
  }
  j["metrics"] = std::move(metrics);

  json breaches = json::array();
  for (const Breach& b : verdict.breaches) {
    json x = {{"metric", b.expectation.metric},
              {"pointer", b.expectation.pointer},
              {"min", optional_number(b.expectation.min)},
              {"max", optional_number(b.expectation.max)},
              {"require_observed", b.expectation.require_observed},
              {"actual", optional_number(b.actual)},
              {"message", b.message}};
    if (!b.expectation.service_class.empty()) x["class"] = b.expectation.service_class;
    breaches.push_back(std::move(x));
  }
  json harm = json::array();
  for (const std::string& h : harm_in(r)) harm.push_back(h);
  json concerns = json::array();
  for (const std::string& c : liveness_concerns(r)) concerns.push_back(c);
  j["verdict"] = {{"ok", verdict.judged ? verdict.ok() : verdict.ok() && harm.empty()},
                  {"judged", verdict.judged},
                  {"harm", std::move(harm)},
                  {"liveness", std::move(concerns)},
                  {"breaches", std::move(breaches)}};
  return j;
}

}  // namespace electsim::analysis
