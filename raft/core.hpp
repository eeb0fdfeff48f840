// The one Raft election core (Ongaro and Ousterhout 2014 §5.1, §5.2 and §5.4.1, with etcd-io/raft's
// PreVote and CheckQuorum, dissertation §9.6 and §6.2), shared by the `raft` election protocol and
// the store's replicated members. Shaped like etcd's raft.go: Step's term rules first, then a
// handler per message; become_follower / become_pre_candidate / become_candidate / become_leader
// reset all role state. It owns terms, votes, roles and the election, heartbeat and check-quorum
// timers. The log is its host's: the election protocol keeps only its last position, the store's
// member a replicated log (raft/log.hpp); the core asks for the last position and hands the host
// AppendEntries and their responses once the term rules have run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "raft/messages.hpp"
#include "sim/ids.hpp"
#include "sim/protocol.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace electsim::raft {

// A member of the Raft group, by its index 0..size-1 (the host maps it to a network address).
using Member = std::int32_t;
inline constexpr Member kNoMember = -1;

// When an election timer is re-armed, where the references differ.
enum class TimerRule : std::uint8_t {
  // etcd-io/raft: becomeFollower always resets the randomized election timeout, and a candidate
  // that a majority refuses becomes a follower at once (poll's VoteLost).
  etcd,
  // The paper and LogCabin (RaftConsensus::stepDown): stepping down to a higher term re-arms the
  // timer only when the server was leader (a follower or candidate keeps the timer it has), and a
  // candidate counts no refusals: it stays a candidate until its timer runs out.
  paper,
};
const char* timer_rule_name(TimerRule rule);

struct ElectionConfig {
  sim::Duration election_timeout_min = std::chrono::milliseconds(150);
  sim::Duration election_timeout_max = std::chrono::milliseconds(300);
  sim::Duration heartbeat_interval = std::chrono::milliseconds(50);
  bool pre_vote = false;
  bool check_quorum = false;
  TimerRule timer_rule = TimerRule::etcd;
  // etcd-io/raft's logical clock: 0 for timers in continuous time; otherwise every timer counts
  // whole ticks of this length on the member's clock, from a tick phase drawn when it starts
  // (etcd's node.Tick driven by a time.Ticker started with the process). Timeouts are rounded to
  // ticks: an election after R ticks with R uniform in [min/tick, max/tick], heartbeats every
  // heartbeat_interval/tick ticks.
  sim::Duration tick{0};
  // CheckQuorum's lease: a leader steps down when it has not heard from a majority within it,
  // and a follower that heard from its leader within it refuses to vote. 0: the minimum election
  // timeout (etcd's electionTimeout, which it is there).
  sim::Duration check_quorum_lease{0};
  // A planted bug, for tests only (no scenario key sets it): votes ignore the log up-to-date rule
  // of Raft §5.4.1, so a member missing committed entries can win and overwrite them. The search
  // must find it: a follower told to replace a committed entry breaks the log's invariant, and
  // members applying different entries at one index break store_safety
  // (tests/runner/search_test.cpp).
  bool planted_skip_log_check = false;

  sim::Duration quorum_lease() const {
    return check_quorum_lease.count() > 0 ? check_quorum_lease : election_timeout_min;
  }
};

enum class State : std::uint8_t { follower, pre_candidate, candidate, leader };
const char* state_name(State state);

// What the core needs of the process it runs in. Every call acts at the current event.
class Host {
 public:
  virtual ~Host() = default;
  virtual sim::LocalTime now() const = 0;
  virtual sim::TimerId set_timer(sim::Duration after_local, sim::TimerTag tag) = 0;
  virtual void cancel_timer(sim::TimerId id) = 0;
  virtual sim::Rng& rng() = 0;
  virtual sim::DurableState& durable() = 0;
  virtual void send(Member to, const RaftMessage& message) = 0;
  virtual void broadcast(const RaftMessage& message) = 0;  // to every other member, in order
  virtual LogPosition last_log() const = 0;
  // Leader: one round of AppendEntries to every other member (the heartbeat).
  virtual void send_heartbeats() = 0;
  // Follower: an AppendEntries of the current term from `from`, now this member's leader. The
  // host applies it to its log and answers with an AppendEntriesResponse.
  virtual void on_append(Member from, const AppendEntries& m) = 0;
  // Leader: a response of the current term from `from`.
  virtual void on_append_response(Member from, const AppendEntriesResponse& m) = 0;
  // After every role change, where the election protocol announces its belief.
  virtual void on_state_change() = 0;
  // Leader: the role is taken and the first heartbeats are out.
  virtual void on_leader_start() {}
  // Leader: about to give the role up.
  virtual void on_leader_stop() {}
};

class Core {
 public:
  // Timer tags the core sets; a host's own tags must differ.
  static constexpr sim::TimerTag kElectionTag = 1;     // followers and candidates
  static constexpr sim::TimerTag kHeartbeatTag = 2;    // leader: AppendEntries
  static constexpr sim::TimerTag kCheckQuorumTag = 3;  // leader with check_quorum

  // Durable keys.
  static constexpr const char* kTermKey = "term";
  static constexpr const char* kVoteKey = "vote";

  Core(const ElectionConfig& config, Host& host);

  // First start and every restart: reads term and vote from durable state (the host has set up
  // its log first) and becomes a follower, as Raft §5.2 has servers start.
  void start(Member self, std::size_t size);
  // One message from another member of the group.
  void step(Member from, const RaftMessage& message);
  // True when `tag` was the core's timer.
  bool on_timer(sim::TimerId id, sim::TimerTag tag);
  // A leader gives the role up and follows with a fresh election timeout (step_down, stop, or a
  // host's own reason); nothing for the other roles.
  void step_down();
  // A newer term learnt from outside the group's messages (a fencing rejection).
  void become_follower(sim::Epoch term, Member leader);
  // etcd's MsgHup: start an election now, as if the election timer had fired (a pre-vote first
  // with pre_vote). A leader ignores it, as etcd's does.
  void campaign();

  State state() const { return state_; }
  sim::Epoch term() const { return current_term_; }
  Member voted_for() const { return voted_for_; }
  Member leader() const { return leader_; }
  Member self() const { return self_; }
  std::size_t size() const { return peers_.size(); }
  std::size_t majority() const { return peers_.size() / 2 + 1; }
  sim::Duration election_timeout() const { return election_timeout_; }
  const ElectionConfig& config() const { return config_; }
  // Whether a leader with check_quorum has heard from a majority within an election timeout.
  bool quorum_active(sim::LocalTime now) const;
  // A member that has heard from its leader within the minimum election timeout (or leads).
  bool in_leader_lease(sim::LocalTime now) const;

 private:
  enum class Vote : std::uint8_t { none, granted, refused };
  enum class Tally : std::uint8_t { pending, won, lost };
  // What this member knows of each member of the group, by index (its own slot included).
  struct Peer {
    Vote vote = Vote::none;  // in the current (pre-)election
    bool heard = false;      // leader: a response at the current term has come
    sim::LocalTime heard_at;
  };

  void become_pre_candidate();
  void become_candidate();
  void become_leader();

  void on_request_vote(Member from, const RequestVote& m);
  void on_request_vote_response(Member from, const RequestVoteResponse& m);
  void on_append_entries(Member from, const AppendEntries& m);
  void on_append_entries_response(Member from, const AppendEntriesResponse& m);
  void on_pre_vote(Member from, const PreVote& m);
  void on_pre_vote_response(Member from, const PreVoteResponse& m);

  // The term rules of etcd-io/raft's Step; false when the message is dealt with already.
  bool step_term(Member from, const RaftMessage& message);
  void maybe_check_quorum();

  Tally record_vote(Member from, bool granted);
  bool log_up_to_date(LogPosition candidate) const;
  // Tick mode: the local time of the first tick after `t`, and the ticks in (from, to].
  sim::LocalTime next_tick_after(sim::LocalTime t) const;
  std::int64_t ticks_between(sim::LocalTime from, sim::LocalTime to) const;
  // A timer that fires `ticks` ticks from now (tick mode), or after `d` (continuous time).
  sim::TimerId set_ticked_timer(sim::Duration d, std::int64_t ticks, sim::TimerTag tag);
  std::int64_t ticks_of(sim::Duration d) const;  // d in whole ticks, at least 1
  // Time since `heard`, judged against CheckQuorum's lease (in ticks in tick mode).
  bool within_quorum_lease(sim::LocalTime heard, sim::LocalTime now) const;
  void step_down_to(sim::Epoch term);
  void note_contact(Member from, sim::LocalTime now);
  void reset_votes();
  void reset_election_timer();
  void set_term_and_vote(sim::Epoch term, Member vote);
  void cancel(sim::TimerId& timer);
  Peer& peer(Member id);

  ElectionConfig config_;
  Host& host_;
  Member self_ = kNoMember;

  // Durable (Raft Figure 2: persistent state on all servers), mirrored in the host's durable().
  sim::Epoch current_term_ = 0;
  Member voted_for_ = kNoMember;

  State state_ = State::follower;
  Member leader_ = kNoMember;
  // When this member last heard from the leader of its term (followers), for the leader lease
  // of PreVote and CheckQuorum.
  sim::LocalTime leader_heard_at_;
  std::vector<Peer> peers_;
  // The count of each answer among peers_' votes, kept as they arrive so that an answer costs
  // the same in a group of any size.
  std::size_t votes_granted_ = 0;
  std::size_t votes_refused_ = 0;

  sim::Duration election_timeout_{0};  // the one drawn at the last reset
  sim::LocalTime tick_origin_;         // tick mode: ticks fall at origin + k * tick
  sim::TimerId election_timer_ = sim::kNoTimer;
  sim::TimerId heartbeat_timer_ = sim::kNoTimer;
  sim::TimerId check_quorum_timer_ = sim::kNoTimer;
};

}  // namespace electsim::raft
