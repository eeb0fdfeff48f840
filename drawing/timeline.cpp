// The timeline recorder: one pass over the event stream, appending a span or a mark only when
// something changes (a belief, a store member's Raft role, a crash, a pause, a fault, a store or
// sink decision). Messages and timer fires only bump a counter. Clocks are mirrored with the
// kernel's own sim::ClockModel so that every segment reads exactly what the node's clock read;
// split-brain stretches are derived from the leader spans at the end, with the analyzer's meaning
// (non-zero length, two or more).
#include "drawing/timeline.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/clock.hpp"
#include "sim/store_types.hpp"

namespace electsim::drawing {

using analysis::Report;
using analysis::TraceHeader;

namespace {

constexpr std::int64_t kBillion = 1'000'000'000;
__extension__ typedef __int128 Int128;  // exact products of ns and ppb, as in sim/clock.cpp

// floor(a * b / c) for c > 0, the rounding sim::ClockModel uses.
std::int64_t mul_div_floor(std::int64_t a, std::int64_t b, std::int64_t c) {
  const Int128 p = static_cast<Int128>(a) * b;
  Int128 q = p / c;
  if ((p % c != 0) && ((p < 0) != (c < 0))) --q;
  return static_cast<std::int64_t>(q);
}

// Members of one side, with runs of five or more consecutive node ids shortened ("0-4,7,store"),
// servers by the names their world gave them.
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

// A clock being mirrored: the kernel's model, the configured steps not yet turned into segments,
// and when the current drift took effect.
struct ClockTrack {
  sim::ClockModel model;
  std::vector<sim::ClockStep> pending;  // ascending
  Time drift_since;
  std::vector<TimelineClockSegment> segments;

  void add(Time from) {
    TimelineClockSegment segment{from, model.local_at(from).ns, model.drift_ppb(), drift_since};
    if (!segments.empty() && segments.back().from == from) {
      segments.back() = segment;
    } else {
      segments.push_back(segment);
    }
  }
  // Configured steps at or before `upto` start segments; the model did not change since they were
  // scheduled, so its reading at each is what the kernel's clock read.
  void flush(Time upto) {
    std::size_t used = 0;
    while (used < pending.size() && pending[used].at <= upto) {
      add(pending[used].at);
      ++used;
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(used));
  }
};

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

}  // namespace

// ---- Model

int PartitionSpan::side(sim::Endpoint endpoint) const {
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
  const std::int64_t drift_part = mul_div_floor(t.ns - drift_since.ns, drift_ppb, kBillion) -
                                  mul_div_floor(from.ns - drift_since.ns, drift_ppb, kBillion);
  return sim::LocalTime(local_ns + (t.ns - from.ns) + drift_part);
}

sim::LocalTime Timeline::local_at(sim::Endpoint node, Time t) const {
  const std::vector<TimelineClockSegment>* segments = nullptr;
  if (node == sim::kStoreEndpoint) {
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

struct TimelineRecorder::State {
  // A partition, isolation or cut in force: the side of each endpoint it touches.
  struct ActiveCut {
    std::size_t index = 0;
    sim::FaultKind kind = sim::FaultKind::partition;
    std::vector<int> group_of;  // by endpoint index; -1 untouched
  };

  Timeline tl;
  std::size_t n = 0;
  std::vector<std::optional<std::size_t>> open_belief;  // per node, into tl.beliefs
  std::vector<std::optional<std::size_t>> open_down;
  std::vector<std::optional<std::size_t>> open_pause;
  std::optional<std::size_t> open_store_pause;
  // A replicated store's members, by member index, into tl.member_roles, member_downs and
  // member_pauses.
  bool replicated = false;
  std::size_t indexed_members = 1;  // members with an index in PartitionSpan::side_of
  std::array<std::optional<std::size_t>, sim::kMaxStoreMembers> open_member_role;
  std::array<std::optional<std::size_t>, sim::kMaxStoreMembers> open_member_down;
  std::array<std::optional<std::size_t>, sim::kMaxStoreMembers> open_member_pause;
  // The servers with rows (Timeline::server_rows), by row.
  std::vector<std::optional<std::size_t>> open_server_down;
  std::vector<std::optional<std::size_t>> open_server_pause;
  std::optional<std::size_t> open_hold;
  std::optional<std::size_t> open_partition;
  std::vector<ActiveCut> active;
  std::optional<Epoch> newest_epoch;  // highest leader epoch announced so far
  std::vector<ClockTrack> clocks;     // nodes, then the store
  std::vector<std::uint64_t> sent_by_code;
  Time last_event;
  std::optional<Time> run_end;
  bool overflowed = false;
  std::size_t max_items = kMaxItems;
  std::uint64_t events_seen = 0;

  void init(TraceHeader header, const sim::WorldConfig* world, std::optional<Duration> ttl,
            std::optional<bool> judged_by_store) {
    n = header.node_count;
    if (n == 0 && world != nullptr) n = world->node_count;
    tl.node_count = n;
    tl.duration = header.duration;
    tl.lease_ttl = ttl;
    if (ttl) tl.lease_judged_by_store = judged_by_store;
    sent_by_code.assign(header.message_types.size(), 0);
    if (header.store_members > 1) {
      replicated = true;
      tl.store_members = std::min(header.store_members, sim::kMaxStoreMembers);
      indexed_members = tl.store_members;
    }
    tl.header = std::move(header);
    for (const sim::NamedEndpoint& server : tl.header.topology.servers()) {
      if (server.traits.lane == sim::ServerLane::process) tl.server_rows.push_back(server.address);
    }
    open_server_down.assign(tl.server_rows.size(), std::nullopt);
    open_server_pause.assign(tl.server_rows.size(), std::nullopt);
    open_belief.assign(n, std::nullopt);
    open_down.assign(n, std::nullopt);
    open_pause.assign(n, std::nullopt);
    for (std::size_t i = 0; i < n; ++i) {
      const bool configured = world != nullptr && i < world->clocks.size();
      clocks.push_back(make_track(configured ? world->clocks[i] : sim::ClockConfig{}));
    }
    clocks.push_back(make_track(world != nullptr ? sim::server_clock(*world, sim::kStoreEndpoint)
                                                 : sim::ClockConfig{}));
  }

  bool is_node(sim::Endpoint e) const { return e >= 0 && static_cast<std::size_t>(e) < n; }
  std::size_t at(sim::Endpoint node) const { return static_cast<std::size_t>(node); }

  // The endpoint's index in PartitionSpan::side_of, or nullopt for no endpoint.
  std::optional<std::size_t> endpoint_index(sim::Endpoint e) const {
    if (is_node(e)) return at(e);
    if (e == sim::kStoreEndpoint) return n;
    if (e == sim::kSinkEndpoint) return n + 1;
    const std::int32_t member = tl.header.topology.store_member_index(e);
    if (member > 0 && static_cast<std::size_t>(member) < indexed_members) {
      return n + 1 + static_cast<std::size_t>(member);
    }
    if (const auto row = server_row(e)) return n + 1 + indexed_members + *row;
    return std::nullopt;
  }
  // The servers with an index in PartitionSpan::side_of, from n on: the store, the sink, a
  // replicated store's further members, then the servers with rows.
  std::vector<sim::Endpoint> indexed_servers() const {
    std::vector<sim::Endpoint> servers = {sim::kStoreEndpoint, sim::kSinkEndpoint};
    for (std::size_t m = 1; m < indexed_members; ++m) {
      servers.push_back(tl.header.topology.store_member(m));
    }
    servers.insert(servers.end(), tl.server_rows.begin(), tl.server_rows.end());
    return servers;
  }
  // Endpoints a partition can give a side: nodes, the store, the sink, further members and the
  // servers with rows.
  std::size_t endpoint_count() const { return n + 1 + indexed_members + tl.server_rows.size(); }

  // The member index of a replicated store's member at `e`, or nullopt.
  std::optional<std::size_t> member_at(sim::Endpoint e) const {
    if (!replicated) return std::nullopt;
    const std::int32_t member = tl.header.topology.store_member_index(e);
    if (member < 0) return std::nullopt;
    return static_cast<std::size_t>(member);
  }

  // ---- Beliefs, crashes, pauses

  void close_belief(NodeId node, Time t) {
    auto& open = open_belief[at(node)];
    if (!open) return;
    tl.beliefs[*open].end = t;
    open.reset();
  }

  void on_belief(const sim::Event& e) {
    if (!is_node(e.node)) return;
    close_belief(e.node, e.time);
    BeliefSpan span;
    span.node = e.node;
    span.role = e.code <= 2 ? static_cast<sim::Role>(e.code) : sim::Role::follower;
    span.epoch = e.a;
    span.known_leader =
        span.role == sim::Role::follower && e.b >= 0 ? static_cast<NodeId>(e.b) : sim::kNoNode;
    span.start = e.time;
    span.end = e.time;
    open_belief[at(e.node)] = tl.beliefs.size();
    tl.beliefs.push_back(span);
    if (span.role == sim::Role::leader && (!newest_epoch || e.a > *newest_epoch)) {
      newest_epoch = e.a;
    }
  }

  void close_pause(NodeId node, Time t) {
    auto& open = open_pause[at(node)];
    if (!open) return;
    tl.pauses[*open].end = t;
    open.reset();
  }

  void on_crash(const sim::Event& e) {
    if (!is_node(e.node)) return;
    close_belief(e.node, e.time);
    close_pause(e.node, e.time);
    if (open_down[at(e.node)]) return;
    open_down[at(e.node)] = tl.downs.size();
    tl.downs.push_back(DownSpan{e.node, e.time, e.time, e.a != 0, false});
  }

  void on_restart(const sim::Event& e) {
    if (!is_node(e.node)) return;
    auto& open = open_down[at(e.node)];
    if (!open) return;
    tl.downs[*open].end = e.time;
    open.reset();
  }

  void on_pause(const sim::Event& e) {
    if (!is_node(e.node) || open_pause[at(e.node)]) return;  // an extension keeps its span
    open_pause[at(e.node)] = tl.pauses.size();
    tl.pauses.push_back(PauseSpan{e.node, e.time, e.time, false});
  }

  void on_store_pause(const sim::Event& e) {
    if (open_store_pause) return;
    open_store_pause = tl.store_pauses.size();
    tl.store_pauses.push_back(PauseSpan{sim::kStoreEndpoint, e.time, e.time, false});
  }

  void on_store_resume(const sim::Event& e) {
    if (!open_store_pause) return;
    tl.store_pauses[*open_store_pause].end = e.time;
    open_store_pause.reset();
  }

  // ---- Servers with rows of their own: crashes and pauses, as a node's

  // The row of the server at `e`, or nullopt (a few servers at most: only crash, restart, pause
  // and resume events look).
  std::optional<std::size_t> server_row(sim::Endpoint e) const {
    if (e >= 0) return std::nullopt;
    const auto it = std::find(tl.server_rows.begin(), tl.server_rows.end(), e);
    if (it == tl.server_rows.end()) return std::nullopt;
    return static_cast<std::size_t>(it - tl.server_rows.begin());
  }

  void close_server_pause(std::size_t row, Time t) {
    auto& open = open_server_pause[row];
    if (!open) return;
    tl.server_pauses[*open].end = t;
    open.reset();
  }

  void on_server_crash(std::size_t row, const sim::Event& e) {
    close_server_pause(row, e.time);
    if (open_server_down[row]) return;
    open_server_down[row] = tl.server_downs.size();
    tl.server_downs.push_back(DownSpan{e.node, e.time, e.time, e.a != 0, false});
  }

  void on_server_restart(std::size_t row, Time t) {
    auto& open = open_server_down[row];
    if (!open) return;
    tl.server_downs[*open].end = t;
    open.reset();
  }

  void on_server_pause(std::size_t row, const sim::Event& e) {
    if (open_server_pause[row]) return;  // an extension keeps its span
    open_server_pause[row] = tl.server_pauses.size();
    tl.server_pauses.push_back(PauseSpan{e.node, e.time, e.time, false});
  }

  // ---- A replicated store's members: the same spans as a node's, by member index

  void close_member_role(std::size_t m, Time t) {
    auto& open = open_member_role[m];
    if (!open) return;
    tl.member_roles[*open].end = t;
    open.reset();
  }

  void close_member_pause(std::size_t m, Time t) {
    auto& open = open_member_pause[m];
    if (!open) return;
    tl.member_pauses[*open].end = t;
    open.reset();
  }

  void on_server_role(const sim::Event& e) {
    const std::int32_t member = tl.header.topology.store_member_index(e.node);
    if (member < 0) return;
    replicated = true;  // a stream without the header's count still shows its members
    const auto m = static_cast<std::size_t>(member);
    tl.store_members = std::max(tl.store_members, m + 1);
    close_member_role(m, e.time);
    BeliefSpan span;
    span.node = e.node;
    span.role = e.code <= 2 ? static_cast<sim::Role>(e.code) : sim::Role::follower;
    span.epoch = e.a;
    const auto known = static_cast<sim::Endpoint>(e.b);
    span.known_leader = span.role == sim::Role::follower && e.b != sim::kNoNode &&
                                tl.header.topology.store_member_index(known) >= 0
                            ? known
                            : sim::kNoNode;
    span.start = e.time;
    span.end = e.time;
    open_member_role[m] = tl.member_roles.size();
    tl.member_roles.push_back(span);
    if (span.role != sim::Role::leader) return;
    // A new leader, or the same member leading in a new term: the store's leader changed.
    const std::vector<StoreLeaderMark>& marks = tl.store_leaders;
    if (!marks.empty() && marks.back().member == e.node && marks.back().term == e.a) return;
    const sim::Endpoint previous = marks.empty() ? sim::kNoNode : marks.back().member;
    tl.store_leaders.push_back(StoreLeaderMark{e.time, e.node, e.a, previous});
  }

  void on_member_crash(std::size_t m, const sim::Event& e) {
    close_member_role(m, e.time);
    close_member_pause(m, e.time);
    if (open_member_down[m]) return;
    open_member_down[m] = tl.member_downs.size();
    tl.member_downs.push_back(DownSpan{e.node, e.time, e.time, e.a != 0, false});
  }

  void on_member_restart(std::size_t m, Time t) {
    auto& open = open_member_down[m];
    if (!open) return;
    tl.member_downs[*open].end = t;
    open.reset();
  }

  void on_member_pause(std::size_t m, Time t) {
    if (open_member_pause[m]) return;  // an extension keeps its span
    open_member_pause[m] = tl.member_pauses.size();
    tl.member_pauses.push_back(PauseSpan{sim::store_member_endpoint(m), t, t, false});
  }

  // ---- Faults and the network's shape

  void on_fault(const sim::Event& e) {
    FaultMark mark;
    mark.at = e.time;
    mark.index = e.a >= 0 ? static_cast<std::size_t>(e.a) : 0;
    mark.kind =
        e.code < sim::kFaultKindCount ? static_cast<sim::FaultKind>(e.code) : sim::FaultKind::crash;
    mark.target = e.node;
    mark.peer = e.peer;
    mark.duration = Duration(e.b);
    mark.skipped = e.c != 0;
    mark.groups = std::string(e.text);
    tl.faults.push_back(mark);
    if (mark.skipped || e.code >= sim::kFaultKindCount) return;

    ActiveCut cut;
    cut.index = mark.index;
    cut.kind = mark.kind;
    cut.group_of.assign(endpoint_count(), -1);
    switch (mark.kind) {
      case sim::FaultKind::partition: {
        int group = 0;
        std::size_t start = 0;
        const std::string_view text = e.text;
        for (std::size_t i = 0; i <= text.size(); ++i) {
          if (i < text.size() && text[i] != ',' && text[i] != '|') continue;
          if (const auto endpoint = tl.header.topology.find(text.substr(start, i - start))) {
            if (const auto index = endpoint_index(*endpoint)) cut.group_of[*index] = group;
          }
          if (i < text.size() && text[i] == '|') ++group;
          start = i + 1;
        }
        break;
      }
      case sim::FaultKind::isolate:
        if (const auto index = endpoint_index(e.node)) cut.group_of[*index] = 0;
        break;
      case sim::FaultKind::cut:
        if (const auto from = endpoint_index(e.node)) cut.group_of[*from] = 0;
        if (const auto to = endpoint_index(e.peer)) cut.group_of[*to] = 1;
        break;
      case sim::FaultKind::heal:
        active.clear();
        update_partition(e.time);
        return;
      default:
        return;
    }
    active.push_back(std::move(cut));
    update_partition(e.time);
  }

  void on_network_change(const sim::Event& e) {
    if (e.code != static_cast<std::uint16_t>(sim::FaultKind::heal) || e.a < 0) return;
    const auto index = static_cast<std::size_t>(e.a);
    const auto it = std::find_if(active.begin(), active.end(),
                                 [&](const ActiveCut& c) { return c.index == index; });
    if (it == active.end()) return;  // already healed by a heal fault
    active.erase(it);
    update_partition(e.time);
  }

  // Each side's endpoints: nodes, the store's members in order, the servers with rows, then the
  // sink.
  std::string side_label(const std::vector<int>& side_of, std::size_t sides) const {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i <= n && i < side_of.size(); ++i) order.push_back(i);
    for (std::size_t i = n + 2; i < side_of.size(); ++i) order.push_back(i);
    if (n + 1 < side_of.size()) order.push_back(n + 1);
    PartitionSpan layout;
    layout.nodes = n;
    layout.servers = indexed_servers();
    std::string label;
    for (std::size_t s = 0; s < sides; ++s) {
      std::vector<sim::Endpoint> members;
      for (const std::size_t i : order) {
        if (side_of[i] == static_cast<int>(s)) members.push_back(layout.endpoint_at(i));
      }
      if (s > 0) label += " | ";
      label += members_text(members, tl.header.topology);
    }
    return label;
  }

  // The network's shape from the faults in force. One partition keeps its own group order; any
  // combination splits the endpoints into classes that share the same group under every fault.
  void update_partition(Time t) {
    PartitionSpan next;
    next.start = t;
    next.end = t;
    next.side_of.assign(endpoint_count(), -1);
    next.nodes = n;
    next.servers = indexed_servers();
    if (active.size() == 1 && active.front().kind == sim::FaultKind::partition) {
      next.side_of = active.front().group_of;
      int sides = 0;
      for (int g : next.side_of) sides = std::max(sides, g + 1);
      next.side_count = static_cast<std::size_t>(sides);
    } else if (!active.empty()) {
      std::map<std::vector<int>, int> class_of;
      std::vector<int> signature(active.size());
      for (std::size_t i = 0; i < endpoint_count(); ++i) {
        bool touched = false;
        for (std::size_t k = 0; k < active.size(); ++k) {
          signature[k] = active[k].group_of[i];
          touched = touched || signature[k] >= 0;
        }
        if (!touched) continue;
        const auto [it, inserted] = class_of.emplace(signature, static_cast<int>(next.side_count));
        if (inserted) ++next.side_count;
        next.side_of[i] = it->second;
      }
    }
    for (const ActiveCut& c : active) next.causes.push_back(c.index);
    std::sort(next.causes.begin(), next.causes.end());
    if (active.size() == 1 && active.front().kind == sim::FaultKind::isolate) {
      const bool any = std::find(next.side_of.begin(), next.side_of.end(), 0) != next.side_of.end();
      next.label = any ? side_label(next.side_of, 1) + " isolated" : "isolated";
    } else if (active.size() == 1 && active.front().kind == sim::FaultKind::cut) {
      std::vector<int> from(next.side_of.size(), -1);
      std::vector<int> to(next.side_of.size(), -1);
      for (std::size_t i = 0; i < next.side_of.size(); ++i) {
        if (next.side_of[i] == 0) from[i] = 0;
        if (next.side_of[i] == 1) to[i] = 0;
      }
      next.label = side_label(from, 1) + " cannot reach " + side_label(to, 1);
    } else {
      next.label = side_label(next.side_of, next.side_count);
    }

    if (open_partition) {
      PartitionSpan& current = tl.partitions[*open_partition];
      if (!active.empty() && current.side_of == next.side_of) {
        current.causes = std::move(next.causes);
        return;
      }
      if (current.start == t) {
        tl.partitions.pop_back();  // the open span is always the last one
      } else {
        current.end = t;
      }
      open_partition.reset();
    }
    if (active.empty() || next.side_count == 0) return;
    open_partition = tl.partitions.size();
    tl.partitions.push_back(std::move(next));
  }

  // ---- Store and sink

  void close_hold(Time t, HoldEnd how) {
    if (!open_hold) return;
    LeaseHold& hold = tl.leader_key[*open_hold];
    hold.end = t;
    hold.ended_by = how;
    open_hold.reset();
  }

  void on_store_change(const sim::Event& e) {
    if (!tl.header.leader_key || e.text != *tl.header.leader_key) return;
    if (e.code == 0) {
      if (open_hold) {
        LeaseHold& hold = tl.leader_key[*open_hold];
        if (hold.holder == e.node && hold.lease == e.b) {
          hold.renewals.push_back(e.time);  // the holder rewrote its own record
          return;
        }
      }
      close_hold(e.time, HoldEnd::replaced);
      LeaseHold hold;
      hold.holder = is_node(e.node) ? e.node : sim::kNoNode;
      hold.lease = e.b;
      hold.revision = e.a;
      hold.start = e.time;
      hold.end = e.time;
      open_hold = tl.leader_key.size();
      tl.leader_key.push_back(std::move(hold));
    } else {
      close_hold(e.time, e.c != 0 ? HoldEnd::expired : HoldEnd::deleted);
    }
  }

  void on_store_apply(const sim::Event& e) {
    if (e.code != static_cast<std::uint16_t>(sim::StoreOp::lease_keepalive) || e.b == 0) return;
    if (!open_hold) return;
    LeaseHold& hold = tl.leader_key[*open_hold];
    if (hold.lease != sim::kNoLease && hold.lease == e.c) hold.renewals.push_back(e.time);
  }

  void on_sink_write(const sim::Event& e) {
    SinkWriteMark mark;
    mark.at = e.time;
    mark.writer = e.node;
    mark.token = e.a;
    mark.accepted = e.c != 0;
    mark.stale = newest_epoch && e.a < *newest_epoch;
    mark.overwrite = mark.accepted && e.a < e.d;
    tl.writes.push_back(mark);
  }

  // ---- Clocks

  void on_clock_change(const sim::Event& e) {
    std::size_t track = 0;
    if (e.node == sim::kStoreEndpoint) {
      track = n;
    } else if (is_node(e.node)) {
      track = at(e.node);
    } else {
      return;
    }
    ClockTrack& clock = clocks[track];
    clock.flush(e.time);
    // The kernel's own changes (sim/kernel.cpp, clock faults): code 0 drift, 1 step, 2 offset.
    switch (e.code) {
      case 0:
        if (e.a <= -kBillion) return;  // not a clock the kernel could have
        clock.model.set_drift_at(e.time, e.a);
        clock.drift_since = e.time;
        break;
      case 1:
        clock.model.add_step(e.time, Duration(e.b));
        break;
      case 2:
        clock.model.set_offset_at(e.time, Duration(e.b));
        break;
      default:
        return;
    }
    clock.add(e.time);
  }
};

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
      s.on_belief(e);
      break;
    case sim::EventKind::crash:
      if (const auto m = s.member_at(e.node)) {
        s.on_member_crash(*m, e);
      } else if (const auto row = s.server_row(e.node)) {
        s.on_server_crash(*row, e);
      } else {
        s.on_crash(e);
      }
      break;
    case sim::EventKind::restart:
      if (const auto m = s.member_at(e.node)) {
        s.on_member_restart(*m, e.time);
      } else if (const auto row = s.server_row(e.node)) {
        s.on_server_restart(*row, e.time);
      } else {
        s.on_restart(e);
      }
      break;
    case sim::EventKind::pause:
      if (const auto m = s.member_at(e.node)) {
        s.on_member_pause(*m, e.time);
      } else if (e.node == sim::kStoreEndpoint) {
        s.on_store_pause(e);
      } else if (const auto row = s.server_row(e.node)) {
        s.on_server_pause(*row, e);
      } else {
        s.on_pause(e);
      }
      break;
    case sim::EventKind::resume:
      if (const auto m = s.member_at(e.node)) {
        s.close_member_pause(*m, e.time);
      } else if (const auto row = s.server_row(e.node)) {
        s.close_server_pause(*row, e.time);
      } else if (s.is_node(e.node)) {
        s.close_pause(e.node, e.time);
      }
      break;
    case sim::EventKind::store_pause:
      // A replicated store's store_pause stalls its member 0, the process at the store's address.
      if (s.replicated) {
        s.on_member_pause(0, e.time);
      } else {
        s.on_store_pause(e);
      }
      break;
    case sim::EventKind::store_resume:
      if (s.replicated) {
        s.close_member_pause(0, e.time);
      } else {
        s.on_store_resume(e);
      }
      break;
    case sim::EventKind::server_role:
      s.on_server_role(e);
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

  for (std::size_t node = 0; node < s.n; ++node) {
    if (const auto& open = s.open_belief[node]) {
      tl.beliefs[*open].end = end;
      tl.beliefs[*open].open_at_end = true;
    }
    if (const auto& open = s.open_down[node]) {
      tl.downs[*open].end = end;
      tl.downs[*open].open_at_end = true;
    }
    if (const auto& open = s.open_pause[node]) {
      tl.pauses[*open].end = end;
      tl.pauses[*open].open_at_end = true;
    }
  }
  if (s.open_store_pause) {
    tl.store_pauses[*s.open_store_pause].end = end;
    tl.store_pauses[*s.open_store_pause].open_at_end = true;
  }
  for (std::size_t m = 0; m < sim::kMaxStoreMembers; ++m) {
    if (const auto& open = s.open_member_role[m]) {
      tl.member_roles[*open].end = end;
      tl.member_roles[*open].open_at_end = true;
    }
    if (const auto& open = s.open_member_down[m]) {
      tl.member_downs[*open].end = end;
      tl.member_downs[*open].open_at_end = true;
    }
    if (const auto& open = s.open_member_pause[m]) {
      tl.member_pauses[*open].end = end;
      tl.member_pauses[*open].open_at_end = true;
    }
  }
  for (std::size_t row = 0; row < tl.server_rows.size(); ++row) {
    if (const auto& open = s.open_server_down[row]) {
      tl.server_downs[*open].end = end;
      tl.server_downs[*open].open_at_end = true;
    }
    if (const auto& open = s.open_server_pause[row]) {
      tl.server_pauses[*open].end = end;
      tl.server_pauses[*open].open_at_end = true;
    }
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
