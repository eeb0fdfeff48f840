// The replay recorder (drawing/replay_html.hpp): keeps the run's events compactly, mirrors every
// clock, and pairs every send with its arrival or drop. The page it feeds: drawing/replay_html.cpp.
#include "drawing/replay_html.hpp"

#include "analysis/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <set>
#include <string_view>
#include <utility>

#include "drawing/svg.hpp"
#include "sim/assert.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"

namespace electsim::drawing {

using analysis::TraceHeader;

namespace {

constexpr std::int64_t kBillion = 1'000'000'000;

std::size_t kind_index(sim::EventKind kind) {
  return static_cast<std::size_t>(kind);
}

// The fields each kind carries in the page's data, in order (the script reads them by position):
// fields of the trace schema, or derived (kDerivedFields). timer_fire is listed for completeness;
// the recorder only counts timer fires.
const std::array<std::vector<std::string_view>, sim::kEventKindCount>& kind_fields() {
  static const std::array<std::vector<std::string_view>, sim::kEventKindCount> table = [] {
    std::array<std::vector<std::string_view>, sim::kEventKindCount> t{};
    auto set = [&t](sim::EventKind kind, std::vector<std::string_view> fields) {
      t[kind_index(kind)] = std::move(fields);
    };
    using K = sim::EventKind;
    set(K::run_start, {"nodes"});
    set(K::run_end, {});
    set(K::fault, {"fault", "node", "peer", "index", "duration_ns", "skipped", "groups"});
    set(K::belief, {"node", "role", "epoch", "leader"});
    set(K::crash, {"node", "graceful"});
    set(K::restart, {"node"});
    set(K::pause, {"node", "duration_ns"});
    set(K::resume, {"node"});
    set(K::clock_change, {"node", "what", "drift_ppb", "amount_ns"});
    set(K::timer_fire, {"node", "tag"});
    set(K::msg_send, {"from", "to", "type"});
    set(K::msg_deliver, {"to", "from", "type"});
    set(K::msg_drop, {"from", "to", "type", "reason"});
    set(K::store_request, {"node", "op", "request"});
    set(K::store_apply, {"node", "op", "revision", "succeeded", "lease", "lease_deadline_ns"});
    set(K::store_change, {"key", "change", "revision", "owner", "lease", "expired"});
    set(K::lease_expire, {"lease"});
    set(K::store_reply, {"node", "op", "revision", "succeeded", "error"});
    set(K::watch_notify, {"node", "key", "change", "revision"});
    set(K::sink_write, {"writer", "token", "payload", "accepted", "highest_before", "stale"});
    set(K::sink_reply, {"node", "token", "accepted"});
    set(K::store_pause, {"duration_ns"});
    set(K::store_resume, {});
    set(K::network_change, {"fault", "index"});
    set(K::sink_send, {"writer", "token", "payload", "send_delay_ns"});
    set(K::server_role, {"member", "role", "term", "leader"});
    set(K::raft_commit, {"leader", "index", "term", "latency_ns"});
    set(K::lease_refresh, {"leader", "leases", "term"});
    set(K::client_failover, {"node", "member", "reason", "request"});
    set(K::server_request, {"node", "server", "request"});
    set(K::conn_break, {"node", "peer"});
    return t;
  }();
  return table;
}

// What the page computes that no trace carries: a renewal's deadline in true time (store_apply),
// and whether a write was stale by the analyzer's rule (sink_write).
constexpr std::array<std::string_view, 2> kDerivedFields = {"lease_deadline_ns", "stale"};

bool is_at_send_drop(std::int64_t reason) {
  return reason == static_cast<std::int64_t>(sim::DropReason::loss) ||
         reason == static_cast<std::int64_t>(sim::DropReason::cut_at_send) ||
         reason == static_cast<std::int64_t>(sim::DropReason::overload);
}

}  // namespace

const std::vector<std::string_view>& replay_fields(sim::EventKind kind) {
  return kind_fields()[kind_index(kind)];
}

std::span<const std::string_view> replay_derived_fields() {
  return kDerivedFields;
}

std::int64_t clock_segment_reading(const ClockSegment& segment, std::int64_t t_ns) {
  const std::int64_t elapsed = t_ns - segment.anchor_ns;
  return segment.base_ns + elapsed + sim::mul_div_floor(elapsed, segment.drift_ppb, kBillion);
}

// ---- Recorder

ReplayRecorder::ReplayRecorder(TraceHeader header, const sim::WorldConfig& world,
                               std::optional<sim::Duration> lease_ttl, bool lease_judged_by_store,
                               sim::Duration store_min_ttl)
    : header_(std::move(header)),
      lease_ttl_(lease_ttl),
      lease_judged_by_store_(lease_judged_by_store),
      store_min_ttl_(store_min_ttl),
      timer_fires_by_node_(header_.node_count, 0),
      store_members_(
          header_.store_members > 1 ? std::min(header_.store_members, sim::kMaxStoreMembers) : 0),
      store_clock_(make_clock(sim::server_clock(world, header_.topology.store_member(0)))) {
  node_clocks_.reserve(header_.node_count);
  node_segments_.resize(header_.node_count);
  for (std::size_t i = 0; i < header_.node_count; ++i) {
    node_clocks_.push_back(
        make_clock(i < world.clocks.size() ? world.clocks[i] : sim::ClockConfig{}));
    rebuild_from(node_clocks_.back(), node_segments_[i], 0);
  }
  rebuild_from(store_clock_, store_segments_, 0);
}

ReplayRecorder::Clock ReplayRecorder::make_clock(const sim::ClockConfig& config) {
  Clock clock{sim::ClockModel(config.offset, config.drift_ppb, config.steps), 0, {}};
  for (const sim::ClockStep& step : config.steps) clock.scheduled_steps_ns.push_back(step.at.ns);
  std::sort(clock.scheduled_steps_ns.begin(), clock.scheduled_steps_ns.end());
  return clock;
}

// The segments from `at_ns` on, read off the model as it is now: one at `at_ns`, and one at each
// scheduled step after it (the model already knows them, so its readings there are final until
// the next change).
void ReplayRecorder::rebuild_from(const Clock& clock, std::vector<ClockSegment>& segments,
                                  std::int64_t at_ns) {
  while (!segments.empty() && segments.back().from_ns >= at_ns) segments.pop_back();
  auto add = [&](std::int64_t from) {
    const std::int64_t elapsed = from - clock.anchor_ns;
    const std::int64_t drift = clock.model.drift_ppb();
    const std::int64_t reading = clock.model.local_at(sim::Time(from)).ns;
    segments.push_back(
        ClockSegment{from, clock.anchor_ns,
                     reading - elapsed - sim::mul_div_floor(elapsed, drift, kBillion), drift});
  };
  add(at_ns);
  for (const std::int64_t step_at : clock.scheduled_steps_ns) {
    if (step_at > segments.back().from_ns) add(step_at);
  }
}

void ReplayRecorder::on_clock_change(const sim::Event& e) {
  Clock* clock = nullptr;
  std::vector<ClockSegment>* segments = nullptr;
  if (e.node >= 0 && static_cast<std::size_t>(e.node) < node_clocks_.size()) {
    clock = &node_clocks_[static_cast<std::size_t>(e.node)];
    segments = &node_segments_[static_cast<std::size_t>(e.node)];
  } else if (e.node != sim::kNoNode && e.node == header_.topology.store_member(0)) {
    clock = &store_clock_;
    segments = &store_segments_;
  }
  if (clock == nullptr) return;
  switch (e.code) {
    case 0:  // drift: the model re-anchors so that the reading stays continuous
      if (e.a <= -kBillion) return;  // not a clock (a malformed trace); the kernel refuses it
      clock->model.set_drift_at(e.time, e.a);
      clock->anchor_ns = e.time.ns;
      break;
    case 1:
      clock->model.add_step(e.time, sim::Duration(e.b));
      break;
    case 2:
      clock->model.set_offset_at(e.time, sim::Duration(e.b));
      break;
    default:
      return;
  }
  rebuild_from(*clock, *segments, e.time.ns);
}

std::int32_t ReplayRecorder::intern(std::string_view text) {
  if (const auto it = text_ids_.find(text); it != text_ids_.end()) return it->second;
  const auto id = static_cast<std::int32_t>(texts_.size());
  texts_.emplace_back(text);
  text_ids_.emplace(std::string(text), id);
  return id;
}

void ReplayRecorder::on_event(const sim::Event& e) {
  using K = sim::EventKind;
  if (overflowed_) return;
  if (events_.size() >= max_events_) {
    overflowed_ = true;
    std::vector<ReplayEvent>().swap(events_);
    std::vector<ReplayFlight>().swap(flights_);
    std::vector<Message>().swap(messages_);
    requests_.clear();
    return;
  }
  ++events_seen_;
  if (e.kind == K::timer_fire) {
    ++timer_fires_;
    if (e.node >= 0 && static_cast<std::size_t>(e.node) < timer_fires_by_node_.size()) {
      ++timer_fires_by_node_[static_cast<std::size_t>(e.node)];
    }
    return;
  }
  ReplayEvent r;
  r.time_ns = e.time.ns;
  r.kind = e.kind;
  r.code = e.code;
  r.node = e.node;
  r.peer = e.peer;
  r.x = e.a;
  r.y = e.b;
  r.z = e.d;
  switch (e.kind) {
    case K::fault:
      r.flags = e.c != 0 ? 1 : 0;
      if (!e.text.empty()) r.text = intern(e.text);
      break;
    case K::belief:
      if (e.node >= 0 && e.code == static_cast<std::uint16_t>(sim::Role::leader) &&
          (!newest_epoch_ || e.a > *newest_epoch_)) {
        newest_epoch_ = e.a;
      }
      break;
    case K::crash:
      r.flags = e.a != 0 ? 1 : 0;
      forget_replies_to(e.node);
      break;
    case K::clock_change:
      on_clock_change(e);
      break;
    case K::store_apply: {
      r.flags = e.b != 0 ? 1 : 0;
      r.y = e.c;  // lease
      r.z = 0;    // the lease's deadline in true time, when this grants or renews one
      const bool renews = e.code == static_cast<std::uint16_t>(sim::StoreOp::lease_grant) ||
                          e.code == static_cast<std::uint16_t>(sim::StoreOp::lease_keepalive);
      if (lease_ttl_ && renews && r.flags != 0) {
        const sim::Duration ttl = std::max(*lease_ttl_, store_min_ttl_);
        r.z = e.time.ns + store_clock_.model.true_duration_for(ttl).count();
      }
      break;
    }
    case K::store_change:
      r.flags = e.c != 0 ? 1 : 0;
      r.text = intern(e.text);
      break;
    case K::raft_commit:
      r.z = e.c;  // latency
      break;
    case K::server_role:
      if (const std::int32_t m = header_.topology.store_member_index(e.node); m >= 0) {
        store_members_ = std::max(store_members_, static_cast<std::size_t>(m) + 1);
      }
      break;
    case K::store_reply:
      r.flags = e.b != 0 ? 1 : 0;
      r.y = e.c;  // error
      break;
    case K::watch_notify:
      r.text = intern(e.text);
      break;
    case K::sink_write: {
      const bool stale = newest_epoch_ && e.a < *newest_epoch_;
      r.flags = static_cast<std::uint8_t>((e.c != 0 ? 1 : 0) | (stale ? 2 : 0));
      break;
    }
    case K::sink_reply:
      r.flags = e.c != 0 ? 1 : 0;
      break;
    case K::sink_send:
      r.z = e.c;  // send delay
      break;
    case K::run_start:
    case K::run_end:
    case K::restart:
    case K::pause:
    case K::resume:
    case K::timer_fire:
    case K::msg_send:
    case K::msg_deliver:
    case K::msg_drop:
    case K::store_request:
    case K::lease_expire:
    case K::store_pause:
    case K::store_resume:
    case K::network_change:
    case K::lease_refresh:
    case K::client_failover:
    case K::server_request:
    case K::conn_break:
      if (!e.text.empty()) r.text = intern(e.text);
      break;
  }
  ELECTSIM_ASSERT(events_.size() < UINT32_MAX, "flights index events with 32 bits");
  const auto index = static_cast<std::uint32_t>(events_.size());
  events_.push_back(r);
  pair(e, index);
}

void ReplayRecorder::pair(const sim::Event& e, std::uint32_t index) {
  using K = sim::EventKind;
  using S = ReplayFlight::Status;
  switch (e.kind) {
    case K::msg_send: {
      // Ids count the run's sends from 1, so one never exceeds the events seen (which bounds
      // this table); an id of 0 (a trace older than ids) pairs nothing.
      if (e.b <= 0 || static_cast<std::uint64_t>(e.b) > events_seen_) return;
      const auto slot = static_cast<std::size_t>(e.b - 1);
      if (slot >= messages_.size()) messages_.resize(slot + 1);
      messages_[slot] = Message{index, Message::State::travelling};
      return;
    }
    case K::msg_deliver:
    case K::msg_drop: {
      if (e.b <= 0 || static_cast<std::size_t>(e.b) > messages_.size()) return;
      Message& m = messages_[static_cast<std::size_t>(e.b - 1)];
      const bool deliver = e.kind == K::msg_deliver;
      switch (m.state) {
        case Message::State::unsent:
        case Message::State::dropped_at_send:
          return;
        case Message::State::travelling:
          if (!deliver && is_at_send_drop(e.a)) {
            m.state = Message::State::dropped_at_send;  // reported right after its msg_send
            return;
          }
          m.state = Message::State::arrived;
          flights_.push_back({m.start, index, deliver ? S::arrived : S::dropped});
          return;
        case Message::State::arrived:
          flights_.push_back(
              {m.start, index, deliver ? S::duplicate_arrived : S::duplicate_dropped});
          return;
      }
      return;
    }
    case K::store_request:
      requests_[e.a] = index;
      return;
    case K::store_apply: {
      if (const auto it = requests_.find(e.d); it != requests_.end()) {
        flights_.push_back({it->second, index, S::arrived});
        requests_.erase(it);
      }
      store_replies_[ReplyKey{e.node, e.code, e.a, e.b != 0}].push_back(index);
      return;
    }
    case K::store_reply: {
      const auto it = store_replies_.find(ReplyKey{e.node, e.code, e.a, e.b != 0});
      if (it == store_replies_.end()) return;
      flights_.push_back({it->second.front(), index, S::arrived});
      it->second.pop_front();
      if (it->second.empty()) store_replies_.erase(it);
      return;
    }
    case K::sink_send:
      sink_sends_[SendKey{e.node, e.b}].push_back(index);
      return;
    case K::sink_write: {
      // The write's own flight: from the moment the writer committed it to the sink's decision.
      if (const auto it = sink_sends_.find(SendKey{e.node, e.b}); it != sink_sends_.end()) {
        flights_.push_back({it->second.front(), index, S::arrived});
        it->second.pop_front();
        if (it->second.empty()) sink_sends_.erase(it);
      }
      sink_replies_[SinkKey{e.node, e.a, e.c != 0}].push_back(index);
      return;
    }
    case K::sink_reply: {
      const auto it = sink_replies_.find(SinkKey{e.node, e.a, e.c != 0});
      if (it == sink_replies_.end()) return;
      flights_.push_back({it->second.front(), index, S::arrived});
      it->second.pop_front();
      if (it->second.empty()) sink_replies_.erase(it);
      return;
    }
    case K::run_start:
    case K::run_end:
    case K::fault:
    case K::belief:
    case K::crash:
    case K::restart:
    case K::pause:
    case K::resume:
    case K::clock_change:
    case K::timer_fire:
    case K::store_change:
    case K::lease_expire:
    case K::watch_notify:
    case K::store_pause:
    case K::store_resume:
    case K::network_change:
    case K::server_role:
    case K::raft_commit:
    case K::lease_refresh:
    case K::client_failover:
    case K::server_request:
    case K::conn_break:
      return;
  }
}

// A crash ends the node's sessions: replies on their way to it are lost without an event.
void ReplayRecorder::forget_replies_to(sim::NodeId node) {
  for (auto it = store_replies_.begin(); it != store_replies_.end();) {
    if (std::get<0>(it->first) == node) {
      requests_lost_before_ += it->second.size();
      it = store_replies_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = sink_replies_.begin(); it != sink_replies_.end();) {
    if (std::get<0>(it->first) == node) {
      requests_lost_before_ += it->second.size();
      it = sink_replies_.erase(it);
    } else {
      ++it;
    }
  }
  // Writes still inside the crashed writer died with it; one already on the wire may still
  // arrive, but its arrow is not worth a payload number a restarted writer may reuse.
  sink_sends_.erase(sink_sends_.lower_bound(SendKey{node, INT64_MIN}),
                    sink_sends_.upper_bound(SendKey{node, INT64_MAX}));
}

std::vector<ReplayFlight> ReplayRecorder::flights() const {
  std::vector<ReplayFlight> out = flights_;
  const auto end = static_cast<std::uint32_t>(events_.size());
  for (const Message& m : messages_) {
    if (m.state == Message::State::travelling) {
      out.push_back({m.start, end, ReplayFlight::Status::travelling_at_end});
    }
  }
  std::sort(out.begin(), out.end(), [](const ReplayFlight& a, const ReplayFlight& b) {
    return std::tie(a.start, a.end, a.status) < std::tie(b.start, b.end, b.status);
  });
  return out;
}

std::uint64_t ReplayRecorder::requests_lost() const {
  std::uint64_t n = requests_lost_before_ + requests_.size();
  for (const auto& [key, pending] : store_replies_) n += pending.size();
  for (const auto& [key, pending] : sink_replies_) n += pending.size();
  return n;
}

}  // namespace electsim::drawing
