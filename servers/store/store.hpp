// The store: a linearizable key-value service modelled on etcd v3 (one logical server). It is a
// pure state machine over the store's local clock; its process (servers/store/store_server.hpp)
// receives requests over the network and sends replies and watch notifications back. A request
// takes effect when apply() runs: that is its linearization point. One global revision, +1 per
// write request (a txn or a lease revocation that writes several keys still takes one revision, as
// in etcd).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "servers/store/lease_table.hpp"
#include "servers/store/service_queue.hpp"
#include "sim/event.hpp"
#include "sim/flat_index.hpp"
#include "sim/ids.hpp"
#include "sim/rng.hpp"
#include "sim/store_types.hpp"
#include "sim/string_map.hpp"
#include "sim/time.hpp"

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types

struct StoreConfig {
  Duration min_ttl{0};  // lease_grant raises shorter TTLs to this (etcd: ~2s with default timings)
  // 0: a lease expires exactly at its deadline. > 0: expiry is only noticed at scans every
  // `expiry_scan_interval` of store-local time (etcd's leader checks every 500ms).
  Duration expiry_scan_interval{0};
  // Where the scans fall: true, the first scan after each (re)start comes after a uniform draw from
  // (0, expiry_scan_interval], from the server's second stream, as a real lessor's loop starts
  // whenever its process did; false, exactly one interval after the (re)start (pinned).
  bool random_scan_phase = true;
  // With scans, at most this many leases a second are revoked: rate x expiry_scan_interval at each
  // scan, the earliest deadlines first; the rest wait for the next scans (etcd's
  // leaseRevokeRate, 1000: its lessor takes at most 500 expired leases at each 500ms check). A new
  // leader of a replicated store that holds this many leases or more spreads their deadlines
  // (lessor.Promote). Without scans a lease expires at its deadline, however many do.
  std::size_t lease_revoke_rate = 1000;
  // ZooKeeper's tickTime, for the leases that stand for ZooKeeper sessions (a lease_grant with
  // StoreRequest::session, the zookeeper protocol): the asked session timeout is negotiated into
  // [2, 20] x tick_time and the session expires on tick boundaries. Other leases ignore it.
  // 2000ms is zoo_sample.cfg's value, which most deployments keep; ZooKeeperServer's own
  // DEFAULT_TICK_TIME is 3000ms, and a zoo.cfg must set tickTime itself.
  Duration tick_time = std::chrono::milliseconds(2000);
  std::size_t max_keys = 100'000;
  std::size_t max_leases = 100'000;
  std::size_t max_watches = 100'000;
  // The key whose holder leads, when the protocol keeps one here: the operator_clear fault
  // deletes it (`etcdctl del`). Empty: that fault finds nothing to clear.
  std::string leader_key;
  // How fast its processes serve requests (servers/store/service_queue.hpp): unlimited unless set.
  CapacityConfig capacity;
};

// How a member of a replicated store runs the same state machine. Every member applies every
// committed entry; what depends on a member's own clock must not change what it applies.
struct ReplicaMode {
  // Keepalives renew without looking at the deadline: only the leader renews (keepalives do not
  // go through the log), and it judged the deadline on its own clock first.
  bool leader_judges_keepalives = false;
  // Lock acquires are not refused for lock-delay here: the leader judged that before proposing
  // (StoreCommand::Kind::lock_delayed), on its own clock, as Consul's leader does.
  bool leader_judges_lock_delay = false;
  // Changes kept for watches that resume from a revision (etcd keeps its MVCC history until a
  // compaction); 0 keeps none.
  std::size_t history_limit = 0;
};

// How many changes a store keeps for watches that resume from a revision, single or replicated
// (etcd keeps its MVCC history until a compaction; a resumed watch older than this misses changes).
inline constexpr std::size_t kWatchHistory = 10'000;

// A committed change, for the trace and the analysis.
struct StoreChange {
  Revision revision = 0;
  WatchEvent::Kind kind = WatchEvent::Kind::put;
  Key key;
  std::string value;
  LeaseId lease = kNoLease;
  bool by_lease_expiry = false;
  // A put that only let go of the key when its lease ended (Consul's Behavior release): the
  // value is the old holder's, but nobody holds the key.
  bool released = false;
};

// The node a change names as its owner, for the checkers: a put whose value is a node id (the
// lease protocol's leader key in store mode) or a lease record led by one ("<id> <lease duration
// ns> <renew time ns>", client mode), and not a release, else kNoNode. Other values that start
// with an id, such as ZooKeeper's "<id> <czxid>", name no owner.
NodeId owner_of(const StoreChange& change, std::size_t cluster_size);

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

// ZooKeeperServer.processConnectRequest with minSessionTimeout and maxSessionTimeout unset
// (QuorumPeerConfig: 2 x tickTime and 20 x tickTime): the timeout a session is granted.
Duration negotiate_session_timeout(Duration requested, Duration tick_time);

// ZooKeeper's ExpiryQueue.roundToNextInterval: (t / tick + 1) * tick, the first tick boundary
// strictly after `t` on the server's clock. A session touched at `t` with timeout T expires at
// round_to_next_tick(t + T), never before t + T and less than one tick after it.
LocalTime round_to_next_tick(LocalTime t, Duration tick_time);

// How long after a (re)start the first expiry scan comes: one interval, or with
// `random_scan_phase` a uniform draw from (0, interval] on `rng`, the server's own second stream.
// etcd's lessor loop (runLoop) scans every 500ms from whenever the process started, which in a
// real cluster has nothing to do with when a fault struck. expiry_scan_interval > 0.
Duration first_scan_after(const StoreConfig& config, Rng& rng);

// How many expired leases one scan takes: lease_revoke_rate x expiry_scan_interval, at least one;
// without scans, no limit.
std::size_t revoke_limit(const StoreConfig& config);

// The store_apply trace's `negotiated_timeout` ("40s"): ZooKeeper's server logs "Established
// session 0x... with negotiated timeout 40000 for client". Empty for anything but a granted
// session.
std::string negotiated_timeout_text(const StoreRequest& request, const StoreReply& reply);

// What the single store and a leading member trace: a change, and a request applied for `client`
// (`negotiated`: negotiated_timeout_text, which must outlive the event).
sim::Event change_event(const StoreChange& change, std::size_t cluster_size);
sim::Event apply_event(NodeId client, const StoreRequest& request, const StoreReply& reply,
                       std::string_view negotiated);

class Store {
 public:
  explicit Store(StoreConfig config = {});

  // Applies one request from `from` at store-local time `now`.
  StoreReply apply(NodeId from, const StoreRequest& request, LocalTime now, StoreOutput& out);

  // Expires the leases whose deadline is <= now, at most revoke_limit() of them, the earliest
  // deadlines first: deletes their keys (one revision each), notifies watchers.
  void expire_leases(LocalTime now, StoreOutput& out);

  // Earliest deadline of a live lease, for scheduling the next exact expiry check.
  std::optional<LocalTime> next_lease_deadline() const;

  // A replicated store's member (servers/store/member.hpp).
  void set_replica_mode(ReplicaMode mode) { replica_ = mode; }
  // Appends to `due` the leases whose deadline is <= now, except those in `skip` (the ones whose
  // revocation is under way), at most revoke_limit() of them, earliest deadlines first, in id
  // order, without revoking them: a leader proposes their revocation.
  void due_leases(LocalTime now, const sim::FlatIndex& skip, std::vector<LeaseId>& due) const;
  // Revokes a lease whose TTL ran out (a committed lease_expiry entry): deletes its keys (one
  // revision), notifies watchers, records the expiry; lock-delays start at `now`. False if the
  // lease is gone already.
  bool revoke_expired(LeaseId lease, LocalTime now, StoreOutput& out);
  // Whether a lock acquire would be refused at `now` (a key a success put attaches to a lease is
  // under lock-delay). False for any other request.
  bool lock_delayed(const StoreRequest& request, LocalTime now) const;
  // The end of the key's lock-delay, if one was ever set (Consul's KVSLockDelay).
  std::optional<LocalTime> lock_delay_until(std::string_view key) const;
  // A new leader's lessor (etcd's Promote): every lease's deadline becomes now + extend + its
  // remaining TTL: the checkpointed one if set, else the full TTL; with lease_revoke_rate leases
  // or more, the deadlines that pile up are spread (spread_promoted_deadlines). Returns how many
  // leases it refreshed; `f(id, remaining)` sees each in id order.
  template <typename F>
  std::size_t refresh_leases(LocalTime now, Duration extend, F&& f);
  std::size_t lease_count() const { return leases_.size(); }
  // etcd's Lessor.Checkpoint: a committed checkpoint sets the lease's remaining TTL (0 clears
  // it). False if the lease is gone.
  bool checkpoint_lease(LeaseId lease, Duration remaining);
  // etcd's Lease.getRemainingTTL: the checkpointed remainder if set, else the full TTL; unset
  // for a lease that is gone.
  std::optional<Duration> remaining_ttl(LeaseId lease) const;
  // Whether a checkpointed remainder is set (etcd's Renew clears it through the log).
  bool has_checkpoint(LeaseId lease) const;

  // The node's watch streams broke (it crashed or restarted): its watches are gone.
  void drop_watches_of(NodeId node);
  void drop_all_watches() {
    watches_.clear();
    watch_ids_by_key_.clear();
  }

  Revision revision() const { return revision_; }
  std::optional<KeyValue> peek(std::string_view key) const;
  std::optional<LocalTime> lease_deadline(LeaseId lease) const;
  // The granted timeout of a live ZooKeeper session (a lease granted with `session`).
  std::optional<Duration> session_ttl(LeaseId lease) const;
  std::optional<Duration> lease_ttl(LeaseId lease) const;  // a live lease's granted TTL
  const StoreConfig& config() const { return config_; }

 private:
  struct Lease {
    Duration ttl{0};
    std::vector<std::string> keys;  // sorted: deletion order is deterministic
    Duration lock_delay{0};
    bool release_keys = false;
    bool session = false;   // a ZooKeeper session: deadlines on tick boundaries
    Duration remaining{0};  // etcd's remainingTTL: the last checkpoint's, 0 when unset
  };
  // The rest of etcd's Promote, after every lease was refreshed at `now`: with lease_revoke_rate
  // leases or more, no more than three quarters of that rate expire in any one second.
  void spread_promoted_deadlines(LocalTime now);
  // A lease's deadline when touched at `now`: now + ttl, or for a session the tick boundary
  // after it (ExpiryQueue.update).
  LocalTime deadline_after(const Lease& lease, LocalTime now, Duration remaining) const;
  struct Watch {
    NodeId node = kNoNode;
    Key key;
  };
  struct HistoryEntry {
    Revision revision = 0;
    WatchEvent::Kind kind = WatchEvent::Kind::put;
    KeyValue kv;
    bool by_lease_expiry = false;
  };
  class Batch;  // the writes of one request, all at one revision

  StoreError check_ops(const std::vector<TxnOp>& ops) const;
  // Ends a lease's hold on its keys: deletes them, or releases them with release_keys, and
  // starts their lock-delay at `now`. The lease itself is erased by the caller.
  void end_lease_keys(LeaseId lease, bool by_lease_expiry, LocalTime now, StoreOutput& out);

  StoreConfig config_;
  Revision revision_ = 0;
  LeaseId next_lease_ = 1;
  std::int64_t next_watch_ = 1;
  // Looked up by key, never iterated (what a range read would need is not modelled), so its
  // hashing orders nothing; a fleet's store holds a key per service, and a lookup is one hash.
  sim::StringMap<KeyValue> keys_;
  // Each live lease by id, with its deadline: the next expiry and the due leases are found
  // without a walk of every lease.
  LeaseTable<Lease> leases_;
  std::map<std::int64_t, Watch> watches_;  // ordered by id: notification order is deterministic
  // The ids of each key's watches, ascending: a change finds its key's watchers with one lookup
  // instead of a walk of every watch (a fleet's store holds one per node). Only looked up, never
  // iterated, so its hashing cannot order anything.
  sim::StringMap<std::vector<std::int64_t>> watch_ids_by_key_;
  void add_watch(std::int64_t id, Watch watch);
  void remove_watch(std::map<std::int64_t, Watch>::iterator it);
  // Consul's lockDelay table: the end of each key's lock-delay on this server's clock. Only
  // leases granted with a lock_delay add to it; expired entries are pruned when one is added.
  std::map<std::string, LocalTime, std::less<>> lock_delays_;
  ReplicaMode replica_;
  std::deque<HistoryEntry> history_;  // the last replica_.history_limit changes, oldest first
  std::vector<std::pair<LeaseId, Duration>> refresh_scratch_;  // refresh_leases
  std::vector<LeaseId> expire_scratch_;                        // expire_leases
  std::vector<std::pair<LocalTime, LeaseId>> spread_scratch_;  // spread_promoted_deadlines
};

template <typename F>
std::size_t Store::refresh_leases(LocalTime now, Duration extend, F&& f) {
  // etcd lease/lessor.go: Promote refreshes each lease to now + extend + getRemainingTTL().
  // for_each goes by record position, so the leases are handed to `f` sorted by id after it.
  std::vector<std::pair<LeaseId, Duration>>& refreshed = refresh_scratch_;
  refreshed.clear();
  leases_.for_each([&](LeaseTable<Lease>::Held& held) {
    const Lease& lease = held.lease();
    const Duration remaining = lease.remaining > Duration(0) ? lease.remaining : lease.ttl;
    // A ZooKeeper session lands on a tick boundary, as every touch of it does (simplified: a new
    // ZooKeeper leader re-adds each session with a full timeout from now, and no election
    // timeout is added).
    leases_.set_deadline(held, deadline_after(lease, now + extend, remaining));
    refreshed.emplace_back(held.id(), remaining);
  });
  spread_promoted_deadlines(now);
  std::sort(refreshed.begin(), refreshed.end());
  for (const auto& [id, remaining] : refreshed) f(id, remaining);
  return leases_.size();
}

}  // namespace electsim::servers
