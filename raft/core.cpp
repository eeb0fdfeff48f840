// The one Raft election core: see raft/core.hpp. Comments quote the paper (Ongaro and Ousterhout
// 2014, "In Search of an Understandable Consensus Algorithm") and Ongaro's dissertation.
#include "raft/core.hpp"

#include <algorithm>
#include <type_traits>

#include "sim/assert.hpp"

namespace electsim::raft {

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

const char* timer_rule_name(TimerRule rule) {
  return rule == TimerRule::etcd ? "etcd" : "paper";
}

const char* state_name(State state) {
  switch (state) {
    case State::follower:
      return "follower";
    case State::pre_candidate:
      return "pre-candidate";
    case State::candidate:
      return "candidate";
    case State::leader:
      return "leader";
  }
  return "?";
}

Core::Core(const ElectionConfig& config, Host& host) : config_(config), host_(host) {
  ELECTSIM_ASSERT(config_.election_timeout_min.count() > 0, "election_timeout_min is positive");
  ELECTSIM_ASSERT(config_.election_timeout_min <= config_.election_timeout_max,
                  "election_timeout_min <= election_timeout_max");
  ELECTSIM_ASSERT(config_.heartbeat_interval.count() > 0, "heartbeat_interval is positive");
  ELECTSIM_ASSERT(config_.heartbeat_interval < config_.election_timeout_min,
                  "heartbeat_interval < election_timeout_min");
  ELECTSIM_ASSERT(config_.tick.count() >= 0, "tick is zero (continuous) or positive");
  ELECTSIM_ASSERT(config_.tick <= config_.heartbeat_interval, "a heartbeat is at least one tick");
  ELECTSIM_ASSERT(config_.check_quorum_lease.count() >= 0, "check_quorum_lease is not negative");
}

// ---- Inputs -----------------------------------------------------------------------------------

void Core::start(Member self, std::size_t size) {
  ELECTSIM_ASSERT(self >= 0 && static_cast<std::size_t>(self) < size, "a member of the group");
  self_ = self;
  peers_.assign(size, Peer{});
  votes_granted_ = votes_refused_ = 0;
  // Raft Figure 2: currentTerm and votedFor are persistent state, updated on stable storage
  // before responding to RPCs.
  const sim::DurableState& durable = host_.durable();
  const sim::Epoch stored_term = durable.get(kTermKey, 0);
  // No entry is from a term later than the server's own.
  current_term_ = std::max(stored_term, host_.last_log().term);
  voted_for_ = current_term_ == stored_term ? static_cast<Member>(durable.get(kVoteKey, kNoMember))
                                            : kNoMember;
  set_term_and_vote(current_term_, voted_for_);
  // Raft §5.2: "When servers start up, they begin as followers."
  state_ = State::follower;
  leader_ = kNoMember;
  election_timer_ = heartbeat_timer_ = check_quorum_timer_ = sim::kNoTimer;
  if (config_.tick.count() > 0) {
    // etcd's ticker starts with the process: its phase against the other members' is arbitrary.
    // Drawn only in tick mode, so that continuous-time runs keep their streams.
    tick_origin_ = host_.now() + sim::Duration(host_.rng().between(0, config_.tick.count() - 1));
  }
  become_follower(current_term_, kNoMember);
}

void Core::step(Member from, const RaftMessage& message) {
  ELECTSIM_ASSERT(from >= 0 && static_cast<std::size_t>(from) < peers_.size(),
                  "a message from a member of the group");
  ELECTSIM_ASSERT(from != self_, "a member does not message itself");
  if (!step_term(from, message)) return;

  struct Dispatch {
    Core& core;
    Member from;
    void operator()(const RequestVote& m) const { core.on_request_vote(from, m); }
    void operator()(const RequestVoteResponse& m) const { core.on_request_vote_response(from, m); }
    void operator()(const AppendEntries& m) const { core.on_append_entries(from, m); }
    void operator()(const AppendEntriesResponse& m) const {
      core.on_append_entries_response(from, m);
    }
    void operator()(const PreVote& m) const { core.on_pre_vote(from, m); }
    void operator()(const PreVoteResponse& m) const { core.on_pre_vote_response(from, m); }
  };
  std::visit(Dispatch{*this, from}, message);
}

bool Core::on_timer(sim::TimerId id, sim::TimerTag tag) {
  switch (tag) {
    case kElectionTag:
      if (id != election_timer_) return true;
      election_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ != State::leader, "a leader has no election timer");
      // Raft §5.2: "If a follower receives no communication over a period of time called the
      // election timeout, then it assumes there is no viable leader and begins an election".
      // A candidate whose election timed out starts another the same way (etcd: MsgHup).
      if (config_.pre_vote) {
        become_pre_candidate();
      } else {
        become_candidate();
      }
      return true;
    case kHeartbeatTag:
      if (id != heartbeat_timer_) return true;
      heartbeat_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == State::leader, "only a leader sends heartbeats");
      host_.send_heartbeats();
      heartbeat_timer_ = set_ticked_timer(config_.heartbeat_interval,
                                          ticks_of(config_.heartbeat_interval), kHeartbeatTag);
      return true;
    case kCheckQuorumTag:
      if (id != check_quorum_timer_) return true;
      check_quorum_timer_ = sim::kNoTimer;
      ELECTSIM_ASSERT(state_ == State::leader, "only a leader checks its quorum");
      maybe_check_quorum();
      return true;
    default:
      return false;
  }
}

void Core::step_down() {
  if (state_ == State::leader) become_follower(current_term_, kNoMember);
}

void Core::campaign() {
  if (state_ == State::leader) return;
  cancel(election_timer_);
  if (config_.pre_vote) {
    become_pre_candidate();
  } else {
    become_candidate();
  }
}

// ---- Term rules -------------------------------------------------------------------------------

bool Core::step_term(Member from, const RaftMessage& message) {
  const sim::Epoch term = term_of(message);
  if (term > current_term_) {
    if (std::holds_alternative<RequestVote>(message) && config_.check_quorum &&
        in_leader_lease(host_.now())) {
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
    step_down_to(term);
    return true;
  }
  if (term < current_term_) {
    // Raft §5.1: "If a server receives a request with a stale term number, it rejects the
    // request." The refusal carries the current term, so the sender learns it is stale.
    if (std::holds_alternative<AppendEntries>(message)) {
      host_.send(from, AppendEntriesResponse{current_term_, false, 0});
    } else if (std::holds_alternative<RequestVote>(message)) {
      host_.send(from, RequestVoteResponse{current_term_, false});
    } else if (std::holds_alternative<PreVote>(message)) {
      host_.send(from, PreVoteResponse{current_term_, false});
    }
    // A response of an older term answers a question no longer asked.
    return false;
  }
  return true;
}

// ---- Handlers ---------------------------------------------------------------------------------

void Core::on_request_vote(Member from, const RequestVote& m) {
  ELECTSIM_ASSERT(m.term == current_term_, "step_term has brought the terms level");
  // Raft §5.2: "Each server will vote for at most one candidate in a given term, on a
  // first-come-first-served basis". A follower that knows this term's leader has no vote left to
  // give either (etcd's canVote).
  const bool can_vote = voted_for_ == from || (voted_for_ == kNoMember && leader_ == kNoMember);
  // Raft §5.4.1: "the voter denies its vote if its own log is more up-to-date than that of the
  // candidate."
  if (can_vote && log_up_to_date(LogPosition{m.last_log_index, m.last_log_term})) {
    set_term_and_vote(current_term_, from);
    // Raft Figure 2: the election timeout runs from the last vote granted as well.
    reset_election_timer();
    host_.send(from, RequestVoteResponse{current_term_, true});
    return;
  }
  host_.send(from, RequestVoteResponse{current_term_, false});
}

void Core::on_request_vote_response(Member from, const RequestVoteResponse& m) {
  // A vote of an election this member has already won, lost or left.
  if (state_ != State::candidate || m.term != current_term_) return;
  if (m.granted) note_contact(from, host_.now());
  switch (record_vote(from, m.granted)) {
    case Tally::won:
      // Raft §5.2: "A candidate wins an election if it receives votes from a majority of the
      // servers in the full cluster for the same term."
      become_leader();
      return;
    case Tally::lost:
      // The paper and LogCabin count no refusals: the candidate waits for its timer.
      if (config_.timer_rule == TimerRule::paper) return;
      // etcd: a candidate refused by a majority goes back to following in its term.
      become_follower(current_term_, kNoMember);
      return;
    case Tally::pending:
      return;
  }
}

void Core::on_append_entries(Member from, const AppendEntries& m) {
  ELECTSIM_ASSERT(m.term >= current_term_, "step_term refuses stale AppendEntries");
  // Raft §5.2 election safety: "at most one leader can be elected in a given term".
  ELECTSIM_ASSERT(!(state_ == State::leader && m.term == current_term_), "one leader per term");
  if (m.term > current_term_ || state_ != State::follower || leader_ != from) {
    // Raft §5.2: "If the leader's term (included in its RPC) is at least as large as the
    // candidate's current term, then the candidate recognizes the leader as legitimate and
    // returns to follower state."
    become_follower(m.term, from);
  } else {
    reset_election_timer();
  }
  leader_heard_at_ = host_.now();
  host_.on_append(from, m);
}

void Core::on_append_entries_response(Member from, const AppendEntriesResponse& m) {
  if (state_ != State::leader || m.term != current_term_) return;
  // etcd's RecentActive: what CheckQuorum counts.
  note_contact(from, host_.now());
  host_.on_append_response(from, m);
}

void Core::on_pre_vote(Member from, const PreVote& m) {
  ELECTSIM_ASSERT(m.next_term >= current_term_, "step_term refuses stale pre-votes");
  // etcd's canVote: a pre-vote for a later term is answered as a vote in it would be.
  const bool can_vote = m.next_term > current_term_ || voted_for_ == from ||
                        (voted_for_ == kNoMember && leader_ == kNoMember);
  // Dissertation §9.6: a server agrees only if the candidate's log is up to date and it has not
  // heard from a leader within the minimum election timeout, i.e. it too believes the leader gone.
  const bool grant = can_vote && log_up_to_date(LogPosition{m.last_log_index, m.last_log_term}) &&
                     !in_leader_lease(host_.now());
  // Nothing changes here: no term, no vote, no timer. A granted pre-vote carries the requested
  // term, as in etcd, so that the pre-candidate can tell it from a stale answer.
  host_.send(from, PreVoteResponse{grant ? m.next_term : current_term_, grant});
}

void Core::on_pre_vote_response(Member from, const PreVoteResponse& m) {
  if (state_ != State::pre_candidate) return;
  // Grants name the term asked for; refusals at a higher term made this member a follower.
  if (m.term != (m.granted ? current_term_ + 1 : current_term_)) return;
  switch (record_vote(from, m.granted)) {
    case Tally::won:
      // Dissertation §9.6: only a majority of pre-votes lets the member increment its term.
      become_candidate();
      return;
    case Tally::lost:
      become_follower(current_term_, kNoMember);
      return;
    case Tally::pending:
      return;
  }
}

// ---- Roles ------------------------------------------------------------------------------------

void Core::step_down_to(sim::Epoch term) {
  if (config_.timer_rule == TimerRule::paper && state_ != State::leader &&
      election_timer_ != sim::kNoTimer) {
    // LogCabin's stepDown: only a leader, which has no election timer, gets one; a follower or
    // candidate keeps the timer it has, so a stream of higher-term RequestVotes it refuses
    // cannot hold its own election off.
    set_term_and_vote(term, kNoMember);
    state_ = State::follower;
    leader_ = kNoMember;
    host_.on_state_change();
    return;
  }
  become_follower(term, kNoMember);
}

void Core::become_follower(sim::Epoch term, Member leader) {
  ELECTSIM_ASSERT(term >= current_term_, "terms only grow (Raft §5.1)");
  if (state_ == State::leader) host_.on_leader_stop();
  cancel(heartbeat_timer_);
  cancel(check_quorum_timer_);
  if (term > current_term_) set_term_and_vote(term, kNoMember);
  state_ = State::follower;
  leader_ = leader;
  reset_election_timer();
  host_.on_state_change();
}

void Core::become_pre_candidate() {
  ELECTSIM_ASSERT(state_ != State::leader, "a leader does not campaign");
  state_ = State::pre_candidate;
  leader_ = kNoMember;
  reset_votes();
  reset_election_timer();
  host_.on_state_change();
  if (record_vote(self_, true) == Tally::won) {
    become_candidate();  // a group of one
    return;
  }
  const LogPosition last = host_.last_log();
  host_.broadcast(PreVote{current_term_ + 1, last.index, last.term});
}

void Core::become_candidate() {
  ELECTSIM_ASSERT(state_ != State::leader, "a leader does not campaign");
  // Raft §5.2: "To begin an election, a follower increments its current term and transitions to
  // candidate state. It then votes for itself and issues RequestVote RPCs in parallel to each of
  // the other servers in the cluster."
  state_ = State::candidate;
  leader_ = kNoMember;
  set_term_and_vote(current_term_ + 1, self_);
  reset_votes();
  reset_election_timer();
  host_.on_state_change();
  if (record_vote(self_, true) == Tally::won) {
    become_leader();  // a group of one
    return;
  }
  const LogPosition last = host_.last_log();
  host_.broadcast(RequestVote{current_term_, last.index, last.term});
}

void Core::become_leader() {
  ELECTSIM_ASSERT(state_ == State::candidate, "only a candidate wins an election");
  ELECTSIM_ASSERT(voted_for_ == self_, "a leader voted for itself in its term");
  state_ = State::leader;
  leader_ = self_;
  cancel(election_timer_);
  host_.on_state_change();
  // Raft §5.2: "It then sends heartbeat messages to all of the other servers to establish its
  // authority and prevent new elections."
  host_.send_heartbeats();
  heartbeat_timer_ = set_ticked_timer(config_.heartbeat_interval,
                                      ticks_of(config_.heartbeat_interval), kHeartbeatTag);
  if (config_.check_quorum) {
    // etcd checks once per (unrandomised) election timeout: its CheckQuorum lease.
    check_quorum_timer_ =
        set_ticked_timer(config_.quorum_lease(), ticks_of(config_.quorum_lease()), kCheckQuorumTag);
  }
  host_.on_leader_start();
}

// ---- Steps ------------------------------------------------------------------------------------

void Core::maybe_check_quorum() {
  // etcd CheckQuorum (dissertation §6.2): "a leader steps down if an election timeout elapses
  // without a successful round of heartbeats to a majority of its cluster".
  if (!quorum_active(host_.now())) {
    become_follower(current_term_, kNoMember);
    return;
  }
  check_quorum_timer_ =
      set_ticked_timer(config_.quorum_lease(), ticks_of(config_.quorum_lease()), kCheckQuorumTag);
}

// ---- Helpers ----------------------------------------------------------------------------------

Core::Tally Core::record_vote(Member from, bool granted) {
  Peer& p = peer(from);
  // The first answer of each member counts (a duplicated message does not count twice).
  if (p.vote == Vote::none) {
    p.vote = granted ? Vote::granted : Vote::refused;
    ++(granted ? votes_granted_ : votes_refused_);
  }
  if (votes_granted_ >= majority()) return Tally::won;
  if (votes_refused_ >= majority()) return Tally::lost;
  return Tally::pending;
}

bool Core::log_up_to_date(LogPosition candidate) const {
  // Raft §5.4.1: "If the logs have last entries with different terms, then the log with the
  // later term is more up-to-date. If the logs end with the same term, then whichever log is
  // longer is more up-to-date."
  if (config_.planted_skip_log_check) return true;
  const LogPosition last = host_.last_log();
  if (candidate.term != last.term) return candidate.term > last.term;
  return candidate.index >= last.index;
}

bool Core::in_leader_lease(sim::LocalTime now) const {
  if (state_ == State::leader) return true;  // a leader knows its leader is alive
  return leader_ != kNoMember && within_quorum_lease(leader_heard_at_, now);
}

bool Core::within_quorum_lease(sim::LocalTime heard, sim::LocalTime now) const {
  const sim::Duration lease = config_.quorum_lease();
  // etcd counts the lease in ticks: electionElapsed < electionTimeout.
  if (config_.tick.count() > 0) return ticks_between(heard, now) < ticks_of(lease);
  return now - heard < lease;
}

bool Core::quorum_active(sim::LocalTime now) const {
  std::size_t active = 0;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    const Peer& p = peers_[i];
    const bool self = static_cast<Member>(i) == self_;
    const bool recent = config_.tick.count() > 0
                            ? ticks_between(p.heard_at, now) <= ticks_of(config_.quorum_lease())
                            : now - p.heard_at <= config_.quorum_lease();
    if (self || (p.heard && recent)) ++active;
  }
  return active >= majority();
}

void Core::note_contact(Member from, sim::LocalTime now) {
  Peer& p = peer(from);
  p.heard = true;
  p.heard_at = now;
}

void Core::reset_votes() {
  for (Peer& p : peers_) p = Peer{};
  votes_granted_ = votes_refused_ = 0;
}

void Core::reset_election_timer() {
  cancel(election_timer_);
  if (config_.tick.count() > 0) {
    // etcd's resetRandomizedElectionTimeout: electionTimeout + rand.Intn(electionTimeout) whole
    // ticks, counted from the next tick on.
    const std::int64_t tick = config_.tick.count();
    const std::int64_t lo = (config_.election_timeout_min.count() + tick - 1) / tick;
    const std::int64_t hi = std::max(lo, config_.election_timeout_max.count() / tick);
    const std::int64_t ticks = host_.rng().between(lo, hi);
    election_timeout_ = config_.tick * ticks;
    election_timer_ = set_ticked_timer(election_timeout_, ticks, kElectionTag);
    return;
  }
  // Raft §5.2: "election timeouts are chosen randomly from a fixed interval (e.g., 150-300ms)",
  // afresh at every reset, in whole nanoseconds from this member's own stream. etcd draws from
  // [election_timeout, 2 × election_timeout).
  election_timeout_ = sim::Duration(host_.rng().between(config_.election_timeout_min.count(),
                                                        config_.election_timeout_max.count()));
  election_timer_ = host_.set_timer(election_timeout_, kElectionTag);
}

sim::LocalTime Core::next_tick_after(sim::LocalTime t) const {
  if (t < tick_origin_) return tick_origin_;
  const std::int64_t passed = (t - tick_origin_).count() / config_.tick.count();
  return tick_origin_ + config_.tick * (passed + 1);
}

std::int64_t Core::ticks_between(sim::LocalTime from, sim::LocalTime to) const {
  // The number of ticks k * tick + origin in (from, to], by floor division.
  const std::int64_t tick = config_.tick.count();
  const auto index = [&](sim::LocalTime t) {
    const std::int64_t d = (t - tick_origin_).count();
    return d >= 0 ? d / tick : -((-d + tick - 1) / tick);
  };
  return to <= from ? 0 : index(to) - index(from);
}

std::int64_t Core::ticks_of(sim::Duration d) const {
  if (config_.tick.count() == 0) return 0;
  return std::max<std::int64_t>(1, d.count() / config_.tick.count());
}

sim::TimerId Core::set_ticked_timer(sim::Duration d, std::int64_t ticks, sim::TimerTag tag) {
  if (config_.tick.count() == 0) return host_.set_timer(d, tag);
  ELECTSIM_ASSERT(ticks >= 1, "a ticked timer waits at least one tick");
  const sim::LocalTime now = host_.now();
  const sim::LocalTime first = next_tick_after(now);
  return host_.set_timer((first - now) + config_.tick * (ticks - 1), tag);
}

void Core::set_term_and_vote(sim::Epoch term, Member vote) {
  ELECTSIM_ASSERT(term >= current_term_, "terms only grow (Raft §5.1)");
  current_term_ = term;
  voted_for_ = vote;
  host_.durable().set(kTermKey, current_term_);
  host_.durable().set(kVoteKey, voted_for_);
}

void Core::cancel(sim::TimerId& timer) {
  if (timer != sim::kNoTimer) host_.cancel_timer(timer);
  timer = sim::kNoTimer;
}

Core::Peer& Core::peer(Member id) {
  ELECTSIM_ASSERT(id >= 0 && static_cast<std::size_t>(id) < peers_.size(), "a member of the group");
  return peers_[static_cast<std::size_t>(id)];
}

}  // namespace electsim::raft
