// Ring election after Chang and Roberts 1979, "An improved algorithm for decentralized
// extrema-finding in circular configurations of processes" (CACM 22(5)): the largest id wins, a
// participant swallows smaller ids, and the winner's id goes once round the ring. Additions for
// failures, which the paper does not consider: Acks with a timeout close the ring around crashed
// successors, leader Heartbeats drive a failure timeout, and election numbers serve as epochs.
#include "protocols/ring/ring.hpp"

#include <algorithm>
#include <utility>

#include "sim/assert.hpp"

namespace electsim::protocols::ring {

using sim::Belief;
using sim::kNoNode;
using sim::Role;

RingNode::RingNode(std::shared_ptr<const RingConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {
  ELECTSIM_ASSERT(config_->ack_timeout.count() > 0, "ack_timeout is positive");
  ELECTSIM_ASSERT(config_->heartbeat_interval.count() > 0, "heartbeat_interval is positive");
  ELECTSIM_ASSERT(config_->heartbeat_interval < config_->failure_timeout,
                  "heartbeat_interval < failure_timeout");
}

bool RingNode::suspects(sim::NodeId node) const {
  ELECTSIM_ASSERT(node >= 0 && static_cast<std::size_t>(node) < suspected_.size(),
                  "a node of the cluster");
  return suspected_[static_cast<std::size_t>(node)];
}

sim::NodeId RingNode::successor() const {
  const std::size_t n = ring_.size();
  const std::size_t at = position_[static_cast<std::size_t>(self_)];
  for (std::size_t step = 1; step < n; ++step) {
    const sim::NodeId next = ring_[(at + step) % n];
    if (!suspected_[static_cast<std::size_t>(next)]) return next;
  }
  return self_;
}

// ---- Inputs -----------------------------------------------------------------------------------

void RingNode::on_start(sim::Context& ctx) {
  self_ = ctx.self();
  const std::size_t n = ctx.cluster_size();
  ELECTSIM_ASSERT(self_ >= 0 && static_cast<std::size_t>(self_) < n,
                  "a node id within the cluster");
  ring_ = config_->ring_of(n);
  position_.assign(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    const sim::NodeId id = ring_[i];
    ELECTSIM_ASSERT(id >= 0 && static_cast<std::size_t>(id) < n, "the ring names nodes only");
    ELECTSIM_ASSERT(position_[static_cast<std::size_t>(id)] == n, "the ring names each node once");
    position_[static_cast<std::size_t>(id)] = i;
  }
  suspected_.assign(n, false);

  // The election number is durable, so a restarted node never reuses one it has taken part in.
  sim::DurableState& durable = ctx.durable();
  epoch_ = durable.get(kEpochKey, 0);
  const std::int64_t starts = durable.get(kStartsKey, 0);
  durable.set(kStartsKey, starts + 1);
  // Sequence numbers of each life start in their own range, so an Ack sent to an earlier life
  // never matches a message of this one.
  next_sequence_ = (starts + 1) << 32;

  stopped_ = false;
  role_ = Role::follower;
  leader_ = kNoNode;
  leader_epoch_ = epoch_;
  forwarded_ = LeaderAt{};
  awaiting_.clear();
  awaiting_.reserve(8);
  heartbeat_timer_ = failure_timer_ = sim::kNoTimer;

  // A restarted node may have missed anything: it calls an election, as on a first start the
  // configured initiators do.
  if (starts > 0 || config_->starts_at_time_zero(self_)) {
    start_election(ctx);
    return;
  }
  ctx.announce(Belief::follower(kNoNode, epoch_));
  reset_failure_timer(ctx);
}

void RingNode::on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (stopped_) return;
  const std::optional<RingMessage> decoded = decode(message);
  ELECTSIM_ASSERT(decoded.has_value(), "only ring messages reach a ring node");
  ELECTSIM_ASSERT(from >= 0 && static_cast<std::size_t>(from) < ring_.size(),
                  "a message from a node of the cluster");
  ELECTSIM_ASSERT(from != self_, "a node does not message itself");
  // Hearing from a node is the evidence that ends its suspicion.
  suspected_[static_cast<std::size_t>(from)] = false;

  struct Dispatch {
    RingNode& node;
    sim::Context& ctx;
    sim::NodeId from;
    void operator()(const Election& m) const { node.on_election(ctx, from, m); }
    void operator()(const Elected& m) const { node.on_elected(ctx, from, m); }
    void operator()(const Ack& m) const { node.on_ack(ctx, from, m); }
    void operator()(const Heartbeat& m) const { node.on_heartbeat(ctx, from, m); }
  };
  std::visit(Dispatch{*this, ctx, from}, *decoded);
}

void RingNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (stopped_) return;
  if (writer_.on_timer(ctx, id, tag, [this](sim::Token token) { return may_write(token); })) {
    return;
  }
  switch (tag) {
    case kAckTag:
      on_ack_timeout(ctx, id);
      return;
    case kHeartbeatTag:
      if (id != heartbeat_timer_) return;
      heartbeat_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(role_ == Role::leader, "only a leader sends heartbeats");
      broadcast_heartbeat(ctx);
      heartbeat_timer_ = ctx.set_timer(config_->heartbeat_interval, kHeartbeatTag);
      return;
    case kFailureTag:
      if (id != failure_timer_) return;
      failure_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(role_ != Role::leader, "a leader has no failure timer");
      // Nothing from a leader (or from a running election) for failure_timeout: the leader (or
      // the election) is taken as lost, and this node initiates an election.
      start_election(ctx);
      return;
    default:
      ELECTSIM_ASSERT(false, "a timer tag of the ring protocol");
  }
}

void RingNode::on_store_reply(sim::Context&, const sim::StoreReply&) {
  // The ring elects among its peers: it never calls the store.
}

void RingNode::on_watch(sim::Context&, const sim::WatchEvent&) {
  // No store, no watches.
}

void RingNode::on_sink_reply(sim::Context& /*ctx*/, const sim::SinkReply& /*reply*/) {
  // Chang and Roberts (1979) elect over the ring alone: a leader whose write the sink rejects
  // carries on believing, as theirs would. Reacting to the sink would be an invention that lets two
  // sides of a partition outbid each other's epochs through the database.
}

void RingNode::on_command(sim::Context& ctx, sim::Command command) {
  if (stopped_) return;
  if (command == sim::Command::campaign) {
    // Chang-Roberts: any process may initiate; a leader has nothing to elect.
    if (role_ != Role::leader) start_election(ctx);
    return;
  }
  if (command == sim::Command::stop) {
    // The kernel takes the node down right after this call: release and go quiet.
    if (role_ == Role::leader) stop_leading(ctx);
    forget_awaiting(ctx);
    cancel(ctx, failure_timer_);
    role_ = Role::follower;
    leader_ = kNoNode;
    ctx.announce(Belief::follower(kNoNode, epoch_));
    stopped_ = true;
    return;
  }
  // step_down: the leader stops leading and, like every other node, waits failure_timeout
  // without a leader before it calls an election.
  if (role_ != Role::leader) return;
  become_follower(ctx, kNoNode, leader_epoch_);
}

// ---- Handlers ---------------------------------------------------------------------------------

void RingNode::on_election(sim::Context& ctx, sim::NodeId from, const Election& m) {
  send(ctx, from, Ack{m.sequence});
  const sim::Epoch k = m.election_number;
  ELECTSIM_ASSERT(k > 0, "elections are numbered from 1");
  // Of several elections the newest counts; an older one has been superseded here.
  if (k < epoch_) return;
  const bool participating = role_ == Role::candidate && k == epoch_;
  // Election k is decided as far as this node knows (it follows or is the leader of k): a
  // straggler of it, or a duplicate, has nothing left to decide.
  if (k == epoch_ && !participating) return;
  if (participating) reset_failure_timer(ctx);  // the election is alive

  if (m.candidate > self_) {
    // Chang-Roberts: a process receiving a larger number passes it on and becomes a
    // participant.
    if (!participating) become_candidate(ctx, k);
    highest_passed_ = std::max(highest_passed_, m.candidate);
    send_along(ctx, Election{m.candidate, k, 0});
    return;
  }
  if (m.candidate < self_) {
    // Chang-Roberts: a smaller number is replaced by the receiver's own, unless the receiver is
    // already a participant: it has sent a number at least its own, so the smaller one can never
    // win and is swallowed. This is what saves messages over Le Lann's algorithm.
    if (participating) return;
    become_candidate(ctx, k);
    send_along(ctx, Election{self_, k, 0});
    return;
  }
  // Chang-Roberts: a process that receives its own number has the largest one on the ring.
  ELECTSIM_ASSERT(participating, "a node's own Election returns only while it takes part");
  // Unless it has passed on a larger one in this election: then its own came round only by
  // skipping that node (suspected, perhaps wrongly: a paused node is not a crashed one), and
  // winning would risk two leaders of one epoch. Without failures this never happens: the larger
  // node swallows the smaller Election.
  if (highest_passed_ > self_) return;
  become_leader(ctx, k);
}

void RingNode::on_elected(sim::Context& ctx, sim::NodeId from, const Elected& m) {
  send(ctx, from, Ack{m.sequence});
  // Chang-Roberts: the coordinator lap ends when the message is back at the leader.
  if (m.leader == self_) return;
  const LeaderAt news{m.leader, m.election_number};
  if (news == forwarded_) return;  // a duplicate: passed on once already
  // Chang-Roberts: each process records the leader, stops participating and passes the message
  // on; one that knows of a newer election does not.
  if (!maybe_follow(ctx, m.leader, m.election_number)) return;
  forwarded_ = news;
  send_along(ctx, Elected{m.leader, m.election_number, 0});
}

void RingNode::on_ack(sim::Context& ctx, sim::NodeId from, const Ack& m) {
  const auto it = std::find_if(awaiting_.begin(), awaiting_.end(), [&](const Awaiting& a) {
    return a.sequence == m.sequence && a.to == from;
  });
  if (it == awaiting_.end()) return;  // answered already, or given up on
  ctx.cancel_timer(it->timer);
  awaiting_.erase(it);
}

void RingNode::on_heartbeat(sim::Context& ctx, sim::NodeId from, const Heartbeat& m) {
  ELECTSIM_ASSERT(m.leader == from, "a leader sends its own heartbeats");
  maybe_follow(ctx, m.leader, m.election_number);
}

void RingNode::on_ack_timeout(sim::Context& ctx, sim::TimerId id) {
  const auto it = std::find_if(awaiting_.begin(), awaiting_.end(),
                               [&](const Awaiting& a) { return a.timer == id; });
  if (it == awaiting_.end()) return;  // acknowledged after all, or forgotten
  const Awaiting lost = *it;
  awaiting_.erase(it);
  // The paper's ring never loses a process. Here a successor silent for ack_timeout is taken as
  // crashed, and the message goes to the next node of the ring: the ring closes around it.
  suspected_[static_cast<std::size_t>(lost.to)] = true;
  if (still_current(lost.message)) send_along(ctx, lost.message);
}

// ---- Roles ------------------------------------------------------------------------------------

void RingNode::become_follower(sim::Context& ctx, sim::NodeId leader, sim::Epoch epoch) {
  ELECTSIM_ASSERT(epoch >= epoch_, "a follower follows no leader older than an election it saw");
  ELECTSIM_ASSERT(leader != self_, "a node does not follow itself");
  if (role_ == Role::leader) stop_leading(ctx);
  role_ = Role::follower;
  leader_ = leader;
  leader_epoch_ = epoch;
  set_epoch(ctx, epoch);
  ctx.announce(Belief::follower(leader, epoch));
  reset_failure_timer(ctx);
}

void RingNode::become_candidate(sim::Context& ctx, sim::Epoch election_number) {
  ELECTSIM_ASSERT(election_number > epoch_, "a node joins only elections newer than any it saw");
  if (role_ == Role::leader) stop_leading(ctx);
  role_ = Role::candidate;  // the paper's participant
  leader_ = kNoNode;
  highest_passed_ = kNoNode;
  set_epoch(ctx, election_number);
  // Each new election probes the whole ring again: a node that has come back since it was
  // suspected must not be skipped for ever (it may never send to this node: only to its own
  // successor). Within one election suspicions stand, so each crashed node costs one ack_timeout
  // per sender.
  std::fill(suspected_.begin(), suspected_.end(), false);
  ctx.announce(Belief::candidate(election_number));
  reset_failure_timer(ctx);
}

void RingNode::become_leader(sim::Context& ctx, sim::Epoch epoch) {
  ELECTSIM_ASSERT(role_ == Role::candidate, "only a participant wins an election");
  ELECTSIM_ASSERT(epoch == epoch_, "the winner's epoch is the number of its own election");
  role_ = Role::leader;
  leader_ = self_;
  leader_epoch_ = epoch;
  cancel(ctx, failure_timer_);
  ctx.announce(Belief::leader(epoch));
  // Chang-Roberts: the winner becomes a non-participant and sends an elected message round the
  // ring.
  send_along(ctx, Elected{self_, epoch, 0});
  broadcast_heartbeat(ctx);
  heartbeat_timer_ = ctx.set_timer(config_->heartbeat_interval, kHeartbeatTag);
  writer_.start(ctx, epoch);
}

// ---- Steps ------------------------------------------------------------------------------------

void RingNode::start_election(sim::Context& ctx) {
  // Chang-Roberts: an initiator marks itself a participant and sends its own number to its
  // successor. The election number is one above the highest seen, so it is newer everywhere.
  become_candidate(ctx, epoch_ + 1);
  send_along(ctx, Election{self_, epoch_, 0});
}

bool RingNode::maybe_follow(sim::Context& ctx, sim::NodeId leader, sim::Epoch epoch) {
  ELECTSIM_ASSERT(leader != self_, "news of another node's leadership");
  // Leaders are ordered by (epoch, id): a later election wins, and of two leaders of one epoch
  // (possible only across a partition) the larger id, as the paper's extremum would.
  const std::pair<sim::Epoch, sim::NodeId> news{epoch, leader};
  switch (role_) {
    case Role::leader:
      if (news <= std::pair{leader_epoch_, self_}) return false;  // ours deposes it
      break;
    case Role::candidate:
      if (epoch < epoch_) return false;  // an older leader, while a newer election runs
      break;
    case Role::follower:
      if (leader == leader_ && epoch == leader_epoch_) {
        reset_failure_timer(ctx);  // the leader is alive
        return true;
      }
      if (news < std::pair{leader_epoch_, leader_}) return false;
      break;
  }
  if (leader < self_) {
    // Chang-Roberts elect the largest id. A leader below this node means this node was left out
    // of that election (skipped while suspected, cut off, or restarting): it calls a new one,
    // numbered above the leader's so that it is news everywhere.
    set_epoch(ctx, epoch);
    start_election(ctx);
    return false;
  }
  become_follower(ctx, leader, epoch);
  return true;
}

void RingNode::send_along(sim::Context& ctx, RingMessage message) {
  const sim::NodeId to = successor();
  if (const auto* e = std::get_if<Election>(&message)) {
    ELECTSIM_ASSERT(role_ == Role::candidate && e->election_number == epoch_,
                    "only a participant sends Election messages, of its own election");
    if (e->candidate != self_ && (to == self_ || passes(to, e->candidate))) {
      // The candidate was found crashed after its Election set out: nobody left on the ring can
      // accept that message, and every smaller id would pass it on for ever. Start afresh.
      start_election(ctx);
      return;
    }
    if (to == self_) {
      // Every other node is suspected: a ring of one, where the Election is back at once.
      become_leader(ctx, e->election_number);
      return;
    }
  } else {
    const auto& elected = std::get<Elected>(message);
    // The lap is over once it has passed the leader's place, even if the leader has crashed
    // since (then its absence will start a new election).
    if (to == self_ || passes(to, elected.leader)) return;
  }
  if (awaiting_.size() == kAwaitingMax) {
    ctx.cancel_timer(awaiting_.front().timer);
    awaiting_.erase(awaiting_.begin());
  }
  const Sequence sequence = next_sequence_++;
  if (auto* e = std::get_if<Election>(&message)) {
    e->sequence = sequence;
  } else {
    std::get<Elected>(message).sequence = sequence;
  }
  send(ctx, to, message);
  awaiting_.push_back(
      Awaiting{sequence, to, message, ctx.set_timer(config_->ack_timeout, kAckTag)});
}

bool RingNode::still_current(const RingMessage& message) const {
  if (const auto* e = std::get_if<Election>(&message)) {
    return role_ == Role::candidate && e->election_number == epoch_;
  }
  if (const auto* l = std::get_if<Elected>(&message)) {
    if (l->leader == self_) return role_ == Role::leader && l->election_number == leader_epoch_;
    return role_ == Role::follower && leader_ == l->leader && leader_epoch_ == l->election_number;
  }
  return false;
}

bool RingNode::passes(sim::NodeId to, sim::NodeId node) const {
  const std::size_t n = ring_.size();
  const std::size_t at = position_[static_cast<std::size_t>(self_)];
  for (std::size_t step = 1; step < n; ++step) {
    const sim::NodeId next = ring_[(at + step) % n];
    if (next == to) return false;
    if (next == node) return true;
  }
  return false;
}

bool RingNode::may_write(sim::Token token) const {
  return !stopped_ && role_ == Role::leader && token == leader_epoch_;
}

// ---- Helpers ----------------------------------------------------------------------------------

void RingNode::stop_leading(sim::Context& ctx) {
  ELECTSIM_ASSERT(role_ == Role::leader, "only a leader stops leading");
  writer_.stop(ctx);
  cancel(ctx, heartbeat_timer_);
}

void RingNode::set_epoch(sim::Context& ctx, sim::Epoch epoch) {
  if (epoch <= epoch_) return;
  epoch_ = epoch;
  ctx.durable().set(kEpochKey, epoch_);
}

void RingNode::reset_failure_timer(sim::Context& ctx) {
  cancel(ctx, failure_timer_);
  failure_timer_ = ctx.set_timer(failure_timeout(), kFailureTag);
}

sim::Duration RingNode::failure_timeout() const {
  if (role_ != Role::candidate) return config_->failure_timeout;
  // A participant's election may have to pass every other node crashed, each costing an
  // ack_timeout, before its Election comes back: without that room, elections that meet many
  // crashed nodes would be abandoned and restarted for ever.
  const auto others = static_cast<std::int64_t>(ring_.size()) - 1;
  return config_->failure_timeout + config_->ack_timeout * others;
}

void RingNode::broadcast_heartbeat(sim::Context& ctx) {
  // To every node, suspected or not: a node cut off from the ring still learns who leads.
  ctx.broadcast(encode(Heartbeat{self_, leader_epoch_}));
}

void RingNode::forget_awaiting(sim::Context& ctx) {
  for (const Awaiting& a : awaiting_) ctx.cancel_timer(a.timer);
  awaiting_.clear();
}

void RingNode::send(sim::Context& ctx, sim::NodeId to, const RingMessage& message) {
  ctx.send(to, encode(message));
}

void RingNode::cancel(sim::Context& ctx, sim::TimerId& timer) {
  if (timer != sim::kNoTimer) ctx.cancel_timer(timer);
  timer = sim::kNoTimer;
}

}  // namespace electsim::protocols::ring

// ---- Registry entry ---------------------------------------------------------------------------

namespace electsim::protocols {

const ProtocolInfo& ring_protocol_info() {
  // Built once, on first use (thread-safe static initialisation).
  static const ProtocolInfo info = [] {
    ProtocolInfo i;
    i.name = "ring";
    i.description =
        "Chang-Roberts ring election: the largest id goes round a logical ring, with Acks to "
        "skip crashed successors and leader heartbeats for failure detection";
    const auto params = ring::ring_params();
    i.params.assign(params.begin(), params.end());
    i.message_types = ring::message_type_names();
    // The paper's two messages; Acks and Heartbeats are the failure handling around them.
    i.election_message_types = {"Election", "Elected"};
    i.prepare = [](const nlohmann::json& params, const std::string& pointer,
                   const ClusterInfo& cluster,
                   params::Problems& problems) -> std::optional<PreparedProtocol> {
      std::optional<ring::RingConfig> config =
          ring::read_config(params, pointer, cluster.node_count, problems);
      if (!config) return std::nullopt;
      config->workload = cluster.workload;
      // Elects among its peers: no store, no leader key, the scenario's sink setting.
      PreparedProtocol prepared;
      prepared.silent_hold = config->failure_timeout;
      // A node notices; its election goes round the ring, an Ack timeout for each node it skips,
      // and a participant waits failure_timeout plus those before it tries again.
      // Durations reach 87600h and nodes 1000: summed in long double, capped at a day (the
      // longest healing bound a search takes).
      const long double ns = 2.0L * (static_cast<long double>(config->failure_timeout.count()) +
                                     static_cast<long double>(config->ack_timeout.count()) *
                                         static_cast<long double>(cluster.node_count));
      const sim::Duration day = std::chrono::hours(24);
      prepared.worst_recovery = ns >= static_cast<long double>(day.count())
                                    ? day
                                    : sim::Duration(static_cast<std::int64_t>(ns));
      prepared.factory = shared_config_factory<ring::RingNode>(std::move(*config));
      return prepared;
    };
    // A node starts an election once it has heard nothing from a leader this long.
    i.detection.what = "the nodes' failure_timeout";
    i.detection.timing_params = {"failure_timeout", "heartbeat_interval"};
    i.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
      return std::vector<KnobSet>{{"protocol.failure_timeout", knob_duration(d)}};
    };
    return i;
  }();
  return info;
}

}  // namespace electsim::protocols
