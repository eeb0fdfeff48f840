// Raft leader election (Ongaro and Ousterhout 2014, §5.2 and §5.4.1) as a pure state machine,
// shaped like etcd-io/raft: one role-reset function per role, a handler per message, and etcd's
// PreVote (dissertation §9.6) and CheckQuorum (dissertation §6.2) as options. Log replication is
// modelled by its last position only: the leader appends on each write, followers adopt the
// leader's position from its heartbeats, which is enough to make the election restriction real.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocols/raft/config.hpp"
#include "protocols/raft/messages.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols {

// The registry entry: name "raft", description, parameter table, message types and prepare().
const ProtocolInfo& raft_protocol_info();

}  // namespace electsim::protocols

namespace electsim::protocols::raft {

enum class RaftState : std::uint8_t { follower, pre_candidate, candidate, leader };
const char* raft_state_name(RaftState state);

class RaftNode final : public sim::Protocol {
 public:
  explicit RaftNode(std::shared_ptr<const RaftConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override;
  void on_watch(sim::Context& ctx, const sim::WatchEvent& event) override;
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  // White-box views for tests.
  RaftState state() const { return state_; }
  sim::Epoch term() const { return current_term_; }
  sim::NodeId voted_for() const { return voted_for_; }
  sim::NodeId leader() const { return leader_; }
  LogPosition last_log() const { return last_log_; }
  sim::Duration election_timeout() const { return election_timeout_; }
  const Writer& writer() const { return writer_; }

  // Timer tags, below kWriterTagBase.
  static constexpr sim::TimerTag kElectionTag = 1;     // followers and candidates
  static constexpr sim::TimerTag kHeartbeatTag = 2;    // leader: empty AppendEntries
  static constexpr sim::TimerTag kCheckQuorumTag = 3;  // leader with check_quorum

  // Durable keys.
  static constexpr const char* kTermKey = "term";
  static constexpr const char* kVoteKey = "vote";
  static constexpr const char* kLogIndexKey = "log_index";
  static constexpr const char* kLogTermKey = "log_term";

 private:
  enum class Vote : std::uint8_t { none, granted, refused };
  enum class Tally : std::uint8_t { pending, won, lost };
  // What this node knows of each node of the cluster, by node id (its own slot included).
  struct Peer {
    Vote vote = Vote::none;  // in the current (pre-)election
    bool heard = false;      // leader: a response at the current term has come
    sim::LocalTime heard_at;
  };

  // Role changes reset all role state in one place (etcd-io/raft's becomeFollower & co).
  void become_follower(sim::Context& ctx, sim::Epoch term, sim::NodeId leader);
  void become_pre_candidate(sim::Context& ctx);
  void become_candidate(sim::Context& ctx);
  void become_leader(sim::Context& ctx);

  // One handler per message, called once the term rules common to all of them have run.
  void on_request_vote(sim::Context& ctx, sim::NodeId from, const RequestVote& m);
  void on_request_vote_response(sim::Context& ctx, sim::NodeId from, const RequestVoteResponse& m);
  void on_append_entries(sim::Context& ctx, sim::NodeId from, const AppendEntries& m);
  void on_append_entries_response(sim::Context& ctx, sim::NodeId from,
                                  const AppendEntriesResponse& m);
  void on_pre_vote(sim::Context& ctx, sim::NodeId from, const PreVote& m);
  void on_pre_vote_response(sim::Context& ctx, sim::NodeId from, const PreVoteResponse& m);

  // The term rules of etcd-io/raft's Step; false when the message is dealt with already.
  bool step_term(sim::Context& ctx, sim::NodeId from, const RaftMessage& message);

  void maybe_check_quorum(sim::Context& ctx);
  bool may_write(sim::Context& ctx, sim::Token token);

  Tally record_vote(sim::NodeId from, bool granted);
  bool log_up_to_date(LogPosition candidate) const;
  bool in_leader_lease(sim::LocalTime now) const;
  bool quorum_active(sim::LocalTime now) const;
  std::size_t majority() const { return peers_.size() / 2 + 1; }
  void note_contact(sim::NodeId from, sim::LocalTime now);
  void reset_votes();
  void reset_election_timer(sim::Context& ctx);
  void broadcast_heartbeat(sim::Context& ctx);
  void set_term_and_vote(sim::Context& ctx, sim::Epoch term, sim::NodeId vote);
  void set_last_log(sim::Context& ctx, LogPosition position);
  void send(sim::Context& ctx, sim::NodeId to, const RaftMessage& message);
  void cancel(sim::Context& ctx, sim::TimerId& timer);
  Peer& peer(sim::NodeId id);

  std::shared_ptr<const RaftConfig> config_;
  Writer writer_;
  sim::NodeId self_ = sim::kNoNode;

  // Durable (Raft Figure 2: persistent state on all servers), mirrored in ctx.durable().
  sim::Epoch current_term_ = 0;
  sim::NodeId voted_for_ = sim::kNoNode;
  LogPosition last_log_;

  RaftState state_ = RaftState::follower;
  sim::NodeId leader_ = sim::kNoNode;
  // When this node last heard from the leader of its term (followers), for the leader lease of
  // PreVote and CheckQuorum.
  sim::LocalTime leader_heard_at_;
  std::vector<Peer> peers_;

  sim::Duration election_timeout_{0};  // the one drawn at the last reset
  sim::TimerId election_timer_ = sim::kNoTimer;
  sim::TimerId heartbeat_timer_ = sim::kNoTimer;
  sim::TimerId check_quorum_timer_ = sim::kNoTimer;
};

}  // namespace electsim::protocols::raft
