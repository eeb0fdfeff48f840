// The analyzer's leadership (analysis/analyzer_state.hpp): leader intervals, split-brain and
// leaderless time, failovers from a fault to the next leader, and who heard the new leader.
#include "analysis/analyzer_state.hpp"

namespace electsim::analysis {

using namespace analyzer_detail;

void Analyzer::State::ensure_node(NodeId node) {
  const auto size = static_cast<std::size_t>(node) + 1;
  if (open.size() < size) open.resize(size);
  if (up.size() < size) up.resize(size, true);
}

bool Analyzer::State::is_leader(NodeId node) const {
  return is_node(node) && static_cast<std::size_t>(node) < open.size() &&
         open[static_cast<std::size_t>(node)].has_value();
}

const LeaderInterval& Analyzer::State::interval_of(NodeId node) const {
  return report.intervals[*open[static_cast<std::size_t>(node)]];
}

std::optional<NodeId> Analyzer::State::current_leader() const {
  std::optional<NodeId> best;
  for (std::size_t n = 0; n < open.size(); ++n) {
    if (!open[n]) continue;
    const Epoch e = report.intervals[*open[n]].epoch;
    if (!best || e > interval_of(*best).epoch) best = static_cast<NodeId>(n);
  }
  return best;
}

void Analyzer::State::advance(Time t) {
  if (t <= accounted) return;
  const Duration d = t - accounted;
  if (open_count >= 2) {
    if (!in_split) {
      in_split = true;
      ++report.split_brain_episodes;
      if (!report.first_split_brain) record_first_split_brain();
    }
    report.split_brain_time += d;
  } else {
    in_split = false;
  }
  if (open_count == 0) report.leaderless_time += d;
  if (steady()) report.steady_time += d;
  if (shared_coordinator != nullptr) {
    if (open_count == 0 && config.uses_store) {
      report.stall_time += shared_coordinator->unavailable_until(t) -
                           shared_coordinator->unavailable_until(accounted);
    }
  } else {
    if (open_count == 0 && config.uses_store && !coordinator.can_grant()) report.stall_time += d;
    coordinator.account(d);
  }
  accounted = t;
}

bool Analyzer::State::steady() const {
  if (open_count != 1) return false;
  return std::none_of(pending.begin(), pending.end(),
                      [](const PendingFailover& p) { return !p.resolved; });
}

void Analyzer::State::on_coordinator_request(Time t) {
  if (steady()) ++report.steady_requests;
  if (!report.first_leader_at) ++report.requests_before_first_leader;
  const Time window_start = t - std::chrono::seconds(1);
  recent.drop_through(window_start);
  recent.push(t);
  for (std::size_t i = 0; i < herd.size();) {
    Failover& f = report.failovers[herd[i]];
    const std::optional<Time> led = f.new_leader_at ? f.new_leader_at : f.regained_at;
    if (f.ridden_out || (led && t > *led + std::chrono::seconds(1))) {
      herd.erase(herd.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    // Requests in (t - 1s, t] sent at or after the fault: the ring is in time order.
    std::size_t lo = 0;
    std::size_t hi = recent.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      const Time at = recent.at(mid);
      if (at < f.fault_at || at <= window_start) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    f.requests_peak = std::max<std::uint64_t>(f.requests_peak, recent.size() - lo);
    ++i;
  }
}

void Analyzer::State::record_first_split_brain() {
  SplitBrainOccurrence occurrence;
  occurrence.at = accounted;
  for (std::size_t n = 0; n < open.size(); ++n) {
    if (!open[n]) continue;
    occurrence.nodes.push_back(static_cast<NodeId>(n));
    occurrence.epochs.push_back(report.intervals[*open[n]].epoch);
  }
  report.first_split_brain = std::move(occurrence);
}

void Analyzer::State::close_interval(NodeId node, Time at) {
  if (!is_leader(node)) return;
  auto& slot = open[static_cast<std::size_t>(node)];
  report.intervals[*slot].end = at;
  slot.reset();
  --open_count;
  if (node == newest_open) find_newest_open();
}

void Analyzer::State::find_newest_open() {
  newest_open = sim::kNoNode;
  std::optional<std::size_t> best;
  for (std::size_t n = 0; n < open.size(); ++n) {
    if (open[n] && (!best || *open[n] > *best)) {
      best = open[n];
      newest_open = static_cast<NodeId>(n);
    }
  }
}

void Analyzer::State::open_interval(NodeId node, Epoch epoch, Time at) {
  ensure_node(node);
  LeaderInterval interval;
  interval.node = node;
  interval.epoch = epoch;
  interval.start = at;
  interval.end = at;
  open[static_cast<std::size_t>(node)] = report.intervals.size();
  if (grant_of.size() <= static_cast<std::size_t>(node)) {
    grant_of.resize(static_cast<std::size_t>(node) + 1);
  }
  grant_of[static_cast<std::size_t>(node)] = report.intervals.size();
  report.intervals.push_back(interval);
  ++open_count;
  newest_open = node;
  if (!report.first_leader_at) report.first_leader_at = at;
  if (!newest_epoch || epoch > *newest_epoch) newest_epoch = epoch;

  std::vector<NodeId>& leaders = leaders_by_epoch[epoch];
  if (std::find(leaders.begin(), leaders.end(), node) == leaders.end()) {
    ++report.elections;
    for (NodeId other : leaders) {
      ++report.same_epoch_leaders_total;
      if (report.same_epoch_leaders.size() < kFindingsKept) {
        report.same_epoch_leaders.push_back({at, epoch, other, node});
      }
    }
    leaders.push_back(node);
  }
}

void Analyzer::State::on_belief(const sim::Event& e) {
  if (!is_node(e.node)) return;
  if (e.code < 8) report.roles_seen |= static_cast<std::uint8_t>(1u << e.code);
  const bool leader = e.code == static_cast<std::uint16_t>(sim::Role::leader);
  if (!leader) {
    close_interval(e.node, e.time);
    return;
  }
  if (is_leader(e.node) && interval_of(e.node).epoch == e.a) return;  // nothing changed
  close_interval(e.node, e.time);
  open_interval(e.node, e.a, e.time);
  settle_regained(e.node, e.a, e.time);
  if (!config.leader_key) resolve_failovers(e.node, e.time);
}

void Analyzer::State::settle_regained(NodeId node, Epoch epoch, Time at) {
  for (std::size_t i = 0; i < pending.size();) {
    Failover& f = report.failovers[pending[i].index];
    if (!pending[i].resolved && f.old_leader == node && f.old_epoch != epoch) {
      f.regained_at = at;
      f.regained_epoch = epoch;
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Analyzer::State::resolve_failovers(NodeId new_leader, Time at) {
  for (std::size_t i = 0; i < pending.size();) {
    PendingFailover& p = pending[i];
    Failover& f = report.failovers[p.index];
    if (p.resolved || f.old_leader == new_leader) {
      ++i;
      continue;
    }
    f.new_leader_at = at;
    f.new_leader = new_leader;
    f.failover = at - f.fault_at;
    p.resolved = true;
    wait_for_heard(p.index, new_leader, at);
    for (const auto& [writer, first] : p.first_writes) {
      if (writer == new_leader) set_first_new_write(f, first);
    }
    p.first_writes = {};
    if (f.first_new_write) {
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Analyzer::State::wait_for_heard(std::size_t index, NodeId leader, Time at) {
  if (!is_leader(leader)) return;
  PendingHeard h;
  h.index = index;
  h.leader = leader;
  h.epoch = interval_of(leader).epoch;
  h.since = at;
  h.waiting.assign(up.size(), false);
  for (std::size_t n = 0; n < up.size(); ++n) {
    if (up[n] && static_cast<NodeId>(n) != leader) {
      h.waiting[n] = true;
      ++h.left;
    }
  }
  heard.push_back(std::move(h));
  settle_heard(at);
}

void Analyzer::State::settle_heard(Time at) {
  for (std::size_t i = 0; i < heard.size();) {
    PendingHeard& h = heard[i];
    const bool leads = is_leader(h.leader) && interval_of(h.leader).epoch == h.epoch;
    if (leads && h.left == 0) {
      Failover& f = report.failovers[h.index];
      f.heard_at = at;
      f.failover_heard = at - f.fault_at;
    }
    if (h.left == 0 || !leads) {
      heard.erase(heard.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Analyzer::State::on_deliver(const sim::Event& e) {
  if (heard.empty() || !is_node(e.node)) return;
  if (e.code < election_type.size() && election_type[e.code]) return;
  bool changed = false;
  for (PendingHeard& h : heard) {
    const auto to = static_cast<std::size_t>(e.node);
    if (e.peer != h.leader || to >= h.waiting.size() || !h.waiting[to]) continue;
    h.waiting[to] = false;
    --h.left;
    changed = true;
  }
  if (changed) settle_heard(e.time);
}

void Analyzer::State::on_up_change(NodeId node, bool is_up, Time at) {
  if (!is_node(node)) return;
  ensure_node(node);
  up[static_cast<std::size_t>(node)] = is_up;
  if (is_up || heard.empty()) return;
  for (PendingHeard& h : heard) {
    const auto n = static_cast<std::size_t>(node);
    if (n < h.waiting.size() && h.waiting[n]) {
      h.waiting[n] = false;
      --h.left;
    }
  }
  settle_heard(at);
}

}  // namespace electsim::analysis
