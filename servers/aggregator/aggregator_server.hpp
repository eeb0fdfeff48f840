// A lease aggregator: a per-tier proxy in front of the store that keeps one session for many
// services, as a Chubby proxy keeps one session and one KeepAlive for all its clients (Burrows,
// "The Chubby lock service", OSDI 2006, section 3.1 "Proxies") and as one etcd
// concurrency.Session serves many elections on one lease. Its clients (the election nodes of its
// tier) see an ordinary single store:
//   - a lease grant is answered with the aggregator's one shared lease (granted from the store
//     when first needed, with the aggregator's own TTL);
//   - a keepalive of the shared lease is answered by the aggregator itself, never sent on: the
//     aggregator renews the shared lease once every renew_interval for everyone;
//   - a revoke deletes the keys the client put on the shared lease (each only while it still
//     holds the value the client wrote), not the lease, which the others still need; so does a
//     client that sends no keepalive for a TTL (it crashed or was cut off), as a Chubby proxy
//     ends a client's handles when the client is gone;
//   - every other request (get, put, delete, txn, watch, unwatch) and every watch event is passed
//     on, with the aggregator's own request ids upstream.
// Safety: a client counts its renewal from when it sent the keepalive, for up to its renew
// deadline (2/3 of its TTL). The aggregator answers a keepalive (or a grant) only while its own
// last renewal, counted from when it was sent, is at most a third of its TTL old; otherwise the
// client's request waits for the next renewal. With the client's TTL at most the aggregator's,
// every claim a client makes ends before the shared lease can expire at the store. The loader
// refuses a TTL above the aggregator's.
// Simplifications: one shared lease per aggregator, which a client's key cannot outlive; the
// aggregator keeps no state across a crash (its clients' keepalives then find their lease gone,
// and the old shared lease expires at the store a TTL later).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/process.hpp"
#include "sim/store_client.hpp"
#include "sim/store_types.hpp"

namespace electsim::servers {

struct AggregatorConfig {
  sim::Duration ttl{std::chrono::seconds(10)};  // the shared lease's
  sim::Duration renew_interval{0};  // 0: a third of the TTL, as clientv3 keeps a session
  // The store it renews at: the world's store clients' configuration.
  std::shared_ptr<const sim::StoreClientConfig> upstream;
};

class AggregatorServer final : public sim::Process {
 public:
  explicit AggregatorServer(AggregatorConfig config);

  void on_start(sim::ProcessContext& ctx) override;
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from,
                  const sim::Message& message) override;
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override;
  void on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_disconnect(sim::ProcessContext& ctx, sim::Endpoint peer) override;

 private:
  static constexpr sim::TimerTag kRenewTag = 1;
  struct Client {
    sim::Endpoint endpoint = sim::kNoNode;
    std::uint32_t incarnation = 0;
  };
  // A client's grant or keepalive waiting for a renewal of the shared lease.
  struct Waiting {
    Client client;
    sim::StoreRequest request;
  };
  // A request passed on to the store, by the aggregator's own id.
  struct Forwarded {
    Client client;
    sim::RequestId id = 0;  // the client's
    // A txn that puts keys on the shared lease: what the client attaches if it succeeds.
    std::vector<std::pair<std::string, std::string>> attaches;
  };
  // What a client has: the keys it put on the shared lease (key to the value it wrote), and when
  // it last showed it was alive (a grant or keepalive, on the aggregator's clock).
  struct Holder {
    std::map<std::string, std::string> keys;
    sim::LocalTime seen;
  };

  void on_request(sim::ProcessContext& ctx, Client client, sim::StoreRequest&& request);
  void on_upstream_reply(sim::ProcessContext& ctx, sim::StoreReply&& reply);
  // Sends a request of its own to the store; the id it goes by.
  sim::RequestId upstream(sim::ProcessContext& ctx, sim::StoreRequest request);
  // Whether the shared lease's last renewal is recent enough to vouch for a client's claim.
  bool fresh(const sim::ProcessContext& ctx) const;
  // Grants the shared lease, or renews it now, unless that is under way.
  void need_session(sim::ProcessContext& ctx);
  void answer(sim::ProcessContext& ctx, const Waiting& w, sim::StoreError error);
  void answer_waiting(sim::ProcessContext& ctx, sim::StoreError error);
  // Deletes the keys `client` put on the shared lease, each only while it still holds its value.
  void drop_keys(sim::ProcessContext& ctx, sim::Endpoint client);
  void reply(sim::ProcessContext& ctx, Client client, sim::StoreReply reply);

  AggregatorConfig config_;
  sim::Duration renew_interval_;
  sim::StoreClient upstream_;
  sim::LeaseId lease_ = sim::kNoLease;
  sim::LocalTime confirmed_;  // when the last renewal (or the grant) that succeeded was sent
  sim::RequestId grant_ = 0;  // in flight
  sim::LocalTime grant_sent_;
  sim::RequestId keepalive_ = 0;  // in flight
  sim::LocalTime keepalive_sent_;
  std::vector<Waiting> waiting_;
  // Where each client's waiting grant or keepalive is in waiting_: one per client and kind.
  std::map<std::pair<sim::Endpoint, sim::StoreOp>, std::size_t> waiting_at_;
  std::map<sim::RequestId, Forwarded> forwarded_;
  std::map<std::int64_t, Client> watches_;  // by the watch id the store's client gave
  std::map<sim::Endpoint, Holder> holders_;
  std::vector<sim::StoreReply> failed_;  // scratch: the upstream client's failed requests
};

}  // namespace electsim::servers
