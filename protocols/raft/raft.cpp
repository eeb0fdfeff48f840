// Raft leader election on the one Raft core (raft/core.hpp): this file keeps what is the election
// protocol's own, the log as its last position (Raft §5.3 modelled by its result) and the leader's
// write workload, and connects the core to the node's Context.
#include "protocols/raft/raft.hpp"

#include <algorithm>
#include <utility>

#include "sim/assert.hpp"

namespace electsim::protocols::raft {

using sim::Belief;
using sim::kNoNode;

namespace {

electsim::raft::ElectionConfig election_config(const RaftConfig& c) {
  electsim::raft::ElectionConfig e;
  e.election_timeout_min = c.election_timeout_min;
  e.election_timeout_max = c.election_timeout_max;
  e.heartbeat_interval = c.heartbeat_interval;
  e.pre_vote = c.pre_vote;
  e.check_quorum = c.check_quorum;
  e.timer_rule = c.timer_rule;
  e.tick = c.tick;
  e.check_quorum_lease = c.check_quorum_lease;
  return e;
}

// Sets the context for one call and clears it after, so the core never acts outside a call.
class Bind {
 public:
  Bind(sim::Context*& slot, sim::Context& ctx) : slot_(slot) { slot_ = &ctx; }
  ~Bind() { slot_ = nullptr; }
  Bind(const Bind&) = delete;
  Bind& operator=(const Bind&) = delete;

 private:
  sim::Context*& slot_;
};

}  // namespace

RaftNode::RaftNode(std::shared_ptr<const RaftConfig> config)
    : config_(std::move(config)),
      writer_(config_->workload),
      core_(election_config(*config_), *this) {}

// ---- Inputs -----------------------------------------------------------------------------------

void RaftNode::on_start(sim::Context& ctx) {
  Bind bind(ctx_, ctx);
  const sim::NodeId self = ctx.self();
  ELECTSIM_ASSERT(self >= 0 && static_cast<std::size_t>(self) < ctx.cluster_size(),
                  "a node id within the cluster");
  // Raft Figure 2: the log is persistent state. The configured log applies on the first start.
  sim::DurableState& durable = ctx.durable();
  const LogPosition initial = config_->initial_log_of(self);
  last_log_ =
      LogPosition{durable.get(kLogIndexKey, initial.index), durable.get(kLogTermKey, initial.term)};
  durable.set(kLogIndexKey, last_log_.index);
  durable.set(kLogTermKey, last_log_.term);
  core_.start(self, ctx.cluster_size());
}

void RaftNode::on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  Bind bind(ctx_, ctx);
  const std::optional<RaftMessage> decoded = decode(message);
  ELECTSIM_ASSERT(decoded.has_value(), "only Raft messages reach a Raft node");
  core_.step(from, *decoded);
}

void RaftNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  Bind bind(ctx_, ctx);
  if (writer_.on_timer(ctx, id, tag,
                       [this, &ctx](sim::Token token) { return may_write(ctx, token); })) {
    return;
  }
  const bool core_timer = core_.on_timer(id, tag);
  ELECTSIM_ASSERT(core_timer, "a timer tag of the Raft protocol");
}

void RaftNode::on_store_reply(sim::Context&, const sim::StoreReply&) {
  // Raft elects among its peers: it never calls the store.
}

void RaftNode::on_watch(sim::Context&, const sim::WatchEvent&) {
  // No store, no watches.
}

void RaftNode::on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) {
  Bind bind(ctx_, ctx);
  // A rejection of this term's token means a leader of a newer term has written: this one has
  // been deposed without hearing of it yet. Rejections of an earlier term's token say nothing
  // about this one.
  if (reply.accepted || core_.state() != RaftState::leader || reply.token != core_.term()) return;
  core_.step_down();
}

void RaftNode::on_command(sim::Context& ctx, sim::Command command) {
  Bind bind(ctx_, ctx);
  if (command == sim::Command::campaign) {
    // etcd's MsgHup: an election now, as if the timer had fired (a leader ignores it).
    core_.campaign();
    return;
  }
  // step_down and stop alike: the leader gives up and becomes a follower with a fresh election
  // timeout, so it does not campaign again at once; the others time out and elect a successor.
  core_.step_down();
}

// ---- The core's host --------------------------------------------------------------------------

sim::Context& RaftNode::ctx() const {
  ELECTSIM_ASSERT(ctx_ != nullptr, "the core acts only inside a call");
  return *ctx_;
}

sim::LocalTime RaftNode::now() const {
  // etcd's raft counts ticks of a time.Ticker, which a wall-clock step does not move.
  return ctx().monotonic_now();
}

sim::TimerId RaftNode::set_timer(sim::Duration after_local, sim::TimerTag tag) {
  return ctx().set_timer(after_local, tag);
}

void RaftNode::cancel_timer(sim::TimerId id) {
  ctx().cancel_timer(id);
}

sim::Rng& RaftNode::rng() {
  return ctx().rng();
}

sim::DurableState& RaftNode::durable() {
  return ctx().durable();
}

void RaftNode::send(electsim::raft::Member to, const RaftMessage& message) {
  ctx().send(to, encode(message));
}

void RaftNode::broadcast(const RaftMessage& message) {
  ctx().broadcast(encode(message));
}

void RaftNode::send_heartbeats() {
  ctx().broadcast(encode(AppendEntries{core_.term(), last_log_.index, last_log_.term, 0}));
}

void RaftNode::on_append(electsim::raft::Member from, const AppendEntries& m) {
  // Replication modelled by its result: the follower's log now ends where the leader's does,
  // unless replication to it is broken (`lagging`): then it keeps its log and still counts the
  // heartbeat, as a follower that answers AppendEntries but never catches up does.
  if (!config_->lags(ctx().self())) set_last_log(LogPosition{m.prev_index, m.prev_term});
  send(from, AppendEntriesResponse{core_.term(), true, 0});
}

void RaftNode::on_append_response(electsim::raft::Member, const AppendEntriesResponse&) {
  // The core has counted the contact for CheckQuorum; positions need no bookkeeping here.
}

void RaftNode::on_state_change() {
  switch (core_.state()) {
    case RaftState::follower:
      ctx().announce(Belief::follower(core_.leader(), core_.term()));
      return;
    case RaftState::pre_candidate:
      // A pre-candidate has not changed its term: to the checkers it is a follower knowing no
      // leader.
      ctx().announce(Belief::follower(kNoNode, core_.term()));
      return;
    case RaftState::candidate:
      ctx().announce(Belief::candidate(core_.term()));
      return;
    case RaftState::leader:
      ctx().announce(Belief::leader(core_.term()));
      return;
  }
}

void RaftNode::on_leader_start() {
  writer_.start(ctx(), core_.term());
}

void RaftNode::on_leader_stop() {
  writer_.stop(ctx());
}

// ---- Steps ------------------------------------------------------------------------------------

bool RaftNode::may_write(sim::Context& ctx, sim::Token token) {
  if (core_.state() != RaftState::leader || token != core_.term()) return false;
  // With CheckQuorum a leader cut off from a majority stops writing before the check deposes it.
  if (config_->check_quorum && !core_.quorum_active(ctx.monotonic_now())) return false;
  // The Writer sends right after a yes: the entry is appended to the leader's log (Raft §5.3,
  // kept here as the last position only), and the next heartbeat carries it to the followers.
  set_last_log(LogPosition{last_log_.index + 1, core_.term()});
  return true;
}

void RaftNode::set_last_log(LogPosition position) {
  if (position == last_log_) return;
  ELECTSIM_ASSERT(position.term <= core_.term(), "no entry is from a later term than ours");
  last_log_ = position;
  ctx().durable().set(kLogIndexKey, last_log_.index);
  ctx().durable().set(kLogTermKey, last_log_.term);
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
                   params::Problems& problems) -> std::optional<PreparedProtocol> {
      std::optional<raft::RaftConfig> config =
          raft::read_config(params, pointer, cluster.node_count, problems);
      if (!config) return std::nullopt;
      config->workload = cluster.workload;
      // Elects among its peers: no store, no leader key, the scenario's sink setting.
      PreparedProtocol prepared;
      prepared.silent_hold = config->election_timeout_min;
      // A follower times out, and a split vote costs another timeout: a few rounds at most.
      prepared.worst_recovery = 4 * config->election_timeout_max;
      prepared.factory = shared_config_factory<raft::RaftNode>(std::move(*config));
      return prepared;
    };
    // A follower campaigns once its election timeout, drawn from [min, max], passes without a
    // heartbeat: the knob is the shortest, with Raft's usual max = 2 x min, and heartbeats kept
    // well inside it.
    i.detection.what = "the election timeout (min; max = 2 x min)";
    i.detection.timing_params = {"election_timeout_min", "election_timeout_max",
                                 "heartbeat_interval"};
    i.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
      std::vector<KnobSet> sets = {{"protocol.election_timeout_min", knob_duration(d)},
                                   {"protocol.election_timeout_max", knob_duration(2 * d)}};
      if (d <= std::chrono::milliseconds(150)) {
        sets.push_back({"protocol.heartbeat_interval", knob_duration(d / 3)});
      }
      return sets;
    };
    return i;
  }();
  return info;
}

}  // namespace electsim::protocols
