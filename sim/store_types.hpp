// What travels between a node and the store: requests, replies and watch notifications of an etcd
// v3 model (KV range/put/delete, Txn with compares, Lease grant/keepalive/revoke, Watch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/ids.hpp"
#include "sim/key.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

struct KeyValue {
  Key key;
  std::string value;
  Revision create_revision = 0;  // revision of the put that created the key (0: absent)
  Revision mod_revision = 0;     // revision of the last put
  std::int64_t version = 0;      // puts since creation
  LeaseId lease = kNoLease;
  // Consul's LockIndex: how many times a lock acquire (StoreRequest::lock_acquire) took the key
  // for a new lease. etcd has no such counter; it stays 0 for plain puts.
  std::int64_t lock_index = 0;
};

// etcd's Compare: target (value, create_revision, mod_revision, lease) of a key against a constant.
// A key that does not exist has create_revision = mod_revision = 0, lease 0 and value "".
struct Compare {
  enum class Target { value, create_revision, mod_revision, lease };
  enum class Op { equal, not_equal, less, greater };
  Key key;
  Target target = Target::create_revision;
  Op op = Op::equal;
  std::int64_t number = 0;  // revisions and lease ids
  std::string text;         // values
};

struct TxnOp {
  enum class Kind { get, put, del };
  Kind kind = Kind::get;
  Key key;
  std::string value;
  LeaseId lease = kNoLease;
};

enum class StoreOp : std::uint8_t {
  get,
  put,
  del,
  txn,
  lease_grant,
  lease_keepalive,
  lease_revoke,
  watch,
  unwatch,
};
inline constexpr int kStoreOpCount = 9;
const char* store_op_name(StoreOp op);

struct StoreRequest {
  RequestId id = 0;  // set by the kernel when sent; replies carry it back
  StoreOp op = StoreOp::get;
  Key key;                   // get, put, del, watch
  std::string value;         // put
  LeaseId lease = kNoLease;  // put (attach), keepalive, revoke
  Duration ttl{0};           // lease_grant
  // lease_grant, Consul's session options: after the lease ends (revoked or expired) its keys
  // may not be taken by a lock acquire for `lock_delay` of the store's clock (LockDelay), and
  // `release_keys` leaves them in place, unheld, instead of deleting them (Behavior release).
  Duration lock_delay{0};
  bool release_keys = false;
  // lease_grant, a ZooKeeper session (the zookeeper protocol's connect): `ttl` is the timeout the
  // client asks for; the store negotiates it into [2, 20] x store.tick_time, answers the
  // negotiated one in StoreReply::ttl, and expires the session on tick boundaries.
  bool session = false;
  // txn, Consul's PUT ?acquire=: refused (succeeded false, lock_delayed true, nothing run) while
  // a key a success put attaches to a lease is under lock-delay; each such put that moves the
  // key to a new lease increments its lock_index.
  bool lock_acquire = false;
  std::vector<Compare> compares;  // txn
  std::vector<TxnOp> success;     // txn: run when every compare holds
  std::vector<TxnOp> failure;     // txn: run otherwise
  std::int64_t watch_id = 0;      // unwatch
  // watch: the first revision to report (etcd's start_revision); 0 reports changes from now on.
  // A client that moves to another member resumes its watch from the revision after the last it
  // saw, and the member replays what it still holds of the key's history.
  Revision start_revision = 0;
};

// resource_exhausted: a StoreConfig limit (max_keys, max_leases, max_watches) would be exceeded;
// nothing was applied. no_leader: a member of a replicated store knew no leader to take the
// request (etcd's "etcdserver: no leader"). unavailable: the client gave up on the request after
// store.request_timeout (clientv3's context deadline); it may or may not have been applied.
enum class StoreError : std::uint8_t {
  none,
  lease_not_found,
  watch_not_found,
  resource_exhausted,
  no_leader,
  unavailable,
  too_many_requests,  // a store of finite capacity refused a write (etcd: "too many requests")
};
inline constexpr int kStoreErrorCount = 7;
const char* store_error_name(StoreError error);

struct StoreReply {
  RequestId id = 0;
  StoreOp op = StoreOp::get;
  StoreError error = StoreError::none;
  Revision revision = 0;       // the store's revision after the request (etcd's header.revision)
  bool succeeded = true;       // txn: whether the compares held
  std::optional<KeyValue> kv;  // get: the key if present
  std::vector<std::optional<KeyValue>> responses;  // txn: one per op run; gets carry the key
  LeaseId lease = kNoLease;                        // lease_grant / keepalive / revoke
  Duration ttl{0};  // lease_grant / keepalive: granted TTL (after min_ttl; a session's negotiated)
  std::int64_t watch_id = 0;  // watch: the id of the new watch
  // A replicated store: the Raft term of the log entry that applied the request (ZooKeeper's
  // epoch of a zxid). 0 from the single store and on replies no entry applied.
  Epoch term = 0;
  // txn with lock_acquire: refused because a key was under lock-delay (Consul answers false).
  bool lock_delayed = false;
};

// One change of a watched key, sent to each watcher (etcd WatchResponse with one event).
struct WatchEvent {
  std::int64_t watch_id = 0;
  enum class Kind { put, del } kind = Kind::put;
  KeyValue kv;            // for del: key and mod_revision (the deletion's revision) only
  Revision revision = 0;  // revision of the change
  bool by_lease_expiry = false;
};

}  // namespace electsim::sim
