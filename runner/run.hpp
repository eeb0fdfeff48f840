// Running a scenario: builds the kernel from a Scenario, attaches the analysis (and a trace writer
// when asked), runs, and returns the report, the verdict on the expect block and the trace hash.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/expect.hpp"
#include "analysis/report.hpp"
#include "analysis/summary.hpp"
#include "drawing/outputs.hpp"
#include "drawing/replay_html.hpp"
#include "drawing/timeline.hpp"
#include "io/output.hpp"
#include "runner/scenario.hpp"
#include "sim/kernel.hpp"

namespace electsim::runner {

// One file a run writes: a format of drawing/outputs.hpp and where it goes.
struct OutputRequest {
  const drawing::OutputFormat* format = nullptr;
  std::string path;
};

struct RunOptions {
  // The files to write (the trace, the Perfetto trace, the timeline, the replay page, ...).
  // Streamed ones are written to temporaries during the run; pictures come back in
  // RunResult::pictures for the caller to write.
  std::vector<OutputRequest> outputs;
  // True: the streamed files are renamed into place at the end when the run has no error, and
  // removed when it has one. False: they come back finished but not renamed, in
  // RunResult::staged, for the caller to commit with the outputs of other runs.
  bool commit_streamed = true;
  // Adds an output by its flag name ("trace", "svg", "html", "perfetto").
  RunOptions& output(std::string_view flag, std::string path);
  // Runs with this root seed instead of the scenario's. The run is then exactly the one
  // `electsim run --seed SEED` makes of the same scenario: sweeps load a grid point once and run
  // every seed from it.
  std::optional<std::uint64_t> seed;
  // When it becomes true the run stops early and says so in `errors` (sweeps, on Ctrl-C).
  const std::atomic<bool>* cancel = nullptr;
  // Keep the run's timeline in RunResult::timeline (compare draws several in one picture).
  bool timeline = false;
  // Bounds on what the pictures keep in memory; a run past one reports it in `errors`.
  std::size_t replay_events_max = drawing::ReplayRecorder::kMaxEvents;
  std::size_t timeline_items_max = drawing::TimelineRecorder::kMaxItems;
};

// The world of one run: the scenario's world with `seed` as its root seed, and the scenario's
// random faults and clock ranges drawn from that seed (each from its own stream).
sim::WorldConfig world_for_seed(const Scenario& scenario, std::uint64_t seed);

struct RunResult {
  analysis::RunInfo info;
  analysis::Report report;
  analysis::Verdict verdict;
  sim::RunStats stats;
  std::string trace_hash;                     // 16 hex digits over the event stream
  std::vector<std::string> errors;            // trace could not be written, event limit hit, ...
  std::optional<drawing::Timeline> timeline;  // with RunOptions::timeline
  std::vector<io::OutputFile> pictures;       // the pictures asked for, to write
  std::vector<std::string> streamed;          // the streamed files written (or staged)
  io::StagedFiles staged;                     // with RunOptions::commit_streamed false
  bool ok() const { return errors.empty() && verdict.ok(); }
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

// A run advanced in slices from outside: the playground runs a slice per animation frame, so that
// its page never freezes. It is run_scenario's own machinery (run_scenario is a session run to
// its end in one slice), so a run in slices gives exactly the result, trace and hash of one run.
class Session {
 public:
  Session(const Scenario& scenario, const RunOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the events due by `until` (at most the run's end), at most `max_steps` kernel steps of
  // them. True once the run is at its end: its duration, its event limit, or cancelled.
  bool advance(sim::Time until, std::uint64_t max_steps);
  bool done() const;
  sim::Time now() const;
  // The run's end (its duration) and the kernel steps so far.
  sim::Time end() const;
  std::uint64_t steps() const;
  // Runs to the end what is left, and returns what run_scenario returns. Once only.
  RunResult finish();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Why `drawn` ("--svg", a picture some output draws) cannot be made of `scenario`, or nullopt:
// the pictures draw one election, and a fleet's services, each leading at once, would show as one
// split brain. run_scenario refuses such a run before it starts; commands ask first.
std::optional<std::string> drawing_refused(const Scenario& scenario, std::string_view drawn);

// The trace header of a run of `scenario` in `world` (world_for_seed's): what it ran, its world's
// topology and what analysis needs to judge it alike live and from the trace.
analysis::TraceHeader trace_header(const Scenario& scenario, const sim::WorldConfig& world);

}  // namespace electsim::runner
