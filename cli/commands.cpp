// The electsim commands: parse the command line, call the runner, print. Nothing here decides what
// a run means; it only chooses what to run and how to show it. Exceptions never leave run_cli.
#include "cli/commands.hpp"

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
namespace po = boost::program_options;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitExpectation = 1;
constexpr int kExitBadInput = 2;

constexpr const char* kUsage =
    "usage: electsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO]     run a scenario file (no file: the built-in flagship, with and without\n"
    "                     fencing) and print who led when, the safety findings, failover, the\n"
    "                     service's outages whatever their cause, and cost\n"
    "  compare SCENARIO   run a scenario under every protocol with the same seed and faults,\n"
    "                     and print them side by side (--set detection=20s: one silent-leader\n"
    "                     time for every design)\n"
    "  sweep SCENARIO     run a grid of parameter values x seeds (x protocols) in parallel and\n"
    "                     summarise each point: failover percentiles, split-brain and stale-write\n"
    "                     probability, cost; CSV, JSON and an SVG plot\n"
    "  search SCENARIO    random fault schedules in a safety then a healing phase; each\n"
    "                     violation shrunk to a minimal scenario file\n"
    "  merge PART...      combine the parts of a sweep split with --shard\n"
    "  comparison         write the measured comparison page (docs/comparison.md)\n"
    "  validate FILE...   check scenario files without running them\n"
    "  list [WHAT]        protocols and their parameters, metrics, fault kinds, server kinds,\n"
    "                     trace events\n"
    "  check TRACE        analyse a saved JSON Lines trace offline; without --scenario it names\n"
    "                     the harm found and exits 1 on any, never PASS\n"
    "\n"
    "`electsim <command> --help` describes each command's options.\n"
    "exit codes: 0 fine, 1 an expectation of the scenario broke (search: a property broke),\n"
    "            2 bad input, 130 a sweep or search stopped by Ctrl-C or SIGTERM (what\n"
    "            finished is written or reported)\n"
    "limits on every input and output: README, \"Limits\"\n";

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

// Parses `args` against `options` with `positional` names; throws po::error on bad input.
po::variables_map parse(const std::vector<std::string>& args,
                        const po::options_description& options,
                        const po::positional_options_description& positional) {
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  po::notify(vm);
  return vm;
}

std::string with_suffix(const std::string& path, const std::string& suffix) {
  if (suffix.empty()) return path;
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return path + "-" + suffix;
  }
  return path.substr(0, dot) + "-" + suffix + path.substr(dot);
}

// A whole number from the command line, read as strictly as a number in a scenario file: digits
// only (no sign, no spaces, no hex), within [min, max]. The message names the option.
std::optional<std::uint64_t> parse_cli_number(const std::string& text, const char* option,
                                              std::uint64_t min, std::uint64_t max,
                                              const char* command, Streams io) {
  std::uint64_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  const bool digits_only =
      !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only || ec != std::errc{} || ptr != end || value < min || value > max) {
    io.err << fmt::format("electsim {}: {}: expected a whole number from {} to {}, found {}\n",
                          command, option, min, max, text.empty() ? "nothing" : text);
    return std::nullopt;
  }
  return value;
}

// The most threads a sweep may use: each holds one run in memory.
constexpr std::uint64_t kMaxJobs = 1024;

// Refuses outputs that clash with each other or with an input before anything runs.
bool paths_distinct(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs,
                    const char* command, Streams io) {
  if (auto clash = io::clashing_paths(outputs, inputs)) {
    io.err << fmt::format("electsim {}: {}\n", command, *clash);
    return false;
  }
  return true;
}

// True when the command line asks `electsim run` for no file output.
bool run_outputs_empty(const po::variables_map& vm) {
  for (const drawing::OutputFormat& format : drawing::output_formats()) {
    if (vm.count(format.flag) != 0) return false;
  }
  return true;
}

int cmd_run(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim run [SCENARIO] [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::string>(), "scenario file (JSON); none: the built-in flagship")
    ("seed", po::value<std::string>(), "root seed, overriding the file's (0 to 2^64-1)")
    ("set", po::value<std::vector<std::string>>()->composing(),
     "override a scenario value: --set protocol.ttl=10s --set nodes=7 (repeatable)")
    ("variant", po::value<std::string>(), "run one of the file's variants")
    ("all-variants", "run the scenario and every variant it defines (default without a file)")
    ("protocol", po::value<std::string>(),
     "run this protocol instead of the file's (parameters from the file's `protocols` section)")
    ("json", "print a machine-readable summary (JSON) instead of text");
  // clang-format on
  // One flag per output format (drawing/outputs.hpp).
  for (const drawing::OutputFormat& format : drawing::output_formats()) {
    options.add_options()(format.flag, po::value<std::string>(), format.help);
  }
  po::positional_options_description positional;
  positional.add("scenario", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0) {
    io.out << options << "\n"
           << "Runs the scenario, prints the seed first, then who led when, split-brain, stale\n"
           << "writes, failover and cost, the verdict on the scenario's expect block, and the\n"
           << "trace hash last. Exit 1 if an expectation broke, 2 on bad input.\n";
    return kExitOk;
  }

  runner::LoadOptions load;
  if (vm.count("protocol") != 0) load.protocol = vm["protocol"].as<std::string>();
  if (vm.count("seed") != 0) {
    load.seed = parse_cli_number(vm["seed"].as<std::string>(), "--seed", 0,
                                 std::numeric_limits<std::uint64_t>::max(), "run", io);
    if (!load.seed) return kExitBadInput;
  }
  if (vm.count("set") != 0) {
    for (const std::string& text : vm["set"].as<std::vector<std::string>>()) {
      const std::optional<runner::Override> o = runner::parse_override(text);
      if (!o) {
        io.err << fmt::format(
            "electsim run: --set {}: expected path=value, such as "
            "protocol.ttl=10s\n",
            text);
        return kExitBadInput;
      }
      load.overrides.push_back(*o);
    }
  }
  const bool from_file = vm.count("scenario") != 0;
  const std::string file = from_file ? vm["scenario"].as<std::string>() : std::string();
  const std::vector<std::string> inputs =
      from_file ? std::vector<std::string>{file} : std::vector<std::string>{};
  {
    std::vector<std::string> outputs;
    for (const drawing::OutputFormat& format : drawing::output_formats()) {
      if (vm.count(format.flag) != 0) outputs.push_back(vm[format.flag].as<std::string>());
    }
    if (!paths_distinct(outputs, inputs, "run", io)) return kExitBadInput;
  }
  std::string text = runner::flagship_scenario_text();
  if (from_file) {
    io::ReadResult read = runner::read_scenario_file(file);
    if (!read.ok()) {
      io.err << fmt::format("{}: {}\n", file, read.error);
      return kExitBadInput;
    }
    text = std::move(read.text);
  }
  auto load_one = [&](const std::optional<std::string>& variant) {
    runner::LoadOptions o = load;
    o.variant = variant;
    return runner::load_scenario_text(text, from_file ? file : "<built-in flagship>", o);
  };

  // The whole file is checked as `validate` checks it, whichever part of it runs.
  runner::FileCheck check =
      runner::check_scenario_file(text, from_file ? file : "<built-in flagship>", load);
  if (!check.ok()) {
    for (const std::string& m : check.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  runner::LoadResult base = std::move(check.base);
  for (const std::string& w : base.warnings) io.err << "electsim run: warning: " << w << "\n";
  std::vector<std::optional<std::string>> variants;
  if (vm.count("variant") != 0) {
    variants.push_back(vm["variant"].as<std::string>());
  } else {
    variants.push_back(std::nullopt);
    if (vm.count("all-variants") != 0 || !from_file) {
      for (const std::string& v : runner::variant_names(base.scenario->document)) {
        variants.push_back(v);
      }
    }
  }

  const bool json = vm.count("json") != 0;
  nlohmann::json json_runs = nlohmann::json::array();
  int exit_code = kExitOk;
  bool first = true;
  // One run writes exactly the paths given; several (--all-variants, or the flagship) add each
  // variant's name to them, and say every file they wrote.
  const bool several = variants.size() > 1;
  auto requests_for = [&](const std::optional<std::string>& variant) {
    const std::string suffix = several ? variant.value_or("") : std::string();
    std::vector<runner::OutputRequest> requests;
    for (const drawing::OutputFormat& format : drawing::output_formats()) {
      if (vm.count(format.flag) != 0) {
        requests.push_back({&format, with_suffix(vm[format.flag].as<std::string>(), suffix)});
      }
    }
    return requests;
  };
  // Every file any of the runs will write is checked before the first run starts: a run must
  // never end unable to write what it made.
  {
    std::vector<std::string> paths;
    for (const auto& variant : variants) {
      for (const runner::OutputRequest& r : requests_for(variant)) {
        if (auto problem = io::unwritable_output(r.path)) {
          io.err << fmt::format("electsim run: --{} {}: {}; nothing was run\n", r.format->flag,
                                r.path, *problem);
          return kExitBadInput;
        }
        paths.push_back(r.path);
      }
    }
    if (!paths_distinct(paths, inputs, "run", io)) return kExitBadInput;
  }
  // Every output of every run, complete under a temporary name; renamed into place together
  // after the last run, and only if no run ended in an error.
  io::StagedFiles staged;
  std::vector<std::string> written;
  for (const auto& variant : variants) {
    runner::LoadResult loaded = variant ? load_one(variant) : std::move(base);
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) io.err << m << "\n";
      return kExitBadInput;
    }
    runner::RunOptions run;
    run.outputs = requests_for(variant);
    run.commit_streamed = false;
    runner::RunResult result = runner::run_scenario(*loaded.scenario, run);
    for (auto& t : result.staged) {
      written.push_back(t->final_path());
      staged.push_back(std::move(t));
    }
    for (const io::OutputFile& f : result.pictures) {
      std::string error;
      staged.push_back(io::stage_file(f, error));
      if (!staged.back()) {
        staged.pop_back();
        result.errors.push_back(error);
      } else {
        written.push_back(f.path);
      }
    }
    if (json) {
      json_runs.push_back(analysis::summary_json(result.info, result.report, result.verdict));
      if (!result.errors.empty()) json_runs.back()["errors"] = result.errors;
    } else {
      if (!first) io.out << "\n";
      io.out << analysis::format_summary(result.info, result.report, result.verdict);
    }
    first = false;
    for (const std::string& e : result.errors) io.err << "electsim run: " << e << "\n";
    if (!result.errors.empty()) {
      exit_code = kExitBadInput;
    } else if (!result.verdict.ok() && exit_code == kExitOk) {
      exit_code = kExitExpectation;
    }
  }
  if (exit_code == kExitBadInput) {
    staged.clear();  // removes every temporary
    if (!run_outputs_empty(vm))
      io.err << "electsim run: no output written (the run ended in an error)\n";
  } else if (auto error = io::commit_all(staged)) {
    io.err << fmt::format("electsim run: {}\n", *error);
    exit_code = kExitBadInput;
  } else if (several) {
    for (const std::string& path : written) io.err << fmt::format("wrote {}\n", path);
  }
  if (json) io.out << (json_runs.size() == 1 ? json_runs[0] : json_runs).dump(2) << "\n";
  return exit_code;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// A comma-separated list of names for `option`, each one of `known`: an empty list or an empty
// name (",,") is an error, as is an unknown name, with the names that are known.
std::optional<std::vector<std::string>> name_list(const std::string& text, const char* option,
                                                  const std::vector<std::string>& known,
                                                  const char* command, Streams io) {
  std::string names;
  for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
  if (text.empty()) {
    io.err << fmt::format("electsim {}: {}: expected one or more of {}, found nothing\n", command,
                          option, names);
    return std::nullopt;
  }
  std::vector<std::string> list = split_list(text);
  for (const std::string& name : list) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      io.err << fmt::format("electsim {}: {}: expected names from {}, found {}\n", command, option,
                            names, name.empty() ? "an empty name in \"" + text + "\"" : name);
      return std::nullopt;
    }
  }
  return list;
}

int cmd_compare(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim compare SCENARIO [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::string>(), "scenario file (JSON)")
    ("protocols", po::value<std::string>(), "comma-separated protocols (default: all of them)")
    ("seed", po::value<std::string>(), "root seed, overriding the file's (0 to 2^64-1)")
    ("set", po::value<std::vector<std::string>>()->composing(),
     "override a scenario value, as for run (repeatable)")
    ("variant", po::value<std::string>(), "compare one of the file's variants")
    ("json", "print the table and every run's summary as JSON")
    ("csv", "print one CSV row per protocol")
    ("svg", po::value<std::string>(),
     "draw every protocol's timeline to FILE.svg, one panel each on a shared time axis");
  // clang-format on
  po::positional_options_description positional;
  positional.add("scenario", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("scenario") == 0) {
    (vm.count("help") != 0 ? io.out : io.err)
        << options << "\n"
        << "Runs the scenario once per protocol with the same seed and the same fault schedule\n"
        << "(a fault aimed at the leader hits each protocol's own leader), and prints failover,\n"
        << "write and service outages, leaderless time, stall, split-brain, stale writes,\n"
        << "overwrites, equal-token writes, messages per election and coordinator load side by\n"
        << "side. Per-protocol parameters come from the file's `protocols` section. The file's\n"
        << "protocol is judged by its `expect` block, another only by `expect_by_protocol`\n"
        << "(else \"no bounds\"). `--set detection=D` sets how long a silent leader keeps the\n"
        << "others out to D in every design (`electsim list` says what it sets). Exit 1 if any\n"
        << "protocol broke a bound.\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  if (vm.count("json") != 0 && vm.count("csv") != 0) {
    io.err << "electsim compare: choose one of --json and --csv\n";
    return kExitBadInput;
  }
  const std::string file = vm["scenario"].as<std::string>();
  if (vm.count("svg") != 0 &&
      !paths_distinct({vm["svg"].as<std::string>()}, {file}, "compare", io)) {
    return kExitBadInput;
  }
  const io::ReadResult text = runner::read_scenario_file(file);
  if (!text.ok()) {
    io.err << fmt::format("{}: {}\n", file, text.error);
    return kExitBadInput;
  }

  runner::LoadOptions load;
  if (vm.count("seed") != 0) {
    load.seed = parse_cli_number(vm["seed"].as<std::string>(), "--seed", 0,
                                 std::numeric_limits<std::uint64_t>::max(), "compare", io);
    if (!load.seed) return kExitBadInput;
  }
  if (vm.count("variant") != 0) load.variant = vm["variant"].as<std::string>();
  if (vm.count("set") != 0) {
    for (const std::string& t : vm["set"].as<std::vector<std::string>>()) {
      const std::optional<runner::Override> o = runner::parse_override(t);
      if (!o) {
        io.err << fmt::format("electsim compare: --set {}: expected path=value\n", t);
        return kExitBadInput;
      }
      load.overrides.push_back(*o);
    }
  }
  load.all_protocols_run = true;
  std::vector<std::string> chosen = protocols::protocol_names();
  if (vm.count("protocols") != 0) {
    auto list = name_list(vm["protocols"].as<std::string>(), "--protocols",
                          protocols::protocol_names(), "compare", io);
    if (!list) return kExitBadInput;
    chosen = std::move(*list);
  }
  {
    runner::LoadOptions whole = load;
    whole.variant.reset();
    const runner::FileCheck check = runner::check_scenario_file(text.text, file, whole);
    if (!check.ok()) {
      for (const std::string& m : check.problems) io.err << m << "\n";
      return kExitBadInput;
    }
  }
  runner::RunOptions run;
  run.timeline = vm.count("svg") != 0;
  const runner::CompareOutcome outcome =
      runner::compare_protocols(text.text, file, load, chosen, run);
  if (!outcome.result) {
    for (const std::string& m : outcome.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  const runner::CompareResult& result = *outcome.result;
  if (vm.count("svg") != 0) {
    std::vector<const drawing::Timeline*> timelines;
    std::vector<std::string> titles;
    for (const runner::RunResult& r : result.runs) {
      timelines.push_back(r.timeline ? &*r.timeline : nullptr);
      titles.push_back(r.info.protocol);
    }
    const std::string path = vm["svg"].as<std::string>();
    if (auto error =
            io::write_files_whole({{path, drawing::render_timelines_svg(timelines, titles)}})) {
      io.err << fmt::format("electsim compare: {}; no picture written\n", *error);
      return kExitBadInput;
    }
  }
  if (vm.count("json") != 0) {
    io.out << runner::compare_json(result).dump(2) << "\n";
  } else if (vm.count("csv") != 0) {
    io.out << runner::compare_csv(result);
  } else {
    io.out << runner::format_compare_table(result);
  }
  int exit_code = kExitOk;
  for (const runner::RunResult& r : result.runs) {
    if (!r.errors.empty()) return kExitBadInput;
    if (!r.verdict.ok()) exit_code = kExitExpectation;
  }
  return exit_code;
}

// ---- sweep and merge ------------------------------------------------------------------------

constexpr int kExitInterrupted = 130;  // the shell's code for a run stopped by Ctrl-C

// Ctrl-C or SIGTERM (what Slurm sends at a job's time limit) during a sweep: the first stops it
// after the runs under way (their records are kept and the outputs written); a second one ends
// the process the usual way (io::install_signal_cleanup removes any temporary first).
std::atomic<bool> g_sweep_stop{false};

std::string format_eta(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

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
    ("parts", po::value<std::vector<std::string>>(), "parts written by electsim sweep --shard")
    ("out,o", po::value<std::string>(), "output prefix: PREFIX.csv and PREFIX.json")
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
        << "the same sweep (scenario file, grid, seeds, protocols, --set).\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  if (!paths_distinct(sweep_outputs(vm), vm["parts"].as<std::vector<std::string>>(), "merge", io)) {
    return kExitBadInput;
  }
  std::vector<runner::PartText> parts;
  for (const std::string& path : vm["parts"].as<std::vector<std::string>>()) {
    io::ReadResult read =
        io::read_file_bounded(path, io::kMaxPartBytes, "sweep part", io::kMaxPartLine);
    if (!read.ok()) {
      io.err << fmt::format("{}: {}\n", path, read.error);
      return kExitBadInput;
    }
    parts.push_back({path, std::move(read.text)});
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

// ---- search ---------------------------------------------------------------------------------

constexpr const char* kSearchHelp =
    "Runs the scenario's world and protocol many times, each under a fault schedule a nemesis\n"
    "draws from the run's seed. Faults fly in the safety phase, where the safety properties must\n"
    "hold; at its end every fault heals, and a single leader must be writing again within the\n"
    "healing bound. The first violation of each property is shrunk to a minimal schedule and\n"
    "written with --save as an ordinary scenario file that `electsim run` reproduces.\n"
    "The same command gives the same findings in the same order, whatever --jobs is; Ctrl-C\n"
    "keeps the runs that finished. Exit: 0 no violation, 1 a property broke, 2 bad input,\n"
    "130 stopped. docs/search.md has the details.\n";

int cmd_search(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim search SCENARIO [options]");
  const std::string property_help = "check only these: " + runner::property_list();
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::string>(), "scenario file (JSON)")
    ("runs", po::value<std::string>(), "runs (default: the file's search.runs, else 1000)")
    ("time", po::value<std::string>(), "stop after this much wall time, such as 10m")
    ("seed", po::value<std::string>(), "the first run's seed (runs use SEED, SEED+1, ...)")
    ("jobs,j", po::value<std::string>(), "threads, 1 to 1024, at most 4 per core started (default: the cores)")
    ("property", po::value<std::string>(), property_help.c_str())
    ("kinds", po::value<std::string>(), "fault kinds and weights: crash=3,pause=1,partition")
    ("faults", po::value<std::string>(), "faults per run: N or MIN..MAX (default 1..6)")
    ("safety", po::value<std::string>(), "the safety phase (default 30s)")
    ("heal-bound", po::value<std::string>(), "liveness bound after healing (default 20s)")
    ("max-fault-duration", po::value<std::string>(), "longest fault (default 10s)")
    ("intensity", po::value<std::string>(),
     "largest draws: loss=0.5,duplicate=0.3,latency=500ms,clock_jump=5s,drift_ppm=500")
    ("failover-bound", po::value<std::string>(), "check failover against this bound")
    ("shrink-budget", po::value<std::string>(), "runs per finding shrunk (default 400)")
    ("no-shrink", "report findings without shrinking them")
    ("save", po::value<std::string>(), "write each shrunk scenario into this directory")
    ("unsafe-by-design", "mark saved files: the protocol is unsafe there by design")
    ("protocol", po::value<std::string>(), "search this protocol instead of the file's")
    ("variant", po::value<std::string>(), "search one of the file's variants")
    ("set", po::value<std::vector<std::string>>()->composing(),
     "fix a scenario value: --set nodes=7 (repeatable)")
    ("quiet,q", "no progress on stderr");
  // clang-format on
  po::positional_options_description positional;
  positional.add("scenario", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("scenario") == 0) {
    (vm.count("help") != 0 ? io.out : io.err) << options << "\n" << kSearchHelp;
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  const std::string file = vm["scenario"].as<std::string>();
  io::ReadResult read = runner::read_scenario_file(file);
  if (!read.ok()) {
    io.err << fmt::format("{}: {}\n", file, read.error);
    return kExitBadInput;
  }
  const io::JsonParse document = io::parse_json(read.text);
  if (!document.ok()) {
    io.err << fmt::format("{}: {}\n", file, document.error);
    return kExitBadInput;
  }
  runner::LoadOptions load;
  if (vm.count("variant") != 0) load.variant = vm["variant"].as<std::string>();
  if (vm.count("protocol") != 0) load.protocol = vm["protocol"].as<std::string>();
  if (vm.count("set") != 0) {
    for (const std::string& t : vm["set"].as<std::vector<std::string>>()) {
      const std::optional<runner::Override> o = runner::parse_override(t);
      if (!o) {
        io.err << fmt::format("electsim search: --set {}: expected path=value\n", t);
        return kExitBadInput;
      }
      load.overrides.push_back(*o);
    }
  }

  // The search section is read as the run would see the file: after --variant and every --set
  // (`--set search.runs=5` reaches it), and only once the whole file loads.
  runner::SearchConfig config = runner::SearchConfig::defaults();
  const runner::LoadResult base = runner::load_scenario_json(document.value, file, load);
  if (!base.scenario) {
    for (const std::string& m : base.messages()) io.err << m << "\n";
    return kExitBadInput;
  }
  for (const std::string& w : base.warnings) io.err << "electsim search: warning: " << w << "\n";
  if (!base.scenario->search.is_null()) {
    protocols::Problems problems;
    runner::read_search_section(base.scenario->search, config, problems);
    for (const protocols::Problem& p : problems) io.err << file << ": " << p.format() << "\n";
    if (!problems.empty()) return kExitBadInput;
  }
  auto number = [&](const char* option, std::uint64_t lo,
                    std::uint64_t hi) -> std::optional<std::optional<std::uint64_t>> {
    if (vm.count(option) == 0) return std::optional<std::uint64_t>();
    const auto v = parse_cli_number(vm[option].as<std::string>(),
                                    (std::string("--") + option).c_str(), lo, hi, "search", io);
    if (!v) return std::nullopt;
    return std::optional<std::uint64_t>(*v);
  };
  auto duration = [&](const char* option, sim::Duration lo,
                      sim::Duration hi) -> std::optional<std::optional<sim::Duration>> {
    if (vm.count(option) == 0) return std::optional<sim::Duration>();
    const std::string text = vm[option].as<std::string>();
    const auto d = sim::parse_duration(text);
    if (!d || *d < lo || *d > hi) {
      io.err << fmt::format("electsim search: --{}: expected a duration from {} to {}, found {}\n",
                            option, sim::format_duration(lo), sim::format_duration(hi),
                            text.empty() ? "nothing" : text);
      return std::nullopt;
    }
    return std::optional<sim::Duration>(*d);
  };
  const auto runs = number("runs", 1, 1'000'000'000);
  const auto seed = number("seed", 0, std::uint64_t{1} << 62);
  const auto budget = number("shrink-budget", 0, 1'000'000);
  const auto safety = duration("safety", std::chrono::seconds(1), std::chrono::hours(24));
  const auto heal = duration("heal-bound", std::chrono::milliseconds(1), std::chrono::hours(24));
  const auto longest =
      duration("max-fault-duration", std::chrono::milliseconds(1), std::chrono::hours(24));
  const auto failover =
      duration("failover-bound", std::chrono::milliseconds(1), std::chrono::hours(24 * 365));
  const auto wall = duration("time", std::chrono::seconds(1), std::chrono::hours(24 * 30));
  if (!runs || !seed || !budget || !safety || !heal || !longest || !failover || !wall) {
    return kExitBadInput;
  }
  if (*runs) config.runs = **runs;
  if (*seed) config.first_seed = **seed;
  if (*budget) config.shrink_budget = **budget;
  if (*safety) config.safety = **safety;
  if (*heal) {
    config.heal_bound = **heal;
    config.heal_bound_given = true;
  }
  if (*longest) config.max_fault_duration = **longest;
  if (*failover) {
    config.failover_bound = **failover;
    config.properties |= 1u << static_cast<unsigned>(runner::Property::failover);
  }
  if (*wall && !*runs) config.runs = 1'000'000'000;  // the time decides
  config.shrink = vm.count("no-shrink") == 0;
  config.unsafe_by_design = vm.count("unsafe-by-design") != 0;
  if (vm.count("kinds") != 0) {
    if (auto problem = runner::parse_kinds(vm["kinds"].as<std::string>(), config)) {
      io.err << fmt::format("electsim search: --kinds: expected {}\n", *problem);
      return kExitBadInput;
    }
  }
  if (vm.count("intensity") != 0) {
    if (auto problem = runner::parse_intensity(vm["intensity"].as<std::string>(), config)) {
      io.err << fmt::format("electsim search: --intensity: expected {}\n", *problem);
      return kExitBadInput;
    }
  }
  if (vm.count("faults") != 0) {
    const std::string text = vm["faults"].as<std::string>();
    const std::size_t dots = text.find("..");
    const auto lo = parse_cli_number(text.substr(0, dots), "--faults", 0, 1000, "search", io);
    if (!lo) return kExitBadInput;
    const auto hi = dots == std::string::npos ? lo
                                              : parse_cli_number(text.substr(dots + 2), "--faults",
                                                                 *lo, 1000, "search", io);
    if (!hi) return kExitBadInput;
    config.faults_min = static_cast<std::uint32_t>(*lo);
    config.faults_max = static_cast<std::uint32_t>(*hi);
  }
  if (vm.count("property") != 0) {
    if (auto problem = runner::parse_properties(vm["property"].as<std::string>(), config)) {
      io.err << fmt::format("electsim search: --property: expected {}\n", *problem);
      return kExitBadInput;
    }
  }
  unsigned jobs = runner::default_jobs();
  if (vm.count("jobs") != 0) {
    const auto j =
        parse_cli_number(vm["jobs"].as<std::string>(), "--jobs", 1, kMaxJobs, "search", io);
    if (!j) return kExitBadInput;
    jobs = static_cast<unsigned>(*j);
  }
  std::optional<std::string> save;
  if (vm.count("save") != 0) save = vm["save"].as<std::string>();
  if (save && !config.shrink) {
    io.err << "electsim search: --save writes the shrunk findings, and --no-shrink shrinks none: "
              "give one of them\n";
    return kExitBadInput;
  }
  if (save && save->empty()) {
    io.err << "electsim search: --save: expected a directory, found nothing\n";
    return kExitBadInput;
  }
  // Every file the search may save, known before any run: none may replace the scenario read.
  if (save) {
    for (int p = 0; p < runner::kPropertyCount; ++p) {
      const auto property = static_cast<runner::Property>(p);
      if (!config.wants(property)) continue;
      const std::filesystem::path out =
          std::filesystem::path(*save) /
          runner::found_file_name(base.scenario->name, base.scenario->protocol, property);
      std::error_code ec;
      if (std::filesystem::equivalent(out, file, ec)) {
        io.err << fmt::format(
            "electsim search: --save {}: a finding would be saved as {}, the scenario file this "
            "search reads; save into another directory\n",
            *save, out.string());
        return kExitBadInput;
      }
    }
  }

  runner::SearchOptions search;
  search.jobs = jobs;
  search.notice = [&](const std::string& text) { io.err << "electsim search: " << text << "\n"; };
  g_sweep_stop.store(false);
  search.stop = &g_sweep_stop;
  std::atomic<bool> time_up{false};
  search.time_up = &time_up;
  const bool show_progress = vm.count("quiet") == 0 && isatty(fileno(stderr)) != 0;
  const auto started = std::chrono::steady_clock::now();
  const std::optional<sim::Duration> time_budget = *wall;
  search.progress = [&](const runner::SearchProgress& p) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (time_budget && elapsed * 1e9 >= static_cast<double>(time_budget->count())) {
      time_up.store(true);
    }
    if (!show_progress) return;
    const double rate = elapsed > 0 ? static_cast<double>(p.done) / elapsed : 0;
    io.err << fmt::format("\rsearch: {} runs, {:.0f} runs/s, {} with a violation    ", p.done, rate,
                          p.findings)
           << std::flush;
  };
  io::set_soft_stop(&g_sweep_stop);
  runner::SearchOutcome outcome = runner::run_search(document.value, file, load, config, search);
  io::set_soft_stop(nullptr);
  if (show_progress) io.err << "\n";
  if (!outcome.result) {
    for (const std::string& m : outcome.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  const runner::SearchResult& result = *outcome.result;
  io.out << runner::format_search_report(result, config);
  const bool any_reproduced = std::any_of(result.shrunk.begin(), result.shrunk.end(),
                                          [](const runner::Shrunk& s) { return s.reproduced; });
  if (save && any_reproduced) {
    std::error_code ec;
    std::filesystem::create_directories(*save, ec);
    if (ec) {
      io.err << fmt::format("electsim search: --save {}: {}\n", *save, ec.message());
      return kExitBadInput;
    }
    std::vector<io::OutputFile> files;
    for (const runner::Shrunk& s : result.shrunk) {
      if (!s.reproduced) continue;  // a file that passes when run would be a claim untrue
      // A name made safe for a file: a scenario named "../x" saves inside the folder asked.
      const std::string name =
          runner::found_file_name(result.scenario_name, result.protocol, s.property);
      files.push_back({(std::filesystem::path(*save) / name).string(), s.document.dump(2) + "\n"});
    }
    if (auto error = io::write_files_whole(files)) {
      io.err << fmt::format("electsim search: {}; no file written\n", *error);
      return kExitBadInput;
    }
    for (const io::OutputFile& f : files) io.out << fmt::format("wrote {}\n", f.path);
  }
  const bool interrupted = result.interrupted;
  if (interrupted) {
    io.err << fmt::format("electsim search: interrupted; the first {} runs are reported\n",
                          result.runs_done);
  }
  // A property whose shrunk file does not reproduce its finding does not fail the search.
  bool violated = false;
  for (int p = 0; p < runner::kPropertyCount; ++p) {
    if (result.violations[static_cast<std::size_t>(p)] == 0) continue;
    const auto shrunk =
        std::find_if(result.shrunk.begin(), result.shrunk.end(),
                     [&](const runner::Shrunk& s) { return static_cast<int>(s.property) == p; });
    violated = violated || shrunk == result.shrunk.end() || shrunk->reproduced;
  }
  if (interrupted) return kExitInterrupted;
  return violated ? kExitExpectation : kExitOk;
}

int cmd_comparison(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim comparison [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("out,o", po::value<std::string>()->default_value("docs/comparison.md"), "the page")
    ("pictures", po::value<std::string>()->default_value("docs/img"),
     "directory for the timelines (SVG), linked from the page")
    ("scenarios", po::value<std::string>()->default_value("scenarios"),
     "directory of the shipped scenario files");
  // clang-format on
  const po::variables_map vm = parse(args, options, {});
  if (vm.count("help") != 0) {
    io.out << options << "\n"
           << "Runs the shipped scenarios under every protocol and writes the comparison table\n"
           << "(messages per election, crash, partition, process pause) with the timeline of\n"
           << "every run: the page docs/comparison.md is this command's output.\n";
    return kExitOk;
  }
  // The defaults name the repository's own files: found from the current directory, else from
  // where this electsim was built (build/*/bin/electsim), so the command works from anywhere.
  std::filesystem::path root;
  {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto is_root = [&](const fs::path& dir) {
      return fs::exists(dir / "scenarios" / "lease-gc-pause-fence.json", ec) &&
             fs::is_directory(dir / "docs", ec);
    };
    if (!is_root(fs::current_path(ec))) {
      fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
      for (int up = 0; up < 5 && !ec && !dir.empty(); ++up, dir = dir.parent_path()) {
        if (is_root(dir)) {
          root = dir;
          break;
        }
        if (dir == dir.parent_path()) break;
      }
    }
  }
  auto path_of = [&](const char* option) {
    const std::string given = vm[option].as<std::string>();
    return vm[option].defaulted() && !root.empty() ? (root / given).string() : given;
  };
  runner::ComparisonPageOptions o;
  o.page_path = path_of("out");
  o.pictures_dir = path_of("pictures");
  o.scenarios_dir = path_of("scenarios");
  const runner::ComparisonPage page = runner::comparison_page(o);
  if (!page.problems.empty()) {
    for (const std::string& p : page.problems) io.err << p << "\n";
    return kExitBadInput;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.pictures_dir, ec);
  if (auto error = io::write_files_whole(page.files)) {
    io.err << fmt::format("electsim comparison: {}; nothing written\n", *error);
    return kExitBadInput;
  }
  for (const io::OutputFile& f : page.files) io.out << fmt::format("wrote {}\n", f.path);
  return kExitOk;
}

int cmd_validate(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim validate FILE... [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("files", po::value<std::vector<std::string>>(), "scenario files");
  // clang-format on
  po::positional_options_description positional;
  positional.add("files", -1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("files") == 0) {
    (vm.count("help") != 0 ? io.out : io.err)
        << options << "\n"
        << "Checks each file and each of its variants; prints every problem with the file,\n"
        << "the JSON pointer of the field, what was expected and what was found.\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  int exit_code = kExitOk;
  for (const std::string& file : vm["files"].as<std::vector<std::string>>()) {
    const io::ReadResult text = runner::read_scenario_file(file);
    if (!text.ok()) {
      io.err << fmt::format("{}: {}\n", file, text.error);
      exit_code = kExitBadInput;
      continue;
    }
    const runner::FileCheck check = runner::check_scenario_file(text.text, file);
    if (!check.ok()) {
      for (const std::string& m : check.problems) io.err << m << "\n";
      exit_code = kExitBadInput;
      continue;
    }
    const runner::LoadResult& base = check.base;
    const std::vector<std::string>& variants = check.variants;
    const std::size_t generators = base.scenario->random_faults.size();
    io.out << fmt::format(
        "{}: ok ({}, {} nodes, {} faults{}{})\n", file, base.scenario->protocol,
        base.scenario->world.node_count, base.scenario->world.faults.size(),
        generators == 0
            ? std::string()
            : fmt::format(", {} random fault generator{}", generators, generators == 1 ? "" : "s"),
        variants.empty() ? std::string() : fmt::format(", {} variants", variants.size()));
  }
  return exit_code;
}

void list_protocols(std::ostream& out) {
  for (const protocols::ProtocolInfo& p : protocols::all_protocols()) {
    out << fmt::format("protocol {}: {}\n", p.name, p.description);
    std::size_t width = 4;
    for (const auto& spec : p.params) width = std::max(width, spec.name.size());
    for (const auto& spec : p.params) {
      std::string type = protocols::param_type_name(spec.type);
      if (!spec.choices.empty()) {
        type.clear();
        for (const auto& c : spec.choices) type += (type.empty() ? "" : "|") + c;
      }
      const std::string range = protocols::range_text(spec);
      out << fmt::format("  {:<{}}  {:<12} default {:<10} {}{}\n", spec.name, width, type,
                         protocols::default_text(spec), range.empty() ? "" : "(" + range + ") ",
                         spec.meaning);
    }
    // The matched knob: what `--set detection=D` sets in this protocol.
    out << fmt::format("  --set detection=D sets {}\n", p.detection.what);
    out << "\n";
  }
}

void list_metrics(std::ostream& out) {
  out << "metrics (bounds in a scenario's expect block):\n";
  for (const analysis::MetricInfo& m : analysis::metric_catalogue()) {
    out << fmt::format("  {:<30} {:<9} {}\n", m.name, analysis::metric_unit_name(m.unit),
                       m.meaning);
  }
  out << "\n";
}

void list_faults(std::ostream& out) {
  out << "fault kinds (scenario faults[].kind), with the keys each takes besides `at`:\n";
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    std::string keys;
    auto add = [&](const std::string& key) { keys += (keys.empty() ? "" : ", ") + key; };
    if (info.target != sim::FaultNeed::no)
      add(info.store_target ? "target (or \"store\")" : "target");
    if (info.duration == sim::FaultNeed::required) add("duration");
    if (info.duration == sim::FaultNeed::optional) add("duration (optional)");
    for (const char* key : info.keys) {
      if (key != nullptr) add(key);
    }
    out << fmt::format("  {:<14} {}\n  {:<14} keys: {}\n", info.name, info.meaning, "",
                       keys.empty() ? "none" : keys);
  }
  out << "targets: a node id, \"leader\", \"follower\" or \"random\" (resolved when the fault "
         "fires), or a server by its name in worlds that have it (\"store:1\", \"postgres\", "
         "\"redis:0\", ...; `electsim list servers` says which faults each kind takes)\n";
}

void list_servers(std::ostream& out) {
  out << "server kinds (the server registry), with what each of their forms takes:\n";
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    out << fmt::format("  {:<10} {}\n", kind.name, kind.description);
    for (const servers::ServerForm& form : kind.forms) {
      std::string faults;
      for (const sim::FaultKindInfo& f : sim::fault_catalogue()) {
        if ((form.traits.faults & sim::fault_bit(f.kind)) == 0) continue;
        faults += (faults.empty() ? "" : ", ") + std::string(f.name);
      }
      out << fmt::format("  {:<10} {}: {}; lane {}; faults: {}{}\n", "", form.noun,
                         form.traits.coordinator ? "a coordinator" : "not a coordinator",
                         sim::server_lane_name(form.traits.lane), faults.empty() ? "none" : faults,
                         form.traits.nemesis ? "; the search aims at it" : "");
    }
  }
  out << "\n";
}

void list_events(std::ostream& out) {
  out << "trace event kinds (docs/trace-format.md), with the fields each carries:\n"
      << sim::event_table_markdown();
}

int cmd_list(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim list [protocols|metrics|faults|servers|events]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("what", po::value<std::string>(),
     "protocols, metrics, faults, servers or events (default: all)")
    ("markdown", "with protocols: each protocol's parameter table as docs/scenario-format.md "
     "carries it");
  // clang-format on
  po::positional_options_description positional;
  positional.add("what", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0) {
    io.out << options << "\n";
    return kExitOk;
  }
  const std::string what = vm.count("what") != 0 ? vm["what"].as<std::string>() : "all";
  if (what != "all" && what != "protocols" && what != "metrics" && what != "faults" &&
      what != "servers" && what != "events") {
    io.err << fmt::format(
        "electsim list: expected protocols, metrics, faults, servers or events, found {}\n", what);
    return kExitBadInput;
  }
  if (vm.count("markdown") != 0) {
    if (what != "protocols") {
      io.err << fmt::format("electsim list: --markdown lists protocols only, found {}\n", what);
      return kExitBadInput;
    }
    io.out << protocols::protocol_params_markdown();
    return kExitOk;
  }
  if (what == "all" || what == "protocols") list_protocols(io.out);
  if (what == "all" || what == "metrics") list_metrics(io.out);
  if (what == "all" || what == "faults") list_faults(io.out);
  if (what == "all" || what == "servers") list_servers(io.out);
  if (what == "all" || what == "events") list_events(io.out);
  return kExitOk;
}

int cmd_check(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim check TRACE [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("trace", po::value<std::string>(), "a JSON Lines trace written by electsim run --trace")
    ("scenario", po::value<std::string>(),
     "judge the trace against this scenario's expect block; without it the verdict names the "
     "harm found (split-brain, stale writes accepted, overwrites, equal-token writes, same-epoch "
     "leaders, a broken store) and the exit code is 1 when there is any, 0 when there is none")
    ("json", "print a machine-readable summary (JSON) instead of text");
  // clang-format on
  po::positional_options_description positional;
  positional.add("trace", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("trace") == 0) {
    (vm.count("help") != 0 ? io.out : io.err)
        << options << "\n"
        << "Replays a saved trace through the same checkers and metrics as a live run.\n"
        << "Exit codes: 0 the expect block holds (without --scenario: no harm found), 1 it broke\n"
        << "(without --scenario: the trace shows harm), 2 bad input.\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  const std::string path = vm["trace"].as<std::string>();
  analysis::TraceReadResult read = analysis::read_trace_file(path);
  if (!read.error.empty()) {
    io.err << path << ": " << read.error << "\n";
    return kExitBadInput;
  }
  std::vector<analysis::Expectation> expectations;
  if (vm.count("scenario") != 0) {
    // The scenario as the trace ran it: the same protocol (a run may have used --protocol) and
    // variant, so its bounds are the ones that applied; then it must be the same world.
    const std::string scenario_path = vm["scenario"].as<std::string>();
    runner::LoadOptions options;
    options.protocol = read.header.protocol;
    if (!read.header.variant.empty()) options.variant = read.header.variant;
    runner::LoadResult loaded = runner::load_scenario_file(scenario_path, options);
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) io.err << m << "\n";
      io.err << fmt::format(
          "electsim check: {} cannot judge this trace (protocol {}{}); see above\n", scenario_path,
          read.header.protocol,
          read.header.variant.empty() ? "" : ", variant " + read.header.variant);
      return kExitBadInput;
    }
    const runner::Scenario& sc = *loaded.scenario;
    if (sc.name != read.header.scenario || sc.world.node_count != read.header.node_count ||
        sc.world.duration != read.header.duration) {
      io.err << fmt::format(
          "electsim check: the trace is of scenario \"{}\" ({} nodes, {}), but {} is \"{}\" ({} "
          "nodes, {}); give the scenario the trace was made from\n",
          read.header.scenario, read.header.node_count, sim::format_duration(read.header.duration),
          scenario_path, sc.name, sc.world.node_count, sim::format_duration(sc.world.duration));
      return kExitBadInput;
    }
    expectations = sc.expect;
  }
  analysis::Verdict verdict = analysis::check(read.report, expectations);
  // Without a scenario no expect block judges the trace: never a PASS, and any harm fails.
  verdict.judged = vm.count("scenario") != 0;
  if (vm.count("json") != 0) {
    io.out << analysis::summary_json(read.info, read.report, verdict).dump(2) << "\n";
  } else {
    io.out << analysis::format_summary(read.info, read.report, verdict);
  }
  if (!verdict.judged) {
    return analysis::harm_in(read.report).empty() && verdict.ok() ? kExitOk : kExitExpectation;
  }
  return verdict.ok() ? kExitOk : kExitExpectation;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Streams io{out, err};
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << kUsage;
    return args.empty() ? kExitBadInput : kExitOk;
  }
  if (args[0] == "--version") {
    out << "electsim 0.1.0\n";
    return kExitOk;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (command == "run") return cmd_run(rest, io);
    if (command == "compare") return cmd_compare(rest, io);
    if (command == "sweep") return cmd_sweep(rest, io);
    if (command == "search") return cmd_search(rest, io);
    if (command == "merge") return cmd_merge(rest, io);
    if (command == "comparison") return cmd_comparison(rest, io);
    if (command == "validate") return cmd_validate(rest, io);
    if (command == "list") return cmd_list(rest, io);
    if (command == "check") return cmd_check(rest, io);
    err << fmt::format("electsim: unknown command '{}'\n\n{}", command, kUsage);
    return kExitBadInput;
  } catch (const po::error& e) {
    err << fmt::format("electsim {}: {}\n(see electsim {} --help)\n", command, e.what(), command);
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << fmt::format("electsim {}: {}\n", command, e.what());
    return kExitBadInput;
  }
}

}  // namespace electsim::cli
