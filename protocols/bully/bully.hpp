// The Bully algorithm (Garcia-Molina 1982, "Elections in a Distributed Computing System") in
// its textbook form (Tanenbaum and van Steen, "Distributed Systems") as a pure state machine,
// shaped like etcd-io/raft: one role-reset function per role, a handler per message. The highest id
// that is up wins; the epoch is the coordinator's election number, kept durable across restarts.
#pragma once

#include <cstdint>
#include <memory>

#include "protocols/bully/config.hpp"
#include "protocols/bully/messages.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols {

// The registry entry: name "bully", description, parameter table, message types and prepare().
const ProtocolInfo& bully_protocol_info();

}  // namespace electsim::protocols

namespace electsim::protocols::bully {

// Garcia-Molina's node states, with his Election state split in two: waiting for an Answer, and
// answered, waiting for the winner's Coordinator message.
enum class BullyState : std::uint8_t { follower, candidate, awaiting_coordinator, coordinator };
const char* bully_state_name(BullyState state);

class BullyNode final : public sim::Protocol {
 public:
  explicit BullyNode(std::shared_ptr<const BullyConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override;
  void on_watch(sim::Context& ctx, const sim::WatchEvent& event) override;
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  // White-box views for tests.
  BullyState state() const { return state_; }
  sim::NodeId coordinator() const { return coordinator_; }  // kNoNode when none is known
  sim::Epoch epoch() const { return epoch_; }  // the known (or own) coordinator's epoch
  sim::Epoch election_number() const { return election_number_; }  // of the running election
  sim::Epoch highest_seen() const { return highest_seen_; }
  const Writer& writer() const { return writer_; }

  // Timer tags, below kWriterTagBase.
  static constexpr sim::TimerTag kAnswerTag = 1;       // candidate: answer_timeout
  static constexpr sim::TimerTag kCoordinatorTag = 2;  // awaiting_coordinator
  static constexpr sim::TimerTag kHeartbeatTag = 3;    // coordinator: heartbeat_interval
  static constexpr sim::TimerTag kFailureTag = 4;      // follower: failure_timeout

  // Durable keys.
  static constexpr const char* kEpochKey = "epoch";    // the highest election number seen
  static constexpr const char* kStartsKey = "starts";  // how often this node has started

 private:
  // Role changes reset all role state in one place (etcd-io/raft's becomeFollower & co.).
  void become_follower(sim::Context& ctx, sim::NodeId coordinator, sim::Epoch epoch);
  void become_candidate(sim::Context& ctx);
  void become_awaiting_coordinator(sim::Context& ctx);
  void become_coordinator(sim::Context& ctx);
  void reset(sim::Context& ctx);

  // Messages.
  void on_election(sim::Context& ctx, sim::NodeId from, const Election& m);
  void on_answer(sim::Context& ctx, sim::NodeId from, const Answer& m);
  void on_coordinator(sim::Context& ctx, sim::NodeId from, const Coordinator& m);
  void on_heartbeat(sim::Context& ctx, sim::NodeId from, const Heartbeat& m);
  // A Coordinator or a Heartbeat: `from` claims to lead with `epoch`.
  void on_claim(sim::Context& ctx, sim::NodeId from, sim::Epoch epoch);

  // Holds an election unless one is already running (Tanenbaum: "unless it is already holding
  // one"); a coordinator holds a new one only when its epoch is no longer the newest.
  void maybe_hold_election(sim::Context& ctx, sim::Epoch seen);
  void observe(sim::Context& ctx, sim::Epoch election_number);
  bool in_election() const {
    return state_ == BullyState::candidate || state_ == BullyState::awaiting_coordinator;
  }
  bool may_write(sim::Token token) const {
    return state_ == BullyState::coordinator && token == epoch_;
  }
  void send(sim::Context& ctx, sim::NodeId to, const BullyMessage& m) { ctx.send(to, encode(m)); }
  void arm(sim::Context& ctx, sim::TimerId& timer, sim::Duration after, sim::TimerTag tag);
  void cancel(sim::Context& ctx, sim::TimerId& timer);

  std::shared_ptr<const BullyConfig> config_;
  Writer writer_;
  sim::NodeId self_ = sim::kNoNode;
  bool stopped_ = false;  // after Command::stop: inert until the kernel takes the node down

  BullyState state_ = BullyState::follower;
  sim::NodeId coordinator_ = sim::kNoNode;
  sim::Epoch epoch_ = 0;
  sim::Epoch election_number_ = 0;
  // Durable: the highest election number seen in any message or used; a new election uses one
  // more, so a restarted node never reuses a number it has already announced.
  sim::Epoch highest_seen_ = 0;

  sim::TimerId answer_timer_ = sim::kNoTimer;
  sim::TimerId coordinator_timer_ = sim::kNoTimer;
  sim::TimerId heartbeat_timer_ = sim::kNoTimer;
  sim::TimerId failure_timer_ = sim::kNoTimer;
};

}  // namespace electsim::protocols::bully
