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
