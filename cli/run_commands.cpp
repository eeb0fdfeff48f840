// electsim run, compare and comparison (cli/common.hpp): one scenario, every protocol under one
// scenario, and the measured comparison page.
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
  for (const drawing::OutputFormat& format : drawing::output_formats()) {
    if (!format.one_election || vm.count(format.flag) == 0) continue;
    if (auto refused = runner::drawing_refused(*base.scenario, fmt::format("--{}", format.flag))) {
      io.err << "electsim run: " << *refused << "\n";
      return kExitBadInput;
    }
  }
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

}  // namespace electsim::cli
