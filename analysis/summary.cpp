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

}  // namespace electsim::analysis
