// A member of a replicated store: see servers/store/member.hpp.
#include "servers/store/member.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::servers {

using sim::LogEntry;
using sim::StoreCommand;

StoreMember::StoreMember(std::shared_ptr<const MemberConfig> config, raft::Member self)
    : config_(std::move(config)),
      self_(self),
      core_(config_->raft, *this),
      queue_(config_->store.capacity) {
  ELECTSIM_ASSERT(self_ >= 0 && static_cast<std::size_t>(self_) < config_->members.size(),
                  "a member of the store");
  ELECTSIM_ASSERT(config_->store.expiry_scan_interval.count() > 0,
                  "a replicated store's leader scans for expired leases");
  ELECTSIM_ASSERT(config_->max_entries_per_append > 0, "appends carry entries");
}

// ---- Inputs -----------------------------------------------------------------------------------

void StoreMember::on_start(sim::ProcessContext& ctx) {
  ctx_ = &ctx;
  disk_ = &ctx.durable().bulk<MemberDisk>();
  if (!disk_->store) {
    disk_->store.emplace(config_->store);
    ReplicaMode mode;
    mode.leader_judges_keepalives = true;
    mode.leader_judges_lock_delay = true;
    mode.history_limit = config_->history_limit;
    disk_->store->set_replica_mode(mode);
  }
  // The WAL holds what was synced; watches lived on connections that are gone.
  const std::int64_t synced = ctx.durable().get(kLogLengthKey, 0);
  const std::int64_t synced_writes = ctx.durable().get(kLogWritesKey, 0);
  for (auto it = disk_->overwritten.rbegin(); it != disk_->overwritten.rend(); ++it) {
    if (it->write <= synced_writes) break;  // on the disk, and so is every older one
    log().truncate(it->from - 1);
    for (const sim::LogEntry& entry : it->entries) log().append(entry);
  }
  disk_->overwritten.clear();
  ELECTSIM_ASSERT(synced <= log().last_index(), "the synced log is on the disk");
  log().truncate(synced);
  durable_ = synced;
  disk_->store->drop_all_watches();
  commit_ = 0;
  promoted_ = false;
  revoking_.clear();
  pending_.clear();
  touched_.clear();
  touch_timer_armed_ = false;
  appended_at_.clear();
  unpromoted_renewals_.clear();
  expired_renewals_.clear();
  checkpoints_.clear();
  core_.start(self_, config_->members.size());
  ctx.set_timer(first_scan_after(config_->store, ctx.workload_rng()), kScanTag);
  queue_.on_start(ctx);
}

void StoreMember::on_command(sim::ProcessContext& /*ctx*/, sim::Command command) {
  if (command != sim::Command::campaign) return;
  note_sync();
  core_.campaign();
}

void StoreMember::on_message(sim::ProcessContext& /*ctx*/, sim::Endpoint /*from*/,
                             const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "store members speak payloads");
}

void StoreMember::on_payload(sim::ProcessContext& ctx, sim::Endpoint from,
                             std::uint32_t from_incarnation, sim::Payload&& payload) {
  note_sync();
  if (auto* request = payload.get_if<StoreRequest>()) {
    ELECTSIM_ASSERT(from >= 0, "store clients are election nodes");
    if (!queue_.limited()) {
      take_request(from, from_incarnation, std::move(*request));
    } else if (ServiceQueue::Request r{from, from_incarnation, std::move(*request)};
               !queue_.arrive(ctx, std::move(r))) {
      ctx.reply(from, from_incarnation,
                sim::Payload(too_many_requests(r.request, disk_->store->revision())));
    }
  } else if (auto* replica = payload.get_if<sim::ReplicaMessage>()) {
    const std::optional<raft::RaftMessage> message = raft::decode(replica->header);
    ELECTSIM_ASSERT(message.has_value(), "members exchange Raft messages");
    incoming_ = &replica->entries;
    incoming_round_ = replica->round;
    core_.step(member_of(from), *message);
    incoming_ = nullptr;
  } else if (auto* forwarded = payload.get_if<sim::ForwardedProposal>()) {
    // etcd-io/raft drops a proposal that reaches a member no longer leading
    // (ErrProposalDropped); the client's timeout covers it.
    if (core_.state() != raft::State::leader) return;
    StoreCommand& command = forwarded->command;
    if (read_index(command)) return;
    if (command.request.op == StoreOp::get) {
      // The leader answers the reads it is forwarded (the follower does not wait for them), also
      // when, new in its term, it must put one through the log.
      command.member = ctx.self();
      wait_for(command.client, command.request.id);
    }
    propose(std::move(command));
  } else {
    ELECTSIM_ASSERT(false, "a store member receives requests and its peers' Raft traffic");
  }
}

void StoreMember::on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) {
  note_sync();
  if (tag == kScanTag) {
    check_expiry();
    ctx.set_timer(config_->store.expiry_scan_interval, kScanTag);
    return;
  }
  if (tag == kTouchTag) {
    touch_timer_armed_ = false;
    flush_touches();
    return;
  }
  if (tag == ServiceQueue::kServiceTag) {
    ServiceQueue::Request done = queue_.finish(ctx, id);
    if (!done.cancelled) take_request(done.from, done.from_incarnation, std::move(done.request));
    return;
  }
  const bool core_timer = core_.on_timer(id, tag);
  ELECTSIM_ASSERT(core_timer, "a timer tag of the store member");
  // Reads held by an unfinished write (serve_reads) are served at the next tick once it is done,
  // also in a group with nobody to acknowledge a round.
  if (core_.state() == raft::State::leader) serve_reads();
}

void StoreMember::on_disconnect(sim::ProcessContext& /*ctx*/, sim::Endpoint peer) {
  // A client's watches live on its connection (etcd cancels a stream's watches when it closes),
  // and nobody waits for its answers any more.
  if (peer < 0) return;
  disk_->store->drop_watches_of(peer);
  std::erase_if(pending_, [peer](const Pending& p) { return p.client == peer; });
  if (queue_.limited()) queue_.cancel_watches_of(peer);
}

// ---- Requests ---------------------------------------------------------------------------------

void StoreMember::take_request(sim::Endpoint client, std::uint32_t incarnation,
                               StoreRequest&& request) {
  if (request.op == StoreOp::watch || request.op == StoreOp::unwatch) {
    // Watches are served by the member the client talks to, from what it has applied.
    out_.clear();
    StoreReply reply = disk_->store->apply(client, request, now(), out_);
    ctx().reply(client, incarnation, sim::Payload(std::move(reply)));
    for (WatchNotification& n : out_.notifications) {
      ctx().send(n.to, sim::Payload(std::move(n.event)));
    }
    return;
  }
  if (touch_session(client, incarnation, request)) return;
  StoreCommand command;
  command.kind = StoreCommand::Kind::request;
  command.client = client;
  command.client_incarnation = incarnation;
  command.member = config_->members[static_cast<std::size_t>(self_)];
  const RequestId id = request.id;
  command.request = std::move(request);
  if (core_.state() == raft::State::leader) {
    wait_for(client, id);
    if (!read_index(command)) propose(std::move(command));
    return;
  }
  if (core_.leader() != raft::kNoMember) {
    // A write is answered here once applied; a read or a renewal by the leader itself.
    if (command.request.op != StoreOp::get && command.request.op != StoreOp::lease_keepalive) {
      wait_for(client, id);
    }
    ctx().send(config_->members[static_cast<std::size_t>(core_.leader())],
               sim::Payload(sim::ForwardedProposal{std::move(command)}));
    return;
  }
  // etcd answers "etcdserver: no leader" when the member has lost its leader.
  StoreReply reply;
  reply.id = id;
  reply.op = command.request.op;
  reply.error = StoreError::no_leader;
  reply.succeeded = false;
  reply.revision = disk_->store->revision();
  ctx().reply(client, incarnation, sim::Payload(std::move(reply)));
}

bool StoreMember::touch_session(sim::Endpoint client, std::uint32_t incarnation,
                                const StoreRequest& request) {
  // ZooKeeper: a client's ping to a follower is answered by the follower
  // (FinalRequestProcessor's ping case), whose LearnerSessionTracker.touchSession only notes the
  // session in its touchTable. The leader pings its learners every tickTime / 2 (Leader.lead)
  // and each answers with its touchTable (Learner.ping); only then does the leader touch the
  // sessions (LearnerHandler's PING case, SessionTrackerImpl.touchSession). So a session whose
  // client talks to a follower is touched on the leader up to half a tick late.
  // Simplified: the follower's flushes stand for the leader's pings, on a grid of tickTime / 2
  // of the follower's clock, and the leader then touches them as it renews etcd's leases, after
  // a ReadIndex round (where ZooKeeper's leader touches at once). The leader's own clients' pings
  // take the same round.
  if (request.op != StoreOp::lease_keepalive || core_.state() == raft::State::leader ||
      core_.leader() == raft::kNoMember) {
    return false;
  }
  const std::optional<Duration> ttl = disk_->store->session_ttl(request.lease);
  if (!ttl) return false;
  StoreReply reply;
  reply.id = request.id;
  reply.op = request.op;
  reply.lease = request.lease;
  reply.ttl = *ttl;
  reply.revision = disk_->store->revision();
  const bool known = std::any_of(touched_.begin(), touched_.end(),
                                 [&](const auto& t) { return t.first == request.lease; });
  if (!known) touched_.emplace_back(request.lease, client);
  if (!touch_timer_armed_) {
    const Duration half = std::max(config_->store.tick_time / 2, Duration(1));
    touch_timer_armed_ = true;
    ctx().set_timer(round_to_next_tick(now(), half) - now(), kTouchTag);
  }
  if (ctx().traced()) {
    StoreCommand command;
    command.client = client;
    command.request = request;
    trace_apply(command, reply);
  }
  ctx().reply(client, incarnation, sim::Payload(std::move(reply)));
  return true;
}

void StoreMember::flush_touches() {
  std::vector<std::pair<LeaseId, sim::Endpoint>> touched;
  touched.swap(touched_);
  // A learner that lost its leader has no ping to answer: its touches are lost with it (a new
  // leader gives every session a fresh timeout anyway).
  if (core_.leader() == raft::kNoMember) return;
  for (const auto& [lease, client] : touched) {
    StoreCommand command;
    command.kind = StoreCommand::Kind::request;
    command.client = client;
    command.member = config_->members[static_cast<std::size_t>(self_)];
    command.request.op = StoreOp::lease_keepalive;
    command.request.lease = lease;
    // Nobody waits for its answer: the client had it from this member already.
    command.member = sim::kNoNode;
    if (core_.state() == raft::State::leader) {
      read_index(command);
    } else {
      ctx().send(config_->members[static_cast<std::size_t>(core_.leader())],
                 sim::Payload(sim::ForwardedProposal{std::move(command)}));
    }
  }
}

void StoreMember::propose(StoreCommand&& command) {
  ELECTSIM_ASSERT(core_.state() == raft::State::leader, "only the leader appends");
  ELECTSIM_ASSERT(
      command.kind != StoreCommand::Kind::request || command.request.op != StoreOp::lease_keepalive,
      "keepalives do not go through the log");
  if (command.kind == StoreCommand::Kind::request &&
      disk_->store->lock_delayed(command.request, now())) {
    // Consul's kvsPreApply: lock-delay is wall-clock state, so only the leader's clock judges it,
    // before the entry is committed; every member then answers the acquire alike.
    command.kind = StoreCommand::Kind::lock_delayed;
  }
  log().append(LogEntry{core_.term(), std::make_shared<const StoreCommand>(std::move(command))});
  appended_at_.emplace_back(log().last_index(), now());
  log_changed();
  // etcd-io/raft sends new entries at once (bcastAppend after a proposal).
  for (std::size_t m = 0; m < config_->members.size(); ++m) {
    if (static_cast<raft::Member>(m) != self_) send_append(static_cast<raft::Member>(m));
  }
  maybe_commit();  // a group of one commits alone
}

bool StoreMember::read_index(StoreCommand& command) {
  ELECTSIM_ASSERT(core_.state() == raft::State::leader, "only the leader confirms reads");
  if (command.kind != StoreCommand::Kind::request) return false;
  if (command.request.op == StoreOp::lease_keepalive) {
    // lessor.Renew answers ErrNotPrimary until the lessor is promoted, and LeaseRenew retries
    // until then (or until the request times out).
    if (!promoted_) {
      if (unpromoted_renewals_.size() >= kMaxPending) {
        unpromoted_renewals_.erase(unpromoted_renewals_.begin());
      }
      unpromoted_renewals_.push_back(std::move(command));
      return true;
    }
  } else if (command.request.op != StoreOp::get || !promoted_) {
    // Raft §6.4: the leader must have committed an entry of its term to know its commit index.
    return false;
  }
  // etcd's linearizableReadLoop keeps one ReadIndex out at a time: a request that arrives while a
  // round is out waits for the next, which leaves once that one is confirmed.
  reads_.push_back(PendingRead{std::move(command), round_ + 1});
  if (majority_round() >= round_) send_heartbeats();
  serve_reads();  // a group of one needs no acknowledgement
  return true;
}

std::int64_t StoreMember::majority_round() {
  // The round a majority (this leader included) has acknowledged.
  std::vector<std::int64_t>& rounds = rounds_scratch_;
  rounds = acked_round_;
  rounds[static_cast<std::size_t>(self_)] = round_;
  std::sort(rounds.begin(), rounds.end(), std::greater<>());
  return rounds[rounds.size() / 2];
}

void StoreMember::serve_reads() {
  // etcd's raft loop is one goroutine: while the leader's fsync is unfinished it handles no Ready,
  // so no read index is confirmed and no renewal made (etcd-io/etcd #15247, "the etcd leader is
  // stuck in handling raft Ready due to slow fdatasync"). The next acknowledgement after the
  // write serves them.
  if (reads_head_ == reads_.size() || !ctx().synced()) return;
  const std::int64_t confirmed = majority_round();
  clears_.clear();
  // Each read waits for the round after the latest when it came, so reads_ is in round order:
  // the confirmed ones lead, and a call that confirms nothing looks at one.
  while (reads_head_ < reads_.size() && reads_[reads_head_].round <= confirmed) {
    PendingRead& read = reads_[reads_head_++];
    if (read.command.request.op == StoreOp::lease_keepalive) {
      renew(std::move(read.command));
      continue;
    }
    // The leader's state machine has applied everything committed: its commit index is the
    // read index.
    out_.clear();
    StoreReply reply = disk_->store->apply(read.command.client, read.command.request, now(), out_);
    reply_to(read.command, std::move(reply));
  }
  if (reads_head_ == reads_.size()) {
    clear_reads();
  } else if (reads_head_ >= 64 && reads_head_ * 2 >= reads_.size()) {
    reads_.erase(reads_.begin(), reads_.begin() + static_cast<std::ptrdiff_t>(reads_head_));
    reads_head_ = 0;
  }
  // What waits for the next round sends it (etcd's read loop goes round again).
  if (reads_head_ < reads_.size() && confirmed >= round_) send_heartbeats();
  for (LeaseId lease : clears_) propose_checkpoint(lease, Duration(0));
}

void StoreMember::clear_reads() {
  reads_.clear();
  reads_head_ = 0;
}

void StoreMember::renew(StoreCommand&& command) {
  const LeaseId lease = command.request.lease;
  const std::optional<LocalTime> deadline = disk_->store->lease_deadline(lease);
  if (deadline && *deadline <= now()) {
    // lessor.Renew: an expired lease "might be pending for revoking or going through quorum to
    // be revoked. To be accurate, renew request must wait for the deletion to complete."
    if (expired_renewals_.size() >= kMaxPending) expired_renewals_.erase(expired_renewals_.begin());
    expired_renewals_.push_back(std::move(command));
    return;
  }
  // lessor.Renew clears a checkpointed remainder through the log ("we limit the number of RAFT
  // entries written per lease to a max of 2 per checkpoint interval"). Simplified: etcd waits
  // for that entry to apply before it renews; here the renewal is at once and the entry follows.
  if (config_->lease_checkpoint && disk_->store->has_checkpoint(lease)) clears_.push_back(lease);
  // A renewal changes nothing a watcher sees; it has an output of its own, since it may be
  // answered in the middle of apply(), whose out_ publish() has yet to send.
  renewal_out_.clear();
  StoreReply reply = disk_->store->apply(command.client, command.request, now(), renewal_out_);
  reply_to(command, std::move(reply));
}

void StoreMember::reply_to(const StoreCommand& command, StoreReply&& reply) {
  if (command.member == ctx().self()) {
    answer(command, std::move(reply));
    return;
  }
  if (command.member == sim::kNoNode) return;  // a ZooKeeper follower's touch: answered there
  // Forwarded by a follower: the leader answers the client itself (simplified).
  if (ctx().traced()) trace_apply(command, reply);
  ctx().reply(command.client, command.client_incarnation, sim::Payload(std::move(reply)));
}

void StoreMember::settle_expired_renewals() {
  // A renewal whose lease is gone now renews nothing: the store answers it lease_not_found.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < expired_renewals_.size(); ++i) {
    StoreCommand& c = expired_renewals_[i];
    if (!disk_->store->lease_deadline(c.request.lease)) {
      renew(std::move(c));
    } else {
      if (kept != i) expired_renewals_[kept] = std::move(c);
      ++kept;
    }
  }
  expired_renewals_.resize(kept);
}

void StoreMember::schedule_checkpoint(LeaseId lease, Duration remaining) {
  if (!config_->lease_checkpoint) return;
  // scheduleCheckpointIfNeeded: `lease.RemainingTTL() <= int64(le.checkpointInterval.Seconds())`
  // schedules nothing; etcd counts both in whole seconds.
  const Duration interval = config_->lease_checkpoint_interval;
  if (remaining <= std::chrono::floor<std::chrono::seconds>(interval)) return;
  checkpoints_.emplace_back(now() + interval, lease);
}

void StoreMember::propose_checkpoints() {
  // lessor.checkpointScheduledLeases, after the revocations in the same loop (runLoop).
  // Simplified: one entry per lease, where etcd batches up to 1000 in one LeaseCheckpointRequest.
  while (!checkpoints_.empty() && checkpoints_.front().first <= now()) {
    const LeaseId lease = checkpoints_.front().second;
    checkpoints_.pop_front();
    const std::optional<LocalTime> deadline = disk_->store->lease_deadline(lease);
    const std::optional<Duration> ttl = disk_->store->lease_ttl(lease);
    if (!deadline || !ttl) continue;
    // findDueScheduledCheckpoints: remainingTTL = ceil(expiry - now) in seconds, and none when
    // it is not below the lease's TTL.
    const Duration remaining = std::chrono::ceil<std::chrono::seconds>(*deadline - now());
    if (remaining >= *ttl || remaining <= Duration(0)) continue;
    propose_checkpoint(lease, remaining);
  }
}

void StoreMember::propose_checkpoint(LeaseId lease, Duration remaining) {
  StoreCommand command;
  command.kind = StoreCommand::Kind::checkpoint;
  command.request.op = StoreOp::lease_keepalive;
  command.request.lease = lease;
  command.request.ttl = remaining;
  command.member = ctx().self();
  propose(std::move(command));
}

// ---- Replication ------------------------------------------------------------------------------

void StoreMember::send_append(raft::Member to) {
  const raft::Log l = log();
  const std::int64_t next = std::min(progress_.next(to), l.last_index() + 1);
  const std::int64_t prev = next - 1;
  const std::int64_t last = std::min<std::int64_t>(
      l.last_index(), prev + static_cast<std::int64_t>(config_->max_entries_per_append));
  sim::ReplicaMessage message;
  message.header = raft::encode(raft::AppendEntries{core_.term(), prev, l.term_at(prev), commit_});
  message.round = round_;
  for (std::int64_t i = next; i <= last; ++i) message.entries.push_back(l.at(i));
  progress_.sent(to, last);
  ctx().send(config_->members[static_cast<std::size_t>(to)], sim::Payload(std::move(message)));
}

void StoreMember::send_heartbeats() {
  ++round_;
  for (std::size_t m = 0; m < config_->members.size(); ++m) {
    if (static_cast<raft::Member>(m) != self_) send_append(static_cast<raft::Member>(m));
  }
}

void StoreMember::on_append(raft::Member from, const raft::AppendEntries& m) {
  ELECTSIM_ASSERT(incoming_ != nullptr, "AppendEntries come with their entries");
  raft::Log l = log();
  // Raft Figure 2, AppendEntries receiver step 2: "Reply false if log doesn't contain an entry
  // at prevLogIndex whose term matches prevLogTerm".
  if (!l.matches(m.prev_index, m.prev_term)) {
    respond(from, raft::AppendEntriesResponse{core_.term(), false,
                                              std::min(l.last_index(), m.prev_index - 1)});
    return;
  }
  keep_overwritten(m.prev_index, *incoming_);
  const std::int64_t first_written = l.merge(m.prev_index, *incoming_, commit_);
  if (first_written > 0) {
    log_changed();
    durable_ = std::min(durable_, first_written - 1);
  }
  std::int64_t match = m.prev_index + static_cast<std::int64_t>(incoming_->size());
  // Step 5: "If leaderCommit > commitIndex, set commitIndex = min(leaderCommit, index of last
  // new entry)".
  if (m.commit > commit_) commit_to(std::min(m.commit, match));
  // An acknowledgement promises the entries are on disk. What this handler wrote leaves only
  // once its fsync is done (the kernel holds the answer); otherwise only the prefix known to be
  // on disk may be claimed: entries an earlier handler wrote may still wait for a stalled disk.
  if (first_written == 0) match = std::min(match, durable_);
  respond(from, raft::AppendEntriesResponse{core_.term(), true, match});
}

void StoreMember::respond(raft::Member to, const raft::AppendEntriesResponse& m) {
  sim::ReplicaMessage replica;
  replica.header = raft::encode(m);
  replica.round = incoming_round_;
  ctx().send(config_->members[static_cast<std::size_t>(to)], sim::Payload(std::move(replica)));
}

void StoreMember::on_append_response(raft::Member from, const raft::AppendEntriesResponse& m) {
  // Any answer of this term says the member still follows this leader: it confirms reads.
  auto& acked = acked_round_[static_cast<std::size_t>(from)];
  acked = std::max(acked, incoming_round_);
  serve_reads();
  if (!m.success) {
    progress_.rejected(from, m.index);
    send_append(from);
    return;
  }
  progress_.acknowledged(from, m.index);
  maybe_commit();
  // More to send: the follower is behind and nothing is on its way (a lost append, a backoff).
  if (progress_.match(from) < log().last_index() && progress_.next(from) <= m.index + 1) {
    send_append(from);
  }
}

void StoreMember::maybe_commit() {
  // The leader's own copy counts once it is on its disk (Raft thesis §10.2.1: the leader may
  // commit before its own write is done only with a majority of other servers' copies).
  if (ctx().synced()) progress_.acknowledged(self_, log().last_index());
  const std::int64_t commit = progress_.quorum_commit(log(), core_.term(), commit_);
  if (commit <= commit_) return;
  commit_to(commit);
  // etcd-io/raft tells the followers at once (bcastAppend after maybeCommit).
  send_heartbeats();
}

void StoreMember::commit_to(std::int64_t commit) {
  ELECTSIM_ASSERT(commit <= log().last_index(), "only held entries commit");
  const bool leading = core_.state() == raft::State::leader;
  if (leading && ctx().traced()) {
    for (std::int64_t i = commit_ + 1; i <= commit; ++i) {
      const auto it = std::find_if(appended_at_.begin(), appended_at_.end(),
                                   [i](const auto& p) { return p.first == i; });
      ctx().trace(
          sim::events::raft_commit(ctx().self(), i, log().term_at(i),
                                   it != appended_at_.end() ? (now() - it->second).count() : -1));
    }
  }
  std::erase_if(appended_at_, [commit](const auto& p) { return p.first <= commit; });
  commit_ = commit;
  // Apply in log order what is committed. A restarted member has applied what its disk holds.
  const raft::Log l = log();
  while (disk_->applied < commit_) {
    ++disk_->applied;
    apply(l.at(disk_->applied), disk_->applied);
  }
}

// ---- The state machine ------------------------------------------------------------------------

void StoreMember::apply(const LogEntry& entry, std::int64_t index) {
  out_.clear();
  if (!entry.command) {
    // etcd promotes its lessor when the leader applies its term's first (empty) entry: every
    // lease is refreshed, since the old leader's deadlines are not known here.
    if (core_.state() == raft::State::leader && entry.term == core_.term() && !promoted_) {
      promoted_ = true;
      const std::size_t refreshed = disk_->store->refresh_leases(
          now(), config_->promote_extend,
          [&](LeaseId lease, Duration remaining) { schedule_checkpoint(lease, remaining); });
      if (ctx().traced()) {
        ctx().trace(sim::events::lease_refresh(ctx().self(), static_cast<std::int64_t>(refreshed),
                                               core_.term()));
      }
      // The renewals that waited for the lessor: it is primary now.
      std::vector<StoreCommand> waiting;
      waiting.swap(unpromoted_renewals_);
      for (StoreCommand& c : waiting) read_index(c);
    }
    publish(index);
    return;
  }
  const StoreCommand& command = *entry.command;
  switch (command.kind) {
    case StoreCommand::Kind::request: {
      StoreReply reply = disk_->store->apply(command.client, command.request, now(), out_);
      reply.term = entry.term;
      // lessor.Grant schedules the new lease's first checkpoint on the primary.
      if (command.request.op == StoreOp::lease_grant && reply.error == StoreError::none &&
          promoted_ && core_.state() == raft::State::leader) {
        schedule_checkpoint(reply.lease, reply.ttl);
      }
      answer(command, std::move(reply));
      break;
    }
    case StoreCommand::Kind::checkpoint: {
      const LeaseId lease = command.request.lease;
      // lessor.Checkpoint: the remainder on every member; the primary schedules the next one.
      if (disk_->store->checkpoint_lease(lease, command.request.ttl) && promoted_ &&
          core_.state() == raft::State::leader) {
        schedule_checkpoint(lease, *disk_->store->remaining_ttl(lease));
      }
      break;
    }
    case StoreCommand::Kind::lock_delayed: {
      StoreReply reply;
      reply.id = command.request.id;
      reply.op = command.request.op;
      reply.succeeded = false;
      reply.lock_delayed = true;
      reply.revision = disk_->store->revision();
      reply.term = entry.term;
      answer(command, std::move(reply));
      break;
    }
    case StoreCommand::Kind::lease_expiry:
      disk_->store->revoke_expired(command.request.lease, now(), out_);
      revoking_.erase(static_cast<std::uint64_t>(command.request.lease));
      break;
  }
  if (!expired_renewals_.empty()) settle_expired_renewals();
  publish(index);
}

void StoreMember::answer(const StoreCommand& command, StoreReply&& reply) {
  if (command.member != ctx().self()) return;
  const auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) {
    return p.client == command.client && p.id == command.request.id;
  });
  if (it == pending_.end()) return;  // taken by an earlier life of this member, or disconnected
  pending_.erase(it);
  if (ctx().traced()) trace_apply(command, reply);
  ctx().reply(command.client, command.client_incarnation, sim::Payload(std::move(reply)));
}

void StoreMember::trace_apply(const StoreCommand& command, const StoreReply& reply) {
  const std::string negotiated = negotiated_timeout_text(command.request, reply);
  ctx().trace(apply_event(command.client, command.request, reply, negotiated));
}

void StoreMember::publish(std::int64_t index) {
  // The leader traces what the store did. A new leader may apply an entry its predecessor
  // applied and traced already: the trace keeps the first, keyed by log index and order.
  if (core_.state() == raft::State::leader && ctx().traced()) {
    std::int64_t k = 0;
    const auto key = [&] { return index * 65536 + std::min<std::int64_t>(k++, 65535); };
    for (const StoreChange& change : out_.changes) {
      ctx().trace_first(change_event(change, ctx().cluster_size()), key());
    }
    for (LeaseId lease : out_.expired_leases) {
      ctx().trace_first(sim::events::lease_expire(lease), key());
    }
  }
  for (WatchNotification& n : out_.notifications) {
    ctx().send(n.to, sim::Payload(std::move(n.event)));
  }
}

void StoreMember::check_expiry() {
  // etcd's lessor: only the primary (the promoted leader) revokes, at its checks.
  if (core_.state() != raft::State::leader || !promoted_) return;
  due_.clear();
  // findExpiredLeases: at most revoke_limit() a check (etcd: leaseRevokeRate / 2 every 500ms), the
  // earliest deadlines first; a lease whose revocation is under way is not proposed again (etcd
  // looks at it again only after expiredLeaseRetryInterval, 3s).
  disk_->store->due_leases(now(), revoking_, due_);
  for (LeaseId lease : due_) {
    revoking_.try_emplace(static_cast<std::uint64_t>(lease), 0);
    StoreCommand command;
    command.kind = StoreCommand::Kind::lease_expiry;
    command.request.op = StoreOp::lease_revoke;
    command.request.lease = lease;
    command.member = ctx().self();
    propose(std::move(command));
  }
  propose_checkpoints();
}

// ---- Roles ------------------------------------------------------------------------------------

void StoreMember::on_state_change() {
  if (core_.state() == raft::State::leader) {
    // Raft §5.3: nextIndex starts just after the leader's last entry. Raft §8: "each leader
    // commit a blank no-op entry into the log at the start of its term" (etcd appends an empty
    // entry on becomeLeader), which also commits the entries of earlier terms.
    progress_.reset(config_->members.size(), self_, log().last_index());
    appended_at_.clear();
    acked_round_.assign(config_->members.size(), 0);
    clear_reads();
    log().append(LogEntry{core_.term(), nullptr});
    appended_at_.emplace_back(log().last_index(), now());
    log_changed();
  }
  trace_role();
  if (core_.state() == raft::State::leader) maybe_commit();  // a group of one
}

void StoreMember::on_leader_stop() {
  // Reads not yet confirmed are dropped: their clients time out, as etcd's wait for a read index
  // does when the leader changes.
  clear_reads();
  promoted_ = false;
  revoking_.clear();
  appended_at_.clear();
  // lessor.Demote: renewals now answer ErrNotPrimary (their clients time out here), and the
  // scheduled checkpoints are dropped.
  unpromoted_renewals_.clear();
  expired_renewals_.clear();
  checkpoints_.clear();
}

void StoreMember::trace_role() {
  const raft::State s = core_.state();
  const sim::Role role = s == raft::State::leader      ? sim::Role::leader
                         : s == raft::State::candidate ? sim::Role::candidate
                                                       : sim::Role::follower;
  const sim::Endpoint leader = core_.leader() == raft::kNoMember
                                   ? sim::kNoNode
                                   : config_->members[static_cast<std::size_t>(core_.leader())];
  ctx().announce(sim::Belief{role, core_.term(), leader});
}

// ---- Helpers ----------------------------------------------------------------------------------

void StoreMember::wait_for(sim::Endpoint client, RequestId id) {
  // Bounded: a request its leader dropped is never answered, and its client has given up on it.
  if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());
  pending_.push_back(Pending{client, id});
}

void StoreMember::note_sync() {
  if (!ctx().synced()) return;
  durable_ = log().last_index();
  disk_->overwritten.clear();  // every write is on the disk: nothing left to undo
}

void StoreMember::keep_overwritten(std::int64_t prev_index,
                                   std::span<const sim::LogEntry> entries) {
  const raft::Log l = log();
  std::int64_t index = prev_index;
  for (const sim::LogEntry& entry : entries) {
    if (++index > l.last_index()) return;  // appends only: nothing overwritten
    if (l.term_at(index) == entry.term) continue;
    // merge() deletes from `index` on, in the write log_changed() is about to count.
    MemberDisk::Overwritten undo;
    undo.write = ctx().durable().get(kLogWritesKey, 0) + 1;
    undo.from = index;
    const auto first = disk_->log.begin() + (index - 1);
    undo.entries.assign(first, disk_->log.end());
    disk_->overwritten.push_back(std::move(undo));
    return;
  }
}

void StoreMember::log_changed() {
  // The WAL write: its length and a counter, so that every change is a disk write even when a
  // truncation and an append leave the length as it was.
  sim::DurableState& d = ctx().durable();
  d.set(kLogLengthKey, log().last_index());
  d.set(kLogWritesKey, d.get(kLogWritesKey, 0) + 1);
}

raft::Member StoreMember::member_of(sim::Endpoint endpoint) const {
  const auto it = std::find(config_->members.begin(), config_->members.end(), endpoint);
  ELECTSIM_ASSERT(it != config_->members.end(), "Raft traffic comes from a member");
  return static_cast<raft::Member>(it - config_->members.begin());
}

sim::ProcessContext& StoreMember::ctx() const {
  ELECTSIM_ASSERT(ctx_ != nullptr, "a started member");
  return *ctx_;
}

sim::LocalTime StoreMember::now() const {
  // Everything a member times runs on its monotonic clock: etcd's raft ticks and lessor (Go's
  // monotonic time.Now readings), ZooKeeper's session tracker (System.nanoTime since
  // ZOOKEEPER-1366), Consul's session timers and lock-delays. See StoreServer::clock.
  return ctx().monotonic_now();
}

sim::TimerId StoreMember::set_timer(sim::Duration after_local, sim::TimerTag tag) {
  return ctx().set_timer(after_local, tag);
}

void StoreMember::cancel_timer(sim::TimerId id) {
  ctx().cancel_timer(id);
}

sim::Rng& StoreMember::rng() {
  return ctx().rng();
}

sim::DurableState& StoreMember::durable() {
  return ctx().durable();
}

void StoreMember::send(raft::Member to, const raft::RaftMessage& message) {
  sim::ReplicaMessage replica;
  replica.header = raft::encode(message);
  ctx().send(config_->members[static_cast<std::size_t>(to)], sim::Payload(std::move(replica)));
}

void StoreMember::broadcast(const raft::RaftMessage& message) {
  for (std::size_t m = 0; m < config_->members.size(); ++m) {
    if (static_cast<raft::Member>(m) != self_) send(static_cast<raft::Member>(m), message);
  }
}

}  // namespace electsim::servers
