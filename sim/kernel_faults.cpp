// The kernel's faults (sim/kernel.hpp): resolving a fault's target when it fires, applying it, and
// ending what lasts. Which process a fault reaches is the loader's and the catalogue's to say; here
// each kind has its one effect.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel_impl.hpp"

namespace electsim::sim {

// ---- Faults
// --------------------------------------------------------------------------------------

std::optional<NodeId> Kernel::resolve_target(const Target& target) {
  // Role targets pick among the election nodes first to end - 1: every node, or one service's.
  // The leader with the newest epoch (ties: the lowest id).
  const auto newest_leader = [&](std::size_t first, std::size_t end) -> std::optional<NodeId> {
    std::optional<NodeId> best;
    for (std::size_t i = first; i < end; ++i) {
      const Proc& node = *procs_[i];
      if (!node.up || node.belief.role != Role::leader || !node.has_belief) continue;
      if (!best || node.belief.epoch > procs_[static_cast<std::size_t>(*best)]->belief.epoch) {
        best = node.id;
      }
    }
    return best;
  };
  // Any live node, drawn from the faults' stream; with `followers`, only one that does not lead.
  const auto any_node = [&](std::size_t first, std::size_t end,
                            bool followers) -> std::optional<NodeId> {
    std::vector<NodeId> candidates;
    for (std::size_t i = first; i < end; ++i) {
      const Proc& node = *procs_[i];
      if (!node.up) continue;
      if (followers && node.has_belief && node.belief.role == Role::leader) continue;
      candidates.push_back(node.id);
    }
    if (candidates.empty()) return std::nullopt;
    return candidates[faults_rng_.below(candidates.size())];
  };
  // A fleet's service: its group, one run of ids.
  const auto service = [&] {
    const auto k = static_cast<std::size_t>(target.node);
    ELECTSIM_ASSERT(k < group_bases_.size(), "a service of the world");
    const std::size_t end = k + 1 < group_bases_.size()
                                ? static_cast<std::size_t>(group_bases_[k + 1])
                                : config_.node_count;
    return std::pair{static_cast<std::size_t>(group_bases_[k]), end};
  };
  switch (target.kind) {
    case TargetKind::none:
    case TargetKind::store:
      return std::nullopt;
    case TargetKind::node:
      return target.node;
    case TargetKind::leader:
      return newest_leader(0, config_.node_count);
    case TargetKind::follower:
    case TargetKind::random:
      return any_node(0, config_.node_count, target.kind == TargetKind::follower);
    case TargetKind::service_leader: {
      const auto [first, end] = service();
      return newest_leader(first, end);
    }
    case TargetKind::service_follower: {
      const auto [first, end] = service();
      return any_node(first, end, true);
    }
    case TargetKind::group_leader: {
      // The group's member that leads with the newest term; ties go to the first listed.
      const Proc* best = nullptr;
      for (const auto& q : procs_) {
        if (q->id >= 0 || q->group != target.group || !q->up || !q->has_belief ||
            q->belief.role != Role::leader) {
          continue;
        }
        if (best == nullptr || q->belief.epoch > best->belief.epoch) best = q.get();
      }
      if (best == nullptr) return std::nullopt;
      return best->id;
    }
    case TargetKind::group_follower: {
      std::vector<Endpoint> candidates;
      for (const auto& q : procs_) {
        if (q->id >= 0 || q->group != target.group || !q->up) continue;
        if (q->has_belief && q->belief.role == Role::leader) continue;
        candidates.push_back(q->id);
      }
      if (candidates.empty()) return std::nullopt;
      return candidates[faults_rng_.below(candidates.size())];
    }
  }
  return std::nullopt;
}

namespace {
void append_endpoint(std::string& out, Endpoint e, const std::vector<ServerSpec>& servers) {
  if (e < 0) {
    for (const ServerSpec& server : servers) {
      if (server.endpoint == e) {
        out += server.name;
        return;
      }
    }
  }
  out += std::to_string(e);
}

// Kinds that act on a node and are skipped when their target cannot be resolved (clock faults
// may also name the store's clock, checked apart).
bool needs_node(FaultKind kind) {
  const FaultKindInfo& info = fault_info(kind);
  return info.target == FaultNeed::required && !info.store_target;
}
}  // namespace

// Replaces role members of partition groups by the nodes they stand for now: the leader first,
// then followers (never the leader, never a node already named), then the rest.
std::optional<std::vector<std::vector<Endpoint>>> Kernel::resolve_groups(
    const std::vector<std::vector<Endpoint>>& groups) {
  std::vector<std::vector<Endpoint>> out(groups.size());
  std::vector<bool> named(config_.node_count, false);
  for (const auto& group : groups) {
    for (Endpoint e : group) {
      if (e >= 0) named[static_cast<std::size_t>(e)] = true;
    }
  }
  const std::optional<NodeId> leader = resolve_target({TargetKind::leader, kNoNode, {}});
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Endpoint e : groups[g]) {
      if (e != kLeaderMember) continue;
      if (!leader || named[static_cast<std::size_t>(*leader)]) return std::nullopt;
      named[static_cast<std::size_t>(*leader)] = true;
      out[g].push_back(*leader);
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Endpoint e : groups[g]) {
      if (e == kLeaderMember || e == kRestMember) continue;
      if (e != kFollowerMember) {
        out[g].push_back(e);
        continue;
      }
      std::vector<NodeId> candidates;
      for (NodeId n : all_nodes_) {
        if (!named[static_cast<std::size_t>(n)] && procs_[static_cast<std::size_t>(n)]->up) {
          candidates.push_back(n);
        }
      }
      if (candidates.empty()) return std::nullopt;
      const NodeId pick = candidates[faults_rng_.below(candidates.size())];
      named[static_cast<std::size_t>(pick)] = true;
      out[g].push_back(pick);
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Endpoint e : groups[g]) {
      if (e != kRestMember) continue;
      for (NodeId n : all_nodes_) {
        if (!named[static_cast<std::size_t>(n)]) out[g].push_back(n);
      }
      std::fill(named.begin(), named.end(), true);
    }
  }
  for (auto& group : out)
    std::stable_sort(group.begin(), group.end(), [](Endpoint a, Endpoint b) {
      // Nodes in id order, then the store and the sink.
      const auto rank = [](Endpoint x) {
        return x >= 0 ? static_cast<std::int64_t>(x) : 1000000 - x;
      };
      return rank(a) < rank(b);
    });
  return out;
}

void Kernel::apply_fault(std::size_t index) {
  const FaultSpec& f = faults_[index];
  std::optional<std::vector<std::vector<Endpoint>>> groups;
  if (f.kind == FaultKind::partition) groups = resolve_groups(f.groups);
  const std::optional<NodeId> target = resolve_target(f.target);
  const bool is_clock = fault_info(f.kind).effect == FaultEffect::clock;
  const bool skipped = (needs_node(f.kind) && !target) ||
                       (is_clock && !target && f.target.kind != TargetKind::store) ||
                       (f.kind == FaultKind::partition && !groups);
  fault_state_[index].target = target;
  if (!observers_.empty()) {
    text_scratch_.clear();
    if (f.kind == FaultKind::partition && groups) {
      for (std::size_t g = 0; g < groups->size(); ++g) {
        if (g > 0) text_scratch_ += '|';
        for (std::size_t i = 0; i < (*groups)[g].size(); ++i) {
          if (i > 0) text_scratch_ += ',';
          append_endpoint(text_scratch_, (*groups)[g][i], config_.servers);
        }
      }
    }
    emit_now(events::fault(f.kind, target.value_or(f.kind == FaultKind::cut ? f.from : kNoNode),
                           f.kind == FaultKind::cut ? f.to : kNoNode, index, f.duration, skipped,
                           text_scratch_));
  }
  if (skipped) return;

  auto schedule_end = [&] {
    if (f.duration.count() <= 0) return;
    const std::uint32_t slot = new_entry(EntryKind::fault_end, kNoNode);
    entries_[slot].payload = index;
    push(now_ + f.duration, slot);
  };
  auto emit_network_change = [&] {
    if (traced()) emit_now(events::network_change(f.kind, index));
  };
  switch (f.kind) {
    case FaultKind::crash:
      crash_process(proc(*target), false);
      schedule_end();
      break;
    case FaultKind::restart:
      restart_process(proc(*target));
      break;
    case FaultKind::pause:
      pause_process(proc(*target), f.duration, false);
      break;
    case FaultKind::partition:
      fault_state_[index].cut = network_.partition(*groups);
      emit_network_change();
      schedule_end();
      break;
    case FaultKind::cut:
      fault_state_[index].cut = network_.cut(f.from, f.to);
      emit_network_change();
      schedule_end();
      break;
    case FaultKind::isolate:
      fault_state_[index].cut = network_.isolate(*target);
      emit_network_change();
      schedule_end();
      break;
    case FaultKind::heal:
      network_.heal_all();
      emit_network_change();
      break;
    case FaultKind::loss:
      network_.add_loss(f.probability);
      schedule_end();
      break;
    case FaultKind::duplicate:
      network_.add_duplicate(f.probability);
      schedule_end();
      break;
    case FaultKind::latency_spike:
      fault_state_[index].spike = network_.add_spike(f.extra_latency);
      schedule_end();
      break;
    case FaultKind::clock_offset:
    case FaultKind::clock_drift:
    case FaultKind::clock_step: {
      Proc& p = proc(f.target.kind == TargetKind::store ? the_store() : *target);
      ClockModel& clock = p.clock;
      events::ClockWhat what = events::ClockWhat::drift;
      if (f.kind == FaultKind::clock_drift) {
        clock.set_drift_at(now_, f.drift_ppb);
      } else if (f.kind == FaultKind::clock_step) {
        clock.add_step(now_, f.clock_amount);
        what = events::ClockWhat::step;
      } else {
        clock.set_offset_at(now_, f.clock_amount);
        what = events::ClockWhat::offset;
      }
      if (traced()) emit_now(events::clock_change(p.id, what, f.drift_ppb, f.clock_amount));
      // A process that judges deadlines on its reading looks again now that the reading moved.
      if (p.up) {
        begin_handler(p);
        p.process->on_clock_change(p.ctx);
        end_handler(p);
      }
      break;
    }
    case FaultKind::disk_stall: {
      Proc& p = proc(*target);
      p.disk_free_at = std::max(p.disk_free_at, now_ + f.duration);  // both below kDiskNever
      break;
    }
    case FaultKind::store_pause:
      // The world's store, or the shard of a sharded store that the fault names.
      pause_process(proc(target && *target < 0 ? *target : the_store()), f.duration, true);
      break;
    case FaultKind::step_down:
    case FaultKind::stop:
    case FaultKind::campaign: {
      const std::uint32_t slot = new_entry(EntryKind::command, *target);
      const Command command = f.kind == FaultKind::stop       ? Command::stop
                              : f.kind == FaultKind::campaign ? Command::campaign
                                                              : Command::step_down;
      entries_[slot].payload = static_cast<std::uint64_t>(command);
      push(now_, slot);
      break;
    }
    case FaultKind::operator_clear: {
      // A person's order to the server that keeps the leadership record: carried out when the
      // server runs (a paused server does it at resume, a crashed one never).
      const Endpoint server = f.target.kind == TargetKind::store ? the_store() : *target;
      const std::uint32_t slot = new_entry(EntryKind::command, server);
      entries_[slot].payload = static_cast<std::uint64_t>(Command::operator_clear);
      push(now_, slot);
      break;
    }
  }
}

void Kernel::end_fault(std::size_t index) {
  const FaultSpec& f = faults_[index];
  switch (f.kind) {
    case FaultKind::crash:
      if (fault_state_[index].target) restart_process(proc(*fault_state_[index].target));
      break;
    case FaultKind::partition:
    case FaultKind::cut:
    case FaultKind::isolate:
      network_.heal_one(fault_state_[index].cut);
      if (traced()) emit_now(events::network_change(FaultKind::heal, index));
      break;
    case FaultKind::loss:
      network_.remove_loss(f.probability);
      break;
    case FaultKind::duplicate:
      network_.remove_duplicate(f.probability);
      break;
    case FaultKind::latency_spike:
      network_.remove_spike(fault_state_[index].spike);
      break;
    default:
      break;
  }
}

}  // namespace electsim::sim
