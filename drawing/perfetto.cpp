// Chrome / Perfetto trace export in the Trace Event Format ("Trace Event Format", Google, 2016;
// as Perfetto's JSON importer reads it): complete slices ("X") for beliefs, downtime, GC pauses,
// leader-key holders and fault windows, instants ("i") for writes, drops, expiries and faults,
// flow pairs ("s"/"f") from a send to its delivery and a counter ("C") of store requests. A
// replicated store's members are tracks of a second process, "store", with their Raft roles as
// slices. Text is formatted by hand with fmt into one buffer; the file is renamed into place only
// when whole.
#include "drawing/perfetto.hpp"
#include "analysis/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "io/output.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"

namespace electsim::drawing {
using analysis::append_json_string;

using analysis::TraceHeader;

namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr int kPid = 1;
// A replicated store's members are tracks of a second process, "store", with thread ids far
// above any of the run's own.
constexpr int kStorePid = 2;
constexpr int kMemberTidBase = 1 << 24;
// The servers whose kind gives them a lane of their own (sim::ServerLane::process: the database,
// the Redis masters, ...) are tracks of a third process, "servers", above the members.
constexpr int kServersPid = 3;
constexpr int kServerTidBase = 1 << 25;
// Store requests come in thousands per second: one counter sample per 100 ms keeps the file
// small and still shows bursts (a lease renewal storm, a store pause draining).
constexpr std::int64_t kCounterBucketNs = 100'000'000;
constexpr const char* kCounterKey = "per 100 ms";
// A burst of messages at one instant is one slice; its name lists this many peers at most.
constexpr std::size_t kBurstPeersShown = 8;
// Sends whose delivery never shows (a message parked at a paused node that then crashed, or one
// still in flight) stay unmatched; past this many on one link (traces without message ids), or in
// all (with them), the oldest are given up.
constexpr std::size_t kUnmatchedPerLinkMax = 1 << 16;
constexpr std::size_t kUnmatchedMax = 1 << 20;
// Message slices last 1 ns: the simulated send takes no time, but a slice of zero length is not
// an enclosing slice in every viewer, and flow arrows bind to enclosing slices. Kernel times are
// whole nanoseconds, so such a slice never partly overlaps another.
constexpr std::int64_t kMessageSliceNs = 1;

using Out = std::back_insert_iterator<std::string>;

// Microseconds with exactly three decimals, from integer nanoseconds: 12345678 -> "12345.678".
void append_us(std::string& out, std::int64_t ns) {
  std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    magnitude = ~magnitude + 1;
  }
  fmt::format_to(Out(out), "{}.{:03}", magnitude / 1000, magnitude % 1000);
}

const char* fault_name(std::uint16_t code) {
  return code < sim::kFaultKindCount ? sim::fault_kind_name(static_cast<sim::FaultKind>(code))
                                     : "fault";
}

const char* drop_name(std::int64_t reason) {
  return reason >= 0 && reason <= static_cast<std::int64_t>(sim::DropReason::overload)
             ? sim::drop_reason_name(static_cast<sim::DropReason>(reason))
             : "unknown";
}

bool dropped_at_send(std::int64_t reason) {
  return reason == static_cast<std::int64_t>(sim::DropReason::loss) ||
         reason == static_cast<std::int64_t>(sim::DropReason::cut_at_send) ||
         reason == static_cast<std::int64_t>(sim::DropReason::overload);
}

// A link fault that lasts until healed (every link fault but heal itself).
bool is_network_window(std::uint16_t code) {
  const auto kind = static_cast<sim::FaultKind>(code);
  return sim::fault_info(kind).effect == sim::FaultEffect::links && kind != sim::FaultKind::heal;
}

bool is_fixed_window(std::uint16_t code) {
  return sim::fault_info(static_cast<sim::FaultKind>(code)).effect == sim::FaultEffect::window;
}

}  // namespace

struct PerfettoWriter::State {
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

  struct NodeTrack {
    // The open belief slice.
    bool role_open = false;
    sim::Role role = sim::Role::follower;
    Epoch epoch = 0;
    NodeId known_leader = sim::kNoNode;
    Time role_start;
    // Downtime.
    bool down = false;
    bool graceful = false;
    Time down_start;
    // The open GC pause.
    bool paused = false;
    bool pause_extended = false;
    Time pause_start;
    std::int64_t pause_planned_ns = 0;
    std::optional<Time> pause_boundary;  // first belief boundary strictly inside the pause
    // Pauses inside the open belief slice: written just after it, so that a viewer reading the
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
        nodes(h.node_count),
        replicated(h.store_members > 1) {}

  // ---- Track ids: per node its main track, its messages and (when needed) its pauses, then the
  // store, the sink and the fault lanes. thread_sort_index follows the same order.
  int node_tid(NodeId n) const { return 4 * n + 1; }
  int messages_tid(NodeId n) const { return 4 * n + 2; }
  int pauses_tid(NodeId n) const { return 4 * n + 3; }
  int store_tid() const { return 4 * static_cast<int>(header.node_count) + 1; }
  int sink_tid() const { return store_tid() + 1; }
  int lane_tid(std::size_t lane) const { return store_tid() + 2 + static_cast<int>(lane); }

  bool is_node(NodeId n) const { return n >= 0 && static_cast<std::size_t>(n) < nodes.size(); }

  // A replicated store's member K: its roles, downtime and pauses on one track, and pauses that
  // a role change cuts through on a second.
  int member_tid(std::size_t m) const { return kMemberTidBase + static_cast<int>(m); }
  int member_pauses_tid(std::size_t m) const {
    return kMemberTidBase + static_cast<int>(sim::kMaxStoreMembers + m);
  }
  static int pid_of(int tid) {
    return tid >= kServerTidBase ? kServersPid : tid >= kMemberTidBase ? kStorePid : kPid;
  }

  // ---- Servers with a lane of their own: when each was down or paused, on one track each.

  struct ServerTrack {
    bool named = false;
    bool down = false;
    bool graceful = false;
    Time down_start;
    bool paused = false;
    Time pause_start;
  };
  int server_tid(std::size_t row) const { return kServerTidBase + static_cast<int>(row); }
  std::optional<std::size_t> server_row(sim::Endpoint e) const {
    if (e >= 0) return std::nullopt;
    const auto it = std::find(server_rows.begin(), server_rows.end(), e);
    if (it == server_rows.end()) return std::nullopt;
    return static_cast<std::size_t>(it - server_rows.begin());
  }
  void ensure_server_track(std::size_t row) {
    if (!servers_process) {
      servers_process = true;
      buffer += ",\n{\"ph\":\"M\",\"name\":\"process_name\",";
      fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"name\":\"servers\"}}}}", kServersPid);
      buffer += ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",";
      fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", kServersPid,
                     kServersPid);
    }
    ServerTrack& t = server_tracks[row];
    if (t.named) return;
    t.named = true;
    thread_metadata(server_tid(row), header.topology.name_of(server_rows[row]), kServersPid,
                    static_cast<int>(row));
  }
  void end_server_pause(std::size_t row, Time at) {
    ServerTrack& t = server_tracks[row];
    if (!t.paused) return;
    t.paused = false;
    args_scratch.clear();
    complete(buffer, server_tid(row), "pause", "paused", t.pause_start, at, args_scratch);
  }
  void end_server_down(std::size_t row, Time at) {
    ServerTrack& t = server_tracks[row];
    if (!t.down) return;
    t.down = false;
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
    complete(buffer, server_tid(row), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
             args_scratch);
  }
  void on_server_crash(std::size_t row, const sim::Event& e) {
    ensure_server_track(row);
    end_server_pause(row, e.time);
    ServerTrack& t = server_tracks[row];
    if (t.down) return;
    t.down = true;
    t.graceful = e.a != 0;
    t.down_start = e.time;
  }
  void on_server_pause(std::size_t row, Time at) {
    ensure_server_track(row);
    ServerTrack& t = server_tracks[row];
    if (t.down || t.paused) return;  // an extension keeps its slice
    t.paused = true;
    t.pause_start = at;
  }

  // The member at `e` when the store is replicated.
  std::optional<std::size_t> member_at(sim::Endpoint e) const {
    if (!replicated || e >= 0) return std::nullopt;
    const std::int32_t m = member_index(e);
    if (m < 0) return std::nullopt;
    return static_cast<std::size_t>(m);
  }
  // A store member's index among the header's store servers (the single store is 0), or -1.
  std::int32_t member_index(sim::Endpoint e) const { return header.topology.store_member_index(e); }

  // Store member m's name: the topology's, or "store:m" for a member the header's world does not
  // replicate (a trace whose server_role events name members its header leaves out).
  std::string member_name(std::size_t m) const {
    const sim::NamedEndpoint* server = header.topology.store_members() > 1
                                           ? header.topology.server(header.topology.store_member(m))
                                           : nullptr;
    return server != nullptr ? server->name : fmt::format("store:{}", m);
  }

  // A node id, or a server by the name the header's topology gives it.
  void append_endpoint(std::string& out, sim::Endpoint endpoint) const {
    if (endpoint == sim::kNoNode) {
      out += "none";
    } else if (const sim::NamedEndpoint* server = header.topology.server(endpoint)) {
      out += server->name;
    } else {
      fmt::format_to(Out(out), "{}", endpoint);
    }
  }

  // The same as a JSON value: a number, a server's name or null.
  void append_endpoint_json(std::string& out, sim::Endpoint endpoint) const {
    if (endpoint >= 0) {
      fmt::format_to(Out(out), "{}", endpoint);
    } else if (endpoint == sim::kNoNode) {
      out += "null";
    } else {
      out += '"';
      append_endpoint(out, endpoint);
      out += '"';
    }
  }

  // ---- Event text. Every event but the first begins with ",\n".

  void open_event(std::string& out, char ph, std::string_view cat, std::string_view name, int tid,
                  Time at) {
    out += ",\n{\"ph\":\"";
    out += ph;
    out += "\",\"cat\":\"";
    out += cat;
    out += "\",\"name\":";
    append_json_string(out, name);
    fmt::format_to(Out(out), ",\"pid\":{},\"tid\":{},\"ts\":", pid_of(tid), tid);
    append_us(out, at.ns);
  }

  static void close_event(std::string& out, std::string_view args) {
    if (!args.empty()) {
      out += ",\"args\":{";
      out += args;
      out += '}';
    }
    out += '}';
  }

  void complete(std::string& out, int tid, std::string_view cat, std::string_view name, Time start,
                Time end, std::string_view args) {
    open_event(out, 'X', cat, name, tid, start);
    out += ",\"dur\":";
    append_us(out, std::max<std::int64_t>(end.ns - start.ns, 0));
    close_event(out, args);
  }

  void instant(std::string& out, int tid, std::string_view cat, std::string_view name, Time at,
               std::string_view args) {
    open_event(out, 'i', cat, name, tid, at);
    out += ",\"s\":\"t\"";
    close_event(out, args);
  }

  void flow(std::string& out, char ph, int tid, std::uint16_t type, std::uint64_t id, Time at) {
    name_scratch.clear();
    append_type_name(name_scratch, type);
    open_event(out, ph, "message", name_scratch, tid, at);
    fmt::format_to(Out(out), ",\"id\":{},\"bp\":\"e\"}}", id);
  }

  void thread_metadata(int tid, std::string_view name, int pid = kPid, int sort_index = -1) {
    buffer += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"tid\":{},\"args\":{{\"name\":", pid, tid);
    append_json_string(buffer, name);
    buffer += "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}", pid, tid,
                   sort_index < 0 ? tid : sort_index);
  }

  void append_type_name(std::string& out, std::uint16_t type) const {
    if (type < header.message_types.size() && !header.message_types[type].empty()) {
      out += header.message_types[type];
    } else {
      fmt::format_to(Out(out), "type_{}", type);
    }
  }

  void append_type_json(std::string& out, std::uint16_t type) {
    type_scratch.clear();
    append_type_name(type_scratch, type);
    append_json_string(out, type_scratch);
  }

  void ensure_messages_track(NodeId n) {
    NodeTrack& t = nodes[static_cast<std::size_t>(n)];
    if (t.messages_track) return;
    t.messages_track = true;
    thread_metadata(messages_tid(n), fmt::format("node {} · messages", n));
  }

  void ensure_pauses_track(NodeId n) {
    NodeTrack& t = nodes[static_cast<std::size_t>(n)];
    if (t.pauses_track) return;
    t.pauses_track = true;
    thread_metadata(pauses_tid(n), fmt::format("node {} · pauses", n));
  }

  // The "store" process and member m's track, named when first needed (all of them at the start
  // when the header says the store is replicated).
  void ensure_member_track(std::size_t m) {
    if (!store_process) {
      store_process = true;
      buffer += ",\n{\"ph\":\"M\",\"name\":\"process_name\",";
      fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"name\":\"store\"}}}}", kStorePid);
      buffer += ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",";
      fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", kStorePid,
                     kStorePid);
    }
    if (member_named[m]) return;
    member_named[m] = true;
    thread_metadata(member_tid(m), member_name(m), kStorePid, static_cast<int>(m));
  }

  void ensure_member_pauses_track(std::size_t m) {
    NodeTrack& t = members[m];
    if (t.pauses_track) return;
    t.pauses_track = true;
    thread_metadata(member_pauses_tid(m), member_name(m) + " · pauses", kStorePid,
                    static_cast<int>(sim::kMaxStoreMembers + m));
  }

  // ---- The file.

  void write_preamble() {
    buffer += "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",";
    fmt::format_to(Out(buffer), "\"pid\":{},\"args\":{{\"name\":", kPid);
    std::string process = "electsim: " + header.scenario;
    if (!header.variant.empty()) process += " · " + header.variant;
    process += fmt::format(" ({}, seed {})", header.protocol, header.seed);
    append_json_string(buffer, process);
    buffer += "}}";
    // A protocol that names message types sends messages: each node's messages track follows
    // its main track from the start, so that viewers that order tracks as they first meet them
    // keep the two together.
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      thread_metadata(node_tid(static_cast<NodeId>(n)), fmt::format("node {}", n));
      if (!header.message_types.empty()) ensure_messages_track(static_cast<NodeId>(n));
    }
    thread_metadata(store_tid(), "store");
    thread_metadata(sink_tid(), "sink");
    thread_metadata(lane_tid(0), "faults");
    lanes.emplace_back();
    if (replicated) {
      for (std::size_t m = 0; m < std::min(header.store_members, sim::kMaxStoreMembers); ++m) {
        ensure_member_track(m);
      }
    }
    for (const sim::NamedEndpoint& server : header.topology.servers()) {
      if (server.traits.lane == sim::ServerLane::process) server_rows.push_back(server.address);
    }
    server_tracks.assign(server_rows.size(), ServerTrack{});
    for (std::size_t row = 0; row < server_rows.size(); ++row) ensure_server_track(row);
  }

  void write_trailer() {
    buffer += "\n],\"displayTimeUnit\":\"ms\",\"metadata\":{\"electsim_perfetto\":1,\"scenario\":";
    append_json_string(buffer, header.scenario);
    buffer += ",\"variant\":";
    append_json_string(buffer, header.variant);
    buffer += ",\"protocol\":";
    append_json_string(buffer, header.protocol);
    fmt::format_to(Out(buffer),
                   ",\"seed\":{},\"nodes\":{},\"duration_ns\":{},\"leader_key\":", header.seed,
                   header.node_count, header.duration.count());
    if (header.leader_key) {
      append_json_string(buffer, *header.leader_key);
    } else {
      buffer += "null";
    }
    buffer += ",\"message_types\":[";
    for (std::size_t i = 0; i < header.message_types.size(); ++i) {
      if (i > 0) buffer += ',';
      append_json_string(buffer, header.message_types[i]);
    }
    buffer += ']';
    if (header.store_members > 1) {
      fmt::format_to(Out(buffer), ",\"store_members\":{}", header.store_members);
    }
    buffer += "}}\n";
  }

  std::uint64_t bytes() const { return flushed + buffer.size(); }

  void fail(std::string message) {
    if (error.empty()) error = std::move(message);
    buffer.clear();
    file.reset();
  }

  void fail_limit() {
    fail(fmt::format("Perfetto trace larger than the limit of {} bytes; not written", max_bytes));
  }

  void flush_buffer() {
    if (!file || buffer.empty()) return;
    const std::size_t written = std::fwrite(buffer.data(), 1, buffer.size(), file->file());
    if (written != buffer.size()) {
      fail(fmt::format("cannot write Perfetto trace {}: {}", path, std::strerror(errno)));
      return;
    }
    flushed += buffer.size();
    buffer.clear();
  }

  // ---- Beliefs, downtime and pauses on a node's track.

  // A belief slice starts or ends at `at`: a pause it cuts through cannot nest on the same track.
  static void role_boundary(NodeTrack& t, Time at) {
    if (t.paused && at > t.pause_start && !t.pause_boundary) t.pause_boundary = at;
  }

  void close_role(NodeId n, Time at) {
    NodeTrack& t = nodes[static_cast<std::size_t>(n)];
    if (!t.role_open) return;
    role_boundary(t, at);
    name_scratch.clear();
    args_scratch.clear();
    switch (t.role) {
      case sim::Role::leader:
        fmt::format_to(Out(name_scratch), "leader e{}", t.epoch);
        break;
      case sim::Role::candidate:
        fmt::format_to(Out(name_scratch), "candidate e{}", t.epoch);
        break;
      case sim::Role::follower:
        name_scratch += "follower";
        if (t.known_leader != sim::kNoNode) {
          name_scratch += " of ";
          append_endpoint(name_scratch, t.known_leader);
        }
        break;
    }
    fmt::format_to(Out(args_scratch),
                   "\"role\":\"{}\",\"epoch\":{},\"leader\":", sim::role_name(t.role), t.epoch);
    append_endpoint_json(args_scratch, t.role == sim::Role::leader ? n : t.known_leader);
    complete(buffer, node_tid(n), "belief", name_scratch, t.role_start, at, args_scratch);
    buffer += t.pending;
    t.pending.clear();
    t.role_open = false;
  }

  void on_belief(const sim::Event& e) {
    if (!is_node(e.node) || e.code > static_cast<std::uint16_t>(sim::Role::leader)) return;
    NodeTrack& t = nodes[static_cast<std::size_t>(e.node)];
    const auto role = static_cast<sim::Role>(e.code);
    const NodeId known = role == sim::Role::follower ? static_cast<NodeId>(e.b) : sim::kNoNode;
    // As analysis/analyzer.cpp: a leader announcing its own epoch again keeps its interval.
    if (t.role_open && t.role == role && t.epoch == e.a && t.known_leader == known) return;
    end_down(e.node, e.time);  // only a stream without its restart: keeps the track nested
    close_role(e.node, e.time);
    role_boundary(t, e.time);
    t.role_open = true;
    t.role = role;
    t.epoch = e.a;
    t.known_leader = known;
    t.role_start = e.time;
    if (role == sim::Role::leader && (!newest_epoch || e.a > *newest_epoch)) newest_epoch = e.a;
  }

  void end_pause(NodeId n, Time at) {
    NodeTrack& t = nodes[static_cast<std::size_t>(n)];
    if (!t.paused) return;
    t.paused = false;
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"planned_ns\":{},\"extended\":{}", t.pause_planned_ns,
                   t.pause_extended);
    if (!t.pause_boundary) {
      // Inside the open belief slice (if any), which is written when it ends.
      complete(t.role_open ? t.pending : buffer, node_tid(n), "pause", "GC pause", t.pause_start,
               at, args_scratch);
    } else if (*t.pause_boundary == at) {
      // The enclosing slice ended exactly with the pause and is already written.
      complete(buffer, node_tid(n), "pause", "GC pause", t.pause_start, at, args_scratch);
    } else {
      // A belief changed during the pause: the pause would overlap it partly.
      ensure_pauses_track(n);
      complete(buffer, pauses_tid(n), "pause", "GC pause", t.pause_start, at, args_scratch);
    }
  }

  void on_pause(const sim::Event& e) {
    if (!is_node(e.node)) return;
    NodeTrack& t = nodes[static_cast<std::size_t>(e.node)];
    if (t.down) return;
    if (t.paused) {
      t.pause_extended = true;  // a longer pause on top of one still running
      return;
    }
    t.paused = true;
    t.pause_extended = false;
    t.pause_start = e.time;
    t.pause_planned_ns = e.a;
    t.pause_boundary.reset();
  }

  void on_crash(const sim::Event& e) {
    if (!is_node(e.node)) return;
    NodeTrack& t = nodes[static_cast<std::size_t>(e.node)];
    const bool was_paused = t.paused;
    end_pause(e.node, e.time);
    close_role(e.node, e.time);
    if (was_paused) forget_sends_to(e.node);
    if (t.down) return;
    t.down = true;
    t.graceful = e.a != 0;
    t.down_start = e.time;
  }

  void end_down(NodeId n, Time at) {
    NodeTrack& t = nodes[static_cast<std::size_t>(n)];
    if (!t.down) return;
    t.down = false;
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
    complete(buffer, node_tid(n), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
             args_scratch);
  }

  void on_clock_change(const sim::Event& e) {
    const bool store = e.node == sim::kStoreEndpoint;
    const std::optional<std::size_t> member = member_at(e.node);
    if (!store && !member && !is_node(e.node)) return;
    const char* what = e.code == 0 ? "drift" : e.code == 1 ? "step" : "offset";
    name_scratch.clear();
    fmt::format_to(Out(name_scratch), "clock {}", what);
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"what\":\"{}\",\"drift_ppb\":{},\"amount_ns\":{}", what,
                   e.a, e.b);
    int tid = 0;
    if (member) {
      ensure_member_track(*member);
      tid = member_tid(*member);
    } else {
      tid = store ? store_tid() : node_tid(e.node);
    }
    instant(buffer, tid, "clock", name_scratch, e.time, args_scratch);
  }

  // ---- A replicated store's members: Raft roles, downtime and pauses, as a node's beliefs.

  void close_member_role(std::size_t m, Time at) {
    NodeTrack& t = members[m];
    if (!t.role_open) return;
    role_boundary(t, at);
    name_scratch.clear();
    args_scratch.clear();
    fmt::format_to(Out(name_scratch), "{} t{}", sim::role_name(t.role), t.epoch);
    if (t.role == sim::Role::follower && t.known_leader != sim::kNoNode) {
      name_scratch += " of ";
      append_endpoint(name_scratch, t.known_leader);
    }
    fmt::format_to(Out(args_scratch),
                   "\"role\":\"{}\",\"term\":{},\"leader\":", sim::role_name(t.role), t.epoch);
    const sim::Endpoint leader =
        t.role == sim::Role::leader ? header.topology.store_member(m) : t.known_leader;
    append_endpoint_json(args_scratch, leader);
    complete(buffer, member_tid(m), "store", name_scratch, t.role_start, at, args_scratch);
    buffer += t.pending;
    t.pending.clear();
    t.role_open = false;
  }

  void on_server_role(const sim::Event& e) {
    if (e.node >= 0 || member_index(e.node) < 0 ||
        e.code > static_cast<std::uint16_t>(sim::Role::leader)) {
      return;
    }
    replicated = true;  // a stream whose header did not say so still shows its members
    const auto m = static_cast<std::size_t>(member_index(e.node));
    ensure_member_track(m);
    NodeTrack& t = members[m];
    const auto role = static_cast<sim::Role>(e.code);
    const auto known = static_cast<sim::Endpoint>(e.b);
    const sim::Endpoint leader =
        role == sim::Role::follower && e.b != sim::kNoNode && member_index(known) >= 0
            ? known
            : sim::kNoNode;
    if (t.role_open && t.role == role && t.epoch == e.a && t.known_leader == leader) return;
    end_member_down(m, e.time);
    close_member_role(m, e.time);
    role_boundary(t, e.time);
    t.role_open = true;
    t.role = role;
    t.epoch = e.a;
    t.known_leader = leader;
    t.role_start = e.time;
  }

  void end_member_pause(std::size_t m, Time at) {
    NodeTrack& t = members[m];
    if (!t.paused) return;
    t.paused = false;
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"planned_ns\":{},\"extended\":{}", t.pause_planned_ns,
                   t.pause_extended);
    if (!t.pause_boundary) {
      complete(t.role_open ? t.pending : buffer, member_tid(m), "pause", "paused", t.pause_start,
               at, args_scratch);
    } else if (*t.pause_boundary == at) {
      complete(buffer, member_tid(m), "pause", "paused", t.pause_start, at, args_scratch);
    } else {
      ensure_member_pauses_track(m);
      complete(buffer, member_pauses_tid(m), "pause", "paused", t.pause_start, at, args_scratch);
    }
  }

  void on_member_pause(std::size_t m, Time at, std::int64_t planned_ns) {
    ensure_member_track(m);
    NodeTrack& t = members[m];
    if (t.down) return;
    if (t.paused) {
      t.pause_extended = true;
      return;
    }
    t.paused = true;
    t.pause_extended = false;
    t.pause_start = at;
    t.pause_planned_ns = planned_ns;
    t.pause_boundary.reset();
  }

  void on_member_crash(std::size_t m, const sim::Event& e) {
    ensure_member_track(m);
    NodeTrack& t = members[m];
    end_member_pause(m, e.time);
    close_member_role(m, e.time);
    if (t.down) return;
    t.down = true;
    t.graceful = e.a != 0;
    t.down_start = e.time;
  }

  void end_member_down(std::size_t m, Time at) {
    NodeTrack& t = members[m];
    if (!t.down) return;
    t.down = false;
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
    complete(buffer, member_tid(m), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
             args_scratch);
  }

  // A new store leader refreshed the leases it found (etcd's lessor Promote).
  void on_lease_refresh(const sim::Event& e) {
    const std::optional<std::size_t> m = member_at(e.node);
    if (!m) return;
    ensure_member_track(*m);
    name_scratch.clear();
    fmt::format_to(Out(name_scratch), "refreshed {} lease{} (term {})", e.a, e.a == 1 ? "" : "s",
                   e.b);
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"leases\":{},\"term\":{}", e.a, e.b);
    instant(buffer, member_tid(*m), "store", name_scratch, e.time, args_scratch);
  }

  // A node's store client moved to another member, or retried a request there: an instant on the
  // node's own track.
  void on_client_failover(const sim::Event& e) {
    if (!is_node(e.node)) return;
    const char* reason = e.code <= static_cast<std::uint16_t>(sim::FailoverReason::disconnect)
                             ? sim::failover_reason_name(static_cast<sim::FailoverReason>(e.code))
                             : "unknown";
    // After a no_leader answer the client retries on another member without moving to it.
    const bool retry = e.code == static_cast<std::uint16_t>(sim::FailoverReason::no_leader);
    name_scratch.clear();
    name_scratch += retry ? "store retry on " : "store failover → ";
    args_scratch.clear();
    args_scratch += "\"member\":";
    append_endpoint(name_scratch, e.peer);
    append_endpoint_json(args_scratch, e.peer);
    fmt::format_to(Out(name_scratch), " ({})", reason);
    fmt::format_to(Out(args_scratch), ",\"reason\":\"{}\",\"request\":{}", reason, e.a);
    instant(buffer, node_tid(e.node), "store", name_scratch, e.time, args_scratch);
  }

  // ---- Messages: bursts on the messages tracks, arrows from each send to its delivery.

  // A delivery or a drop is joined to its send by the message's id (the msg events' `id`, a
  // duplicate sharing its original's): exact however the network reorders. A version 1 trace has
  // no ids (they read as 0); there a delivery is joined to the oldest send on its link (sender,
  // receiver, type) not yet delivered or dropped, exact only where a link keeps its order.
  using LinkKey = std::tuple<NodeId, NodeId, std::uint16_t>;

  void remember_send(const sim::Event& e, std::uint64_t flow_id) {
    const auto msg = static_cast<std::uint64_t>(e.b);
    if (msg != 0) {
      // Ids grow with every send, so the sends in flight are a window of ids: a deque indexed
      // from the oldest, with no allocation per message once it has grown.
      if (pending.empty() || msg < pending_base || msg - pending_base >= 2 * kUnmatchedMax) {
        pending.clear();
        pending_base = msg;
      }
      while (pending_base + pending.size() < msg) pending.emplace_back();
      if (pending_base + pending.size() == msg) pending.emplace_back();
      pending[msg - pending_base] = {flow_id, e.time, e.peer};
      while (pending.size() > kUnmatchedMax) {
        pending.pop_front();
        ++pending_base;
      }
      return;
    }
    std::deque<PendingSend>& queue = in_flight[LinkKey{e.node, e.peer, e.code}];
    if (queue.size() >= kUnmatchedPerLinkMax) queue.pop_front();
    queue.push_back({flow_id, e.time, e.peer});
  }

  // The flow of the send that `e` (a delivery or a drop on arrival) ends, if it is known.
  std::optional<std::uint64_t> take_send(const sim::Event& e, NodeId from, NodeId to) {
    const auto msg = static_cast<std::uint64_t>(e.b);
    if (msg != 0) {
      // None for a duplicate's second copy, or a send given up.
      PendingSend* send = pending_send(msg);
      if (send == nullptr) return std::nullopt;
      return take_pending(*send);
    }
    const auto it = in_flight.find(LinkKey{from, to, e.code});
    if (it == in_flight.end() || it->second.empty()) return std::nullopt;
    const std::uint64_t id = it->second.front().flow;
    it->second.pop_front();
    return id;
  }

  // The send `e` (a drop at send) says never left: the last one remembered on its link at its
  // instant, by id where there is one.
  std::optional<std::uint64_t> take_unsent(const sim::Event& e) {
    const auto msg = static_cast<std::uint64_t>(e.b);
    if (msg != 0) {
      PendingSend* send = pending_send(msg);
      if (send == nullptr || send->at != e.time) return std::nullopt;
      return take_pending(*send);
    }
    const auto it = in_flight.find(LinkKey{e.node, e.peer, e.code});
    if (it == in_flight.end() || it->second.empty() || it->second.back().at != e.time) {
      return std::nullopt;
    }
    const std::uint64_t id = it->second.back().flow;
    it->second.pop_back();
    return id;
  }

  // Messages parked at a paused node vanish when it crashes, without an event of their own.
  void forget_sends_to(NodeId n) {
    for (auto& [key, queue] : in_flight) {
      if (std::get<1>(key) == n) queue.clear();
    }
    for (PendingSend& send : pending) {
      if (send.to == n) send.flow = 0;
    }
    trim_pending();
  }

  // The send of message `msg` still waiting for its delivery, or null.
  PendingSend* pending_send(std::uint64_t msg) {
    if (msg < pending_base || msg - pending_base >= pending.size()) return nullptr;
    PendingSend& send = pending[msg - pending_base];
    return send.flow != 0 ? &send : nullptr;
  }
  std::uint64_t take_pending(PendingSend& send) {
    const std::uint64_t id = send.flow;
    send.flow = 0;
    trim_pending();
    return id;
  }
  // Drops the window's front while nothing waits there.
  void trim_pending() {
    while (!pending.empty() && pending.front().flow == 0) {
      pending.pop_front();
      ++pending_base;
    }
  }

  void flush_burst(NodeId n) {
    Burst& b = nodes[static_cast<std::size_t>(n)].burst;
    if (!b.open) return;
    b.open = false;
    ensure_messages_track(n);
    name_scratch.clear();
    name_scratch += b.send ? "send " : "recv ";
    if (b.mixed) {
      fmt::format_to(Out(name_scratch), "{} messages", b.count);
    } else {
      append_type_name(name_scratch, b.type);
    }
    name_scratch += b.send ? " → " : " ← ";
    if (b.count > kBurstPeersShown) {
      fmt::format_to(Out(name_scratch), "{} peers", b.count);
    } else {
      name_scratch += b.peers;
    }
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"count\":{},\"type\":", b.count);
    if (b.mixed) {
      args_scratch += "\"mixed\"";
    } else {
      append_type_json(args_scratch, b.type);
    }
    args_scratch += b.send ? ",\"to\":\"" : ",\"from\":\"";
    args_scratch += b.peers;
    if (b.count > b.peers_shown) args_scratch += ",...";
    args_scratch += '"';
    complete(buffer, messages_tid(n), "message", name_scratch, b.at,
             b.at + Duration(kMessageSliceNs), args_scratch);
    // Right after their slice, so that they bind to it even when other slices share the instant.
    for (const auto& [id, type] : b.flows)
      flow(buffer, b.send ? 's' : 'f', messages_tid(n), type, id, b.at);
  }

  void flush_bursts() {
    for (const NodeId n : open_bursts) flush_burst(n);
    open_bursts.clear();
  }

  void add_to_burst(NodeId n, bool send, Time at, std::uint16_t type, NodeId peer,
                    std::optional<std::uint64_t> flow_id) {
    Burst& b = nodes[static_cast<std::size_t>(n)].burst;
    if (b.open && (b.send != send || b.at != at)) flush_burst(n);
    if (!b.open) {
      b.open = true;
      b.send = send;
      b.at = at;
      b.type = type;
      b.mixed = false;
      b.count = 0;
      b.peers_shown = 0;
      b.peers.clear();
      b.flows.clear();
      open_bursts.push_back(n);
    }
    if (type != b.type) b.mixed = true;
    ++b.count;
    if (b.peers_shown < kBurstPeersShown) {
      if (b.peers_shown > 0) b.peers += ',';
      append_endpoint(b.peers, peer);
      ++b.peers_shown;
    }
    if (flow_id) b.flows.emplace_back(*flow_id, type);
  }

  void on_send(const sim::Event& e) {
    if (!is_node(e.node)) return;
    const std::uint64_t id = next_flow++;
    remember_send(e, id);
    add_to_burst(e.node, true, e.time, e.code, e.peer, id);
  }

  void on_deliver(const sim::Event& e) {
    if (!is_node(e.node)) return;  // node: the receiver, peer: the sender
    add_to_burst(e.node, false, e.time, e.code, e.peer, take_send(e, e.peer, e.node));
  }

  void on_drop(const sim::Event& e) {
    // node: the sender, peer: the receiver.
    name_scratch.clear();
    name_scratch += "drop ";
    append_type_name(name_scratch, e.code);
    args_scratch.clear();
    args_scratch += "\"type\":";
    append_type_json(args_scratch, e.code);
    fmt::format_to(Out(args_scratch), ",\"reason\":\"{}\",\"from\":", drop_name(e.a));
    append_endpoint_json(args_scratch, e.node);
    args_scratch += ",\"to\":";
    append_endpoint_json(args_scratch, e.peer);
    if (dropped_at_send(e.a)) {
      // The send just before, on the same link at the same instant, never left: no arrow.
      if (!is_node(e.node)) return;
      if (const std::optional<std::uint64_t> unsent = take_unsent(e)) {
        const std::uint64_t id = *unsent;
        auto& flows = nodes[static_cast<std::size_t>(e.node)].burst.flows;
        const auto f = std::find_if(flows.rbegin(), flows.rend(),
                                    [id](const auto& p) { return p.first == id; });
        if (f != flows.rend()) flows.erase(std::next(f).base());
      }
      name_scratch += " → ";
      append_endpoint(name_scratch, e.peer);
      fmt::format_to(Out(name_scratch), " ({})", drop_name(e.a));
      ensure_messages_track(e.node);
      instant(buffer, messages_tid(e.node), "message", name_scratch, e.time, args_scratch);
      return;
    }
    // Dropped on arrival: the arrow from the send ends at the drop on the receiver's track.
    const std::optional<std::uint64_t> id = take_send(e, e.node, e.peer);
    const NodeId where = is_node(e.peer) ? e.peer : e.node;
    if (!is_node(where)) return;
    name_scratch += " ← ";
    append_endpoint(name_scratch, e.node);
    fmt::format_to(Out(name_scratch), " ({})", drop_name(e.a));
    ensure_messages_track(where);
    instant(buffer, messages_tid(where), "message", name_scratch, e.time, args_scratch);
    if (id && where == e.peer) flow(buffer, 'f', messages_tid(where), e.code, *id, e.time);
  }

  // ---- Faults: an instant each, and a slice for the windows that last.

  std::size_t free_lane(Time start) {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      if (!lanes[i].open && lanes[i].busy_until <= start) return i;
    }
    lanes.emplace_back();
    thread_metadata(lane_tid(lanes.size() - 1), fmt::format("faults {}", lanes.size()));
    return lanes.size() - 1;
  }

  void open_window(std::int64_t fault_index, Time start, std::string_view name,
                   std::string_view args) {
    Lane& lane = lanes[free_lane(start)];
    lane.open = true;
    lane.fault_index = fault_index;
    lane.start = start;
    lane.name.assign(name);
    lane.args.assign(args);
  }

  void close_lane(std::size_t i, Time at) {
    Lane& lane = lanes[i];
    if (!lane.open) return;
    lane.open = false;
    lane.busy_until = at;
    complete(buffer, lane_tid(i), "fault", lane.name, lane.start, at, lane.args);
  }

  void close_window(std::int64_t fault_index, Time at) {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      if (lanes[i].open && lanes[i].fault_index == fault_index) close_lane(i, at);
    }
  }

  void on_fault(const sim::Event& e) {
    const auto kind = static_cast<sim::FaultKind>(e.code);
    const bool skipped = e.c != 0;
    // The window's name: the kind and what it hits.
    window_scratch.clear();
    window_scratch += fault_name(e.code);
    if (kind == sim::FaultKind::cut) {
      window_scratch += ' ';
      append_endpoint(window_scratch, e.node);
      window_scratch += " → ";
      append_endpoint(window_scratch, e.peer);
    } else if (kind == sim::FaultKind::partition && !e.text.empty()) {
      window_scratch += ' ';
      window_scratch += e.text;
    } else if (e.node >= 0) {
      fmt::format_to(Out(window_scratch), " node {}", e.node);
    } else if (e.node != sim::kNoNode) {
      window_scratch += ' ';
      append_endpoint(window_scratch, e.node);
    }
    name_scratch.assign(window_scratch);
    if (e.b > 0) name_scratch += " for " + sim::format_duration(Duration(e.b));
    if (skipped) name_scratch += " (skipped: no target)";
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"kind\":\"{}\",\"target\":", fault_name(e.code));
    append_endpoint_json(args_scratch, e.node);
    if (kind == sim::FaultKind::cut) {
      args_scratch += ",\"peer\":";
      append_endpoint_json(args_scratch, e.peer);
    }
    fmt::format_to(Out(args_scratch), ",\"duration_ns\":{},\"index\":{},\"skipped\":{}", e.b, e.a,
                   skipped);
    if (!e.text.empty()) {
      args_scratch += ",\"groups\":";
      append_json_string(args_scratch, e.text);
    }
    instant(buffer, lane_tid(0), "fault", name_scratch, e.time, args_scratch);
    if (skipped) return;
    if (e.code < sim::kFaultKindCount && is_network_window(e.code)) {
      // Until its own end, or a heal.
      open_window(e.a, e.time, window_scratch, args_scratch);
    } else if (e.code < sim::kFaultKindCount && is_fixed_window(e.code) && e.b > 0) {
      Time end = e.time + Duration(e.b);
      if (header.duration.count() > 0) end = std::min(end, Time(header.duration));
      end = std::max(end, e.time);
      const std::size_t lane = free_lane(e.time);
      lanes[lane].busy_until = end;
      complete(buffer, lane_tid(lane), "fault", window_scratch, e.time, end, args_scratch);
    } else if (kind == sim::FaultKind::heal) {
      for (std::size_t i = 0; i < lanes.size(); ++i) {
        if (lanes[i].open && lanes[i].fault_index >= 0) close_lane(i, e.time);
      }
    }
  }

  void on_network_change(const sim::Event& e) {
    if (e.code == static_cast<std::uint16_t>(sim::FaultKind::heal)) close_window(e.a, e.time);
  }

  // ---- The store: who holds the leader key, lease expiries, request rate.

  void close_holder(Time at, std::string_view ended_by) {
    if (!holder_open) return;
    holder_open = false;
    name_scratch.clear();
    name_scratch += "held by ";
    if (holder >= 0) {
      fmt::format_to(Out(name_scratch), "node {}", holder);
    } else {
      name_scratch += "?";  // the key's value is not a node id
    }
    if (holder_lease != sim::kNoLease)
      fmt::format_to(Out(name_scratch), " (lease {})", holder_lease);
    args_scratch.clear();
    args_scratch += "\"key\":";
    append_json_string(args_scratch, *header.leader_key);
    args_scratch += ",\"owner\":";
    append_endpoint_json(args_scratch, holder);
    fmt::format_to(Out(args_scratch), ",\"lease\":{},\"revision\":{},\"ended_by\":\"{}\"",
                   holder_lease, holder_revision, ended_by);
    complete(buffer, store_tid(), "store", name_scratch, holder_start, at, args_scratch);
  }

  void on_store_change(const sim::Event& e) {
    if (!header.leader_key || e.text != *header.leader_key) return;
    const bool expired = e.c != 0;
    if (e.code == 0) {                                                     // put
      if (holder_open && holder == e.node && holder_lease == e.b) return;  // the same holder
      close_holder(e.time, "put");
      holder_open = true;
      holder = e.node;
      holder_lease = e.b;
      holder_revision = e.a;
      holder_start = e.time;
    } else {
      close_holder(e.time, expired ? "lease expiry" : "delete");
    }
  }

  void on_lease_expire(const sim::Event& e) {
    name_scratch.clear();
    fmt::format_to(Out(name_scratch), "lease {} expired", e.a);
    args_scratch.clear();
    fmt::format_to(Out(args_scratch), "\"lease\":{}", e.a);
    instant(buffer, store_tid(), "store", name_scratch, e.time, args_scratch);
  }

  void counter(Time at, std::uint64_t value) {
    fmt::format_to(Out(buffer),
                   ",\n{{\"ph\":\"C\",\"cat\":\"store\",\"name\":\"store requests\",\"pid\":{},"
                   "\"tid\":{},\"ts\":",
                   kPid, store_tid());
    append_us(buffer, at.ns);
    fmt::format_to(Out(buffer), ",\"args\":{{\"{}\":{}}}}}", kCounterKey, value);
  }

  void on_store_request(const sim::Event& e) {
    const std::int64_t bucket = std::max<std::int64_t>(e.time.ns, 0) / kCounterBucketNs;
    if (!counter_bucket) {
      if (bucket > 0) counter(Time(0), 0);
    } else if (bucket != *counter_bucket) {
      counter(Time(*counter_bucket * kCounterBucketNs), counter_count);
      if (bucket > *counter_bucket + 1) counter(Time((*counter_bucket + 1) * kCounterBucketNs), 0);
      counter_count = 0;
    }
    counter_bucket = bucket;
    ++counter_count;
  }

  // ---- The sink.

  void on_sink_write(const sim::Event& e) {
    const bool accepted = e.c != 0;
    const bool stale = newest_epoch && e.a < *newest_epoch;
    name_scratch.clear();
    if (accepted && stale) {
      name_scratch += "STALE write accepted";
    } else {
      fmt::format_to(Out(name_scratch), "write token {} {}", e.a,
                     accepted ? "accepted" : "REJECTED");
    }
    args_scratch.clear();
    args_scratch += "\"writer\":";
    append_endpoint_json(args_scratch, e.node);
    fmt::format_to(
        Out(args_scratch),
        ",\"token\":{},\"payload\":{},\"accepted\":{},\"highest_before\":{},\"stale\":{}", e.a, e.b,
        accepted, e.d, stale);
    if (newest_epoch) fmt::format_to(Out(args_scratch), ",\"newest_epoch\":{}", *newest_epoch);
    instant(buffer, sink_tid(), "sink", name_scratch, e.time, args_scratch);
  }

  // ---- The end of the run: everything still open ends here.

  void finish(Time end) {
    if (finished) return;
    finished = true;
    flush_bursts();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto n = static_cast<NodeId>(i);
      end_pause(n, end);
      close_role(n, end);
      end_down(n, end);
    }
    for (std::size_t m = 0; m < members.size(); ++m) {
      end_member_pause(m, end);
      close_member_role(m, end);
      end_member_down(m, end);
    }
    for (std::size_t row = 0; row < server_tracks.size(); ++row) {
      end_server_pause(row, end);
      end_server_down(row, end);
    }
    close_holder(end, "run end");
    for (std::size_t i = 0; i < lanes.size(); ++i) close_lane(i, end);
    if (counter_bucket) {
      counter(Time(*counter_bucket * kCounterBucketNs), counter_count);
      const Time next((*counter_bucket + 1) * kCounterBucketNs);
      const Time zero_at = std::min(next, end);
      if (zero_at.ns > *counter_bucket * kCounterBucketNs) counter(zero_at, 0);
    }
  }

  void on_event(const sim::Event& e) {
    if (e.time > now) {
      flush_bursts();
      now = e.time;
    }
    switch (e.kind) {
      case sim::EventKind::run_end:
        finish(e.time);
        break;
      case sim::EventKind::fault:
        on_fault(e);
        break;
      case sim::EventKind::belief:
        on_belief(e);
        break;
      case sim::EventKind::crash:
        if (const auto m = member_at(e.node)) {
          on_member_crash(*m, e);
        } else if (const auto row = server_row(e.node)) {
          on_server_crash(*row, e);
        } else {
          on_crash(e);
        }
        break;
      case sim::EventKind::restart:
        if (const auto m = member_at(e.node)) {
          end_member_down(*m, e.time);
        } else if (const auto row = server_row(e.node)) {
          end_server_down(*row, e.time);
        } else if (is_node(e.node)) {
          end_down(e.node, e.time);
        }
        break;
      case sim::EventKind::pause:
        if (const auto m = member_at(e.node)) {
          on_member_pause(*m, e.time, e.a);
        } else if (const auto row = server_row(e.node)) {
          on_server_pause(*row, e.time);
        } else {
          on_pause(e);
        }
        break;
      case sim::EventKind::resume:
        if (const auto m = member_at(e.node)) {
          end_member_pause(*m, e.time);
        } else if (const auto row = server_row(e.node)) {
          end_server_pause(*row, e.time);
        } else if (is_node(e.node)) {
          end_pause(e.node, e.time);
        }
        break;
      case sim::EventKind::server_role:
        on_server_role(e);
        break;
      case sim::EventKind::lease_refresh:
        on_lease_refresh(e);
        break;
      case sim::EventKind::client_failover:
        on_client_failover(e);
        break;
      case sim::EventKind::clock_change:
        on_clock_change(e);
        break;
      case sim::EventKind::msg_send:
        on_send(e);
        break;
      case sim::EventKind::msg_deliver:
        on_deliver(e);
        break;
      case sim::EventKind::msg_drop:
        on_drop(e);
        break;
      case sim::EventKind::store_request:
        on_store_request(e);
        break;
      case sim::EventKind::store_change:
        on_store_change(e);
        break;
      case sim::EventKind::lease_expire:
        on_lease_expire(e);
        break;
      case sim::EventKind::sink_write:
        on_sink_write(e);
        break;
      case sim::EventKind::store_pause:
        args_scratch.clear();
        fmt::format_to(Out(args_scratch), "\"duration_ns\":{}", e.a);
        open_window(kStorePauseWindow, e.time, "store paused", args_scratch);
        // A replicated store's store_pause stalls its member 0, at the store's address.
        if (replicated) on_member_pause(0, e.time, e.a);
        break;
      case sim::EventKind::store_resume:
        close_window(kStorePauseWindow, e.time);
        if (replicated) end_member_pause(0, e.time);
        break;
      case sim::EventKind::network_change:
        on_network_change(e);
        break;
      // Timers, store internals and replies would only clutter the picture.
      case sim::EventKind::run_start:
      case sim::EventKind::timer_fire:
      case sim::EventKind::store_apply:
      case sim::EventKind::store_reply:
      case sim::EventKind::watch_notify:
      case sim::EventKind::sink_reply:
      case sim::EventKind::sink_send:
      case sim::EventKind::raft_commit:
      case sim::EventKind::server_request:
      case sim::EventKind::conn_break:
        break;
    }
  }

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

  std::vector<NodeTrack> nodes;
  // A replicated store: set by the header, or by the first server_role event.
  bool replicated = false;
  bool store_process = false;              // the "store" process is named
  bool servers_process = false;            // the "servers" process is named
  std::vector<sim::Endpoint> server_rows;  // the servers with a lane, in the topology's order
  std::vector<ServerTrack> server_tracks;
  std::array<NodeTrack, sim::kMaxStoreMembers> members;
  std::array<bool, sim::kMaxStoreMembers> member_named{};
  std::vector<NodeId> open_bursts;
  std::map<LinkKey, std::deque<PendingSend>> in_flight;  // by link, for traces without ids
  std::deque<PendingSend> pending;                       // by message id, from pending_base
  std::uint64_t pending_base = 0;
  std::uint64_t next_flow = 1;
  std::optional<Epoch> newest_epoch;  // the newest leader epoch announced so far

  std::vector<Lane> lanes;

  bool holder_open = false;
  NodeId holder = sim::kNoNode;
  sim::LeaseId holder_lease = sim::kNoLease;
  sim::Revision holder_revision = 0;
  Time holder_start;

  std::optional<std::int64_t> counter_bucket;
  std::uint64_t counter_count = 0;
};

PerfettoWriter::PerfettoWriter(std::string path, const TraceHeader& header, std::uint64_t max_bytes)
    : state_(std::make_unique<State>(std::move(path), header, max_bytes)) {
  State& s = *state_;
  s.file = std::make_unique<io::TempFile>(s.path);
  if (s.file->file() == nullptr) {
    s.error = fmt::format("cannot write Perfetto trace: {}", s.file->error());
    s.file.reset();
    return;
  }
  s.buffer.reserve(kFlushBytes + 4096);
  s.write_preamble();
  if (s.bytes() > s.max_bytes) s.fail_limit();
}

PerfettoWriter::~PerfettoWriter() = default;  // an uncommitted TempFile removes itself

void PerfettoWriter::on_event(const sim::Event& event) {
  State& s = *state_;
  if (!s.file || s.closed || s.finished) return;
  s.on_event(event);
  if (s.bytes() > s.max_bytes) {
    s.fail_limit();
    return;
  }
  if (s.buffer.size() >= kFlushBytes) s.flush_buffer();
}

bool PerfettoWriter::close() {
  if (state_->closed) return ok();
  std::unique_ptr<io::TempFile> staged = close_staged();
  if (!staged) return false;
  if (!staged->commit()) {
    state_->error = fmt::format("Perfetto trace: {}", staged->error());
    return false;
  }
  return true;
}

std::unique_ptr<io::TempFile> PerfettoWriter::close_staged() {
  State& s = *state_;
  if (s.closed) return nullptr;
  s.closed = true;
  if (!s.file) return nullptr;
  s.finish(s.now);
  s.write_trailer();
  if (s.bytes() > s.max_bytes) {
    s.fail_limit();
    return nullptr;
  }
  s.flush_buffer();
  if (!s.file) return nullptr;
  if (!s.file->finish()) {
    s.error = fmt::format("Perfetto trace: {}", s.file->error());
    s.file.reset();
    return nullptr;
  }
  return std::move(s.file);
}

bool PerfettoWriter::ok() const {
  return state_->error.empty();
}

const std::string& PerfettoWriter::error() const {
  return state_->error;
}

std::uint64_t PerfettoWriter::bytes() const {
  return state_->bytes();
}

}  // namespace electsim::drawing
