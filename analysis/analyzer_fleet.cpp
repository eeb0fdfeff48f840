// The analyzer of a fleet (analysis/analyzer.hpp): a world of many election groups, each a service
// electing its own leader on its own key and writing its own resource of the sink, all sharing
// the world's coordinator. Each service is judged by its own State, fed only its own nodes'
// events with its nodes numbered from 0 (as its protocol numbers them), so every check means
// for a service what it means for a world of one group. The coordinator is watched once for all
// of them: a service's stall is the coordinator's unavailable time between its own events while it
// had no leader. Per event the work is one lookup of the service, never a pass over services;
// only a fault on a server or on the links, and a server's restart, reach every service.
#include "analysis/analyzer_state.hpp"
#include "analysis/stats.hpp"

namespace electsim::analysis {

using namespace analyzer_detail;

namespace {

// An event as the service at `base` with `size` nodes sees it: its nodes numbered from 0, a node
// of another service as no node.
sim::Event in_service(const sim::Event& e, NodeId base, std::size_t size) {
  sim::Event out = e;
  const auto local = [&](sim::Endpoint x) -> sim::Endpoint {
    if (x < 0) return x;
    const sim::Endpoint l = x - base;
    return l >= 0 && static_cast<std::size_t>(l) < size ? l : sim::kNoNode;
  };
  out.node = local(e.node);
  out.peer = local(e.peer);
  // A follower's belief names its leader in b.
  if (e.kind == sim::EventKind::belief && e.b >= 0) out.b = local(static_cast<NodeId>(e.b));
  return out;
}

// A service's report with its nodes numbered as the world numbers them.
void to_world_ids(Report& r, NodeId base) {
  const auto up = [base](NodeId& n) {
    if (n >= 0) n += base;
  };
  for (LeaderInterval& i : r.intervals) up(i.node);
  if (r.first_split_brain) {
    for (NodeId& n : r.first_split_brain->nodes) up(n);
  }
  for (SameEpochLeaders& s : r.same_epoch_leaders) {
    up(s.first);
    up(s.second);
  }
  for (StaleWrite& w : r.stale_writes) up(w.writer);
  if (r.first_overwrite) up(r.first_overwrite->writer);
  if (r.first_equal_token_write) {
    up(r.first_equal_token_write->writer);
    up(r.first_equal_token_write->other);
  }
  for (auto* list : {&r.failovers, &r.coordinator_failovers}) {
    for (Failover& f : *list) {
      up(f.old_leader);
      up(f.new_leader);
      if (f.coordinator_target >= 0) f.coordinator_target += base;
    }
  }
  for (Outage& o : r.outages) {
    up(o.writer_before);
    up(o.writer_after);
    for (OutageCause& c : o.causes) {
      if (c.target >= 0) c.target += base;
    }
  }
}

template <typename T>
void earliest(std::optional<T>& into, const std::optional<T>& from) {
  if (from && (!into || from->at < into->at)) into = from;
}

void keep_min(std::optional<Time>& into, const std::optional<Time>& from) {
  if (from && (!into || *from < *into)) into = from;
}

void keep_max(std::optional<Time>& into, const std::optional<Time>& from) {
  if (from && (!into || *from > *into)) into = from;
}

constexpr std::size_t kFleetFindingsKept = 100;

// Appends `from` to `into` and keeps only the `kept` earliest by `at` (stable: equal times keep
// the services' order), sorting only when the list has doubled, so that merging is linear.
template <typename T, typename At>
void add_earliest(std::vector<T>& into, const std::vector<T>& from, std::size_t kept, At at) {
  into.insert(into.end(), from.begin(), from.end());
  if (into.size() < 2 * kept) return;
  std::stable_sort(into.begin(), into.end(), [&](const T& a, const T& b) { return at(a) < at(b); });
  into.resize(kept);
}

template <typename T, typename At>
void settle_earliest(std::vector<T>& list, std::size_t kept, At at) {
  std::stable_sort(list.begin(), list.end(), [&](const T& a, const T& b) { return at(a) < at(b); });
  if (list.size() > kept) list.resize(kept);
}

const auto same_epoch_at = [](const SameEpochLeaders& s) { return s.at; };
const auto stale_at = [](const StaleWrite& w) { return w.at; };
const auto outage_at = [](const Outage& o) { return o.start; };

// Adds one service's report (in world ids) into the fleet's sums.
void add_service(Report& into, const Report& r) {
  into.intervals.insert(into.intervals.end(), r.intervals.begin(), r.intervals.end());
  into.elections += r.elections;
  into.leaderless_time += r.leaderless_time;
  into.split_brain_time += r.split_brain_time;
  into.split_brain_episodes += r.split_brain_episodes;
  if (r.first_split_brain &&
      (!into.first_split_brain || r.first_split_brain->at < into.first_split_brain->at)) {
    into.first_split_brain = r.first_split_brain;
  }
  add_earliest(into.same_epoch_leaders, r.same_epoch_leaders, kFleetFindingsKept, same_epoch_at);
  into.same_epoch_leaders_total += r.same_epoch_leaders_total;
  into.writes_accepted += r.writes_accepted;
  into.writes_rejected += r.writes_rejected;
  into.stale_writes_accepted += r.stale_writes_accepted;
  into.stale_writes_rejected += r.stale_writes_rejected;
  into.stale_writes_overwriting += r.stale_writes_overwriting;
  earliest(into.first_overwrite, r.first_overwrite);
  add_earliest(into.stale_writes, r.stale_writes, 2 * kFleetFindingsKept, stale_at);
  into.equal_token_writes += r.equal_token_writes;
  earliest(into.first_equal_token_write, r.first_equal_token_write);
  into.failovers.insert(into.failovers.end(), r.failovers.begin(), r.failovers.end());
  into.coordinator_failovers.insert(into.coordinator_failovers.end(),
                                    r.coordinator_failovers.begin(), r.coordinator_failovers.end());
  add_earliest(into.outages, r.outages, kFleetFindingsKept, outage_at);
  into.outages_total += r.outages_total;
  into.outages_unresolved += r.outages_unresolved;
  into.outage_time += r.outage_time;
  if (r.outage_max && (!into.outage_max || *r.outage_max > *into.outage_max)) {
    into.outage_max = r.outage_max;
  }
  keep_min(into.first_write_at, r.first_write_at);
  keep_max(into.last_write_at, r.last_write_at);
  into.stall_time += r.stall_time;
  into.messages_sent += r.messages_sent;
  into.election_messages_sent += r.election_messages_sent;
  into.messages_delivered += r.messages_delivered;
  into.messages_dropped += r.messages_dropped;
  for (const auto& [type, count] : r.messages_by_type) into.messages_by_type[type] += count;
  for (std::size_t op = 0; op < into.store_requests.size(); ++op) {
    into.store_requests[op] += r.store_requests[op];
  }
  into.store_requests_total += r.store_requests_total;
  into.server_requests_total += r.server_requests_total;
  into.steady_time += r.steady_time;
  into.steady_requests += r.steady_requests;
  into.failover_requests_peak = std::max(into.failover_requests_peak, r.failover_requests_peak);
  into.writes_after_deadline += r.writes_after_deadline;
  into.roles_seen |= r.roles_seen;
  keep_max(into.last_heal_at, r.last_heal_at);
  if (r.heal_recovery && (!into.heal_recovery || *r.heal_recovery > *into.heal_recovery)) {
    into.heal_recovery = r.heal_recovery;
  }
  into.requests_before_first_leader += r.requests_before_first_leader;
  into.sink_writes += r.sink_writes;
}

Spread spread_of(std::vector<std::int64_t> samples) {
  Spread s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.p50 = *nearest_rank_percentile(samples, 50);
  s.p90 = *nearest_rank_percentile(samples, 90);
  s.p99 = *nearest_rank_percentile(samples, 99);
  s.max = samples.back();
  return s;
}

}  // namespace

void Analyzer::start_fleet(AnalysisConfig config) {
  fleet_ = std::make_unique<Fleet>();
  Fleet& f = *fleet_;
  const sim::Topology& world = config.topology;
  // The coordinator's shards, each with the world's servers but the other shards' store servers:
  // a service of a shard sees its own store as the world's store.
  std::vector<std::string> names = world.store_shards();
  if (names.empty()) names.emplace_back();
  std::vector<sim::Topology> shard_servers;
  for (const std::string& name : names) {
    std::vector<sim::NamedEndpoint> servers;
    for (const sim::NamedEndpoint& s : world.servers()) {
      if (name.empty() || s.kind != sim::server_kind::store || s.group == name) {
        servers.push_back(s);
      }
    }
    AnalysisConfig shard_config = config;
    shard_config.topology = sim::Topology(0, std::move(servers), {});
    if (!name.empty()) shard_config.coordinator = sim::kNoNode;
    Fleet::Shard shard{name.empty() ? std::string("store") : name, coordinator_watch(shard_config),
                       Time{}, 0};
    if (name.empty()) config.coordinator = shard_config.coordinator;
    f.shards.push_back(std::move(shard));
    shard_servers.push_back(std::move(shard_config.topology));
  }
  // Each store server's shard (the world's one store: shard 0 has them all).
  for (const sim::NamedEndpoint& s : world.servers()) {
    if (s.kind != sim::server_kind::store) continue;
    const std::size_t slot = sim::server_slot(s.address);
    if (slot >= f.shard_of_slot.size()) f.shard_of_slot.resize(slot + 1, -1);
    const auto shard = std::find(names.begin(), names.end(), s.group);
    f.shard_of_slot[slot] =
        shard == names.end() ? 0 : static_cast<std::int32_t>(shard - names.begin());
  }
  // Each service's State sees its shard's servers, but no other service's nodes.
  const std::vector<sim::ElectionGroup>& groups = world.groups();
  f.services.reserve(groups.size());
  f.bases.reserve(groups.size());
  f.shard_of_service.reserve(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const sim::ElectionGroup& group = groups[g];
    ELECTSIM_ASSERT(!group.nodes.empty(), "an election group has nodes");
    const auto shard = std::find(names.begin(), names.end(), group.store);
    ELECTSIM_ASSERT(group.store.empty() || shard != names.end(), "a service asks a shard");
    const auto k =
        shard == names.end() ? std::size_t{0} : static_cast<std::size_t>(shard - names.begin());
    AnalysisConfig c;
    c.node_count = group.nodes.size();
    c.duration = config.duration;
    c.message_types = config.message_types;
    c.election_message_types = config.election_message_types;
    c.leader_key = group.key;
    c.uses_store = config.uses_store;
    c.store_members = config.store_members;
    c.topology = sim::Topology(c.node_count, shard_servers[k].servers(), {});
    c.coordinator = group.store.empty() ? config.coordinator : c.topology.store_member(0);
    c.write_interval = config.write_interval;
    c.tokens_ordered = config.tokens_ordered;
    auto state = std::make_unique<State>();
    state->base = group.nodes.front();
    state->shared_coordinator = &f.shards[k].watch;
    state->init(std::move(c));
    if (group.key) f.by_key.emplace(*group.key, g);
    f.bases.push_back(group.nodes.front());
    f.shard_of_service.push_back(static_cast<std::uint32_t>(k));
    ++f.shards[k].services;
    f.services.push_back(std::move(state));
  }
  for (const sim::NamedEndpoint& s : world.servers())
    f.aggregators += s.kind == sim::server_kind::aggregator;
  f.report.node_count = config.node_count;
  f.report.tokens_ordered = config.tokens_ordered;
  f.report.outages_measured = config.write_interval && config.write_interval->count() > 0;
  f.config = std::move(config);
}

void Analyzer::on_fleet_event(const sim::Event& e) {
  Fleet& f = *fleet_;
  if (f.finished || f.run_end) return;
  ELECTSIM_ASSERT(e.time >= f.last_event, "events arrive in time order");
  f.last_event = e.time;
  ++f.events;
  // One store takes every event (its own, and its proxies' requests); shards their own.
  if (const std::int32_t shard = f.shards.size() == 1 ? 0 : f.shard_of(e.node); shard >= 0) {
    Fleet::Shard& w = f.shards[static_cast<std::size_t>(shard)];
    if (e.time > w.accounted) {
      w.watch.account(e.time - w.accounted);
      w.accounted = e.time;
    }
    w.watch.on_event(e);
  }
  const auto feed = [&](std::size_t k, const sim::Event& local) {
    State& s = *f.services[k];
    s.last_event = e.time;
    s.advance(e.time);
    s.apply(local);
  };
  const auto feed_service_of = [&](NodeId node) {
    const std::size_t k = f.service_of(node);
    const State& s = *f.services[k];
    feed(k, in_service(e, s.base, s.node_count));
  };
  switch (e.kind) {
    case sim::EventKind::run_start:
      return;
    case sim::EventKind::run_end:
      f.run_end = e.time;
      return;
    case sim::EventKind::conn_break:
      ++f.connections_broken;
      return;
    case sim::EventKind::store_change:
      // The owner a change names is the value its service's node wrote: that node's number in
      // its service.
      if (e.text.empty()) return;
      if (const auto it = f.by_key.find(e.text); it != f.by_key.end()) {
        feed(it->second, e);
      }
      return;
    case sim::EventKind::fault:
    case sim::EventKind::crash:
    case sim::EventKind::restart:
      if (e.node >= 0) {
        feed_service_of(e.node);
      } else if (e.kind != sim::EventKind::crash) {
        // A fault on a server or on the links, or a server back up: every service's outages may
        // name it.
        for (std::size_t k = 0; k < f.services.size(); ++k) {
          const State& s = *f.services[k];
          feed(k, in_service(e, s.base, s.node_count));
        }
      }
      return;
    case sim::EventKind::belief:
    case sim::EventKind::pause:
    case sim::EventKind::resume:
    case sim::EventKind::clock_change:
    case sim::EventKind::timer_fire:
    case sim::EventKind::store_request:
    case sim::EventKind::store_reply:
    case sim::EventKind::watch_notify:
    case sim::EventKind::sink_send:
    case sim::EventKind::sink_write:
    case sim::EventKind::sink_reply:
    case sim::EventKind::server_request:
    case sim::EventKind::msg_send:
    case sim::EventKind::msg_deliver:
    case sim::EventKind::msg_drop:
    case sim::EventKind::client_failover:
      if (e.node >= 0 && state_reads(e.kind)) feed_service_of(e.node);
      return;
    case sim::EventKind::store_apply:
    case sim::EventKind::lease_expire:
    case sim::EventKind::store_pause:
    case sim::EventKind::store_resume:
    case sim::EventKind::network_change:
    case sim::EventKind::server_role:
    case sim::EventKind::raft_commit:
    case sim::EventKind::lease_refresh:
      return;  // the coordinator's alone
  }
}

Report Analyzer::finish_fleet() {
  Fleet& f = *fleet_;
  if (f.finished) return f.report;
  f.finished = true;
  const Time end = f.run_end ? *f.run_end : std::max(f.last_event, Time(f.config.duration));
  for (Fleet::Shard& w : f.shards) {
    if (end > w.accounted) w.watch.account(end - w.accounted);
  }
  Report& r = f.report;
  FleetReport fleet;
  fleet.services = f.services.size();
  fleet.aggregators = f.aggregators;
  fleet.by_service.reserve(f.services.size());
  std::vector<std::int64_t> changes, leaderless, split, stall, outage, failover;
  changes.reserve(f.services.size());
  leaderless.reserve(f.services.size());
  split.reserve(f.services.size());
  stall.reserve(f.services.size());
  outage.reserve(f.services.size());
  std::optional<Time> all_led;  // when the last service had its first leader
  bool every_service_led = true;
  std::vector<std::pair<std::uint64_t, std::size_t>> by_changes;
  // A fleet's classes, in the order of their first services, with their services' samples.
  struct ClassSamples {
    ClassFigures figures;
    std::vector<std::int64_t> changes, leaderless, outage, stall;
  };
  std::vector<ClassSamples> classes;
  std::vector<ShardFigures> shard_figures(f.shards.size());
  for (std::size_t k = 0; k < f.shards.size(); ++k) {
    shard_figures[k].name = f.shards[k].name;
    shard_figures[k].services = f.shards[k].services;
  }
  for (std::size_t k = 0; k < f.services.size(); ++k) {
    State& s = *f.services[k];
    fleet.replicas = std::max(fleet.replicas, s.node_count);
    s.finish(end);
    Report& one = s.report;
    const std::uint64_t changed = one.elections > 0 ? one.elections - 1 : 0;
    changes.push_back(static_cast<std::int64_t>(changed));
    leaderless.push_back(one.leaderless_time.count());
    split.push_back(one.split_brain_time.count());
    stall.push_back(one.stall_time.count());
    outage.push_back(one.outage_time.count());
    for (const Failover& fo : one.failovers) {
      if (fo.failover) failover.push_back(fo.failover->count());
    }
    // The services that had each harm, for the fleet and for the service's class alike.
    const auto count_harm = [&one](auto& into) {
      into.services_split_brain +=
          one.split_brain_time.count() > 0 || one.same_epoch_leaders_total > 0 ? 1 : 0;
      into.services_stale_accepted += one.stale_writes_accepted > 0 ? 1 : 0;
      into.services_overwritten += one.stale_writes_overwriting > 0 ? 1 : 0;
      into.services_stalled += one.stall_time.count() > 0 ? 1 : 0;
      into.services_never_led += one.first_leader_at ? 0 : 1;
    };
    count_harm(fleet);
    if (one.first_leader_at) {
      keep_max(all_led, one.first_leader_at);
    } else {
      every_service_led = false;
    }
    by_changes.emplace_back(changed, k);
    ServiceFigures figures;
    figures.name = f.config.topology.groups()[k].name;
    figures.elections = one.elections;
    figures.leaderless_time = one.leaderless_time;
    figures.split_brain_time = one.split_brain_time;
    figures.stall_time = one.stall_time;
    figures.outage_time = one.outage_time;
    if (one.first_write_at && end > *one.first_write_at) {
      figures.writing_span = end - *one.first_write_at;
    }
    fleet.writing_span += figures.writing_span;
    figures.failovers_observed = static_cast<std::uint64_t>(std::count_if(
        one.failovers.begin(), one.failovers.end(), [](const Failover& x) { return x.failover; }));
    figures.writes_accepted = one.writes_accepted;
    figures.stale_writes_accepted = one.stale_writes_accepted;
    figures.coordinator_requests = one.store_requests_total + one.server_requests_total;
    figures.service_class = f.config.topology.groups()[k].service_class;
    if (!figures.service_class.empty()) {
      auto c = std::find_if(classes.begin(), classes.end(), [&](const ClassSamples& x) {
        return x.figures.name == figures.service_class;
      });
      if (c == classes.end()) {
        classes.emplace_back();
        c = std::prev(classes.end());
        c->figures.name = figures.service_class;
        c->figures.protocol = f.config.topology.groups()[k].protocol;
      }
      ClassFigures& cf = c->figures;
      ++cf.services;
      cf.replicas = std::max(cf.replicas, s.node_count);
      c->changes.push_back(changes.back());
      c->leaderless.push_back(leaderless.back());
      c->outage.push_back(outage.back());
      c->stall.push_back(stall.back());
      count_harm(cf);
      cf.coordinator_requests += figures.coordinator_requests;
    }
    ShardFigures& shard = shard_figures[f.shard_of_service[k]];
    shard.coordinator_requests += figures.coordinator_requests;
    shard.services_stalled += one.stall_time.count() > 0 ? 1 : 0;
    shard.leader_changes += changed;
    shard.leaderless_time += one.leaderless_time;
    fleet.by_service.push_back(figures);
    to_world_ids(one, s.base);
    add_service(r, one);
    f.services[k].reset();  // its figures are in the fleet's now
  }
  if (every_service_led) r.first_leader_at = all_led;
  // The lists in time order across services, as one world's are.
  std::stable_sort(r.intervals.begin(), r.intervals.end(),
                   [](const LeaderInterval& a, const LeaderInterval& b) {
                     return a.start < b.start || (a.start == b.start && a.node < b.node);
                   });
  const auto fault_at = [](const Failover& a, const Failover& b) {
    return a.fault_at < b.fault_at;
  };
  std::stable_sort(r.failovers.begin(), r.failovers.end(), fault_at);
  std::stable_sort(r.coordinator_failovers.begin(), r.coordinator_failovers.end(), fault_at);
  settle_earliest(r.same_epoch_leaders, kFleetFindingsKept, same_epoch_at);
  settle_earliest(r.stale_writes, 2 * kFleetFindingsKept, stale_at);
  settle_earliest(r.outages, kFleetFindingsKept, outage_at);
  fleet.leader_changes = spread_of(std::move(changes));
  fleet.leaderless_time = spread_of(std::move(leaderless));
  fleet.split_brain_time = spread_of(std::move(split));
  fleet.stall_time = spread_of(std::move(stall));
  fleet.outage_time = spread_of(std::move(outage));
  fleet.failover = spread_of(std::move(failover));
  for (ClassSamples& c : classes) {
    c.figures.leader_changes = spread_of(std::move(c.changes));
    c.figures.leaderless_time = spread_of(std::move(c.leaderless));
    c.figures.outage_time = spread_of(std::move(c.outage));
    c.figures.stall_time = spread_of(std::move(c.stall));
    fleet.by_class.push_back(std::move(c.figures));
  }
  std::stable_sort(by_changes.begin(), by_changes.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < by_changes.size() && i < 5 && by_changes[i].first > 0; ++i) {
    fleet.most_changes.emplace_back(f.config.topology.groups()[by_changes[i].second].name,
                                    by_changes[i].first);
  }
  r.duration = end.since_start();
  r.events = f.events;
  r.connections_broken = f.connections_broken;
  const double seconds = static_cast<double>(r.duration.count()) * 1e-9;
  const double service_time = seconds * static_cast<double>(f.bases.size());
  if (r.duration.count() > 0) {
    // Leaderless time summed over services, as a share of the services' time.
    r.leaderless_fraction =
        static_cast<double>(r.leaderless_time.count()) * 1e-9 / std::max(service_time, 1e-9);
    r.store_requests_per_second = static_cast<double>(r.store_requests_total) / seconds;
    r.coordinator_requests_per_second =
        static_cast<double>(r.store_requests_total + r.server_requests_total) / seconds;
  }
  if (r.steady_time.count() > 0) {
    r.steady_requests_per_second = static_cast<double>(r.steady_requests) /
                                   (static_cast<double>(r.steady_time.count()) * 1e-9);
  }
  // Each service's outages over its own writing span: a service that never wrote adds neither
  // (its loss shows as leaderless time), and one that wrote once and never again all of its own.
  if (fleet.writing_span.count() > 0) {
    r.writable_fraction = 1.0 - static_cast<double>(r.outage_time.count()) /
                                    static_cast<double>(fleet.writing_span.count());
  }
  if (f.shards.size() == 1) {
    f.shards.front().watch.finish(r);
  } else {
    std::vector<CoordinatorWatch*> watches;
    for (Fleet::Shard& w : f.shards) watches.push_back(&w.watch);
    const std::vector<CoordinatorReport> each =
        CoordinatorWatch::finish_shards(std::move(watches), r);
    for (std::size_t k = 0; k < f.shards.size(); ++k) {
      ShardFigures& shard = shard_figures[k];
      shard.unavailable_time = each[k].unavailable_time;
      shard.requests_refused = each[k].requests_refused;
      if (seconds > 0) {
        shard.requests_per_second = static_cast<double>(shard.coordinator_requests) / seconds;
      }
    }
    fleet.by_shard = std::move(shard_figures);
  }
  r.fleet = std::move(fleet);
  return r;
}

}  // namespace electsim::analysis
