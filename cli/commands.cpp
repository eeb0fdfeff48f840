// The electsim commands: parse the command line, call the runner, print. Nothing here decides what
// a run means; it only chooses what to run and how to show it. Exceptions never leave run_cli.
// The commands live in cli/*_command(s).cpp; what they share is declared in cli/common.hpp.
#include "cli/commands.hpp"
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

constexpr const char* kUsage =
    "usage: electsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO]     run a scenario file (no file: the built-in flagship, with and without\n"
    "                     fencing) and print who led when, the safety findings, failover, the\n"
    "                     service's outages whatever their cause, and cost (a fleet of\n"
    "                     services: each judged alone, and how they spread)\n"
    "  compare SCENARIO   run a scenario under every protocol with the same seed and faults,\n"
    "                     and print them side by side (--set detection=20s: one silent-leader\n"
    "                     time for every design)\n"
    "  sweep SCENARIO     run a grid of parameter values x seeds (x protocols) in parallel and\n"
    "                     summarise each point: failover percentiles, split-brain and stale-write\n"
    "                     probability, cost; CSV, JSON and an SVG plot\n"
    "  search SCENARIO    random fault schedules in a safety then a healing phase; each\n"
    "                     violation shrunk to a minimal scenario file\n"
    "  merge PART...      combine the parts of a sweep or a search split with --shard into\n"
    "                     exactly what one process gives\n"
    "  comparison         write the measured comparison page (docs/comparison.md)\n"
    "  validate FILE...   check scenario files without running them\n"
    "  list [WHAT]        protocols and their parameters, metrics, fault kinds, server kinds,\n"
    "                     trace events\n"
    "  check TRACE        analyse a saved JSON Lines trace offline; without --scenario it names\n"
    "                     the harm found and exits 1 on any, never PASS\n"
    "  play [SCENARIO...] write the playground: one HTML page running electsim in the browser,\n"
    "                     where a click crashes, pauses or partitions nodes at any moment\n"
    "\n"
    "`electsim <command> --help` describes each command's options.\n"
    "exit codes: 0 fine, 1 an expectation of the scenario broke (search: a property broke),\n"
    "            2 bad input, 130 a sweep or search stopped by Ctrl-C or SIGTERM (what\n"
    "            finished is written or reported)\n"
    "limits on every input and output: README, \"Limits\"\n";

}  // namespace

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

bool paths_distinct(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs,
                    const char* command, Streams io) {
  if (auto clash = io::clashing_paths(outputs, inputs)) {
    io.err << fmt::format("electsim {}: {}\n", command, *clash);
    return false;
  }
  return true;
}

bool run_outputs_empty(const po::variables_map& vm) {
  for (const drawing::OutputFormat& format : drawing::output_formats()) {
    if (vm.count(format.flag) != 0) return false;
  }
  return true;
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

std::atomic<bool> g_sweep_stop{false};

std::string format_eta(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

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
    if (command == "play") return cmd_play(rest, io);
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
