// The online analyzer: leader intervals, split-brain, same-epoch leaders, stale writes, failover,
// write outage, leaderless time and cost, computed in one pass over the event stream. Meanings
// follow DESIGN.md ("Observables and their meaning") and docs/metrics.md. Memory grows with leader
// intervals, elections and faults, never with messages or writes; finding lists are capped.
#include "analysis/analyzer.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <utility>

#include "analysis/coordinator.hpp"
#include "sim/assert.hpp"
#include "sim/protocol.hpp"

namespace electsim::analysis {

namespace {

constexpr std::size_t kFindingsKept = 100;  // per kind of finding; every one is still counted

bool takes_node_away(sim::FaultKind kind) {
  return sim::fault_info(kind).takes_leader_away;
}

}  // namespace

struct Analyzer::State {
  // A failover not yet finished: waiting for another leader, then for its first accepted write.
  struct PendingFailover {
    std::size_t index = 0;  // into report.failovers
    bool resolved = false;  // another node leads; waiting for its first accepted write
    // First accepted write after the fault of each node other than the old leader, so the new
    // leader's write counts even when it reached the sink before the takeover was observed.
    std::vector<std::pair<NodeId, Time>> first_writes;
    // When the fault's own effect ends (a pause's or a partition's duration): an accepted write by
    // the old leader, in the same interval, after this shows that it rode the fault out.
    Time effects_end;
    // The longest gap between accepted writes since the fault (from the last write before it):
    // the write outage of a fault ridden out is what the sink saw.
    Duration max_gap{0};
    Time gap_from;
    Time gap_to;
  };

  // A fault's effect window, kept while it can still be named as an outage's cause.
  struct FaultWindow {
    OutageCause cause;
    Time until;               // when its effect ended (its own time for an instant fault)
    bool open_ended = false;  // a crash or link fault without a duration: until restart or heal
  };

  // A resolved failover waiting for every other live node to hear from its new leader.
  struct PendingHeard {
    std::size_t index = 0;  // into report.failovers
    NodeId leader = sim::kNoNode;
    Epoch epoch = 0;
    Time since;
    std::vector<bool> waiting;  // by node
    std::size_t left = 0;
  };

  AnalysisConfig config;
  Report report;
  std::size_t node_count = 0;
  CoordinatorWatch coordinator;

  // Leadership.
  std::vector<std::optional<std::size_t>> open;  // per node: its open interval in report.intervals
  std::size_t open_count = 0;
  Time accounted;         // split-brain and leaderless time are summed up to here
  bool in_split = false;  // inside a split-brain episode of non-zero length
  std::map<Epoch, std::vector<NodeId>> leaders_by_epoch;  // who announced leader in each epoch
  std::optional<Epoch> newest_epoch;                      // highest leader epoch announced so far

  // Writes.
  std::uint64_t stale_accepted_kept = 0;
  std::uint64_t stale_rejected_kept = 0;
  std::optional<Time> last_write_any;  // the sink's last accepted write
  std::vector<PendingFailover> pending;

  // Service outages.
  std::optional<Duration> outage_gap;  // two write intervals; none: outages are not measured
  std::optional<Time> last_legit_write;
  NodeId last_legit_writer = sim::kNoNode;
  Time recovered_since;              // the end of the last outage, or the first write
  std::vector<FaultWindow> windows;  // faults that may still be named as an outage's cause
  // The open interval that began last: the newest grant of leadership (kNoNode: none open).
  NodeId newest_open = sim::kNoNode;

  // Without ordered tokens: each node's latest grant (its latest interval's index, the order in
  // which leadership was granted) and the latest grant of an accepted write.
  std::vector<std::optional<std::size_t>> grant_of;
  std::optional<std::size_t> top_accepted_grant;

  // Equal-token writes: the newest accepted token, every node that wrote with it, and its last
  // writer.
  std::optional<sim::Token> top_token;
  std::vector<NodeId> top_writers;
  NodeId top_last_writer = sim::kNoNode;

  // Heard endpoint.
  std::vector<bool> up;             // by node: not crashed
  std::vector<bool> election_type;  // by sim::MessageType: an election message
  std::vector<PendingHeard> heard;

  // Cost.
  std::vector<std::uint64_t> sent_by_type;  // by sim::MessageType
  // Send times of the coordinator requests of the last second, oldest first, in a ring that
  // grows to the busiest second's count and is then reused.
  std::vector<Time> recent;
  std::size_t recent_head = 0;
  std::size_t recent_size = 0;
  std::vector<std::size_t> herd;  // failovers whose requests_peak is still being measured

  Time last_event;
  std::optional<Time> run_end;
  bool finished = false;

  void ensure_node(NodeId node) {
    const auto size = static_cast<std::size_t>(node) + 1;
    if (open.size() < size) open.resize(size);
    if (up.size() < size) up.resize(size, true);
  }
  bool is_node(NodeId node) const { return node >= 0; }
  bool is_leader(NodeId node) const {
    return is_node(node) && static_cast<std::size_t>(node) < open.size() &&
           open[static_cast<std::size_t>(node)].has_value();
  }
  const LeaderInterval& interval_of(NodeId node) const {
    return report.intervals[*open[static_cast<std::size_t>(node)]];
  }

  // The leader with the highest epoch among the open intervals (ties: the lowest node id).
  std::optional<NodeId> current_leader() const {
    std::optional<NodeId> best;
    for (std::size_t n = 0; n < open.size(); ++n) {
      if (!open[n]) continue;
      const Epoch e = report.intervals[*open[n]].epoch;
      if (!best || e > interval_of(*best).epoch) best = static_cast<NodeId>(n);
    }
    return best;
  }

  // Sums the time since the last event into split-brain and leaderless time. Called before each
  // event is applied, so a state that lasts zero time (two changes at one instant) counts nothing.
  void advance(Time t) {
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
    if (open_count == 0 && config.uses_store && !coordinator.can_grant()) report.stall_time += d;
    coordinator.account(d);
    accounted = t;
  }

  // Exactly one leader and no failover waiting for a new one.
  bool steady() const {
    if (open_count != 1) return false;
    return std::none_of(pending.begin(), pending.end(),
                        [](const PendingFailover& p) { return !p.resolved; });
  }

  Time recent_at(std::size_t i) const { return recent[(recent_head + i) % recent.size()]; }

  // A request to the coordinator at time t: steady-state cost and the herd of every failover
  // still being measured.
  void on_coordinator_request(Time t) {
    if (steady()) ++report.steady_requests;
    if (!report.first_leader_at) ++report.requests_before_first_leader;
    const Time window_start = t - std::chrono::seconds(1);
    while (recent_size > 0 && recent_at(0) <= window_start) {
      recent_head = (recent_head + 1) % recent.size();
      --recent_size;
    }
    if (recent_size == recent.size()) {
      std::vector<Time> grown(std::max<std::size_t>(16, recent.size() * 2));
      for (std::size_t i = 0; i < recent_size; ++i) grown[i] = recent_at(i);
      recent = std::move(grown);
      recent_head = 0;
    }
    recent[(recent_head + recent_size) % recent.size()] = t;
    ++recent_size;
    for (std::size_t i = 0; i < herd.size();) {
      Failover& f = report.failovers[herd[i]];
      const std::optional<Time> led = f.new_leader_at ? f.new_leader_at : f.regained_at;
      if (f.ridden_out || (led && t > *led + std::chrono::seconds(1))) {
        herd.erase(herd.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      // Requests in (t - 1s, t] sent at or after the fault: the ring is in time order.
      std::size_t lo = 0;
      std::size_t hi = recent_size;
      while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        const Time at = recent_at(mid);
        if (at < f.fault_at || at <= window_start) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      f.requests_peak = std::max<std::uint64_t>(f.requests_peak, recent_size - lo);
      ++i;
    }
  }

  void record_first_split_brain() {
    SplitBrainOccurrence occurrence;
    occurrence.at = accounted;
    for (std::size_t n = 0; n < open.size(); ++n) {
      if (!open[n]) continue;
      occurrence.nodes.push_back(static_cast<NodeId>(n));
      occurrence.epochs.push_back(report.intervals[*open[n]].epoch);
    }
    report.first_split_brain = std::move(occurrence);
  }

  void close_interval(NodeId node, Time at) {
    if (!is_leader(node)) return;
    auto& slot = open[static_cast<std::size_t>(node)];
    report.intervals[*slot].end = at;
    slot.reset();
    --open_count;
    if (node == newest_open) find_newest_open();
  }

  // Only when the newest leader stops leading: a scan of the open intervals, once per change of
  // leader, never per write.
  void find_newest_open() {
    newest_open = sim::kNoNode;
    std::optional<std::size_t> best;
    for (std::size_t n = 0; n < open.size(); ++n) {
      if (open[n] && (!best || *open[n] > *best)) {
        best = open[n];
        newest_open = static_cast<NodeId>(n);
      }
    }
  }

  void open_interval(NodeId node, Epoch epoch, Time at) {
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

  void on_belief(const sim::Event& e) {
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

  // The old leader of a waiting record leads again in a new epoch, before any other node did.
  void settle_regained(NodeId node, Epoch epoch, Time at) {
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

  // Another node leads: every failover waiting for a leader other than its old one ends now.
  void resolve_failovers(NodeId new_leader, Time at) {
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

  void wait_for_heard(std::size_t index, NodeId leader, Time at) {
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

  // Records every node has heard; drops those whose leader no longer leads in its epoch.
  void settle_heard(Time at) {
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

  void on_deliver(const sim::Event& e) {
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

  void on_up_change(NodeId node, bool is_up, Time at) {
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

  static void set_first_new_write(Failover& f, Time at) {
    f.first_new_write = at;
    if (f.last_old_write) f.write_outage = at - *f.last_old_write;
  }

  void on_sink_write(const sim::Event& e) {
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

  void record_stale(const sim::Event& e, bool accepted, Epoch newest) {
    std::uint64_t& kept = accepted ? stale_accepted_kept : stale_rejected_kept;
    ++(accepted ? report.stale_writes_accepted : report.stale_writes_rejected);
    if (kept < kFindingsKept) {
      ++kept;
      report.stale_writes.push_back({e.time, e.node, e.a, newest, accepted});
    }
  }

  // Tokens that do not grow with each grant say nothing about order: a write is stale when a
  // grant newer than its writer's exists, and overwrites when a write of a newer grant was
  // already accepted. The epoch named is the newest grant's.
  void on_write_by_grant(const sim::Event& e, bool accepted) {
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

  void on_accepted_write(const sim::Event& e, bool accepted) {
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

  void on_store_change(const sim::Event& e) {
    if (!config.leader_key || e.code != 0 || !is_node(e.node)) return;
    if (e.text != *config.leader_key) return;
    resolve_failovers(e.node, e.time);
  }

  // Whether a partition given as "0,1|2,3,store" leaves `leader` without a strict majority of the
  // nodes it can reach, or (when the protocol needs the store) without the store. Endpoints in no
  // group keep all their links, so they count as reachable from every group.
  bool partition_takes_away(std::string_view text, NodeId leader) const {
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

  // Whether the old leader of a waiting record still holds the very interval it held at the fault.
  bool kept_interval(const Failover& f) const {
    return is_leader(f.old_leader) && interval_of(f.old_leader).epoch == f.old_epoch &&
           interval_of(f.old_leader).start <= f.fault_at;
  }

  // Records still waiting whose old leader holds the very interval it held at the fault and has
  // written since the fault's effect ended (or the run ended): it rode the fault out. Settling them
  // keeps a much later, unrelated change of leader from being taken for this fault's failover.
  void settle_ridden_out(std::optional<NodeId> writer, Time at) {
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

  // An endpoint of a partition's groups: a server by its name, or a node by its number (the node
  // count may be known only from run_start).
  std::optional<sim::Endpoint> endpoint_of(std::string_view token) const {
    if (const auto server = config.topology.find(token); server && *server < 0) return server;
    sim::Endpoint value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc{} || ptr != token.data() + token.size() || value < 0) return std::nullopt;
    return value;
  }

  // Whether a partition's groups name a coordinator (ServerTraits::coordinator).
  bool names_coordinator(std::string_view groups) const {
    std::size_t start = 0;
    for (std::size_t i = 0; i <= groups.size(); ++i) {
      if (i < groups.size() && groups[i] != ',' && groups[i] != '|') continue;
      const auto endpoint = endpoint_of(groups.substr(start, i - start));
      if (endpoint && config.topology.is_coordinator(*endpoint)) return true;
      start = i + 1;
    }
    return false;
  }

  void record_window(const sim::Event& e, sim::FaultKind kind) {
    FaultWindow w;
    w.cause.fault_index = static_cast<std::size_t>(e.a);
    w.cause.fault = kind;
    w.cause.target = e.node;
    // Reports call the server at the store's address "store", as scenario files may (a
    // replicated store's member 0 there), and every other server by its topology name.
    if (e.node < 0) {
      w.cause.target_name =
          e.node == sim::kStoreEndpoint ? "store" : config.topology.name_of(e.node);
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

  // A crashed or stopped process came back: its open-ended crash is over.
  void on_restart_window(NodeId node, Time at) {
    for (FaultWindow& w : windows) {
      if (w.open_ended && w.cause.target == node &&
          sim::fault_info(w.cause.fault).effect != sim::FaultEffect::links) {
        w.open_ended = false;
        w.until = at;
      }
    }
  }

  static constexpr std::size_t kCausesKept = 8;

  void close_outage(Time end, std::optional<NodeId> writer_after) {
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

  // The leader changed in an outage with a fault on the coordinator and none that took the old
  // leader away itself: a failover of the coordinator's kind.
  void record_coordinator_failover(const Outage& o) {
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

  // An accepted write from the newest grant of leadership: the service wrote.
  void on_legit_write(NodeId writer, Time at) {
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

  void on_equal_token(const sim::Event& e) {
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

  void on_fault(const sim::Event& e) {
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
};

Analyzer::Analyzer(AnalysisConfig config) : state_(std::make_unique<State>()) {
  state_->node_count = config.node_count;
  // The coordinator's servers: the store's members by the topology, or the one server leadership
  // depends on.
  std::vector<sim::Endpoint> coordinator = {config.coordinator};
  if (config.store_members > 1 && config.coordinator == sim::kStoreEndpoint) {
    coordinator.clear();
    for (std::size_t m = 0; m < config.store_members; ++m) {
      coordinator.push_back(config.topology.store_member(m));
    }
  }
  state_->coordinator =
      CoordinatorWatch(std::move(coordinator),
                       config.topology.kind_of(config.coordinator) == sim::server_kind::postgres);
  if (config.write_interval && config.write_interval->count() > 0) {
    state_->outage_gap = 2 * *config.write_interval;
    state_->report.outages_measured = true;
  }
  state_->report.tokens_ordered = config.tokens_ordered;
  state_->config = std::move(config);
  state_->report.node_count = state_->node_count;
  if (state_->node_count > 0) state_->ensure_node(static_cast<NodeId>(state_->node_count - 1));
  const AnalysisConfig& c = state_->config;
  state_->election_type.assign(c.message_types.size(), false);
  for (std::size_t code = 0; code < c.message_types.size(); ++code) {
    const auto& election = c.election_message_types;
    state_->election_type[code] =
        std::find(election.begin(), election.end(), c.message_types[code]) != election.end();
  }
}

Analyzer::~Analyzer() = default;

void Analyzer::on_event(const sim::Event& event) {
  State& s = *state_;
  if (s.finished || s.run_end) return;
  ELECTSIM_ASSERT(event.time >= s.last_event, "events arrive in time order");
  s.last_event = event.time;
  ++s.report.events;
  s.advance(event.time);
  s.coordinator.on_event(event);
  switch (event.kind) {
    case sim::EventKind::run_start:
      if (s.node_count == 0 && event.a > 0) {
        s.node_count = static_cast<std::size_t>(event.a);
        s.report.node_count = s.node_count;
        s.ensure_node(static_cast<NodeId>(s.node_count - 1));
      }
      break;
    case sim::EventKind::run_end:
      s.run_end = event.time;
      break;
    case sim::EventKind::belief:
      s.on_belief(event);
      break;
    case sim::EventKind::crash:
      s.close_interval(event.node, event.time);
      s.on_up_change(event.node, false, event.time);
      break;
    case sim::EventKind::restart:
      s.on_up_change(event.node, true, event.time);
      s.on_restart_window(event.node, event.time);
      break;
    case sim::EventKind::fault:
      s.on_fault(event);
      break;
    case sim::EventKind::sink_write:
      s.on_sink_write(event);
      break;
    case sim::EventKind::store_change:
      s.on_store_change(event);
      break;
    case sim::EventKind::msg_send:
      ++s.report.messages_sent;
      if (s.sent_by_type.size() <= event.code) s.sent_by_type.resize(event.code + 1u);
      ++s.sent_by_type[event.code];
      break;
    case sim::EventKind::msg_deliver:
      ++s.report.messages_delivered;
      s.on_deliver(event);
      break;
    case sim::EventKind::msg_drop:
      ++s.report.messages_dropped;
      break;
    case sim::EventKind::store_request:
      ++s.report.store_requests_total;
      if (event.code < sim::kStoreOpCount) ++s.report.store_requests[event.code];
      s.on_coordinator_request(event.time);
      break;
    case sim::EventKind::sink_send:
      if (event.d > 0) ++s.report.writes_after_deadline;
      break;
    case sim::EventKind::server_request:
      ++s.report.server_requests_total;
      s.on_coordinator_request(event.time);
      break;
    case sim::EventKind::pause:
    case sim::EventKind::resume:
    case sim::EventKind::clock_change:
    case sim::EventKind::timer_fire:
    case sim::EventKind::store_apply:
    case sim::EventKind::lease_expire:
    case sim::EventKind::store_reply:
    case sim::EventKind::watch_notify:
    case sim::EventKind::sink_reply:
    case sim::EventKind::store_pause:
    case sim::EventKind::store_resume:
    case sim::EventKind::network_change:
    case sim::EventKind::server_role:
    case sim::EventKind::raft_commit:
    case sim::EventKind::lease_refresh:
    case sim::EventKind::client_failover:
      break;
    case sim::EventKind::conn_break:
      ++s.report.connections_broken;
      break;
  }
}

Report Analyzer::finish() {
  State& s = *state_;
  if (s.finished) return s.report;
  s.finished = true;
  // Without run_end (a stream cut short) the run is judged up to its configured end or its last
  // event, whichever is later.
  const Time end = s.run_end ? *s.run_end : std::max(s.last_event, Time(s.config.duration));
  s.advance(end);
  s.settle_ridden_out(std::nullopt, end);
  for (std::size_t n = 0; n < s.open.size(); ++n) {
    if (!s.open[n]) continue;
    LeaderInterval& interval = s.report.intervals[*s.open[n]];
    interval.end = end;
    interval.open_at_end = true;
  }
  Report& r = s.report;
  if (s.outage_gap && s.last_legit_write && end - *s.last_legit_write > *s.outage_gap) {
    s.close_outage(end, std::nullopt);
  }
  if (r.first_write_at && end > *r.first_write_at) {
    const auto span = static_cast<double>((end - *r.first_write_at).count());
    r.writable_fraction = 1.0 - static_cast<double>(r.outage_time.count()) / span;
  }
  r.duration = end.since_start();
  if (r.duration.count() > 0) {
    r.leaderless_fraction =
        static_cast<double>(r.leaderless_time.count()) / static_cast<double>(r.duration.count());
    r.store_requests_per_second = static_cast<double>(r.store_requests_total) /
                                  (static_cast<double>(r.duration.count()) * 1e-9);
    r.coordinator_requests_per_second =
        static_cast<double>(r.store_requests_total + r.server_requests_total) /
        (static_cast<double>(r.duration.count()) * 1e-9);
  }
  if (r.steady_time.count() > 0) {
    r.steady_requests_per_second = static_cast<double>(r.steady_requests) /
                                   (static_cast<double>(r.steady_time.count()) * 1e-9);
  }
  for (const Failover& f : r.failovers) {
    if (f.failover) r.failover_requests_peak = std::max(r.failover_requests_peak, f.requests_peak);
  }
  s.coordinator.finish(r);
  for (std::size_t code = 0; code < s.sent_by_type.size(); ++code) {
    if (s.sent_by_type[code] == 0) continue;
    const bool named =
        code < s.config.message_types.size() && !s.config.message_types[code].empty();
    const std::string name = named ? s.config.message_types[code] : "type_" + std::to_string(code);
    r.messages_by_type[name] += s.sent_by_type[code];
  }
  for (const auto& [name, count] : r.messages_by_type) {
    const auto& election = s.config.election_message_types;
    if (std::find(election.begin(), election.end(), name) != election.end()) {
      r.election_messages_sent += count;
    }
  }
  return r;
}

}  // namespace electsim::analysis
