// Sweep summaries (runner/sweep.hpp): pooled order statistics per grid point, and the table of
// point metrics that the outputs, plots and merges read.
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

__extension__ typedef __int128 Int128;  // exact sums of nanoseconds over a whole sweep

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
      std::uint64_t leader_changes = 0;
      Int128 service_ns = 0;  // services x simulated time
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
        leader_changes += rec.leader_changes;
        service_ns += static_cast<Int128>(rec.duration_ns) * static_cast<Int128>(rec.services);
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
        if (service_ns > 0) {
          s.leader_changes_per_service_hour =
              static_cast<double>(leader_changes) / (static_cast<double>(service_ns) / 3.6e12);
        }
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
      {"leader_changes_per_service_hour", false, false,
       "thrash: leader changes (elections after each service's first) per service per simulated "
       "hour, all runs pooled; a world of one election is one service",
       [](const PointSummary& s) { return s.leader_changes_per_service_hour; }},
  };
  return metrics;
}

const PointMetric* find_point_metric(std::string_view name) {
  for (const PointMetric& m : point_metrics()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace electsim::runner
