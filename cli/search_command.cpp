// electsim search (cli/common.hpp): random fault schedules against the scenario's properties,
// each violation shrunk and saved.
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

constexpr const char* kSearchHelp =
    "Runs the scenario's world and protocol many times, each under a fault schedule a nemesis\n"
    "draws from the run's seed. Faults fly in the safety phase, where the safety properties must\n"
    "hold; at its end every fault heals, and a single leader must be writing again within the\n"
    "healing bound. The first violation of each property is shrunk to a minimal schedule and\n"
    "written with --save as an ordinary scenario file that `electsim run` reproduces.\n"
    "The same command gives the same findings in the same order, whatever --jobs is; Ctrl-C\n"
    "keeps the runs that finished. Exit: 0 no violation, 1 a property broke, 2 bad input,\n"
    "130 stopped. docs/search.md has the details.\n";

}  // namespace

// The report, the saved files and the exit code of a finished search (one process's, or merged).
int report_search(const runner::SearchResult& result, const runner::SearchConfig& config,
                  const std::optional<std::string>& save, Streams io);

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
    ("shard", po::value<std::string>(),
     "i/n: run every n-th run from run i-1, shrink its findings and write PREFIX.part")
    ("out,o", po::value<std::string>(), "with --shard: the part's prefix (PREFIX.part)")
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
    params::Problems problems;
    runner::read_search_section(base.scenario->search, config, problems);
    for (const params::Problem& p : problems) io.err << file << ": " << p.format() << "\n";
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

  std::optional<runner::Shard> shard;
  if (vm.count("shard") != 0) {
    const auto parsed = runner::parse_shard(vm["shard"].as<std::string>());
    if (!parsed.value) {
      io.err << fmt::format("electsim search: --shard: {}\n", parsed.error);
      return kExitBadInput;
    }
    shard = *parsed.value;
    if (vm.count("out") == 0 || vm["out"].as<std::string>().empty()) {
      io.err << "electsim search: --shard needs -o PREFIX (the part is written to PREFIX.part)\n";
      return kExitBadInput;
    }
    // A part must hold its whole share, or the merge would not be one search's.
    if (*wall) {
      io.err << "electsim search: --shard runs its whole share of --runs, so that the merged parts "
                "are one search; --time would stop it part way. Give --runs\n";
      return kExitBadInput;
    }
    if (save) {
      io.err << "electsim search: a shard writes only PREFIX.part; `electsim merge PARTS --save "
                "DIR` saves the findings\n";
      return kExitBadInput;
    }
  } else if (vm.count("out") != 0) {
    io.err << "electsim search: -o names a shard's part; give --shard i/n with it\n";
    return kExitBadInput;
  }

  runner::SearchOptions search;
  search.jobs = jobs;
  search.shard = shard;
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
  if (shard) {
    const std::string path = vm["out"].as<std::string>() + ".part";
    if (auto error = io::write_files_whole({{path, runner::search_part(result, config, *shard)}})) {
      io.err << fmt::format("electsim search: {}\n", *error);
      return kExitBadInput;
    }
    std::uint64_t violating = 0;
    for (const std::uint64_t v : result.violations) violating += v;
    io.out << fmt::format(
        "shard {}/{}: {} of the search's {} runs, {} violation{} (counted per property), {} "
        "finding{} shrunk, written to {}\n",
        shard->index, shard->count, result.runs_done, config.runs, violating,
        violating == 1 ? "" : "s", result.shrunk.size(), result.shrunk.size() == 1 ? "" : "s",
        path);
    if (result.interrupted) {
      io.err << "electsim search: interrupted; this part cannot be merged: run the shard again\n";
      return kExitInterrupted;
    }
    return kExitOk;
  }
  return report_search(result, config, save, io);
}

int merge_search(const std::vector<runner::PartText>& parts, const std::optional<std::string>& save,
                 Streams io) {
  const runner::SearchMerge merged = runner::merge_search_parts(parts);
  if (!merged.result) {
    for (const std::string& m : merged.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  return report_search(*merged.result, merged.config, save, io);
}

int report_search(const runner::SearchResult& result, const runner::SearchConfig& config,
                  const std::optional<std::string>& save, Streams io) {
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

}  // namespace electsim::cli
