// Raft leader election (Ongaro and Ousterhout 2014, "In Search of an Understandable Consensus
// Algorithm", §5.1, §5.2 and §5.4.1) with etcd-io/raft's PreVote and CheckQuorum (Ongaro's
// dissertation §9.6 and §6.2). Structured like etcd's raft.go: Step's term rules first
// (step_term), then a handler per message; becomeFollower / becomeCandidate / becomePreCandidate
// / becomeLeader reset all role state. Time is this node's local clock; ticks become timers.
#include "protocols/raft/raft.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "sim/assert.hpp"

namespace electsim::protocols::raft {

using sim::Belief;
using sim::kNoNode;

namespace {

sim::Epoch term_of(const RaftMessage& message) {
  return std::visit(
      [](const auto& m) -> sim::Epoch {
        if constexpr (std::is_same_v<std::decay_t<decltype(m)>, PreVote>) {
          return m.next_term;
        } else {
          return m.term;
        }
      },
      message);
}

}  // namespace

const char* raft_state_name(RaftState state) {
  switch (state) {
    case RaftState::follower:
      return "follower";
    case RaftState::pre_candidate:
      return "pre-candidate";
    case RaftState::candidate:
      return "candidate";
    case RaftState::leader:
      return "leader";
  }
  return "?";
}

RaftNode::RaftNode(std::shared_ptr<const RaftConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {
  ELECTSIM_ASSERT(config_->election_timeout_min.count() > 0, "election_timeout_min is positive");
  ELECTSIM_ASSERT(config_->election_timeout_min <= config_->election_timeout_max,
                  "election_timeout_min <= election_timeout_max");
  ELECTSIM_ASSERT(config_->heartbeat_interval.count() > 0, "heartbeat_interval is positive");
  ELECTSIM_ASSERT(config_->heartbeat_interval < config_->election_timeout_min,
                  "heartbeat_interval < election_timeout_min");
}

// ---- Inputs -----------------------------------------------------------------------------------

void RaftNode::on_start(sim::Context& ctx) {
  self_ = ctx.self();
  ELECTSIM_ASSERT(self_ >= 0 && static_cast<std::size_t>(self_) < ctx.cluster_size(),
                  "a node id within the cluster");
  peers_.assign(ctx.cluster_size(), Peer{});

  // Raft Figure 2: currentTerm, votedFor and the log are persistent state, updated on stable
  // storage before responding to RPCs. The configured log applies on the first start only.
  sim::DurableState& durable = ctx.durable();
  const LogPosition initial = config_->initial_log_of(self_);
  last_log_ =
      LogPosition{durable.get(kLogIndexKey, initial.index), durable.get(kLogTermKey, initial.term)};
  const sim::Epoch stored_term = durable.get(kTermKey, 0);
  // No entry is from a term later than the server's own.
  current_term_ = std::max(stored_term, last_log_.term);
  voted_for_ = current_term_ == stored_term
                   ? static_cast<sim::NodeId>(durable.get(kVoteKey, kNoNode))
                   : kNoNode;
  set_term_and_vote(ctx, current_term_, voted_for_);
  durable.set(kLogIndexKey, last_log_.index);
  durable.set(kLogTermKey, last_log_.term);

  // Raft §5.2: "When servers start up, they begin as followers."
  state_ = RaftState::follower;
  leader_ = kNoNode;
  election_timer_ = heartbeat_timer_ = check_quorum_timer_ = sim::kNoTimer;
  become_follower(ctx, current_term_, kNoNode);
}

void RaftNode::on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const std::optional<RaftMessage> decoded = decode(message);
  ELECTSIM_ASSERT(decoded.has_value(), "only Raft messages reach a Raft node");
  ELECTSIM_ASSERT(from >= 0 && static_cast<std::size_t>(from) < peers_.size(),
                  "a message from a node of the cluster");
  ELECTSIM_ASSERT(from != self_, "a node does not message itself");
  if (!step_term(ctx, from, *decoded)) return;

  struct Dispatch {
    RaftNode& node;
    sim::Context& ctx;
    sim::NodeId from;
    void operator()(const RequestVote& m) const { node.on_request_vote(ctx, from, m); }
    void operator()(const RequestVoteResponse& m) const {
      node.on_request_vote_response(ctx, from, m);
    }
    void operator()(const AppendEntries& m) const { node.on_append_entries(ctx, from, m); }
    void operator()(const AppendEntriesResponse& m) const {
      node.on_append_entries_response(ctx, from, m);
    }
    void operator()(const PreVote& m) const { node.on_pre_vote(ctx, from, m); }
    void operator()(const PreVoteResponse& m) const { node.on_pre_vote_response(ctx, from, m); }
  };
  std::visit(Dispatch{*this, ctx, from}, *decoded);
}

void RaftNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (writer_.on_timer(ctx, id, tag,
                       [this, &ctx](sim::Token token) { return may_write(ctx, token); })) {
    return;
  }
  switch (tag) {
    case kElectionTag:
      if (id != election_timer_) return;
      election_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ != RaftState::leader, "a leader has no election timer");
      // Raft §5.2: "If a follower receives no communication over a period of time called the
      // election timeout, then it assumes there is no viable leader and begins an election".
      // A candidate whose election timed out starts another the same way (etcd: MsgHup).
      if (config_->pre_vote) {
        become_pre_candidate(ctx);
      } else {
        become_candidate(ctx);
      }
      return;
    case kHeartbeatTag:
      if (id != heartbeat_timer_) return;
      heartbeat_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == RaftState::leader, "only a leader sends heartbeats");
      broadcast_heartbeat(ctx);
      heartbeat_timer_ = ctx.set_timer(config_->heartbeat_interval, kHeartbeatTag);
      return;
    case kCheckQuorumTag:
      if (id != check_quorum_timer_) return;
      check_quorum_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == RaftState::leader, "only a leader checks its quorum");
      maybe_check_quorum(ctx);
      return;
    default:
      ELECTSIM_ASSERT(false, "a timer tag of the Raft protocol");
  }
}

void RaftNode::on_store_reply(sim::Context&, const sim::StoreReply&) {
  // Raft elects among its peers: it never calls the store.
}

void RaftNode::on_watch(sim::Context&, const sim::WatchEvent&) {
  // No store, no watches.
}

void RaftNode::on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) {
  // A rejection of this term's token means a leader of a newer term has written: this one has
  // been deposed without hearing of it yet. Rejections of an earlier term's token say nothing
  // about this one.
  if (reply.accepted || state_ != RaftState::leader || reply.token != current_term_) return;
  become_follower(ctx, current_term_, kNoNode);
}

void RaftNode::on_command(sim::Context& ctx, sim::Command) {
  // step_down and stop alike: the leader gives up and becomes a follower with a fresh election
  // timeout, so it does not campaign again at once; the others time out and elect a successor.
  if (state_ == RaftState::leader) become_follower(ctx, current_term_, kNoNode);
}

// ---- Term rules -------------------------------------------------------------------------------

bool RaftNode::step_term(sim::Context& ctx, sim::NodeId from, const RaftMessage& message) {
  const sim::Epoch term = term_of(message);
  if (term > current_term_) {
    if (std::holds_alternative<RequestVote>(message) && config_->check_quorum &&
        in_leader_lease(ctx.now())) {
      // Dissertation §4.2.3 (etcd with CheckQuorum): "if a server receives a RequestVote request
      // within the minimum election timeout of hearing from a current leader, it does not update
      // its term or grant its vote". A removed or partitioned server cannot depose a live leader.
      return false;
    }
    if (std::holds_alternative<PreVote>(message)) return true;  // asking changes no term
    if (const auto* r = std::get_if<PreVoteResponse>(&message); r != nullptr && r->granted) {
      return true;  // the term the pre-candidate asked for, not one anybody is in
    }
    // on_append_entries makes the sender the leader of its term.
    if (std::holds_alternative<AppendEntries>(message)) return true;
    // Raft §5.1: "If a candidate or leader discovers that its term is out of date, it
    // immediately reverts to follower state."
    become_follower(ctx, term, kNoNode);
    return true;
  }
  if (term < current_term_) {
    // Raft §5.1: "If a server receives a request with a stale term number, it rejects the
    // request." The refusal carries the current term, so the sender learns it is stale.
    if (std::holds_alternative<AppendEntries>(message)) {
      send(ctx, from, AppendEntriesResponse{current_term_, false});
    } else if (std::holds_alternative<RequestVote>(message)) {
      send(ctx, from, RequestVoteResponse{current_term_, false});
    } else if (std::holds_alternative<PreVote>(message)) {
      send(ctx, from, PreVoteResponse{current_term_, false});
    }
    // A response of an older term answers a question no longer asked.
    return false;
  }
  return true;
}

// ---- Handlers ---------------------------------------------------------------------------------

void RaftNode::on_request_vote(sim::Context& ctx, sim::NodeId from, const RequestVote& m) {
  ELECTSIM_ASSERT(m.term == current_term_, "step_term has brought the terms level");
  // Raft §5.2: "Each server will vote for at most one candidate in a given term, on a
  // first-come-first-served basis". A follower that knows this term's leader has no vote left to
  // give either (etcd's canVote).
  const bool can_vote = voted_for_ == from || (voted_for_ == kNoNode && leader_ == kNoNode);
  // Raft §5.4.1: "the voter denies its vote if its own log is more up-to-date than that of the
  // candidate."
  if (can_vote && log_up_to_date(LogPosition{m.last_log_index, m.last_log_term})) {
    set_term_and_vote(ctx, current_term_, from);
    // Raft Figure 2: the election timeout runs from the last vote granted as well.
    reset_election_timer(ctx);
    send(ctx, from, RequestVoteResponse{current_term_, true});
    return;
  }
  send(ctx, from, RequestVoteResponse{current_term_, false});
}

void RaftNode::on_request_vote_response(sim::Context& ctx, sim::NodeId from,
                                        const RequestVoteResponse& m) {
  // A vote of an election this node has already won, lost or left.
  if (state_ != RaftState::candidate || m.term != current_term_) return;
  if (m.granted) note_contact(from, ctx.now());
  switch (record_vote(from, m.granted)) {
    case Tally::won:
      // Raft §5.2: "A candidate wins an election if it receives votes from a majority of the
      // servers in the full cluster for the same term."
      become_leader(ctx);
      return;
    case Tally::lost:
      // etcd: a candidate refused by a majority goes back to following in its term.
      become_follower(ctx, current_term_, kNoNode);
      return;
    case Tally::pending:
      return;
  }
}

void RaftNode::on_append_entries(sim::Context& ctx, sim::NodeId from, const AppendEntries& m) {
  ELECTSIM_ASSERT(m.term >= current_term_, "step_term refuses stale AppendEntries");
  // Raft §5.2 election safety: "at most one leader can be elected in a given term".
  ELECTSIM_ASSERT(!(state_ == RaftState::leader && m.term == current_term_), "one leader per term");
  if (m.term > current_term_ || state_ != RaftState::follower || leader_ != from) {
    // Raft §5.2: "If the leader's term (included in its RPC) is at least as large as the
    // candidate's current term, then the candidate recognizes the leader as legitimate and
    // returns to follower state."
    become_follower(ctx, m.term, from);
  } else {
    reset_election_timer(ctx);
  }
  leader_heard_at_ = ctx.now();
  // Replication modelled by its result: the follower's log now ends where the leader's does.
  set_last_log(ctx, LogPosition{m.leader_last_index, m.leader_last_term});
  send(ctx, from, AppendEntriesResponse{current_term_, true});
}

void RaftNode::on_append_entries_response(sim::Context& ctx, sim::NodeId from,
                                          const AppendEntriesResponse& m) {
  if (state_ != RaftState::leader || m.term != current_term_) return;
  // etcd's RecentActive: what CheckQuorum counts.
  note_contact(from, ctx.now());
}

void RaftNode::on_pre_vote(sim::Context& ctx, sim::NodeId from, const PreVote& m) {
  ELECTSIM_ASSERT(m.next_term >= current_term_, "step_term refuses stale pre-votes");
  // etcd's canVote: a pre-vote for a later term is answered as a vote in it would be.
  const bool can_vote = m.next_term > current_term_ || voted_for_ == from ||
                        (voted_for_ == kNoNode && leader_ == kNoNode);
  // Dissertation §9.6: a server agrees only if the candidate's log is up to date and it has not
  // heard from a leader within the minimum election timeout, i.e. it too believes the leader gone.
  const bool grant = can_vote && log_up_to_date(LogPosition{m.last_log_index, m.last_log_term}) &&
                     !in_leader_lease(ctx.now());
  // Nothing changes here: no term, no vote, no timer. A granted pre-vote carries the requested
  // term, as in etcd, so that the pre-candidate can tell it from a stale answer.
  send(ctx, from, PreVoteResponse{grant ? m.next_term : current_term_, grant});
}

void RaftNode::on_pre_vote_response(sim::Context& ctx, sim::NodeId from, const PreVoteResponse& m) {
  if (state_ != RaftState::pre_candidate) return;
  // Grants name the term asked for; refusals at a higher term made this node a follower already.
  if (m.term != (m.granted ? current_term_ + 1 : current_term_)) return;
  switch (record_vote(from, m.granted)) {
    case Tally::won:
      // Dissertation §9.6: only a majority of pre-votes lets the node increment its term.
      become_candidate(ctx);
      return;
    case Tally::lost:
      become_follower(ctx, current_term_, kNoNode);
      return;
    case Tally::pending:
      return;
  }
}

// ---- Roles ------------------------------------------------------------------------------------

void RaftNode::become_follower(sim::Context& ctx, sim::Epoch term, sim::NodeId leader) {
  ELECTSIM_ASSERT(term >= current_term_, "terms only grow (Raft §5.1)");
  if (state_ == RaftState::leader) writer_.stop(ctx);
  cancel(ctx, heartbeat_timer_);
  cancel(ctx, check_quorum_timer_);
  if (term > current_term_) set_term_and_vote(ctx, term, kNoNode);
  state_ = RaftState::follower;
  leader_ = leader;
  reset_election_timer(ctx);
  ctx.announce(Belief::follower(leader, current_term_));
}

void RaftNode::become_pre_candidate(sim::Context& ctx) {
  ELECTSIM_ASSERT(state_ != RaftState::leader, "a leader does not campaign");
  state_ = RaftState::pre_candidate;
  leader_ = kNoNode;
  reset_votes();
  reset_election_timer(ctx);
  // A pre-candidate has not changed its term: to the checkers it is a follower knowing no leader.
  ctx.announce(Belief::follower(kNoNode, current_term_));
  if (record_vote(self_, true) == Tally::won) {
    become_candidate(ctx);  // a cluster of one
    return;
  }
  ctx.broadcast(encode(PreVote{current_term_ + 1, last_log_.index, last_log_.term}));
}

void RaftNode::become_candidate(sim::Context& ctx) {
  ELECTSIM_ASSERT(state_ != RaftState::leader, "a leader does not campaign");
  // Raft §5.2: "To begin an election, a follower increments its current term and transitions to
  // candidate state. It then votes for itself and issues RequestVote RPCs in parallel to each of
  // the other servers in the cluster."
  state_ = RaftState::candidate;
  leader_ = kNoNode;
  set_term_and_vote(ctx, current_term_ + 1, self_);
  reset_votes();
  reset_election_timer(ctx);
  ctx.announce(Belief::candidate(current_term_));
  if (record_vote(self_, true) == Tally::won) {
    become_leader(ctx);  // a cluster of one
    return;
  }
  ctx.broadcast(encode(RequestVote{current_term_, last_log_.index, last_log_.term}));
}

void RaftNode::become_leader(sim::Context& ctx) {
  ELECTSIM_ASSERT(state_ == RaftState::candidate, "only a candidate wins an election");
  ELECTSIM_ASSERT(voted_for_ == self_, "a leader voted for itself in its term");
  state_ = RaftState::leader;
  leader_ = self_;
  cancel(ctx, election_timer_);
  ctx.announce(Belief::leader(current_term_));
  // Raft §5.2: "It then sends heartbeat messages to all of the other servers to establish its
  // authority and prevent new elections."
  broadcast_heartbeat(ctx);
  heartbeat_timer_ = ctx.set_timer(config_->heartbeat_interval, kHeartbeatTag);
  if (config_->check_quorum) {
    // etcd checks once per (unrandomised) election timeout.
    check_quorum_timer_ = ctx.set_timer(config_->election_timeout_min, kCheckQuorumTag);
  }
  writer_.start(ctx, current_term_);
}

// ---- Steps ------------------------------------------------------------------------------------

void RaftNode::maybe_check_quorum(sim::Context& ctx) {
  // etcd CheckQuorum (dissertation §6.2): "a leader steps down if an election timeout elapses
  // without a successful round of heartbeats to a majority of its cluster".
  if (!quorum_active(ctx.now())) {
    become_follower(ctx, current_term_, kNoNode);
    return;
  }
  check_quorum_timer_ = ctx.set_timer(config_->election_timeout_min, kCheckQuorumTag);
}

bool RaftNode::may_write(sim::Context& ctx, sim::Token token) {
  if (state_ != RaftState::leader || token != current_term_) return false;
  // With CheckQuorum a leader cut off from a majority stops writing before the check deposes it.
  if (config_->check_quorum && !quorum_active(ctx.now())) return false;
  // The Writer sends right after a yes: the entry is appended to the leader's log (Raft §5.3,
  // kept here as the last position only), and the next heartbeat carries it to the followers.
  set_last_log(ctx, LogPosition{last_log_.index + 1, current_term_});
  return true;
}

// ---- Helpers ----------------------------------------------------------------------------------

RaftNode::Tally RaftNode::record_vote(sim::NodeId from, bool granted) {
  Peer& p = peer(from);
  // The first answer of each node counts (a duplicated message does not count twice).
  if (p.vote == Vote::none) p.vote = granted ? Vote::granted : Vote::refused;
  std::size_t yes = 0;
  std::size_t no = 0;
  for (const Peer& q : peers_) {
    yes += q.vote == Vote::granted ? 1 : 0;
    no += q.vote == Vote::refused ? 1 : 0;
  }
  if (yes >= majority()) return Tally::won;
  if (no >= majority()) return Tally::lost;
  return Tally::pending;
}

bool RaftNode::log_up_to_date(LogPosition candidate) const {
  // Raft §5.4.1: "If the logs have last entries with different terms, then the log with the
  // later term is more up-to-date. If the logs end with the same term, then whichever log is
  // longer is more up-to-date."
  if (candidate.term != last_log_.term) return candidate.term > last_log_.term;
  return candidate.index >= last_log_.index;
}

bool RaftNode::in_leader_lease(sim::LocalTime now) const {
  if (state_ == RaftState::leader) return true;  // a leader knows its leader is alive
  return leader_ != kNoNode && now - leader_heard_at_ < config_->election_timeout_min;
}

bool RaftNode::quorum_active(sim::LocalTime now) const {
  std::size_t active = 0;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    const Peer& p = peers_[i];
    const bool self = static_cast<sim::NodeId>(i) == self_;
    if (self || (p.heard && now - p.heard_at <= config_->election_timeout_min)) ++active;
  }
  return active >= majority();
}

void RaftNode::note_contact(sim::NodeId from, sim::LocalTime now) {
  Peer& p = peer(from);
  p.heard = true;
  p.heard_at = now;
}

void RaftNode::reset_votes() {
  for (Peer& p : peers_) p = Peer{};
}

void RaftNode::reset_election_timer(sim::Context& ctx) {
  cancel(ctx, election_timer_);
  // Raft §5.2: "election timeouts are chosen randomly from a fixed interval (e.g., 150-300ms)",
  // afresh at every reset, in whole nanoseconds from this node's own stream.
  election_timeout_ = sim::Duration(ctx.rng().between(config_->election_timeout_min.count(),
                                                      config_->election_timeout_max.count()));
  election_timer_ = ctx.set_timer(election_timeout_, kElectionTag);
}

void RaftNode::broadcast_heartbeat(sim::Context& ctx) {
  ctx.broadcast(encode(AppendEntries{current_term_, last_log_.index, last_log_.term}));
}

void RaftNode::set_term_and_vote(sim::Context& ctx, sim::Epoch term, sim::NodeId vote) {
  ELECTSIM_ASSERT(term >= current_term_, "terms only grow (Raft §5.1)");
  current_term_ = term;
  voted_for_ = vote;
  ctx.durable().set(kTermKey, current_term_);
  ctx.durable().set(kVoteKey, voted_for_);
}

void RaftNode::set_last_log(sim::Context& ctx, LogPosition position) {
  if (position == last_log_) return;
  ELECTSIM_ASSERT(position.term <= current_term_, "no entry is from a later term than ours");
  last_log_ = position;
  ctx.durable().set(kLogIndexKey, last_log_.index);
  ctx.durable().set(kLogTermKey, last_log_.term);
}

void RaftNode::send(sim::Context& ctx, sim::NodeId to, const RaftMessage& message) {
  ctx.send(to, encode(message));
}

void RaftNode::cancel(sim::Context& ctx, sim::TimerId& timer) {
  if (timer != sim::kNoTimer) ctx.cancel_timer(timer);
  timer = sim::kNoTimer;
}

RaftNode::Peer& RaftNode::peer(sim::NodeId id) {
  ELECTSIM_ASSERT(id >= 0 && static_cast<std::size_t>(id) < peers_.size(), "a node of the cluster");
  return peers_[static_cast<std::size_t>(id)];
}

}  // namespace electsim::protocols::raft

// ---- Registry entry ---------------------------------------------------------------------------

namespace electsim::protocols {

const ProtocolInfo& raft_protocol_info() {
  // Built once, on first use (thread-safe static initialisation).
  static const ProtocolInfo info = [] {
    ProtocolInfo i;
    i.name = "raft";
    i.description =
        "Raft leader election with randomized timeouts and the log up-to-date rule, optionally "
        "with etcd's PreVote and CheckQuorum";
    const auto params = raft::raft_params();
    i.params.assign(params.begin(), params.end());
    i.message_types = raft::message_type_names();
    i.election_message_types = {"RequestVote", "RequestVoteResp", "PreVote", "PreVoteResp"};
    i.prepare = [](const nlohmann::json& params, const std::string& pointer,
                   const ClusterInfo& cluster,
                   Problems& problems) -> std::optional<PreparedProtocol> {
      std::optional<raft::RaftConfig> config =
          raft::read_config(params, pointer, cluster.node_count, problems);
      if (!config) return std::nullopt;
      config->workload = cluster.workload;
      // Elects among its peers: no store, no leader key, the scenario's sink setting.
      PreparedProtocol prepared;
      prepared.factory = shared_config_factory<raft::RaftNode>(std::move(*config));
      return prepared;
    };
    return i;
  }();
  return info;
}

}  // namespace electsim::protocols
