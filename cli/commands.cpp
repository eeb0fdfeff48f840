// The electsim commands: parse the command line, call the runner, print. Nothing here decides what
// a run means; it only chooses what to run and how to show it. Exceptions never leave run_cli.
#include "cli/commands.hpp"

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <exception>
#include <fstream>
#include <optional>
#include <sstream>

#include "analysis/expect.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "protocols/registry.hpp"
#include "runner/compare.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
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
    "                     fencing) and print who led when, the safety findings, failover and cost\n"
    "  compare SCENARIO   run a scenario under every protocol with the same seed and faults,\n"
    "                     and print them side by side\n"
    "  validate FILE...   check scenario files without running them\n"
    "  list [WHAT]        protocols and their parameters, metrics, fault kinds\n"
    "  check TRACE        analyse a saved JSON Lines trace offline\n"
    "\n"
    "`electsim <command> --help` describes each command's options.\n"
    "exit codes: 0 fine, 1 an expectation of the scenario broke, 2 bad input\n";

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

int cmd_run(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim run [SCENARIO] [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::string>(), "scenario file (JSON); none: the built-in flagship")
    ("seed", po::value<std::uint64_t>(), "root seed, overriding the file's")
    ("set", po::value<std::vector<std::string>>()->composing(),
     "override a scenario value: --set protocol.ttl=10s --set nodes=7 (repeatable)")
    ("variant", po::value<std::string>(), "run one of the file's variants")
    ("all-variants", "run the scenario and every variant it defines (default without a file)")
    ("protocol", po::value<std::string>(),
     "run this protocol instead of the file's (parameters from the file's `protocols` section)")
    ("json", "print a machine-readable summary (JSON) instead of text")
    ("trace", po::value<std::string>(),
     "write the JSON Lines trace to FILE (with several variants: FILE-<variant>.ext too)");
  // clang-format on
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
  if (vm.count("seed") != 0) load.seed = vm["seed"].as<std::uint64_t>();
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
  auto load_one = [&](const std::optional<std::string>& variant) {
    runner::LoadOptions o = load;
    o.variant = variant;
    return from_file ? runner::load_scenario_file(file, o)
                     : runner::load_scenario_text(runner::flagship_scenario_text(),
                                                  "<built-in flagship>", o);
  };

  runner::LoadResult base = load_one(std::nullopt);
  if (!base.scenario) {
    for (const std::string& m : base.messages()) io.err << m << "\n";
    return kExitBadInput;
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
  for (const auto& variant : variants) {
    runner::LoadResult loaded = variant ? load_one(variant) : std::move(base);
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) io.err << m << "\n";
      return kExitBadInput;
    }
    runner::RunOptions run;
    if (vm.count("trace") != 0) {
      run.trace_path = with_suffix(vm["trace"].as<std::string>(), variant.value_or(""));
    }
    const runner::RunResult result = runner::run_scenario(*loaded.scenario, run);
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
  if (json) io.out << (json_runs.size() == 1 ? json_runs[0] : json_runs).dump(2) << "\n";
  return exit_code;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int cmd_compare(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim compare SCENARIO [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::string>(), "scenario file (JSON)")
    ("protocols", po::value<std::string>(), "comma-separated protocols (default: all of them)")
    ("seed", po::value<std::uint64_t>(), "root seed, overriding the file's")
    ("set", po::value<std::vector<std::string>>()->composing(),
     "override a scenario value, as for run (repeatable)")
    ("variant", po::value<std::string>(), "compare one of the file's variants")
    ("json", "print the table and every run's summary as JSON")
    ("csv", "print one CSV row per protocol");
  // clang-format on
  po::positional_options_description positional;
  positional.add("scenario", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("scenario") == 0) {
    io.out
        << options << "\n"
        << "Runs the scenario once per protocol with the same seed and the same fault schedule\n"
        << "(a fault aimed at the leader hits each protocol's own leader), and prints failover,\n"
        << "write outage, leaderless time, split-brain, stale writes and messages per election\n"
        << "side by side. Per-protocol parameters come from the file's `protocols` section and\n"
        << "per-protocol bounds from `expect_by_protocol`. Exit 1 if any protocol broke one.\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  if (vm.count("json") != 0 && vm.count("csv") != 0) {
    io.err << "electsim compare: choose one of --json and --csv\n";
    return kExitBadInput;
  }
  const std::string file = vm["scenario"].as<std::string>();
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    io.err << fmt::format("{}: cannot read the file\n", file);
    return kExitBadInput;
  }
  std::stringstream text;
  text << in.rdbuf();

  runner::LoadOptions load;
  if (vm.count("seed") != 0) load.seed = vm["seed"].as<std::uint64_t>();
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
  std::vector<std::string> chosen = protocols::protocol_names();
  if (vm.count("protocols") != 0) {
    chosen = split_list(vm["protocols"].as<std::string>());
    const std::vector<std::string> known = protocols::protocol_names();
    for (const std::string& p : chosen) {
      if (protocols::find_protocol(p) == nullptr) {
        std::string names;
        for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
        io.err << fmt::format("electsim compare: --protocols: expected names from {}, found {}\n",
                              names, p);
        return kExitBadInput;
      }
    }
    if (chosen.empty()) {
      io.err << "electsim compare: --protocols: expected at least one protocol\n";
      return kExitBadInput;
    }
  }
  const runner::CompareOutcome outcome = runner::compare_protocols(text.str(), file, load, chosen);
  if (!outcome.result) {
    for (const std::string& m : outcome.problems) io.err << m << "\n";
    return kExitBadInput;
  }
  const runner::CompareResult& result = *outcome.result;
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
    io.out << options << "\n"
           << "Checks each file and each of its variants; prints every problem with the file,\n"
           << "the JSON pointer of the field, what was expected and what was found.\n";
    return vm.count("help") != 0 ? kExitOk : kExitBadInput;
  }
  int exit_code = kExitOk;
  for (const std::string& file : vm["files"].as<std::vector<std::string>>()) {
    runner::LoadResult base = runner::load_scenario_file(file);
    if (!base.scenario) {
      for (const std::string& m : base.messages()) io.err << m << "\n";
      exit_code = kExitBadInput;
      continue;
    }
    const std::vector<std::string> variants = runner::variant_names(base.scenario->document);
    bool ok = true;
    for (const std::string& v : variants) {
      runner::LoadOptions o;
      o.variant = v;
      runner::LoadResult loaded = runner::load_scenario_file(file, o);
      if (!loaded.scenario) {
        for (const std::string& m : loaded.messages()) io.err << m << " (variant " << v << ")\n";
        ok = false;
      }
    }
    if (!ok) {
      exit_code = kExitBadInput;
      continue;
    }
    io.out << fmt::format(
        "{}: ok ({}, {} nodes, {} faults{})\n", file, base.scenario->protocol,
        base.scenario->world.node_count, base.scenario->world.faults.size(),
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
      out << fmt::format("  {:<{}}  {:<12} default {:<10} {}\n", spec.name, width, type,
                         spec.default_text, spec.meaning);
    }
    out << "\n";
  }
}

void list_metrics(std::ostream& out) {
  out << "metrics (bounds in a scenario's expect block):\n";
  for (const analysis::MetricInfo& m : analysis::metric_catalogue()) {
    const char* unit = m.unit == analysis::MetricUnit::duration   ? "duration"
                       : m.unit == analysis::MetricUnit::count    ? "count"
                       : m.unit == analysis::MetricUnit::fraction ? "fraction"
                                                                  : "rate";
    out << fmt::format("  {:<26} {:<9} {}\n", m.name, unit, m.meaning);
  }
  out << "\n";
}

void list_faults(std::ostream& out) {
  out << "fault kinds (scenario faults[].kind):\n  ";
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    out << sim::fault_kind_name(static_cast<sim::FaultKind>(k))
        << (k + 1 < sim::kFaultKindCount ? ", " : "\n");
  }
  out << "targets: a node id, \"leader\", \"follower\" or \"random\" (resolved when the fault "
         "fires)\n";
}

int cmd_list(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim list [protocols|metrics|faults]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("what", po::value<std::string>(), "protocols, metrics or faults (default: all)");
  // clang-format on
  po::positional_options_description positional;
  positional.add("what", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0) {
    io.out << options << "\n";
    return kExitOk;
  }
  const std::string what = vm.count("what") != 0 ? vm["what"].as<std::string>() : "all";
  if (what != "all" && what != "protocols" && what != "metrics" && what != "faults") {
    io.err << fmt::format("electsim list: expected protocols, metrics or faults, found {}\n", what);
    return kExitBadInput;
  }
  if (what == "all" || what == "protocols") list_protocols(io.out);
  if (what == "all" || what == "metrics") list_metrics(io.out);
  if (what == "all" || what == "faults") list_faults(io.out);
  return kExitOk;
}

int cmd_check(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim check TRACE [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("trace", po::value<std::string>(), "a JSON Lines trace written by electsim run --trace")
    ("scenario", po::value<std::string>(), "judge the trace against this scenario's expect block")
    ("json", "print a machine-readable summary (JSON) instead of text");
  // clang-format on
  po::positional_options_description positional;
  positional.add("trace", 1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0 || vm.count("trace") == 0) {
    io.out << options << "\n"
           << "Replays a saved trace through the same checkers and metrics as a live run.\n";
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
    runner::LoadResult loaded = runner::load_scenario_file(vm["scenario"].as<std::string>());
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) io.err << m << "\n";
      return kExitBadInput;
    }
    expectations = loaded.scenario->expect;
  }
  const analysis::Verdict verdict = analysis::check(read.report, expectations);
  if (vm.count("json") != 0) {
    io.out << analysis::summary_json(read.info, read.report, verdict).dump(2) << "\n";
  } else {
    io.out << analysis::format_summary(read.info, read.report, verdict);
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
