// What the electsim commands share (cli/commands.cpp): the streams they print to, exit codes,
// strict parsing of command-line numbers and lists, and the commands themselves, one file each
// family: run_commands.cpp (run, compare, comparison), sweep_commands.cpp (sweep, merge),
// search_command.cpp (search), info_commands.cpp (validate, list, check), play_command.cpp
// (play). Private to cli/.
#pragma once

#include <boost/program_options.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runner/grid.hpp"

namespace electsim::cli {
namespace po = boost::program_options;

inline constexpr int kExitOk = 0;
inline constexpr int kExitExpectation = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 130;  // the shell's code for a run stopped by Ctrl-C

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

// Parses `args` against `options` with `positional` names; throws po::error on bad input.
po::variables_map parse(const std::vector<std::string>& args,
                        const po::options_description& options,
                        const po::positional_options_description& positional);
// "out.svg" with suffix "b" is "out-b.svg"; an empty suffix leaves the path.
std::string with_suffix(const std::string& path, const std::string& suffix);
// A whole number from the command line, read as strictly as a number in a scenario file: digits
// only (no sign, no spaces, no hex), within [min, max]. The message names the option.
std::optional<std::uint64_t> parse_cli_number(const std::string& text, const char* option,
                                              std::uint64_t min, std::uint64_t max,
                                              const char* command, Streams io);
// The most threads a sweep may use: each holds one run in memory.
inline constexpr std::uint64_t kMaxJobs = 1024;
// Refuses outputs that clash with each other or with an input before anything runs.
bool paths_distinct(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs,
                    const char* command, Streams io);
// True when the command line asks `electsim run` for no file output.
bool run_outputs_empty(const po::variables_map& vm);
std::vector<std::string> split_list(const std::string& text);
// A comma-separated list of names for `option`, each one of `known`: an empty list or an empty
// name (",,") is an error, as is an unknown name, with the names that are known.
std::optional<std::vector<std::string>> name_list(const std::string& text, const char* option,
                                                  const std::vector<std::string>& known,
                                                  const char* command, Streams io);
// "42s", "3m05s", "1h02m": a sweep's or search's time to go.
std::string format_eta(double seconds);

// Ctrl-C or SIGTERM (what Slurm sends at a job's time limit) during a sweep or search: the first
// stops it after the runs under way (their records are kept and the outputs written); a second
// one ends the process the usual way (io::install_signal_cleanup removes any temporary first).
extern std::atomic<bool> g_sweep_stop;

int cmd_run(const std::vector<std::string>& args, Streams io);
int cmd_compare(const std::vector<std::string>& args, Streams io);
int cmd_comparison(const std::vector<std::string>& args, Streams io);
int cmd_sweep(const std::vector<std::string>& args, Streams io);
int cmd_merge(const std::vector<std::string>& args, Streams io);
int cmd_search(const std::vector<std::string>& args, Streams io);
// `electsim merge` of a search's parts (`electsim search --shard`): the report, the saved files
// and the exit code the whole search gives.
int merge_search(const std::vector<runner::PartText>& parts, const std::optional<std::string>& save,
                 Streams io);
int cmd_validate(const std::vector<std::string>& args, Streams io);
int cmd_list(const std::vector<std::string>& args, Streams io);
int cmd_check(const std::vector<std::string>& args, Streams io);
int cmd_play(const std::vector<std::string>& args, Streams io);

}  // namespace electsim::cli
