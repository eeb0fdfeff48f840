// Expectations: the catalogue of metric names a scenario may bound, their values in a Report, and
// the verdict. A breach says which bound broke, by how much in the metric's unit, and when the
// finding first happened, so a failing regression scenario explains itself (docs/metrics.md).
#include "analysis/expect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "sim/fault.hpp"
#include "sim/time.hpp"

namespace electsim::analysis {

namespace {

std::vector<const Failover*> observed_failovers(const Report& r);
const Failover* longest_failover(const Report& r);
const Failover* longest_write_outage(const Report& r);

double ns(Duration d) {
  return static_cast<double>(d.count());
}
double count(std::uint64_t n) {
  return static_cast<double>(n);
}
std::optional<double> ns_if(const std::optional<Duration>& d) {
  if (!d) return std::nullopt;
  return ns(*d);
}
// A count of the coordinator's recoveries (CoordinatorRecovery), the largest or the sum over
// them; none without a recovery.
std::optional<double> recovery_figure(const Report& r, std::uint64_t CoordinatorRecovery::*field,
                                      bool sum) {
  if (r.store.recoveries.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (const CoordinatorRecovery& c : r.store.recoveries) {
    value = sum ? value + c.*field : std::max(value, c.*field);
  }
  return count(value);
}
// The median of whole nanoseconds: of an even count, the mean of the two middle values, in whole
// nanoseconds; none of none.
std::optional<double> median(std::vector<std::int64_t> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  if (values.size() % 2 == 1) return static_cast<double>(values[mid]);
  return static_cast<double>(values[mid - 1] + (values[mid] - values[mid - 1]) / 2);
}
// How long each failover took until every live node heard of the new leader, where known.
std::vector<std::int64_t> heard(const Report& r) {
  std::vector<std::int64_t> values;
  for (const Failover& f : r.failovers) {
    if (f.failover_heard) values.push_back(f.failover_heard->count());
  }
  return values;
}

// The catalogue: each metric's name, unit, meaning, when it has no value, and how to read it from
// a report. expect, the summaries, --json, sweeps, the search and docs/metrics.md's table all read
// this one table.
const std::vector<MetricInfo>& catalogue() {
  static const std::vector<MetricInfo> metrics = {
      {"split_brain_time", MetricUnit::duration,
       "total time two or more nodes believed they were leader", "",
       [](const Report& r) -> std::optional<double> { return ns(r.split_brain_time); }},
      {"split_brain_episodes", MetricUnit::count,
       "stretches of non-zero length with two or more leaders", "",
       [](const Report& r) -> std::optional<double> { return count(r.split_brain_episodes); }},
      {"same_epoch_leaders", MetricUnit::count,
       "pairs of different nodes that were leader in the same epoch", "",
       [](const Report& r) -> std::optional<double> { return count(r.same_epoch_leaders_total); }},
      {"stale_writes_accepted", MetricUnit::count,
       "sink writes accepted with a token below the newest leader epoch (a deposed leader acted; "
       "corruption only where it overwrote newer data, stale_writes_overwriting)",
       "", [](const Report& r) -> std::optional<double> { return count(r.stale_writes_accepted); }},
      {"stale_writes_rejected", MetricUnit::count,
       "sink writes with a stale token that fencing rejected", "",
       [](const Report& r) -> std::optional<double> { return count(r.stale_writes_rejected); }},
      {"stale_writes_overwriting", MetricUnit::count,
       "accepted writes with a token below one the sink had already accepted: an old leader "
       "overwrote a newer leader's data (always 0 with fencing)",
       "",
       [](const Report& r) -> std::optional<double> { return count(r.stale_writes_overwriting); }},
      {"equal_token_writes", MetricUnit::count,
       "accepted writes carrying the same token as the newest the sink had accepted, from a node "
       "that had written with it before another node did: two leaders interleaving under one "
       "token, harm fencing cannot separate (fails any run whose expect block does not bound it)",
       "", [](const Report& r) -> std::optional<double> { return count(r.equal_token_writes); }},
      {"writes_accepted", MetricUnit::count, "sink writes accepted", "",
       [](const Report& r) -> std::optional<double> { return count(r.writes_accepted); }},
      {"writes_rejected", MetricUnit::count, "sink writes rejected", "",
       [](const Report& r) -> std::optional<double> { return count(r.writes_rejected); }},
      {"failovers", MetricUnit::count,
       "faults that took the leader away and after which another node led", "",
       [](const Report& r) -> std::optional<double> {
         return count(observed_failovers(r).size());
       }},
      {"failovers_unresolved", MetricUnit::count,
       "faults that took the leader away with no other leader by the run's end (faults the old "
       "leader rode out, keeping its interval, are not counted)",
       "",
       [](const Report& r) -> std::optional<double> {
         std::size_t unresolved = 0;
         for (const Failover& f : r.failovers) {
           unresolved += !f.failover && !f.ridden_out && !f.regained_at ? 1 : 0;
         }
         return count(unresolved);
       }},
      {"failover_max", MetricUnit::duration,
       "longest time from such a fault to another node leading (unobserved: no failover)",
       "no observed failover",
       [](const Report& r) -> std::optional<double> {
         const Failover* f = longest_failover(r);
         if (f == nullptr) return std::nullopt;
         return ns(*f->failover);
       }},
      {"failover_median", MetricUnit::duration,
       "median time from such a fault to another node leading (unobserved: no failover)",
       "no observed failover",
       [](const Report& r) -> std::optional<double> {
         std::vector<std::int64_t> values;
         for (const Failover* f : observed_failovers(r)) values.push_back(f->failover->count());
         return median(std::move(values));
       }},
      {"failover_heard_max", MetricUnit::duration,
       "longest time from such a fault to every other live node having heard the new leader "
       "(the Raft paper's endpoint; unobserved where no node messages another)",
       "no failover heard by every live node",
       [](const Report& r) -> std::optional<double> {
         std::vector<std::int64_t> values = heard(r);
         if (values.empty()) return std::nullopt;
         return static_cast<double>(*std::max_element(values.begin(), values.end()));
       }},
      {"failover_heard_median", MetricUnit::duration,
       "median time from such a fault to every other live node having heard the new leader",
       "no failover heard by every live node",
       [](const Report& r) -> std::optional<double> { return median(heard(r)); }},
      {"write_outage_max", MetricUnit::duration,
       "longest time from the old leader's last accepted write before a fault to the new "
       "leader's first (or to the old leader's own, where it rode the fault out)",
       "no fault with both writes",
       [](const Report& r) -> std::optional<double> {
         const Failover* f = longest_write_outage(r);
         if (f == nullptr) return std::nullopt;
         return ns(*f->write_outage);
       }},
      {"outages", MetricUnit::count,
       "service outages: gaps of more than two write intervals between accepted writes from the "
       "newest leader, whatever the cause (unobserved: the leaders do not write)",
       "the leaders do not write (no workload)",
       [](const Report& r) -> std::optional<double> {
         if (!r.outages_measured) return std::nullopt;
         return count(r.outages_total);
       }},
      {"outage_time", MetricUnit::duration,
       "total length of the service outages (unobserved: the leaders do not write)",
       "the leaders do not write",
       [](const Report& r) -> std::optional<double> {
         if (!r.outages_measured) return std::nullopt;
         return ns(r.outage_time);
       }},
      {"outage_max", MetricUnit::duration,
       "the longest service outage, from the last accepted write to the next from the newest "
       "leader, or to the run's end when the service never wrote again (unobserved: no outage)",
       "no outage", [](const Report& r) -> std::optional<double> { return ns_if(r.outage_max); }},
      {"outages_unresolved", MetricUnit::count,
       "1 when the service never wrote again after its last outage began, else 0 (unobserved: "
       "the leaders do not write)",
       "the leaders do not write",
       [](const Report& r) -> std::optional<double> {
         if (!r.outages_measured) return std::nullopt;
         return count(r.outages_unresolved);
       }},
      {"writable_fraction", MetricUnit::fraction,
       "share of the time from the first accepted write to the run's end outside any outage "
       "(unobserved: no write was ever accepted)",
       "no write was ever accepted",
       [](const Report& r) -> std::optional<double> { return r.writable_fraction; }},
      {"coordinator_failovers", MetricUnit::count,
       "leader changes in a service outage caused by a fault on the coordinator (store member, "
       "store, database, Redis master) with no fault on the old leader",
       "",
       [](const Report& r) -> std::optional<double> {
         return count(r.coordinator_failovers.size());
       }},
      {"coordinator_failover_max", MetricUnit::duration,
       "the longest such outage, from the service's last write to the new leader's first "
       "(unobserved: none)",
       "no coordinator failover",
       [](const Report& r) -> std::optional<double> {
         std::optional<double> longest;
         for (const Failover& f : r.coordinator_failovers) {
           if (f.write_outage && (!longest || ns(*f.write_outage) > *longest)) {
             longest = ns(*f.write_outage);
           }
         }
         return longest;
       }},
      {"leaderless_fraction", MetricUnit::fraction, "share of the run with no leader", "",
       [](const Report& r) -> std::optional<double> { return r.leaderless_fraction; }},
      {"leaderless_time", MetricUnit::duration, "time with no leader", "",
       [](const Report& r) -> std::optional<double> { return ns(r.leaderless_time); }},
      {"first_leader_at", MetricUnit::duration,
       "when the first leader announced itself (unobserved: never)", "no leader ever",
       [](const Report& r) -> std::optional<double> {
         if (!r.first_leader_at) return std::nullopt;
         return ns(r.first_leader_at->since_start());
       }},
      {"elections", MetricUnit::count, "distinct (node, epoch) leader announcements", "",
       [](const Report& r) -> std::optional<double> { return count(r.elections); }},
      {"messages_sent", MetricUnit::count, "peer-to-peer messages sent", "",
       [](const Report& r) -> std::optional<double> { return count(r.messages_sent); }},
      {"messages_dropped", MetricUnit::count, "peer-to-peer messages lost, cut or refused", "",
       [](const Report& r) -> std::optional<double> { return count(r.messages_dropped); }},
      {"messages_per_election", MetricUnit::rate,
       "all messages sent, heartbeats included, per election (unobserved: no election); "
       "election_messages_per_election counts the election's own",
       "no election",
       [](const Report& r) -> std::optional<double> {
         if (r.elections == 0) return std::nullopt;
         return count(r.messages_sent) / count(r.elections);
       }},
      {"election_messages", MetricUnit::count,
       "messages of the elections themselves (Election, Answer, Coordinator, RequestVote, ...), "
       "heartbeats and other traffic excluded",
       "",
       [](const Report& r) -> std::optional<double> { return count(r.election_messages_sent); }},
      {"election_messages_per_election", MetricUnit::rate,
       "election messages per election (unobserved: no election)", "no election",
       [](const Report& r) -> std::optional<double> {
         if (r.elections == 0) return std::nullopt;
         return count(r.election_messages_sent) / count(r.elections);
       }},
      {"store_requests", MetricUnit::count, "requests sent to the store", "",
       [](const Report& r) -> std::optional<double> { return count(r.store_requests_total); }},
      {"store_requests_per_second", MetricUnit::rate, "store requests per simulated second", "",
       [](const Report& r) -> std::optional<double> { return r.store_requests_per_second; }},
      {"server_requests", MetricUnit::count,
       "statements and commands sent to the database server or the Redis masters", "",
       [](const Report& r) -> std::optional<double> { return count(r.server_requests_total); }},
      {"coordinator_requests_per_second", MetricUnit::rate,
       "requests to every coordinator (store, database, Redis masters) per simulated second", "",
       [](const Report& r) -> std::optional<double> { return r.coordinator_requests_per_second; }},
      {"coordinator_requests_steady_per_second", MetricUnit::rate,
       "store, database and Redis requests per second while exactly one node leads and no "
       "failover waits (unobserved: never steady)",
       "never steady",
       [](const Report& r) -> std::
                               optional<double> {
                                 if (r.steady_time.count() == 0) return std::nullopt;
                                 return r.steady_requests_per_second;
                               }},
      {"writes_after_deadline", MetricUnit::count,
       "writes a leader committed after its own deadline (a lease's renew deadline) had passed "
       "on its clock",
       "", [](const Report& r) -> std::optional<double> { return count(r.writes_after_deadline); }},
      {"heal_recovery", MetricUnit::duration,
       "from the last heal fault to the first accepted write while exactly one node leads "
       "(unobserved: no heal, or no such write after it)",
       "no heal fault, or no single leader writing after it",
       [](const Report& r) -> std::optional<double> { return ns_if(r.heal_recovery); }},
      {"requests_before_first_leader", MetricUnit::count,
       "store, database and Redis requests sent before any node led", "",
       [](const Report& r) -> std::optional<double> {
         return count(r.requests_before_first_leader);
       }},
      {"failover_requests_peak", MetricUnit::count,
       "the thundering herd: the most coordinator requests sent in one second from a fault that "
       "took the leader away until one second after the next leader (unobserved: no failover)",
       "no failover",
       [](const Report& r) -> std::
                               optional<double> {
                                 const bool observed = std::any_of(
                                     r.failovers.begin(), r.failovers.end(),
                                     [](const Failover& f) { return f.failover.has_value(); });
                                 if (!observed) return std::nullopt;
                                 return count(r.failover_requests_peak);
                               }},
      {"sink_writes", MetricUnit::count, "writes that reached the sink", "",
       [](const Report& r) -> std::optional<double> { return count(r.sink_writes); }},
      {"stall_time", MetricUnit::duration,
       "time with no leader while the coordinator could not grant a lease (a replicated store "
       "with no running leader, a single store paused or down): what a coordinator outage "
       "should cost instead of split-brain",
       "", [](const Report& r) -> std::optional<double> { return ns(r.stall_time); }},
      {"store_unavailable_time", MetricUnit::duration,
       "time the store could not grant, leaders or not", "",
       [](const Report& r) -> std::optional<double> { return ns(r.store.unavailable_time); }},
      {"store_availability", MetricUnit::fraction, "share of the run the store could grant", "",
       [](const Report& r) -> std::optional<double> { return r.store.availability; }},
      {"store_leader_changes", MetricUnit::count,
       "store leader elections after the first (a replicated store)", "",
       [](const Report& r) -> std::optional<double> { return count(r.store.leader_changes); }},
      {"store_commit_latency_p50", MetricUnit::duration,
       "median time from the store leader's append of an entry of its term to its commit "
       "(unobserved: no commit)",
       "no commit (a single store)",
       [](const Report& r) -> std::optional<double> { return ns_if(r.store.commit_latency_p50); }},
      {"store_commit_latency_p99", MetricUnit::duration,
       "99th percentile of that commit latency (unobserved: no commit)",
       "no commit (a single store)",
       [](const Report& r) -> std::optional<double> { return ns_if(r.store.commit_latency_p99); }},
      {"store_requests_failed", MetricUnit::count,
       "store requests the clients gave up on (request_timeout, a crashed member)", "",
       [](const Report& r) -> std::optional<double> { return count(r.store.requests_failed); }},
      {"store_requests_retried", MetricUnit::count,
       "store requests sent again to another member after a no_leader answer", "",
       [](const Report& r) -> std::optional<double> { return count(r.store.requests_retried); }},
      {"store_requests_refused", MetricUnit::count,
       "store requests refused at once because the store's queue was full (too_many_requests)", "",
       [](const Report& r) -> std::optional<double> { return count(r.store.requests_refused); }},
      {"recovery_requests_peak", MetricUnit::count,
       "the thundering herd after the coordinator: the most coordinator requests sent in any one "
       "second within 10s after the coordinator could grant again, over its recoveries",
       "no coordinator outage ended",
       [](const Report& r) { return recovery_figure(r, &CoordinatorRecovery::peak, false); }},
      {"recovery_requests_refused", MetricUnit::count,
       "coordinator requests refused for overload (too_many_requests) within 10s after the "
       "coordinator could grant again, summed over its recoveries",
       "no coordinator outage ended",
       [](const Report& r) { return recovery_figure(r, &CoordinatorRecovery::refused, true); }},
      {"store_client_failovers", MetricUnit::count, "times a client moved to another member", "",
       [](const Report& r) -> std::optional<double> { return count(r.store.client_failovers); }},
      {"lease_refreshes", MetricUnit::count,
       "leases refreshed by new store leaders on promotion (each stretches a lease)", "",
       [](const Report& r) -> std::optional<double> { return count(r.store.lease_refreshes); }},
      {"store_safety_violations", MetricUnit::count,
       "two store members leading in one term, two different entries committed at one log "
       "index, or a reply showing an older revision than one shown before its request was sent "
       "(always 0: the store is linearizable; any other value fails the run)",
       "",
       [](const Report& r) -> std::
                               optional<double> {
                                 return count(r.store.same_term_leaders + r.store.commit_conflicts +
                                              r.store.linearizability_violations);
                               }},
      // A fleet's spreads over its services (FleetReport); none for a world of one election.
      {"fleet_services_split_brain", MetricUnit::count,
       "a fleet's services that had split brain or two leaders in one epoch", "not a fleet",
       [](const Report& r) -> std::optional<double> {
         if (!r.fleet) return std::nullopt;
         return count(r.fleet->services_split_brain);
       },
       true},
      {"fleet_services_stale_accepted", MetricUnit::count,
       "a fleet's services whose sink resource accepted a stale write", "not a fleet",
       [](const Report& r) -> std::optional<double> {
         if (!r.fleet) return std::nullopt;
         return count(r.fleet->services_stale_accepted);
       },
       true},
      {"fleet_services_stalled", MetricUnit::count,
       "a fleet's services that were without a leader while the coordinator could not grant",
       "not a fleet",
       [](const Report& r) -> std::
                               optional<double> {
                                 if (!r.fleet) return std::nullopt;
                                 return count(r.fleet->services_stalled);
                               },
       true},
      {"fleet_services_never_led", MetricUnit::count, "a fleet's services that never had a leader",
       "not a fleet",
       [](const Report& r) -> std::
                               optional<double> {
                                 if (!r.fleet) return std::nullopt;
                                 return count(r.fleet->services_never_led);
                               },
       true},
      {"fleet_leader_changes_p99", MetricUnit::count,
       "99th percentile over a fleet's services of leader changes (elections after a service's "
       "first): thrash",
       "not a fleet",
       [](const Report& r) -> std::
                               optional<double> {
                                 if (!r.fleet) return std::nullopt;
                                 return static_cast<double>(r.fleet->leader_changes.p99);
                               },
       true},
      {"fleet_leader_changes_per_hour_p99", MetricUnit::rate,
       "fleet_leader_changes_p99 per simulated hour", "not a fleet",
       [](const Report& r) -> std::optional<double> {
         if (!r.fleet || r.duration.count() <= 0) return std::nullopt;
         return static_cast<double>(r.fleet->leader_changes.p99) /
                (static_cast<double>(r.duration.count()) / 3.6e12);
       },
       true},
      {"fleet_outage_p99", MetricUnit::duration,
       "99th percentile over a fleet's services of each service's outage time: what the service "
       "lived through, whatever the cause",
       "not a fleet, or outages not measured (no workload)",
       [](const Report& r) -> std::optional<double> {
         if (!r.fleet || !r.outages_measured) return std::nullopt;
         return static_cast<double>(r.fleet->outage_time.p99);
       },
       true},
      {"fleet_leaderless_p99", MetricUnit::duration,
       "99th percentile over a fleet's services of each service's leaderless time", "not a fleet",
       [](const Report& r) -> std::optional<double> {
         if (!r.fleet) return std::nullopt;
         return static_cast<double>(r.fleet->leaderless_time.p99);
       },
       true},
      {"fleet_failover_p99", MetricUnit::duration,
       "99th percentile of every observed failover of every service of a fleet",
       "not a fleet, or no observed failover",
       [](const Report& r) -> std::
                               optional<double> {
                                 if (!r.fleet || r.fleet->failover.samples == 0)
                                   return std::nullopt;
                                 return static_cast<double>(r.fleet->failover.p99);
                               }},
  };
  return metrics;
}

std::vector<const Failover*> observed_failovers(const Report& r) {
  std::vector<const Failover*> out;
  for (const Failover& f : r.failovers) {
    if (f.failover) out.push_back(&f);
  }
  return out;
}

// The observed failover with the longest failover (the first of equals).
const Failover* longest_failover(const Report& r) {
  const Failover* best = nullptr;
  for (const Failover& f : r.failovers) {
    if (f.failover && (!best || *f.failover > *best->failover)) best = &f;
  }
  return best;
}

const Failover* longest_write_outage(const Report& r) {
  const Failover* best = nullptr;
  for (const Failover& f : r.failovers) {
    if (f.write_outage && (!best || *f.write_outage > *best->write_outage)) best = &f;
  }
  return best;
}

std::string format_value(MetricUnit unit, double value) {
  switch (unit) {
    case MetricUnit::duration:
      return sim::format_duration(Duration(std::llround(value)));
    case MetricUnit::count:
      return fmt::format("{}", std::llround(value));
    case MetricUnit::fraction:
    case MetricUnit::rate:
      return fmt::format("{:.4g}", value);
  }
  return fmt::format("{}", value);
}

std::string node_list(const std::vector<NodeId>& nodes, const std::vector<Epoch>& epochs) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("node {} epoch {}", nodes[i], i < epochs.size() ? epochs[i] : 0);
  }
  return out;
}

std::string describe_failover(const Failover& f) {
  std::string text =
      fmt::format("{} of node {} (epoch {}) at {}", sim::fault_kind_name(f.fault), f.old_leader,
                  f.old_epoch, sim::format_seconds(f.fault_at.since_start()));
  if (f.new_leader_at) {
    text += fmt::format(", node {} leading at {}", f.new_leader,
                        sim::format_seconds(f.new_leader_at->since_start()));
  } else {
    text += ", no other leader by the run's end";
  }
  return text;
}

const StaleWrite* first_stale(const Report& r, bool accepted) {
  for (const StaleWrite& w : r.stale_writes) {
    if (w.accepted == accepted) return &w;
  }
  return nullptr;
}

// When the finding behind a metric first happened, as "; first at ..." (empty when no time fits).
std::string when(const Report& r, std::string_view metric) {
  if (metric == "split_brain_time" || metric == "split_brain_episodes") {
    if (!r.first_split_brain) return {};
    return fmt::format("; first at {} ({})",
                       sim::format_seconds(r.first_split_brain->at.since_start()),
                       node_list(r.first_split_brain->nodes, r.first_split_brain->epochs));
  }
  if (metric == "same_epoch_leaders") {
    if (r.same_epoch_leaders.empty()) return {};
    const SameEpochLeaders& s = r.same_epoch_leaders.front();
    return fmt::format("; first at {} (nodes {} and {} in epoch {})",
                       sim::format_seconds(s.at.since_start()), s.first, s.second, s.epoch);
  }
  if (metric == "stale_writes_accepted" || metric == "stale_writes_rejected") {
    const StaleWrite* w = first_stale(r, metric == "stale_writes_accepted");
    if (w == nullptr) return {};
    return fmt::format("; first at {} (node {} wrote token {} after epoch {} was announced)",
                       sim::format_seconds(w->at.since_start()), w->writer, w->token,
                       w->newest_epoch);
  }
  if (metric == "stale_writes_overwriting" && r.first_overwrite) {
    const Report::Overwrite& w = *r.first_overwrite;
    return fmt::format("; first at {} (node {} wrote token {} after the sink had accepted {})",
                       sim::format_seconds(w.at.since_start()), w.writer, w.token, w.over);
  }
  if (metric == "equal_token_writes" && r.first_equal_token_write) {
    const Report::EqualTokenWrite& w = *r.first_equal_token_write;
    return fmt::format("; first at {} (node {} wrote token {} again after node {} had)",
                       sim::format_seconds(w.at.since_start()), w.writer, w.token, w.other);
  }
  if (metric == "outage_max" || metric == "outages_unresolved") {
    const Outage* longest = nullptr;
    for (const Outage& o : r.outages) {
      if (metric == "outages_unresolved" && o.end) continue;
      if (!longest || o.duration > longest->duration) longest = &o;
    }
    if (longest == nullptr) return {};
    return fmt::format("; from {} ({})", sim::format_seconds(longest->start.since_start()),
                       outage_causes_text(*longest));
  }
  if (metric == "failover_max") {
    const Failover* f = longest_failover(r);
    return f ? "; after " + describe_failover(*f) : std::string();
  }
  if (metric == "write_outage_max") {
    const Failover* f = longest_write_outage(r);
    return f ? "; after " + describe_failover(*f) : std::string();
  }
  if (metric == "failovers_unresolved") {
    for (const Failover& f : r.failovers) {
      if (!f.failover && !f.ridden_out && !f.regained_at) {
        return "; first after " + describe_failover(f);
      }
    }
  }
  return {};
}

}  // namespace

std::string outage_causes_text(const Outage& o) {
  if (o.no_fault()) {
    return o.end && o.writer_after != o.writer_before ? "no fault: the leader changed by itself"
                                                      : "no fault";
  }
  std::string during;
  std::string before;
  for (const OutageCause& c : o.causes) {
    std::string& list = c.during ? during : before;
    list += list.empty() ? "" : ", ";
    list += sim::fault_kind_name(c.fault);
    if (!c.groups.empty()) {
      list += " " + c.groups;
    } else if (c.target != sim::kNoNode) {
      list += c.target >= 0 ? fmt::format(" of node {}", c.target) : " of " + c.target_name;
    }
    list += " at " + sim::format_seconds(c.at.since_start());
  }
  std::string out;
  if (!during.empty()) out += "during: " + during;
  if (!before.empty()) out += (out.empty() ? "" : "; ") + ("before: " + before);
  if (o.causes_total > o.causes.size()) {
    out += fmt::format("; and {} more", o.causes_total - o.causes.size());
  }
  return out;
}

std::vector<std::string> harm_in(const Report& r) {
  std::vector<std::string> harm;
  auto plural = [](std::uint64_t n) { return n == 1 ? "" : "s"; };
  if (r.split_brain_time.count() > 0) {
    harm.push_back(fmt::format("{} of split-brain", sim::format_seconds(r.split_brain_time)));
  }
  if (r.same_epoch_leaders_total > 0) {
    harm.push_back(fmt::format("{} pair{} of same-epoch leaders", r.same_epoch_leaders_total,
                               plural(r.same_epoch_leaders_total)));
  }
  if (r.stale_writes_accepted > 0) {
    harm.push_back(fmt::format("{} stale write{} accepted", r.stale_writes_accepted,
                               plural(r.stale_writes_accepted)));
  }
  if (r.stale_writes_overwriting > 0) {
    harm.push_back(fmt::format("{} overwrite{} of newer data (corruption)",
                               r.stale_writes_overwriting, plural(r.stale_writes_overwriting)));
  }
  if (r.equal_token_writes > 0) {
    harm.push_back(fmt::format("{} equal-token write{} (two leaders under one token)",
                               r.equal_token_writes, plural(r.equal_token_writes)));
  }
  const std::uint64_t store_violations =
      r.store.same_term_leaders + r.store.commit_conflicts + r.store.linearizability_violations;
  if (store_violations > 0) {
    harm.push_back(
        fmt::format("{} store safety violation{}", store_violations, plural(store_violations)));
  }
  return harm;
}

std::vector<std::string> liveness_concerns(const Report& r) {
  std::vector<std::string> out;
  std::optional<Time> first_open;
  for (const Outage& o : r.outages) {
    if (!o.end && (!first_open || o.start < *first_open)) first_open = o.start;
  }
  if (first_open && r.outages_unresolved > 1) {
    // A fleet's services, counted once: naming each would bury the rest of the verdict.
    out.push_back(fmt::format("{} services that never wrote again, the first after {}",
                              r.outages_unresolved,
                              sim::format_seconds(first_open->since_start())));
  } else if (first_open) {
    out.push_back(fmt::format("a service that never wrote again after {}",
                              sim::format_seconds(first_open->since_start())));
  }
  if (r.outages_measured && !r.first_write_at) out.push_back("a service that never wrote");
  return out;
}

std::span<const MetricInfo> metric_catalogue() {
  return catalogue();
}

const char* metric_unit_name(MetricUnit unit) {
  switch (unit) {
    case MetricUnit::duration:
      return "duration";
    case MetricUnit::count:
      return "count";
    case MetricUnit::fraction:
      return "fraction";
    case MetricUnit::rate:
      return "rate";
  }
  return "count";
}

std::string metric_table_markdown() {
  std::string out = "| metric | unit | not observed when |\n|---|---|---|\n";
  for (const MetricInfo& m : catalogue()) {
    out += fmt::format("| `{}` | {} | {} |\n", m.name, metric_unit_name(m.unit),
                       m.absent_when.empty() ? "\u2014" : m.absent_when);
  }
  return out;
}

const MetricInfo* find_metric(std::string_view name) {
  for (const MetricInfo& m : catalogue()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::optional<double> metric_value(const Report& r, std::string_view name) {
  const MetricInfo* info = find_metric(name);
  return info != nullptr ? info->value(r) : std::nullopt;
}

bool metric_per_class(std::string_view name) {
  const MetricInfo* info = find_metric(name);
  return info != nullptr && info->per_class;
}

std::optional<double> class_metric(const Report& report, const ClassFigures& c,
                                   std::string_view name) {
  if (!metric_per_class(name)) return std::nullopt;
  // The per-class metrics read a report's duration, whether outages were measured and these
  // fleet figures, which a class has too: a report of the class's services alone gives them for
  // the class. A metric that reads anything else must not be marked per_class (the test
  // "every per-class metric of a one-class fleet is the fleet's" fails when one is).
  Report view;
  view.duration = report.duration;
  view.outages_measured = report.outages_measured;
  FleetReport& f = view.fleet.emplace();
  f.services = c.services;
  f.replicas = c.replicas;
  f.leader_changes = c.leader_changes;
  f.leaderless_time = c.leaderless_time;
  f.outage_time = c.outage_time;
  f.stall_time = c.stall_time;
  f.services_split_brain = c.services_split_brain;
  f.services_stale_accepted = c.services_stale_accepted;
  f.services_overwritten = c.services_overwritten;
  f.services_stalled = c.services_stalled;
  f.services_never_led = c.services_never_led;
  return metric_value(view, name);
}

Verdict check(const Report& report, std::span<const Expectation> expectations) {
  Verdict verdict;
  for (const Expectation& e : expectations) {
    const MetricInfo* info = find_metric(e.metric);
    if (info == nullptr) {
      verdict.breaches.push_back({e, std::nullopt, fmt::format("unknown metric '{}'", e.metric)});
      continue;
    }
    std::optional<double> actual;
    std::string name = e.metric;  // as the message names it
    if (e.service_class.empty()) {
      actual = metric_value(report, e.metric);
    } else {
      name = fmt::format("{} of class {}", e.metric, e.service_class);
      const ClassFigures* c = nullptr;
      if (report.fleet) {
        for (const ClassFigures& x : report.fleet->by_class) {
          if (x.name == e.service_class) c = &x;
        }
      }
      if (c == nullptr) {
        verdict.breaches.push_back(
            {e, std::nullopt,
             fmt::format("{}: this run's fleet has no class {}", name, e.service_class)});
        continue;
      }
      actual = class_metric(report, *c, e.metric);
    }
    if (!actual) {
      if (e.require_observed) {
        verdict.breaches.push_back(
            {e, std::nullopt,
             fmt::format("{} was not observed in this run, but the scenario requires it", name)});
      }
      continue;
    }
    const MetricUnit unit = info->unit;
    std::string message;
    if (e.max && *actual > *e.max) {
      message = fmt::format("{} = {}, above max {} by {}", name, format_value(unit, *actual),
                            format_value(unit, *e.max), format_value(unit, *actual - *e.max));
    } else if (e.min && *actual < *e.min) {
      message = fmt::format("{} = {}, below min {} by {}", name, format_value(unit, *actual),
                            format_value(unit, *e.min), format_value(unit, *e.min - *actual));
    } else {
      continue;
    }
    // When the whole run first broke it; a class's own moment is not kept.
    if (e.service_class.empty()) message += when(report, e.metric);
    verdict.breaches.push_back({e, actual, std::move(message)});
  }
  // Harm that damages data fails every verdict unless the scenario states a bound on it (a lab
  // that shows it on purpose says how much it expects): an overwrite is corruption, and two
  // leaders interleaving writes under one token damage data the same way, where fencing cannot
  // tell them apart.
  struct UnboundedHarm {
    const char* metric;
    std::uint64_t count;
    const char* what;
  };
  for (const UnboundedHarm& h :
       {UnboundedHarm{"stale_writes_overwriting", report.stale_writes_overwriting,
                      "a deposed leader's write overwrote newer data (corruption)"},
        UnboundedHarm{"equal_token_writes", report.equal_token_writes,
                      "two leaders' writes with the same token were both accepted, interleaved "
                      "(fencing cannot separate them)"}}) {
    const bool bounded = std::any_of(expectations.begin(), expectations.end(),
                                     [&](const auto& e) { return e.metric == h.metric; });
    if (h.count == 0 || bounded) continue;
    Expectation rule;
    rule.metric = h.metric;
    rule.max = 0;
    std::string message =
        fmt::format("{} = {}: {}, which fails any run whose expect block does not bound {}",
                    h.metric, h.count, h.what, h.metric);
    message += when(report, rule.metric);
    verdict.breaches.push_back({rule, static_cast<double>(h.count), std::move(message)});
  }
  // The store's own Raft broke its safety: that is a bug in the simulated coordinator, never a
  // finding about the protocol, and no expect block can excuse it.
  const std::uint64_t store_violations = report.store.same_term_leaders +
                                         report.store.commit_conflicts +
                                         report.store.linearizability_violations;
  if (store_violations > 0) {
    Expectation rule;
    rule.metric = "store_safety_violations";
    rule.max = 0;
    verdict.breaches.push_back(
        {rule, static_cast<double>(store_violations),
         fmt::format("store_safety_violations = {}: {} same-term store leaders, {} conflicting "
                     "commits, {} replies out of real-time order; first at {}",
                     store_violations, report.store.same_term_leaders,
                     report.store.commit_conflicts, report.store.linearizability_violations,
                     sim::format_seconds(report.store.first_violation->since_start()))});
  }
  return verdict;
}

}  // namespace electsim::analysis
