// electsim sweep and merge (cli/common.hpp): a grid of parameter values x seeds in parallel, and
// the merge of a sweep split with --shard.
#include "cli/common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "analysis/expect.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "drawing/outputs.hpp"
#include "drawing/timeline_svg.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "protocols/registry.hpp"
#include "runner/compare.hpp"
#include "runner/comparison_page.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "runner/search.hpp"
#include "runner/sweep.hpp"
#include "runner/sweep_plot.hpp"
#include "runner/threads.hpp"
#include "runner/validate.hpp"
#include "servers/registry.hpp"
#include "sim/event_schema.hpp"
#include "sim/fault.hpp"

namespace electsim::cli {

namespace {

// The paths a sweep or merge will write, from its options.
std::vector<std::string> sweep_outputs(const po::variables_map& vm) {
  std::vector<std::string> paths;
  if (vm.count("out") != 0) {
    const std::string prefix = vm["out"].as<std::string>();
    for (const char* ext : {".csv", ".json", ".runs.csv", ".part"}) paths.push_back(prefix + ext);
  }
  if (vm.count("plot") != 0) paths.push_back(vm["plot"].as<std::string>());
  return paths;
}

// The files a finished (or merged) sweep writes, and its table on stdout.
int write_sweep_outputs(const runner::SweepResult& result, const po::variables_map& vm,
                        const std::vector<std::string>& metrics, const std::string& command,
                        Streams io) {
  const std::vector<runner::PointSummary> points = runner::summarise(result);
  std::vector<io::OutputFile> files;
  if (vm.count("out") != 0) {
    const std::string prefix = vm["out"].as<std::string>();
    files.push_back({prefix + ".csv", runner::sweep_points_csv(result, points)});
    files.push_back({prefix + ".json", runner::sweep_json(result, points).dump(2) + "\n"});
    if (vm.count("runs") != 0)
      files.push_back({prefix + ".runs.csv", runner::sweep_runs_csv(result)});
  }
  if (vm.count("plot") != 0) {
    files.push_back(
        {vm["plot"].as<std::string>(), runner::sweep_plot_svg(result, points, metrics)});
  }
  if (auto error = io::write_files_whole(files)) {
    io.err << fmt::format("electsim {}: {}; no output written\n", command, *error);
    return kExitBadInput;
  }
  if (vm.count("json") != 0) {
    io.out << runner::sweep_json(result, points).dump(2) << "\n";
  } else {
    io.out << runner::format_sweep_table(result, points);
  }
  for (const io::OutputFile& f : files) io.err << fmt::format("wrote {}\n", f.path);
  return kExitOk;
}

// --metrics, else the file's, else the default panels; every name checked.
std::optional<std::vector<std::string>> plot_metrics(const po::variables_map& vm,
                                                     const std::vector<std::string>& from_file,
                                                     const char* command, Streams io) {
  std::vector<std::string> known;
  for (const auto& m : runner::point_metrics()) known.push_back(m.name);
  if (vm.count("metrics") != 0) {
    return name_list(vm["metrics"].as<std::string>(), "--metrics", known, command, io);
  }
  for (const std::string& m : from_file) {
    if (runner::find_point_metric(m) == nullptr) {
      io.err << fmt::format(
          "electsim {}: the file's sweep.metrics: expected names from {}, found {}\n", command,
          fmt::join(known, ", "), m);
      return std::nullopt;
    }
  }
  if (!from_file.empty()) return from_file;
  return std::vector<std::string>{"failover_p50", "failover_p99", "split_brain_probability"};
}

constexpr const char* kSweepHelp =
    "Runs the scenario at every point of the grid (the cross product of the --grid axes), for\n"
    "every seed and every protocol asked, on --jobs threads, and summarises each point:\n"
    "failover p50/p90/p99/max, write outage, leaderless time, how often split-brain and stale\n"
    "writes happened, messages and store requests per second. Each run is exactly\n"
    "`electsim run SCENARIO --set PATH=VALUE... --seed SEED`; the outputs say how to replay any.\n"
    "Without --grid, --seeds or --protocols the file's `sweep` section is used.\n"
    "\n"
    "  electsim sweep scenarios/sweeps/ttl-vs-gc-pause.json --grid protocol.ttl=1s..10s:1s \\\n"
    "      --grid protocol.fencing=true,false --seeds 200 -o results --plot results.svg\n"
    "\n"
    "With -o PREFIX it writes PREFIX.csv (a row per grid point), PREFIX.json and, with --runs,\n"
    "PREFIX.runs.csv (a row per run); files appear whole or not at all. The output is the same\n"
    "for any --jobs. --shard i/n runs every n-th run starting at run i-1 and writes PREFIX.part;\n"
    "`electsim merge` combines the parts into exactly the unsharded output (docs/sweeps.md).\n"
    "Ctrl-C or SIGTERM stops after the runs under way and writes what finished (exit 130).\n"
    "Exit 0 when done (a run breaking the scenario's expect block is counted, not an error),\n"
    "2 on bad input.\n";

}  // namespace

int cmd_sweep(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim sweep SCENARIO [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::string>(), "scenario file (JSON)")
    ("grid", po::value<std::vector<std::string>>()->composing(),
     "an axis: PATH=V1,V2,... or PATH=FROM..TO:STEP (repeatable: the cross product)")
    ("seeds", po::value<std::string>(), "N (seeds 1 to N) or A..B (default: the file's, else 100)")
    ("protocols", po::value<std::string>(), "sweep these protocols too: lease,raft")
    ("variant", po::value<std::string>(), "sweep one of the file's variants")
    ("set", po::value<std::vector<std::string>>()->composing(),
     "fix a scenario value for every run: --set nodes=7 (repeatable)")
    ("jobs,j", po::value<std::string>(), "threads, 1 to 1024, at most 4 per core started (default: the cores)")
    ("shard", po::value<std::string>(), "i/n: run a deterministic share and write PREFIX.part")
    ("out,o", po::value<std::string>(), "output prefix: PREFIX.csv, PREFIX.json (PREFIX.part with --shard)")
    ("runs", "also write PREFIX.runs.csv, one row per run")
    ("plot", po::value<std::string>(), "draw the chosen metrics against the first axis in FILE.svg")
    ("metrics", po::value<std::string>(),
     "plot panels: failover_p50,failover_p99,split_brain_probability (default)")
    ("json", "print the JSON result instead of the table")
    ("quiet,q", "no progress on stderr");
  // clang-format on
  po::positional_options_description positional;
  positional.add("scenario", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("scenario") == 0) {
    (vm.count("help") != 0 ? io.out : io.err) << options << "\n" << kSweepHelp;
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  const std::string file = vm["scenario"].as<std::string>();
  if (!paths_distinct(sweep_outputs(vm), {file}, "sweep", io)) return kExitBadInput;
  io::ReadResult read = runner::read_scenario_file(file);
  if (!read.ok()) {
    io.err << fmt::format("{}: {}\n", file, read.error);
    return kExitBadInput;
  }
  const std::string text = std::move(read.text);

  // The file's `sweep` section gives defaults; an unparsable file is reported by the plan below.
  std::vector<std::string> problems;
  runner::SweepDefaults defaults;
  {
    const io::JsonParse document = io::parse_json(text);
    if (document.ok()) defaults = runner::read_sweep_defaults(document.value, problems);
  }
  for (const std::string& p : problems) io.err << file << ": " << p << "\n";
  if (!problems.empty()) return kExitBadInput;

  runner::SweepDefinition definition;
  definition.scenario_path = file;
  if (vm.count("variant") != 0) definition.variant = vm["variant"].as<std::string>();
  if (vm.count("set") != 0) {
    for (const std::string& t : vm["set"].as<std::vector<std::string>>()) {
      const std::optional<runner::Override> o = runner::parse_override(t);
      if (!o) {
        io.err << fmt::format("electsim sweep: --set {}: expected path=value\n", t);
        return kExitBadInput;
      }
      definition.sets.push_back(*o);
    }
  }
  const std::vector<std::string> grid =
      vm.count("grid") != 0 ? vm["grid"].as<std::vector<std::string>>() : defaults.grid;
  for (const std::string& g : grid) {
    auto axis = runner::parse_grid_axis(g);
    if (!axis.value) {
      io.err << fmt::format("electsim sweep: --grid {}: {}\n", g, axis.error);
      return kExitBadInput;
    }
    definition.axes.push_back(std::move(*axis.value));
  }
  const std::string seeds_text =
      vm.count("seeds") != 0 ? vm["seeds"].as<std::string>() : defaults.seeds.value_or("100");
  const auto seeds = runner::parse_seed_range(seeds_text);
  if (!seeds.value) {
    io.err << fmt::format("electsim sweep: --seeds {}: {}\n", seeds_text, seeds.error);
    return kExitBadInput;
  }
  definition.seeds = *seeds.value;
  std::vector<std::string> protocol_list = defaults.protocols;
  if (vm.count("protocols") != 0) {
    auto list = name_list(vm["protocols"].as<std::string>(), "--protocols",
                          protocols::protocol_names(), "sweep", io);
    if (!list) return kExitBadInput;
    protocol_list = std::move(*list);
  }
  definition.protocols = protocol_list;
  definition.protocols_asked = !protocol_list.empty();

  std::optional<runner::Shard> shard;
  if (vm.count("shard") != 0) {
    auto parsed = runner::parse_shard(vm["shard"].as<std::string>());
    if (!parsed.value) {
      io.err << fmt::format("electsim sweep: --shard: {}\n", parsed.error);
      return kExitBadInput;
    }
    shard = *parsed.value;
    if (vm.count("out") == 0) {
      io.err << "electsim sweep: --shard needs -o PREFIX (the part is written to PREFIX.part)\n";
      return kExitBadInput;
    }
    if (vm.count("plot") != 0 || vm.count("runs") != 0 || vm.count("json") != 0) {
      io.err << "electsim sweep: a shard writes only PREFIX.part; give --plot, --runs and --json "
                "to `electsim merge`\n";
      return kExitBadInput;
    }
  }
  const auto metrics = plot_metrics(vm, defaults.metrics, "sweep", io);
  if (!metrics) return kExitBadInput;
  {
    runner::LoadOptions whole;
    whole.overrides = definition.sets;
    // With --protocols, `--set protocol.X` means each swept protocol's X, as in the runs: check
    // the file as the first of them runs it (plan_sweep then checks every one).
    if (definition.protocols_asked) whole.protocol = definition.protocols.front();
    const runner::FileCheck check = runner::check_scenario_file(text, file, whole);
    if (!check.ok()) {
      for (const std::string& m : check.problems) io.err << m << "\n";
      return kExitBadInput;
    }
  }

  runner::PlanOutcome planned = runner::plan_sweep(text, std::move(definition));
  if (!planned.plan) {
    for (const std::string& m : planned.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  const runner::SweepPlan& plan = *planned.plan;
  // A --set that reaches none of a protocol's runs is said, never silently dropped.
  for (std::size_t p = 0; p < plan.definition.protocols.size(); ++p) {
    for (const std::string& set : plan.definition.sets_not_reaching(p)) {
      io.err << fmt::format(
          "electsim sweep: warning: {} does not reach protocol {}'s runs (its rows leave it "
          "unlabelled; column sets_not_reaching)\n",
          set, plan.definition.protocols[p]);
    }
  }

  runner::SweepOptions sweep;
  sweep.jobs = runner::default_jobs();
  if (vm.count("jobs") != 0) {
    const auto jobs =
        parse_cli_number(vm["jobs"].as<std::string>(), "--jobs", 1, kMaxJobs, "sweep", io);
    if (!jobs) return kExitBadInput;
    sweep.jobs = static_cast<unsigned>(*jobs);
  }
  sweep.shard = shard;
  sweep.notice = [&](const std::string& text) { io.err << "electsim sweep: " << text << "\n"; };
  g_sweep_stop.store(false);
  sweep.stop = &g_sweep_stop;
  const bool show_progress = vm.count("quiet") == 0 && isatty(fileno(stderr)) != 0;
  const auto started = std::chrono::steady_clock::now();
  if (show_progress) {
    sweep.progress = [&](const runner::SweepProgress& p) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double rate = elapsed > 0 ? static_cast<double>(p.done) / elapsed : 0;
      const double eta = rate > 0 ? static_cast<double>(p.total - p.done) / rate : -1;
      io.err << fmt::format(
                    "\rsweep: {}/{} runs ({:.1f}%), {:.1f} runs/s, ETA {}    ", p.done, p.total,
                    p.total == 0
                        ? 100.0
                        : 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total),
                    rate, format_eta(eta))
             << std::flush;
    };
  }
  io::set_soft_stop(&g_sweep_stop);
  runner::SweepResult result = runner::run_sweep(plan, sweep);
  io::set_soft_stop(nullptr);
  if (show_progress) io.err << "\n";
  if (result.interrupted) {
    io.err << fmt::format(
        "electsim sweep: interrupted; {} of {} runs finished and are written below\n",
        result.records.size(), result.runs_expected);
  }
  int exit_code = kExitOk;
  if (shard) {
    const std::string path = vm["out"].as<std::string>() + ".part";
    result.plot_metrics = *metrics;
    if (auto error = io::write_files_whole({{path, runner::sweep_part(result, *shard)}})) {
      io.err << fmt::format("electsim sweep: {}; no output written\n", *error);
      return kExitBadInput;
    }
    io.out << fmt::format("shard {}/{}: {} of the sweep's {} runs written to {}\n", shard->index,
                          shard->count, result.records.size(), plan.definition.run_count(), path);
  } else {
    exit_code = write_sweep_outputs(result, vm, *metrics, "sweep", io);
  }
  return result.interrupted && exit_code == kExitOk ? kExitInterrupted : exit_code;
}

int cmd_merge(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim merge PART... -o PREFIX [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("parts", po::value<std::vector<std::string>>(),
     "parts written by electsim sweep --shard, or by electsim search --shard")
    ("out,o", po::value<std::string>(), "output prefix: PREFIX.csv and PREFIX.json (a sweep's)")
    ("save", po::value<std::string>(), "a search's parts: write each shrunk scenario into this directory")
    ("runs", "also write PREFIX.runs.csv, one row per run")
    ("plot", po::value<std::string>(), "draw the chosen metrics against the first axis in FILE.svg")
    ("metrics", po::value<std::string>(),
     "plot panels (as for sweep; default: the sweep's own, carried in its parts)")
    ("json", "print the JSON result instead of the table")
    ("quiet,q", "no progress on stderr (as for sweep; merge shows none)");
  // clang-format on
  po::positional_options_description positional;
  positional.add("parts", -1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("parts") == 0) {
    (vm.count("help") != 0 ? io.out : io.err)
        << options << "\n"
        << "Combines the parts of a sharded sweep into exactly the output the sweep gives on\n"
        << "one machine. Every run must be in exactly one part, and all parts must come from\n"
        << "the same sweep (scenario file, grid, seeds, protocols, --set).\n"
        << "Parts of a sharded search (electsim search --shard) give the report, the findings\n"
        << "and, with --save, the files the search gives in one process, and its exit code.\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  if (!paths_distinct(sweep_outputs(vm), vm["parts"].as<std::vector<std::string>>(), "merge", io)) {
    return kExitBadInput;
  }
  std::vector<runner::PartText> parts;
  for (const std::string& path : vm["parts"].as<std::vector<std::string>>()) {
    io::ReadResult read = io::read_file_bounded(path, io::kMaxPartBytes, "part", io::kMaxPartLine);
    if (!read.ok()) {
      io.err << fmt::format("{}: {}\n", path, read.error);
      return kExitBadInput;
    }
    parts.push_back({path, std::move(read.text)});
  }
  if (!parts.empty() && runner::is_search_part(parts.front().text)) {
    if (!sweep_outputs(vm).empty() || vm.count("runs") != 0 || vm.count("json") != 0 ||
        vm.count("metrics") != 0) {
      io.err << "electsim merge: these are a search's parts: it prints the search's report and "
                "takes only --save DIR\n";
      return kExitBadInput;
    }
    std::optional<std::string> save;
    if (vm.count("save") != 0) save = vm["save"].as<std::string>();
    if (save && save->empty()) {
      io.err << "electsim merge: --save: expected a directory, found nothing\n";
      return kExitBadInput;
    }
    return merge_search(parts, save, io);
  }
  if (vm.count("save") != 0) {
    io.err << "electsim merge: --save is for a search's parts; these are a sweep's\n";
    return kExitBadInput;
  }
  runner::MergeOutcome merged = runner::merge_parts(parts);
  if (!merged.result) {
    for (const std::string& m : merged.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  const auto metrics = plot_metrics(vm, merged.result->plot_metrics, "merge", io);
  if (!metrics) return kExitBadInput;
  return write_sweep_outputs(*merged.result, vm, *metrics, "merge", io);
}

}  // namespace electsim::cli
