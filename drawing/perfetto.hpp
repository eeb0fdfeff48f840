// A run as a Chrome / Perfetto trace (the Trace Event Format's JSON object form), to open in
// ui.perfetto.dev or chrome://tracing: a track per node with its beliefs, downtime and GC pauses,
// message arrows between nodes, the store's leader key, the sink's writes and the faults, and for a
// replicated store a "store" process with a track per member and its Raft roles. Written
// like the JSON Lines trace (analysis/trace.hpp): a temporary file renamed when whole, under a
// byte limit. What each track shows: docs/perfetto.md.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "analysis/trace.hpp"
#include "io/output.hpp"
#include "sim/event.hpp"

namespace electsim::drawing {

using sim::Duration;
using sim::Epoch;
using sim::NodeId;
using sim::Time;

// Writes a unique temporary beside `path` as the events arrive (slices when they end) and renames
// it onto `path` only in close(): the file is whole or absent. Past `max_bytes` it stops writing
// and close() fails with an error naming the limit. Text is formatted straight into one buffer;
// nothing is built per event but that text.
class PerfettoWriter : public sim::Observer {
 public:
  PerfettoWriter(std::string path, const analysis::TraceHeader& header,
                 std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max());
  ~PerfettoWriter() override;  // without a successful close(): removes the temporary file
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  void on_event(const sim::Event& event) override;
  // Ends what is still open (at run_end, or at the last event if the stream stopped early),
  // writes the closing metadata, flushes and renames. False (and error() says why) if anything
  // failed; the file is then absent.
  bool close();
  // The same without the rename: the complete file under its temporary name, for the caller to
  // commit with a run's other outputs. Null (and error() says why) if anything failed.
  std::unique_ptr<io::TempFile> close_staged();

  bool ok() const;
  const std::string& error() const;
  std::uint64_t bytes() const;  // bytes of the trace so far

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace electsim::drawing
