// Raft leader election (Ongaro and Ousterhout 2014, §5.2 and §5.4.1) as a pure state machine: the
// one Raft core of raft/core.hpp (etcd-io/raft's shape, PreVote and CheckQuorum as options) over a
// log modelled by its last position only: the leader appends on each write, followers adopt the
// leader's position from its heartbeats, which is enough to make the election restriction real.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocols/raft/config.hpp"
#include "protocols/raft/messages.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "raft/core.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols {

// The registry entry: name "raft", description, parameter table, message types and prepare().
const ProtocolInfo& raft_protocol_info();

}  // namespace electsim::protocols

namespace electsim::protocols::raft {

using RaftState = electsim::raft::State;
inline const char* raft_state_name(RaftState state) {
  return electsim::raft::state_name(state);
}

// A node of the election protocol: the one Raft core (raft/core.hpp) over a log kept as its last
// position, plus the leader's write workload. The node id is the core's member index.
class RaftNode final : public sim::Protocol, private electsim::raft::Host {
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
  RaftState state() const { return core_.state(); }
  sim::Epoch term() const { return core_.term(); }
  sim::NodeId voted_for() const { return core_.voted_for(); }
  sim::NodeId leader() const { return core_.leader(); }
  sim::Duration election_timeout() const { return core_.election_timeout(); }
  const Writer& writer() const { return writer_; }

  // Timer tags, below kWriterTagBase.
  static constexpr sim::TimerTag kElectionTag = electsim::raft::Core::kElectionTag;
  static constexpr sim::TimerTag kHeartbeatTag = electsim::raft::Core::kHeartbeatTag;
  static constexpr sim::TimerTag kCheckQuorumTag = electsim::raft::Core::kCheckQuorumTag;

  // Durable keys.
  static constexpr const char* kTermKey = electsim::raft::Core::kTermKey;
  static constexpr const char* kVoteKey = electsim::raft::Core::kVoteKey;
  static constexpr const char* kLogIndexKey = "log_index";
  static constexpr const char* kLogTermKey = "log_term";

 private:
  // The core's view of this node (raft/core.hpp), on the context of the current call.
  sim::LocalTime now() const override;
  sim::TimerId set_timer(sim::Duration after_local, sim::TimerTag tag) override;
  void cancel_timer(sim::TimerId id) override;
  sim::Rng& rng() override;
  sim::DurableState& durable() override;
  void send(electsim::raft::Member to, const RaftMessage& message) override;
  void broadcast(const RaftMessage& message) override;

 public:
  LogPosition last_log() const override { return last_log_; }

 private:
  void send_heartbeats() override;
  void on_append(electsim::raft::Member from, const AppendEntries& m) override;
  void on_append_response(electsim::raft::Member from, const AppendEntriesResponse& m) override;
  void on_state_change() override;
  void on_leader_start() override;
  void on_leader_stop() override;

  bool may_write(sim::Context& ctx, sim::Token token);
  void set_last_log(LogPosition position);
  sim::Context& ctx() const;

  std::shared_ptr<const RaftConfig> config_;
  Writer writer_;
  electsim::raft::Core core_;
  sim::Context* ctx_ = nullptr;  // during a call only
  // Durable (Raft Figure 2: the log is persistent), mirrored in ctx.durable(): its last position.
  LogPosition last_log_;
};

}  // namespace electsim::protocols::raft
