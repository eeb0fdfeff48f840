// The replicated store's Raft log, in the style of etcd-io/raft's tests: raft::Log and
// raft::Progress on their own (Raft §5.3 and §5.4.2), then store members on the real kernel, with
// a table of network shapes and the commit index each leads to, a leader cut off in a minority,
// and what a member must have on its disk before it counts an entry as held.
// Long on purpose: the log's rules and the members' behaviour share the cluster harness here.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "raft/log.hpp"
#include "servers/store/member.hpp"
#include "servers/world.hpp"
#include "sim/kernel.hpp"
#include "tests/fault_specs.hpp"

using namespace electsim;
using namespace std::chrono_literals;
using sim::Epoch;
using sim::LogEntry;

namespace {

// ---- Logs and progress --------------------------------------------------------------------------

// Entries of these terms, each a new leader's empty entry (the log's tests look at terms only).
std::vector<LogEntry> entries_of(const std::vector<Epoch>& terms) {
  std::vector<LogEntry> out;
  for (Epoch t : terms) {
    LogEntry e;
    e.term = t;
    out.push_back(std::move(e));
  }
  return out;
}

// An entry's command, or nullptr for a new leader's empty entry.
const sim::StoreCommand* command_of(const LogEntry& e) {
  return e.command.get();
}
bool is_empty_entry(const LogEntry& e) {
  return command_of(e) == nullptr;
}
// The key and value of a client's put, empty for other entries.
std::pair<std::string, std::string> put_of(const LogEntry& e) {
  const sim::StoreCommand* c = command_of(e);
  if (c == nullptr || c->kind != sim::StoreCommand::Kind::request ||
      c->request.op != sim::StoreOp::put) {
    return {};
  }
  return {c->request.key.str(), c->request.value};
}

std::vector<Epoch> terms_of(const std::vector<LogEntry>& entries) {
  std::vector<Epoch> out;
  for (const LogEntry& e : entries) out.push_back(e.term);
  return out;
}

// Whether `body` ends the process with an invariant failure (ELECTSIM_ASSERT aborts, so it runs
// in a child; the child's stderr is silenced and Catch's signal handlers are undone there).
bool aborts(const std::function<void()>& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);
    std::freopen("/dev/null", "w", stderr);
    body();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

// ---- A store cluster on the real kernel ---------------------------------------------------------

// An election node that only writes: the test queues requests in its inbox, and the node sends
// them to the store at its next poll (a protocol reaches the store only from its own handlers).
// Replies are kept for the test to read.
struct Inbox {
  std::deque<sim::StoreRequest> requests;
  std::vector<sim::StoreReply> replies;
};

class Writer final : public sim::Protocol {
 public:
  explicit Writer(std::shared_ptr<Inbox> inbox) : inbox_(std::move(inbox)) {}
  void on_start(sim::Context& ctx) override { ctx.set_timer(1ms, kPoll); }
  void on_message(sim::Context&, sim::NodeId, const sim::Message&) override {}
  void on_timer(sim::Context& ctx, sim::TimerId, sim::TimerTag) override {
    while (!inbox_->requests.empty()) {
      ctx.store(std::move(inbox_->requests.front()));
      inbox_->requests.pop_front();
    }
    ctx.set_timer(1ms, kPoll);
  }
  void on_store_reply(sim::Context&, const sim::StoreReply& reply) override {
    inbox_->replies.push_back(reply);
  }
  void on_watch(sim::Context&, const sim::WatchEvent&) override {}
  void on_sink_reply(sim::Context&, const sim::SinkReply&) override {}
  void on_command(sim::Context&, sim::Command) override {}

 private:
  static constexpr sim::TimerTag kPoll = 1;
  std::shared_ptr<Inbox> inbox_;
};

struct StoreSetup {
  std::size_t members = 3;
  std::uint64_t seed = 1;
  // Every fsync's duration. Above 0 the kernel watches disks from the start, so a crash loses
  // exactly the writes whose fsync had not finished.
  sim::Duration fsync{0};
  bool lease_checkpoint = false;
  sim::Duration checkpoint_interval = 5min;
};

// `members` store members at sim::store_member_endpoint(k) and as many writer nodes; node k talks
// to member k first (a follower forwards to its leader). Every message takes 1ms.
class StoreCluster {
 public:
  explicit StoreCluster(StoreSetup setup) : members_(setup.members) {
    sim::WorldConfig world;
    world.seed = setup.seed;
    world.node_count = setup.members;
    world.duration = 3600s;
    world.network.latency = sim::Distribution::constant_of(1ms);
    world.disk.fsync = sim::Distribution::constant_of(setup.fsync);
    servers::Services services;
    services.store.expiry_scan_interval = 500ms;
    servers::ReplicationConfig& r = services.replication;
    r.members = setup.members;
    r.raft.election_timeout_min = 150ms;
    r.raft.election_timeout_max = 300ms;
    r.raft.heartbeat_interval = 50ms;
    r.raft.pre_vote = true;
    r.raft.check_quorum = true;
    r.request_timeout = 1s;
    r.lease_checkpoint = setup.lease_checkpoint;
    r.lease_checkpoint_interval = setup.checkpoint_interval;
    for (std::size_t k = 0; k < setup.members; ++k) {
      r.home.push_back(k);
      inboxes_.push_back(std::make_shared<Inbox>());
    }
    kernel_ = std::make_unique<sim::Kernel>(
        servers::with_services(std::move(world), services), [inboxes = inboxes_](sim::NodeId self) {
          return std::make_unique<Writer>(inboxes[static_cast<std::size_t>(self)]);
        });
    kernel_->start();
  }

  std::size_t size() const { return members_; }
  std::size_t majority() const { return members_ / 2 + 1; }
  sim::Kernel& kernel() { return *kernel_; }

  // Member k, nullptr while it is down.
  const servers::StoreMember* member(std::size_t k) const {
    return dynamic_cast<const servers::StoreMember*>(
        kernel_->process(sim::store_member_endpoint(k)));
  }
  const servers::StoreMember& up(std::size_t k) const {
    const servers::StoreMember* m = member(k);
    REQUIRE(m != nullptr);
    return *m;
  }
  // The up member that leads at the highest term, if exactly one does.
  std::optional<std::size_t> leader() const {
    std::optional<std::size_t> best;
    bool tied = false;
    for (std::size_t k = 0; k < members_; ++k) {
      const servers::StoreMember* m = member(k);
      if (m == nullptr || m->state() != raft::State::leader) continue;
      if (!best || m->term() > up(*best).term()) {
        best = k;
        tied = false;
      } else if (m->term() == up(*best).term()) {
        tied = true;
      }
    }
    return tied ? std::nullopt : best;
  }
  // Up to `limit` of simulated time from now, in 1ms steps.
  std::size_t run_until_leader(sim::Duration limit = 5s) {
    const sim::Time until = kernel_->now() + limit;
    while (!leader() && kernel_->now() < until) run_for(1ms);
    const std::optional<std::size_t> l = leader();
    REQUIRE(l.has_value());
    return *l;
  }
  void run_for(sim::Duration d) { kernel_->run_until(kernel_->now() + d); }

  // Node k sends a put of key=value to member k at its next poll.
  void put(std::size_t k, const std::string& key, const std::string& value) {
    sim::StoreRequest r;
    r.op = sim::StoreOp::put;
    r.key = key;
    r.value = value;
    inboxes_[k]->requests.push_back(std::move(r));
  }
  // Node k sends any request to member k at its next poll.
  void send(std::size_t k, sim::StoreRequest r) { inboxes_[k]->requests.push_back(std::move(r)); }
  const std::vector<sim::StoreReply>& replies(std::size_t k) const { return inboxes_[k]->replies; }
  std::size_t succeeded(std::size_t k) const {
    std::size_t n = 0;
    for (const sim::StoreReply& r : replies(k)) n += r.error == sim::StoreError::none ? 1 : 0;
    return n;
  }

  void crash(std::size_t k) { at_member(sim::FaultKind::crash, k); }
  void restart(std::size_t k) { at_member(sim::FaultKind::restart, k); }
  void disk_stall(std::size_t k, sim::Duration d) { at_member(sim::FaultKind::disk_stall, k, d); }
  // Members in different groups cannot talk; the writer nodes keep every link.
  void partition(const std::vector<std::vector<std::size_t>>& groups) {
    std::vector<std::vector<sim::Endpoint>> endpoints;
    for (const auto& g : groups) {
      endpoints.emplace_back();
      for (std::size_t k : g) endpoints.back().push_back(sim::store_member_endpoint(k));
    }
    kernel_->inject(testing::partition_at(0s, std::move(endpoints)));
  }
  void heal() {
    sim::FaultSpec f;
    f.kind = sim::FaultKind::heal;
    kernel_->inject(std::move(f));
  }

  // The members other than `k`, in index order.
  std::vector<std::size_t> others(std::size_t k) const {
    std::vector<std::size_t> out;
    for (std::size_t m = 0; m < members_; ++m) {
      if (m != k) out.push_back(m);
    }
    return out;
  }

 private:
  void at_member(sim::FaultKind kind, std::size_t k, sim::Duration d = sim::Duration(0)) {
    kernel_->inject(testing::node_fault_at(0s, kind, sim::store_member_endpoint(k), d));
  }

  std::size_t members_;
  std::vector<std::shared_ptr<Inbox>> inboxes_;
  std::unique_ptr<sim::Kernel> kernel_;
};

// Raft §8 and etcd's becomeLeader: wherever the term grows along a log, the entry is the new
// leader's empty one.
bool terms_open_with_empty_entries(const std::vector<LogEntry>& log) {
  Epoch previous = 0;
  for (const LogEntry& e : log) {
    if (e.term < previous) return false;
    if (e.term > previous && !is_empty_entry(e)) return false;
    previous = e.term;
  }
  return true;
}

// The first `length` entries of two logs are the same entries (term, kind, key and value).
bool same_prefix(const std::vector<LogEntry>& a, const std::vector<LogEntry>& b,
                 std::int64_t length) {
  if (static_cast<std::int64_t>(a.size()) < length || static_cast<std::int64_t>(b.size()) < length)
    return false;
  for (std::size_t i = 0; i < static_cast<std::size_t>(length); ++i) {
    const sim::StoreCommand* ca = command_of(a[i]);
    const sim::StoreCommand* cb = command_of(b[i]);
    if (a[i].term != b[i].term || (ca == nullptr) != (cb == nullptr) ||
        (ca != nullptr &&
         (ca->kind != cb->kind || ca->request.op != cb->request.op ||
          ca->request.key != cb->request.key || ca->request.value != cb->request.value))) {
      return false;
    }
  }
  return true;
}

}  // namespace

// ---- raft::Log ----------------------------------------------------------------------------------

TEST_CASE(
    "raft log: merge keeps what it holds, appends what is new and cuts a conflicting suffix") {
  // etcd-io/raft's TestLogMaybeAppend, on a log of terms {1, 2, 3} with index 1 committed.
  // `first`: the first index merge wrote, 0 when the log did not change.
  const auto [prev, incoming, expected, first] =
      GENERATE(table<std::int64_t, std::vector<Epoch>, std::vector<Epoch>, std::int64_t>({
          {3, {}, {1, 2, 3}, 0},      // a heartbeat
          {3, {4}, {1, 2, 3, 4}, 4},  // new at the end
          {3, {4, 4}, {1, 2, 3, 4, 4}, 4},
          {1, {2, 3}, {1, 2, 3}, 0},  // everything held
          {1, {2}, {1, 2, 3}, 0},     // a held prefix truncates nothing (Figure 2, step 3)
          {0, {1, 2, 3, 4}, {1, 2, 3, 4}, 4},
          {2, {4}, {1, 2, 4}, 3},     // conflict at 3: 3 goes
          {1, {4, 4}, {1, 4, 4}, 2},  // conflict at 2: 2 and 3 go
          {1, {2, 5}, {1, 2, 5}, 3},  // conflict after a held entry
          {1, {2, 3, 4}, {1, 2, 3, 4}, 4},
      }));
  INFO("prev=" << prev << " entries=" << incoming.size());
  std::vector<LogEntry> storage = entries_of({1, 2, 3});
  raft::Log log(storage);
  const std::vector<LogEntry> more = entries_of(incoming);
  CHECK(log.merge(prev, more, 1) == first);
  CHECK(terms_of(storage) == expected);
  CHECK(log.last() ==
        raft::LogPosition{static_cast<std::int64_t>(expected.size()), expected.back()});
}

TEST_CASE("raft log: a conflict just past the commit index cuts only the uncommitted suffix") {
  const std::int64_t committed = GENERATE(0, 1, 2);
  INFO("committed=" << committed);
  std::vector<LogEntry> storage = entries_of({1, 1, 2, 2});
  raft::Log log(storage);
  const std::vector<LogEntry> more = entries_of({3, 3});
  CHECK(log.merge(2, more, committed) == 3);
  CHECK(terms_of(storage) == std::vector<Epoch>{1, 1, 3, 3});
}

TEST_CASE("raft log: a conflict at a committed index is an invariant failure, never a truncation") {
  // Raft §5.4: a committed entry is in every later leader's log, so an AppendEntries that
  // conflicts with one means the protocol is broken; merge stops the run instead of erasing it.
  const auto [committed, prev] = GENERATE(table<std::int64_t, std::int64_t>({{3, 2}, {4, 0}}));
  INFO("committed=" << committed << " prev=" << prev);
  CHECK(aborts([committed = committed, prev = prev] {
    std::vector<LogEntry> storage = entries_of({1, 1, 2, 2});
    raft::Log log(storage);
    const std::vector<LogEntry> more = entries_of({3, 3, 3, 3});
    log.merge(prev, more, committed);
  }));
}

TEST_CASE("raft log: term_at reads 0 before the first entry and matches checks index and term") {
  std::vector<LogEntry> storage = entries_of({1, 1, 2});
  raft::Log log(storage);
  CHECK(log.term_at(0) == 0);
  CHECK(log.term_at(3) == 2);
  CHECK(log.matches(0, 0));
  CHECK(log.matches(2, 1));
  CHECK_FALSE(log.matches(2, 2));
  CHECK_FALSE(log.matches(4, 2));  // past the end
  log.truncate(1);
  CHECK(log.last() == raft::LogPosition{1, 1});
}

// ---- raft::Progress -----------------------------------------------------------------------------

TEST_CASE("raft progress: a new leader probes every follower just after its own last entry") {
  raft::Progress p;
  p.reset(5, 2, 7);
  for (raft::Member m = 0; m < 5; ++m) {
    INFO("member=" << m);
    CHECK(p.next(m) == 8);
    // Nothing is known of the followers' logs yet (the leader's own match is its host's business:
    // what its disk holds).
    if (m != 2) CHECK(p.match(m) == 0);
  }
}

TEST_CASE("raft progress: acknowledgements and sends only ever raise match and next") {
  raft::Progress p;
  p.reset(3, 0, 5);
  p.acknowledged(1, 4);
  CHECK(p.match(1) == 4);
  CHECK(p.next(1) == 6);  // next was 6 already
  p.acknowledged(1, 2);   // a late, stale acknowledgement
  CHECK(p.match(1) == 4);
  CHECK(p.next(1) == 6);
  p.sent(1, 9);  // optimistic pipelining
  CHECK(p.next(1) == 10);
  p.sent(1, 7);
  CHECK(p.next(1) == 10);
}

TEST_CASE("raft progress: a rejection backs next off but never below match + 1") {
  // etcd-io/raft's TestProgressMaybeDecr: to the follower's hint + 1, or back by one, whichever is
  // lower, but never below what the follower is known to hold.
  const auto [match, next, hint, expected] =
      GENERATE(table<std::int64_t, std::int64_t, std::int64_t, std::int64_t>({
          {0, 6, 5, 5},   // back by one
          {0, 6, 2, 3},   // to just after the follower's last entry
          {0, 6, 10, 5},  // a hint past next: back by one
          {3, 6, 1, 4},   // the hint is below what the follower holds
          {4, 5, 0, 5},   // nothing to back off to
          {0, 1, 0, 1},   // never below index 1
          {0, 2, 0, 1},
      }));
  INFO("match=" << match << " next=" << next << " hint=" << hint);
  raft::Progress p;
  p.reset(3, 0, next - 1);
  if (match > 0) p.acknowledged(1, match);
  REQUIRE(p.match(1) == match);
  REQUIRE(p.next(1) == next);
  p.rejected(1, hint);
  CHECK(p.next(1) == expected);
  CHECK(p.match(1) == match);
}

TEST_CASE(
    "raft progress: quorum_commit commits what a majority holds, only for an entry of the "
    "current term (Raft §5.4.2)") {
  const auto [matches, terms, term, commit, expected] = GENERATE(
      table<std::vector<std::int64_t>, std::vector<Epoch>, Epoch, std::int64_t, std::int64_t>({
          {{3, 3, 0}, {1, 1, 2}, 2, 1, 3},  // a majority holds the current term's entry
          {{3, 2, 0}, {1, 1, 2}, 2, 1, 1},  // 2 is on a majority, but of term 1
          {{3, 2, 2}, {1, 1, 2}, 2, 0, 0},  // likewise: Figure 8's counted replicas
          {{3, 3, 3}, {1, 1, 2}, 2, 0, 3},  // committing 3 commits 1 and 2 with it
          {{3, 3, 0}, {1, 1, 2}, 3, 1, 1},  // a leader of term 3 with no entry of its own
          {{2, 2, 2}, {1, 2, 2}, 2, 3, 3},  // the commit index never goes back
          {{5, 5, 5, 0, 0}, {1, 1, 2, 2, 2}, 2, 0, 5},
          {{5, 5, 0, 0, 0}, {1, 1, 2, 2, 2}, 2, 0, 0},  // two of five are no majority
          {{5, 4, 3, 2, 1}, {1, 1, 2, 2, 2}, 2, 0, 3},  // the third highest match
          {{5, 4, 2, 2, 1}, {1, 1, 2, 2, 2}, 2, 0, 0},  // index 2 is of term 1
          {{4, 4, 4, 4}, {1, 1, 2, 2}, 2, 0, 4},        // four members: three are a majority
          {{4, 4, 0, 0}, {1, 1, 2, 2}, 2, 0, 0},
      }));
  INFO("members=" << matches.size() << " term=" << term << " commit=" << commit);
  std::vector<LogEntry> storage = entries_of(terms);
  const raft::Log log(storage);
  raft::Progress p;
  p.reset(matches.size(), 0, matches[0]);
  for (std::size_t m = 0; m < matches.size(); ++m) {
    p.acknowledged(static_cast<raft::Member>(m), matches[m]);
  }
  CHECK(p.quorum_commit(log, term, commit) == expected);
}

// ---- Store members on the kernel ----------------------------------------------------------------

TEST_CASE("store members: a write commits only while a majority of members is up") {
  // etcd-io/raft's TestLeaderElection turned to the log: after the first leader's empty entry has
  // committed (index 1), some followers crash and the leader takes three writes.
  const auto [members, down, commit] = GENERATE(table<std::size_t, std::size_t, std::int64_t>({
      {3, 0, 4},
      {3, 1, 4},
      {3, 2, 1},
      {5, 0, 4},
      {5, 1, 4},
      {5, 2, 4},
      {5, 3, 1},
      {5, 4, 1},
  }));
  INFO("members=" << members << " followers down=" << down);
  StoreCluster c({members});
  const std::size_t l = c.run_until_leader();
  c.run_for(500ms);
  REQUIRE(c.up(l).commit() == 1);
  const std::vector<std::size_t> followers = c.others(l);
  for (std::size_t i = 0; i < down; ++i) c.crash(followers[i]);
  for (int i = 0; i < 3; ++i) c.put(l, "k" + std::to_string(i), "v");
  c.run_for(3s);

  CHECK(c.up(l).entries().size() == 4);  // the empty entry and the three writes
  CHECK(c.up(l).commit() == commit);
  CHECK(c.succeeded(l) == (commit == 4 ? 3u : 0u));
  for (std::size_t k = 0; k < members; ++k) {
    if (const servers::StoreMember* m = c.member(k)) {
      INFO("member=" << k);
      CHECK(m->commit() == commit);
      CHECK(m->applied() == commit);
      CHECK(m->store().revision() == commit - 1);
    }
  }
  // Without a majority nobody leads: check_quorum made the old leader step down.
  CHECK(c.leader().has_value() == (commit == 4));
}

TEST_CASE("store members: a new leader's first entry is an empty entry of its term") {
  const std::size_t members = GENERATE(3u, 5u);
  INFO("members=" << members);
  StoreCluster c({members});
  std::size_t l = c.run_until_leader();
  // Three leaders in turn, each crashed after it took a write.
  for (int round = 0; round < 3; ++round) {
    INFO("round=" << round);
    c.put(l, "round", std::to_string(round));
    c.run_for(500ms);
    const Epoch term = c.up(l).term();
    c.crash(l);
    const std::size_t next = c.run_until_leader();
    c.restart(l);
    CHECK(next != l);
    const servers::StoreMember& leader = c.up(next);
    CHECK(leader.term() > term);
    const std::vector<LogEntry>& log = leader.entries();
    const auto first = std::find_if(log.begin(), log.end(),
                                    [&](const LogEntry& e) { return e.term == leader.term(); });
    REQUIRE(first != log.end());
    CHECK(is_empty_entry(*first));
    l = next;
  }
  c.run_for(1s);
  for (std::size_t k = 0; k < members; ++k) {
    INFO("member=" << k);
    CHECK(terms_open_with_empty_entries(c.up(k).entries()));
  }
}

TEST_CASE(
    "store members: a leader cut off in a minority commits nothing, a new leader in the majority "
    "does, and healing overwrites the old leader's uncommitted entries") {
  const std::size_t members = GENERATE(3u, 5u);
  INFO("members=" << members);
  StoreCluster c({members});
  const std::size_t old = c.run_until_leader();
  c.put(old, "before", "1");
  c.put(old, "before", "2");
  c.run_for(500ms);
  for (std::size_t k = 0; k < members; ++k) REQUIRE(c.up(k).commit() == 3);

  // The old leader and, with five members, one follower on the minority side.
  const std::vector<std::size_t> followers = c.others(old);
  std::vector<std::size_t> minority{old};
  std::vector<std::size_t> majority;
  for (std::size_t f : followers) {
    (minority.size() < members - c.majority() ? minority : majority).push_back(f);
  }
  c.partition({minority, majority});
  c.put(old, "lost", "1");
  c.put(old, "lost", "2");
  c.run_for(3s);

  const Epoch old_term = c.up(old).entries().back().term;
  CHECK(c.up(old).entries().size() == 5);           // the two writes were appended...
  CHECK(c.up(old).commit() == 3);                   // ...and never committed
  CHECK(c.up(old).state() != raft::State::leader);  // check_quorum
  const std::optional<std::size_t> fresh = c.leader();
  REQUIRE(fresh.has_value());
  CHECK(std::find(majority.begin(), majority.end(), *fresh) != majority.end());
  CHECK(c.up(*fresh).term() > old_term);
  c.put(*fresh, "after", "1");
  c.put(*fresh, "after", "2");
  c.run_for(1s);
  // Index 4 is the new leader's empty entry, 5 and 6 its writes.
  CHECK(c.up(*fresh).commit() == 6);
  CHECK(c.succeeded(*fresh) == 2);
  CHECK(c.up(old).commit() == 3);

  c.heal();
  c.run_for(3s);
  const servers::StoreMember& leader = c.up(*fresh);
  REQUIRE(leader.state() == raft::State::leader);
  for (std::size_t k = 0; k < members; ++k) {
    INFO("member=" << k);
    const servers::StoreMember& m = c.up(k);
    CHECK(m.commit() == leader.commit());
    CHECK(m.applied() == leader.commit());
    CHECK(same_prefix(m.entries(), leader.entries(), leader.commit()));
    CHECK(m.store().revision() == leader.store().revision());
    CHECK(m.store().revision() == 4);
    CHECK_FALSE(m.store().peek("lost").has_value());
    REQUIRE(m.store().peek("after").has_value());
    CHECK(m.store().peek("after")->value == "2");
  }
  // The old leader's entries at 4 and 5 are gone, overwritten by the new leader's term.
  CHECK(c.up(old).entries()[3].term == leader.term());
  CHECK(is_empty_entry(c.up(old).entries()[3]));
}

TEST_CASE(
    "store members: followers apply in log order, and every member's store ends at the same "
    "revision after a member missed some writes") {
  const std::size_t members = GENERATE(3u, 5u);
  INFO("members=" << members);
  StoreCluster c({members});
  const std::size_t l = c.run_until_leader();
  const std::size_t missing = c.others(l).back();
  // Writes through every other member in turn, so followers forward them (etcd's MsgProp); one
  // follower is down for the second half and catches up after its restart.
  const std::vector<std::size_t> writers = c.others(missing);
  for (std::size_t i = 0; i < 12; ++i) {
    if (i == 6) c.crash(missing);
    const std::size_t via = writers[i % writers.size()];
    c.put(via, "k" + std::to_string(i), std::to_string(i));
    c.put(via, "last", std::to_string(i));
    c.run_for(30ms);
  }
  c.run_for(1s);
  c.restart(missing);
  c.run_for(2s);

  const servers::StoreMember& leader = c.up(l);
  REQUIRE(leader.state() == raft::State::leader);
  // Each key's create revision, in the order the log holds the writes, on every member.
  std::vector<std::string> log_order;
  std::string last_value;
  for (const LogEntry& e : leader.entries()) {
    const auto [key, value] = put_of(e);
    if (key.empty()) continue;
    if (key == "last") {
      last_value = value;
    } else {
      log_order.push_back(key);
    }
  }
  REQUIRE(log_order.size() == 12);
  for (std::size_t k = 0; k < members; ++k) {
    INFO("member=" << k);
    const servers::StoreMember& m = c.up(k);
    CHECK(m.commit() == static_cast<std::int64_t>(leader.entries().size()));
    CHECK(m.applied() == m.commit());
    CHECK(m.store().revision() == 24);
    CHECK(m.store().revision() == leader.store().revision());
    REQUIRE(m.store().peek("last").has_value());
    CHECK(m.store().peek("last")->value == last_value);
    sim::Revision previous = 0;
    for (const std::string& key : log_order) {
      INFO("key=" << key);
      REQUIRE(m.store().peek(key).has_value());
      CHECK(m.store().peek(key)->create_revision > previous);
      previous = m.store().peek(key)->create_revision;
    }
  }
}

// ---- What a member must have on its disk --------------------------------------------------------

// Each stops before the run would reach the ELECTSIM_ASSERT in Log::merge that a lost committed
// entry eventually trips.

TEST_CASE("store members: a follower acknowledges only entries that are on its disk") {
  // Raft Figure 2: a follower persists before it answers. The kernel holds what a handler sends
  // after its own write until that write's fsync; a later handler that writes nothing (the next
  // heartbeat, whose prev entry the follower holds in memory) may claim only what is on disk.
  StoreCluster c({3, 1, 1us});
  const std::size_t l = c.run_until_leader();
  c.run_for(500ms);
  const std::vector<std::size_t> followers = c.others(l);
  const std::size_t stalled = followers[0];
  c.crash(followers[1]);  // the leader needs the stalled follower for a majority
  c.disk_stall(stalled, 2s);
  c.put(l, "k", "v");
  c.run_for(300ms);
  const std::int64_t committed = c.up(l).commit();
  INFO("leader commit=" << committed << " while the follower's disk is stalled");
  c.crash(stalled);
  c.restart(stalled);
  // Every committed entry must be on the disks of a majority: the leader and the stalled follower.
  CHECK(static_cast<std::int64_t>(c.up(stalled).entries().size()) >= committed);
}

TEST_CASE(
    "store members: a conflicting append lost to a crash before its fsync gives back the entries "
    "the disk held") {
  // etcd's WAL is append-only: a follower that truncates its log for a new leader writes the new
  // entries after the old ones, and a crash before the fsync replays the old ones. A member that
  // came back with the unsynced new entries would answer for entries it never promised.
  StoreCluster c({5, 1, 1us});
  const std::size_t l = c.run_until_leader();
  c.run_for(500ms);
  const std::size_t follower = c.others(l)[0];
  std::vector<std::size_t> majority = c.others(l);
  majority.erase(majority.begin());
  c.partition({{l, follower}, majority});
  c.put(l, "k", "old");  // reaches the follower's disk, never a majority
  c.run_for(100ms);
  const std::int64_t index = static_cast<std::int64_t>(c.up(follower).entries().size());
  REQUIRE(put_of(c.up(follower).entries().back()) ==
          std::make_pair(std::string("k"), std::string("old")));
  c.run_for(1s);
  const std::size_t next = c.run_until_leader();
  REQUIRE(next != l);
  c.put(next, "k", "new");
  c.run_for(200ms);
  // The follower's disk stalls; the new leader's entries replace the old ones in its memory.
  c.disk_stall(follower, 5s);
  c.heal();
  const sim::Time until = c.kernel().now() + 3s;
  const auto old_entry_held = [&] {
    const std::vector<LogEntry>& log = c.up(follower).entries();
    return static_cast<std::int64_t>(log.size()) >= index &&
           put_of(log[static_cast<std::size_t>(index - 1)]).second == "old";
  };
  while (old_entry_held() && c.kernel().now() < until) c.run_for(1ms);
  REQUIRE_FALSE(old_entry_held());
  c.crash(follower);
  c.restart(follower);
  // Back from its disk: the synced log, the old entry included.
  CHECK(old_entry_held());
}

TEST_CASE(
    "store members: a leader counts itself towards a commit only once its entry is on its disk") {
  // Raft dissertation §10.2.1: the leader may write to its disk in parallel with its followers,
  // but counts itself in the majority only once it has written. A leader with a stalled disk
  // holds its appends until the fsync, yet a heartbeat's rejection sends the entry in a handler
  // that writes nothing, the follower's acknowledgement completes a majority with the leader's
  // unsynced copy, and the client is told the write succeeded.
  StoreCluster c({3, 1, 1us});
  const std::size_t l = c.run_until_leader();
  c.run_for(500ms);
  const std::vector<std::size_t> followers = c.others(l);
  const std::size_t holder = followers[0];
  const std::size_t absent = followers[1];
  c.crash(absent);
  c.disk_stall(l, 2s);
  c.put(l, "k", "v");
  c.run_for(300ms);
  INFO("leader commit=" << c.up(l).commit() << ", writes acknowledged=" << c.succeeded(l));
  // The leader crashes with its disk still stalled, and comes back with what its disk holds.
  c.crash(l);
  c.restart(l);
  c.restart(absent);
  std::size_t holders = 0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    const std::vector<LogEntry>& log = c.up(k).entries();
    holders += log.size() >= 2 && put_of(log[1]).first == "k" ? 1 : 0;
  }
  INFO("members holding the write=" << holders);
  // An acknowledged write is on a majority of disks, so no later leader can lack it.
  CHECK((c.succeeded(l) == 0 || holders >= c.majority()));
  // The two members without it elect a leader while the holder is cut off: the write the client
  // was told succeeded is not in their log.
  c.partition({{holder}, {l, absent}});
  const std::size_t next = c.run_until_leader();
  c.run_for(500ms);
  INFO("new leader=" << next << ", old leader=" << l);
  CHECK(next != holder);
  // The restarted old leader kept the applied write in its store (the store outlives the log's
  // unsynced tail) while the other member never had it: the two stores differ.
  for (std::size_t k : {l, absent}) {
    INFO("member=" << k);
    CHECK((c.succeeded(l) == 0 || c.up(k).store().peek("k").has_value()));
  }
  CHECK(c.up(l).store().revision() == c.up(absent).store().revision());
}

TEST_CASE(
    "store members: a disk stall injected into a world whose disks took no time keeps what was "
    "written before it") {
  // Kernel::inject(disk_stall) turns disk tracking on mid-run: everything written before it is on
  // disk, so a crash during the stall reverts the member to its state at the stall, not to an
  // empty disk (term 0, no vote, no log).
  StoreCluster c({3, 1});
  const std::size_t l = c.run_until_leader();
  c.run_for(500ms);
  const std::size_t f = c.others(l)[0];
  const Epoch term = c.up(f).term();
  REQUIRE(c.up(f).entries().size() == 1);
  c.disk_stall(f, 2s);
  c.put(l, "k", "v");
  c.run_for(100ms);
  c.crash(f);
  c.restart(f);
  CHECK(c.up(f).term() == term);
  CHECK(c.up(f).entries().size() >= 1);  // the committed empty entry of the first term
}

TEST_CASE(
    "store members: the leader refuses a lock acquire under lock-delay before proposing, and "
    "every member applies the refusal alike") {
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  const std::size_t follower = c.others(leader).front();
  sim::StoreRequest grant;
  grant.op = sim::StoreOp::lease_grant;
  grant.ttl = 60s;
  grant.lock_delay = 10s;
  grant.release_keys = true;
  const auto acquire = [](sim::LeaseId lease) {
    sim::StoreRequest r;
    r.op = sim::StoreOp::txn;
    r.lock_acquire = true;
    r.compares.push_back(sim::Compare{
        "lock", sim::Compare::Target::lease, sim::Compare::Op::equal, sim::kNoLease, {}});
    r.success.push_back(sim::TxnOp{sim::TxnOp::Kind::put, "lock", "x", lease});
    return r;
  };
  // Through the follower (forwarded to the leader): a session, the lock, then the session's
  // end, which releases the key under lock-delay on every member.
  c.send(follower, grant);
  c.run_for(100ms);
  REQUIRE(c.replies(follower).size() == 1);
  const sim::LeaseId a = c.replies(follower).back().lease;
  c.send(follower, acquire(a));
  c.run_for(100ms);
  REQUIRE(c.replies(follower).back().succeeded);
  sim::StoreRequest revoke;
  revoke.op = sim::StoreOp::lease_revoke;
  revoke.lease = a;
  c.send(follower, revoke);
  c.send(follower, grant);
  c.run_for(100ms);
  const sim::LeaseId b = c.replies(follower).back().lease;
  REQUIRE(b != sim::kNoLease);
  for (std::size_t k = 0; k < c.size(); ++k) {
    INFO("member " << k);
    REQUIRE(c.up(k).store().lock_delay_until("lock").has_value());
  }
  const sim::Revision before = c.up(leader).store().revision();
  c.send(follower, acquire(b));
  c.run_for(100ms);
  const sim::StoreReply refused = c.replies(follower).back();
  CHECK_FALSE(refused.succeeded);
  CHECK(refused.lock_delayed);
  CHECK(refused.error == sim::StoreError::none);
  // The refusal went through the log as such, and nothing changed anywhere.
  const auto& log = c.up(leader).entries();
  CHECK(std::any_of(log.begin(), log.end(), [](const LogEntry& e) {
    return e.command && e.command->kind == sim::StoreCommand::Kind::lock_delayed;
  }));
  for (std::size_t k = 0; k < c.size(); ++k) {
    INFO("member " << k);
    CHECK(c.up(k).store().revision() == before);
    REQUIRE(c.up(k).store().peek("lock").has_value());
    CHECK(c.up(k).store().peek("lock")->lease == sim::kNoLease);
  }
  // Once the delay is over on the leader's clock, the same acquire takes the key everywhere.
  c.run_for(10s);
  c.send(follower, acquire(b));
  c.run_for(100ms);
  CHECK(c.replies(follower).back().succeeded);
  for (std::size_t k = 0; k < c.size(); ++k) {
    INFO("member " << k);
    CHECK(c.up(k).store().peek("lock")->lease == b);
    CHECK(c.up(k).store().peek("lock")->lock_index == 2);
  }
}

TEST_CASE(
    "store members: a follower answers a ZooKeeper session's ping itself and hands the touch to "
    "the leader only at its next half tick") {
  // ZooKeeper: LearnerSessionTracker.touchSession on the follower, the touchTable sent in the
  // answer to the leader's ping every tickTime / 2 (Leader.lead, Learner.ping), the leader's
  // SessionTrackerImpl.touchSession then (LearnerHandler). tick_time is 2s here: hand-overs on
  // whole seconds of the follower's clock, expiry on even seconds.
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  const std::size_t follower = c.others(leader).front();
  sim::StoreRequest grant;
  grant.op = sim::StoreOp::lease_grant;
  grant.ttl = 4s;
  grant.session = true;
  c.send(follower, grant);
  c.run_for(100ms);
  REQUIRE(c.replies(follower).size() == 1);
  const sim::LeaseId lease = c.replies(follower)[0].lease;
  CHECK(c.replies(follower)[0].ttl == 4s);
  const auto granted = c.up(leader).store().lease_deadline(lease);
  REQUIRE(granted.has_value());
  CHECK(granted->ns % sim::Duration(2s).count() == 0);
  // A ping a quarter of a second after an odd second S of the follower's clock: touched at once
  // it would expire at S + 5; handed over at S + 1 it expires at S + 7.
  const std::int64_t second = sim::Duration(1s).count();
  std::int64_t s = c.kernel().now().ns / second + 2;
  if (s % 2 == 0) ++s;
  const sim::Time ping_at(s * second + second / 4);
  c.run_for(ping_at - c.kernel().now());
  sim::StoreRequest ping;
  ping.op = sim::StoreOp::lease_keepalive;
  ping.lease = lease;
  c.send(follower, ping);
  c.run_for(20ms);
  // Answered by the follower at once, without a round through the log...
  REQUIRE(c.replies(follower).size() == 2);
  CHECK(c.replies(follower)[1].error == sim::StoreError::none);
  CHECK(c.replies(follower)[1].ttl == 4s);
  // ...and not yet a touch on the leader.
  CHECK(c.up(leader).store().lease_deadline(lease) == granted);
  // At the next whole second the follower hands it over: the session is touched then, and
  // expires on the first even second after that touch + 4s.
  const sim::Time handed_over((ping_at.ns / second + 1) * second);
  c.run_for(handed_over + 50ms - c.kernel().now());
  const auto touched = c.up(leader).store().lease_deadline(lease);
  REQUIRE(touched.has_value());
  CHECK(*touched == servers::round_to_next_tick(sim::LocalTime(handed_over.ns) + 4s + 10ms, 2s));
  CHECK(*touched == sim::LocalTime((s + 7) * second));
}

// ---- Renewals -----------------------------------------------------------------------------------

namespace {

sim::StoreRequest grant_of(sim::Duration ttl) {
  sim::StoreRequest r;
  r.op = sim::StoreOp::lease_grant;
  r.ttl = ttl;
  return r;
}

sim::StoreRequest keepalive_of(sim::LeaseId lease) {
  sim::StoreRequest r;
  r.op = sim::StoreOp::lease_keepalive;
  r.lease = lease;
  return r;
}

// Node k's client takes a lease through member k; its first reply is the grant's.
sim::LeaseId take_lease(StoreCluster& c, std::size_t k, sim::Duration ttl,
                        sim::Duration wait = 100ms) {
  c.send(k, grant_of(ttl));
  c.run_for(wait);
  REQUIRE(c.replies(k).size() == 1);
  return c.replies(k)[0].lease;
}

// Node k's client takes `count` leases through member k at once.
void grant_many(StoreCluster& c, std::size_t k, int count, sim::Duration ttl) {
  for (int i = 0; i < count; ++i) c.send(k, grant_of(ttl));
  c.run_for(200ms);
  REQUIRE(c.replies(k).size() == static_cast<std::size_t>(count));
}

// Three members whose leader checkpoints leases every `interval` (with `on`).
StoreSetup checkpointing(sim::Duration interval, bool on = true) {
  StoreSetup setup;
  setup.lease_checkpoint = on;
  setup.checkpoint_interval = interval;
  return setup;
}

std::size_t checkpoints_in(const std::vector<LogEntry>& log) {
  return static_cast<std::size_t>(std::count_if(log.begin(), log.end(), [](const LogEntry& e) {
    return e.command && e.command->kind == sim::StoreCommand::Kind::checkpoint;
  }));
}

}  // namespace

TEST_CASE("store members: a keepalive renews on the leader alone and writes nothing to the log") {
  // etcd: "keepalives don't go through raft" (commit 2e157530); a follower forwards the renewal to
  // the leader's lessor (v3_server.go LeaseRenew).
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  const std::size_t follower = c.others(leader).front();
  const sim::LeaseId lease = take_lease(c, leader, 10s);
  c.run_for(2s);
  std::vector<std::size_t> lengths;
  std::vector<std::optional<sim::LocalTime>> before;
  for (std::size_t k = 0; k < c.size(); ++k) {
    lengths.push_back(c.up(k).entries().size());
    before.push_back(c.up(k).store().lease_deadline(lease));
    REQUIRE(before.back().has_value());
  }
  c.send(leader, keepalive_of(lease));
  c.send(follower, keepalive_of(lease));
  c.run_for(40ms);
  REQUIRE(c.replies(leader).size() == 2);
  REQUIRE(c.replies(follower).size() == 1);
  CHECK(c.replies(leader)[1].error == sim::StoreError::none);
  CHECK(c.replies(leader)[1].ttl == 10s);
  CHECK(c.replies(follower)[0].error == sim::StoreError::none);
  for (std::size_t k = 0; k < c.size(); ++k) {
    INFO("member " << k);
    CHECK(c.up(k).entries().size() == lengths[k]);
    if (k == leader) {
      CHECK(*c.up(k).store().lease_deadline(lease) > *before[k] + 1s);
    } else {
      CHECK(c.up(k).store().lease_deadline(lease) == before[k]);
    }
  }
}

TEST_CASE("store members: a leader cut off from its majority renews nothing while it still leads") {
  // etcd-io/etcd #15247: a stale leader kept leases alive that its successor revoked; since
  // 3.5.8 LeaseRenew first confirms leadership (ensureLeadership).
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  const sim::LeaseId lease = take_lease(c, leader, 3s);
  const sim::LocalTime before = *c.up(leader).store().lease_deadline(lease);
  c.partition({{leader}, c.others(leader)});
  c.send(leader, keepalive_of(lease));
  // Until check_quorum steps it down (an election timeout, 150ms at least) it believes it leads;
  // its client's keepalive waits for a round that no majority answers.
  for (int ms = 0; ms < 100; ++ms) {
    c.run_for(1ms);
    REQUIRE(c.up(leader).state() == raft::State::leader);
    CHECK(c.replies(leader).size() == 1);
    CHECK(c.up(leader).store().lease_deadline(lease) == before);
  }
}

TEST_CASE(
    "store members: a keepalive of a lease past its deadline is answered lease_not_found once "
    "the revocation has applied") {
  // lessor.Renew: an expired lease "might be pending for revoking or going through quorum to be
  // revoked. To be accurate, renew request must wait for the deletion to complete."
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  const std::size_t follower = c.others(leader).front();
  const sim::LeaseId lease = take_lease(c, leader, 2s, 20ms);
  const sim::LocalTime deadline = *c.up(leader).store().lease_deadline(lease);
  // Just past the deadline on the leader's clock (the clocks are perfect here), before a scan has
  // proposed the revocation for certain.
  c.run_for(sim::Time(deadline.ns) - c.kernel().now() + 1ms);
  c.send(follower, keepalive_of(lease));
  std::optional<sim::Time> answered;
  const sim::Time until = c.kernel().now() + 2s;
  while (!answered && c.kernel().now() < until) {
    c.run_for(1ms);
    if (c.replies(follower).size() == 1) answered = c.kernel().now();
  }
  REQUIRE(answered.has_value());
  CHECK(c.replies(follower)[0].error == sim::StoreError::lease_not_found);
  // Not before the lease was gone on the leader.
  CHECK_FALSE(c.up(leader).store().lease_deadline(lease).has_value());
}

TEST_CASE("store members: renewals that arrive while a ReadIndex round is out share the next one") {
  // etcd's linearizableReadLoop: one ReadIndex at a time; what arrives meanwhile waits for the
  // next round, which carries all of it.
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  const sim::LeaseId lease = take_lease(c, leader, 10s);
  // The same 50ms (one heartbeat interval) twice: quiet, then with twenty renewals at once.
  const std::uint64_t quiet_start = c.kernel().stats().events;
  c.run_for(50ms);
  const std::uint64_t quiet = c.kernel().stats().events - quiet_start;
  const std::uint64_t busy_start = c.kernel().stats().events;
  for (int i = 0; i < 20; ++i) c.send(leader, keepalive_of(lease));
  c.run_for(50ms);
  const std::uint64_t busy = c.kernel().stats().events - busy_start;
  REQUIRE(c.replies(leader).size() == 21);
  for (std::size_t i = 1; i < 21; ++i) CHECK(c.replies(leader)[i].error == sim::StoreError::none);
  // Each renewal is a request and an answer delivered (40 events). A round of its own for each
  // would add 20 x (2 appends + 2 answers) = 80 more; one shared round adds 4, two add 8.
  INFO("quiet " << quiet << ", busy " << busy);
  CHECK(busy - quiet <= 40 + 12);
}

TEST_CASE(
    "store members: a new leader gives every lease the extension and its whole TTL, or with "
    "checkpoints the remaining TTL the last one recorded") {
  const bool checkpoint = GENERATE(false, true);
  INFO("lease_checkpoint=" << checkpoint);
  StoreCluster c(checkpointing(1s, checkpoint));
  const std::size_t leader = c.run_until_leader();
  const sim::LeaseId lease = take_lease(c, leader, 20s, 20ms);
  // No renewals: the lease ages. Checkpoints come every second (after a scan), each recording
  // the whole seconds left, rounded up.
  c.run_for(5500ms);
  const std::size_t follower = c.others(leader).front();
  const std::optional<sim::Duration> remaining = c.up(follower).store().remaining_ttl(lease);
  REQUIRE(remaining.has_value());
  if (checkpoint) {
    CHECK(checkpoints_in(c.up(follower).entries()) >= 3);
    CHECK(*remaining >= 15s);
    CHECK(*remaining <= 17s);
  } else {
    CHECK(checkpoints_in(c.up(follower).entries()) == 0);
    CHECK(*remaining == 20s);
  }
  c.crash(leader);
  const sim::Time crashed = c.kernel().now();
  const std::size_t next = c.run_until_leader();
  c.run_for(200ms);  // its first entry applied: promoted
  const std::optional<sim::LocalTime> deadline = c.up(next).store().lease_deadline(lease);
  REQUIRE(deadline.has_value());
  const sim::Duration extend = 150ms;  // the election timeout
  const sim::Time latest = c.kernel().now();
  // Promoted between the crash and now: deadline = promotion + extend + remaining.
  CHECK(sim::Time(deadline->ns) >= crashed + extend + *remaining);
  CHECK(sim::Time(deadline->ns) <= latest + extend + *remaining);
}

TEST_CASE("store members: a renewal clears a checkpointed remainder through the log") {
  // lessor.Renew: "By applying a RAFT entry only when the remainingTTL is already set, we limit
  // the number of RAFT entries written per lease to a max of 2 per checkpoint interval."
  StoreCluster c(checkpointing(1s));
  const std::size_t leader = c.run_until_leader();
  const sim::LeaseId lease = take_lease(c, leader, 20s, 20ms);
  c.run_for(2500ms);
  for (std::size_t k = 0; k < c.size(); ++k) {
    INFO("member " << k);
    CHECK(c.up(k).store().has_checkpoint(lease));
  }
  c.send(leader, keepalive_of(lease));
  c.run_for(40ms);
  REQUIRE(c.replies(leader).size() == 2);
  CHECK(c.replies(leader)[1].error == sim::StoreError::none);
  for (std::size_t k = 0; k < c.size(); ++k) {
    INFO("member " << k);
    CHECK_FALSE(c.up(k).store().has_checkpoint(lease));
    CHECK(c.up(k).store().remaining_ttl(lease) == 20s);
  }
}

TEST_CASE(
    "store members: while the leader's fsync is unfinished it renews nothing, and renews once "
    "the write is on its disk") {
  // etcd's raft loop handles one Ready at a time: a leader stuck in a slow fdatasync confirms no
  // read index, so renewals wait (etcd-io/etcd #15247). Writes may still commit meanwhile: the
  // followers' copies are a majority without the leader's (Raft thesis §10.2.1).
  StoreSetup setup;
  setup.fsync = 1ms;
  StoreCluster c(setup);
  const std::size_t leader = c.run_until_leader();
  const sim::LeaseId lease = take_lease(c, leader, 10s);
  const auto renewal = [&]() -> std::optional<sim::StoreReply> {
    for (const sim::StoreReply& r : c.replies(leader)) {
      if (r.op == sim::StoreOp::lease_keepalive) return r;
    }
    return std::nullopt;
  };
  c.disk_stall(leader, 1s);
  const sim::Time stall_ends = c.kernel().now() + 1s;
  c.put(leader, "k", "v");  // a write the stalled disk holds
  c.run_for(20ms);
  c.send(leader, keepalive_of(lease));
  while (c.kernel().now() < stall_ends - 10ms) {
    c.run_for(10ms);
    REQUIRE_FALSE(renewal().has_value());
  }
  c.run_for(500ms);
  REQUIRE(renewal().has_value());
  CHECK(renewal()->error == sim::StoreError::none);
}

TEST_CASE("store members: a leader revokes at most 500 expired leases at each 500ms check") {
  // etcd's lessor: leaseRevokeRate / 2 = 500 leases at each check of its loop
  // (revokeExpiredLeases), the rest at the next checks.
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  grant_many(c, leader, 1200, 2s);
  REQUIRE(c.up(leader).store().lease_count() == 1200);
  std::vector<std::size_t> drops;
  for (std::size_t held = 1200; held > 0 && drops.size() < 200;) {
    c.run_for(20ms);
    const std::size_t now_held = c.up(leader).store().lease_count();
    if (now_held < held) drops.push_back(held - now_held);
    held = now_held;
  }
  CHECK(c.up(leader).store().lease_count() == 0);
  CHECK(drops == std::vector<std::size_t>{500, 500, 200});
}

TEST_CASE("store members: a new leader with a thousand leases or more spreads their deadlines") {
  // lessor.Promote: the first 750 deadlines of a second stay, the k-th after them moves k / 750 s.
  StoreCluster c(StoreSetup{});
  const std::size_t leader = c.run_until_leader();
  grant_many(c, leader, 1200, 20s);
  c.crash(leader);
  c.run_for(2s);
  const std::optional<std::size_t> next = c.leader();
  REQUIRE(next.has_value());
  std::vector<sim::LocalTime> deadlines;
  for (const sim::StoreReply& r : c.replies(leader)) {
    const auto deadline = c.up(*next).store().lease_deadline(r.lease);
    REQUIRE(deadline.has_value());
    deadlines.push_back(*deadline);
  }
  std::sort(deadlines.begin(), deadlines.end());
  CHECK(std::count(deadlines.begin(), deadlines.end(), deadlines.front()) == 750);
  CHECK(deadlines.back() - deadlines.front() == sim::Duration(1s) * 1200 / 750);
}
