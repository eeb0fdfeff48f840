// electsim play (cli/common.hpp): the playground page, with the scenarios given.
#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "cli/playground_module.hpp"
#include "io/input.hpp"
#include "io/output.hpp"
#include "playground/experiments.hpp"
#include "playground/page.hpp"
#include "runner/loader.hpp"

namespace electsim::cli {

int cmd_play(const std::vector<std::string>& args, Streams io) {
  po::options_description options("electsim play [SCENARIO...] [options]");
  // clang-format off
  options.add_options()
    ("help,h", "describe this command")
    ("scenario", po::value<std::vector<std::string>>()->composing(),
     "scenario files the page offers, after its guided experiments")
    ("output,o", po::value<std::string>()->default_value("playground.html"), "the page to write")
    ("module", po::value<std::string>(),
     "the WebAssembly module to embed instead of this build's own (electsim-playground.js, as "
     "scripts/playground builds it)")
    ("open", po::value<std::string>(),
     "what the page opens on: a scenario by its file's name without .json, or experiment:ID "
     "(default: the first scenario given, else the first experiment)");
  // clang-format on
  po::positional_options_description positional;
  positional.add("scenario", -1);
  const po::variables_map vm = parse(args, options, positional);
  if (vm.count("help") != 0) {
    io.out << options << "\n"
           << "Writes the playground: one self-contained HTML page that runs electsim itself,\n"
           << "compiled to WebAssembly, in the browser. Pick a guided experiment or a scenario,\n"
           << "play it, and crash, pause, isolate or partition nodes with a click at any moment;\n"
           << "every click is a fault at its true time, and \"Save as scenario\" writes a file\n"
           << "that electsim run replays to the same trace hash. Experiments:";
    for (const playground::Experiment& x : playground::experiments()) {
      io.out << fmt::format("\n  experiment:{:<20} {}", x.id, x.title);
    }
    io.out << "\n";
    return kExitOk;
  }
  const std::string output = vm["output"].as<std::string>();
  std::vector<std::string> files;
  if (vm.count("scenario") != 0) files = vm["scenario"].as<std::vector<std::string>>();
  std::vector<std::string> files_in = files;  // every input, for the output not to clash with

  playground::PageInput input;
  if (vm.count("module") != 0) {
    const std::string path = vm["module"].as<std::string>();
    // The module is about 3 MB; a tenth of a gigabyte is no module.
    io::ReadResult read = io::read_file_bounded(path, 100u << 20, "module");
    if (!read.ok()) {
      io.err << fmt::format("electsim play: --module {}: {}\n", path, read.error);
      return kExitBadInput;
    }
    if (read.text.find("createElectsimModule") == std::string::npos) {
      io.err << fmt::format(
          "electsim play: --module {}: expected the playground's module "
          "(electsim-playground.js, which defines createElectsimModule), found another file\n",
          path);
      return kExitBadInput;
    }
    input.module_js = std::move(read.text);
    files_in.push_back(path);
  } else {
    input.module_js = playground_module();
  }
  if (input.module_js.empty()) {
    io.err << "electsim play: this electsim was built without the playground's WebAssembly "
              "module; build it with scripts/playground (Debian's emscripten), then configure "
              "with -DELECTSIM_PLAYGROUND_MODULE=build/wasm/bin/electsim-playground.js and "
              "build again\n";
    return kExitBadInput;
  }
  // Every file is read once and must load as `electsim run` would load it.
  bool bad = false;
  for (const std::string& path : files) {
    io::ReadResult read = runner::read_scenario_file(path);
    if (!read.ok()) {
      io.err << fmt::format("{}: {}\n", path, read.error);
      bad = true;
      continue;
    }
    runner::LoadResult loaded = runner::load_scenario_text(read.text, path);
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) io.err << m << "\n";
      bad = true;
      continue;
    }
    const std::string id = std::filesystem::path(path).stem().string();
    const bool taken = std::any_of(input.scenarios.begin(), input.scenarios.end(),
                                   [&](const playground::PageScenario& s) { return s.id == id; });
    if (taken) {
      io.err << fmt::format(
          "electsim play: two scenario files are named {}.json; the page links each by its "
          "name\n",
          id);
      bad = true;
      continue;
    }
    input.scenarios.push_back({id, id, std::move(read.text)});
  }
  if (bad) return kExitBadInput;
  if (vm.count("open") != 0) {
    input.open = vm["open"].as<std::string>();
    const auto& xs = playground::experiments();
    const bool known =
        std::any_of(input.scenarios.begin(), input.scenarios.end(),
                    [&](const playground::PageScenario& s) { return s.id == input.open; }) ||
        std::any_of(xs.begin(), xs.end(), [&](const playground::Experiment& x) {
          return "experiment:" + x.id == input.open;
        });
    if (!known) {
      io.err << fmt::format(
          "electsim play: --open: expected a scenario given (by its file's name without .json) "
          "or experiment:ID (electsim play --help lists them), found {}\n",
          input.open);
      return kExitBadInput;
    }
  } else if (!input.scenarios.empty()) {
    input.open = input.scenarios.front().id;
  }
  if (!paths_distinct({output}, files_in, "play", io)) return kExitBadInput;
  if (auto problem = io::unwritable_output(output)) {
    io.err << fmt::format("electsim play: -o {}: {}\n", output, *problem);
    return kExitBadInput;
  }
  if (auto error = io::write_files_whole({{output, playground::render_page(input)}})) {
    io.err << fmt::format("electsim play: {}\n", *error);
    return kExitBadInput;
  }
  io.err << fmt::format("wrote {}\n", output);
  return kExitOk;
}

}  // namespace electsim::cli
