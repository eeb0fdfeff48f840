// The store: a linearizable key-value service modelled on etcd v3 (one logical server). It is a
// pure state machine over the store's local clock; its process (servers/store/store_server.hpp)
// receives requests over the network and sends replies and watch notifications back. A request
// takes effect when apply() runs: that is its linearization point. One global revision, +1 per
// write request (a txn or a lease revocation that writes several keys still takes one revision, as
// in etcd).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/ids.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types

struct StoreConfig {
  Duration min_ttl{0};  // lease_grant raises shorter TTLs to this (etcd: ~2s with default timings)
  // 0: a lease expires exactly at its deadline. > 0: expiry is only noticed at scans every
  // `expiry_scan_interval` of store-local time (etcd's leader checks every 500ms).
  Duration expiry_scan_interval{0};
  std::size_t max_keys = 100'000;
  std::size_t max_leases = 100'000;
  std::size_t max_watches = 100'000;
};

// A committed change, for the trace and the analysis.
struct StoreChange {
  Revision revision = 0;
  WatchEvent::Kind kind = WatchEvent::Kind::put;
  std::string key;
  std::string value;
  LeaseId lease = kNoLease;
  bool by_lease_expiry = false;
};

struct WatchNotification {
  NodeId to = kNoNode;
  WatchEvent event;
};

// What one call produced besides its reply. The caller clears it between calls.
struct StoreOutput {
  std::vector<StoreChange> changes;
  std::vector<WatchNotification> notifications;
  std::vector<LeaseId> expired_leases;
  void clear() {
    changes.clear();
    notifications.clear();
    expired_leases.clear();
  }
};

class Store {
 public:
  explicit Store(StoreConfig config = {});

  // Applies one request from `from` at store-local time `now`.
  StoreReply apply(NodeId from, const StoreRequest& request, LocalTime now, StoreOutput& out);

  // Expires every lease whose deadline is <= now: deletes its keys (one revision), notifies
  // watchers.
  void expire_leases(LocalTime now, StoreOutput& out);

  // Earliest deadline of a live lease, for scheduling the next exact expiry check.
  std::optional<LocalTime> next_lease_deadline() const;

  // The node's watch streams broke (it crashed or restarted): its watches are gone.
  void drop_watches_of(NodeId node);

  Revision revision() const { return revision_; }
  std::optional<KeyValue> peek(const std::string& key) const;
  std::optional<LocalTime> lease_deadline(LeaseId lease) const;
  const StoreConfig& config() const { return config_; }

 private:
  struct Lease {
    Duration ttl{0};
    LocalTime deadline;
    std::vector<std::string> keys;  // sorted: deletion order is deterministic
  };
  struct Watch {
    NodeId node = kNoNode;
    std::string key;
  };
  class Batch;  // the writes of one request, all at one revision

  StoreError check_ops(const std::vector<TxnOp>& ops) const;
  void delete_lease_keys(LeaseId lease, bool by_lease_expiry, StoreOutput& out);

  StoreConfig config_;
  Revision revision_ = 0;
  LeaseId next_lease_ = 1;
  std::int64_t next_watch_ = 1;
  std::map<std::string, KeyValue, std::less<>> keys_;
  std::map<LeaseId, Lease> leases_;
  std::map<std::int64_t, Watch> watches_;  // ordered by id: notification order is deterministic
};

}  // namespace electsim::servers
