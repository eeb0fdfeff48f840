// The registry of a run's file outputs: see drawing/outputs.hpp.
#include "drawing/outputs.hpp"

#include <fmt/format.h>

#include "analysis/history.hpp"
#include "drawing/perfetto.hpp"
#include "drawing/replay_html.hpp"
#include "drawing/timeline.hpp"
#include "drawing/timeline_svg.hpp"

namespace electsim::drawing {

namespace {

std::optional<bool> judged_by(const OutputSetup& s) {
  return s.lease_ttl ? std::optional<bool>(s.lease_judged_by_store) : std::nullopt;
}

// A writer that streams to a temporary file and renames it in close().
template <typename Writer>
class Streamed final : public RunOutput {
 public:
  Streamed(const std::string& path, const OutputSetup& s, const char* what)
      : writer_(path, s.header, s.max_trace_bytes), path_(path), what_(what) {}
  sim::Observer& observer() override { return writer_; }
  OutputDone finish(const RunOutcome&) override {
    if (std::unique_ptr<io::TempFile> staged = writer_.close_staged()) {
      return {std::nullopt, "", std::move(staged)};
    }
    return {std::nullopt, fmt::format("{} {} not written: {}", what_, path_, writer_.error())};
  }

 private:
  Writer writer_;
  std::string path_;
  const char* what_;
};

class TimelineOutput final : public RunOutput {
 public:
  explicit TimelineOutput(const OutputSetup& s)
      : recorder_(s.header, s.world, s.lease_ttl, judged_by(s)), max_(s.timeline_items_max) {
    recorder_.set_max_items(max_);
  }
  sim::Observer& observer() override { return recorder_; }
  OutputDone finish(const RunOutcome& outcome) override {
    if (recorder_.overflowed()) return {std::nullopt, timeline_limit_message(max_)};
    return {render_timeline_svg(recorder_.finish(outcome.report)), ""};
  }

 private:
  TimelineRecorder recorder_;
  std::size_t max_;
};

// The page embeds the timeline, so it watches with both recorders.
class ReplayOutput final : public RunOutput, private sim::Observer {
 public:
  explicit ReplayOutput(const OutputSetup& s)
      : timeline_(s.header, s.world, s.lease_ttl, judged_by(s)),
        replay_(s.header, s.world, s.lease_ttl, s.lease_judged_by_store, s.store_min_ttl),
        timeline_max_(s.timeline_items_max),
        replay_max_(s.replay_events_max) {
    timeline_.set_max_items(timeline_max_);
    replay_.set_max_events(replay_max_);
  }
  sim::Observer& observer() override { return *this; }
  OutputDone finish(const RunOutcome& o) override {
    if (replay_.overflowed()) {
      return {std::nullopt,
              fmt::format("the replay page would show more than {} events (the limit on a replay "
                          "page); no page written. Shorten the run, or use --trace or --perfetto, "
                          "which stream to disk",
                          replay_max_)};
    }
    if (timeline_.overflowed()) return {std::nullopt, timeline_limit_message(timeline_max_)};
    const std::string svg = render_timeline_svg(timeline_.finish(o.report));
    return {render_replay_html(replay_, o.report, o.verdict, o.info, svg), ""};
  }

 private:
  void on_event(const sim::Event& e) override {
    timeline_.on_event(e);
    replay_.on_event(e);
  }
  TimelineRecorder timeline_;
  ReplayRecorder replay_;
  std::size_t timeline_max_;
  std::size_t replay_max_;
};

// The clients' history of store operations, for an external linearizability checker.
class HistoryOutput final : public RunOutput {
 public:
  explicit HistoryOutput(const OutputSetup& s)
      : recorder_(kMaxOps), replicated_(s.header.store_members > 1) {}
  sim::Observer& observer() override { return recorder_; }
  OutputDone finish(const RunOutcome&) override {
    if (!replicated_) {
      return {std::nullopt,
              "a history of operations needs a replicated store (store.members above 1; a single "
              "store applies each request at one instant); no history written"};
    }
    if (recorder_.overflowed()) {
      return {std::nullopt, fmt::format("the history would hold more than {} operations (the "
                                        "limit on a history); no history written",
                                        kMaxOps)};
    }
    return {recorder_.jsonl(), ""};
  }

 private:
  static constexpr std::size_t kMaxOps = 1'000'000;
  analysis::HistoryRecorder recorder_;
  bool replicated_;
};

constexpr OutputFormat kFormats[] = {
    {"trace",
     "write the JSON Lines trace to FILE (with --all-variants: each variant's to "
     "FILE-<variant>.ext "
     "too, and every file written is listed)",
     [](const std::string& path, const OutputSetup& s) -> std::unique_ptr<RunOutput> {
       return std::make_unique<Streamed<analysis::TraceWriter>>(path, s, "trace");
     }},
    {"svg",
     "draw the run's timeline to FILE.svg: a row per node, the store, the sink, split-brain and "
     "failovers marked",
     [](const std::string&, const OutputSetup& s) -> std::unique_ptr<RunOutput> {
       return std::make_unique<TimelineOutput>(s);
     },
     true},
    {"html", "write one self-contained HTML page: summary, timeline and a step-by-step replay",
     [](const std::string&, const OutputSetup& s) -> std::unique_ptr<RunOutput> {
       return std::make_unique<ReplayOutput>(s);
     },
     true},
    {"perfetto",
     "write a Perfetto / Chrome trace (Trace Event Format JSON) to FILE (docs/perfetto.md)",
     [](const std::string& path, const OutputSetup& s) -> std::unique_ptr<RunOutput> {
       return std::make_unique<Streamed<PerfettoWriter>>(path, s, "Perfetto trace");
     },
     true},
    {"history",
     "write a replicated store's history of client operations to FILE as JSON Lines, for a "
     "linearizability checker such as Porcupine or Knossos (docs/trace-format.md)",
     [](const std::string&, const OutputSetup& s) -> std::unique_ptr<RunOutput> {
       return std::make_unique<HistoryOutput>(s);
     }},
};

}  // namespace

std::string timeline_limit_message(std::size_t max) {
  return fmt::format(
      "the timeline would draw more than {} spans and marks (the limit on a picture); no "
      "picture written. Shorten the run, or use --trace or --perfetto, which stream to disk",
      max);
}

std::span<const OutputFormat> output_formats() {
  return kFormats;
}

const OutputFormat* find_output_format(std::string_view flag) {
  for (const OutputFormat& f : kFormats) {
    if (flag == f.flag) return &f;
  }
  return nullptr;
}

}  // namespace electsim::drawing
