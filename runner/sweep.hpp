// Parameter sweeps: one scenario over a grid of parameter values x seeds (x protocols), every run
// independent, run on as many threads as asked, and summarised per grid point: failover and
// write-outage percentiles, how often split-brain and stale writes happened, cost. Results depend
// only on the sweep's definition, never on the number of threads or on sharding: a sweep split
// into shards (`--shard i/n`) and merged gives byte-identical tables.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/grid.hpp"
#include "runner/loader.hpp"
#include "runner/scenario.hpp"

namespace electsim::runner {

// What to sweep. Runs are numbered protocol-major, then grid point (the first axis outermost),
// then seed: run = (protocol * points + point) * seeds + (seed - first).
struct SweepDefinition {
  std::string scenario_path;  // as given, for replay commands
  std::string scenario_name;
  std::string scenario_digest;         // FNV-1a of the file's text: merges refuse other files
  std::vector<std::string> protocols;  // never empty (the file's own protocol if none asked)
  bool protocols_asked = false;        // replay commands then name --protocol
  std::optional<std::string> variant;
  std::vector<Override> sets;  // fixed --set values, applied before the grid's
  std::vector<GridAxis> axes;
  SeedRange seeds;

  std::uint64_t point_count() const;  // product of the axes' sizes (1 without axes)
  std::uint64_t run_count() const;    // protocols x points x seeds
  // The values of point `point`, one per axis.
  std::vector<std::string> point_values(std::uint64_t point) const;
  // The same as protocol `protocol`'s rows label them: "-" for an axis over another protocol's
  // parameter, which its runs never see.
  std::vector<std::string> point_labels(std::size_t protocol, std::uint64_t point) const;
  nlohmann::json to_json() const;
  static std::optional<SweepDefinition> from_json(const nlohmann::json& j, std::string& error);
  // The fixed `--set protocols.NAME.X=...` values and grid axes over `protocols.NAME.X` that do
  // not reach protocol `protocol`'s runs (another protocol's parameters), as path=value (an
  // axis: path=v1,v2,...): printed as warnings and kept in a column.
  std::vector<std::string> sets_not_reaching(std::size_t protocol) const;
  // "electsim run FILE --protocol P --set a=b ... --seed SEED", shell-quoted, for one run.
  std::string replay_command(std::size_t protocol, std::uint64_t point, std::uint64_t seed) const;
};

// What one run contributes to its point's summary: everything the tables are computed from, so
// that merged shards give exactly the unsharded tables. Durations in ns.
struct RunRecord {
  std::uint64_t run = 0;
  std::uint64_t seed = 0;
  bool complete = true;  // false: the run hit the limit on events (its figures cover less)
  bool expect_ok = true;
  std::int64_t duration_ns = 0;
  std::vector<std::int64_t> failovers_ns;  // observed failovers, in fault order
  // Of observed failovers, to every other live node having heard the new leader (the Raft
  // paper's endpoint), where that was observed.
  std::vector<std::int64_t> failovers_heard_ns;
  std::uint64_t failovers_unresolved = 0;
  std::uint64_t failovers_ridden_out = 0;
  std::uint64_t failovers_regained = 0;
  std::vector<std::int64_t> write_outages_ns;  // of observed failovers
  // Of faults the old leader rode out: from its last accepted write before the fault to its first
  // after it, the time a frozen leader that kept its lease wrote nothing.
  std::vector<std::int64_t> ridden_out_outages_ns;
  std::optional<std::int64_t> first_leader_at_ns;
  std::int64_t leaderless_ns = 0;
  std::int64_t split_brain_ns = 0;
  std::uint64_t same_epoch_leaders = 0;
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t stale_writes_rejected = 0;
  std::uint64_t stale_writes_overwriting = 0;
  std::uint64_t writes_accepted = 0;
  std::uint64_t elections = 0;
  // The fleet's services (1: a world of one election), and their leader changes: each service's
  // elections after its first, summed (a service that never led changes nothing).
  std::uint64_t services = 1;
  std::uint64_t leader_changes = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t store_requests = 0;
  // The coordinator: no leader while the store could not grant; the store unable to grant.
  std::int64_t stall_ns = 0;
  std::int64_t store_unavailable_ns = 0;
  std::uint64_t store_leader_changes = 0;
  std::vector<std::int64_t> store_outages_ns;  // the store's own failovers, in order
  // Service outages (analysis::Outage): every one's length (the first 100), whether the last
  // never ended, their total, and the time from the first accepted write to the run's end.
  std::vector<std::int64_t> outages_ns;
  std::uint64_t outages_unresolved = 0;
  std::int64_t outage_time_ns = 0;
  std::int64_t writing_span_ns = 0;
  std::uint64_t equal_token_writes = 0;
  // Requests to every coordinator: the store, the database server, the Redis masters.
  std::uint64_t coordinator_requests = 0;
  std::uint64_t events = 0;
  std::string trace_hash;

  nlohmann::json to_json() const;
  static std::optional<RunRecord> from_json(const nlohmann::json& j, std::string& error);
};

// One grid point of one protocol, over its seeds.
struct PointSummary {
  std::size_t protocol = 0;
  std::uint64_t point = 0;
  std::uint64_t runs = 0;
  std::uint64_t runs_incomplete = 0;
  std::uint64_t runs_breaking_expect = 0;
  std::uint64_t failovers = 0;      // observed, over all runs: the failover percentiles' samples
  std::uint64_t write_outages = 0;  // the write outage percentiles' samples
  std::uint64_t failovers_unresolved = 0;
  std::uint64_t failovers_ridden_out = 0;
  std::uint64_t failovers_regained = 0;
  std::optional<std::int64_t> failover_p50_ns, failover_p90_ns, failover_p99_ns, failover_max_ns;
  std::uint64_t failovers_heard = 0;  // the heard percentiles' samples
  std::uint64_t store_outages = 0;    // the store outage percentiles' samples
  std::optional<std::int64_t> store_outage_p50_ns, store_outage_p99_ns, store_outage_max_ns;
  std::optional<std::int64_t> failover_heard_p50_ns, failover_heard_p99_ns, failover_heard_max_ns;
  std::optional<std::int64_t> write_outage_p50_ns, write_outage_p99_ns;
  std::uint64_t ridden_out_outages = 0;  // the ridden-out outage percentiles' samples
  std::optional<std::int64_t> ridden_out_outage_p50_ns, ridden_out_outage_p99_ns,
      ridden_out_outage_max_ns;
  std::optional<double> leaderless_fraction;  // leaderless time over simulated time
  std::optional<double> split_brain_probability;
  std::optional<std::int64_t> split_brain_time_mean_ns;  // over all runs, zeros included, rounded
  std::optional<std::int64_t> split_brain_time_max_ns;
  std::optional<double> stale_write_probability;  // runs where the sink accepted a stale write
  std::optional<double> overwrite_probability;    // runs where one landed on newer data
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t stale_writes_rejected = 0;
  std::optional<double> same_epoch_probability;
  std::uint64_t same_epoch_leaders = 0;
  std::optional<double> messages_per_second;
  std::optional<double> store_requests_per_second;
  std::optional<double> stall_fraction;             // stall time over simulated time, pooled
  std::optional<double> store_availability;         // time the store could grant, pooled
  std::optional<double> store_leader_changes_mean;  // per run
  // Thrash: leader changes (elections after each service's first) per service per simulated
  // hour, all runs pooled.
  std::optional<double> leader_changes_per_service_hour;
  std::optional<std::uint64_t> worst_seed;  // most split-brain, else slowest failover
  // Service outages, whatever the cause: their number (the percentiles' samples), percentiles,
  // the runs that never wrote again, and the share of time the service could write.
  std::uint64_t outages = 0;
  std::uint64_t outages_unresolved = 0;
  std::optional<std::int64_t> outage_p50_ns, outage_p99_ns, outage_max_ns;
  std::optional<double> writable_fraction;
  std::optional<double> equal_token_probability;
  std::optional<double> coordinator_requests_per_second;
};

// A finished (or interrupted) sweep: the definition and the records of the runs that finished,
// in run order.
// Below this many samples a p99 is the largest sample or next to it, not a stable estimate: the
// table marks such a p99 and the CSV and JSON say so.
inline constexpr std::uint64_t kStableP99Samples = 100;

struct SweepResult {
  SweepDefinition definition;
  std::vector<RunRecord> records;
  bool interrupted = false;
  std::uint64_t runs_expected = 0;  // runs this sweep (or shard) was asked for
  // The metrics the sweep's plot draws (--metrics or the file's sweep.metrics), carried in a
  // part's header so that `merge --plot` draws the very plot the unsharded sweep would.
  std::vector<std::string> plot_metrics;
};

struct SweepProgress {
  std::uint64_t done = 0;
  std::uint64_t total = 0;
};

struct SweepOptions {
  unsigned jobs = 1;
  std::optional<Shard> shard;
  const std::atomic<bool>* stop = nullptr;  // set it to stop after the runs under way
  // Called from the calling thread about every 200 ms of wall time while runs are going, and once
  // at the end (wall time only paces it; it never reaches the results).
  std::function<void(const SweepProgress&)> progress;
  // Told, from the calling thread, when fewer threads run than `jobs` asks for other than for
  // want of runs: the cap of runner/threads.hpp, or a system that refuses a thread.
  std::function<void(const std::string&)> notice;
};

// Loads every (protocol, point) once: problems come back as messages naming the point, and then
// nothing runs.
struct SweepPlan {
  SweepDefinition definition;
  std::vector<Scenario> scenarios;  // protocol-major, one per (protocol, point)
};
struct PlanOutcome {
  std::optional<SweepPlan> plan;
  std::vector<std::string> problems;
};
PlanOutcome plan_sweep(const std::string& source_text, SweepDefinition definition,
                       const Limits& limits = {});

SweepResult run_sweep(const SweepPlan& plan, const SweepOptions& options);

// Summaries per (protocol, point), protocol-major, from whatever records there are.
std::vector<PointSummary> summarise(const SweepResult& result);

// Outputs. All are functions of (definition, records) only.
std::string sweep_points_csv(const SweepResult& result, const std::vector<PointSummary>& points);
std::string sweep_runs_csv(const SweepResult& result);
nlohmann::json sweep_json(const SweepResult& result, const std::vector<PointSummary>& points);
std::string format_sweep_table(const SweepResult& result, const std::vector<PointSummary>& points);

// A shard's partial result: JSON Lines, a header line with the definition and the shard, then
// one line per finished run.
std::string sweep_part(const SweepResult& result, const Shard& shard);
// Reads parts and combines them into the unsharded result. Every run of the definition must be
// present exactly once, and every part must come from the same definition.
struct MergeOutcome {
  std::optional<SweepResult> result;
  std::vector<std::string> problems;
};
MergeOutcome merge_parts(const std::vector<PartText>& parts);

// A scenario file's `sweep` section: the sweep it was written for, used when the command line
// names no grid (docs/sweeps.md). Problems name their JSON pointer.
struct SweepDefaults {
  std::vector<std::string> grid;       // "path=values", as --grid
  std::optional<std::string> seeds;    // as --seeds
  std::vector<std::string> protocols;  // as --protocols
  std::vector<std::string> metrics;    // as --metrics (the plot's panels)
};
SweepDefaults read_sweep_defaults(const nlohmann::json& document,
                                  std::vector<std::string>& problems);

// The per-point metrics a plot or a table can show, with their units.
struct PointMetric {
  std::string name;  // "failover_p99"
  bool duration = false;
  bool probability = false;
  std::string meaning;
  std::function<std::optional<double>(const PointSummary&)> value;  // durations in ns
};
const std::vector<PointMetric>& point_metrics();
const PointMetric* find_point_metric(std::string_view name);

}  // namespace electsim::runner
