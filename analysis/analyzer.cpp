// The online analyzer: leader intervals, split-brain, same-epoch leaders, stale writes, failover,
// write outage, leaderless time and cost, computed in one pass over the event stream. Meanings
// follow DESIGN.md ("Observables and their meaning") and docs/metrics.md. Memory grows with leader
// intervals, elections and faults, never with messages or writes; finding lists are capped.
// The state and its parts: analysis/analyzer_state.hpp.
#include "analysis/analyzer_state.hpp"

namespace electsim::analysis {

using namespace analyzer_detail;

CoordinatorWatch coordinator_watch(AnalysisConfig& config) {
  // The coordinator's servers: the store's members by the topology, or the one server leadership
  // depends on.
  if (config.coordinator == sim::kNoNode) config.coordinator = config.topology.store_member(0);
  std::vector<sim::Endpoint> coordinator = {config.coordinator};
  if (config.store_members > 1 && config.coordinator == config.topology.store_member(0)) {
    coordinator.clear();
    for (std::size_t m = 0; m < config.store_members; ++m) {
      coordinator.push_back(config.topology.store_member(m));
    }
  }
  return CoordinatorWatch(std::move(coordinator), config.topology.kind_of(config.coordinator) ==
                                                      sim::server_kind::postgres);
}

Analyzer::Analyzer(AnalysisConfig config) {
  if (config.topology.is_fleet()) {
    start_fleet(std::move(config));
    return;
  }
  state_ = std::make_unique<State>();
  state_->coordinator = coordinator_watch(config);
  state_->init(std::move(config));
}

void Analyzer::State::init(AnalysisConfig c) {
  node_count = c.node_count;
  if (c.write_interval && c.write_interval->count() > 0) {
    outage_gap = 2 * *c.write_interval;
    report.outages_measured = true;
  }
  report.tokens_ordered = c.tokens_ordered;
  config = std::move(c);
  report.node_count = node_count;
  if (node_count > 0) ensure_node(static_cast<NodeId>(node_count - 1));
  election_type.assign(config.message_types.size(), false);
  for (std::size_t code = 0; code < config.message_types.size(); ++code) {
    const auto& election = config.election_message_types;
    election_type[code] =
        std::find(election.begin(), election.end(), config.message_types[code]) != election.end();
  }
}

Analyzer::~Analyzer() = default;

void Analyzer::on_event(const sim::Event& event) {
  if (fleet_) {
    on_fleet_event(event);
    return;
  }
  State& s = *state_;
  if (s.finished || s.run_end) return;
  ELECTSIM_ASSERT(event.time >= s.last_event, "events arrive in time order");
  s.last_event = event.time;
  ++s.report.events;
  s.advance(event.time);
  s.coordinator.on_event(event);
  s.apply(event);
}

void Analyzer::State::apply(const sim::Event& event) {
  State& s = *this;
  if (!state_reads(event.kind)) return;
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
      ELECTSIM_ASSERT(false, "state_reads() keeps out the kinds that change nothing");
      break;
    case sim::EventKind::conn_break:
      ++s.report.connections_broken;
      break;
  }
}

Report Analyzer::finish() {
  if (fleet_) return finish_fleet();
  State& s = *state_;
  if (s.finished) return s.report;
  // Without run_end (a stream cut short) the run is judged up to its configured end or its last
  // event, whichever is later.
  const Time end = s.run_end ? *s.run_end : std::max(s.last_event, Time(s.config.duration));
  s.finish(end);
  return s.report;
}

void Analyzer::State::finish(Time end) {
  State& s = *this;
  s.finished = true;
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
  if (shared_coordinator == nullptr) s.coordinator.finish(r);
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
}

}  // namespace electsim::analysis
