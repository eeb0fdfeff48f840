// An election node as a process: the adapter between the kernel's Process interface and the
// narrower Protocol interface every election protocol implements (sim/protocol.hpp). It turns
// arriving payloads into on_store_reply, on_watch and on_sink_reply, turns the protocol's store
// and sink calls into requests on the network, and traces what a node does (timers, store
// requests, replies, watches, sink writes) so that the checkers see it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "sim/node_servers.hpp"
#include "sim/process.hpp"
#include "sim/protocol.hpp"
#include "sim/store_client.hpp"

namespace electsim::sim {

// The election group a node runs in, as the adapter translates it. A protocol numbers its
// group's nodes 0 to size - 1 (Raft's and the ring's arithmetic, the ids it writes into the
// store and into its messages); the kernel numbers every node of the world. A world of one group
// has base 0 and size the node count, and the translation is the identity.
struct NodeGroup {
  NodeId base = 0;                    // the world's id of the group's node 0
  std::uint32_t index = 0;            // which group: the sink resource its writes protect
  std::span<const NodeId> local_ids;  // 0 to size - 1: the group's nodes as its protocol sees them
  std::size_t size() const { return local_ids.size(); }
};

class ProtocolProcess final : public Process, private Context {
 public:
  // `servers` says where its requests go, `store` which store (or shard of one) it asks; they and
  // `group`'s ids outlive the process.
  ProtocolProcess(std::unique_ptr<Protocol> protocol, const NodeServers* servers,
                  const StoreClientConfig* store, NodeGroup group);

  Protocol& protocol() { return *protocol_; }

  void on_start(ProcessContext& ctx) override;
  void on_message(ProcessContext& ctx, Endpoint from, const Message& message) override;
  void on_payload(ProcessContext& ctx, Endpoint from, std::uint32_t from_incarnation,
                  Payload&& payload) override;
  void on_timer(ProcessContext& ctx, TimerId id, TimerTag tag) override;
  void on_command(ProcessContext& ctx, Command command) override;
  void on_disconnect(ProcessContext& ctx, Endpoint peer) override;

 private:
  // Context, for the protocol: each call forwards to the machine of the current input.
  NodeId self() const override { return ctx_->self() - group_.base; }
  PeerSet peers() const override { return peers_; }
  std::size_t cluster_size() const override { return group_.size(); }
  LocalTime now() const override { return ctx_->now(); }
  LocalTime monotonic_now() const override { return ctx_->monotonic_now(); }
  void send(Endpoint to, const Message& message) override;
  void broadcast(const Message& message) override;
  TimerId set_timer(Duration after_local, TimerTag tag) override;
  void cancel_timer(TimerId id) override { ctx_->cancel_timer(id); }
  Rng& rng() override { return ctx_->rng(); }
  Rng& workload_rng() override { return ctx_->workload_rng(); }
  DurableState& durable() override { return ctx_->durable(); }
  RequestId store(StoreRequest request) override;
  RequestId sink_write(Token token, std::int64_t payload, Duration send_delay) override;
  RequestId db(DbRequest request) override;
  RequestId redis(std::size_t master, RedisRequest request) override;
  void request(Endpoint to, Payload payload) override { ctx_->send(to, std::move(payload)); }
  void announce(const Belief& belief) override;
  void own_deadline(std::optional<Duration> remaining) override {
    deadline_.reset();
    if (remaining) deadline_ = ctx_->monotonic_now() + *remaining;
  }

  void deliver(ProcessContext& ctx, const StoreReply& reply);
  // The server_request event of a statement or command to the database or a Redis master.
  void trace_server_request(Endpoint server, RequestId id, const char* op);

  std::unique_ptr<Protocol> protocol_;
  const NodeServers* servers_;
  StoreClient client_;
  NodeGroup group_;
  PeerSet peers_;                      // the group's other nodes, as the protocol numbers them
  ProcessContext* ctx_ = nullptr;      // the kernel's context for this node: one for its whole life
  std::optional<LocalTime> deadline_;  // own_deadline, on the monotonic clock
};

}  // namespace electsim::sim
