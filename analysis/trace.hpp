// Traces: the event stream as JSON Lines (schema in docs/trace-format.md), a hash of the stream
// that does not depend on whether a file is written, and a reader that replays a saved trace into
// the same Analyzer a live run uses, so `electsim check` reports exactly what the run reported.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/report.hpp"
#include "analysis/summary.hpp"
#include "io/output.hpp"
#include "sim/clock.hpp"
#include "sim/event.hpp"
#include "sim/topology.hpp"

namespace electsim::analysis {

// The longest line a trace reader accepts. The writer's longest is a few kilobytes: a fault with
// partition groups of 1000 nodes is about 5 KB, and names and keys, which a scenario could make
// long, are bounded where they are read (params::kMaxNameBytes) to keep within this.
inline constexpr std::size_t kMaxTraceLine = 64 * 1024;

// Version 2 gave every msg_send, msg_deliver and msg_drop its message `id`, and the header the
// world's topology (its servers by name, kind and group, and its election groups). A version 1
// trace reads as it always did: its messages carry id 0, as its events hashed then, and its
// servers are those of the address plan it was written with (legacy_topology).
inline constexpr int kTraceSchemaVersion = 2;
inline constexpr int kOldestReadableTraceVersion = 1;

// The first line of a trace: what an offline analysis needs to judge the events that follow.
struct TraceHeader {
  int schema_version = kTraceSchemaVersion;
  std::string scenario;
  std::string variant;
  std::string protocol;
  std::uint64_t seed = 0;
  std::size_t node_count = 0;
  Duration duration{0};
  // The world's nodes, servers and election groups: every reader names endpoints by it.
  sim::Topology topology;
  std::vector<std::string> message_types;           // names by sim::MessageType
  std::vector<std::string> election_message_types;  // the election's own, of message_types
  std::optional<std::string> leader_key;
  bool uses_store = false;
  // A replicated store's member count (1: a single store). Version 1 wrote it as
  // "store_members"; from version 2 it is the topology's "store" group.
  std::size_t store_members = 1;
  // The server leadership depends on (kNoNode: the store's first member); written by name only
  // when it is not the store ("postgres").
  sim::Endpoint coordinator = sim::kNoNode;
  // The leaders' write interval; written only when the leaders write (a workload), so that
  // `check` measures the same service outages as the run did.
  std::optional<Duration> write_interval;
  // Written only when false ("tokens_ordered": false).
  bool tokens_ordered = true;
  // What the pictures need to draw the trace as its run drew it, and nothing else reads: the
  // clocks the world was configured with (the faults' changes are events) and the lease's TTL.
  // Written only where there is something to say ("clocks" for the clocks that are not perfect,
  // "lease" for a protocol with a lease), so that other headers stay as they were.
  struct Clock {
    sim::Endpoint endpoint = sim::kNoNode;  // a node, or a server of the topology
    sim::ClockConfig config;
  };
  std::vector<Clock> clocks;
  struct Lease {
    Duration ttl{0};
    bool judged_by_store = true;  // false: the followers judge it on their own clocks
    Duration store_min_ttl{0};    // the store raises a shorter TTL to this
  };
  std::optional<Lease> lease;

  AnalysisConfig analysis_config() const;
};

// FNV-1a 64 over every event in a fixed little-endian layout: time i64, kind u8, code u16, node
// i32, peer i32, a, b, c, d i64, text length u32, text bytes. Cheap enough to run on every run.
class TraceHasher : public sim::Observer {
 public:
  void on_event(const sim::Event& event) override;
  std::uint64_t value() const { return hash_; }
  std::string hex() const;                          // 16 lowercase hex digits
  std::uint64_t events() const { return events_; }  // events hashed: the lines of the trace

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
  std::uint64_t events_ = 0;
};

// Writes the trace to a unique temporary beside `path` (io::TempFile) and renames it onto `path`
// only in close(): a trace is whole or absent. Past `max_bytes` it stops writing and close() fails
// with an error naming the limit.
class TraceWriter : public sim::Observer {
 public:
  TraceWriter(std::string path, const TraceHeader& header,
              std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max());
  ~TraceWriter() override;  // without a successful close(): removes the temporary file
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void on_event(const sim::Event& event) override;
  // Flushes and renames. False (and error() says why) if anything failed; the file is then absent.
  bool close();
  // Flushes and closes without renaming: the complete file under its temporary name, for the
  // caller to commit with a run's other outputs. Null (and error() says why) if anything failed.
  std::unique_ptr<io::TempFile> close_staged();

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::uint64_t bytes() const { return bytes_; }  // bytes of the trace so far, header included

 private:
  void fail(std::string message);
  void flush_buffer();

  std::string path_;
  std::unique_ptr<io::TempFile> file_;  // null once failed or closed
  std::uint64_t max_bytes_;
  std::uint64_t bytes_ = 0;
  std::string buffer_;
  std::string error_;
  bool closed_ = false;
  std::vector<std::string> type_names_;  // message type names usable in the trace (unique)
  sim::Topology topology_;
};

struct TraceReadResult {
  TraceHeader header;
  RunInfo info;  // from the header; trace_hash recomputed, events_processed = events read
  Report report;
  std::string error;  // "" when the trace was read whole; else "line N: what was wrong"
  bool ok() const { return error.empty(); }
};

// Replays a trace into an Analyzer configured from its header (and into `also`, if given, e.g. a
// timeline exporter). Errors are values carrying the line number; nothing throws.
TraceReadResult read_trace(std::istream& in, sim::Observer* also = nullptr);
// The same, with the observer made from the header once it is read (the pictures need the
// header's topology and clocks before the first event); it may return null.
TraceReadResult read_trace(std::istream& in,
                           const std::function<sim::Observer*(const TraceHeader&)>& watch);
TraceReadResult read_trace_file(const std::string& path, sim::Observer* also = nullptr);

// One event as its trace line (without the newline), for tools and tests.
std::string format_trace_event(const sim::Event& event, const TraceHeader& header);

// The servers a version 1 trace could name: the single store or `store_members` members, the
// sink, the database server and nine Redis masters, at the addresses of that version's plan.
sim::Topology legacy_topology(std::size_t node_count, std::size_t store_members);

}  // namespace electsim::analysis
