// electsim validate, list and check (cli/common.hpp): scenario files checked without running,
// what the registries hold, and a saved trace analysed offline.
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

void list_protocols(std::ostream& out) {
  for (const protocols::ProtocolInfo& p : protocols::all_protocols()) {
    out << fmt::format("protocol {}: {}\n", p.name, p.description);
    std::size_t width = 4;
    for (const auto& spec : p.params) width = std::max(width, spec.name.size());
    for (const auto& spec : p.params) {
      std::string type = params::param_type_name(spec.type);
      if (!spec.choices.empty()) {
        type.clear();
        for (const auto& c : spec.choices) type += (type.empty() ? "" : "|") + c;
      }
      const std::string range = params::range_text(spec);
      out << fmt::format("  {:<{}}  {:<12} default {:<10} {}{}\n", spec.name, width, type,
                         params::default_text(spec), range.empty() ? "" : "(" + range + ") ",
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
      if (!form.traits.requests.empty()) {
        out << fmt::format("  {:<10} answers: {}\n", "", fmt::join(form.traits.requests, ", "));
      }
    }
    if (!kind.clock_index.empty()) {
      out << fmt::format("  {:<10} clocks of their own: /clocks/{}, by {} index ({})\n", "",
                         kind.name, kind.clock_index, kind.count_setting);
    }
  }
  out << "\n";
}

void list_events(std::ostream& out) {
  out << "trace event kinds (docs/trace-format.md), with the fields each carries:\n"
      << sim::event_table_markdown();
}

}  // namespace

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

}  // namespace electsim::cli
