// The machine summary of a run (`--json`; docs/metrics.md names its fields), beside the text
// summary of summary.cpp: durations in nanoseconds and in seconds, absent figures as null.
#include "analysis/summary.hpp"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/fault.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::analysis {

namespace {

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
