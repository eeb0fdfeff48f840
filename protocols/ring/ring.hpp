// Ring election (Chang and Roberts 1979) as a pure state machine, shaped like etcd-io/raft: one
// role-reset function per role, a handler per message, optional steps named maybe_<action>. The
// paper's ring is reliable; here successors acknowledge each message so the ring closes around
// crashed nodes, and the leader's heartbeats let the others notice when it is gone.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocols/registry.hpp"
#include "protocols/ring/config.hpp"
#include "protocols/ring/messages.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols {

// The registry entry: name "ring", description, parameter table, message types and prepare().
const ProtocolInfo& ring_protocol_info();

}  // namespace electsim::protocols

namespace electsim::protocols::ring {

class RingNode final : public sim::Protocol {
 public:
  explicit RingNode(std::shared_ptr<const RingConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override;
  void on_watch(sim::Context& ctx, const sim::WatchEvent& event) override;
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  // White-box views for tests. A candidate is what the paper calls a participant.
  sim::Role role() const { return role_; }
  bool participant() const { return role_ == sim::Role::candidate; }
  sim::Epoch epoch() const { return epoch_; }  // the highest election number seen
  sim::NodeId leader() const { return leader_; }
  sim::Epoch leader_epoch() const { return leader_epoch_; }
  bool suspects(sim::NodeId node) const;
  // The node this one sends Election and Elected to: the next of the ring it does not suspect
  // (itself when it suspects every other node).
  sim::NodeId successor() const;
  std::size_t awaiting_ack() const { return awaiting_.size(); }
  const Writer& writer() const { return writer_; }

  // Timer tags, below kWriterTagBase.
  static constexpr sim::TimerTag kAckTag = 1;        // an Election or Elected not yet acknowledged
  static constexpr sim::TimerTag kHeartbeatTag = 2;  // leader: Heartbeat to every node
  static constexpr sim::TimerTag kFailureTag = 3;    // followers and participants

  // Durable keys.
  static constexpr const char* kEpochKey = "epoch";
  static constexpr const char* kStartsKey = "starts";

  // A bound on messages awaiting an Ack; beyond it the oldest is no longer retried.
  static constexpr std::size_t kAwaitingMax = 1024;

 private:
  // An Election or Elected sent to a successor and not yet acknowledged.
  struct Awaiting {
    Sequence sequence = 0;
    sim::NodeId to = sim::kNoNode;
    RingMessage message;
    sim::TimerId timer = sim::kNoTimer;
  };
  struct LeaderAt {
    sim::NodeId leader = sim::kNoNode;
    sim::Epoch epoch = 0;
    bool operator==(const LeaderAt&) const = default;
  };

  // Role changes reset all role state in one place (etcd-io/raft's becomeFollower & co).
  void become_follower(sim::Context& ctx, sim::NodeId leader, sim::Epoch epoch);
  void become_candidate(sim::Context& ctx, sim::Epoch election_number);
  void become_leader(sim::Context& ctx, sim::Epoch epoch);

  void on_election(sim::Context& ctx, sim::NodeId from, const Election& m);
  void on_elected(sim::Context& ctx, sim::NodeId from, const Elected& m);
  void on_ack(sim::Context& ctx, sim::NodeId from, const Ack& m);
  void on_heartbeat(sim::Context& ctx, sim::NodeId from, const Heartbeat& m);
  void on_ack_timeout(sim::Context& ctx, sim::TimerId id);

  // Starts an election with a number one above the highest seen.
  void start_election(sim::Context& ctx);
  // News that `leader` leads with `epoch` (a Heartbeat or an Elected): follows it if it is newer
  // than what this node knows; true when this node now follows exactly that leader and epoch.
  bool maybe_follow(sim::Context& ctx, sim::NodeId leader, sim::Epoch epoch);
  // Sends an Election or Elected to the successor and waits for its Ack.
  void send_along(sim::Context& ctx, RingMessage message);
  bool still_current(const RingMessage& message) const;
  // Whether `node` lies strictly between this node and `to`, going round the ring.
  bool passes(sim::NodeId to, sim::NodeId node) const;
  bool may_write(sim::Token token) const;

  void stop_leading(sim::Context& ctx);
  void set_epoch(sim::Context& ctx, sim::Epoch epoch);
  void reset_failure_timer(sim::Context& ctx);
  // Followers: failure_timeout; participants: room for one lap past every other node crashed.
  sim::Duration failure_timeout() const;
  void broadcast_heartbeat(sim::Context& ctx);
  void forget_awaiting(sim::Context& ctx);
  void send(sim::Context& ctx, sim::NodeId to, const RingMessage& message);
  void cancel(sim::Context& ctx, sim::TimerId& timer);

  std::shared_ptr<const RingConfig> config_;
  Writer writer_;
  sim::NodeId self_ = sim::kNoNode;
  std::vector<sim::NodeId> ring_;      // ring_[i + 1] is the successor of ring_[i]
  std::vector<std::size_t> position_;  // by node id: its index in ring_
  std::vector<bool> suspected_;        // by node id
  bool stopped_ = false;               // after Command::stop: inert until taken down

  sim::Role role_ = sim::Role::follower;
  sim::Epoch epoch_ = 0;  // durable: the highest election number seen
  sim::NodeId leader_ = sim::kNoNode;
  sim::Epoch leader_epoch_ = 0;  // the epoch of leader_ (followers: equal to epoch_)
  LeaderAt forwarded_;           // the last Elected passed on, so a duplicate is not
  // Participants: the largest candidate passed on in the current election.
  sim::NodeId highest_passed_ = sim::kNoNode;

  Sequence next_sequence_ = 1;
  std::vector<Awaiting> awaiting_;  // in the order sent

  sim::TimerId heartbeat_timer_ = sim::kNoTimer;
  sim::TimerId failure_timer_ = sim::kNoTimer;
};

}  // namespace electsim::protocols::ring
