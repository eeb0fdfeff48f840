// What each process of a run lived through, as spans: an election node's beliefs, a replicated
// store member's Raft roles, when a process was down and when it was paused. The timeline
// (drawing/timeline.hpp) and the Perfetto writer (drawing/perfetto.hpp) both draw from it, so
// the rules of when a span opens and closes are written here once:
// - a role lasts until the process announces a different one, crashes or the run ends; the
//   same role announced again continues its span (as analysis/analyzer.cpp: a leader announcing
//   its own epoch again keeps its interval);
// - a crash or stop ends the pause and then the role, and opens the downtime, which a restart
//   ends; a role announced while down ends the downtime too (a stream without its restart);
// - a pause lasts until the process resumes or crashes; a longer pause on top of one still
//   running extends it, and a pause of a process that is down is no pause.
// The kernel's traces never announce a role, or pause a process, that is down, and never
// announce a belief that did not change; the last rules only keep odd streams drawable.
// Private to drawing/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/event.hpp"
#include "sim/ids.hpp"
#include "sim/protocol.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace electsim::drawing {

// Whose spans: an election node, a replicated store's member, a server with a lane of its own
// (sim::ServerLane::process), or the single store (pauses only).
enum class SpanLane : std::uint8_t { node, member, server, store };

struct SpanOwner {
  SpanLane lane = SpanLane::node;
  std::size_t index = 0;  // node id, member index, server row; 0 for the store
  sim::Endpoint endpoint = sim::kNoNode;
};

// The open spans of one process. `record` is the drawer's own: where it keeps the span (the
// timeline's index into its vectors); the model never reads it.
struct OpenRole {
  sim::Role role = sim::Role::follower;
  sim::Epoch epoch = 0;
  sim::Endpoint known_leader = sim::kNoNode;  // followers only
  sim::Time start;
  std::size_t record = 0;
};

struct OpenDown {
  bool graceful = false;  // a `stop`, not a crash
  sim::Time start;
  std::size_t record = 0;
};

struct OpenPause {
  sim::Time start;
  std::int64_t planned_ns = 0;  // of the pause that opened it
  bool extended = false;        // a longer pause came on top while it ran
  // The first instant strictly inside the pause at which a role span started or ended: a
  // drawing that nests pauses in role slices cannot nest this one.
  std::optional<sim::Time> boundary;
  std::size_t record = 0;
};

struct ProcessSpans {
  std::optional<OpenRole> role;
  std::optional<OpenDown> down;
  std::optional<OpenPause> pause;
};

// Told of every span as it opens (and may set its `record`) and as it closes. Closing calls
// come in a fixed order: at a crash the pause, then the role; at the run's end the pause, the
// role, then the downtime, process by process.
class SpanListener {
 public:
  virtual void role_opened(const SpanOwner& owner, OpenRole& span) = 0;
  virtual void role_closed(const SpanOwner& owner, const OpenRole& span, sim::Time end) = 0;
  virtual void down_opened(const SpanOwner& owner, OpenDown& span) = 0;
  virtual void down_closed(const SpanOwner& owner, const OpenDown& span, sim::Time end) = 0;
  virtual void pause_opened(const SpanOwner& owner, OpenPause& span) = 0;
  virtual void pause_closed(const SpanOwner& owner, const OpenPause& span, sim::Time end) = 0;

 protected:
  ~SpanListener() = default;
};

class SpanModel {
 public:
  // `nodes` election nodes; the store's members from `topology` (replicated when the header
  // says so, or once a member announces a role); its servers with a lane, in its order.
  SpanModel(std::size_t nodes, const sim::Topology& topology, bool replicated);
  SpanModel() = default;  // no processes

  // Takes belief, server_role, crash, restart, pause, resume, store_pause and store_resume
  // events; any other event, or one about a process it does not know, changes nothing.
  void on_event(const sim::Event& e, SpanListener& listener);
  // Closes every open span at `end`.
  void finish(sim::Time end, SpanListener& listener);

  // The newest leader epoch an election node announced so far: a sink write with a lower token
  // is stale (docs/metrics.md).
  std::optional<sim::Epoch> newest_epoch() const { return newest_epoch_; }

  bool replicated() const { return replicated_; }
  std::size_t node_count() const { return nodes_.size(); }
  std::size_t member_count() const { return members_.size(); }
  // The store's address (a replicated store's member 0), kNoNode in a world without one.
  sim::Endpoint store_endpoint() const { return store_; }
  // The servers with a lane of their own, by row.
  const std::vector<sim::Endpoint>& server_rows() const { return server_rows_; }

  bool is_node(sim::Endpoint e) const {
    return e >= 0 && static_cast<std::size_t>(e) < nodes_.size();
  }
  // The member index of the store's server at `e`, replicated or not, or nullopt.
  std::optional<std::size_t> member_index(sim::Endpoint e) const;
  // The member at `e` of a replicated store, or nullopt.
  std::optional<std::size_t> member_at(sim::Endpoint e) const;
  // The row of the server at `e`, or nullopt.
  std::optional<std::size_t> server_row(sim::Endpoint e) const;

  const ProcessSpans& node(std::size_t n) const { return nodes_[n]; }
  const ProcessSpans& member(std::size_t m) const { return members_[m]; }
  const ProcessSpans& server(std::size_t row) const { return servers_[row]; }
  const ProcessSpans& store() const { return store_spans_; }

  // Calls `visit(owner, spans)` for every process, in the order finish closes them: nodes,
  // members, servers, the store.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i) visit(node_owner(i), nodes_[i]);
    for (std::size_t m = 0; m < members_.size(); ++m) visit(member_owner(m), members_[m]);
    for (std::size_t r = 0; r < servers_.size(); ++r) visit(server_owner(r), servers_[r]);
    visit(store_owner(), store_spans_);
  }

 private:
  SpanOwner node_owner(std::size_t n) const {
    return {SpanLane::node, n, static_cast<sim::Endpoint>(n)};
  }
  SpanOwner member_owner(std::size_t m) const {
    return {SpanLane::member, m, member_endpoints_[m]};
  }
  SpanOwner server_owner(std::size_t row) const {
    return {SpanLane::server, row, server_rows_[row]};
  }
  SpanOwner store_owner() const { return {SpanLane::store, 0, store_}; }

  // The process an event about `e` is drawn on: a replicated store's member, a server with a
  // lane, an election node, or (for `pause` and store_pause only) the single store.
  ProcessSpans* find(sim::Endpoint e, bool store_too, SpanOwner& owner);

  void announce(const SpanOwner& owner, ProcessSpans& p, OpenRole next, SpanListener& listener);
  void crash(const SpanOwner& owner, ProcessSpans& p, sim::Time at, bool graceful,
             SpanListener& listener);
  static void pause(const SpanOwner& owner, ProcessSpans& p, sim::Time at, std::int64_t planned,
                    SpanListener& listener);
  static void close_role(const SpanOwner& owner, ProcessSpans& p, sim::Time at,
                         SpanListener& listener);
  static void close_down(const SpanOwner& owner, ProcessSpans& p, sim::Time at,
                         SpanListener& listener);
  static void close_pause(const SpanOwner& owner, ProcessSpans& p, sim::Time at,
                          SpanListener& listener);
  // A role span starts or ends at `at`.
  static void role_boundary(ProcessSpans& p, sim::Time at);

  bool replicated_ = false;
  std::vector<sim::Endpoint> member_endpoints_;  // the store's members, by index
  sim::Endpoint store_ = sim::kNoNode;           // the single store's address (its member 0)
  std::vector<ProcessSpans> nodes_;
  std::vector<ProcessSpans> members_;
  std::vector<sim::Endpoint> server_rows_;
  std::vector<ProcessSpans> servers_;
  ProcessSpans store_spans_;
  std::optional<sim::Epoch> newest_epoch_;
};

}  // namespace electsim::drawing
