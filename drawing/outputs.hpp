// The files one run can write besides its summary, as one registry: the JSON Lines trace, the
// Perfetto trace, the timeline SVG, the replay page and a replicated store's history of client
// operations. Each is an observer of the run's events,
// made from what the run knows, and finished into its file once the report is in. The runner runs
// whatever outputs it is asked for and `electsim run` offers one flag per entry, so adding an
// output format is a class in drawing/ and a row in output_formats().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "analysis/expect.hpp"
#include "analysis/report.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "io/output.hpp"
#include "sim/event.hpp"
#include "sim/kernel.hpp"

namespace electsim::drawing {

// What an output may know of the run it will watch.
struct OutputSetup {
  const analysis::TraceHeader& header;
  const sim::WorldConfig& world;
  std::optional<sim::Duration> lease_ttl;  // the lease protocol's TTL, if the protocol has one
  bool lease_judged_by_store = false;
  sim::Duration store_min_ttl{0};
  std::uint64_t max_trace_bytes = 0;  // the scenario's limits.max_trace_bytes
  std::size_t replay_events_max = 0;  // bounds on what pictures keep in memory
  std::size_t timeline_items_max = 0;
};

// What the run found, for outputs that show it.
struct RunOutcome {
  const analysis::Report& report;
  const analysis::Verdict& verdict;
  const analysis::RunInfo& info;
};

struct OutputDone {
  // A picture's bytes, for the caller to write with the run's other outputs, whole or not at
  // all; nullopt for a streamed file.
  std::optional<std::string> content;
  std::string error;  // why nothing was written (a limit passed, a failed write); "" if fine
  // A streamed file, complete under its temporary name, for the caller to rename with the
  // run's other outputs (or to discard, if any of them failed).
  std::unique_ptr<io::TempFile> staged = nullptr;
};

class RunOutput {
 public:
  virtual ~RunOutput() = default;
  virtual sim::Observer& observer() = 0;
  virtual OutputDone finish(const RunOutcome& outcome) = 0;
};

struct OutputFormat {
  const char* flag;  // `electsim run --flag FILE`
  const char* help;
  std::unique_ptr<RunOutput> (*make)(const std::string& path, const OutputSetup& setup);
  // It draws the world as one election (its split-brain marks, its leader lanes): a fleet's many
  // services, each leading at once, it would draw as one split brain, so a fleet is refused.
  bool one_election = false;
};

std::span<const OutputFormat> output_formats();
// What a run says when its timeline would pass `max` spans and marks (TimelineRecorder's limit).
std::string timeline_limit_message(std::size_t max);
const OutputFormat* find_output_format(std::string_view flag);

}  // namespace electsim::drawing
