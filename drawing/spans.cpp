// The span model (drawing/spans.hpp): the rules of when a role, a downtime or a pause opens and
// closes, for every process a drawing shows.
#include "drawing/spans.hpp"

#include <algorithm>

namespace electsim::drawing {

namespace {

constexpr auto kLastRole = static_cast<std::uint16_t>(sim::Role::leader);

}  // namespace

SpanModel::SpanModel(std::size_t nodes, const sim::Topology& topology, bool replicated)
    : replicated_(replicated), store_(topology.store_member(0)), nodes_(nodes) {
  for (std::size_t m = 0; m < topology.store_members(); ++m) {
    member_endpoints_.push_back(topology.store_member(m));
  }
  members_.resize(member_endpoints_.size());
  for (const sim::NamedEndpoint& server : topology.servers()) {
    if (server.traits.lane == sim::ServerLane::process) server_rows_.push_back(server.address);
  }
  servers_.resize(server_rows_.size());
}

std::optional<std::size_t> SpanModel::member_index(sim::Endpoint e) const {
  if (e >= 0) return std::nullopt;
  const auto it = std::find(member_endpoints_.begin(), member_endpoints_.end(), e);
  if (it == member_endpoints_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - member_endpoints_.begin());
}

std::optional<std::size_t> SpanModel::member_at(sim::Endpoint e) const {
  if (!replicated_) return std::nullopt;
  return member_index(e);
}

std::optional<std::size_t> SpanModel::server_row(sim::Endpoint e) const {
  if (e >= 0) return std::nullopt;
  const auto it = std::find(server_rows_.begin(), server_rows_.end(), e);
  if (it == server_rows_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - server_rows_.begin());
}

ProcessSpans* SpanModel::find(sim::Endpoint e, bool store_too, SpanOwner& owner) {
  if (const auto m = member_at(e)) {
    owner = member_owner(*m);
    return &members_[*m];
  }
  if (const auto row = server_row(e)) {
    owner = server_owner(*row);
    return &servers_[*row];
  }
  if (is_node(e)) {
    owner = node_owner(static_cast<std::size_t>(e));
    return &nodes_[static_cast<std::size_t>(e)];
  }
  if (store_too && e == store_ && e != sim::kNoNode) {
    owner = store_owner();
    return &store_spans_;
  }
  return nullptr;
}

void SpanModel::on_event(const sim::Event& e, SpanListener& listener) {
  SpanOwner owner;
  switch (e.kind) {
    case sim::EventKind::belief: {
      if (!is_node(e.node) || e.code > kLastRole) return;
      const auto role = static_cast<sim::Role>(e.code);
      const sim::Endpoint known =
          role == sim::Role::follower && e.b >= 0 ? static_cast<sim::Endpoint>(e.b) : sim::kNoNode;
      const auto n = static_cast<std::size_t>(e.node);
      announce(node_owner(n), nodes_[n], OpenRole{role, e.a, known, e.time, 0}, listener);
      if (role == sim::Role::leader && (!newest_epoch_ || e.a > *newest_epoch_)) {
        newest_epoch_ = e.a;
      }
      return;
    }
    case sim::EventKind::server_role: {
      const std::optional<std::size_t> m = member_index(e.node);
      if (!m || e.code > kLastRole) return;
      replicated_ = true;  // a stream whose header did not say so still shows its members
      const auto role = static_cast<sim::Role>(e.code);
      const auto known = static_cast<sim::Endpoint>(e.b);
      const sim::Endpoint leader =
          role == sim::Role::follower && e.b != sim::kNoNode && member_index(known) ? known
                                                                                    : sim::kNoNode;
      announce(member_owner(*m), members_[*m], OpenRole{role, e.a, leader, e.time, 0}, listener);
      return;
    }
    case sim::EventKind::crash:
      if (ProcessSpans* p = find(e.node, false, owner))
        crash(owner, *p, e.time, e.a != 0, listener);
      return;
    case sim::EventKind::restart:
      if (ProcessSpans* p = find(e.node, false, owner)) close_down(owner, *p, e.time, listener);
      return;
    case sim::EventKind::pause:
    case sim::EventKind::store_pause:
      // A replicated store's store_pause stalls its member 0, the process at the store's address.
      if (ProcessSpans* p = find(e.node, true, owner)) pause(owner, *p, e.time, e.a, listener);
      return;
    case sim::EventKind::resume:
    case sim::EventKind::store_resume:
      if (ProcessSpans* p = find(e.node, true, owner)) close_pause(owner, *p, e.time, listener);
      return;
    case sim::EventKind::run_start:
    case sim::EventKind::run_end:
    case sim::EventKind::fault:
    case sim::EventKind::timer_fire:
    case sim::EventKind::msg_send:
    case sim::EventKind::msg_deliver:
    case sim::EventKind::msg_drop:
    case sim::EventKind::store_request:
    case sim::EventKind::store_apply:
    case sim::EventKind::store_reply:
    case sim::EventKind::store_change:
    case sim::EventKind::lease_expire:
    case sim::EventKind::lease_refresh:
    case sim::EventKind::watch_notify:
    case sim::EventKind::sink_send:
    case sim::EventKind::sink_write:
    case sim::EventKind::sink_reply:
    case sim::EventKind::clock_change:
    case sim::EventKind::network_change:
    case sim::EventKind::raft_commit:
    case sim::EventKind::server_request:
    case sim::EventKind::client_failover:
    case sim::EventKind::conn_break:
      return;
  }
}

void SpanModel::finish(sim::Time end, SpanListener& listener) {
  const auto close_all = [&](const SpanOwner& owner, ProcessSpans& p) {
    close_pause(owner, p, end, listener);
    close_role(owner, p, end, listener);
    close_down(owner, p, end, listener);
  };
  for (std::size_t i = 0; i < nodes_.size(); ++i) close_all(node_owner(i), nodes_[i]);
  for (std::size_t m = 0; m < members_.size(); ++m) close_all(member_owner(m), members_[m]);
  for (std::size_t r = 0; r < servers_.size(); ++r) close_all(server_owner(r), servers_[r]);
  close_all(store_owner(), store_spans_);
}

void SpanModel::announce(const SpanOwner& owner, ProcessSpans& p, OpenRole next,
                         SpanListener& listener) {
  if (p.role && p.role->role == next.role && p.role->epoch == next.epoch &&
      p.role->known_leader == next.known_leader) {
    return;
  }
  close_down(owner, p, next.start, listener);
  close_role(owner, p, next.start, listener);
  role_boundary(p, next.start);
  p.role = next;
  listener.role_opened(owner, *p.role);
}

void SpanModel::crash(const SpanOwner& owner, ProcessSpans& p, sim::Time at, bool graceful,
                      SpanListener& listener) {
  close_pause(owner, p, at, listener);
  close_role(owner, p, at, listener);
  if (p.down) return;
  p.down = OpenDown{graceful, at, 0};
  listener.down_opened(owner, *p.down);
}

void SpanModel::pause(const SpanOwner& owner, ProcessSpans& p, sim::Time at, std::int64_t planned,
                      SpanListener& listener) {
  if (p.down) return;
  if (p.pause) {
    p.pause->extended = true;  // a longer pause on top of one still running keeps its span
    return;
  }
  p.pause = OpenPause{at, planned, false, std::nullopt, 0};
  listener.pause_opened(owner, *p.pause);
}

void SpanModel::role_boundary(ProcessSpans& p, sim::Time at) {
  if (p.pause && at > p.pause->start && !p.pause->boundary) p.pause->boundary = at;
}

void SpanModel::close_role(const SpanOwner& owner, ProcessSpans& p, sim::Time at,
                           SpanListener& listener) {
  if (!p.role) return;
  role_boundary(p, at);
  const OpenRole span = *p.role;
  p.role.reset();
  listener.role_closed(owner, span, at);
}

void SpanModel::close_down(const SpanOwner& owner, ProcessSpans& p, sim::Time at,
                           SpanListener& listener) {
  if (!p.down) return;
  const OpenDown span = *p.down;
  p.down.reset();
  listener.down_closed(owner, span, at);
}

void SpanModel::close_pause(const SpanOwner& owner, ProcessSpans& p, sim::Time at,
                            SpanListener& listener) {
  if (!p.pause) return;
  const OpenPause span = *p.pause;
  p.pause.reset();
  listener.pause_closed(owner, span, at);
}

}  // namespace electsim::drawing
