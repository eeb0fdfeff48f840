// The analyzer's view of the service (analysis/analyzer_state.hpp): the sink's writes (stale,
// equal-token, the first of each new leader), the store's leader key, fault windows, and the
// outages the service lived through whatever caused them.
#include "analysis/analyzer_state.hpp"

namespace electsim::analysis {

using namespace analyzer_detail;

// ---- Writes

void Analyzer::State::set_first_new_write(Failover& f, Time at) {
  f.first_new_write = at;
  if (f.last_old_write) f.write_outage = at - *f.last_old_write;
}

void Analyzer::State::on_sink_write(const sim::Event& e) {
  ++report.sink_writes;
  const bool accepted = e.c != 0;
  if (accepted) {
    ++report.writes_accepted;
  } else {
    ++report.writes_rejected;
  }
  if (!config.tokens_ordered) {
    on_write_by_grant(e, accepted);
  } else {
    if (accepted && e.a < e.d) {
      ++report.stale_writes_overwriting;
      if (!report.first_overwrite)
        report.first_overwrite = Report::Overwrite{e.time, e.node, e.a, e.d};
    }
    if (newest_epoch && e.a < *newest_epoch) record_stale(e, accepted, *newest_epoch);
  }
  on_accepted_write(e, accepted);
}

void Analyzer::State::record_stale(const sim::Event& e, bool accepted, Epoch newest) {
  std::uint64_t& kept = accepted ? stale_accepted_kept : stale_rejected_kept;
  ++(accepted ? report.stale_writes_accepted : report.stale_writes_rejected);
  if (kept < kFindingsKept) {
    ++kept;
    report.stale_writes.push_back({e.time, e.node, e.a, newest, accepted});
  }
}

void Analyzer::State::on_write_by_grant(const sim::Event& e, bool accepted) {
  if (report.intervals.empty()) return;
  const std::size_t newest = report.intervals.size() - 1;
  std::optional<std::size_t> grant;
  if (is_node(e.node) && static_cast<std::size_t>(e.node) < grant_of.size()) {
    grant = grant_of[static_cast<std::size_t>(e.node)];
  }
  if (!grant || *grant < newest) record_stale(e, accepted, report.intervals[newest].epoch);
  if (!accepted) return;
  if (top_accepted_grant && (!grant || *grant < *top_accepted_grant)) {
    ++report.stale_writes_overwriting;
    if (!report.first_overwrite) {
      report.first_overwrite =
          Report::Overwrite{e.time, e.node, e.a, report.intervals[*top_accepted_grant].epoch};
    }
  }
  if (grant && (!top_accepted_grant || *grant > *top_accepted_grant)) top_accepted_grant = grant;
}

void Analyzer::State::on_accepted_write(const sim::Event& e, bool accepted) {
  if (!accepted || !is_node(e.node)) return;
  if (report.last_heal_at && !report.heal_recovery && open_count == 1) {
    report.heal_recovery = e.time - *report.last_heal_at;
  }
  ensure_node(e.node);
  if (config.tokens_ordered) on_equal_token(e);
  if (last_write_any) {
    const Duration gap = e.time - *last_write_any;
    for (PendingFailover& p : pending) {
      if (!p.resolved && gap > p.max_gap) {
        p.max_gap = gap;
        p.gap_from = *last_write_any;
        p.gap_to = e.time;
      }
    }
  }
  settle_ridden_out(e.node, e.time);
  last_write_any = e.time;
  if (e.node == newest_open) on_legit_write(e.node, e.time);
  for (std::size_t i = 0; i < pending.size();) {
    PendingFailover& p = pending[i];
    Failover& f = report.failovers[p.index];
    if (p.resolved) {
      if (e.node == f.new_leader) {
        set_first_new_write(f, e.time);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
    } else if (e.node != f.old_leader) {
      const bool seen = std::any_of(p.first_writes.begin(), p.first_writes.end(),
                                    [&](const auto& w) { return w.first == e.node; });
      if (!seen) p.first_writes.emplace_back(e.node, e.time);
    }
    ++i;
  }
}

void Analyzer::State::on_store_change(const sim::Event& e) {
  if (!config.leader_key || e.code != 0 || !is_node(e.node)) return;
  if (e.text != *config.leader_key) return;
  resolve_failovers(e.node, e.time);
}

bool Analyzer::State::partition_takes_away(std::string_view text, NodeId leader) const {
  std::vector<std::vector<sim::Endpoint>> groups(1);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',' && text[i] != '|') continue;
    const std::string_view token = text.substr(start, i - start);
    if (!token.empty()) {
      if (const auto endpoint = endpoint_of(token)) groups.back().push_back(*endpoint);
    }
    if (i < text.size() && text[i] == '|') groups.emplace_back();
    start = i + 1;
  }
  std::optional<std::size_t> leader_group;
  std::optional<std::size_t> store_group;
  std::vector<bool> grouped(node_count, false);
  // A replicated store serves the side that holds a majority of its members.
  std::size_t members_grouped = 0;
  std::vector<std::size_t> members_in(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (sim::Endpoint e : groups[g]) {
      if (e == leader) leader_group = g;
      if (e == config.coordinator) store_group = g;
      if (e >= 0 && static_cast<std::size_t>(e) < node_count)
        grouped[static_cast<std::size_t>(e)] = true;
      if (config.topology.store_member_index(e) >= 0) {
        ++members_grouped;
        ++members_in[g];
      }
    }
  }
  if (!leader_group) return false;  // the leader keeps all its links
  std::size_t reachable = 0;
  for (std::size_t n = 0; n < node_count; ++n) {
    if (!grouped[n]) ++reachable;
  }
  for (sim::Endpoint e : groups[*leader_group]) {
    if (e >= 0 && static_cast<std::size_t>(e) < node_count) ++reachable;
  }
  if (2 * reachable <= node_count) return true;
  if (config.store_members > 1) {
    const std::size_t members = config.store_members;
    const std::size_t with_leader =
        members_in[*leader_group] + (members - std::min(members, members_grouped));
    return config.uses_store && 2 * with_leader <= members;
  }
  return config.uses_store && store_group && *store_group != *leader_group;
}

bool Analyzer::State::kept_interval(const Failover& f) const {
  return is_leader(f.old_leader) && interval_of(f.old_leader).epoch == f.old_epoch &&
         interval_of(f.old_leader).start <= f.fault_at;
}

void Analyzer::State::settle_ridden_out(std::optional<NodeId> writer, Time at) {
  for (std::size_t i = 0; i < pending.size();) {
    Failover& f = report.failovers[pending[i].index];
    const bool by_write = writer && *writer == f.old_leader && at > pending[i].effects_end;
    const bool same_interval = !pending[i].resolved && (!writer || by_write) && kept_interval(f);
    if (same_interval) {
      f.ridden_out = true;
      // What the sink saw: the longest gap between accepted writes since the fault, when it is
      // an outage (a leader frozen longer than two write intervals); zero when writes kept
      // being accepted (a partition the leader's side rode out).
      if (by_write) {
        const PendingFailover& p = pending[i];
        if (outage_gap && p.max_gap > *outage_gap) {
          f.last_old_write = p.gap_from;
          set_first_new_write(f, p.gap_to);
        } else if (outage_gap) {
          f.first_new_write = at;
          f.write_outage = Duration(0);
        } else {
          set_first_new_write(f, at);
        }
      }
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

// ---- Service outages

std::optional<sim::Endpoint> Analyzer::State::endpoint_of(std::string_view token) const {
  if (const auto server = config.topology.find(token); server && *server < 0) return server;
  sim::Endpoint value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc{} || ptr != token.data() + token.size() || value < 0) return std::nullopt;
  // A fleet's service numbers its own nodes from 0; another service's node is none of its own.
  if (shared_coordinator != nullptr) {
    value -= base;
    if (value < 0 || static_cast<std::size_t>(value) >= node_count) return std::nullopt;
  }
  return value;
}

bool Analyzer::State::names_coordinator(std::string_view groups) const {
  std::size_t start = 0;
  for (std::size_t i = 0; i <= groups.size(); ++i) {
    if (i < groups.size() && groups[i] != ',' && groups[i] != '|') continue;
    const auto endpoint = endpoint_of(groups.substr(start, i - start));
    if (endpoint && config.topology.is_coordinator(*endpoint)) return true;
    start = i + 1;
  }
  return false;
}

void Analyzer::State::record_window(const sim::Event& e, sim::FaultKind kind) {
  FaultWindow w;
  w.cause.fault_index = static_cast<std::size_t>(e.a);
  w.cause.fault = kind;
  w.cause.target = e.node;
  // Reports call the server at the store's address "store", as scenario files may (a
  // replicated store's member 0 there), and every other server by its topology name (a shard of
  // a sharded store by its own: "store-2").
  if (e.node < 0) {
    const sim::NamedEndpoint* server = config.topology.server(e.node);
    w.cause.target_name = e.node == config.topology.store_member(0) && server != nullptr &&
                                  server->group == sim::server_kind::store
                              ? "store"
                              : config.topology.name_of(e.node);
  }
  w.cause.at = e.time;
  w.until = e.time + Duration(e.b);
  const sim::FaultEffect effect = sim::fault_info(kind).effect;
  if (kind == sim::FaultKind::partition) w.cause.groups = std::string(e.text);
  w.cause.coordinator = config.topology.is_coordinator(e.node) ||
                        config.topology.is_coordinator(e.peer) ||
                        effect == sim::FaultEffect::server ||
                        (kind == sim::FaultKind::partition && names_coordinator(e.text));
  if (e.b == 0 && (kind == sim::FaultKind::crash || kind == sim::FaultKind::stop ||
                   kind == sim::FaultKind::partition || kind == sim::FaultKind::cut ||
                   kind == sim::FaultKind::isolate)) {
    w.open_ended = true;
  }
  if (kind == sim::FaultKind::heal) {
    for (FaultWindow& other : windows) {
      if (other.open_ended &&
          sim::fault_info(other.cause.fault).effect == sim::FaultEffect::links) {
        other.open_ended = false;
        other.until = e.time;
      }
    }
  }
  // A heal or a restart ends faults; it is no cause of its own.
  if (kind == sim::FaultKind::heal || kind == sim::FaultKind::restart) return;
  windows.push_back(std::move(w));
}

void Analyzer::State::on_restart_window(NodeId node, Time at) {
  for (FaultWindow& w : windows) {
    if (w.open_ended && w.cause.target == node &&
        sim::fault_info(w.cause.fault).effect != sim::FaultEffect::links) {
      w.open_ended = false;
      w.until = at;
    }
  }
}

void Analyzer::State::close_outage(Time end, std::optional<NodeId> writer_after) {
  const Time start = *last_legit_write;
  Outage o;
  o.start = start;
  o.duration = end - start;
  o.writer_before = last_legit_writer;
  if (writer_after) {
    o.end = end;
    o.writer_after = *writer_after;
  }
  for (const FaultWindow& w : windows) {
    if (w.cause.at > end) continue;
    const bool during = w.open_ended || w.until >= start;
    const bool before = w.cause.at >= recovered_since;
    if (!during && !before) continue;
    ++o.causes_total;
    if (o.causes.size() < kCausesKept) {
      o.causes.push_back(w.cause);
      o.causes.back().during = during;
    }
  }
  ++report.outages_total;
  report.outage_time += o.duration;
  if (!report.outage_max || o.duration > *report.outage_max) report.outage_max = o.duration;
  if (!writer_after) ++report.outages_unresolved;
  if (writer_after && *writer_after != o.writer_before) record_coordinator_failover(o);
  if (report.outages.size() < kFindingsKept) report.outages.push_back(std::move(o));
  // A fault whose effect ended before this outage did can be named by no later outage.
  std::erase_if(windows, [&](const FaultWindow& w) { return !w.open_ended && w.until < end; });
  recovered_since = end;
}

void Analyzer::State::record_coordinator_failover(const Outage& o) {
  const OutageCause* coordinator = nullptr;
  for (const OutageCause& c : o.causes) {
    if (sim::fault_info(c.fault).takes_leader_away && c.target == o.writer_before) return;
    if (c.fault == sim::FaultKind::partition && !c.coordinator) return;
    if (c.coordinator && coordinator == nullptr) coordinator = &c;
  }
  if (coordinator == nullptr) return;
  Failover f;
  f.fault_index = coordinator->fault_index;
  f.fault = coordinator->fault;
  f.fault_at = coordinator->at;
  f.old_leader = o.writer_before;
  f.new_leader = o.writer_after;
  f.coordinator_target = coordinator->target;
  f.coordinator_target_name = coordinator->target_name;
  if (is_leader(o.writer_after)) {
    const LeaderInterval& li = interval_of(o.writer_after);
    f.old_epoch = 0;
    f.new_leader_at = std::max(li.start, f.fault_at);
    f.failover = *f.new_leader_at - f.fault_at;
  }
  f.last_old_write = o.start;
  f.first_new_write = o.end;
  f.write_outage = o.duration;
  report.coordinator_failovers.push_back(f);
}

void Analyzer::State::on_legit_write(NodeId writer, Time at) {
  if (!outage_gap) return;
  if (!last_legit_write) {
    report.first_write_at = at;
    recovered_since = at;
  } else if (at - *last_legit_write > *outage_gap) {
    close_outage(at, writer);
  }
  last_legit_write = at;
  last_legit_writer = writer;
  report.last_write_at = at;
}

void Analyzer::State::on_equal_token(const sim::Event& e) {
  const sim::Token token = e.a;
  if (!top_token || token > *top_token) {
    top_token = token;
    top_writers.assign(1, e.node);
    top_last_writer = e.node;
    return;
  }
  if (token != *top_token) return;
  const bool wrote_before =
      std::find(top_writers.begin(), top_writers.end(), e.node) != top_writers.end();
  if (wrote_before && e.node != top_last_writer) {
    ++report.equal_token_writes;
    if (!report.first_equal_token_write) {
      report.first_equal_token_write =
          Report::EqualTokenWrite{e.time, e.node, top_last_writer, token};
    }
  }
  if (!wrote_before) top_writers.push_back(e.node);
  top_last_writer = e.node;
}

void Analyzer::State::on_fault(const sim::Event& e) {
  if (e.c != 0) return;  // skipped: the role target resolved to nobody
  const auto kind = static_cast<sim::FaultKind>(e.code);
  if (kind == sim::FaultKind::heal) {
    report.last_heal_at = e.time;
    report.heal_recovery.reset();
  }
  if (outage_gap) record_window(e, kind);
  const std::optional<NodeId> leader = current_leader();
  if (!leader) return;
  std::optional<NodeId> taken;
  if (takes_node_away(kind)) {
    // The target counts when it holds the newest epoch (a deposed leader is not the leader).
    if (is_leader(e.node) && interval_of(e.node).epoch == interval_of(*leader).epoch) {
      taken = e.node;
    }
  } else if (kind == sim::FaultKind::partition) {
    if (partition_takes_away(e.text, *leader)) taken = leader;
  } else if (kind == sim::FaultKind::cut) {
    if (config.uses_store && e.node == *leader && e.peer == config.coordinator) taken = leader;
  }
  if (!taken) return;
  Failover f;
  f.fault_index = static_cast<std::size_t>(e.a);
  f.fault = kind;
  f.fault_at = e.time;
  f.old_leader = *taken;
  f.old_epoch = interval_of(*taken).epoch;
  // The outage starts at the sink's last accepted write: the old leader's, or, when it had not
  // written yet in this leadership, its predecessor's (not a write of an earlier term of its
  // own).
  f.last_old_write = last_write_any;
  PendingFailover p;
  p.index = report.failovers.size();
  p.effects_end = e.time + Duration(e.b);
  pending.push_back(std::move(p));
  herd.push_back(report.failovers.size());
  report.failovers.push_back(f);
}

}  // namespace electsim::analysis
