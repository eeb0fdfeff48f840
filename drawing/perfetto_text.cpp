// The Perfetto writer's event text and track names (drawing/perfetto_state.hpp): every event is
// formatted by hand into the one buffer, each track named when first needed.
#include "drawing/perfetto_state.hpp"

namespace electsim::drawing {

// ---- Track ids.

int PerfettoWriter::State::member_pauses_tid(std::size_t m) const {
  return kMemberTidBase + static_cast<int>(sim::kMaxStoreMembers + m);
}

int PerfettoWriter::State::pid_of(int tid) {
  return tid >= kServerTidBase ? kServersPid : tid >= kMemberTidBase ? kStorePid : kPid;
}

// ---- Servers with a lane of their own: when each was down or paused, on one track each.

std::optional<std::size_t> PerfettoWriter::State::server_row(sim::Endpoint e) const {
  if (e >= 0) return std::nullopt;
  const auto it = std::find(server_rows.begin(), server_rows.end(), e);
  if (it == server_rows.end()) return std::nullopt;
  return static_cast<std::size_t>(it - server_rows.begin());
}

void PerfettoWriter::State::ensure_server_track(std::size_t row) {
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

void PerfettoWriter::State::end_server_pause(std::size_t row, Time at) {
  ServerTrack& t = server_tracks[row];
  if (!t.paused) return;
  t.paused = false;
  args_scratch.clear();
  complete(buffer, server_tid(row), "pause", "paused", t.pause_start, at, args_scratch);
}

void PerfettoWriter::State::end_server_down(std::size_t row, Time at) {
  ServerTrack& t = server_tracks[row];
  if (!t.down) return;
  t.down = false;
  args_scratch.clear();
  fmt::format_to(Out(args_scratch), "\"graceful\":{}", t.graceful);
  complete(buffer, server_tid(row), "down", t.graceful ? "stopped" : "crashed", t.down_start, at,
           args_scratch);
}

void PerfettoWriter::State::on_server_crash(std::size_t row, const sim::Event& e) {
  ensure_server_track(row);
  end_server_pause(row, e.time);
  ServerTrack& t = server_tracks[row];
  if (t.down) return;
  t.down = true;
  t.graceful = e.a != 0;
  t.down_start = e.time;
}

void PerfettoWriter::State::on_server_pause(std::size_t row, Time at) {
  ensure_server_track(row);
  ServerTrack& t = server_tracks[row];
  if (t.down || t.paused) return;  // an extension keeps its slice
  t.paused = true;
  t.pause_start = at;
}

std::optional<std::size_t> PerfettoWriter::State::member_at(sim::Endpoint e) const {
  if (!replicated || e >= 0) return std::nullopt;
  const std::int32_t m = member_index(e);
  if (m < 0) return std::nullopt;
  return static_cast<std::size_t>(m);
}

std::string PerfettoWriter::State::member_name(std::size_t m) const {
  const sim::NamedEndpoint* server = header.topology.store_members() > 1
                                         ? header.topology.server(header.topology.store_member(m))
                                         : nullptr;
  return server != nullptr ? server->name : fmt::format("store:{}", m);
}

void PerfettoWriter::State::append_endpoint(std::string& out, sim::Endpoint endpoint) const {
  if (endpoint == sim::kNoNode) {
    out += "none";
  } else if (const sim::NamedEndpoint* server = header.topology.server(endpoint)) {
    out += server->name;
  } else {
    fmt::format_to(Out(out), "{}", endpoint);
  }
}

void PerfettoWriter::State::append_endpoint_json(std::string& out, sim::Endpoint endpoint) const {
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

void PerfettoWriter::State::open_event(std::string& out, char ph, std::string_view cat,
                                       std::string_view name, int tid, Time at) {
  out += ",\n{\"ph\":\"";
  out += ph;
  out += "\",\"cat\":\"";
  out += cat;
  out += "\",\"name\":";
  append_json_string(out, name);
  fmt::format_to(Out(out), ",\"pid\":{},\"tid\":{},\"ts\":", pid_of(tid), tid);
  append_us(out, at.ns);
}

void PerfettoWriter::State::close_event(std::string& out, std::string_view args) {
  if (!args.empty()) {
    out += ",\"args\":{";
    out += args;
    out += '}';
  }
  out += '}';
}

void PerfettoWriter::State::complete(std::string& out, int tid, std::string_view cat,
                                     std::string_view name, Time start, Time end,
                                     std::string_view args) {
  open_event(out, 'X', cat, name, tid, start);
  out += ",\"dur\":";
  append_us(out, std::max<std::int64_t>(end.ns - start.ns, 0));
  close_event(out, args);
}

void PerfettoWriter::State::instant(std::string& out, int tid, std::string_view cat,
                                    std::string_view name, Time at, std::string_view args) {
  open_event(out, 'i', cat, name, tid, at);
  out += ",\"s\":\"t\"";
  close_event(out, args);
}

void PerfettoWriter::State::flow(std::string& out, char ph, int tid, std::uint16_t type,
                                 std::uint64_t id, Time at) {
  name_scratch.clear();
  append_type_name(name_scratch, type);
  open_event(out, ph, "message", name_scratch, tid, at);
  fmt::format_to(Out(out), ",\"id\":{},\"bp\":\"e\"}}", id);
}

void PerfettoWriter::State::thread_metadata(int tid, std::string_view name, int pid,
                                            int sort_index) {
  buffer += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",";
  fmt::format_to(Out(buffer), "\"pid\":{},\"tid\":{},\"args\":{{\"name\":", pid, tid);
  append_json_string(buffer, name);
  buffer += "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",";
  fmt::format_to(Out(buffer), "\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}", pid, tid,
                 sort_index < 0 ? tid : sort_index);
}

void PerfettoWriter::State::append_type_name(std::string& out, std::uint16_t type) const {
  if (type < header.message_types.size() && !header.message_types[type].empty()) {
    out += header.message_types[type];
  } else {
    fmt::format_to(Out(out), "type_{}", type);
  }
}

void PerfettoWriter::State::append_type_json(std::string& out, std::uint16_t type) {
  type_scratch.clear();
  append_type_name(type_scratch, type);
  append_json_string(out, type_scratch);
}

void PerfettoWriter::State::ensure_messages_track(NodeId n) {
  NodeTrack& t = nodes[static_cast<std::size_t>(n)];
  if (t.messages_track) return;
  t.messages_track = true;
  thread_metadata(messages_tid(n), fmt::format("node {} · messages", n));
}

void PerfettoWriter::State::ensure_pauses_track(NodeId n) {
  NodeTrack& t = nodes[static_cast<std::size_t>(n)];
  if (t.pauses_track) return;
  t.pauses_track = true;
  thread_metadata(pauses_tid(n), fmt::format("node {} · pauses", n));
}

void PerfettoWriter::State::ensure_member_track(std::size_t m) {
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

void PerfettoWriter::State::ensure_member_pauses_track(std::size_t m) {
  NodeTrack& t = members[m];
  if (t.pauses_track) return;
  t.pauses_track = true;
  thread_metadata(member_pauses_tid(m), member_name(m) + " · pauses", kStorePid,
                  static_cast<int>(sim::kMaxStoreMembers + m));
}

}  // namespace electsim::drawing
