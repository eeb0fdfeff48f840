// Tests of Raft leader election (protocols/raft/) as a state machine against the fake context, one
// test per sentence of the paper's §5.1, §5.2 and §5.4.1 in the manner of etcd-io/raft's
// raft_paper_test.go, then etcd's PreVote and CheckQuorum, the modelled log, commands, the
// parameter table and the registry entry. A small zero-latency cluster of fake contexts serves
// the one test that needs several nodes (a partitioned node rejoining).
// Long on purpose: one case per sentence of the paper, as etcd-io/raft's raft_paper_test.go.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/raft/config.hpp"
#include "protocols/raft/messages.hpp"
#include "protocols/raft/raft.hpp"
#include "protocols/registry.hpp"
#include "tests/protocols/fake_context.hpp"
#include "tests/protocols/kit.hpp"
#include "tests/protocols/printers.hpp"

namespace raft = electsim::protocols::raft;

namespace {

std::string describe(const raft::RaftMessage& message) {
  struct Describe {
    std::string operator()(const raft::RequestVote& m) const {
      return "RequestVote{term " + std::to_string(m.term) + ", last " +
             std::to_string(m.last_log_index) + "/" + std::to_string(m.last_log_term) + "}";
    }
    std::string operator()(const raft::RequestVoteResponse& m) const {
      return "RequestVoteResp{term " + std::to_string(m.term) + (m.granted ? ", granted}" : "}");
    }
    std::string operator()(const raft::AppendEntries& m) const {
      return "AppendEntries{term " + std::to_string(m.term) + ", leader last " +
             std::to_string(m.prev_index) + "/" + std::to_string(m.prev_term) + "}";
    }
    std::string operator()(const raft::AppendEntriesResponse& m) const {
      return "AppendEntriesResp{term " + std::to_string(m.term) + (m.success ? ", success}" : "}");
    }
    std::string operator()(const raft::PreVote& m) const {
      return "PreVote{next term " + std::to_string(m.next_term) + ", last " +
             std::to_string(m.last_log_index) + "/" + std::to_string(m.last_log_term) + "}";
    }
    std::string operator()(const raft::PreVoteResponse& m) const {
      return "PreVoteResp{term " + std::to_string(m.term) + (m.granted ? ", granted}" : "}");
    }
  };
  return std::visit(Describe{}, message);
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<raft::RaftMessage> {
  static std::string convert(const raft::RaftMessage& m) { return describe(m); }
};
template <>
struct StringMaker<std::pair<electsim::sim::NodeId, raft::RaftMessage>> {
  static std::string convert(const std::pair<electsim::sim::NodeId, raft::RaftMessage>& sent) {
    return "to " + std::to_string(sent.first) + ": " + describe(sent.second);
  }
};
template <>
struct StringMaker<raft::RaftState> {
  static std::string convert(raft::RaftState s) { return raft::raft_state_name(s); }
};
template <>
struct StringMaker<raft::LogPosition> {
  static std::string convert(const raft::LogPosition& p) {
    return std::to_string(p.index) + "/" + std::to_string(p.term);
  }
};
}  // namespace Catch

namespace {

using namespace std::chrono_literals;
using electsim::params::Problems;
using electsim::protocols::ClusterInfo;
using electsim::sim::Belief;
using electsim::sim::Duration;
using electsim::sim::kNoNode;
using electsim::sim::LocalTime;
using electsim::sim::NodeId;
using electsim::testing::FakeContext;
using electsim::testing::NodeBench;
using electsim::testing::valid_config;
using json = nlohmann::json;
using raft::AppendEntries;
using raft::AppendEntriesResponse;
using raft::LogPosition;
using raft::PreVote;
using raft::PreVoteResponse;
using raft::RaftConfig;
using raft::RaftMessage;
using raft::RaftNode;
using raft::RaftState;
using raft::RequestVote;
using raft::RequestVoteResponse;
namespace sim = electsim::sim;

constexpr auto kElection = RaftNode::kElectionTag;
constexpr auto kHeartbeat = RaftNode::kHeartbeatTag;

RaftConfig config_of(const json& params = json::object(), std::size_t nodes = 3,
                     bool workload = false) {
  return valid_config([&](Problems& p) { return raft::read_config(params, "/protocol", nodes, p); },
                      workload);
}

using Sent = std::pair<NodeId, RaftMessage>;

// One Raft node on a fake context; the test plays every peer by hand.
struct Bench : NodeBench<RaftNode, RaftConfig, raft::decode> {
  using NodeBench::NodeBench;

  // Fires the armed election timer, moving the clock to its due time.
  void timeout() { ctx.fire_tag(*node, kElection); }
  // The one message sent since the last take, which must be to `to`.
  RaftMessage reply_to(NodeId to) {
    const auto sent = take_sent();
    REQUIRE(sent.size() == 1);
    CHECK(sent.front().first == to);
    return sent.front().second;
  }

  // Starts the node and makes it leader of the next term with the (pre-)votes of the lowest
  // peers.
  void make_leader() {
    start();
    timeout();
    take_sent();
    for (NodeId peer : ctx.peers()) {
      if (node->state() != RaftState::pre_candidate) break;
      deliver(peer, PreVoteResponse{node->term() + 1, true});
    }
    for (NodeId peer : ctx.peers()) {
      if (node->state() == RaftState::leader) break;
      deliver(peer, RequestVoteResponse{node->term(), true});
    }
    REQUIRE(node->state() == RaftState::leader);
    take_sent();
  }
};

// A zero-latency cluster of fake contexts whose clocks move together: timers fire in due order
// across the cluster (ties: lowest node first) and every message is delivered at once, except to
// or from an isolated node (then it is lost).
struct Cluster {
  Cluster(const RaftConfig& c, std::size_t n) : config(std::make_shared<const RaftConfig>(c)) {
    for (std::size_t i = 0; i < n; ++i) {
      ctxs.push_back(std::make_unique<FakeContext>(static_cast<NodeId>(i), n, 1));
      nodes.push_back(std::make_unique<RaftNode>(config));
    }
    cursors.assign(n, 0);
    isolated.assign(n, false);
  }

  std::shared_ptr<const RaftConfig> config;
  std::vector<std::unique_ptr<FakeContext>> ctxs;
  std::vector<std::unique_ptr<RaftNode>> nodes;
  std::vector<std::size_t> cursors;
  std::vector<bool> isolated;

  RaftNode& node(NodeId i) { return *nodes[static_cast<std::size_t>(i)]; }
  FakeContext& ctx(NodeId i) { return *ctxs[static_cast<std::size_t>(i)]; }

  void start() {
    for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i]->on_start(*ctxs[i]);
    deliver();
  }
  void deliver() {
    for (int round = 0; round < 10'000; ++round) {
      bool any = false;
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        while (cursors[i] < ctxs[i]->sent.size()) {
          const FakeContext::Sent s = ctxs[i]->sent[cursors[i]++];
          any = true;
          const auto to = static_cast<std::size_t>(s.to);
          if (isolated[i] || isolated[to]) continue;
          nodes[to]->on_message(*ctxs[to], static_cast<NodeId>(i), s.message);
        }
      }
      if (!any) return;
    }
    FAIL("messages never stop");
  }
  void advance_to(LocalTime t) {
    for (auto& c : ctxs) {
      if (t > c->now()) c->advance(t - c->now());
    }
  }
  void fire(std::size_t i, const FakeContext::Timer& t) {
    advance_to(t.due);
    ctxs[i]->fire(*nodes[i], t.id);
    deliver();
  }
  // Fires the earliest armed timer with this tag on node i.
  void fire_tag(NodeId i, electsim::sim::TimerTag tag) {
    const auto list = ctx(i).armed(tag);
    REQUIRE(!list.empty());
    fire(static_cast<std::size_t>(i), list.front());
  }
  // The timer that fires next across the cluster.
  std::optional<std::pair<std::size_t, FakeContext::Timer>> next() const {
    std::optional<std::pair<std::size_t, FakeContext::Timer>> best;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto t = ctxs[i]->next_timer();
      if (t && (!best || t->due < best->second.due)) best = std::make_pair(i, *t);
    }
    return best;
  }
  void step() {
    const auto n = next();
    REQUIRE(n.has_value());
    fire(n->first, n->second);
  }
  // Fires timers in order until the next to fire is node i's timer with this tag.
  void run_until_next(NodeId i, electsim::sim::TimerTag tag) {
    for (int guard = 0;; ++guard) {
      REQUIRE(guard < 100'000);
      const auto n = next();
      REQUIRE(n.has_value());
      if (n->first == static_cast<std::size_t>(i) && n->second.tag == tag) return;
      fire(n->first, n->second);
    }
  }
  void run_for(Duration d) {
    const LocalTime end = ctxs.front()->now() + d;
    for (int guard = 0;; ++guard) {
      REQUIRE(guard < 100'000);
      const auto n = next();
      if (!n || n->second.due > end) break;
      fire(n->first, n->second);
    }
    advance_to(end);
  }
};

}  // namespace

// ---- Raft §5.2: leader election --------------------------------------------------------------

TEST_CASE("raft: a node starts as a follower of its durable term that knows no leader") {
  // Raft §5.2: "When servers start up, they begin as followers."
  const sim::Epoch stored_term = GENERATE(0, 4);
  Bench b(config_of());
  b.ctx.durable().set(RaftNode::kTermKey, stored_term);
  b.start();
  CHECK(b.node->state() == RaftState::follower);
  CHECK(b.node->term() == stored_term);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, stored_term));
  CHECK(b.armed(kElection) == 1);
  CHECK(b.take_sent().empty());
}

TEST_CASE(
    "raft: a follower that hears nothing for an election timeout becomes a candidate of the next "
    "term, votes for itself and asks every peer") {
  // Raft §5.2: "To begin an election, a follower increments its current term and transitions to
  // candidate state. It then votes for itself and issues RequestVote RPCs in parallel to each of
  // the other servers in the cluster."
  auto [nodes, self] = GENERATE(table<std::size_t, NodeId>({{3, 0}, {3, 2}, {5, 1}}));
  Bench b(config_of(json{{"log", {{std::to_string(self), {{"index", 7}, {"term", 3}}}}}}, nodes),
          self, nodes);
  b.start();
  REQUIRE(b.node->term() == 3);
  b.timeout();

  CHECK(b.node->state() == RaftState::candidate);
  CHECK(b.node->term() == 4);
  CHECK(b.node->voted_for() == self);
  CHECK(b.ctx.durable().get(RaftNode::kTermKey) == 4);
  CHECK(b.ctx.durable().get(RaftNode::kVoteKey) == self);
  CHECK(b.ctx.belief() == Belief::candidate(4));
  std::vector<Sent> expected;
  for (NodeId peer : b.ctx.peers()) expected.emplace_back(peer, RequestVote{4, 7, 3});
  CHECK(b.take_sent() == expected);
  CHECK(b.armed(kElection) == 1);
}

TEST_CASE("raft: a candidate whose election times out starts a new one in the next term") {
  // Raft §5.2: "each candidate will time out and start a new election by incrementing its term
  // and initiating another round of RequestVote RPCs."
  Bench b(config_of());
  b.start();
  b.timeout();
  b.deliver(1, RequestVoteResponse{1, false});  // one refusal is no majority in three
  REQUIRE(b.node->state() == RaftState::candidate);
  b.take_sent();
  b.timeout();
  CHECK(b.node->state() == RaftState::candidate);
  CHECK(b.node->term() == 2);
  CHECK(b.ctx.belief() == Belief::candidate(2));
  CHECK(b.take_sent() == std::vector<Sent>{{1, RequestVote{2, 0, 0}}, {2, RequestVote{2, 0, 0}}});
}

TEST_CASE("raft: a candidate wins exactly when a majority of the full cluster grants its vote") {
  // Raft §5.2: "A candidate wins an election if it receives votes from a majority of the servers
  // in the full cluster for the same term." (etcd's TestLeaderElectionInOneRoundRPC)
  auto [nodes, granted, refused, expected] =
      GENERATE(table<std::size_t, std::size_t, std::size_t, RaftState>({
          {1, 0, 0, RaftState::leader},
          {3, 0, 0, RaftState::candidate},
          {3, 1, 0, RaftState::leader},
          {3, 0, 1, RaftState::candidate},
          {3, 0, 2, RaftState::follower},
          {5, 1, 0, RaftState::candidate},
          {5, 2, 0, RaftState::leader},
          {5, 1, 2, RaftState::candidate},
          {5, 1, 3, RaftState::follower},
          {5, 0, 3, RaftState::follower},
      }));
  INFO(nodes << " nodes, " << granted << " granted, " << refused << " refused");
  Bench b(config_of(json::object(), nodes), 0, nodes);
  b.start();
  b.timeout();
  std::size_t next = 0;
  const auto peers = b.ctx.peers();
  for (std::size_t i = 0; i < granted; ++i) b.deliver(peers[next++], RequestVoteResponse{1, true});
  for (std::size_t i = 0; i < refused; ++i) {
    b.deliver(peers[next++], RequestVoteResponse{1, false});
  }
  CHECK(b.node->state() == expected);
  CHECK(b.node->term() == 1);
  if (expected == RaftState::follower) CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
}

TEST_CASE("raft: a duplicated vote counts once") {
  Bench b(config_of(json::object(), 5), 0, 5);
  b.start();
  b.timeout();
  b.deliver(1, RequestVoteResponse{1, true});
  b.deliver(1, RequestVoteResponse{1, true});
  CHECK(b.node->state() == RaftState::candidate);
  b.deliver(2, RequestVoteResponse{1, true});
  CHECK(b.node->state() == RaftState::leader);
}

TEST_CASE(
    "raft: a new leader announces itself and sends an empty AppendEntries to every peer at once "
    "and every heartbeat interval") {
  // Raft §5.2: "It then sends heartbeat messages to all of the other servers to establish its
  // authority and prevent new elections." (etcd's TestLeaderBcastBeat)
  const std::string heartbeat = GENERATE("50ms", "20ms");
  Bench b(config_of(json{{"heartbeat_interval", heartbeat}}));
  b.start();
  b.timeout();
  b.take_sent();
  const LocalTime elected = b.ctx.now();
  b.deliver(2, RequestVoteResponse{1, true});

  CHECK(b.ctx.belief() == Belief::leader(1));
  CHECK(b.node->leader() == 0);
  CHECK(b.armed(kElection) == 0);
  CHECK(b.take_sent() ==
        std::vector<Sent>{{1, AppendEntries{1, 0, 0}}, {2, AppendEntries{1, 0, 0}}});
  const Duration interval = *electsim::sim::parse_duration(heartbeat);
  for (int beat = 1; beat <= 3; ++beat) {
    b.ctx.fire_tag(*b.node, kHeartbeat);
    CHECK(b.ctx.now() == elected + interval * beat);
    CHECK(b.take_sent() ==
          std::vector<Sent>{{1, AppendEntries{1, 0, 0}}, {2, AppendEntries{1, 0, 0}}});
  }
}

TEST_CASE("raft: a candidate returns to follower on AppendEntries of an equal or higher term") {
  // Raft §5.2: "If the leader's term (included in its RPC) is at least as large as the
  // candidate's current term, then the candidate recognizes the leader as legitimate and returns
  // to follower state. If the term in the RPC is smaller than the candidate's current term, then
  // the candidate rejects the RPC and continues in candidate state."
  auto [term_delta, follows] = GENERATE(table<int, bool>({{0, true}, {1, true}, {-1, false}}));
  Bench b(config_of());
  b.ctx.durable().set(RaftNode::kTermKey, 3);
  b.start();
  b.timeout();
  b.take_sent();
  REQUIRE(b.node->term() == 4);
  const sim::Epoch leader_term = 4 + term_delta;
  b.deliver(2, AppendEntries{leader_term, 0, 0});
  if (follows) {
    CHECK(b.node->state() == RaftState::follower);
    CHECK(b.node->term() == leader_term);
    CHECK(b.ctx.belief() == Belief::follower(2, leader_term));
    CHECK(b.reply_to(2) == RaftMessage(AppendEntriesResponse{leader_term, true}));
  } else {
    CHECK(b.node->state() == RaftState::candidate);
    CHECK(b.ctx.belief() == Belief::candidate(4));
    CHECK(b.reply_to(2) == RaftMessage(AppendEntriesResponse{4, false}));
  }
}

TEST_CASE("raft: a request of a stale term is refused with the current term") {
  // Raft §5.1: "If a server receives a request with a stale term number, it rejects the
  // request."
  auto [request, refusal] = GENERATE(table<RaftMessage, RaftMessage>({
      {AppendEntries{2, 9, 2}, AppendEntriesResponse{3, false}},
      {RequestVote{2, 9, 2}, RequestVoteResponse{3, false}},
      {PreVote{2, 9, 2}, PreVoteResponse{3, false}},
  }));
  Bench b(config_of());
  b.ctx.durable().set(RaftNode::kTermKey, 3);
  b.start();
  b.deliver(1, request);
  CHECK(b.reply_to(1) == refusal);
  CHECK(b.node->term() == 3);
  CHECK(b.node->voted_for() == kNoNode);
  CHECK(b.node->last_log() == LogPosition{});
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 3));
}

TEST_CASE("raft: a node votes at most once per term, first come first served") {
  // Raft §5.2: "Each server will vote for at most one candidate in a given term, on a
  // first-come-first-served basis". (etcd's TestFollowerVote)
  auto [voted_for, candidate, granted] = GENERATE(table<NodeId, NodeId, bool>({
      {kNoNode, 1, true},
      {kNoNode, 2, true},
      {1, 1, true},  // the same candidate asking again (a lost reply) gets the same answer
      {2, 2, true},
      {1, 2, false},
      {2, 1, false},
  }));
  Bench b(config_of());
  b.ctx.durable().set(RaftNode::kTermKey, 1);
  b.ctx.durable().set(RaftNode::kVoteKey, voted_for);
  b.start();
  const LocalTime before = b.ctx.now();
  b.ctx.advance(10ms);
  b.deliver(candidate, RequestVote{1, 0, 0});
  CHECK(b.reply_to(candidate) == RaftMessage(RequestVoteResponse{1, granted}));
  CHECK(b.node->voted_for() == (granted ? candidate : voted_for));
  CHECK(b.ctx.durable().get(RaftNode::kVoteKey) == (granted ? candidate : voted_for));
  // Raft Figure 2: granting a vote restarts the election timeout; refusing does not.
  const auto timer = b.ctx.armed(kElection);
  REQUIRE(timer.size() == 1);
  CHECK(timer.front().set_at == (granted ? before + 10ms : before));
}

TEST_CASE("raft: the vote is durable: a restarted node does not vote twice in one term") {
  Bench b(config_of());
  b.start();
  b.deliver(1, RequestVote{2, 0, 0});
  REQUIRE(b.reply_to(1) == RaftMessage(RequestVoteResponse{2, true}));

  b.restart();
  CHECK(b.node->state() == RaftState::follower);
  CHECK(b.node->term() == 2);
  CHECK(b.node->voted_for() == 1);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 2));
  b.take_sent();
  b.deliver(2, RequestVote{2, 0, 0});
  CHECK(b.reply_to(2) == RaftMessage(RequestVoteResponse{2, false}));
  b.deliver(1, RequestVote{2, 0, 0});
  CHECK(b.reply_to(1) == RaftMessage(RequestVoteResponse{2, true}));
  // A new term frees the vote.
  b.deliver(2, RequestVote{3, 0, 0});
  CHECK(b.reply_to(2) == RaftMessage(RequestVoteResponse{3, true}));
}

TEST_CASE("raft: a voter refuses a candidate whose log is less up to date than its own") {
  // Raft §5.4.1: "If the logs have last entries with different terms, then the log with the
  // later term is more up-to-date. If the logs end with the same term, then whichever log is
  // longer is more up-to-date." (etcd's TestVoter)
  auto [candidate_index, candidate_term, granted] = GENERATE(table<std::int64_t, sim::Epoch, bool>({
      {4, 2, true},   // same log
      {5, 2, true},   // same last term, longer
      {3, 2, false},  // same last term, shorter: the index rule
      {1, 3, true},   // later last term, though shorter
      {9, 1, false},  // earlier last term, though longer: the term rule
      {0, 0, false},  // empty log
  }));
  Bench b(config_of(json{{"log", {{"0", {{"index", 4}, {"term", 2}}}}}}));
  b.start();
  REQUIRE(b.node->term() == 2);
  b.deliver(1, RequestVote{5, candidate_index, candidate_term});
  CHECK(b.reply_to(1) == RaftMessage(RequestVoteResponse{5, granted}));
  // Raft §5.1: the higher term is adopted whatever the answer.
  CHECK(b.node->term() == 5);
  CHECK(b.node->voted_for() == (granted ? 1 : kNoNode));
  CHECK(b.node->last_log() == LogPosition{4, 2});
}

TEST_CASE("raft: a higher term in any message makes a leader a follower of that term") {
  // Raft §5.1: "If a candidate or leader discovers that its term is out of date, it immediately
  // reverts to follower state."
  auto [message, new_leader] = GENERATE(table<RaftMessage, NodeId>({
      {RequestVote{2, 0, 0}, kNoNode},
      {RequestVoteResponse{2, false}, kNoNode},
      {AppendEntries{2, 0, 0}, 2},
      {AppendEntriesResponse{2, false}, kNoNode},
      {PreVoteResponse{2, false}, kNoNode},
  }));
  INFO(describe(message));
  Bench b(config_of(json::object(), 3, /*workload=*/true));
  b.make_leader();
  REQUIRE(b.node->term() == 1);
  REQUIRE(b.node->writer().active());
  b.deliver(2, message);
  CHECK(b.node->state() == RaftState::follower);
  CHECK(b.node->term() == 2);
  CHECK(b.ctx.durable().get(RaftNode::kTermKey) == 2);
  CHECK(b.ctx.belief() == Belief::follower(new_leader, 2));
  CHECK_FALSE(b.node->writer().active());
  CHECK(b.armed(kHeartbeat) == 0);
  CHECK(b.armed(kElection) == 1);
}

TEST_CASE("raft: the election timeout is drawn afresh within [min, max] at every reset") {
  // Raft §5.2: "election timeouts are chosen randomly from a fixed interval (e.g., 150-300ms)".
  // (etcd's TestFollowerElectionTimeoutRandomized)
  auto [min, max] = GENERATE(table<std::string, std::string>({
      {"150ms", "300ms"},
      {"10ms", "10ms"},
      {"10ms", "10000001ns"},
  }));
  Bench b(config_of(json{{"election_timeout_min", min},
                         {"election_timeout_max", max},
                         {"heartbeat_interval", "5ms"}}));
  b.start();
  // Resets of every kind: timeouts, heartbeats from a leader, votes granted.
  for (int i = 0; i < 10; ++i) b.timeout();
  for (int i = 0; i < 10; ++i) b.deliver(1, AppendEntries{b.node->term(), 0, 0});
  for (int i = 0; i < 10; ++i) b.deliver(2, RequestVote{b.node->term() + 1, 0, 0});

  const Duration lo = *electsim::sim::parse_duration(min);
  const Duration hi = *electsim::sim::parse_duration(max);
  std::set<Duration::rep> drawn;
  std::size_t timers = 0;
  for (const auto& t : b.ctx.timers) {
    if (t.tag != kElection) continue;
    ++timers;
    const Duration d = t.due - t.set_at;
    CHECK(d >= lo);
    CHECK(d <= hi);
    drawn.insert(d.count());
  }
  CHECK(timers >= 31);
  // Every value of a narrow interval comes up; a wide one gives mostly distinct draws.
  const auto width = static_cast<std::size_t>((hi - lo).count() + 1);
  CHECK(drawn.size() >= std::min(width, timers / 2));
  CHECK(b.node->election_timeout() ==
        b.ctx.armed(kElection).front().due - b.ctx.armed(kElection).front().set_at);
}

TEST_CASE("raft: a single-node cluster elects itself at its first timeout") {
  Bench b(config_of(json::object(), 1), 0, 1);
  b.start();
  b.timeout();
  CHECK(b.ctx.belief() == Belief::leader(1));
  CHECK(b.take_sent().empty());
}

// ---- The modelled log --------------------------------------------------------------------------

TEST_CASE(
    "raft: a follower that hears from its leader restarts its election timeout and adopts the "
    "leader's log position") {
  Bench b(config_of(json{{"log", {{"0", {{"index", 2}, {"term", 1}}}}}}));
  b.start();
  b.ctx.advance(100ms);
  b.deliver(1, AppendEntries{3, 6, 3});
  CHECK(b.ctx.belief() == Belief::follower(1, 3));
  CHECK(b.node->last_log() == LogPosition{6, 3});
  CHECK(b.ctx.durable().get(RaftNode::kLogIndexKey) == 6);
  CHECK(b.ctx.durable().get(RaftNode::kLogTermKey) == 3);
  CHECK(b.reply_to(1) == RaftMessage(AppendEntriesResponse{3, true}));
  const auto timer = b.ctx.armed(kElection);
  REQUIRE(timer.size() == 1);
  CHECK(timer.front().set_at == LocalTime(100ms));
  // Another heartbeat later pushes the timeout on again.
  b.ctx.advance(40ms);
  b.deliver(1, AppendEntries{3, 7, 3});
  REQUIRE(b.armed(kElection) == 1);
  CHECK(b.ctx.armed(kElection).front().set_at == LocalTime(140ms));
  CHECK(b.node->last_log() == LogPosition{7, 3});
}

TEST_CASE("raft: the log position is durable and the configured log applies to the first start") {
  Bench b(config_of(json{{"log", {{"0", {{"index", 3}, {"term", 2}}}}}}));
  b.start();
  CHECK(b.node->last_log() == LogPosition{3, 2});
  CHECK(b.node->term() == 2);  // no entry is from a later term than the server's
  b.deliver(1, AppendEntries{4, 5, 4});
  b.restart();
  CHECK(b.node->last_log() == LogPosition{5, 4});
  CHECK(b.node->term() == 4);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 4));
}

TEST_CASE(
    "raft: the leader appends one entry at its term per write and its heartbeats carry the "
    "position") {
  Bench b(config_of(json{{"log", {{"0", {{"index", 4}, {"term", 2}}}}}}, 3, /*workload=*/true));
  b.make_leader();
  REQUIRE(b.node->term() == 3);
  b.ctx.run_for(*b.node, 350ms);  // writes every 100ms by default
  REQUIRE(b.ctx.sink_calls.size() == 3);
  for (const auto& call : b.ctx.sink_calls) CHECK(call.token == 3);
  CHECK(b.node->last_log() == LogPosition{7, 3});
  CHECK(b.ctx.durable().get(RaftNode::kLogIndexKey) == 7);
  b.take_sent();
  b.ctx.fire_tag(*b.node, kHeartbeat);
  CHECK(b.take_sent() ==
        std::vector<Sent>{{1, AppendEntries{3, 7, 3}}, {2, AppendEntries{3, 7, 3}}});
}

TEST_CASE(
    "raft: a sink rejection of the current term's token deposes the leader, of an older not") {
  auto [token_delta, steps_down] = GENERATE(table<int, bool>({{0, true}, {-1, false}}));
  Bench b(config_of(json::object(), 3, /*workload=*/true));
  b.ctx.durable().set(RaftNode::kTermKey, 4);
  b.make_leader();
  sim::SinkReply reply;
  reply.id = 99;
  reply.token = b.node->term() + token_delta;
  reply.accepted = false;
  reply.highest_accepted = 9;
  b.ctx.deliver(*b.node, reply);
  CHECK(b.node->state() == (steps_down ? RaftState::follower : RaftState::leader));
  CHECK(b.node->term() == 5);
  CHECK(b.node->writer().active() == !steps_down);
  if (steps_down) CHECK(b.ctx.belief() == Belief::follower(kNoNode, 5));
}

TEST_CASE("raft: a leader told to step down or stop follows in its term with a fresh timeout") {
  const sim::Command command = GENERATE(sim::Command::step_down, sim::Command::stop);
  Bench b(config_of(json::object(), 3, /*workload=*/true));
  b.make_leader();
  b.ctx.advance(30ms);
  b.node->on_command(b.ctx, command);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
  CHECK_FALSE(b.node->writer().active());
  CHECK(b.armed(kHeartbeat) == 0);
  // It does not campaign at once: a full election timeout from now first.
  CHECK(b.take_sent().empty());
  const auto timer = b.ctx.armed(kElection);
  REQUIRE(timer.size() == 1);
  CHECK(timer.front().due >= b.ctx.now() + 150ms);
}

// ---- PreVote (dissertation §9.6, etcd's PreVote) -----------------------------------------------

TEST_CASE("raft: with pre_vote a timed-out follower asks for the next term without moving to it") {
  Bench b(config_of(json{{"pre_vote", true}, {"log", {{"0", {{"index", 2}, {"term", 1}}}}}}));
  b.start();
  b.deliver(1, AppendEntries{3, 2, 1});
  b.take_sent();
  // Cut off from everyone, it times out again and again: its term does not grow.
  for (int i = 0; i < 5; ++i) {
    b.timeout();
    CHECK(b.node->state() == RaftState::pre_candidate);
    CHECK(b.node->term() == 3);
    CHECK(b.node->voted_for() == kNoNode);
    CHECK(b.ctx.durable().get(RaftNode::kTermKey) == 3);
    CHECK(b.ctx.belief() == Belief::follower(kNoNode, 3));
    CHECK(b.take_sent() == std::vector<Sent>{{1, PreVote{4, 2, 1}}, {2, PreVote{4, 2, 1}}});
  }
}

TEST_CASE(
    "raft: with pre_vote a majority of pre-votes starts a real election, a majority of refusals "
    "ends the attempt") {
  auto [nodes, granted, refused, expected] =
      GENERATE(table<std::size_t, std::size_t, std::size_t, RaftState>({
          {3, 1, 0, RaftState::candidate},
          {3, 0, 1, RaftState::pre_candidate},
          {3, 0, 2, RaftState::follower},
          {5, 1, 0, RaftState::pre_candidate},
          {5, 2, 0, RaftState::candidate},
          {5, 0, 3, RaftState::follower},
      }));
  Bench b(config_of(json{{"pre_vote", true}}, nodes), 0, nodes);
  b.ctx.durable().set(RaftNode::kTermKey, 2);
  b.start();
  b.timeout();
  b.take_sent();
  std::size_t next = 0;
  const auto peers = b.ctx.peers();
  // A grant names the term asked for (3); a refusal the voter's own (2).
  for (std::size_t i = 0; i < granted; ++i) b.deliver(peers[next++], PreVoteResponse{3, true});
  for (std::size_t i = 0; i < refused; ++i) b.deliver(peers[next++], PreVoteResponse{2, false});
  CHECK(b.node->state() == expected);
  if (expected == RaftState::candidate) {
    CHECK(b.node->term() == 3);
    CHECK(b.ctx.belief() == Belief::candidate(3));
    std::vector<Sent> votes;
    for (NodeId peer : peers) votes.emplace_back(peer, RequestVote{3, 0, 0});
    CHECK(b.take_sent() == votes);
  } else {
    CHECK(b.node->term() == 2);
    CHECK(b.ctx.belief() == Belief::follower(kNoNode, 2));
    CHECK(b.take_sent().empty());
  }
}

TEST_CASE("raft: a pre-vote grant of the requested term does not count as a higher term") {
  Bench b(config_of(json{{"pre_vote", true}}, 5), 0, 5);
  b.start();
  b.timeout();
  b.deliver(1, PreVoteResponse{1, true});
  CHECK(b.node->state() == RaftState::pre_candidate);
  CHECK(b.node->term() == 0);
  // A refusal at a higher term is news, though: the node follows in that term.
  b.deliver(2, PreVoteResponse{6, false});
  CHECK(b.node->state() == RaftState::follower);
  CHECK(b.ctx.belief() == Belief::follower(kNoNode, 6));
}

TEST_CASE(
    "raft: a pre-vote is granted only by a peer with no live leader and a log no more up to "
    "date, and changes nothing on it") {
  // Dissertation §9.6: a server grants a pre-vote if the candidate's log is up to date and it
  // has not received a heartbeat from a valid leader for at least a baseline election timeout.
  auto [since_leader, candidate_log_term, granted] =
      GENERATE(table<std::optional<Duration>, sim::Epoch, bool>({
          {std::nullopt, 1, true},   // never heard of a leader
          {149ms, 1, false},         // heard from one within the minimum election timeout
          {150ms, 1, true},          // not since the minimum election timeout
          {std::nullopt, 0, false},  // the candidate's log is behind
      }));
  Bench b(config_of(json{{"pre_vote", true}, {"log", {{"1", {{"index", 2}, {"term", 1}}}}}}), 1);
  b.start();
  if (since_leader) {
    b.deliver(0, AppendEntries{2, 2, 1});
    b.ctx.advance(*since_leader);
  } else {
    b.deliver(0, RequestVote{2, 0, 0});  // moves to term 2 without a leader (refused)
  }
  b.take_sent();
  REQUIRE(b.node->term() == 2);
  const auto timer_before = b.ctx.armed(kElection);
  const auto belief_before = b.ctx.belief();

  b.deliver(2, PreVote{3, 5, candidate_log_term});
  CHECK(b.reply_to(2) == RaftMessage(PreVoteResponse{granted ? 3 : 2, granted}));
  CHECK(b.node->term() == 2);
  CHECK(b.node->voted_for() == kNoNode);
  CHECK(b.ctx.belief() == belief_before);
  REQUIRE(b.ctx.armed(kElection).size() == 1);
  CHECK(b.ctx.armed(kElection).front().id == timer_before.front().id);
}

TEST_CASE("raft: a leader refuses pre-votes") {
  Bench b(config_of(json{{"pre_vote", true}}));
  b.make_leader();
  b.deliver(2, PreVote{2, 0, 0});
  CHECK(b.reply_to(2) == RaftMessage(PreVoteResponse{1, false}));
  CHECK(b.node->state() == RaftState::leader);
}

TEST_CASE(
    "raft: a partitioned node that rejoins disrupts the leader without pre_vote, not with it") {
  const bool pre_vote = GENERATE(false, true);
  INFO("pre_vote=" << pre_vote);
  Cluster c(config_of(json{{"pre_vote", pre_vote}}), 3);
  c.start();
  c.fire_tag(0, kElection);
  REQUIRE(c.node(0).state() == RaftState::leader);
  REQUIRE(c.node(0).term() == 1);
  c.run_for(200ms);
  REQUIRE(c.ctx(2).belief() == Belief::follower(0, 1));

  c.isolated[2] = true;
  c.run_for(2s);  // node 2 times out again and again
  if (pre_vote) {
    CHECK(c.node(2).term() == 1);
  } else {
    CHECK(c.node(2).term() > 3);
  }
  CHECK(c.node(0).state() == RaftState::leader);

  // The partition heals just as node 2 times out once more, before a heartbeat can reach it.
  c.run_until_next(2, kElection);
  c.isolated[2] = false;
  const std::size_t node1_sent = c.ctx(1).sent.size();
  c.step();
  if (pre_vote) {
    // Its pre-votes were refused by a follower that hears from the leader and by the leader.
    CHECK(c.node(0).state() == RaftState::leader);
    CHECK(c.node(0).term() == 1);
    REQUIRE(c.ctx(1).sent.size() > node1_sent);
    CHECK(raft::decode(c.ctx(1).sent[node1_sent].message) ==
          RaftMessage(PreVoteResponse{1, false}));
    CHECK(c.ctx(1).belief() == Belief::follower(0, 1));
    CHECK(c.ctx(2).belief() == Belief::follower(kNoNode, 1));
    c.run_for(1s);
    CHECK(c.ctx(0).belief() == Belief::leader(1));
    CHECK(c.ctx(1).belief() == Belief::follower(0, 1));
    CHECK(c.ctx(2).belief() == Belief::follower(0, 1));
  } else {
    // Its RequestVote of a high term deposed the leader and forced a new election.
    CHECK(c.node(0).term() > 3);
    CHECK(c.node(1).term() > 3);
    c.run_for(1s);
    CHECK(std::count_if(c.nodes.begin(), c.nodes.end(),
                        [](const auto& n) { return n->state() == RaftState::leader; }) == 1);
  }
}

// ---- CheckQuorum (dissertation §6.2, etcd's CheckQuorum) --------------------------------------

TEST_CASE(
    "raft: with check_quorum a leader that hears from no majority for an election timeout steps "
    "down") {
  auto [responders, stays] = GENERATE(table<int, bool>({
      {0, false},
      {1, false},
      {2, true},
      {4, true},
  }));
  INFO(responders << " of 4 peers answer");
  Bench b(config_of(json{{"check_quorum", true}}, 5), 0, 5);
  b.start();
  b.timeout();
  for (NodeId peer : {1, 2}) b.deliver(peer, RequestVoteResponse{1, true});
  REQUIRE(b.node->state() == RaftState::leader);
  const LocalTime elected = b.ctx.now();
  const NodeId last_responder = responders;  // a structured binding cannot be captured
  const auto answer = [&] {
    for (NodeId peer = 1; peer <= last_responder; ++peer) {
      b.deliver(peer, AppendEntriesResponse{1, true});
    }
  };
  answer();  // to the first heartbeat
  while (b.ctx.now() < elected + 600ms && b.node->state() == RaftState::leader) {
    const auto t = b.ctx.next_timer();
    REQUIRE(t.has_value());
    const bool heartbeat = t->tag == kHeartbeat;
    b.ctx.fire_next(*b.node);
    if (heartbeat) answer();
  }
  CHECK(b.node->state() == (stays ? RaftState::leader : RaftState::follower));
  if (!stays) {
    CHECK(b.ctx.belief() == Belief::follower(kNoNode, 1));
    // Checked once per minimum election timeout; the votes count as contact for the first.
    CHECK(b.ctx.now() == elected + 300ms);
  }
}

TEST_CASE("raft: without check_quorum a leader that hears from nobody stays leader") {
  Bench b(config_of());
  b.make_leader();
  b.ctx.run_for(*b.node, 10s);
  CHECK(b.node->state() == RaftState::leader);
  CHECK(b.ctx.belief() == Belief::leader(1));
}

TEST_CASE(
    "raft: with check_quorum a leader writes only while a majority has answered within the "
    "minimum election timeout") {
  const bool answered = GENERATE(false, true);
  Bench b(config_of(json{{"check_quorum", true}}, 3, /*workload=*/true));
  b.make_leader();                // node 1's vote is the last contact unless it answers a heartbeat
  b.ctx.run_for(*b.node, 120ms);  // the write at 100ms: the vote is recent
  REQUIRE(b.ctx.sink_calls.size() == 1);
  if (answered) b.deliver(1, AppendEntriesResponse{1, true});
  // The check at 150ms still counts the vote; the write at 200ms needs the answer.
  b.ctx.run_for(*b.node, 90ms);
  REQUIRE(b.node->state() == RaftState::leader);
  CHECK(b.ctx.sink_calls.size() == (answered ? 2u : 1u));
  CHECK(b.node->last_log().index == (answered ? 2 : 1));
}

TEST_CASE(
    "raft: with check_quorum a follower in touch with its leader ignores a RequestVote of a "
    "higher term") {
  // Dissertation §4.2.3: "if a server receives a RequestVote request within the minimum election
  // timeout of hearing from a current leader, it does not update its term or grant its vote".
  auto [check_quorum, since_leader, ignores] = GENERATE(table<bool, Duration, bool>({
      {true, 100ms, true},
      {true, 149ms, true},
      {true, 150ms, false},
      {false, 100ms, false},
  }));
  Bench b(config_of(json{{"check_quorum", check_quorum}}), 1);
  b.start();
  b.deliver(0, AppendEntries{1, 0, 0});
  b.take_sent();
  b.ctx.advance(since_leader);
  b.deliver(2, RequestVote{2, 0, 0});
  if (ignores) {
    CHECK(b.take_sent().empty());
    CHECK(b.node->term() == 1);
    CHECK(b.ctx.belief() == Belief::follower(0, 1));
  } else {
    CHECK(b.reply_to(2) == RaftMessage(RequestVoteResponse{2, true}));
    CHECK(b.node->term() == 2);
    CHECK(b.ctx.belief() == Belief::follower(kNoNode, 2));
  }
}

// ---- Messages ----------------------------------------------------------------------------------

TEST_CASE("raft: every message survives encoding into a kernel message, with its own type") {
  auto [message, name] = GENERATE(table<RaftMessage, std::string>({
      {RequestVote{7, 12, 6}, "RequestVote"},
      {RequestVoteResponse{7, true}, "RequestVoteResp"},
      {RequestVoteResponse{8, false}, "RequestVoteResp"},
      {AppendEntries{9, 3, 2}, "AppendEntries"},
      {AppendEntriesResponse{9, true}, "AppendEntriesResp"},
      {PreVote{10, 4, 9}, "PreVote"},
      {PreVoteResponse{10, true}, "PreVoteResp"},
  }));
  const sim::Message encoded = raft::encode(message);
  REQUIRE(encoded.type < raft::message_type_names().size());
  CHECK(raft::message_type_names()[encoded.type] == name);
  CHECK(raft::decode(encoded) == message);
}

TEST_CASE("raft: a message of a type Raft does not have does not decode") {
  sim::Message unknown;
  unknown.type = static_cast<sim::MessageType>(raft::kMessageTypeCount);
  CHECK_FALSE(raft::decode(unknown).has_value());
}

// ---- Timer rules, ticks, lagging logs and campaigns -------------------------------------------

TEST_CASE(
    "raft: a candidate refused by a majority follows under etcd's rule and stays a candidate "
    "until its timer fires under the paper's") {
  auto [rule, expected] = GENERATE(table<std::string, RaftState>({
      {"etcd", RaftState::follower},
      {"paper", RaftState::candidate},
  }));
  INFO("timer_rule " << rule);
  Bench b(config_of(json{{"timer_rule", rule}}));
  b.start();
  b.timeout();
  const LocalTime due = b.ctx.armed(kElection).front().due;
  b.deliver(1, RequestVoteResponse{1, false});
  b.deliver(2, RequestVoteResponse{1, false});
  CHECK(b.node->state() == expected);
  CHECK(b.node->term() == 1);
  // The paper's candidate keeps the timer of its election; etcd's follower draws a new one.
  REQUIRE(b.armed(kElection) == 1);
  CHECK((b.ctx.armed(kElection).front().due == due) == (rule == "paper"));
}

TEST_CASE(
    "raft: stepping down to a higher term re-arms a follower's election timer under etcd's "
    "rule only, and a leader's under both") {
  const std::string rule = GENERATE("etcd", "paper");
  INFO("timer_rule " << rule);
  SECTION("a follower") {
    Bench b(config_of(json{{"timer_rule", rule}, {"log", {{"0", {{"index", 9}, {"term", 1}}}}}}));
    b.start();
    b.ctx.advance(100ms);
    const LocalTime due = b.ctx.armed(kElection).front().due;
    // A candidate of a higher term whose log is behind: refused, but its term is adopted.
    b.deliver(1, RequestVote{5, 0, 0});
    CHECK(b.node->term() == 5);
    CHECK(b.node->state() == RaftState::follower);
    CHECK(b.take_sent() == std::vector<Sent>{{1, RequestVoteResponse{5, false}}});
    REQUIRE(b.armed(kElection) == 1);
    CHECK((b.ctx.armed(kElection).front().due == due) == (rule == "paper"));
  }
  SECTION("a leader") {
    Bench b(config_of(json{{"timer_rule", rule}}));
    b.make_leader();
    b.deliver(1, RequestVoteResponse{3, false});
    CHECK(b.node->state() == RaftState::follower);
    CHECK(b.armed(kElection) == 1);
    CHECK(b.armed(kHeartbeat) == 0);
  }
}

TEST_CASE(
    "raft: campaign starts an election at once (a pre-vote with pre_vote), and a leader ignores "
    "it") {
  auto [pre_vote, expected] = GENERATE(table<bool, RaftState>({
      {false, RaftState::candidate},
      {true, RaftState::pre_candidate},
  }));
  Bench b(config_of(json{{"pre_vote", pre_vote}}));
  b.start();
  b.ctx.advance(10ms);  // long before the election timer
  b.node->on_command(b.ctx, sim::Command::campaign);
  CHECK(b.node->state() == expected);
  const auto sent = b.take_sent();
  REQUIRE(sent.size() == 2);
  if (pre_vote) {
    CHECK(sent.front().second == RaftMessage{PreVote{1, 0, 0}});
  } else {
    CHECK(sent.front().second == RaftMessage{RequestVote{1, 0, 0}});
  }
  for (NodeId peer : {1, 2}) {
    if (pre_vote) b.deliver(peer, PreVoteResponse{1, true});
  }
  b.take_sent();
  b.deliver(1, RequestVoteResponse{1, true});
  REQUIRE(b.node->state() == RaftState::leader);
  b.take_sent();
  b.node->on_command(b.ctx, sim::Command::campaign);
  CHECK(b.node->state() == RaftState::leader);
  CHECK(b.node->term() == 1);
  CHECK(b.take_sent().empty());
}

TEST_CASE(
    "raft: with tick every timer counts whole ticks from the node's own phase, as etcd's Tick") {
  Bench b(config_of(json{{"tick", "10ms"},
                         {"election_timeout_min", "150ms"},
                         {"election_timeout_max", "300ms"},
                         {"heartbeat_interval", "50ms"}}));
  b.start();
  const auto phase = [](LocalTime t) { return t.since_start().count() % 10'000'000; };
  const LocalTime first = b.ctx.armed(kElection).front().due;
  std::set<std::int64_t> phases = {phase(first)};
  for (int i = 0; i < 50; ++i) {
    // Heartbeats at arbitrary moments reset the timer: it still fires on this node's ticks, after
    // 15 to 30 of them, counted from the first tick after the reset.
    b.ctx.advance(Duration(3'700'000 + i * 130'000));
    const LocalTime heard = b.ctx.now();
    b.deliver(1, AppendEntries{1, 0, 0, 0});
    const LocalTime due = b.ctx.armed(kElection).front().due;
    phases.insert(phase(due));
    CHECK(due - heard > 140ms);
    CHECK(due - heard <= 300ms);
    CHECK(b.node->election_timeout() % 10ms == Duration(0));
  }
  CHECK(phases.size() == 1);
  // A leader's heartbeats fall on the same ticks, every five of them.
  b.timeout();
  b.deliver(1, RequestVoteResponse{b.node->term(), true});
  REQUIRE(b.node->state() == RaftState::leader);
  const LocalTime beat = b.ctx.armed(kHeartbeat).front().due;
  CHECK(phase(beat) == *phases.begin());
  CHECK(beat - b.ctx.now() <= 50ms);
  CHECK(beat - b.ctx.now() > 40ms);
}

TEST_CASE("raft: a follower refuses votes within check_quorum_lease of hearing its leader") {
  auto [lease, asked_after, granted] = GENERATE(table<std::string, Duration, bool>({
      {"150ms", 200ms, true},  // the default lease, the minimum election timeout, has run out
      {"400ms", 200ms, false},
      {"400ms", 401ms, true},
  }));
  INFO("lease " << lease << ", asked after " << asked_after.count() << "ns");
  Bench b(config_of(json{{"check_quorum", true},
                         {"check_quorum_lease", lease},
                         {"election_timeout_min", "500ms"},
                         {"election_timeout_max", "600ms"}}));
  b.start();
  b.deliver(1, AppendEntries{1, 0, 0, 0});
  b.take_sent();
  b.ctx.advance(asked_after);
  b.deliver(2, RequestVote{2, 0, 0});
  const auto sent = b.take_sent();
  if (granted) {
    CHECK(sent == std::vector<Sent>{{2, RequestVoteResponse{2, true}}});
  } else {
    // Dissertation §4.2.3: neither the term nor the vote moves, and nothing is answered.
    CHECK(sent.empty());
    CHECK(b.node->term() == 1);
  }
}

TEST_CASE("raft: a lagging follower answers heartbeats but keeps its log") {
  const bool lagging = GENERATE(false, true);
  INFO("lagging " << lagging);
  Bench b(config_of(lagging ? json{{"lagging", {2}}} : json::object()), 2);
  b.start();
  b.deliver(0, AppendEntries{1, 5, 1, 0});
  CHECK(b.take_sent() == std::vector<Sent>{{0, AppendEntriesResponse{1, true, 0}}});
  CHECK(b.node->leader() == 0);
  CHECK(b.node->last_log() == (lagging ? LogPosition{} : LogPosition{5, 1}));
}

TEST_CASE(
    "raft: with two of five lagging, only an up-to-date survivor can win after the leader dies "
    "(the Raft paper's Figure 16 setup)") {
  // Every node starts with the first entry; nodes 3 and 4 never take another. The leader writes,
  // so nodes 1 and 2 pass them; when node 0 is isolated, only 1 or 2 can win.
  Cluster c(config_of(json{{"lagging", {3, 4}},
                           {"log",
                            {{"0", {{"index", 1}, {"term", 1}}},
                             {"1", {{"index", 1}, {"term", 1}}},
                             {"2", {{"index", 1}, {"term", 1}}},
                             {"3", {{"index", 1}, {"term", 1}}},
                             {"4", {{"index", 1}, {"term", 1}}}}}},
                      5, /*workload=*/true),
            5);
  c.start();
  c.fire_tag(0, kElection);
  REQUIRE(c.node(0).state() == RaftState::leader);
  c.run_for(2s);
  REQUIRE(c.node(0).state() == RaftState::leader);
  CHECK(c.node(1).last_log() == c.node(0).last_log());
  CHECK(c.node(3).last_log() == LogPosition{1, 1});
  c.isolated[0] = true;
  // Let the lagging nodes time out first, again and again: they never gather a majority.
  for (int round = 0; round < 20; ++round) {
    c.run_for(400ms);
    for (NodeId n : {3, 4}) CHECK(c.node(n).state() != RaftState::leader);
    if (c.node(1).state() == RaftState::leader || c.node(2).state() == RaftState::leader) break;
  }
  CHECK((c.node(1).state() == RaftState::leader || c.node(2).state() == RaftState::leader));
}

// ---- Parameters and the registry entry ---------------------------------------------------------

TEST_CASE("raft: each parameter has its documented default") {
  const RaftConfig c = config_of(json(nullptr), 4);
  CHECK(c.election_timeout_min == 150ms);
  CHECK(c.election_timeout_max == 300ms);
  CHECK(c.heartbeat_interval == 50ms);
  CHECK_FALSE(c.pre_vote);
  CHECK_FALSE(c.check_quorum);
  CHECK(c.initial_log == std::vector<LogPosition>(4));
  CHECK(c.timer_rule == electsim::raft::TimerRule::etcd);
  CHECK(c.tick == Duration(0));
  CHECK(c.check_quorum_lease == Duration(0));
  CHECK(c.lagging.empty());
  // "0s" is continuous time, as leaving tick out is.
  CHECK(config_of(json{{"tick", "0s"}}).tick == Duration(0));
}

TEST_CASE("raft: given parameters override the defaults, nodes left out of log start empty") {
  const RaftConfig c = config_of(json{{"election_timeout_min", "1s"},
                                      {"election_timeout_max", "2s"},
                                      {"heartbeat_interval", "100ms"},
                                      {"pre_vote", true},
                                      {"check_quorum", true},
                                      {"timer_rule", "paper"},
                                      {"tick", "100ms"},
                                      {"check_quorum_lease", "1500ms"},
                                      {"lagging", {3, 1}},
                                      {"log",
                                       {{"0", {{"index", 5}, {"term", 2}}},
                                        {"2", {{"index", 0}, {"term", 0}}},
                                        {"3", {{"term", 1}, {"index", 1}}}}}},
                                 4);
  CHECK(c.election_timeout_min == 1s);
  CHECK(c.election_timeout_max == 2s);
  CHECK(c.heartbeat_interval == 100ms);
  CHECK(c.pre_vote);
  CHECK(c.check_quorum);
  CHECK(c.initial_log == std::vector<LogPosition>{LogPosition{5, 2}, {}, {}, LogPosition{1, 1}});
  CHECK(c.timer_rule == electsim::raft::TimerRule::paper);
  CHECK(c.tick == 100ms);
  CHECK(c.check_quorum_lease == 1500ms);
  CHECK(c.lagging == std::vector<bool>{false, true, false, true});
}

TEST_CASE("raft: a wrong or inconsistent parameter is one problem at its own pointer") {
  auto [params, pointer, says] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"election_timeout_min": "400ms"})", "/protocol/election_timeout_max", "300ms"},
      {R"({"election_timeout_max": "100ms"})", "/protocol/election_timeout_max", "150ms"},
      {R"({"heartbeat_interval": "150ms"})", "/protocol/heartbeat_interval", "shorter"},
      {R"({"election_timeout_min": "0"})", "/protocol/election_timeout_min", "at least \"1ms\""},
      {R"({"heartbeat_interval": "-5ms"})", "/protocol/heartbeat_interval", "non-negative"},
      {R"({"election_timeot_min": "1s"})", "/protocol/election_timeot_min", "election_timeout_min"},
      {R"({"pre_vote": "yes"})", "/protocol/pre_vote", "true or false"},
      {R"({"log": [1, 2]})", "/protocol/log", "node ids"},
      {R"({"log": {"3": {"index": 1, "term": 1}}})", "/protocol/log/3", "cluster size (3)"},
      {R"({"log": {"01": {"index": 1, "term": 1}}})", "/protocol/log/01", "decimal"},
      {R"({"log": {"-1": {"index": 1, "term": 1}}})", "/protocol/log/-1", "decimal"},
      {R"({"log": {"a/b": {"index": 1, "term": 1}}})", "/protocol/log/a~1b", "decimal"},
      {R"({"log": {"1": 4}})", "/protocol/log/1", "log position"},
      {R"({"log": {"1": {"index": -1, "term": 1}}})", "/protocol/log/1/index", "whole number"},
      {R"({"log": {"1": {"index": 1.5, "term": 1}}})", "/protocol/log/1/index", "whole number"},
      {R"({"log": {"1": {"index": 2}}})", "/protocol/log/1/term", "needs \"term\""},
      {R"({"log": {"1": {"index": 2, "term": 0}}})", "/protocol/log/1/term", "at least 1"},
      {R"({"log": {"1": {"index": 0, "term": 2}}})", "/protocol/log/1/term", "empty log"},
      {R"({"log": {"1": {"index": 2, "term": 1, "commit": 1}}})", "/protocol/log/1/commit",
       "index, term"},
      {R"({"log": {"1": {"index": 10000000000000, "term": 1}}})", "/protocol/log/1/index",
       "whole number"},
      {R"({"timer_rule": "logcabin"})", "/protocol/timer_rule", "\"paper\""},
      {R"({"tick": "60ms"})", "/protocol/tick", "at most heartbeat_interval (50ms)"},
      {R"({"tick": "500us"})", "/protocol/tick", "at least \"1ms\""},
      {R"({"tick": "-1ms"})", "/protocol/tick", "non-negative"},
      {R"({"check_quorum": true, "check_quorum_lease": "50ms"})", "/protocol/check_quorum_lease",
       "longer than"},
      {R"({"check_quorum_lease": "400ms"})", "/protocol/check_quorum_lease",
       "expected no check_quorum_lease without \"check_quorum\": true"},
      {R"({"check_quorum": false, "check_quorum_lease": "400ms"})", "/protocol/check_quorum_lease",
       "the lease is CheckQuorum's"},
      {R"({"lagging": 3})", "/protocol/lagging", "a list of distinct node ids"},
      {R"({"lagging": [3]})", "/protocol/lagging/0", "below the cluster size (3)"},
      {R"({"lagging": [1, 1]})", "/protocol/lagging/1", "node 1 a second time"},
      {R"({"lagging": [-1]})", "/protocol/lagging/0", "node ids"},
      {R"({"lagging": [0.5]})", "/protocol/lagging/0", "node ids"},
  }));
  INFO(params);
  Problems problems;
  const auto config = raft::read_config(json::parse(params), "/protocol", 3, problems);
  CHECK_FALSE(config.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == pointer);
  CHECK_THAT(problems.front().format(), Catch::Contains(says));
}

TEST_CASE("raft: the registry entry names the protocol, its parameters and its message types") {
  const auto& info = electsim::protocols::raft_protocol_info();
  CHECK(info.name == "raft");
  CHECK_FALSE(info.description.empty());
  std::vector<std::string> names;
  for (const auto& spec : info.params) names.push_back(spec.name);
  CHECK(names == std::vector<std::string>{"election_timeout_min", "election_timeout_max",
                                          "heartbeat_interval", "pre_vote", "check_quorum", "log",
                                          "lagging", "timer_rule", "tick", "check_quorum_lease"});
  CHECK(info.message_types == std::vector<std::string>{"RequestVote", "RequestVoteResp",
                                                       "AppendEntries", "AppendEntriesResp",
                                                       "PreVote", "PreVoteResp"});
  // The named defaults are the ones the reader applies.
  Problems problems;
  const json none = json::object();  // the reader keeps a reference to it
  electsim::params::ParamReader reader(none, "/protocol", info.params, problems);
  CHECK(reader.duration("election_timeout_min") == 150ms);
  CHECK(reader.duration("election_timeout_max") == 300ms);
  CHECK(reader.duration("heartbeat_interval") == 50ms);
  CHECK_FALSE(reader.boolean("pre_vote"));
  CHECK_FALSE(reader.boolean("check_quorum"));
  CHECK(reader.choice("timer_rule") == "etcd");
  CHECK_FALSE(reader.timer_opt("tick").has_value());
  CHECK(problems.empty());
}

TEST_CASE("raft: prepare makes nodes that use neither the store nor a fencing default") {
  const auto& info = electsim::protocols::raft_protocol_info();
  ClusterInfo cluster;
  cluster.node_count = 3;
  Problems problems;
  const auto prepared = info.prepare(json{{"pre_vote", true}}, "/protocol", cluster, problems);
  REQUIRE(prepared.has_value());
  CHECK(problems.empty());
  CHECK_FALSE(prepared->uses_store);
  CHECK_FALSE(prepared->leader_key.has_value());
  CHECK_FALSE(prepared->fencing.has_value());
  auto node = prepared->factory(1);
  REQUIRE(node != nullptr);
  FakeContext ctx(1, 3, 1);
  node->on_start(ctx);
  ctx.fire_tag(*node, kElection);
  // pre_vote reached the node: it asks before it campaigns.
  REQUIRE(ctx.sent.size() == 2);
  CHECK(ctx.sent.front().message.type == raft::type_of<PreVote>());

  const auto bad = info.prepare(json{{"log", {{"5", {{"index", 1}, {"term", 1}}}}}}, "/protocol",
                                cluster, problems);
  CHECK_FALSE(bad.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().pointer == "/protocol/log/5");
}
