// The coordinator's observables: see analysis/coordinator.hpp.
#include "analysis/coordinator.hpp"

#include <algorithm>

#include "analysis/stats.hpp"
#include "sim/assert.hpp"
#include "sim/protocol.hpp"

namespace electsim::analysis {
namespace {
constexpr std::int64_t kSecondNs = 1'000'000'000;  // the herd's whole seconds
}  // namespace

CoordinatorWatch::CoordinatorWatch(std::vector<sim::Endpoint> members, bool database)
    : member_count_(std::max<std::size_t>(members.size(), 1)) {
  report_.members = member_count_;
  report_.database = database;
  for (std::size_t k = 0; k < member_count_; ++k) {
    Member m;
    m.endpoint = k < members.size() ? members[k] : sim::kNoNode;
    // A single store serves from the start; members lead only once elected.
    m.leads = member_count_ == 1;
    members_.push_back(m);
  }
  can_ = members_can_grant();
  changes_.push_back(Change{Time(0), Duration(0), can_});
  second_of_slot_.fill(-1);
}

Duration CoordinatorWatch::unavailable_until(Time t) const {
  const auto after = std::upper_bound(changes_.begin(), changes_.end(), t,
                                      [](Time at, const Change& c) { return at < c.at; });
  if (after == changes_.begin()) return Duration(0);
  const Change& c = *(after - 1);
  return c.can ? c.before : c.before + (t - c.at);
}

CoordinatorWatch::Member* CoordinatorWatch::member(sim::Endpoint endpoint) {
  for (Member& m : members_) {
    if (m.endpoint == endpoint) return &m;
  }
  return nullptr;
}

bool CoordinatorWatch::members_can_grant() const {
  return std::any_of(members_.begin(), members_.end(),
                     [](const Member& m) { return m.up && !m.paused && m.leads; });
}

void CoordinatorWatch::account(Duration d) {
  if (!can_) report_.unavailable_time += d;
}

void CoordinatorWatch::on_event(const sim::Event& e) {
  const bool could = can_;
  // Only an event that changed a member can change the answer: the members are looked at only
  // then, and can_grant() and account() read the answer kept in between.
  if (!apply(e)) return;
  const bool can = members_can_grant();
  if (can != could) {
    changes_.push_back(Change{e.time, unavailable_until(e.time), can});
  }
  can_ = can;
  // An outage starts when a store that could grant no longer can; the first election, before any
  // member has led, is not one.
  if (could && !can) {
    outage_since_ = e.time;
    rate_before_outage_ = rate_before(e.time);
    close_recovery();
  }
  if (!could && can && outage_since_) {
    report_.outages.push_back(e.time - *outage_since_);
    CoordinatorRecovery recovery;
    recovery.at = e.time;
    recovery.outage = e.time - *outage_since_;
    recovery.peak_at = e.time;
    recovery.before_per_second = rate_before_outage_;
    report_.recoveries.push_back(recovery);
    recovery_open_ = true;
    last_second_.clear();
    outage_since_.reset();
  }
}

bool CoordinatorWatch::commit_agrees(std::int64_t index, Epoch term) {
  // Leaders commit in index order, so the indices fill a vector from 1 up; one out of that order
  // (a trace's, which may be anything) waits in the map until the vector reaches it.
  const auto next = static_cast<std::int64_t>(committed_terms_.size()) + 1;
  if (index >= 1 && index < next) {
    return committed_terms_[static_cast<std::size_t>(index - 1)] == term;
  }
  if (index != next) {
    const auto [it, first] = committed_sparse_.emplace(index, term);
    return first || it->second == term;
  }
  committed_terms_.push_back(term);
  // The map never holds the vector's next index: each append takes in those that waited for it.
  for (;;) {
    const auto waiting =
        committed_sparse_.find(static_cast<std::int64_t>(committed_terms_.size()) + 1);
    if (waiting == committed_sparse_.end()) break;
    committed_terms_.push_back(waiting->second);
    committed_sparse_.erase(waiting);
  }
  return true;
}

std::optional<double> CoordinatorWatch::rate_before(Time t) const {
  const std::int64_t current = t.ns / kSecondNs;
  const std::int64_t seconds =
      std::min<std::int64_t>(current, static_cast<std::int64_t>(kRateSlots) - 1);
  if (seconds <= 0) return std::nullopt;
  std::uint64_t sent = 0;
  for (std::size_t slot = 0; slot < kRateSlots; ++slot) {
    const std::int64_t second = second_of_slot_[slot];
    if (second >= current - seconds && second < current) sent += sent_in_second_[slot];
  }
  return static_cast<double>(sent) / static_cast<double>(seconds);
}

void CoordinatorWatch::on_request(Time t) {
  const std::int64_t second = t.ns / kSecondNs;
  const auto slot = static_cast<std::size_t>(second % static_cast<std::int64_t>(kRateSlots));
  if (second_of_slot_[slot] != second) {
    second_of_slot_[slot] = second;
    sent_in_second_[slot] = 0;
  }
  ++sent_in_second_[slot];
  if (!recovery_open_) return;
  CoordinatorRecovery& r = report_.recoveries.back();
  if (t > r.at + kRecoveryWindow) {
    close_recovery();
    return;
  }
  if (t < r.at + std::chrono::seconds(1)) ++r.first_second;
  // The requests in (t - 1s, t].
  last_second_.drop_through(t - std::chrono::seconds(1));
  last_second_.push(t);
  if (last_second_.size() > r.peak) {
    r.peak = last_second_.size();
    r.peak_at = t;
  }
}

void CoordinatorWatch::note_floor(sim::NodeId client, std::int64_t id) {
  if (client >= 0) {
    const auto index = static_cast<std::size_t>(client);
    if (index >= node_floor_.size()) node_floor_.resize(index + 1);
    NodeFloors& f = node_floor_[index];
    for (std::uint32_t i = 0; i < f.used; ++i) {
      if (f.slot[i].id == id) {
        f.slot[i].floor = highest_returned_;
        return;
      }
    }
    if (f.used < f.slot.size() && !spilled_floor_.contains({client, id})) {
      f.slot[f.used++] = Outstanding{id, highest_returned_};
      return;
    }
  }
  spilled_floor_[{client, id}] = highest_returned_;
}

std::optional<sim::Revision> CoordinatorWatch::take_floor(sim::NodeId client, std::int64_t id) {
  if (client >= 0 && static_cast<std::size_t>(client) < node_floor_.size()) {
    NodeFloors& f = node_floor_[static_cast<std::size_t>(client)];
    for (std::uint32_t i = 0; i < f.used; ++i) {
      if (f.slot[i].id != id) continue;
      const sim::Revision floor = f.slot[i].floor;
      f.slot[i] = f.slot[--f.used];
      return floor;
    }
  }
  if (spilled_floor_.empty()) return std::nullopt;
  const auto it = spilled_floor_.find({client, id});
  if (it == spilled_floor_.end()) return std::nullopt;
  const sim::Revision floor = it->second;
  spilled_floor_.erase(it);
  return floor;
}

bool CoordinatorWatch::apply(const sim::Event& e) {
  using K = sim::EventKind;
  switch (e.kind) {
    case K::crash: {
      Member* m = member(e.node);
      if (m == nullptr) return false;
      m->up = false;
      m->paused = false;
      if (member_count_ > 1) m->leads = false;
      return true;
    }
    case K::restart:
    case K::pause:
    case K::resume: {
      Member* m = member(e.node);
      if (m == nullptr) return false;
      if (e.kind == K::restart) m->up = true;
      if (e.kind != K::restart) m->paused = e.kind == K::pause;
      return true;
    }
    case K::store_pause:
    case K::store_resume:
      members_.front().paused = e.kind == K::store_pause;
      return true;
    case K::server_role: {
      Member* m = member(e.node);
      if (m == nullptr) return false;
      const bool leads = e.code == static_cast<std::uint16_t>(sim::Role::leader);
      m->leads = leads;
      m->term = e.a;
      if (!leads) return true;
      // Raft §5.2 election safety: at most one leader per term.
      const auto [it, first] = leader_of_term_.emplace(e.a, e.node);
      if (first) {
        ++report_.leader_elections;
      } else if (it->second != e.node) {
        ++report_.same_term_leaders;
        if (!report_.first_violation) report_.first_violation = e.time;
      }
      return true;
    }
    case K::raft_commit: {
      ++report_.commits;
      // Raft's State Machine Safety: an index, once committed, holds the same entry everywhere.
      if (!commit_agrees(e.a, e.b)) {
        ++report_.commit_conflicts;
        if (!report_.first_violation) report_.first_violation = e.time;
      }
      if (e.c >= 0) commit_latency_ns_.push_back(e.c);
      return false;
    }
    case K::lease_refresh:
      report_.lease_refreshes += static_cast<std::uint64_t>(std::max<std::int64_t>(e.a, 0));
      return false;
    case K::client_failover:
      if (e.code == static_cast<std::uint16_t>(sim::FailoverReason::no_leader)) {
        ++report_.requests_retried;
      } else {
        ++report_.client_failovers;
      }
      return false;
    case K::store_request:
      on_request(e.time);
      // A replicated store's clients name their requests in replies (a single store applies each
      // request at one instant: linearizable by construction).
      if (member_count_ > 1) note_floor(e.node, e.a);
      return false;
    case K::store_reply: {
      if (e.c == static_cast<std::int64_t>(sim::StoreError::unavailable)) ++report_.requests_failed;
      if (e.c == static_cast<std::int64_t>(sim::StoreError::too_many_requests)) {
        ++report_.requests_refused;
        if (recovery_open_ && e.time <= report_.recoveries.back().at + kRecoveryWindow) {
          ++report_.recoveries.back().refused;
        }
      }
      if (member_count_ <= 1) return false;
      const std::optional<sim::Revision> taken = take_floor(e.node, e.d);
      if (!taken) return false;
      const sim::Revision floor = *taken;
      // Watches are served from the member's own applied state, as etcd's are: not linearizable,
      // and not checked. Failed requests say nothing.
      const auto op = static_cast<sim::StoreOp>(e.code);
      if (e.c != 0 || op == sim::StoreOp::watch || op == sim::StoreOp::unwatch) return false;
      if (e.a < floor) {
        ++report_.linearizability_violations;
        if (!report_.first_violation) report_.first_violation = e.time;
      }
      highest_returned_ = std::max(highest_returned_, e.a);
      return false;
    }
    case K::store_apply:
      ++report_.requests_served;
      return false;
    case K::run_start:
    case K::run_end:
    case K::fault:
    case K::belief:
    case K::clock_change:
    case K::timer_fire:
    case K::msg_send:
    case K::msg_deliver:
    case K::msg_drop:
    case K::store_change:
    case K::lease_expire:
    case K::watch_notify:
    case K::sink_write:
    case K::sink_reply:
    case K::network_change:
    case K::sink_send:
    case K::conn_break:
      return false;
    case K::server_request:
      on_request(e.time);
      return false;
  }
  return false;
}

void CoordinatorWatch::finish(Report& report) {
  report_.leader_changes = report_.leader_elections > 0 ? report_.leader_elections - 1 : 0;
  std::sort(commit_latency_ns_.begin(), commit_latency_ns_.end());
  if (const auto p50 = nearest_rank_percentile(commit_latency_ns_, 50)) {
    report_.commit_latency_p50 = Duration(*p50);
  }
  if (const auto p99 = nearest_rank_percentile(commit_latency_ns_, 99)) {
    report_.commit_latency_p99 = Duration(*p99);
  }
  if (report.duration.count() > 0) {
    report_.availability = 1.0 - static_cast<double>(report_.unavailable_time.count()) /
                                     static_cast<double>(report.duration.count());
  }
  report.store = report_;
}

std::vector<CoordinatorReport> CoordinatorWatch::finish_shards(
    std::vector<CoordinatorWatch*> shards, Report& report) {
  ELECTSIM_ASSERT(!shards.empty(), "a store has a shard");
  std::vector<CoordinatorReport> each;
  CoordinatorReport all;
  all.members = shards.front()->member_count_;
  all.shards = shards.size();
  std::vector<std::int64_t> latencies;
  for (CoordinatorWatch* shard : shards) {
    Report one;
    one.duration = report.duration;
    shard->finish(one);
    const CoordinatorReport& r = one.store;
    all.unavailable_time += r.unavailable_time;
    all.recoveries.insert(all.recoveries.end(), r.recoveries.begin(), r.recoveries.end());
    all.leader_elections += r.leader_elections;
    all.leader_changes += r.leader_changes;
    all.commits += r.commits;
    all.requests_failed += r.requests_failed;
    all.requests_retried += r.requests_retried;
    all.requests_refused += r.requests_refused;
    all.requests_served += r.requests_served;
    all.client_failovers += r.client_failovers;
    all.lease_refreshes += r.lease_refreshes;
    all.same_term_leaders += r.same_term_leaders;
    all.commit_conflicts += r.commit_conflicts;
    all.linearizability_violations += r.linearizability_violations;
    if (r.first_violation && (!all.first_violation || *r.first_violation < *all.first_violation)) {
      all.first_violation = r.first_violation;
    }
    latencies.insert(latencies.end(), shard->commit_latency_ns_.begin(),
                     shard->commit_latency_ns_.end());
    each.push_back(std::move(one.store));
  }
  std::stable_sort(
      all.recoveries.begin(), all.recoveries.end(),
      [](const CoordinatorRecovery& a, const CoordinatorRecovery& b) { return a.at < b.at; });
  // Each outage ends in its recovery, so the outages' order is theirs.
  for (const CoordinatorRecovery& r : all.recoveries) all.outages.push_back(r.outage);
  std::sort(latencies.begin(), latencies.end());
  if (const auto p50 = nearest_rank_percentile(latencies, 50))
    all.commit_latency_p50 = Duration(*p50);
  if (const auto p99 = nearest_rank_percentile(latencies, 99))
    all.commit_latency_p99 = Duration(*p99);
  if (report.duration.count() > 0) {
    all.availability = 1.0 - static_cast<double>(all.unavailable_time.count()) /
                                 (static_cast<double>(report.duration.count()) *
                                  static_cast<double>(shards.size()));
  }
  report.store = std::move(all);
  return each;
}

}  // namespace electsim::analysis
