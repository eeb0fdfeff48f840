// Sweeps over the real simulator: the same tables whatever the thread count or sharding, every
// run the run `electsim run --set ... --seed ...` makes, the lesson of fencing across TTLs, and
// the errors a user meets (bad grid values, parts of different sweeps, missing shards).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "runner/sweep.hpp"
#include "runner/sweep_plot.hpp"
#include "runner/threads.hpp"

using namespace electsim;

namespace {

runner::GridAxis axis(const std::string& text) {
  auto parsed = runner::parse_grid_axis(text);
  INFO(parsed.error);
  REQUIRE(parsed.value);
  return *parsed.value;
}

runner::SweepPlan plan(std::vector<std::string> grid, runner::SeedRange seeds,
                       std::vector<std::string> protocols = {},
                       std::vector<runner::Override> sets = {}) {
  runner::SweepDefinition d;
  d.scenario_path = "scenarios/lease-gc-pause-fence.json";
  for (const std::string& g : grid) d.axes.push_back(axis(g));
  d.seeds = seeds;
  d.protocols = std::move(protocols);
  d.protocols_asked = !d.protocols.empty();
  d.sets = std::move(sets);
  runner::PlanOutcome outcome = runner::plan_sweep(runner::flagship_scenario_text(), std::move(d));
  for (const auto& p : outcome.problems) UNSCOPED_INFO(p);
  REQUIRE(outcome.plan);
  return std::move(*outcome.plan);
}

runner::SweepResult sweep(const runner::SweepPlan& p, unsigned jobs,
                          std::optional<runner::Shard> shard = std::nullopt) {
  runner::SweepOptions options;
  options.jobs = jobs;
  options.shard = shard;
  return runner::run_sweep(p, options);
}

struct Outputs {
  std::string points_csv;
  std::string runs_csv;
  std::string json;
  std::string table;
};

Outputs outputs(const runner::SweepResult& r) {
  const auto points = runner::summarise(r);
  return {runner::sweep_points_csv(r, points), runner::sweep_runs_csv(r),
          runner::sweep_json(r, points).dump(2), runner::format_sweep_table(r, points)};
}

const runner::PointSummary& point_where(const runner::SweepResult& r,
                                        const std::vector<runner::PointSummary>& points,
                                        const std::vector<std::string>& values) {
  for (const auto& s : points) {
    if (r.definition.point_values(s.point) == values) return s;
  }
  FAIL("no such grid point");
  return points.front();
}

// Plans a shipped sweep file with its own grid replaced by `axes`, over seeds 1..seeds.
runner::SweepPlan shipped(const char* file, std::vector<runner::GridAxis> axes,
                          std::uint64_t seeds) {
  const char* source = std::getenv("ELECTSIM_SOURCE_DIR");
  const std::string path =
      std::string(source != nullptr ? source : ".") + "/scenarios/sweeps/" + file;
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  runner::SweepDefinition d;
  d.scenario_path = path;
  d.axes = std::move(axes);
  d.seeds = {1, seeds};
  runner::PlanOutcome planned = runner::plan_sweep(text.str(), std::move(d));
  for (const auto& p : planned.problems) UNSCOPED_INFO(p);
  REQUIRE(planned.plan);
  return std::move(*planned.plan);
}

// The shortest and the longest failover any run of the sweep observed, in ns.
std::pair<std::int64_t, std::int64_t> failover_range(const runner::SweepResult& r) {
  std::pair<std::int64_t, std::int64_t> range{INT64_MAX, INT64_MIN};
  for (const auto& run : r.records) {
    for (const std::int64_t f : run.failovers_ns) {
      range.first = std::min(range.first, f);
      range.second = std::max(range.second, f);
    }
  }
  REQUIRE(range.first <= range.second);
  return range;
}

double seconds(const std::optional<std::int64_t>& ns) {
  REQUIRE(ns.has_value());
  return static_cast<double>(*ns) * 1e-9;
}

}  // namespace

TEST_CASE("sweep: the outputs are identical for one thread and for three") {
  const auto p = plan({"protocol.ttl=1s,3s", "workload.work=10ms,80ms"}, {1, 5});
  const runner::SweepResult one = sweep(p, 1);
  const runner::SweepResult three = sweep(p, 3);
  REQUIRE(one.records.size() == 20);
  CHECK_FALSE(one.interrupted);
  const Outputs a = outputs(one);
  const Outputs b = outputs(three);
  CHECK(a.points_csv == b.points_csv);
  CHECK(a.runs_csv == b.runs_csv);
  CHECK(a.json == b.json);
  CHECK(a.table == b.table);
}

TEST_CASE("sweep: --jobs 1024 starts at most 4 threads per core, says so once, same outputs") {
  const auto p = plan({"protocol.ttl=1s,3s", "workload.work=10ms,80ms"}, {1, 5});
  runner::SweepOptions options;
  options.jobs = 1024;
  std::vector<std::string> notices;
  options.notice = [&](const std::string& n) { notices.push_back(n); };
  const runner::SweepResult many = runner::run_sweep(p, options);
  const Outputs a = outputs(sweep(p, 1));
  const Outputs b = outputs(many);
  CHECK(a.runs_csv == b.runs_csv);
  CHECK(a.json == b.json);
  // 20 runs need 20 threads; only a machine with fewer than 5 cores caps them.
  if (runner::max_worker_threads() < 20) {
    REQUIRE(notices.size() == 1);
    CHECK_THAT(notices[0], Catch::StartsWith(fmt::format("--jobs 1024 capped at {} (",
                                                         runner::max_worker_threads())));
  } else {
    CHECK(notices.empty());
  }
}

TEST_CASE("sweep: runs are numbered protocol-major, then grid point, then seed") {
  const auto p = plan({"faults.0.duration=3s,6s"}, {7, 9}, {"lease", "raft"});
  const runner::SweepResult r = sweep(p, 2);
  REQUIRE(r.records.size() == 12);
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    CHECK(r.records[i].run == i);
    CHECK(r.records[i].seed == 7 + i % 3);
  }
  const auto points = runner::summarise(r);
  REQUIRE(points.size() == 4);
  CHECK(points[2].protocol == 1);
  CHECK(points[2].point == 0);
  CHECK(points[3].runs == 3);
}

TEST_CASE("sweep: every run is the run electsim run makes with that seed and those values") {
  const auto p = plan({"protocol.ttl=1s,3s"}, {3, 4}, {}, {{"workload.work", "20ms"}});
  const runner::SweepResult r = sweep(p, 2);
  REQUIRE(r.records.size() == 4);
  for (const runner::RunRecord& rec : r.records) {
    const std::uint64_t point = rec.run / 2;
    runner::LoadOptions o;
    o.overrides = {{"workload.work", "20ms"},
                   {"protocol.ttl", r.definition.point_values(point).front()}};
    o.seed = rec.seed;
    const auto loaded = runner::load_scenario_text(runner::flagship_scenario_text(), "flagship", o);
    REQUIRE(loaded.scenario);
    const runner::RunResult single = runner::run_scenario(*loaded.scenario, {});
    INFO("run " << rec.run << " seed " << rec.seed);
    CHECK(single.trace_hash == rec.trace_hash);
    CHECK(single.report.messages_sent == rec.messages_sent);
  }
  const std::string replay = r.definition.replay_command(0, 1, 4);
  CHECK(replay ==
        "electsim run scenarios/lease-gc-pause-fence.json --set workload.work=20ms --set "
        "protocol.ttl=3s --seed 4");
}

TEST_CASE("sweep: shards merged give exactly the unsharded outputs") {
  const auto p = plan({"faults.0.duration=3s,6s"}, {1, 4}, {"lease", "raft"});
  const Outputs whole = outputs(sweep(p, 2));
  std::vector<runner::PartText> parts;
  for (std::uint64_t i = 1; i <= 3; ++i) {
    const runner::Shard shard{i, 3};
    const runner::SweepResult part = sweep(p, 1, shard);
    CHECK(part.records.size() == (i == 1 ? 6u : 5u));
    parts.push_back({"part" + std::to_string(i), runner::sweep_part(part, shard)});
  }
  // Parts may come in any order.
  std::swap(parts[0], parts[2]);
  const runner::MergeOutcome merged = runner::merge_parts(parts);
  for (const auto& m : merged.problems) UNSCOPED_INFO(m);
  REQUIRE(merged.result);
  const Outputs combined = outputs(*merged.result);
  CHECK(combined.points_csv == whole.points_csv);
  CHECK(combined.runs_csv == whole.runs_csv);
  CHECK(combined.json == whole.json);
}

// The two parts of `p` split in two shards, as two machines would write them.
std::pair<std::string, std::string> two_parts(const runner::SweepPlan& p) {
  const runner::Shard first{1, 2};
  const runner::Shard second{2, 2};
  return {runner::sweep_part(sweep(p, 1, first), first),
          runner::sweep_part(sweep(p, 1, second), second)};
}

TEST_CASE("sweep: merge refuses a missing shard, a duplicate and a part of another sweep") {
  const auto p = plan({"protocol.ttl=1s,3s"}, {1, 2});
  const auto [a, b] = two_parts(p);
  const auto other_plan = plan({"protocol.ttl=1s,4s"}, {1, 2});
  const std::string other = two_parts(other_plan).second;

  const auto missing = runner::merge_parts({{"a.part", a}});
  CHECK_FALSE(missing.result);
  REQUIRE(missing.problems.size() == 1);
  CHECK_THAT(missing.problems[0], Catch::Contains("2 of the sweep's 4 runs"));

  const auto twice = runner::merge_parts({{"a.part", a}, {"b.part", b}, {"a-again.part", a}});
  CHECK_FALSE(twice.result);
  REQUIRE_FALSE(twice.problems.empty());
  CHECK_THAT(twice.problems[0], Catch::Contains("also in a.part"));

  const auto mixed = runner::merge_parts({{"a.part", a}, {"other.part", other}});
  CHECK_FALSE(mixed.result);
  REQUIRE_FALSE(mixed.problems.empty());
  CHECK_THAT(mixed.problems[0], Catch::Contains("different sweep"));

  const auto junk = runner::merge_parts({{"junk.part", "not json\n"}});
  CHECK_FALSE(junk.result);
  CHECK_THAT(junk.problems.at(0), Catch::Contains("junk.part:1"));
}

// The text of `part` with the first occurrence of `from` (after its header line) replaced.
std::string tampered(const std::string& part, const std::string& from, const std::string& to) {
  const std::size_t body = part.find('\n') + 1;
  const std::size_t at = part.find(from, body);
  REQUIRE(at != std::string::npos);
  return part.substr(0, at) + to + part.substr(at + from.size());
}

TEST_CASE("sweep: merge refuses a part whose numbers no run could have produced") {
  const auto p = plan({"protocol.ttl=1s,3s"}, {1, 2});
  const auto [a, b] = two_parts(p);
  REQUIRE(runner::merge_parts({{"a.part", a}, {"b.part", b}}).result);
  auto [from, to, says] = GENERATE(table<std::string, std::string, std::string>({
      {"\"messages_sent\":", "\"messages_sent\":-1,\"x\":", "\"messages_sent\" must be a whole"},
      {"\"elections\":", "\"elections\":1.5,\"x\":", "\"elections\" must be a whole"},
      {"\"split_brain_ns\":", "\"split_brain_ns\":99999999999999,\"x\":",
       "\"split_brain_ns\" must be whole nanoseconds from 0 to"},
      {"\"duration_ns\":", "\"duration_ns\":-5,\"x\":", "\"duration_ns\" must be whole"},
      {"\"events\":", "\"events\":18446744073709551615,\"x\":", "\"events\" is above"},
      {"\"trace_hash\":\"", "\"trace_hash\":\"zz", "16 hex digits"},
  }));
  INFO(from << " -> " << to);
  const auto merged = runner::merge_parts({{"a.part", tampered(a, from, to)}, {"b.part", b}});
  CHECK_FALSE(merged.result);
  REQUIRE_FALSE(merged.problems.empty());
  CHECK_THAT(merged.problems[0], Catch::Contains("a.part:2") && Catch::Contains(says));
}

TEST_CASE("sweep: merge refuses a part whose header lies about its shard") {
  const auto p = plan({"protocol.ttl=1s,3s"}, {1, 2});
  const auto [a, b] = two_parts(p);
  auto swap_header = [](const std::string& part, const std::string& from, const std::string& to) {
    const std::size_t at = part.find(from);
    REQUIRE(at != std::string::npos);
    return part.substr(0, at) + to + part.substr(at + from.size());
  };
  const auto wrong_shard = runner::merge_parts(
      {{"a.part", swap_header(a, "\"shard\":\"1/2\"", "\"shard\":\"2/2\"")}, {"b.part", b}});
  REQUIRE_FALSE(wrong_shard.problems.empty());
  CHECK_THAT(wrong_shard.problems[0], Catch::Contains("does not belong to shard 2/2"));
  const auto wrong_count = runner::merge_parts(
      {{"a.part", swap_header(a, "\"runs_expected\":2", "\"runs_expected\":3")}, {"b.part", b}});
  REQUIRE_FALSE(wrong_count.problems.empty());
  CHECK_THAT(wrong_count.problems[0], Catch::Contains("owns 2 runs, but the header says 3"));
  // A finished shard missing one of its runs: a line was lost.
  const std::size_t last_line = a.rfind('\n', a.size() - 2);
  const auto short_part =
      runner::merge_parts({{"a.part", a.substr(0, last_line + 1)}, {"b.part", b}});
  REQUIRE_FALSE(short_part.problems.empty());
  CHECK_THAT(short_part.problems[0],
             Catch::Contains("holds 1 runs, but shard 1/2 finished and owns 2"));
}

TEST_CASE(
    "sweep: with fencing no stale write is accepted at any TTL, without it one is once "
    "the pause outlasts the TTL") {
  // The flagship, with the careless client so that every seed writes after the pause: the
  // leader is frozen for 6s at 4.9633s.
  const auto p = plan({"protocol.ttl=1s,2s,12s", "protocol.fencing=true,false"}, {1, 4}, {},
                      {{"protocol.recheck_before_write", "false"}});
  const runner::SweepResult r = sweep(p, 2);
  const auto points = runner::summarise(r);
  for (const char* ttl : {"1s", "2s", "12s"}) {
    INFO("ttl " << ttl);
    const auto& fenced = point_where(r, points, {ttl, "true"});
    const auto& open = point_where(r, points, {ttl, "false"});
    REQUIRE(fenced.runs == 4);
    CHECK(fenced.stale_write_probability == 0.0);
    CHECK(fenced.stale_writes_accepted == 0);
    CHECK(fenced.overwrite_probability == 0.0);
    if (std::string(ttl) == "12s") {
      // The pause is shorter than the lease: the cluster rides it out.
      CHECK(open.stale_write_probability == 0.0);
      CHECK(open.split_brain_probability == 0.0);
      CHECK(open.failovers == 0);
    } else {
      CHECK(open.stale_write_probability == 1.0);
      CHECK(open.overwrite_probability == 1.0);
      CHECK(fenced.stale_writes_rejected > 0);
      CHECK(fenced.split_brain_probability == 1.0);
      REQUIRE(fenced.failover_p50_ns);
      CHECK(*fenced.failover_p50_ns > 0);
    }
  }
}

TEST_CASE("sweep: a grid value the scenario refuses names the point and the field") {
  runner::SweepDefinition d;
  d.scenario_path = "flagship.json";
  d.axes.push_back(axis("protocol.ttl=2s,soon"));
  d.seeds = {1, 2};
  const runner::PlanOutcome outcome =
      runner::plan_sweep(runner::flagship_scenario_text(), std::move(d));
  CHECK_FALSE(outcome.plan);
  REQUIRE_FALSE(outcome.problems.empty());
  CHECK_THAT(outcome.problems[0], Catch::Contains("/protocol/ttl"));
  CHECK_THAT(outcome.problems[0], Catch::Contains("grid point protocol.ttl=soon"));
}

TEST_CASE("sweep: an axis set twice is refused before anything runs") {
  runner::SweepDefinition d;
  d.scenario_path = "flagship.json";
  d.axes.push_back(axis("protocol.ttl=2s,3s"));
  d.sets.push_back({"protocol.ttl", "4s"});
  d.seeds = {1, 1};
  const runner::PlanOutcome outcome =
      runner::plan_sweep(runner::flagship_scenario_text(), std::move(d));
  CHECK_FALSE(outcome.plan);
  REQUIRE(outcome.problems.size() == 1);
  CHECK_THAT(outcome.problems[0], Catch::Contains("set twice"));
}

TEST_CASE("sweep: a stopped sweep keeps no unfinished run and says it was interrupted") {
  const auto p = plan({"protocol.ttl=1s,3s"}, {1, 3});
  std::atomic<bool> stop{true};
  runner::SweepOptions options;
  options.jobs = 2;
  options.stop = &stop;
  const runner::SweepResult r = runner::run_sweep(p, options);
  CHECK(r.interrupted);
  CHECK(r.records.empty());
  const auto points = runner::summarise(r);
  REQUIRE(points.size() == 2);
  CHECK(points[0].runs == 0);
  CHECK_FALSE(points[0].split_brain_probability);
  CHECK(runner::sweep_json(r, points)["complete"] == false);
}

TEST_CASE("sweep: the file's sweep section is read and its errors are located") {
  std::vector<std::string> problems;
  const auto good = runner::read_sweep_defaults(
      nlohmann::json::parse(R"({"sweep": {"grid": ["protocol.ttl=1s..3s:1s"], "seeds": 50,
                                          "protocols": ["lease"], "metrics": ["failover_p99"]}})"),
      problems);
  CHECK(problems.empty());
  CHECK(good.grid == std::vector<std::string>{"protocol.ttl=1s..3s:1s"});
  CHECK(good.seeds == "50");
  CHECK(good.metrics == std::vector<std::string>{"failover_p99"});
  runner::read_sweep_defaults(
      nlohmann::json::parse(R"({"sweep": {"grid": ["protocol.ttl=3s..1s:1s", 5], "seeds": "x",
                                          "metrics": ["speed"], "colour": 1}})"),
      problems);
  const std::string all = [&] {
    std::string s;
    for (const auto& p : problems) s += p + "\n";
    return s;
  }();
  INFO(all);
  CHECK_THAT(all, Catch::Contains("at /sweep/grid/0"));
  CHECK_THAT(all, Catch::Contains("at /sweep/grid/1"));
  CHECK_THAT(all, Catch::Contains("at /sweep/seeds"));
  CHECK_THAT(all, Catch::Contains("at /sweep/metrics/0"));
  CHECK_THAT(all, Catch::Contains("at /sweep/colour"));
}

TEST_CASE("sweep: the plot has a panel per metric and a line per protocol") {
  const auto p = plan({"faults.0.duration=3s,6s"}, {1, 2}, {"lease", "raft"});
  const runner::SweepResult r = sweep(p, 2);
  const auto points = runner::summarise(r);
  const std::string svg =
      runner::sweep_plot_svg(r, points, {"failover_p50", "split_brain_probability"});
  CHECK_THAT(svg, Catch::StartsWith("<?xml") || Catch::StartsWith("<svg"));
  CHECK_THAT(svg, Catch::Contains("failover p50"));
  CHECK_THAT(svg, Catch::Contains("split brain probability"));
  CHECK_THAT(svg, Catch::Contains("faults.0.duration"));
  CHECK_THAT(svg, Catch::Contains(">lease<"));
  CHECK_THAT(svg, Catch::Contains(">raft<"));
}

TEST_CASE("run: a run whose cancel flag is set stops early and says so") {
  runner::LoadResult loaded =
      runner::load_scenario_text(runner::flagship_scenario_text(), "flagship", {});
  REQUIRE(loaded.scenario);
  std::atomic<bool> cancel{true};
  runner::RunOptions options;
  options.cancel = &cancel;
  const runner::RunResult r = runner::run_scenario(*loaded.scenario, options);
  CHECK(r.stats.cancelled);
  CHECK(r.stats.end < sim::Time(loaded.scenario->world.duration));
  REQUIRE(r.errors.size() == 1);
  CHECK_THAT(r.errors[0], Catch::Contains("cancelled"));
  cancel = false;
  const runner::RunResult full = runner::run_scenario(*loaded.scenario, options);
  CHECK_FALSE(full.stats.cancelled);
  CHECK(full.errors.empty());
}

TEST_CASE(
    "sweep: under random GC pauses and crashes fencing prevents every overwrite at any TTL, and "
    "without it the careful client is safer than the careless one, not safe") {
  const runner::SweepResult r =
      sweep(shipped("ttl-vs-gc-pause.json",
                    {axis("protocol.ttl=1s,3s,8s"), axis("protocol.fencing=true,false"),
                     axis("protocol.recheck_before_write=true,false")},
                    100),
            2);
  const auto points = runner::summarise(r);
  std::vector<double> careless;
  std::vector<double> careful;
  std::vector<double> split_brain;
  for (const char* ttl : {"1s", "3s", "8s"}) {
    INFO("ttl " << ttl);
    for (const char* recheck : {"true", "false"}) {
      const auto& fenced = point_where(r, points, {ttl, "true", recheck});
      REQUIRE(fenced.runs == 100);
      CHECK(fenced.overwrite_probability == 0.0);
      CHECK(fenced.same_epoch_leaders == 0);
      // Leader crashes as well as pauses: failovers at every TTL, pauses ridden out too.
      CHECK(fenced.failovers > 0);
      CHECK(fenced.failovers_ridden_out > 0);
    }
    careful.push_back(*point_where(r, points, {ttl, "false", "true"}).overwrite_probability);
    careless.push_back(*point_where(r, points, {ttl, "false", "false"}).overwrite_probability);
    split_brain.push_back(*point_where(r, points, {ttl, "true", "true"}).split_brain_probability);
    CHECK(careful.back() <= careless.back());
  }
  // Median pause 1s: a 1s TTL turns most pauses into a takeover, 8s very few.
  CHECK(careless[0] >= 0.5);
  CHECK(careless[0] > careless[2]);
  CHECK(split_brain[0] > split_brain[1]);
  CHECK(split_brain[1] > split_brain[2]);
  // The check before the write narrows the window, but a pause can still fall between the check
  // and the write leaving the process: the careful client overwrites too, far less often.
  CHECK(careful[0] > 0.0);
  CHECK(careful[0] < careless[0] / 10);
}

TEST_CASE("sweep: a --set that reaches no run of a protocol is named in a column, never dropped") {
  const runner::SweepPlan p =
      plan({}, {1, 1}, {"lease", "raft"}, {{"protocols.raft.pre_vote", "true"}});
  CHECK(p.definition.sets_not_reaching(0) ==
        std::vector<std::string>{"protocols.raft.pre_vote=true"});
  CHECK(p.definition.sets_not_reaching(1).empty());
  const runner::SweepResult r = sweep(p, 1);
  const std::string csv = outputs(r).points_csv;
  const auto header_end = csv.find('\n');
  CHECK(csv.substr(0, header_end).ends_with(",sets_not_reaching"));
  CHECK_THAT(csv,
             Catch::Contains("\nlease,") && Catch::Contains(",protocols.raft.pre_vote=true\n"));
  CHECK_THAT(csv, Catch::Contains("\nraft,"));
  const auto raft_row = csv.substr(csv.find("\nraft,") + 1);
  CHECK(raft_row.substr(0, raft_row.find('\n')).ends_with(","));
}

TEST_CASE(
    "sweep: client-go failover agrees with the timing model computed on its own, and the "
    "mistaken jitter reading runs about 7 per cent short") {
  // The model (docs/references.md) gives medians of 16.47s with JitterFactor 1.2 and 15.23s with
  // 0.2, for three replicas with client-go's defaults.
  const runner::SweepResult r =
      sweep(shipped("client-go-failover.json", {axis("protocol.jitter_factor=0.2,1.2")}, 20), 2);
  const auto points = runner::summarise(r);
  const auto& mistaken = point_where(r, points, {"0.2"});
  const auto& client_go = point_where(r, points, {"1.2"});
  REQUIRE(client_go.failovers > 1000);
  CHECK(seconds(client_go.failover_p50_ns) == Approx(16.47).epsilon(0.02));
  CHECK(seconds(mistaken.failover_p50_ns) == Approx(15.23).epsilon(0.02));
  CHECK(seconds(client_go.failover_p50_ns) > seconds(mistaken.failover_p50_ns) * 1.05);
  // Never later than the lease duration plus two of the longest polls (4.4s each).
  for (const auto* p : {&mistaken, &client_go}) {
    CHECK(seconds(p->failover_max_ns) < 15 + 2 * 4.4);
    CHECK(p->split_brain_probability == 0.0);
  }
}

TEST_CASE(
    "sweep: the Raft paper's Figure 16: no randomness never elects, and with candidates that "
    "reach the others within 2ms, 5ms of randomness gives the published 287ms median and 50ms "
    "a worst case near the published 513ms") {
  const runner::SweepResult r =
      sweep(shipped("raft-figure-16.json",
                    {axis("protocol.election_timeout_max=150ms,155ms,175ms,200ms"),
                     axis("disk.fsync=2ms,7ms")},
                    40),
            2);
  const auto points = runner::summarise(r);
  for (const char* fsync : {"2ms", "7ms"}) {
    INFO("fsync " << fsync);
    CHECK(point_where(r, points, {"150ms", fsync}).failovers == 0);
    const auto& narrow = point_where(r, points, {"155ms", fsync});
    const auto& wider = point_where(r, points, {"175ms", fsync});
    REQUIRE(wider.failovers_heard > 500);
    // More randomness, fewer split votes: faster at the median and in the tail.
    CHECK(seconds(narrow.failover_heard_p50_ns) > seconds(wider.failover_heard_p50_ns));
    CHECK(seconds(narrow.failover_heard_p99_ns) > seconds(wider.failover_heard_p99_ns));
    CHECK(point_where(r, points, {"200ms", fsync}).same_epoch_leaders == 0);
  }
  CHECK(seconds(point_where(r, points, {"155ms", "2ms"}).failover_heard_p50_ns) ==
        Approx(0.287).epsilon(0.15));
  CHECK(seconds(point_where(r, points, {"200ms", "2ms"}).failover_heard_max_ns) < 0.513 * 1.15);
  // A candidate whose RequestVote waits 7ms for its own fsync splits the vote far more often.
  CHECK(seconds(point_where(r, points, {"155ms", "7ms"}).failover_heard_p50_ns) > 0.5);
}

TEST_CASE(
    "sweep: Consul's failover is uniform between 1.5 and 2 TTLs plus the lock-delay, as the "
    "servers' session timers give it") {
  // docs/references.md: with TTL 15s and lock-delay 15s the model's median is 41.26s, its p99
  // 44.93s, and nothing comes before 37.5s or (but for network time) after 45s.
  const runner::SweepResult r =
      sweep(shipped("consul-failover.json", {axis("protocol.ttl=15s")}, 8), 2);
  const auto points = runner::summarise(r);
  const auto& p = point_where(r, points, {"15s"});
  REQUIRE(p.failovers > 300);
  CHECK(seconds(p.failover_p50_ns) == Approx(41.26).epsilon(0.02));
  CHECK(seconds(p.failover_p99_ns) == Approx(44.93).epsilon(0.01));
  CHECK(seconds(p.failover_max_ns) < 45.1);
  CHECK(failover_range(r).first > 37'500'000'000);
  CHECK(p.split_brain_probability == 0.0);
}

TEST_CASE(
    "sweep: a PostgreSQL lock goes idle + count x interval after the dead holder last spoke, "
    "and a waiter takes it at its next retry") {
  // docs/references.md: keepalives 5s / 1s / 3 release the lock a uniform (7s, 8s] after the
  // crash (the holder writes every second); waiters retry every second.
  const runner::SweepResult r =
      sweep(shipped("postgres-failover.json", {axis("postgres.tcp_keepalives_idle=5s")}, 8), 2);
  const auto points = runner::summarise(r);
  const auto& p = point_where(r, points, {"5s"});
  REQUIRE(p.failovers > 500);
  CHECK(failover_range(r).first > 7'000'000'000);
  CHECK(failover_range(r).second < 9'100'000'000);
  CHECK(seconds(p.failover_p50_ns) > 7.4);
  CHECK(seconds(p.failover_p50_ns) < 8.0);
}

TEST_CASE(
    "sweep: a ZooKeeper session goes on the first tick after its last ping plus its timeout, as "
    "the timing model computed on its own gives it") {
  // docs/references.md: a 4s session on 2s ticks, pinged every 4/3s: model median 4.332s, p99
  // 5.770s, never before 4 - 4/3 s nor after 4 + 2 s.
  const runner::SweepResult r =
      sweep(shipped("zookeeper-failover.json", {axis("protocol.session_timeout=4s")}, 8), 2);
  const auto points = runner::summarise(r);
  const auto& p = point_where(r, points, {"4s"});
  REQUIRE(p.failovers > 1000);
  CHECK(seconds(p.failover_p50_ns) == Approx(4.332).epsilon(0.02));
  CHECK(seconds(p.failover_p99_ns) == Approx(5.770).epsilon(0.02));
  CHECK(failover_range(r).first > 2'666'000'000);
  CHECK(failover_range(r).second < 6'050'000'000);
}

TEST_CASE(
    "sweep: a crashed Redlock holder's keys go the expiry after its last extension, and a waiter "
    "takes a majority at its next attempt") {
  // docs/references.md: expiry 8s extended every 8/3 s, attempts 50 to 250ms apart: model median
  // 6.754s, p99 8.083s; nothing before 8 - 8/3 s.
  const runner::SweepResult r =
      sweep(shipped("redlock-failover.json", {axis("protocol.expiry=8s")}, 6), 2);
  const auto points = runner::summarise(r);
  const auto& p = point_where(r, points, {"8s"});
  REQUIRE(p.failovers > 300);
  CHECK(seconds(p.failover_p50_ns) == Approx(6.754).epsilon(0.03));
  CHECK(seconds(p.failover_p99_ns) == Approx(8.083).epsilon(0.03));
  CHECK(failover_range(r).first > 5'333'000'000);
  CHECK(p.split_brain_probability == 0.0);
}
