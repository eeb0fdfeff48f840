// The Bully algorithm as a pure state machine (Garcia-Molina 1982, in Tanenbaum's textbook
// form): a node that suspects the coordinator asks every higher id; an Answer means a higher node
// takes over, silence means it wins and tells every lower id. Failure detection is by the
// coordinator's heartbeats; the epoch is the winner's election number, one more than any number
// its holder has seen, kept durable so a restarted node never reuses one it announced.
#include "protocols/bully/bully.hpp"

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/assert.hpp"

namespace electsim::protocols::bully {

const char* bully_state_name(BullyState state) {
  switch (state) {
    case BullyState::follower:
      return "follower";
    case BullyState::candidate:
      return "candidate";
    case BullyState::awaiting_coordinator:
      return "awaiting_coordinator";
    case BullyState::coordinator:
      return "coordinator";
  }
  return "unknown";
}

BullyNode::BullyNode(std::shared_ptr<const BullyConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {
  ELECTSIM_ASSERT(config_->answer_timeout.count() > 0, "answer_timeout is positive");
  ELECTSIM_ASSERT(config_->coordinator_timeout.count() > 0, "coordinator_timeout is positive");
  ELECTSIM_ASSERT(config_->heartbeat_interval.count() > 0, "heartbeat_interval is positive");
  ELECTSIM_ASSERT(config_->heartbeat_interval < config_->failure_timeout,
                  "heartbeats come more often than followers give up");
}

// ---- Inputs -----------------------------------------------------------------------------------

void BullyNode::on_start(sim::Context& ctx) {
  self_ = ctx.self();
  highest_seen_ = ctx.durable().get(kEpochKey, 0);
  ELECTSIM_ASSERT(highest_seen_ >= 0, "election numbers are not negative");
  const std::int64_t starts = ctx.durable().get(kStartsKey, 0);
  ctx.durable().set(kStartsKey, starts + 1);

  // Garcia-Molina 1982: a node that recovers holds an election, so a recovering higher id takes
  // over (the "bully"). On the very first start the scenario chooses who begins.
  bool holds = starts > 0;
  switch (config_->start) {
    case StartMode::all:
      holds = true;
      break;
    case StartMode::lowest: {
      const auto peers = ctx.peers();
      holds = holds || peers.empty() || self_ < peers.front();
      break;
    }
    case StartMode::none:
      break;
  }
  if (holds) {
    become_candidate(ctx);
  } else {
    // Idle: no coordinator is known, so there is no failure to detect; the first Election,
    // Coordinator or Heartbeat that arrives brings this node in.
    become_follower(ctx, sim::kNoNode, epoch_);
  }
}

void BullyNode::on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (stopped_) return;
  ELECTSIM_ASSERT(from != self_, "a node never sends to itself");
  const std::optional<BullyMessage> decoded = decode(message);
  ELECTSIM_ASSERT(decoded.has_value(), "a Bully message type");
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Election>) {
          on_election(ctx, from, m);
        } else if constexpr (std::is_same_v<T, Answer>) {
          on_answer(ctx, from, m);
        } else if constexpr (std::is_same_v<T, Coordinator>) {
          on_coordinator(ctx, from, m);
        } else {
          on_heartbeat(ctx, from, m);
        }
      },
      *decoded);
}

void BullyNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (stopped_) return;
  if (writer_.on_timer(ctx, id, tag, [this](sim::Token token) { return may_write(token); })) {
    return;
  }
  switch (tag) {
    case kAnswerTag:
      if (id != answer_timer_) return;
      answer_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == BullyState::candidate, "only a candidate waits for answers");
      // Garcia-Molina 1982: no higher node answered within T, so all of them are down: take over.
      become_coordinator(ctx);
      return;
    case kCoordinatorTag:
      if (id != coordinator_timer_) return;
      coordinator_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == BullyState::awaiting_coordinator,
                      "only an answered candidate waits for the winner");
      // The node that answered failed before it announced itself: start over.
      become_candidate(ctx);
      return;
    case kHeartbeatTag:
      if (id != heartbeat_timer_) return;
      heartbeat_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == BullyState::coordinator, "only the coordinator sends heartbeats");
      // To every node, higher ids included: one that is up again and hears a lower coordinator
      // bullies it.
      ctx.broadcast(encode(Heartbeat{epoch_}));
      arm(ctx, heartbeat_timer_, config_->heartbeat_interval, kHeartbeatTag);
      return;
    case kFailureTag:
      if (id != failure_timer_) return;
      failure_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == BullyState::follower, "only a follower watches the coordinator");
      // Nothing from the coordinator for failure_timeout: it is taken for dead.
      become_candidate(ctx);
      return;
    default:
      ELECTSIM_ASSERT(false, "a timer tag of the Bully protocol");
  }
}

void BullyNode::on_store_reply(sim::Context&, const sim::StoreReply&) {
  // Bully keeps its state in the nodes; it never calls the store.
}

void BullyNode::on_watch(sim::Context&, const sim::WatchEvent&) {
  // No watches: see on_store_reply.
}

void BullyNode::on_sink_reply(sim::Context& /*ctx*/, const sim::SinkReply& /*reply*/) {
  // Garcia-Molina's Bully (1982) knows nothing of the resource its coordinator protects: a
  // coordinator whose write the sink rejects carries on believing, as the textbook's would.
  // Learning the other side's epoch from the sink would be an invention that lets two sides of a
  // partition outbid each other's epochs through the database.
}

void BullyNode::on_command(sim::Context& ctx, sim::Command command) {
  if (stopped_) return;
  if (command == sim::Command::campaign) {
    // Garcia-Molina 1982: any node may hold an election when it thinks one is needed. A
    // coordinator ignores it, and a candidate is holding one already.
    if (state_ == BullyState::follower) become_candidate(ctx);
    return;
  }
  become_follower(ctx, sim::kNoNode, epoch_);
  if (command == sim::Command::stop) {
    // The kernel takes the node down right after this call; nothing more is to be done.
    stopped_ = true;
    return;
  }
  // step_down: leave the others failure_timeout to take over, then hold an election. With the
  // highest id up this node wins again as soon as anyone asks it: that is Bully's nature.
  arm(ctx, failure_timer_, config_->failure_timeout, kFailureTag);
}

// ---- Messages ---------------------------------------------------------------------------------

void BullyNode::on_election(sim::Context& ctx, sim::NodeId from, const Election& m) {
  ELECTSIM_ASSERT(from < self_, "Elections are sent only to higher ids");
  ELECTSIM_ASSERT(m.election_number > 0, "election numbers start at 1");
  observe(ctx, m.election_number);
  // Tanenbaum: the receiver tells the sender that it is alive and will take over, then holds an
  // election itself unless it is already holding one.
  send(ctx, from, Answer{m.election_number});
  maybe_hold_election(ctx, m.election_number);
}

void BullyNode::on_answer(sim::Context& ctx, sim::NodeId from, const Answer& m) {
  ELECTSIM_ASSERT(from > self_, "Answers come from higher ids");
  observe(ctx, m.election_number);
  // An answer to an earlier election, or one after the first, changes nothing.
  if (state_ != BullyState::candidate || m.election_number != election_number_) return;
  // Garcia-Molina 1982: a higher node is up and will take over; wait for its announcement.
  become_awaiting_coordinator(ctx);
}

void BullyNode::on_coordinator(sim::Context& ctx, sim::NodeId from, const Coordinator& m) {
  on_claim(ctx, from, m.election_number);
}

void BullyNode::on_heartbeat(sim::Context& ctx, sim::NodeId from, const Heartbeat& m) {
  if (state_ == BullyState::follower && from == coordinator_ && m.election_number == epoch_) {
    // The coordinator is alive: the failure detector starts over.
    arm(ctx, failure_timer_, config_->failure_timeout, kFailureTag);
    return;
  }
  on_claim(ctx, from, m.election_number);
}

void BullyNode::on_claim(sim::Context& ctx, sim::NodeId from, sim::Epoch epoch) {
  ELECTSIM_ASSERT(epoch > 0, "a coordinator's epoch is an election number");
  if (from < self_) {
    // A lower id must not lead while a higher one is up: bully it.
    observe(ctx, epoch);
    maybe_hold_election(ctx, epoch);
    return;
  }
  if (epoch >= highest_seen_) {
    // Between two claims of the same epoch the higher id wins, as in every Bully decision; this
    // keeps followers from flapping while a healed partition's lower coordinator steps down.
    if (state_ == BullyState::follower && coordinator_ != sim::kNoNode &&
        std::pair(epoch, from) < std::pair(epoch_, coordinator_)) {
      return;
    }
    // Accept: a candidate stops its election, a coordinator steps down.
    become_follower(ctx, from, epoch);
    return;
  }
  // A higher node claims an epoch older than one this node has seen: it would be refused by the
  // nodes that saw the newer one. An election reaches it with a number above its epoch, and it
  // wins again with a fresh one. A node already in an election, or following another
  // coordinator, has nothing to add.
  if (state_ == BullyState::coordinator ||
      (state_ == BullyState::follower && coordinator_ == sim::kNoNode)) {
    become_candidate(ctx);
  }
}

void BullyNode::maybe_hold_election(sim::Context& ctx, sim::Epoch seen) {
  switch (state_) {
    case BullyState::follower:
      become_candidate(ctx);
      return;
    case BullyState::candidate:
    case BullyState::awaiting_coordinator:
      return;  // already holding one
    case BullyState::coordinator:
      // The coordinator has won already; its heartbeats tell the lower node so. Only when the
      // lower node has seen a newer number than this epoch (it would refuse it as stale) is a
      // new election, won at once with a fresh number, needed.
      if (seen > epoch_) become_candidate(ctx);
      return;
  }
}

// ---- Roles ------------------------------------------------------------------------------------

void BullyNode::reset(sim::Context& ctx) {
  cancel(ctx, answer_timer_);
  cancel(ctx, coordinator_timer_);
  cancel(ctx, heartbeat_timer_);
  cancel(ctx, failure_timer_);
  writer_.stop(ctx);
}

void BullyNode::become_follower(sim::Context& ctx, sim::NodeId coordinator, sim::Epoch epoch) {
  ELECTSIM_ASSERT(coordinator != self_, "a node does not follow itself");
  reset(ctx);
  state_ = BullyState::follower;
  coordinator_ = coordinator;
  epoch_ = epoch;
  election_number_ = 0;
  observe(ctx, epoch);
  if (coordinator != sim::kNoNode) {
    arm(ctx, failure_timer_, config_->failure_timeout, kFailureTag);
  }
  ctx.announce(sim::Belief::follower(coordinator, epoch));
}

void BullyNode::become_candidate(sim::Context& ctx) {
  reset(ctx);
  state_ = BullyState::candidate;
  coordinator_ = sim::kNoNode;
  election_number_ = highest_seen_ + 1;
  observe(ctx, election_number_);
  const auto peers = ctx.peers();  // sorted: the higher ids are at the end
  if (peers.empty() || peers.back() < self_) {
    // Garcia-Molina 1982: nobody has a higher priority, so this node wins at once.
    become_coordinator(ctx);
    return;
  }
  ctx.announce(sim::Belief::candidate(election_number_));
  for (sim::NodeId peer : peers) {
    if (peer > self_) send(ctx, peer, Election{election_number_});
  }
  arm(ctx, answer_timer_, config_->answer_timeout, kAnswerTag);
}

void BullyNode::become_awaiting_coordinator(sim::Context& ctx) {
  ELECTSIM_ASSERT(state_ == BullyState::candidate, "only a candidate is answered");
  reset(ctx);
  state_ = BullyState::awaiting_coordinator;
  // The belief stays candidate(election_number_): the election is not over.
  arm(ctx, coordinator_timer_, config_->coordinator_timeout, kCoordinatorTag);
}

void BullyNode::become_coordinator(sim::Context& ctx) {
  ELECTSIM_ASSERT(state_ == BullyState::candidate, "only a candidate wins");
  // A number newer than ours may have arrived during the election: win with a fresh one, or the
  // nodes that saw it would refuse the announcement as stale.
  const sim::Epoch epoch = highest_seen_ > election_number_ ? highest_seen_ + 1 : election_number_;
  reset(ctx);
  state_ = BullyState::coordinator;
  coordinator_ = self_;
  epoch_ = epoch;
  election_number_ = epoch;
  observe(ctx, epoch);
  ctx.announce(sim::Belief::leader(epoch));
  // Garcia-Molina 1982: the winner tells every node of lower priority.
  for (sim::NodeId peer : ctx.peers()) {
    if (peer < self_) send(ctx, peer, Coordinator{epoch});
  }
  arm(ctx, heartbeat_timer_, config_->heartbeat_interval, kHeartbeatTag);
  writer_.start(ctx, epoch);
}

// ---- Helpers ----------------------------------------------------------------------------------

void BullyNode::observe(sim::Context& ctx, sim::Epoch election_number) {
  if (election_number <= highest_seen_) return;
  highest_seen_ = election_number;
  ctx.durable().set(kEpochKey, highest_seen_);
}

void BullyNode::arm(sim::Context& ctx, sim::TimerId& timer, sim::Duration after,
                    sim::TimerTag tag) {
  cancel(ctx, timer);
  timer = ctx.set_timer(after, tag);
}

void BullyNode::cancel(sim::Context& ctx, sim::TimerId& timer) {
  if (timer != sim::kNoTimer) ctx.cancel_timer(timer);
  timer = sim::kNoTimer;
}

}  // namespace electsim::protocols::bully

// ---- Registry entry -----------------------------------------------------------------------------

namespace electsim::protocols {

const ProtocolInfo& bully_protocol_info() {
  // Built once, on first use (thread-safe static initialisation).
  static const ProtocolInfo info = [] {
    ProtocolInfo i;
    i.name = "bully";
    i.description =
        "the Bully algorithm (Garcia-Molina 1982): the highest id that is up becomes "
        "coordinator; followers detect its failure by missing heartbeats";
    const auto params = bully::bully_params();
    i.params.assign(params.begin(), params.end());
    i.message_types = bully::message_type_names();
    i.election_message_types = {"Election", "Answer", "Coordinator"};
    i.prepare = [](const nlohmann::json& params, const std::string& pointer,
                   const ClusterInfo& cluster,
                   params::Problems& problems) -> std::optional<PreparedProtocol> {
      std::optional<bully::BullyConfig> config = bully::read_config(params, pointer, problems);
      if (!config) return std::nullopt;
      config->workload = cluster.workload;
      // Elects among its peers: no store, no leader key, the scenario's sink setting.
      PreparedProtocol prepared;
      prepared.silent_hold = config->failure_timeout;
      // Followers notice, then an election: Answer, then Coordinator, each may time out once.
      prepared.worst_recovery =
          config->failure_timeout + 2 * (config->answer_timeout + config->coordinator_timeout);
      prepared.factory = shared_config_factory<bully::BullyNode>(std::move(*config));
      return prepared;
    };
    // A follower holds an election once it has heard nothing from its coordinator this long.
    i.detection.what = "the followers' failure_timeout";
    i.detection.timing_params = {"failure_timeout", "heartbeat_interval"};
    i.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
      return std::vector<KnobSet>{{"protocol.failure_timeout", knob_duration(d)}};
    };
    return i;
  }();
  return info;
}

}  // namespace electsim::protocols
