// A member of a replicated store: etcd's server as a process. Members run the one Raft
// (raft/core.hpp for the election, raft/log.hpp for the log) and apply committed entries in log
// order to the same state machine as the single store (servers/store/store.hpp). After etcd 3.5:
// - every client request that writes goes through the log, and the member that took it answers
//   once it has applied it; a member without the lead forwards to its leader (etcd-io/raft's
//   MsgProp) or, knowing none, refuses with no_leader;
// - a read (get) is linearizable by ReadIndex (etcd's default ReadOnlySafe): the leader notes its
//   commit index, sends a heartbeat round, and answers once a majority has acknowledged that round
//   (it was still the leader after the read arrived). A follower forwards the read to its leader,
//   which answers the client itself (simplified: etcd's follower asks the leader for the index and
//   answers from its own state once it has applied that far). Before the leader has committed an
//   entry of its own term a read goes through the log;
// - watches are the member's own (etcd serves watches from the member the client is connected to),
//   and may resume from a revision this member still holds in its history;
// - keepalives do not go through the log (etcd commit 2e157530, "keepalives don't go through
//   raft"): only the leader's lessor renews (v3_server.go LeaseRenew; a follower forwards the
//   renewal to it, and the leader answers the client itself, as for reads). Since etcd 3.5.8 the
//   leader first confirms it still leads by a ReadIndex round (ensureLeadership, etcd-io/etcd
//   #15247): a leader cut off from its majority renews nothing. Before its lessor is primary the
//   renewal waits (ErrNotPrimary, retried by LeaseRenew); a lease already past its deadline is
//   answered "lease not found" once its revocation has applied (lessor.Renew waits on revokec);
// - reads and renewals share one ReadIndex round at a time: those that arrive while a round is
//   out wait for the next (etcd's linearizableReadLoop);
// - only the leader's lessor expires leases, on its own clock at its scan interval, by proposing
//   their revocation; on promotion it refreshes every lease (lease/lessor.go Promote): deadline =
//   now + extend (etcd: the election timeout) + the remaining TTL, the last checkpoint's with
//   lease_checkpoint, else the full TTL. Followers never see renewals, so without checkpoints a
//   new leader cannot know how old a lease's last keepalive is;
// - with lease_checkpoint, the leader checkpoints a lease's remaining TTL through the log every
//   checkpoint interval, for leases whose remaining TTL is longer than the interval
//   (scheduleCheckpointIfNeeded), and a renewal clears a set checkpoint through the log;
// - the log and the applied state are on the member's disk (etcd's WAL and backend): a crash
//   loses the unsynced tail of the log, and a restarted member keeps what it had applied.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "raft/core.hpp"
#include "raft/log.hpp"
#include "servers/store/store.hpp"
#include "sim/flat_index.hpp"
#include "sim/process.hpp"

namespace electsim::servers {

struct MemberConfig {
  StoreConfig store;
  raft::ElectionConfig raft;
  std::vector<sim::Endpoint> members;  // every member's address, by member index
  // Promotion keeps each lease's remaining TTL (etcd's lease checkpointing, --experimental-
  // enable-lease-checkpoint) instead of granting a full one.
  bool lease_checkpoint = false;
  // etcd's --experimental-lease-checkpoint-interval (default 5 minutes).
  Duration lease_checkpoint_interval = std::chrono::minutes(5);
  Duration promote_extend{0};                 // etcd: the election timeout
  std::size_t max_entries_per_append = 64;    // etcd's MaxSizePerMsg, counted in entries
  std::size_t history_limit = kWatchHistory;  // changes kept for resuming watches
};

// The durable part of a member: its log and its applied state machine.
struct MemberDisk {
  std::vector<sim::LogEntry> log;
  std::optional<Store> store;
  std::int64_t applied = 0;
  // What conflicting appends overwrote while they may not be on the disk yet: the entries from
  // `from` on, and the WAL write (the count under kLogWritesKey) that overwrote them. A restart
  // undoes, newest first, the ones its disk never saw: replaying etcd's WAL gives back the
  // entries it synced, whatever an unsynced write meant to put in their place.
  struct Overwritten {
    std::int64_t write = 0;
    std::int64_t from = 0;
    std::vector<sim::LogEntry> entries;
  };
  std::vector<Overwritten> overwritten;
};

class StoreMember final : public sim::Process, private raft::Host {
 public:
  StoreMember(std::shared_ptr<const MemberConfig> config, raft::Member self);

  void on_start(sim::ProcessContext& ctx) override;
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from,
                  const sim::Message& message) override;
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override;
  void on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_disconnect(sim::ProcessContext& ctx, sim::Endpoint peer) override;
  // campaign (etcd's MsgHup): the member starts an election now; other orders are for nodes.
  void on_command(sim::ProcessContext& ctx, sim::Command command) override;

  // White-box views for tests.
  const Store& store() const { return *disk_->store; }
  raft::State state() const { return core_.state(); }
  sim::Epoch term() const { return core_.term(); }
  raft::Member leader() const { return core_.leader(); }
  std::int64_t commit() const { return commit_; }
  std::int64_t applied() const { return disk_->applied; }
  raft::LogPosition last_log() const override { return log().last(); }
  const std::vector<sim::LogEntry>& entries() const { return disk_->log; }

  // Timer tags besides the core's.
  static constexpr sim::TimerTag kScanTag = 10;
  // A follower hands the ZooKeeper sessions its clients touched to the leader (the leader's ping).
  static constexpr sim::TimerTag kTouchTag = 11;

  static constexpr const char* kLogLengthKey = "log_length";
  static constexpr const char* kLogWritesKey = "log_writes";

 private:
  // raft::Host, on the context of the current input.
  sim::LocalTime now() const override;
  sim::TimerId set_timer(sim::Duration after_local, sim::TimerTag tag) override;
  void cancel_timer(sim::TimerId id) override;
  sim::Rng& rng() override;
  sim::DurableState& durable() override;
  void send(raft::Member to, const raft::RaftMessage& message) override;
  void broadcast(const raft::RaftMessage& message) override;
  void send_heartbeats() override;
  void on_append(raft::Member from, const raft::AppendEntries& m) override;
  void on_append_response(raft::Member from, const raft::AppendEntriesResponse& m) override;
  void on_state_change() override;
  void on_leader_stop() override;

  void take_request(sim::Endpoint client, std::uint32_t incarnation, StoreRequest&& request);
  // Leader: a read to confirm by a heartbeat round (ReadIndex); false if it must use the log.
  // Takes the command (moved from) when it is a read to confirm; false leaves it untouched.
  bool read_index(sim::StoreCommand& command);
  std::int64_t majority_round();  // the heartbeat round a majority has acknowledged
  void serve_reads();
  void clear_reads();
  // Leader, a confirmed renewal: renews and answers, or waits for the lease's revocation.
  void renew(sim::StoreCommand&& command);
  // Answers whoever waits for an answer to `command` (this member's client, or a client whose
  // request another member forwarded); traces it.
  void reply_to(const sim::StoreCommand& command, StoreReply&& reply);
  // Leader, with lease_checkpoint: scheduleCheckpointIfNeeded, and the due checkpoints.
  void schedule_checkpoint(LeaseId lease, Duration remaining);
  void propose_checkpoints();
  void propose_checkpoint(LeaseId lease, Duration remaining);
  // Leader: renewals of leases past their deadline, answered once the lease is gone.
  void settle_expired_renewals();
  void propose(sim::StoreCommand&& command);
  void wait_for(sim::Endpoint client, RequestId id);
  void send_append(raft::Member to);
  void maybe_commit();
  void commit_to(std::int64_t commit);
  void apply(const sim::LogEntry& entry, std::int64_t index);
  void answer(const sim::StoreCommand& command, StoreReply&& reply);
  void trace_apply(const sim::StoreCommand& command, const StoreReply& reply);
  void respond(raft::Member to, const raft::AppendEntriesResponse& m);
  void publish(std::int64_t index);
  void check_expiry();
  // ZooKeeper's follower side of a session ping: answered here, the touch kept for the leader.
  bool touch_session(sim::Endpoint client, std::uint32_t incarnation, const StoreRequest& request);
  void flush_touches();
  void log_changed();
  // Before an append from a leader: keeps what it is about to overwrite (MemberDisk::overwritten).
  void keep_overwritten(std::int64_t prev_index, std::span<const sim::LogEntry> entries);
  void note_sync();  // at each input: what the disk holds for sure
  void trace_role();
  raft::Member member_of(sim::Endpoint endpoint) const;
  sim::ProcessContext& ctx() const;
  raft::Log log() const { return raft::Log(disk_->log); }

  std::shared_ptr<const MemberConfig> config_;
  raft::Member self_;
  raft::Core core_;
  ServiceQueue queue_;                  // the member's capacity for its clients' requests
  sim::ProcessContext* ctx_ = nullptr;  // the kernel's context: one for the process's life
  MemberDisk* disk_ = nullptr;          // in the durable state's bulk storage
  raft::Progress progress_;
  std::int64_t commit_ = 0;
  // The longest prefix of the log known to be on disk (all of it whenever the disk is idle).
  std::int64_t durable_ = 0;
  bool promoted_ = false;  // the leader's lessor is primary (after its first entry applied)
  // Expiries proposed, not yet applied: as many as the user's lease_revoke_rate lets a few scans
  // propose, so found by hash, never by a walk.
  sim::FlatIndex revoking_;
  const sim::ReplicaMessage::Entries* incoming_ = nullptr;  // the entries of the AppendEntries
  std::int64_t incoming_round_ = 0;                         // and its heartbeat round
  // Leader: heartbeat rounds (ReadIndex) and the last round each member acknowledged.
  std::int64_t round_ = 0;
  std::vector<std::int64_t> acked_round_;
  std::vector<std::int64_t> rounds_scratch_;
  struct PendingRead {
    sim::StoreCommand command;
    std::int64_t round = 0;  // served once a majority has acknowledged this round
  };
  std::vector<PendingRead> reads_;  // in round order, served from reads_head_ on
  std::size_t reads_head_ = 0;
  // Leader: renewals waiting for its lessor to become primary, and renewals of leases past their
  // deadline waiting for the revocation. Bounded like pending_: their clients time out.
  std::vector<sim::StoreCommand> unpromoted_renewals_;
  std::vector<sim::StoreCommand> expired_renewals_;
  // Leader, with lease_checkpoint: when each scheduled checkpoint is due, in order (the interval
  // is one constant, so a queue in scheduling order is in time order: etcd's leaseCheckpointHeap).
  std::deque<std::pair<sim::LocalTime, LeaseId>> checkpoints_;
  std::vector<LeaseId> clears_;  // serve_reads: checkpoints its renewals clear
  // Requests this incarnation took and will answer, and when: the wait registry.
  struct Pending {
    sim::Endpoint client = sim::kNoNode;
    RequestId id = 0;
  };
  std::vector<Pending> pending_;  // oldest first
  static constexpr std::size_t kMaxPending = 4096;
  // Leader: when each entry of its term was appended, by index, for the commit latency.
  std::vector<std::pair<std::int64_t, sim::LocalTime>> appended_at_;
  std::vector<LeaseId> due_;
  // Follower: the sessions touched since the last flush, in the order first touched
  // (LearnerSessionTracker's touchTable), and whether the flush timer is armed.
  std::vector<std::pair<LeaseId, sim::Endpoint>> touched_;
  bool touch_timer_armed_ = false;
  StoreOutput out_;
  StoreOutput renewal_out_;  // renew()'s, always empty
};

}  // namespace electsim::servers
