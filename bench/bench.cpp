// electsim_bench: throughput of the real kernel on fixed workloads, printed as figures.
//   heartbeat-5  5 nodes, node 0 a fixed leader heartbeating every 50 ms; latency uniform whole ms
//                [1, 10]; followers ack and reset an election timer to uniform whole ms [150, 300].
//   baseline-5   the same work as a minimal hand-written priority-queue loop: the yardstick.
//   raft-5       Raft election in steady state with heartbeat-5's shape and numbers.
//   lease-5      the lease protocol in steady state (5 nodes, store-judged TTL 2 s, writes every
//                100 ms) through the scenario runner, analysis on, trace off.
//   lease-5-store-3  lease-5 with a replicated store of 3 members (etcd's defaults), and its speed
//                as a share of lease-5's, both measured in this one process.
//   sweep-lease  a sweep: --runs seeds (default 1000) of 60 s of the lease protocol on 5 nodes,
//                with leader GC pauses drawn from a lognormal at a Poisson rate, first on one
//                thread and then on --jobs threads (default: the machine's cores).
//   fleet-10k, fleet-100k  a fleet: 10,000 (100,000) services of 3 lease nodes, TTL 10 s, on a
//                3-member store of etcd's capacity (33 us a request, one at a time), for 600 (60)
//                simulated seconds, in a process of its own: events per wall second, peak memory,
//                and the speed as a share of lease-5's events per wall second in the same run
//                (the median of three runs of 36000 simulated seconds).
//   fleet-scale  that fleet with 10, 100, 1000 and 10,000 services, for 1,200,000 simulated
//                seconds divided by the count (about as many events in every row), each in a
//                process of its own: events per wall second, the share of lease-5's, peak memory
//                and the machine's largest cache.
//   search-lease, search-raft  electsim search on 5 nodes with a 60 s horizon (40 s of faults, 20 s
//                to heal): --runs runs (default 1000) without shrinking, on one thread and on
//                --jobs threads; then what shrinking one finding cost, in runs and wall time.
// Wall time is measured here and only here; nothing measured feeds back into a simulation.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/huge_pages.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "runner/search.hpp"
#include "runner/sweep.hpp"
#include "sim/kernel.hpp"

namespace {

using namespace electsim;
using sim::Duration;
using namespace std::chrono_literals;

constexpr sim::MessageType kHeartbeat = 1;
constexpr sim::MessageType kAck = 2;
constexpr sim::TimerTag kTick = 1;
constexpr sim::TimerTag kElection = 2;

struct Counters {
  std::uint64_t delivered = 0;
  std::uint64_t resets = 0;
  std::uint64_t fires = 0;
};

// The heartbeat-5 node: a fixed leader and followers with an election timer that never fires in
// steady state.
class HeartbeatNode final : public sim::Protocol {
 public:
  explicit HeartbeatNode(Counters& counters) : counters_(counters) {}
  void on_start(sim::Context& ctx) override {
    if (ctx.self() == 0) {
      ctx.set_timer(50ms, kTick);
    } else {
      reset_election(ctx);
    }
  }
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& m) override {
    ++counters_.delivered;
    if (m.type == kHeartbeat) {
      sim::Message ack;
      ack.type = kAck;
      ack.field[0] = m.field[0];
      ctx.send(from, ack);
      reset_election(ctx);
    }
  }
  void on_timer(sim::Context& ctx, sim::TimerId, sim::TimerTag tag) override {
    if (tag == kTick) {
      sim::Message hb;
      hb.type = kHeartbeat;
      hb.field[0] = ++sequence_;
      ctx.broadcast(hb);
      ctx.set_timer(50ms, kTick);
    } else {
      ++counters_.fires;
    }
  }
  void on_store_reply(sim::Context&, const sim::StoreReply&) override {}
  void on_watch(sim::Context&, const sim::WatchEvent&) override {}
  void on_sink_reply(sim::Context&, const sim::SinkReply&) override {}
  void on_command(sim::Context&, sim::Command) override {}

 private:
  void reset_election(sim::Context& ctx) {
    ctx.cancel_timer(election_);
    election_ = ctx.set_timer(Duration(ctx.rng().between(150, 300) * 1'000'000), kElection);
    ++counters_.resets;
  }
  Counters& counters_;
  sim::TimerId election_ = sim::kNoTimer;
  std::int64_t sequence_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_result(const char* name, double sim_seconds, const Counters& c, double wall) {
  std::printf("%-12s simulated %.0f s  delivered %llu  timer resets %llu  timer fires %llu\n", name,
              sim_seconds, static_cast<unsigned long long>(c.delivered),
              static_cast<unsigned long long>(c.resets), static_cast<unsigned long long>(c.fires));
  std::printf("%-12s wall %.3f s  %.2f M messages/s  %.0f simulated s per wall s\n", name, wall,
              static_cast<double>(c.delivered) / wall / 1e6, sim_seconds / wall);
}

double bench_heartbeat(double sim_seconds, std::uint64_t seed) {
  sim::WorldConfig config;
  config.seed = seed;
  config.node_count = 5;
  config.duration = Duration(static_cast<std::int64_t>(sim_seconds * 1e9));
  config.network.latency = sim::Distribution::uniform_of(1ms, 10ms, 1ms);
  config.limits.max_events = UINT64_MAX;
  Counters counters;
  sim::Kernel kernel(config,
                     [&](sim::NodeId) { return std::make_unique<HeartbeatNode>(counters); });
  const auto start = std::chrono::steady_clock::now();
  kernel.run();
  const double wall = seconds_since(start);
  print_result("heartbeat-5", sim_seconds, counters, wall);
  return static_cast<double>(counters.delivered) / wall;
}

// The yardstick: the same work with a bare std::priority_queue, a pcg32 and no kernel at all.
double bench_baseline(double sim_seconds, std::uint64_t seed) {
  struct Ev {
    std::int64_t t;
    std::uint64_t seq;
    int kind;  // 0 tick, 1 heartbeat at follower, 2 ack at leader, 3 election timer
    int node;
    std::uint64_t generation;
    bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> q;
  pcg32 rng(seed, 1);
  std::uint64_t seq = 0;
  std::uint64_t generation[5] = {};
  Counters c;
  const auto end = static_cast<std::int64_t>(sim_seconds * 1e9);
  auto latency = [&] { return static_cast<std::int64_t>(1 + rng(10)) * 1'000'000; };
  auto reset = [&](int node, std::int64_t now) {
    ++generation[node];
    q.push({now + static_cast<std::int64_t>(150 + rng(151)) * 1'000'000, seq++, 3, node,
            generation[node]});
    ++c.resets;
  };
  const auto start = std::chrono::steady_clock::now();
  q.push({50'000'000, seq++, 0, 0, 0});
  for (int n = 1; n < 5; ++n) reset(n, 0);
  while (!q.empty() && q.top().t <= end) {
    const Ev e = q.top();
    q.pop();
    switch (e.kind) {
      case 0:
        for (int n = 1; n < 5; ++n) q.push({e.t + latency(), seq++, 1, n, 0});
        q.push({e.t + 50'000'000, seq++, 0, 0, 0});
        break;
      case 1:
        ++c.delivered;
        q.push({e.t + latency(), seq++, 2, 0, 0});
        reset(e.node, e.t);
        break;
      case 2:
        ++c.delivered;
        break;
      case 3:
        if (e.generation == generation[e.node]) ++c.fires;
        break;
    }
  }
  const double wall = seconds_since(start);
  print_result("baseline-5", sim_seconds, c, wall);
  return static_cast<double>(c.delivered) / wall;
}

// Raft in steady state with heartbeat-5's shape and numbers: 5 nodes, heartbeats every 50 ms,
// latency uniform whole ms [1, 10], election timeouts 150-300 ms; the bare kernel, no observers,
// no sink writes, so it reads beside heartbeat-5 as the cost of the real protocol.
int bench_raft(double sim_seconds, std::uint64_t seed, double heartbeat_rate) {
  const std::string text = R"({
    "name": "raft-steady-state",
    "description": "Benchmark: Raft election in steady state.",
    "nodes": 5,
    "duration": "60s",
    "protocol": {"name": "raft", "heartbeat_interval": "50ms",
                 "election_timeout_min": "150ms", "election_timeout_max": "300ms"},
    "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
    "workload": {"enabled": false}
  })";
  runner::LoadOptions options;
  options.seed = seed;
  options.limits.max_events = 100'000'000'000;
  options.overrides.push_back(
      {"duration", fmt::format("\"{}s\"", static_cast<long long>(sim_seconds))});
  const runner::LoadResult loaded = runner::load_scenario_text(text, "<bench raft-5>", options);
  if (!loaded.scenario) {
    for (const auto& m : loaded.messages()) std::fprintf(stderr, "%s\n", m.c_str());
    return 2;
  }
  sim::Kernel kernel(runner::world_for_seed(*loaded.scenario, seed),
                     loaded.scenario->prepared.factory);
  const auto start = std::chrono::steady_clock::now();
  const sim::RunStats stats = kernel.run();
  const double wall = seconds_since(start);
  std::printf("%-12s simulated %.0f s  delivered %llu  timer fires %llu  events %llu\n", "raft-5",
              sim_seconds, static_cast<unsigned long long>(stats.messages_delivered),
              static_cast<unsigned long long>(stats.timers_fired),
              static_cast<unsigned long long>(stats.events));
  const double rate = static_cast<double>(stats.messages_delivered) / wall;
  std::printf("%-12s wall %.3f s  %.2f M messages/s  %.0f simulated s per wall s\n", "raft-5", wall,
              rate / 1e6, sim_seconds / wall);
  if (heartbeat_rate > 0) {
    std::printf("raft-5 runs at %.2f of heartbeat-5's messages per second\n",
                rate / heartbeat_rate);
  }
  return 0;
}

// Loads `text` and runs it, timing the run alone: its result and wall time, or nullopt (the
// loader's messages on stderr) if it does not load.
std::optional<std::pair<runner::RunResult, double>> timed_run(const std::string& text,
                                                              const char* source,
                                                              const runner::LoadOptions& options) {
  const runner::LoadResult loaded = runner::load_scenario_text(text, source, options);
  if (!loaded.scenario) {
    for (const auto& m : loaded.messages()) std::fprintf(stderr, "%s\n", m.c_str());
    return std::nullopt;
  }
  const auto start = std::chrono::steady_clock::now();
  runner::RunResult result = runner::run_scenario(*loaded.scenario, runner::RunOptions{});
  return std::pair{std::move(result), seconds_since(start)};
}

// lease-5 (with `store_members` store members) over `sim_seconds`: its result and wall time, or
// nullopt (the loader's messages on stderr) if it does not load.
std::optional<std::pair<runner::RunResult, double>> run_lease(double sim_seconds,
                                                              std::uint64_t seed,
                                                              std::size_t store_members) {
  const std::string text = R"({
    "name": "lease-steady-state",
    "description": "Benchmark: the lease protocol in steady state.",
    "nodes": 5,
    "duration": "60s",
    "protocol": {"name": "lease", "ttl": "2s"},
    "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
    "workload": {"interval": "100ms"}
  })";
  runner::LoadOptions options;
  options.seed = seed;
  options.overrides.push_back(
      {"duration", fmt::format("\"{}s\"", static_cast<long long>(sim_seconds))});
  options.overrides.push_back({"store.members", std::to_string(store_members)});
  return timed_run(text, "<bench lease-5>", options);
}

// Returns simulated seconds per wall second, or a negative value on bad input.
double bench_lease(double sim_seconds, std::uint64_t seed, std::size_t store_members) {
  const std::string name =
      store_members > 1 ? fmt::format("lease-5-store-{}", store_members) : std::string("lease-5");
  const auto run = run_lease(sim_seconds, seed, store_members);
  if (!run) return -1;
  const auto& [result, wall] = *run;
  std::printf("%-12s simulated %.0f s  events %llu  store requests %llu  sink writes %llu\n",
              name.c_str(), sim_seconds, static_cast<unsigned long long>(result.stats.events),
              static_cast<unsigned long long>(result.report.store_requests_total),
              static_cast<unsigned long long>(result.report.sink_writes));
  std::printf("%-12s wall %.3f s  %.2f M events/s  %.0f simulated s per wall s\n", name.c_str(),
              wall, static_cast<double>(result.stats.events) / wall / 1e6, sim_seconds / wall);
  return sim_seconds / wall;
}

double bench_sweep_once(const runner::SweepPlan& plan, unsigned jobs) {
  runner::SweepOptions options;
  options.jobs = jobs;
  const auto start = std::chrono::steady_clock::now();
  const runner::SweepResult result = runner::run_sweep(plan, options);
  const double wall = seconds_since(start);
  std::uint64_t events = 0;
  for (const auto& r : result.records) events += r.events;
  const double runs = static_cast<double>(result.records.size());
  const double simulated = runs * 60;
  std::printf(
      "%-12s jobs %u  runs %.0f  wall %.3f s  %.1f runs/s  %.0f simulated s per wall s  "
      "%.2f M events/s\n",
      "sweep-lease", jobs, runs, wall, runs / wall, simulated / wall,
      static_cast<double>(events) / wall / 1e6);
  return runs / wall;
}

int bench_sweep(std::uint64_t runs, unsigned jobs) {
  const std::string text = R"({
    "name": "lease-random-gc-pauses",
    "description": "Benchmark: the lease protocol under leader GC pauses drawn at random.",
    "nodes": 5,
    "duration": "60s",
    "protocol": {"name": "lease", "ttl": "2s", "recheck_before_write": false},
    "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
    "workload": {"interval": "100ms", "work": "20ms"},
    "random_faults": [
      {"kind": "pause", "target": "leader", "every": {"dist": "exponential", "mean": "15s"},
       "duration": {"dist": "lognormal", "median": "1s", "sigma": 1}}
    ]
  })";
  runner::SweepDefinition definition;
  definition.scenario_path = "<bench sweep-lease>";
  definition.seeds = {1, runs};
  runner::PlanOutcome planned = runner::plan_sweep(text, std::move(definition));
  if (!planned.plan) {
    for (const auto& m : planned.problems) std::fprintf(stderr, "%s\n", m.c_str());
    return 2;
  }
  const double single = bench_sweep_once(*planned.plan, 1);
  if (jobs > 1) {
    const double parallel = bench_sweep_once(*planned.plan, jobs);
    std::printf("sweep-lease on %u threads runs %.2f times as many runs per second as on one\n",
                jobs, parallel / single);
  }
  return 0;
}

// Runs `row` in a child process, so that its peak memory (the child's maximum resident set) is
// its run's alone: the text it returns, and that peak in MB; nullopt if it failed.
std::optional<std::pair<std::string, double>> in_child(
    const std::function<std::optional<std::string>()>& row) {
  int out[2];
  if (pipe(out) != 0) return std::nullopt;
  const pid_t child = fork();
  if (child < 0) return std::nullopt;
  if (child == 0) {
    close(out[0]);
    const std::optional<std::string> text = row();
    if (!text) _exit(1);
    const ssize_t written = write(out[1], text->data(), text->size());
    _exit(written == static_cast<ssize_t>(text->size()) ? 0 : 1);
  }
  close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(out[0]);
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  // ru_maxrss is in kilobytes on Linux.
  return std::pair{std::move(text), static_cast<double>(usage.ru_maxrss) / 1024.0};
}

// Cost growth with the cluster: every protocol on 5, 50, 500 and 1000 nodes with its defaults
// (every node starts at once), for 300 simulated seconds x 1000 / nodes (1000 nodes: 5 minutes,
// 5 nodes: 60000 s), so that every row runs long enough (a million events and more) for its
// speed to be measured rather than its setup or the machine's noise. Each row runs in a process
// of its own, so its peak memory (the child's maximum resident set) is that run's alone; the row
// prints the events per simulated second each size needs, the events per wall second it runs at
// and that peak. A run that hits the event limit prints where it stopped. After the table, each
// protocol's 1000-node events per wall second as a share of its 5-node row's, both of this run.
// One row of the table, or nullopt (and the loader's messages on stderr) if its scenario does not
// load.
std::optional<std::string> scale_row(const char* protocol, int nodes, std::uint64_t seed) {
  const std::string text = fmt::format(
      R"({{"name": "scale", "nodes": {}, "duration": "{}s", "protocol": {{"name": "{}"}},
          "network": {{"latency": {{"dist": "uniform", "min": "1ms", "max": "10ms",
                                     "step": "1ms"}}}},
          "workload": {{"interval": "100ms"}}}})",
      nodes, 300 * 1000 / nodes, protocol);
  runner::LoadOptions options;
  options.seed = seed;
  const auto run = timed_run(text, "<bench scale>", options);
  if (!run) return std::nullopt;
  const auto& [r, wall] = *run;
  const double simulated = static_cast<double>(r.stats.end.since_start().count()) / 1e9;
  const double events = static_cast<double>(r.stats.events);
  const double rate = events / std::max(wall, 1e-9);
  // The first line is the row's events per wall second alone, for the parent's share line.
  return fmt::format("{0:.0f}\n{1:<6} {2:>6} {3:>14} {4:>14.0f} {0:>14.0f} {5:>8.2f} {6:>12}{7}",
                     rate, protocol, nodes, r.stats.events, events / std::max(simulated, 1e-9),
                     wall, r.report.messages_sent,
                     r.stats.hit_event_limit ? fmt::format("  (event limit at {:.3f} s)", simulated)
                                             : std::string());
}

int bench_scale(std::uint64_t seed) {
  std::printf("%-6s %6s %14s %14s %14s %8s %12s %8s\n", "proto", "nodes", "events", "events/sim s",
              "events/wall s", "wall s", "messages", "peak MB");
  std::fflush(stdout);
  std::vector<std::string> shares;
  for (const char* protocol : {"lease", "raft", "ring", "bully"}) {
    double smallest = 0;  // the 5-node row's events per wall second
    for (const int nodes : {5, 50, 500, 1000}) {
      const auto done = in_child([&] { return scale_row(protocol, nodes, seed); });
      const std::size_t rate_end = done ? done->first.find('\n') : std::string::npos;
      if (rate_end == std::string::npos) {
        std::fprintf(stderr, "scale: the %s run on %d nodes failed\n", protocol, nodes);
        return 2;
      }
      const double rate = std::strtod(done->first.c_str(), nullptr);
      if (nodes == 5) smallest = rate;
      if (nodes == 1000) {
        shares.push_back(
            fmt::format("{} on 1000 nodes runs at {:.2f} of its 5-node events per "
                        "wall second",
                        protocol, rate / std::max(smallest, 1e-9)));
      }
      const std::string row = done->first.substr(rate_end + 1);
      const double peak = done->second;
      const std::size_t limit_note = row.find("  (event limit");
      const std::string head = limit_note == std::string::npos ? row : row.substr(0, limit_note);
      const std::string tail = limit_note == std::string::npos ? "" : row.substr(limit_note);
      std::printf("%s %8.0f%s\n", head.c_str(), peak, tail.c_str());
      std::fflush(stdout);
    }
  }
  for (const std::string& share : shares) std::printf("%s\n", share.c_str());
  return 0;
}

// The benchmark's fleet: `services` services of 3 lease nodes, TTL 10 s, on a 3-member store of
// etcd's capacity, for `sim_seconds`.
std::string fleet_text(std::size_t services, long long sim_seconds) {
  return fmt::format(
      R"({{"name": "fleet", "duration": "{}s",
          "services": {{"count": {}, "replicas": 3}},
          "protocol": {{"name": "lease", "ttl": "10s"}},
          "store": {{"members": 3, "capacity": {{"service_time": "33us"}}}},
          "network": {{"latency": {{"dist": "uniform", "min": "1ms", "max": "10ms",
                                     "step": "1ms"}}}},
          "workload": {{"interval": "1s"}}}})",
      sim_seconds, services);
}

// Runs the benchmark's fleet (fleet_text) with `seed`: its result and wall time, or nullopt.
std::optional<std::pair<runner::RunResult, double>> run_fleet(std::size_t services,
                                                              long long sim_seconds,
                                                              std::uint64_t seed) {
  runner::LoadOptions options;
  options.seed = seed;
  return timed_run(fleet_text(services, sim_seconds), "<bench fleet>", options);
}

// lease-5's events per wall second, the yardstick of the fleet rows: the median of three runs of
// 36000 simulated seconds (half a second or more each), printed, since one run of a few tens of
// milliseconds on a shared machine moves by half from one start to the next.
std::optional<double> lease_yardstick(std::uint64_t seed) {
  std::array<double, 3> rates{};
  for (double& rate : rates) {
    const auto lease = run_lease(36000, seed, 1);
    if (!lease) return std::nullopt;
    rate = static_cast<double>(lease->first.stats.events) / lease->second;
  }
  std::printf("lease-5      36000 simulated s, three runs: %.2f, %.2f, %.2f M events/s\n",
              rates[0] / 1e6, rates[1] / 1e6, rates[2] / 1e6);
  std::sort(rates.begin(), rates.end());
  return rates[1];
}

// One fleet row, run in a child process so that its peak memory is its own; its speed as a share
// of lease-5's events per wall second, measured first in this process.
int bench_fleet(std::size_t services, int sim_seconds, std::uint64_t seed) {
  const std::optional<double> lease = lease_yardstick(seed);
  if (!lease) return 2;
  const double yardstick = *lease;
  const std::string name = fmt::format("fleet-{}k", services / 1000);
  const auto done = in_child([&]() -> std::optional<std::string> {
    const auto run = run_fleet(services, sim_seconds, seed);
    if (!run) return std::nullopt;
    const auto& [r, wall] = *run;
    const double rate = static_cast<double>(r.stats.events) / wall;
    const analysis::FleetReport empty;
    const analysis::FleetReport& f = r.report.fleet ? *r.report.fleet : empty;
    return fmt::format(
        "{0:<12} {1} services x 3, simulated {2} s: events {3}  store requests {4}\n"
        "{0:<12} wall {5:.3f} s  {6:.2f} M events/s{7}\n"
        "{0:<12} leader changes p99 {8}, services never led {9}, refused {10}\n"
        "{0} runs at {11:.2f} of lease-5's events per wall second (the median of its three runs, "
        "{12:.2f} M)\n",
        name, services, sim_seconds, r.stats.events, r.report.store_requests_total, wall,
        rate / 1e6, r.stats.hit_event_limit ? "  (stopped at the event limit)" : "",
        f.leader_changes.p99, f.services_never_led, r.report.store.requests_refused,
        rate / yardstick, yardstick / 1e6);
  });
  if (!done) {
    std::fprintf(stderr, "fleet: the run of %zu services failed\n", services);
    return 2;
  }
  std::printf("%s%-12s peak %.0f MB (heap on %s)\n", done->first.c_str(), name.c_str(),
              done->second, io::heap_on_huge_pages() ? "huge pages" : "4 KB pages");
  return 0;
}

// The size of this machine's largest cache in MB, read from Linux's sysfs (cpu0's cache
// indexes); 0 where it cannot be read.
double largest_cache_mb() {
  double largest = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string path = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", index);
    std::FILE* file = std::fopen(path.c_str(), "r");
    if (file == nullptr) break;
    char text[32] = {};
    const bool read = std::fgets(text, sizeof text, file) != nullptr;
    std::fclose(file);
    if (!read) continue;
    char* end = nullptr;
    const double size = std::strtod(text, &end);
    if (end == text) continue;
    const double mb = *end == 'M' ? size : *end == 'K' ? size / 1024 : size / (1024.0 * 1024.0);
    largest = std::max(largest, mb);
  }
  return largest;
}

// The fleet's speed against its size: bench_fleet's fleet with 10, 100, 1000 and 10,000
// services, each for 1,200,000 simulated seconds divided by its count (about the same number of
// events in every row), each in a process of its own, its events per wall second as a share of
// lease-5's in this run, beside its peak memory and the machine's largest cache. The work per
// event is the same in every row; what changes is how much of the world a cache holds.
int bench_fleet_scale(std::uint64_t seed) {
  const std::optional<double> lease = lease_yardstick(seed);
  if (!lease) return 2;
  const double cache_mb = largest_cache_mb();
  const std::string cache = cache_mb > 0 ? fmt::format("{:.0f} MB", cache_mb) : "unknown";
  std::printf("fleet-scale  lease-5's median %.2f M events/s; the largest cache %s\n", *lease / 1e6,
              cache.c_str());
  std::printf("%-11s %8s %11s %12s %8s %10s %8s %8s\n", "fleet-scale", "services", "simulated s",
              "events", "wall s", "M events/s", "share", "peak MB");
  std::fflush(stdout);
  for (const std::size_t services : {10, 100, 1000, 10'000}) {
    const long long sim_seconds = 1'200'000 / static_cast<long long>(services);
    const auto done = in_child([&]() -> std::optional<std::string> {
      const auto run = run_fleet(services, sim_seconds, seed);
      if (!run) return std::nullopt;
      const auto& [r, wall] = *run;
      const double rate = static_cast<double>(r.stats.events) / wall;
      return fmt::format("{:<11} {:>8} {:>11} {:>12} {:>8.3f} {:>10.2f} {:>8.2f}{}", "fleet-scale",
                         services, sim_seconds, r.stats.events, wall, rate / 1e6, rate / *lease,
                         r.stats.hit_event_limit ? "  (stopped at the event limit)" : "");
    });
    if (!done) {
      std::fprintf(stderr, "fleet-scale: the run of %zu services failed\n", services);
      return 2;
    }
    const std::size_t limit_note = done->first.find("  (stopped");
    const std::string head = done->first.substr(0, limit_note);
    const std::string tail = limit_note == std::string::npos ? "" : done->first.substr(limit_note);
    std::printf("%s %8.0f%s\n", head.c_str(), done->second, tail.c_str());
    std::fflush(stdout);
  }
  return 0;
}

double search_once(const nlohmann::json& document, const runner::LoadOptions& load,
                   const runner::SearchConfig& config, unsigned jobs, const char* name,
                   runner::SearchResult* kept) {
  runner::SearchOptions options;
  options.jobs = jobs;
  const auto start = std::chrono::steady_clock::now();
  runner::SearchOutcome outcome = runner::run_search(document, name, load, config, options);
  const double wall = seconds_since(start);
  if (!outcome.result) {
    for (const auto& m : outcome.problems) std::fprintf(stderr, "%s\n", m.c_str());
    return -1;
  }
  const double runs = static_cast<double>(outcome.result->runs_done);
  std::printf("%-12s jobs %u  runs %.0f  wall %.3f s  %.1f runs/s (60 s horizon)\n", name, jobs,
              runs, wall, runs / wall);
  if (kept != nullptr) *kept = std::move(*outcome.result);
  return runs / wall;
}

int bench_search(const std::string& which, std::uint64_t runs, unsigned jobs) {
  const bool raft = which == "search-raft";
  const nlohmann::json document = nlohmann::json::parse(fmt::format(
      R"({{"name": "{}", "nodes": 5, "duration": "60s",
          "protocol": {{"name": "{}"}},
          "network": {{"latency": {{"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}}}},
          "workload": {{"interval": "100ms"}}}})",
      which, raft ? "raft" : "lease"));
  runner::SearchConfig config = runner::SearchConfig::defaults();
  config.safety = std::chrono::seconds(40);
  config.heal_bound = std::chrono::seconds(20);
  config.runs = runs;
  config.shrink = false;
  const runner::LoadOptions load;
  const double single = search_once(document, load, config, 1, which.c_str(), nullptr);
  if (single < 0) return 2;
  if (jobs > 1) {
    const double parallel = search_once(document, load, config, jobs, which.c_str(), nullptr);
    if (parallel < 0) return 2;
    std::printf("%s on %u threads runs %.2f times as many runs per second as on one\n",
                which.c_str(), jobs, parallel / single);
  }
  // What shrinking costs: the first finding of each property, shrunk on one thread. The lease
  // with its defaults shows none, so this pass plants a careless client without fencing.
  config.shrink = true;
  config.runs = std::min<std::uint64_t>(runs, 200);
  nlohmann::json planted = document;
  if (!raft) {
    planted["protocol"]["recheck_before_write"] = false;
    planted["protocol"]["fencing"] = false;
  }
  runner::SearchResult result;
  const auto start = std::chrono::steady_clock::now();
  if (search_once(planted, load, config, 1, which.c_str(), &result) < 0) return 2;
  const double wall = seconds_since(start);
  for (const runner::Shrunk& s : result.shrunk) {
    std::printf("%-12s shrinking %s (seed %llu): %zu faults -> %zu in %llu runs\n", which.c_str(),
                runner::property_name(s.property), static_cast<unsigned long long>(s.seed),
                s.faults_before, s.faults_after, static_cast<unsigned long long>(s.runs));
  }
  std::printf("%-12s %zu findings shrunk; the search with shrinking took %.3f s\n", which.c_str(),
              result.shrunk.size(), wall);
  return 0;
}

void usage() {
  std::puts(
      "usage: electsim_bench [WORKLOAD...] [--seconds T] [--seed N] [--runs N] [--jobs N]\n"
      "workloads: heartbeat-5 baseline-5 raft-5 lease-5 lease-5-store-3 sweep-lease\n"
      "           search-lease search-raft (default: all), and\n"
      "           scale (every protocol on 5 to 1000 nodes: minutes; only when named),\n"
      "           fleet-10k, fleet-100k (a fleet on a store at capacity: minutes; only when "
      "named),\n"
      "           fleet-scale (that fleet at 10 to 10,000 services: minutes; only when named)\n"
      "--seconds T  simulated seconds per workload (default 36000; not sweep-lease)\n"
      "--seed N     root seed (default 1)\n"
      "--runs N     seeds in sweep-lease, runs in search-* (default 1000)\n"
      "--jobs N     threads for the second pass of sweep-lease and search-* (default: the\n"
      "             machine's cores)");
}

}  // namespace

int main(int argc, char** argv) {
  // As electsim itself starts (io/huge_pages.hpp): the figures are the ones a user's runs get.
  electsim::io::prefer_huge_pages(argv);
  double seconds = 36000;
  std::uint64_t seed = 1;
  std::uint64_t runs = 1000;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> workloads;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--seconds" || arg == "--seed" || arg == "--runs" || arg == "--jobs") &&
        i + 1 < argc) {
      char* end = nullptr;
      const char* value = argv[++i];
      if (arg == "--seconds") {
        seconds = std::strtod(value, &end);
      } else if (arg == "--seed") {
        seed = std::strtoull(value, &end, 10);
      } else if (arg == "--runs") {
        runs = std::strtoull(value, &end, 10);
      } else {
        jobs = static_cast<unsigned>(std::strtoul(value, &end, 10));
      }
      if (end == value || *end != '\0' || seconds <= 0 || runs == 0 || jobs == 0) {
        std::fprintf(stderr, "electsim_bench: bad value for %s: %s\n", arg.c_str(), value);
        return 2;
      }
    } else if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    } else if (arg == "heartbeat-5" || arg == "baseline-5" || arg == "raft-5" || arg == "lease-5" ||
               arg == "lease-5-store-3" || arg == "sweep-lease" || arg == "scale" ||
               arg == "search-lease" || arg == "search-raft" || arg == "fleet-10k" ||
               arg == "fleet-100k" || arg == "fleet-scale") {
      workloads.push_back(arg);
    } else {
      std::fprintf(stderr, "electsim_bench: unknown argument %s\n", arg.c_str());
      usage();
      return 2;
    }
  }
  if (workloads.empty()) {
    workloads = {"heartbeat-5",     "baseline-5",  "raft-5",       "lease-5",
                 "lease-5-store-3", "sweep-lease", "search-lease", "search-raft"};
  }
  std::printf("electsim_bench seed=%llu seconds=%.0f\n", static_cast<unsigned long long>(seed),
              seconds);
  double kernel_rate = 0;
  double baseline_rate = 0;
  for (const auto& w : workloads) {
    if (w == "heartbeat-5") kernel_rate = bench_heartbeat(seconds, seed);
    if (w == "baseline-5") baseline_rate = bench_baseline(seconds, seed);
    if (w == "raft-5" && bench_raft(seconds, seed, kernel_rate) != 0) return 2;
    if (w == "lease-5" && bench_lease(seconds, seed, 1) < 0) return 2;
    if (w == "lease-5-store-3") {
      const double single = bench_lease(seconds, seed, 1);
      const double replicated = bench_lease(seconds, seed, 3);
      if (single < 0 || replicated < 0) return 2;
      std::printf("lease-5-store-3 runs at %.2f of lease-5's speed (simulated s per wall s)\n",
                  replicated / single);
    }
    if (w == "sweep-lease" && bench_sweep(runs, jobs) != 0) return 2;
    if (w == "scale" && bench_scale(seed) != 0) return 2;
    if (w == "fleet-10k" && bench_fleet(10'000, 600, seed) != 0) return 2;
    if (w == "fleet-100k" && bench_fleet(100'000, 60, seed) != 0) return 2;
    if (w == "fleet-scale" && bench_fleet_scale(seed) != 0) return 2;
    if ((w == "search-lease" || w == "search-raft") && bench_search(w, runs, jobs) != 0) return 2;
  }
  if (kernel_rate > 0 && baseline_rate > 0) {
    std::printf("heartbeat-5 runs at %.2f of the hand-written loop's speed\n",
                kernel_rate / baseline_rate);
  }
  return 0;
}
