// The timeline recorder's world (drawing/timeline_state.hpp): faults and the network's shape
// (partition sides), the store's leader key and the sink's decisions.
#include "drawing/timeline_state.hpp"

namespace electsim::drawing {

// ---- Faults and the network's shape

void TimelineRecorder::State::on_fault(const sim::Event& e) {
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

void TimelineRecorder::State::on_network_change(const sim::Event& e) {
  if (e.code != static_cast<std::uint16_t>(sim::FaultKind::heal) || e.a < 0) return;
  const auto index = static_cast<std::size_t>(e.a);
  const auto it = std::find_if(active.begin(), active.end(),
                               [&](const ActiveCut& c) { return c.index == index; });
  if (it == active.end()) return;  // already healed by a heal fault
  active.erase(it);
  update_partition(e.time);
}

std::string TimelineRecorder::State::side_label(const std::vector<int>& side_of,
                                                std::size_t sides) const {
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

void TimelineRecorder::State::update_partition(Time t) {
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

void TimelineRecorder::State::close_hold(Time t, HoldEnd how) {
  if (!open_hold) return;
  LeaseHold& hold = tl.leader_key[*open_hold];
  hold.end = t;
  hold.ended_by = how;
  open_hold.reset();
}

void TimelineRecorder::State::on_store_change(const sim::Event& e) {
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

void TimelineRecorder::State::on_store_apply(const sim::Event& e) {
  if (e.code != static_cast<std::uint16_t>(sim::StoreOp::lease_keepalive) || e.b == 0) return;
  if (!open_hold) return;
  LeaseHold& hold = tl.leader_key[*open_hold];
  if (hold.lease != sim::kNoLease && hold.lease == e.c) hold.renewals.push_back(e.time);
}

void TimelineRecorder::State::on_sink_write(const sim::Event& e) {
  SinkWriteMark mark;
  mark.at = e.time;
  mark.writer = e.node;
  mark.token = e.a;
  mark.accepted = e.c != 0;
  const std::optional<Epoch> newest = spans.newest_epoch();
  mark.stale = newest && e.a < *newest;
  mark.overwrite = mark.accepted && e.a < e.d;
  tl.writes.push_back(mark);
}

}  // namespace electsim::drawing
