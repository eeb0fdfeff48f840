// Chrome / Perfetto trace export in the Trace Event Format ("Trace Event Format", Google, 2016;
// as Perfetto's JSON importer reads it): complete slices ("X") for beliefs, downtime, GC pauses,
// leader-key holders and fault windows, instants ("i") for writes, drops, expiries and faults,
// flow pairs ("s"/"f") from a send to its delivery and a counter ("C") of store requests. A
// replicated store's members are tracks of a second process, "store", with their Raft roles as
// slices. Text is formatted by hand with fmt into one buffer; the file is renamed into place only
// when whole. The state and its parts: drawing/perfetto_state.hpp.
#include "drawing/perfetto.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "drawing/perfetto_state.hpp"

namespace electsim::drawing {

// ---- The file.

void PerfettoWriter::State::write_preamble() {
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
  if (spans.replicated()) {
    for (std::size_t m = 0; m < std::min(header.store_members, members.size()); ++m) {
      ensure_member_track(m);
    }
  }
  for (std::size_t row = 0; row < spans.server_rows().size(); ++row) ensure_server_track(row);
}

void PerfettoWriter::State::write_trailer() {
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

void PerfettoWriter::State::fail(std::string message) {
  if (error.empty()) error = std::move(message);
  buffer.clear();
  file.reset();
}

void PerfettoWriter::State::fail_limit() {
  fail(fmt::format("Perfetto trace larger than the limit of {} bytes; not written", max_bytes));
}

void PerfettoWriter::State::flush_buffer() {
  if (!file || buffer.empty()) return;
  const std::size_t written = std::fwrite(buffer.data(), 1, buffer.size(), file->file());
  if (written != buffer.size()) {
    fail(fmt::format("cannot write Perfetto trace {}: {}", path, std::strerror(errno)));
    return;
  }
  flushed += buffer.size();
  buffer.clear();
}

// ---- The end of the run: everything still open ends here.

void PerfettoWriter::State::finish(Time end) {
  if (finished) return;
  finished = true;
  flush_bursts();
  spans.finish(end, *this);
  close_holder(end, "run end");
  for (std::size_t i = 0; i < lanes.size(); ++i) close_lane(i, end);
  if (counter_bucket) {
    counter(Time(*counter_bucket * kCounterBucketNs), counter_count);
    const Time next((*counter_bucket + 1) * kCounterBucketNs);
    const Time zero_at = std::min(next, end);
    if (zero_at.ns > *counter_bucket * kCounterBucketNs) counter(zero_at, 0);
  }
}

void PerfettoWriter::State::on_event(const sim::Event& e) {
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
    case sim::EventKind::crash:
    case sim::EventKind::restart:
    case sim::EventKind::pause:
    case sim::EventKind::resume:
    case sim::EventKind::server_role:
      on_span_event(e);
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
      on_span_event(e);
      break;
    case sim::EventKind::store_resume:
      close_window(kStorePauseWindow, e.time);
      on_span_event(e);
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
