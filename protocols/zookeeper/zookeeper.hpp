// Leader election by ZooKeeper's recipe ("Leader Election" in ZooKeeper's Recipes and Solutions;
// Curator's LeaderLatch): each candidate creates an ephemeral sequential node under one prefix,
// the lowest sequence number leads, and every other candidate watches only its predecessor, so a
// holder's death wakes one watcher, not a herd. The ensemble is electsim's store (single or
// replicated): a ZooKeeper session is a store lease with TTL = session timeout, kept alive by the
// client's pings and expired by the store's leader, which deletes the session's ephemeral nodes;
// the store negotiates the timeout and expires sessions on ZooKeeper's ticks (store.tick_time).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "protocols/store_watch.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols::zookeeper {

// What the client does while disconnected (Curator's ConnectionState.SUSPENDED).
enum class OnSuspended : std::uint8_t {
  // Curator's StandardConnectionStateErrorPolicy (the default, and Curator's advice): SUSPENDED
  // is an error state, the leader stops acting until the connection is back.
  stop,
  // SessionConnectionStateErrorPolicy: only LOST (the session expired) ends leadership; the
  // client keeps acting through a disconnection until it learns its session is gone.
  keep_acting,
};

struct ZookeeperConfig {
  // The session timeout the client asks for (the ZooKeeper constructor's sessionTimeout): Curator
  // asks for 60s (CuratorFrameworkFactory's DEFAULT_SESSION_TIMEOUT_MS). The ensemble negotiates
  // it into [2, 20] x its tickTime (store.tick_time; 40s with a 2s tick) and answers the
  // negotiated timeout, which the client then times itself by.
  sim::Duration session_timeout = std::chrono::seconds(60);
  OnSuspended on_suspended = OnSuspended::stop;
  bool fencing = true;
  // The election's parent znode; candidate i's node is prefix + i.
  std::string prefix = "/electsim/election/";
  WorkloadConfig workload;  // the cluster's, copied in by the registry
};

// ZooKeeper's ClientCnxn.onConnected: readTimeout = negotiatedSessionTimeout * 2 / 3. The client
// calls itself disconnected after this long without hearing from the ensemble ("Client session
// timed out, have not heard from server in ...ms"): Curator's SUSPENDED.
inline sim::Duration read_timeout(sim::Duration session_timeout) {
  return session_timeout * 2 / 3;
}

// ClientCnxn.SendThread.run pings when timeToNextPing = readTimeout / 2 - idleSend
// - (idleSend > 1s ? 1s : 0) reaches zero, or when idleSend passes MAX_SEND_PING_INTERVAL (10s).
// Both terms are looked at only when the send thread wakes, and an idle client's thread sleeps
// until readTimeout / 2 - idleSend (woken earlier only by the previous ping's answer, within
// the first second): so an idle client pings every readTimeout / 2, a third of the timeout,
// whatever its length.
inline sim::Duration ping_interval(sim::Duration session_timeout) {
  return read_timeout(session_timeout) / 2;
}

std::span<const params::ParamSpec> zookeeper_params();
std::optional<ZookeeperConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                           params::Problems& problems);

// ZooKeeper's zxid: the epoch in the high 32 bits, a counter in the low 32.
inline sim::Token czxid(std::int64_t epoch, sim::Revision counter) {
  return static_cast<sim::Token>((static_cast<std::uint64_t>(epoch) << 32) |
                                 (static_cast<std::uint64_t>(counter) & 0xffff'ffffu));
}

ProtocolInfo protocol_info();

class ZookeeperNode final : public sim::Protocol {
 public:
  explicit ZookeeperNode(std::shared_ptr<const ZookeeperConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override;
  void on_watch(sim::Context& ctx, const sim::WatchEvent& event) override;
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  // White-box views for tests.
  bool leads() const { return role_ == sim::Role::leader; }
  bool suspended() const { return suspended_; }
  sim::Token token() const { return token_; }
  sim::LeaseId session() const { return session_; }
  // The session timeout the ensemble granted (the asked one until a session is granted).
  sim::Duration session_timeout() const { return timeout_; }
  sim::Revision node_revision() const { return node_revision_; }
  const std::string& watched_key() const { return watched_key_; }

  static constexpr sim::TimerTag kPingTag = 1;     // every ping_interval: ping, retry
  static constexpr sim::TimerTag kSuspendTag = 2;  // read_timeout after the last reply
  // After a step the ensemble could not serve: ClientCnxn reconnects after a random sleep.
  static constexpr sim::TimerTag kReconnectTag = 3;

 private:
  // The one step of the recipe in flight.
  enum class Pending : std::uint8_t { none, session, create, remove, children };

  void send_session(sim::Context& ctx);
  void send_create(sim::Context& ctx);
  void send_remove(sim::Context& ctx, sim::Revision create_revision);
  void send_data(sim::Context& ctx);
  void send_children(sim::Context& ctx);
  void send_ping(sim::Context& ctx);
  void send_watch(sim::Context& ctx, std::string_view key, sim::Revision from);
  // The recipe's next step from where this client stands: a session, its node, or the children.
  void next_step(sim::Context& ctx);
  void drop_watch(sim::Context& ctx);
  void begin(sim::Context& ctx, Pending step, sim::RequestId id);

  void on_children(sim::Context& ctx, const sim::StoreReply& reply);
  void heard(sim::Context& ctx);
  void session_lost(sim::Context& ctx);
  void become_leader(sim::Context& ctx);
  void become_follower(sim::Context& ctx, sim::NodeId leader, sim::Epoch epoch);
  bool may_write(sim::Token token) const;
  void arm_suspend(sim::Context& ctx, sim::Duration after);

  std::shared_ptr<const ZookeeperConfig> config_;
  Writer writer_;
  sim::NodeId self_ = sim::kNoNode;
  std::string self_text_;
  std::string node_key_;
  std::vector<std::string> candidate_keys_;  // every candidate's node, by id

  sim::Role role_ = sim::Role::follower;
  bool stopped_ = false;
  sim::Token token_ = 0;
  // The last follower belief announced, so that an unchanged one is not announced again.
  bool announced_ = false;
  sim::NodeId known_leader_ = sim::kNoNode;
  sim::Epoch known_epoch_ = 0;

  sim::LeaseId session_ = sim::kNoLease;
  // What the pings and SUSPENDED are timed by: the asked timeout until the ensemble answers a
  // session request, then the negotiated one (ClientCnxn.onConnected).
  sim::Duration timeout_{0};
  sim::Revision node_revision_ = 0;  // our node's create_revision (the sequence number)
  sim::Token node_czxid_ = 0;        // and its czxid: the term that created it, the revision

  Pending pending_ = Pending::none;
  sim::RequestId pending_id_ = 0;
  sim::LocalTime pending_sent_at_;

  // The watch on the predecessor (ZooKeeper's exists(path, watch)); one-shot as in ZooKeeper.
  std::string watched_key_;
  sim::Revision watched_create_revision_ = 0;  // the predecessor's sequence when we chose it
  StoreWatch watch_;

  // Connection state: the local time of the last answer from the ensemble.
  sim::LocalTime last_heard_;
  bool suspended_ = false;
  sim::TimerId ping_timer_ = sim::kNoTimer;
  sim::TimerId suspend_timer_ = sim::kNoTimer;
  sim::TimerId reconnect_timer_ = sim::kNoTimer;
};

}  // namespace electsim::protocols::zookeeper
