// The Perfetto writer's state (drawing/perfetto.hpp), shared by the files that write it:
// perfetto.cpp (the file, the run's end and the dispatch of events), perfetto_text.cpp (event
// text and track names), perfetto_tracks.cpp (nodes', store members' and servers' tracks) and
// perfetto_traffic.cpp (messages, faults, the store's leader key and the sink). Private to
// drawing/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/json_text.hpp"
#include "drawing/perfetto.hpp"
#include "drawing/spans.hpp"
#include "io/output.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"

namespace electsim::drawing {

namespace perfetto_detail {

inline constexpr std::size_t kFlushBytes = 1 << 20;
inline constexpr int kPid = 1;
// A replicated store's members are tracks of a second process, "store", with thread ids far
// above any of the run's own.
inline constexpr int kStorePid = 2;
inline constexpr int kMemberTidBase = 1 << 24;
// The servers whose kind gives them a lane of their own (sim::ServerLane::process: the database,
// the Redis masters, ...) are tracks of a third process, "servers", above the members.
inline constexpr int kServersPid = 3;
inline constexpr int kServerTidBase = 1 << 25;
// Store requests come in thousands per second: one counter sample per 100 ms keeps the file
// small and still shows bursts (a lease renewal storm, a store pause draining).
inline constexpr std::int64_t kCounterBucketNs = 100'000'000;
inline constexpr const char* kCounterKey = "per 100 ms";
// A burst of messages at one instant is one slice; its name lists this many peers at most.
inline constexpr std::size_t kBurstPeersShown = 8;
// Sends whose delivery never shows (a message parked at a paused node that then crashed, or one
// still in flight) stay unmatched; past this many on one link (traces without message ids), or in
// all (with them), the oldest are given up.
inline constexpr std::size_t kUnmatchedPerLinkMax = 1 << 16;
inline constexpr std::size_t kUnmatchedMax = 1 << 20;
// Message slices last 1 ns: the simulated send takes no time, but a slice of zero length is not
// an enclosing slice in every viewer, and flow arrows bind to enclosing slices. Kernel times are
// whole nanoseconds, so such a slice never partly overlaps another.
inline constexpr std::int64_t kMessageSliceNs = 1;

using Out = std::back_insert_iterator<std::string>;

// Microseconds with exactly three decimals, from integer nanoseconds: 12345678 -> "12345.678".
inline void append_us(std::string& out, std::int64_t ns) {
  std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    magnitude = ~magnitude + 1;
  }
  fmt::format_to(Out(out), "{}.{:03}", magnitude / 1000, magnitude % 1000);
}

inline const char* fault_name(std::uint16_t code) {
  return code < sim::kFaultKindCount ? sim::fault_kind_name(static_cast<sim::FaultKind>(code))
                                     : "fault";
}

inline const char* drop_name(std::int64_t reason) {
  return reason >= 0 && reason <= static_cast<std::int64_t>(sim::DropReason::overload)
             ? sim::drop_reason_name(static_cast<sim::DropReason>(reason))
             : "unknown";
}

inline bool dropped_at_send(std::int64_t reason) {
  return reason == static_cast<std::int64_t>(sim::DropReason::loss) ||
         reason == static_cast<std::int64_t>(sim::DropReason::cut_at_send) ||
         reason == static_cast<std::int64_t>(sim::DropReason::overload);
}

// A link fault that lasts until healed (every link fault but heal itself).
inline bool is_network_window(std::uint16_t code) {
  const auto kind = static_cast<sim::FaultKind>(code);
  return sim::fault_info(kind).effect == sim::FaultEffect::links && kind != sim::FaultKind::heal;
}

inline bool is_fixed_window(std::uint16_t code) {
  return sim::fault_info(static_cast<sim::FaultKind>(code)).effect == sim::FaultEffect::window;
}

}  // namespace perfetto_detail

// The writer's files read these unqualified.
using namespace perfetto_detail;
using analysis::append_json_string;
using analysis::TraceHeader;

struct PerfettoWriter::State final : SpanListener {
  // Messages sent at one instant by one node (or delivered at one instant to it): one slice.
  struct Burst {
    bool open = false;
    bool send = false;
    Time at;
    std::uint16_t type = 0;
    bool mixed = false;  // more than one message type
    std::size_t count = 0;
    std::size_t peers_shown = 0;
    std::string peers;
    std::vector<std::pair<std::uint64_t, std::uint16_t>> flows;  // flow id, message type
  };

  // A node's or a store member's drawing state; its spans are the span model's.
  struct NodeTrack {
    // Pauses inside the open role slice: written just after it, so that a viewer reading the
    // file in order meets the enclosing slice first even when both start at the same instant.
    std::string pending;
    bool pauses_track = false;
    bool messages_track = false;
    Burst burst;
  };

  // A fault window on the faults track. Overlapping windows go to further lanes ("faults 2"...)
  // so that slices on one track always nest.
  struct Lane {
    bool open = false;  // a window whose end is not known yet
    std::int64_t fault_index = -1;
    Time start;
    Time busy_until;  // a window written with its known end occupies the lane until then
    std::string name;
    std::string args;
  };

  struct PendingSend {
    std::uint64_t flow = 0;  // 0: none (delivered, dropped, given up, or a gap in the ids)
    Time at;
    NodeId to = sim::kNoNode;
  };

  State(std::string p, const TraceHeader& h, std::uint64_t max)
      : path(std::move(p)),
        header(h),
        max_bytes(max),
        spans(h.node_count, h.topology, h.store_members > 1),
        nodes(h.node_count),
        members(spans.member_count()) {}

  // ---- Track ids: per node its main track, its messages and (when needed) its pauses, then the
  // store, the sink and the fault lanes. thread_sort_index follows the same order.
  int node_tid(NodeId n) const { return 4 * n + 1; }
  int messages_tid(NodeId n) const { return 4 * n + 2; }
  int pauses_tid(NodeId n) const { return 4 * n + 3; }
  int store_tid() const { return 4 * static_cast<int>(header.node_count) + 1; }
  int sink_tid() const { return store_tid() + 1; }
  int lane_tid(std::size_t lane) const { return store_tid() + 2 + static_cast<int>(lane); }

  bool is_node(NodeId n) const { return spans.is_node(n); }

  // A replicated store's member K: its roles, downtime and pauses on one track, and pauses that
  // a role change cuts through on a second.
  int member_tid(std::size_t m) const { return kMemberTidBase + static_cast<int>(m); }
  int member_pauses_tid(std::size_t m) const;
  static int pid_of(int tid);

  // ---- Servers with a lane of their own: when each was down or paused, on one track each.

  int server_tid(std::size_t row) const { return kServerTidBase + static_cast<int>(row); }
  void ensure_server_track(std::size_t row);

  // Store member m's name: the topology's, or "store:m" for a member the header's world does not
  // replicate (a trace whose server_role events name members its header leaves out).
  std::string member_name(std::size_t m) const;

  // A node id, or a server by the name the header's topology gives it.
  void append_endpoint(std::string& out, sim::Endpoint endpoint) const;

  // The same as a JSON value: a number, a server's name or null.
  void append_endpoint_json(std::string& out, sim::Endpoint endpoint) const;

  // ---- Event text. Every event but the first begins with ",\n".

  void open_event(std::string& out, char ph, std::string_view cat, std::string_view name, int tid,
                  Time at);

  static void close_event(std::string& out, std::string_view args);

  void complete(std::string& out, int tid, std::string_view cat, std::string_view name, Time start,
                Time end, std::string_view args);

  void instant(std::string& out, int tid, std::string_view cat, std::string_view name, Time at,
               std::string_view args);

  void flow(std::string& out, char ph, int tid, std::uint16_t type, std::uint64_t id, Time at);

  void thread_metadata(int tid, std::string_view name, int pid = kPid, int sort_index = -1);

  void append_type_name(std::string& out, std::uint16_t type) const;

  void append_type_json(std::string& out, std::uint16_t type);

  void ensure_messages_track(NodeId n);

  void ensure_pauses_track(NodeId n);

  // The "store" process and member m's track, named when first needed (all of them at the start
  // when the header says the store is replicated).
  void ensure_member_track(std::size_t m);

  void ensure_member_pauses_track(std::size_t m);

  // ---- The file.

  void write_preamble();

  void write_trailer();

  std::uint64_t bytes() const { return flushed + buffer.size(); }

  void fail(std::string message);

  void fail_limit();

  void flush_buffer();

  // ---- Roles, downtime and pauses (perfetto_tracks.cpp): the span model's spans, each written
  // as a slice when it closes, on the track of its process. The single store's pauses are
  // fault windows instead (store_pause).

  // The track a process's slices go on.
  int track_of(const SpanOwner& owner) const;

  void role_opened(const SpanOwner& owner, OpenRole& span) override;
  void role_closed(const SpanOwner& owner, const OpenRole& span, Time end) override;
  void down_opened(const SpanOwner& owner, OpenDown& span) override;
  void down_closed(const SpanOwner& owner, const OpenDown& span, Time end) override;
  void pause_opened(const SpanOwner& owner, OpenPause& span) override;
  void pause_closed(const SpanOwner& owner, const OpenPause& span, Time end) override;

  // The tracks a span event is drawn on are named before the model writes on them.
  void on_span_event(const sim::Event& e);

  void on_clock_change(const sim::Event& e);

  // A new store leader refreshed the leases it found (etcd's lessor Promote).
  void on_lease_refresh(const sim::Event& e);

  // A node's store client moved to another member, or retried a request there: an instant on the
  // node's own track.
  void on_client_failover(const sim::Event& e);

  // ---- Messages: bursts on the messages tracks, arrows from each send to its delivery.

  // A delivery or a drop is joined to its send by the message's id (the msg events' `id`, a
  // duplicate sharing its original's): exact however the network reorders. A version 1 trace has
  // no ids (they read as 0); there a delivery is joined to the oldest send on its link (sender,
  // receiver, type) not yet delivered or dropped, exact only where a link keeps its order.
  using LinkKey = std::tuple<NodeId, NodeId, std::uint16_t>;

  void remember_send(const sim::Event& e, std::uint64_t flow_id);

  // The flow of the send that `e` (a delivery or a drop on arrival) ends, if it is known.
  std::optional<std::uint64_t> take_send(const sim::Event& e, NodeId from, NodeId to);

  // The send `e` (a drop at send) says never left: the last one remembered on its link at its
  // instant, by id where there is one.
  std::optional<std::uint64_t> take_unsent(const sim::Event& e);

  // Messages parked at a paused node vanish when it crashes, without an event of their own.
  void forget_sends_to(NodeId n);

  // The send of message `msg` still waiting for its delivery, or null.
  PendingSend* pending_send(std::uint64_t msg);
  std::uint64_t take_pending(PendingSend& send);
  // Drops the window's front while nothing waits there.
  void trim_pending();

  void flush_burst(NodeId n);

  void flush_bursts();

  void add_to_burst(NodeId n, bool send, Time at, std::uint16_t type, NodeId peer,
                    std::optional<std::uint64_t> flow_id);

  void on_send(const sim::Event& e);

  void on_deliver(const sim::Event& e);

  void on_drop(const sim::Event& e);

  // ---- Faults: an instant each, and a slice for the windows that last.

  std::size_t free_lane(Time start);

  void open_window(std::int64_t fault_index, Time start, std::string_view name,
                   std::string_view args);

  void close_lane(std::size_t i, Time at);

  void close_window(std::int64_t fault_index, Time at);

  void on_fault(const sim::Event& e);

  void on_network_change(const sim::Event& e);

  // ---- The store: who holds the leader key, lease expiries, request rate.

  void close_holder(Time at, std::string_view ended_by);

  void on_store_change(const sim::Event& e);

  void on_lease_expire(const sim::Event& e);

  void counter(Time at, std::uint64_t value);

  void on_store_request(const sim::Event& e);

  // ---- The sink.

  void on_sink_write(const sim::Event& e);

  // ---- The end of the run: everything still open ends here.

  void finish(Time end);

  void on_event(const sim::Event& e);

  static constexpr std::int64_t kStorePauseWindow = -2;

  std::string path;
  TraceHeader header;
  std::uint64_t max_bytes;
  std::unique_ptr<io::TempFile> file;  // null once failed or closed
  std::uint64_t flushed = 0;
  std::string buffer;
  std::string error;
  bool closed = false;
  bool finished = false;
  Time now;

  std::string name_scratch;
  std::string args_scratch;
  std::string window_scratch;
  std::string type_scratch;

  SpanModel spans;
  std::vector<NodeTrack> nodes;
  std::vector<NodeTrack> members;
  std::vector<bool> member_named = std::vector<bool>(members.size(), false);
  bool store_process = false;    // the "store" process is named
  bool servers_process = false;  // the "servers" process is named
  std::vector<bool> server_named = std::vector<bool>(spans.server_rows().size(), false);
  std::vector<NodeId> open_bursts;
  std::map<LinkKey, std::deque<PendingSend>> in_flight;  // by link, for traces without ids
  std::deque<PendingSend> pending;                       // by message id, from pending_base
  std::uint64_t pending_base = 0;
  std::uint64_t next_flow = 1;

  std::vector<Lane> lanes;

  bool holder_open = false;
  NodeId holder = sim::kNoNode;
  sim::LeaseId holder_lease = sim::kNoLease;
  sim::Revision holder_revision = 0;
  Time holder_start;

  std::optional<std::int64_t> counter_bucket;
  std::uint64_t counter_count = 0;
};

}  // namespace electsim::drawing
