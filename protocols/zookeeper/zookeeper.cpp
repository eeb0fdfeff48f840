// The zookeeper protocol: see protocols/zookeeper/zookeeper.hpp. Sources, by step:
// - the recipe: ZooKeeper's "Recipes and Solutions", Leader Election (create
//   guid-n_ with EPHEMERAL|SEQUENCE, getChildren, the lowest leads, otherwise exists() with a
//   watch on the next lower node only, "to avoid the herd effect"), and Curator's LeaderLatch;
// - sessions: ZooKeeper's ClientCnxn (pings at readTimeout / 2 of idleness, readTimeout =
//   2/3 of the negotiated session timeout) and the server's ZooKeeperServer and SessionTracker
//   (negotiation into [2, 20] ticks, expiry on the first tick after the timeout without a ping,
//   then the session's ephemeral nodes are deleted; servers/store);
// - connection states: Curator's ConnectionState (SUSPENDED, RECONNECTED, LOST) and its
//   ConnectionStateErrorPolicy (Standard: stop at SUSPENDED; Session: stop only at LOST).
#include "protocols/zookeeper/zookeeper.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <utility>

#include "sim/assert.hpp"

namespace electsim::protocols::zookeeper {
namespace {

using sim::Duration;
using sim::LocalTime;

constexpr const char* kOnSuspendedNames[] = {"stop", "keep_acting"};  // OnSuspended's order

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const ZookeeperConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "session_timeout",
         .default_value = d.session_timeout,
         // Pings every third of the timeout must themselves be timers of at least
         // kShortestTimer.
         .min = 3 * params::kShortestTimer,
         .meaning = "the session timeout the client asks for (Curator's 60s); the ensemble "
                    "grants it within [2, 20] x store.tick_time (40s with the 2s tick) and "
                    "expires a session on the first tick after the granted timeout without a "
                    "ping; the idle client pings every third of the granted timeout and is "
                    "SUSPENDED after two thirds of it without an answer"},
        {.name = "on_suspended",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kOnSuspendedNames, d.on_suspended),
         .meaning = "what a leader does when SUSPENDED: stop acting until reconnected (Curator's "
                    "standard error policy) or keep_acting until it learns its session expired "
                    "(the session policy)",
         .choices = params::choice_names(kOnSuspendedNames)},
        {.name = "fencing",
         .type = params::ParamType::boolean,
         .default_value = d.fencing,
         .meaning = "the sink rejects writes whose token (the writer's node's czxid) is below the "
                    "highest it has accepted"},
        {.name = "prefix",
         .type = params::ParamType::text,
         .default_value = d.prefix,
         .meaning = "the election's parent node; candidate i creates prefix + i"},
    };
  }();
  return table;
}

// The node's data: "<id> <czxid>", so that other candidates reading the children learn the
// leader's czxid; "<id>" alone until its creator has written it.
struct NodeData {
  sim::NodeId id = sim::kNoNode;
  sim::Token czxid = 0;
};

NodeData parse_data(const std::string& value) {
  NodeData d;
  const char* const end = value.data() + value.size();
  const auto [p, ec] = std::from_chars(value.data(), end, d.id);
  if (ec != std::errc() || d.id < 0) return NodeData{};
  if (p != end && *p == ' ') std::from_chars(p + 1, end, d.czxid);
  return d;
}

}  // namespace

std::span<const params::ParamSpec> zookeeper_params() {
  return specs();
}

std::optional<ZookeeperConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                           params::Problems& problems) {
  const std::size_t before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  ZookeeperConfig c;
  if (auto timeout = reader.timer("session_timeout")) c.session_timeout = *timeout;
  c.on_suspended = static_cast<OnSuspended>(reader.choice_index("on_suspended"));
  c.fencing = reader.boolean("fencing");
  c.prefix = reader.text("prefix");
  if (c.prefix.empty() && reader.has("prefix")) {
    reader.problem("prefix", "a non-empty key prefix such as \"/electsim/election/\"", "\"\"");
  }
  if (problems.size() != before) return std::nullopt;
  return c;
}

ZookeeperNode::ZookeeperNode(std::shared_ptr<const ZookeeperConfig> config)
    : config_(std::move(config)), writer_(config_->workload), timeout_(config_->session_timeout) {
  ELECTSIM_ASSERT(ping_interval(timeout_).count() > 0, "the ping interval is positive");
}

// ---- Inputs -----------------------------------------------------------------------------------

void ZookeeperNode::on_start(sim::Context& ctx) {
  self_ = ctx.self();
  self_text_ = std::to_string(self_);
  node_key_ = config_->prefix + self_text_;
  candidate_keys_.clear();
  for (std::size_t i = 0; i < ctx.cluster_size(); ++i) {
    candidate_keys_.push_back(config_->prefix + std::to_string(i));
  }
  become_follower(ctx, sim::kNoNode, 0);
  // ClientCnxn measures idleness with Time.currentElapsedTime (System.nanoTime): monotonic.
  // A new process asks for its timeout again; the negotiated one comes with the session.
  last_heard_ = ctx.monotonic_now();
  timeout_ = config_->session_timeout;
  reconnect_timer_ = sim::kNoTimer;  // a restart starts without the old process's timers
  ping_timer_ = ctx.set_timer(ping_interval(timeout_), kPingTag);
  arm_suspend(ctx, read_timeout(timeout_));
  send_session(ctx);
}

void ZookeeperNode::on_message(sim::Context&, sim::NodeId, const sim::Message&) {
  // Candidates talk only to the ensemble and the sink.
}

void ZookeeperNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (stopped_) return;
  if (writer_.on_timer(ctx, id, tag, [this](sim::Token token) { return may_write(token); })) {
    return;
  }
  const LocalTime now = ctx.monotonic_now();
  switch (tag) {
    case kPingTag: {
      if (id != ping_timer_) return;
      ping_timer_ = ctx.set_timer(ping_interval(timeout_), kPingTag);
      if (session_ != sim::kNoLease) send_ping(ctx);
      // A step unanswered for a ping interval is taken as lost and sent again; a client with no
      // session or no node starts over from there.
      const bool stale =
          pending_ != Pending::none && now - pending_sent_at_ >= ping_interval(timeout_);
      if (pending_ == Pending::none || stale) {
        if (session_ == sim::kNoLease) {
          send_session(ctx);
        } else if (node_revision_ == 0) {
          send_create(ctx);
        } else if (stale) {
          send_children(ctx);
        }
      }
      if (pending_ == Pending::none) watch_.retry_if_unanswered(ctx, ping_interval(timeout_));
      return;
    }
    case kSuspendTag: {
      if (id != suspend_timer_) return;
      suspend_timer_ = sim::kNoTimer;
      const Duration quiet = now - last_heard_;
      if (quiet < read_timeout(timeout_)) {
        arm_suspend(ctx, read_timeout(timeout_) - quiet);
        return;
      }
      // ClientCnxn: "Client session timed out, have not heard from server in ...ms": the
      // connection is dropped and Curator reports SUSPENDED.
      suspended_ = true;
      if (role_ == sim::Role::leader && config_->on_suspended == OnSuspended::stop) {
        become_follower(ctx, sim::kNoNode, token_);
      }
      return;
    }
    case kReconnectTag: {
      if (id != reconnect_timer_) return;
      reconnect_timer_ = sim::kNoTimer;
      if (pending_ == Pending::none) next_step(ctx);
      return;
    }
    default:
      ELECTSIM_ASSERT(false, "a timer tag of the zookeeper protocol");
  }
}

void ZookeeperNode::on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) {
  if (stopped_) return;
  // Any answer from a serving member is contact (ClientCnxn resets its idle-receive clock on every
  // packet); no_leader is a server outside a quorum, which ZooKeeper would not let serve, and
  // unavailable is the client giving up.
  if (reply.error == sim::StoreError::no_leader || reply.error == sim::StoreError::unavailable) {
    // The client drops the connection and connects again after a random sleep of up to a
    // second (ClientCnxn.SendThread.startConnect: Thread.sleep(r.nextInt(1000)) on every attempt
    // but the first); then the step is tried again. The ping timer alone would wait up to 10 s.
    if (pending_ != Pending::none && reply.id == pending_id_) {
      pending_ = Pending::none;
      if (reconnect_timer_ == sim::kNoTimer) {
        reconnect_timer_ =
            ctx.set_timer(std::chrono::milliseconds(ctx.rng().between(0, 999)), kReconnectTag);
      }
    }
    return;
  }
  heard(ctx);
  if (reply.op == sim::StoreOp::lease_keepalive) {
    if (reply.lease == session_ && reply.error == sim::StoreError::lease_not_found) {
      session_lost(ctx);  // Curator's LOST: the ensemble expired the session
    }
    return;
  }
  if (reply.op == sim::StoreOp::watch) {
    watch_.on_reply(ctx, reply);
    return;
  }
  if (pending_ == Pending::none || reply.id != pending_id_) return;
  const Pending step = pending_;
  pending_ = Pending::none;
  if (reply.error == sim::StoreError::lease_not_found) {
    session_lost(ctx);
    return;
  }
  if (reply.error != sim::StoreError::none) return;  // the ping timer tries again
  switch (step) {
    case Pending::session:
      session_ = reply.lease;
      if (reply.ttl.count() > 0 && reply.ttl != timeout_) {
        // ClientCnxn.onConnected: readTimeout follows the negotiated timeout, and the send
        // thread's next wait is computed from it (the request just sent counts as the last send).
        timeout_ = reply.ttl;
        ctx.cancel_timer(ping_timer_);
        ping_timer_ = ctx.set_timer(ping_interval(timeout_), kPingTag);
        if (suspend_timer_ != sim::kNoTimer) ctx.cancel_timer(suspend_timer_);
        arm_suspend(ctx, read_timeout(timeout_));
      }
      send_create(ctx);
      return;
    case Pending::create: {
      if (reply.succeeded) {
        // The create's revision is our sequence number: later creates get higher ones. Its
        // czxid's epoch is the term of the log entry that applied it (ZooKeeper: the epoch in
        // which the create was proposed); a single server has one epoch, 1.
        node_revision_ = reply.revision;
        node_czxid_ = czxid(reply.term > 0 ? reply.term : 1, reply.revision);
        send_data(ctx);
        send_children(ctx);
        return;
      }
      const std::optional<sim::KeyValue> kv =
          reply.responses.empty() ? std::nullopt : reply.responses.front();
      if (kv && kv->lease == session_) {
        // Our create landed but its reply was lost, and with it the epoch of our czxid: delete
        // the node and create it again (Curator's LeaderLatch resets the same way).
        send_remove(ctx, kv->create_revision);
        return;
      }
      // Otherwise the node is another session's: ours from before a restart, which a new
      // process cannot tell from anyone's (its node's name is not known to it). It stays until
      // that session expires; the ping timer tries the create again.
      return;
    }
    case Pending::remove:
      send_create(ctx);
      return;
    case Pending::children:
      on_children(ctx, reply);
      return;
    case Pending::none:
      return;
  }
}

void ZookeeperNode::on_watch(sim::Context& ctx, const sim::WatchEvent& event) {
  if (stopped_ || !watch_.fired_by(event)) return;
  heard(ctx);
  // A put that creates the key anew (another create_revision) means the node we watched was
  // deleted and its delete notification never reached us (lost with a lossy network, where
  // ZooKeeper's TCP stream would have delivered it late): act on the deletion now.
  const bool recreated = event.kind == sim::WatchEvent::Kind::put &&
                         event.kv.create_revision != watched_create_revision_;
  if (event.kind != sim::WatchEvent::Kind::del && !recreated) return;
  // A ZooKeeper watch fires once: the predecessor is gone, so look at the children again.
  drop_watch(ctx);
  send_children(ctx);
}

void ZookeeperNode::on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) {
  // A rejection of our own token: a newer leader has written. Stop, and look again.
  if (stopped_ || reply.accepted || role_ != sim::Role::leader || reply.token != token_) return;
  become_follower(ctx, sim::kNoNode, token_);
  send_children(ctx);
}

void ZookeeperNode::on_command(sim::Context& ctx, sim::Command command) {
  if (command == sim::Command::campaign) {
    if (stopped_ || role_ == sim::Role::leader) return;
    next_step(ctx);
    return;
  }
  // Voluntary release: close the session (ZooKeeper's close() deletes its ephemeral nodes at once;
  // LeaderLatch.close() deletes the node). A step-down then joins the back of the queue.
  if (session_ != sim::kNoLease) {
    sim::StoreRequest revoke;
    revoke.op = sim::StoreOp::lease_revoke;
    revoke.lease = session_;
    ctx.store(std::move(revoke));
  }
  session_ = sim::kNoLease;
  node_revision_ = 0;
  pending_ = Pending::none;
  drop_watch(ctx);
  become_follower(ctx, sim::kNoNode, token_);
  if (command == sim::Command::stop) {
    stopped_ = true;
    return;
  }
  send_session(ctx);
}

// ---- Steps of the recipe ------------------------------------------------------------------------

void ZookeeperNode::next_step(sim::Context& ctx) {
  if (session_ == sim::kNoLease) {
    send_session(ctx);
  } else if (node_revision_ == 0) {
    send_create(ctx);
  } else {
    send_children(ctx);
  }
}

void ZookeeperNode::begin(sim::Context& ctx, Pending step, sim::RequestId id) {
  pending_ = step;
  pending_id_ = id;
  pending_sent_at_ = ctx.monotonic_now();
}

void ZookeeperNode::send_session(sim::Context& ctx) {
  sim::StoreRequest grant;
  grant.op = sim::StoreOp::lease_grant;
  grant.ttl = config_->session_timeout;  // asked; the store answers the negotiated one
  grant.session = true;
  begin(ctx, Pending::session, ctx.store(std::move(grant)));
}

void ZookeeperNode::send_create(sim::Context& ctx) {
  // create(prefix + id, EPHEMERAL): the node lives on the session; it is created only if absent.
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.compares.push_back(sim::Compare{
      node_key_, sim::Compare::Target::create_revision, sim::Compare::Op::equal, 0, {}});
  txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::put, node_key_, self_text_, session_});
  txn.failure.push_back(sim::TxnOp{sim::TxnOp::Kind::get, node_key_, {}, sim::kNoLease});
  begin(ctx, Pending::create, ctx.store(std::move(txn)));
}

void ZookeeperNode::send_remove(sim::Context& ctx, sim::Revision create_revision) {
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.compares.push_back(sim::Compare{node_key_,
                                      sim::Compare::Target::create_revision,
                                      sim::Compare::Op::equal,
                                      create_revision,
                                      {}});
  txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::del, node_key_, {}, sim::kNoLease});
  begin(ctx, Pending::remove, ctx.store(std::move(txn)));
}

void ZookeeperNode::send_data(sim::Context& ctx) {
  // setData(path, czxid) on our node only while it is this node (fire and forget: a lost one
  // leaves other candidates not knowing our czxid, nothing more).
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  txn.compares.push_back(sim::Compare{node_key_,
                                      sim::Compare::Target::create_revision,
                                      sim::Compare::Op::equal,
                                      node_revision_,
                                      {}});
  txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::put, node_key_,
                                   self_text_ + " " + std::to_string(node_czxid_), session_});
  ctx.store(std::move(txn));
}

void ZookeeperNode::send_children(sim::Context& ctx) {
  // getChildren(prefix): one read of every candidate's node. electsim's store has no range read,
  // and the candidates are known, so it reads each possible child in one txn.
  if (session_ == sim::kNoLease || node_revision_ == 0) return;
  sim::StoreRequest txn;
  txn.op = sim::StoreOp::txn;
  for (const std::string& key : candidate_keys_) {
    txn.success.push_back(sim::TxnOp{sim::TxnOp::Kind::get, key, {}, sim::kNoLease});
  }
  begin(ctx, Pending::children, ctx.store(std::move(txn)));
}

void ZookeeperNode::send_ping(sim::Context& ctx) {
  sim::StoreRequest ping;
  ping.op = sim::StoreOp::lease_keepalive;
  ping.lease = session_;
  ctx.store(std::move(ping));
}

void ZookeeperNode::send_watch(sim::Context& ctx, std::string_view key, sim::Revision from) {
  drop_watch(ctx);
  watched_key_ = key;
  // exists(path, watch) is atomic with the read in ZooKeeper; here the watch starts right after
  // the revision the children were read at, so a deletion in between is still reported.
  watch_.open(ctx, key, from);
}

void ZookeeperNode::drop_watch(sim::Context& ctx) {
  watch_.close(ctx);
  watched_key_.clear();
}

void ZookeeperNode::on_children(sim::Context& ctx, const sim::StoreReply& reply) {
  ELECTSIM_ASSERT(reply.responses.size() == candidate_keys_.size(), "one child read per candidate");
  const sim::KeyValue* own = nullptr;
  const sim::KeyValue* lowest = nullptr;
  const sim::KeyValue* predecessor = nullptr;
  for (const std::optional<sim::KeyValue>& kv : reply.responses) {
    if (!kv) continue;
    if (kv->key == node_key_) own = &*kv;
    if (lowest == nullptr || kv->create_revision < lowest->create_revision) lowest = &*kv;
  }
  if (own == nullptr || own->lease != session_) {
    // Our node is gone: only an expired session deletes it.
    session_lost(ctx);
    return;
  }
  for (const std::optional<sim::KeyValue>& kv : reply.responses) {
    if (!kv || kv->create_revision >= own->create_revision) continue;
    if (predecessor == nullptr || kv->create_revision > predecessor->create_revision) {
      predecessor = &*kv;
    }
  }
  if (predecessor == nullptr) {
    drop_watch(ctx);
    become_leader(ctx);
    return;
  }
  // The leader's czxid, once its creator has written it into the node (0: not known yet).
  const NodeData leader = parse_data(lowest->value);
  become_follower(ctx, leader.id, leader.czxid);
  if (watched_key_ != predecessor->key || watch_.idle()) {
    send_watch(ctx, predecessor->key, reply.revision + 1);
  }
  watched_create_revision_ = predecessor->create_revision;
}

// ---- Sessions and connection states -------------------------------------------------------------

void ZookeeperNode::heard(sim::Context& ctx) {
  last_heard_ = ctx.monotonic_now();
  if (suspended_) {
    // RECONNECTED with the session still valid: look at the children again (ZooKeeper re-registers
    // watches on reconnection; the careful leader resumes if its node is still the lowest).
    suspended_ = false;
    if (pending_ == Pending::none) send_children(ctx);
  }
  if (suspend_timer_ == sim::kNoTimer) arm_suspend(ctx, read_timeout(timeout_));
}

void ZookeeperNode::session_lost(sim::Context& ctx) {
  // Curator's LOST: the session and its ephemeral node are gone; a new session, a new node.
  if (session_ == sim::kNoLease && pending_ == Pending::session) return;
  session_ = sim::kNoLease;
  node_revision_ = 0;
  drop_watch(ctx);
  if (role_ == sim::Role::leader) become_follower(ctx, sim::kNoNode, token_);
  send_session(ctx);
}

void ZookeeperNode::become_leader(sim::Context& ctx) {
  const sim::Token token = node_czxid_;
  if (role_ == sim::Role::leader && token == token_) return;
  if (suspended_ && config_->on_suspended == OnSuspended::stop) return;
  role_ = sim::Role::leader;
  token_ = token;
  ctx.announce(sim::Belief::leader(token));
  writer_.start(ctx, token);
}

void ZookeeperNode::become_follower(sim::Context& ctx, sim::NodeId leader, sim::Epoch epoch) {
  if (role_ == sim::Role::leader) writer_.stop(ctx);
  const sim::NodeId known = leader == self_ ? sim::kNoNode : leader;
  if (announced_ && role_ == sim::Role::follower && known == known_leader_ &&
      epoch == known_epoch_) {
    return;
  }
  role_ = sim::Role::follower;
  announced_ = true;
  known_leader_ = known;
  known_epoch_ = epoch;
  ctx.announce(sim::Belief::follower(known, epoch));
}

bool ZookeeperNode::may_write(sim::Token token) const {
  if (role_ != sim::Role::leader || token != token_) return false;
  return !(suspended_ && config_->on_suspended == OnSuspended::stop);
}

void ZookeeperNode::arm_suspend(sim::Context& ctx, Duration after) {
  suspend_timer_ = ctx.set_timer(after, kSuspendTag);
}

// ---- Registry entry ---------------------------------------------------------------------------

ProtocolInfo protocol_info() {
  ProtocolInfo info;
  info.name = "zookeeper";
  info.resource = "prefix";
  info.description =
      "ZooKeeper's recipe: ephemeral sequential nodes on sessions, the lowest leads, each other "
      "candidate watches only its predecessor; the token is the node's czxid";
  const auto params = zookeeper_params();
  info.params.assign(params.begin(), params.end());
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    std::optional<ZookeeperConfig> config = read_config(params, pointer, problems);
    if (!config) return std::nullopt;
    config->workload = cluster.workload;
    PreparedProtocol prepared;
    prepared.uses_store = true;
    prepared.fencing = config->fencing;
    prepared.silent_hold = config->session_timeout;
    // The session expires, then its watcher's next node leads; a client that lost its session
    // opens another and rejoins the queue.
    prepared.worst_recovery = 2 * config->session_timeout;
    prepared.with_resource = [config = *config](const std::string& prefix) {
      ZookeeperConfig own = config;
      own.prefix = prefix;
      return shared_config_factory<ZookeeperNode>(std::move(own));
    };
    prepared.factory = shared_config_factory<ZookeeperNode>(std::move(*config));
    return prepared;
  };
  // A silent holder's ephemeral node goes when the ensemble expires its session, on the first
  // tick after the negotiated timeout. The ensemble grants at most 20 ticks, so the knob sets the
  // finest tick that grants d (d/20, rounded up): expiry then comes less than d/20 after d.
  info.detection.what = "the session timeout (expired on the ensemble's next tick)";
  info.detection.timing_params = {"session_timeout", "store.tick_time"};
  info.detection.sets = [](sim::Duration d, std::string&) -> std::optional<std::vector<KnobSet>> {
    const sim::Duration tick = (d + sim::Duration(19)) / 20;
    return std::vector<KnobSet>{{"protocol.session_timeout", knob_duration(d)},
                                {"store.tick_time", knob_duration(tick)}};
  };
  return info;
}

}  // namespace electsim::protocols::zookeeper
