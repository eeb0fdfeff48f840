// The timeline recorder: one pass over the event stream, appending a span or a mark only when
// something changes (a belief, a store member's Raft role, a crash, a pause, a fault, a store or
// sink decision). Messages and timer fires only bump a counter. Clocks are mirrored with the
// kernel's own sim::ClockModel so that every segment reads exactly what the node's clock read;
// split-brain stretches are derived from the leader spans at the end, with the analyzer's meaning
// (non-zero length, two or more).
// The state and its parts: drawing/timeline_state.hpp.
#include "drawing/timeline_state.hpp"

namespace electsim::drawing {

namespace timeline_record {

std::string members_text(const std::vector<sim::Endpoint>& members, const sim::Topology& topology) {
  std::string out;
  std::size_t i = 0;
  while (i < members.size()) {
    if (!out.empty()) out += ',';
    std::size_t j = i;
    if (members[i] >= 0) {
      while (j + 1 < members.size() && members[j + 1] == members[j] + 1) ++j;
    }
    if (j >= i + 4) {
      out += fmt::format("{}-{}", members[i], members[j]);
      i = j + 1;
    } else {
      out += topology.name_of(members[i]);
      ++i;
    }
  }
  return out;
}

ClockTrack make_track(const sim::ClockConfig& config) {
  ClockTrack track;
  track.model = sim::ClockModel(config.offset, config.drift_ppb, config.steps);
  for (const sim::ClockStep& step : config.steps) {
    if (step.at.ns > 0) track.pending.push_back(step);
  }
  std::stable_sort(track.pending.begin(), track.pending.end(),
                   [](const sim::ClockStep& a, const sim::ClockStep& b) { return a.at < b.at; });
  track.add(Time(0));
  return track;
}

}  // namespace timeline_record

// ---- Model

int PartitionSpan::side(sim::Endpoint endpoint) const {
  if (endpoint == sim::kNoNode) return -1;  // a world without the server asked about
  std::size_t index = 0;
  if (endpoint >= 0 && static_cast<std::size_t>(endpoint) < nodes) {
    index = static_cast<std::size_t>(endpoint);
  } else {
    const auto it = std::find(servers.begin(), servers.end(), endpoint);
    if (endpoint < 0 && it != servers.end()) {
      index = nodes + static_cast<std::size_t>(it - servers.begin());
    } else {
      return -1;
    }
  }
  return index < side_of.size() ? side_of[index] : -1;
}

sim::Endpoint PartitionSpan::endpoint_at(std::size_t index) const {
  if (index < nodes) return static_cast<sim::Endpoint>(index);
  return index - nodes < servers.size() ? servers[index - nodes] : sim::kNoNode;
}

const char* hold_end_name(HoldEnd end) {
  switch (end) {
    case HoldEnd::expired:
      return "expired";
    case HoldEnd::deleted:
      return "deleted";
    case HoldEnd::replaced:
      return "replaced";
    case HoldEnd::held_at_end:
      return "held at end";
  }
  return "?";
}

sim::LocalTime TimelineClockSegment::local_at(Time t) const {
  const std::int64_t drift_part = sim::mul_div_floor(t.ns - drift_since.ns, drift_ppb, kBillion) -
                                  sim::mul_div_floor(from.ns - drift_since.ns, drift_ppb, kBillion);
  return sim::LocalTime(local_ns + (t.ns - from.ns) + drift_part);
}

sim::LocalTime Timeline::local_at(sim::Endpoint node, Time t) const {
  const std::vector<TimelineClockSegment>* segments = nullptr;
  if (node == store_endpoint() && node != sim::kNoNode) {
    segments = &store_clock;
  } else if (node >= 0 && static_cast<std::size_t>(node) < clocks.size()) {
    segments = &clocks[static_cast<std::size_t>(node)];
  }
  if (segments == nullptr || segments->empty()) return sim::LocalTime(t.ns);  // a perfect clock
  auto it =
      std::upper_bound(segments->begin(), segments->end(), t,
                       [](Time value, const TimelineClockSegment& s) { return value < s.from; });
  if (it != segments->begin()) --it;
  return it->local_at(t);
}

// ---- Recorder

void TimelineRecorder::State::init(TraceHeader header, const sim::WorldConfig* world,
                                   std::optional<Duration> ttl,
                                   std::optional<bool> judged_by_store) {
  n = header.node_count;
  if (n == 0 && world != nullptr) n = world->node_count;
  tl.node_count = n;
  tl.duration = header.duration;
  tl.lease_ttl = ttl;
  if (ttl) tl.lease_judged_by_store = judged_by_store;
  sent_by_code.assign(header.message_types.size(), 0);
  if (header.store_members > 1) {
    tl.store_members = std::min(header.store_members, sim::kMaxStoreMembers);
    indexed_members = tl.store_members;
  }
  spans = SpanModel(n, header.topology, header.store_members > 1);
  tl.header = std::move(header);
  store = tl.store_endpoint();
  sink = tl.sink_endpoint();
  tl.server_rows = spans.server_rows();
  for (std::size_t i = 0; i < n; ++i) {
    const bool configured = world != nullptr && i < world->clocks.size();
    clocks.push_back(make_track(configured ? world->clocks[i] : sim::ClockConfig{}));
  }
  clocks.push_back(
      make_track(world != nullptr ? sim::server_clock(*world, store) : sim::ClockConfig{}));
}

std::optional<std::size_t> TimelineRecorder::State::endpoint_index(sim::Endpoint e) const {
  if (is_node(e)) return at(e);
  if (e == sim::kNoNode) return std::nullopt;
  if (e == store) return n;
  if (e == sink) return n + 1;
  const std::int32_t member = tl.header.topology.store_member_index(e);
  if (member > 0 && static_cast<std::size_t>(member) < indexed_members) {
    return n + 1 + static_cast<std::size_t>(member);
  }
  if (const auto row = server_row(e)) return n + 1 + indexed_members + *row;
  return std::nullopt;
}

std::vector<sim::Endpoint> TimelineRecorder::State::indexed_servers() const {
  std::vector<sim::Endpoint> servers = {store, sink};
  for (std::size_t m = 1; m < indexed_members; ++m) {
    servers.push_back(tl.header.topology.store_member(m));
  }
  servers.insert(servers.end(), tl.server_rows.begin(), tl.server_rows.end());
  return servers;
}

TimelineRecorder::TimelineRecorder(TraceHeader header, const sim::WorldConfig& world,
                                   std::optional<Duration> lease_ttl,
                                   std::optional<bool> lease_judged_by_store)
    : state_(std::make_unique<State>()) {
  state_->init(std::move(header), &world, lease_ttl, lease_judged_by_store);
}

TimelineRecorder::TimelineRecorder(TraceHeader header, std::optional<Duration> lease_ttl,
                                   std::optional<bool> lease_judged_by_store)
    : state_(std::make_unique<State>()) {
  state_->init(std::move(header), nullptr, lease_ttl, lease_judged_by_store);
}

TimelineRecorder::~TimelineRecorder() = default;

void TimelineRecorder::set_max_items(std::size_t max) {
  state_->max_items = max;
}

bool TimelineRecorder::overflowed() const {
  return state_->overflowed;
}

void TimelineRecorder::on_event(const sim::Event& e) {
  State& s = *state_;
  if (s.run_end || s.overflowed) return;
  // The limit is checked every 1024 events, not on each: an event adds at most a few items, so
  // the picture overshoots it by a few thousand at most, and the hot path stays a counter.
  if ((++s.events_seen & 1023u) == 0) {
    const Timeline& t = s.tl;
    if (t.beliefs.size() + t.downs.size() + t.pauses.size() + t.store_pauses.size() +
            t.partitions.size() + t.leader_key.size() + t.writes.size() + t.faults.size() +
            t.member_roles.size() + t.member_downs.size() + t.member_pauses.size() +
            t.store_leaders.size() + t.server_downs.size() + t.server_pauses.size() >
        s.max_items) {
      s.overflowed = true;
      s.tl = Timeline{};
      return;
    }
  }
  ELECTSIM_ASSERT(e.time >= s.last_event, "events arrive in time order");
  s.last_event = e.time;
  switch (e.kind) {
    case sim::EventKind::msg_send:
      if (e.code >= s.sent_by_code.size()) s.sent_by_code.resize(e.code + 1u, 0);
      ++s.sent_by_code[e.code];
      break;
    case sim::EventKind::belief:
    case sim::EventKind::crash:
    case sim::EventKind::restart:
    case sim::EventKind::pause:
    case sim::EventKind::resume:
    case sim::EventKind::store_pause:
    case sim::EventKind::store_resume:
    case sim::EventKind::server_role:
      s.spans.on_event(e, s);
      break;
    case sim::EventKind::fault:
      s.on_fault(e);
      break;
    case sim::EventKind::network_change:
      s.on_network_change(e);
      break;
    case sim::EventKind::store_change:
      s.on_store_change(e);
      break;
    case sim::EventKind::store_apply:
      s.on_store_apply(e);
      break;
    case sim::EventKind::sink_write:
      s.on_sink_write(e);
      break;
    case sim::EventKind::clock_change:
      s.on_clock_change(e);
      break;
    case sim::EventKind::run_end:
      s.run_end = e.time;
      break;
    case sim::EventKind::run_start:
    case sim::EventKind::timer_fire:
    case sim::EventKind::msg_deliver:
    case sim::EventKind::msg_drop:
    case sim::EventKind::store_request:
    case sim::EventKind::lease_expire:
    case sim::EventKind::store_reply:
    case sim::EventKind::watch_notify:
    case sim::EventKind::sink_reply:
    case sim::EventKind::sink_send:
    case sim::EventKind::raft_commit:
    case sim::EventKind::lease_refresh:
    case sim::EventKind::client_failover:
    case sim::EventKind::server_request:
    case sim::EventKind::conn_break:
      break;
  }
}

namespace {

// Maximal stretches of non-zero length with two or more leader spans, from the spans alone.
std::vector<SplitBrainSpan> split_brain_spans(const std::vector<BeliefSpan>& beliefs) {
  struct Edge {
    Time at;
    int delta;
    NodeId node;
  };
  std::vector<Edge> edges;
  for (const BeliefSpan& b : beliefs) {
    if (b.role != sim::Role::leader || b.end <= b.start) continue;
    edges.push_back({b.start, +1, b.node});
    edges.push_back({b.end, -1, b.node});
  }
  std::stable_sort(edges.begin(), edges.end(),
                   [](const Edge& a, const Edge& b) { return a.at < b.at; });
  std::vector<SplitBrainSpan> out;
  std::vector<NodeId> leading;  // nodes with a leader span open now, ascending, with repeats
  std::size_t i = 0;
  while (i < edges.size()) {
    const Time t = edges[i].at;
    for (; i < edges.size() && edges[i].at == t; ++i) {
      const Edge& e = edges[i];
      if (e.delta > 0) {
        leading.insert(std::upper_bound(leading.begin(), leading.end(), e.node), e.node);
      } else {
        const auto it = std::lower_bound(leading.begin(), leading.end(), e.node);
        if (it != leading.end() && *it == e.node) leading.erase(it);
      }
    }
    if (leading.size() < 2 || i >= edges.size()) continue;
    const Time next = edges[i].at;  // later than t: equal times were consumed above
    if (out.empty() || out.back().end != t) out.push_back(SplitBrainSpan{t, t, {}});
    SplitBrainSpan& span = out.back();
    span.end = next;
    for (NodeId node : leading) {
      const auto it = std::lower_bound(span.nodes.begin(), span.nodes.end(), node);
      if (it == span.nodes.end() || *it != node) span.nodes.insert(it, node);
    }
  }
  return out;
}

}  // namespace

Timeline TimelineRecorder::finish(const Report& report) {
  const State& s = *state_;
  Timeline tl = s.tl;
  const Time end = s.run_end ? *s.run_end : std::max(s.last_event, Time(tl.header.duration));
  tl.duration = end.since_start();

  // Spans still open end with the run; after an overflow tl holds none of them.
  if (!s.overflowed) {
    s.spans.for_each([&](const SpanOwner& owner, const ProcessSpans& p) {
      if (p.role) {
        BeliefSpan& span = State::roles_of(tl, owner.lane)[p.role->record];
        span.end = end;
        span.open_at_end = true;
      }
      if (p.down) {
        DownSpan& span = State::downs_of(tl, owner.lane)[p.down->record];
        span.end = end;
        span.open_at_end = true;
      }
      if (p.pause) {
        PauseSpan& span = State::pauses_of(tl, owner.lane)[p.pause->record];
        span.end = end;
        span.open_at_end = true;
      }
    });
  }
  if (s.open_partition) {
    tl.partitions[*s.open_partition].end = end;
    tl.partitions[*s.open_partition].open_at_end = true;
  }
  if (s.open_hold) {
    tl.leader_key[*s.open_hold].end = end;
    tl.leader_key[*s.open_hold].ended_by = HoldEnd::held_at_end;
  }
  // Two beliefs at one instant leave a span of no length: nothing was believed for any time.
  std::erase_if(tl.beliefs, [](const BeliefSpan& b) { return b.end <= b.start; });
  std::erase_if(tl.member_roles, [](const BeliefSpan& b) { return b.end <= b.start; });

  tl.split_brain = split_brain_spans(tl.beliefs);
  tl.failovers = report.failovers;

  tl.clocks.clear();
  for (std::size_t i = 0; i < s.clocks.size(); ++i) {
    ClockTrack clock = s.clocks[i];
    clock.flush(end);
    if (i < s.n) {
      tl.clocks.push_back(std::move(clock.segments));
    } else {
      tl.store_clock = std::move(clock.segments);  // the last track is the store's
    }
  }

  tl.messages_by_type.clear();
  for (std::size_t code = 0; code < s.sent_by_code.size(); ++code) {
    if (s.sent_by_code[code] == 0) continue;
    const auto& names = tl.header.message_types;
    const bool named = code < names.size() && !names[code].empty();
    tl.messages_by_type[named ? names[code] : "type_" + std::to_string(code)] +=
        s.sent_by_code[code];
  }

  tl.summary.elections = report.elections;
  tl.summary.split_brain_time = report.split_brain_time;
  tl.summary.split_brain_episodes = report.split_brain_episodes;
  tl.summary.same_epoch_leaders = report.same_epoch_leaders_total;
  tl.summary.writes_accepted = report.writes_accepted;
  tl.summary.writes_rejected = report.writes_rejected;
  tl.summary.stale_writes_accepted = report.stale_writes_accepted;
  tl.summary.stale_writes_rejected = report.stale_writes_rejected;
  tl.summary.overwrites = report.stale_writes_overwriting;
  tl.summary.leaderless_fraction = report.leaderless_fraction;
  tl.summary.messages_sent = report.messages_sent;
  return tl;
}

}  // namespace electsim::drawing
