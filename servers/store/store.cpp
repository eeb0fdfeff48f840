// The store: an etcd v3 model (mvcc KV with one global revision, Txn with compares, leases,
// watches), after etcd's server/mvcc and server/lease packages. A request takes effect inside
// apply(); a request that writes takes exactly one revision however many keys it touches, and a
// request that fails writes nothing (etcd applies a txn atomically).
#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "servers/store/store.hpp"
#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::servers {

using namespace electsim::sim;  // the world's ids, times and wire types
namespace {

// etcd's compare against a key: a missing key reads as value "", revisions 0 and lease 0.
bool compare_holds(const Compare& c, const KeyValue* kv) {
  const auto judge = [&](auto actual, auto expected) {
    switch (c.op) {
      case Compare::Op::equal:
        return actual == expected;
      case Compare::Op::not_equal:
        return actual != expected;
      case Compare::Op::less:
        return actual < expected;
      case Compare::Op::greater:
        return actual > expected;
    }
    return false;
  };
  switch (c.target) {
    case Compare::Target::value:
      return judge(kv != nullptr ? std::string_view(kv->value) : std::string_view(),
                   std::string_view(c.text));
    case Compare::Target::create_revision:
      return judge(kv != nullptr ? kv->create_revision : Revision{0}, c.number);
    case Compare::Target::mod_revision:
      return judge(kv != nullptr ? kv->mod_revision : Revision{0}, c.number);
    case Compare::Target::lease:
      return judge(kv != nullptr ? kv->lease : kNoLease, c.number);
  }
  return false;
}

void insert_sorted(std::vector<std::string>& keys, std::string_view key) {
  const auto it = std::lower_bound(keys.begin(), keys.end(), key);
  if (it == keys.end() || *it != key) keys.insert(it, std::string(key));
}

void erase_sorted(std::vector<std::string>& keys, std::string_view key) {
  const auto it = std::lower_bound(keys.begin(), keys.end(), key);
  if (it != keys.end() && *it == key) keys.erase(it);
}

}  // namespace

// The writes of one request. Every change it makes carries the revision after the store's; the
// store's revision moves to it in finish(), and only if something was written.
class Store::Batch {
 public:
  Batch(Store& store, StoreOutput& out, bool by_lease_expiry)
      : store_(store),
        out_(out),
        revision_(store.revision_ + 1),
        by_lease_expiry_(by_lease_expiry) {}

  // `lock_acquire`: Consul's ?acquire=, a key moved to a new lease counts one more LockIndex.
  // `released`: the put that lets go of the key when its lease ends (Behavior release).
  void put(std::string_view key, const std::string& value, LeaseId lease, bool lock_acquire = false,
           bool released = false) {
    auto it = store_.keys_.find(key);
    if (it == store_.keys_.end()) {
      KeyValue kv;
      kv.key = key;
      kv.create_revision = revision_;
      it = store_.keys_.emplace(Key(key), std::move(kv)).first;
    }
    KeyValue& kv = it->second;
    if (lock_acquire && lease != kNoLease && kv.lease != lease) kv.lock_index += 1;
    if (kv.lease != lease) {
      detach(kv);
      if (lease != kNoLease) {
        auto* held = store_.leases_.find(lease);
        ELECTSIM_ASSERT(held != nullptr, "put attaches only to a live lease");
        insert_sorted(held->lease().keys, key);
      }
      kv.lease = lease;
    }
    kv.value = value;
    kv.mod_revision = revision_;
    kv.version += 1;
    wrote_ = true;
    out_.changes.push_back(StoreChange{revision_, WatchEvent::Kind::put, key, value, lease,
                                       by_lease_expiry_, released});
    notify(WatchEvent::Kind::put, kv);
  }

  // Deletes the key if present; returns whether it was.
  bool del(std::string_view key) {
    auto it = store_.keys_.find(key);
    if (it == store_.keys_.end()) return false;
    const LeaseId lease = it->second.lease;
    detach(it->second);
    store_.keys_.erase(it);
    wrote_ = true;
    out_.changes.push_back(StoreChange{revision_, WatchEvent::Kind::del, key, std::string(), lease,
                                       by_lease_expiry_, false});
    // etcd's delete event carries the key and the deletion's revision only.
    KeyValue gone;
    gone.key = key;
    gone.mod_revision = revision_;
    notify(WatchEvent::Kind::del, gone);
    return true;
  }

  // The request's revision becomes the store's if anything was written.
  void finish() {
    if (wrote_) store_.revision_ = revision_;
  }

 private:
  void detach(const KeyValue& kv) {
    if (kv.lease == kNoLease) return;
    if (auto* held = store_.leases_.find(kv.lease)) erase_sorted(held->lease().keys, kv.key);
  }

  void notify(WatchEvent::Kind kind, const KeyValue& kv) {
    if (store_.replica_.history_limit > 0) {
      if (store_.history_.size() >= store_.replica_.history_limit) store_.history_.pop_front();
      store_.history_.push_back(HistoryEntry{revision_, kind, kv, by_lease_expiry_});
    }
    const auto watchers = store_.watch_ids_by_key_.find(kv.key);
    if (watchers == store_.watch_ids_by_key_.end()) return;
    for (const std::int64_t id : watchers->second) {
      const Watch& watch = store_.watches_.at(id);
      WatchNotification n;
      n.to = watch.node;
      n.event.watch_id = id;
      n.event.kind = kind;
      n.event.kv = kv;
      n.event.revision = revision_;
      n.event.by_lease_expiry = by_lease_expiry_;
      out_.notifications.push_back(std::move(n));
    }
  }

  Store& store_;
  StoreOutput& out_;
  Revision revision_;
  bool by_lease_expiry_;
  bool wrote_ = false;
};

sim::Event change_event(const StoreChange& change, std::size_t cluster_size) {
  // The owner, for the checkers: a put whose value is a node id (the lease protocol's).
  return sim::events::store_change(
      change.key,
      change.kind == WatchEvent::Kind::put ? sim::events::Change::put : sim::events::Change::del,
      change.revision, owner_of(change, cluster_size), change.lease, change.by_lease_expiry);
}

sim::Event apply_event(NodeId client, const StoreRequest& request, const StoreReply& reply,
                       std::string_view negotiated) {
  return sim::events::store_apply(client, request.op, reply.revision,
                                  reply.succeeded && reply.error == StoreError::none, reply.lease,
                                  request.id, negotiated);
}

NodeId owner_of(const StoreChange& change, std::size_t cluster_size) {
  if (change.kind != WatchEvent::Kind::put || change.released) return kNoNode;
  // A decimal integer filling [begin, end).
  const auto integer = [](const char* begin, const char* end, std::int64_t& out) {
    const auto [ptr, ec] = std::from_chars(begin, end, out);
    return begin != end && ec == std::errc{} && ptr == end;
  };
  const char* const begin = change.value.data();
  const char* const end = begin + change.value.size();
  const char* const id_end = std::find(begin, end, ' ');
  std::int64_t owner = kNoNode;
  if (!integer(begin, id_end, owner) || owner < 0 ||
      static_cast<std::uint64_t>(owner) >= cluster_size) {
    return kNoNode;
  }
  if (id_end != end) {
    // Exactly two more integers: the lease record's duration (not negative) and renew time.
    const char* const duration_end = std::find(id_end + 1, end, ' ');
    std::int64_t duration = 0;
    std::int64_t renew_time = 0;
    if (duration_end == end || !integer(id_end + 1, duration_end, duration) || duration < 0 ||
        !integer(duration_end + 1, end, renew_time)) {
      return kNoNode;
    }
  }
  return static_cast<NodeId>(owner);
}

Duration negotiate_session_timeout(Duration requested, Duration tick_time) {
  return std::clamp(requested, 2 * tick_time, 20 * tick_time);
}

LocalTime round_to_next_tick(LocalTime t, Duration tick_time) {
  const std::int64_t tick = tick_time.count();
  // Java's long division truncates toward zero; ZooKeeper's elapsed-time clock is never
  // negative. A store clock set behind the run's start can be: floor it, so that the boundary
  // still comes after t.
  std::int64_t q = t.ns / tick;
  if (t.ns % tick < 0) --q;
  return LocalTime((q + 1) * tick);
}

Duration first_scan_after(const StoreConfig& config, Rng& rng) {
  const Duration interval = config.expiry_scan_interval;
  ELECTSIM_ASSERT(interval.count() > 0, "scans only with a positive interval");
  if (!config.random_scan_phase) return interval;
  return Duration(rng.between(1, interval.count()));
}

std::size_t revoke_limit(const StoreConfig& config) {
  const Duration interval = config.expiry_scan_interval;
  if (interval.count() <= 0) return std::numeric_limits<std::size_t>::max();
  // Both factors are range-checked when read; the product is capped at the lease limit, which no
  // scan can exceed.
  const double per_scan = static_cast<double>(config.lease_revoke_rate) *
                          std::chrono::duration<double>(interval).count();
  if (per_scan >= static_cast<double>(config.max_leases)) return config.max_leases;
  return std::max<std::size_t>(1, static_cast<std::size_t>(per_scan));
}

std::string negotiated_timeout_text(const StoreRequest& request, const StoreReply& reply) {
  if (request.op != StoreOp::lease_grant || !request.session || reply.error != StoreError::none) {
    return {};
  }
  return format_duration(reply.ttl);
}

Store::Store(StoreConfig config) : config_(config) {}

LocalTime Store::deadline_after(const Lease& lease, LocalTime now, Duration remaining) const {
  if (!lease.session) return now + remaining;
  return round_to_next_tick(now + remaining, config_.tick_time);
}

std::optional<KeyValue> Store::peek(std::string_view key) const {
  const auto it = keys_.find(key);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

std::optional<LocalTime> Store::lease_deadline(LeaseId lease) const {
  const auto* held = leases_.find(lease);
  if (held == nullptr) return std::nullopt;
  return held->deadline();
}

std::optional<Duration> Store::session_ttl(LeaseId lease) const {
  const auto* held = leases_.find(lease);
  if (held == nullptr || !held->lease().session) return std::nullopt;
  return held->lease().ttl;
}

std::optional<Duration> Store::lease_ttl(LeaseId lease) const {
  const auto* held = leases_.find(lease);
  if (held == nullptr) return std::nullopt;
  return held->lease().ttl;
}

std::optional<LocalTime> Store::next_lease_deadline() const {
  return leases_.next_deadline();
}

void Store::drop_watches_of(NodeId node) {
  for (auto it = watches_.begin(); it != watches_.end();) {
    const auto next = std::next(it);
    if (it->second.node == node) remove_watch(it);
    it = next;
  }
}

void Store::add_watch(std::int64_t id, Watch watch) {
  // Ids only grow: appending keeps each key's list ascending.
  watch_ids_by_key_[watch.key].push_back(id);
  watches_.emplace(id, std::move(watch));
}

void Store::remove_watch(std::map<std::int64_t, Watch>::iterator it) {
  const auto ids = watch_ids_by_key_.find(it->second.key);
  ELECTSIM_ASSERT(ids != watch_ids_by_key_.end(), "every watch is indexed by its key");
  std::erase(ids->second, it->first);
  if (ids->second.empty()) watch_ids_by_key_.erase(ids);
  watches_.erase(it);
}

// Checks, before anything is applied, that `ops` can run: every lease they name exists and the
// key count stays within max_keys once they have run in order.
StoreError Store::check_ops(const std::vector<TxnOp>& ops) const {
  std::size_t puts = 0;
  for (const TxnOp& op : ops) {
    if (op.kind != TxnOp::Kind::put) continue;
    ++puts;
    if (op.lease != kNoLease && !leases_.contains(op.lease)) return StoreError::lease_not_found;
  }
  if (keys_.size() + puts <= config_.max_keys) return StoreError::none;
  // Near the limit: follow the presence of each touched key through the ops.
  std::map<std::string_view, bool> present;
  std::size_t key_count = keys_.size();
  for (const TxnOp& op : ops) {
    if (op.kind == TxnOp::Kind::get) continue;
    auto [it, inserted] = present.try_emplace(op.key, false);
    if (inserted) it->second = keys_.contains(op.key);
    if (op.kind == TxnOp::Kind::put && !it->second) {
      it->second = true;
      ++key_count;
    } else if (op.kind == TxnOp::Kind::del && it->second) {
      it->second = false;
      --key_count;
    }
  }
  return key_count > config_.max_keys ? StoreError::resource_exhausted : StoreError::none;
}

void Store::end_lease_keys(LeaseId lease, bool by_lease_expiry, LocalTime now, StoreOutput& out) {
  const auto* held = leases_.find(lease);
  ELECTSIM_ASSERT(held != nullptr, "ending the keys of a live lease");
  // A copy: deleting or releasing a key detaches it from the lease's list. The list is sorted,
  // so the changes (and their records) come in key order.
  const std::vector<std::string> keys = held->lease().keys;
  const Duration lock_delay = held->lease().lock_delay;
  const bool release = held->lease().release_keys;
  Batch batch(*this, out, by_lease_expiry);
  for (const std::string& key : keys) {
    if (release) {
      // Consul's session invalidation with Behavior release: the key stays, its Session cleared.
      const auto kv = keys_.find(key);
      ELECTSIM_ASSERT(kv != keys_.end(), "a lease's key list names only live keys");
      const std::string value = kv->second.value;
      batch.put(key, value, kNoLease, false, /*released=*/true);
    } else {
      const bool deleted = batch.del(key);
      ELECTSIM_ASSERT(deleted, "a lease's key list names only live keys");
    }
  }
  batch.finish();
  if (lock_delay.count() <= 0 || keys.empty()) return;
  // Consul's state store (deleteSessionTxn): every key the session held gets a lock-delay from
  // this server's own clock. Entries already over are dropped first, so the table stays small.
  std::erase_if(lock_delays_, [now](const auto& entry) { return entry.second <= now; });
  for (const std::string& key : keys) lock_delays_.insert_or_assign(key, now + lock_delay);
}

std::optional<LocalTime> Store::lock_delay_until(std::string_view key) const {
  const auto it = lock_delays_.find(key);
  if (it == lock_delays_.end()) return std::nullopt;
  return it->second;
}

bool Store::lock_delayed(const StoreRequest& request, LocalTime now) const {
  if (request.op != StoreOp::txn || !request.lock_acquire || lock_delays_.empty()) return false;
  for (const TxnOp& op : request.success) {
    if (op.kind != TxnOp::Kind::put || op.lease == kNoLease) continue;
    const auto it = lock_delays_.find(op.key);
    // Consul's kvsPreApply: refused while the delay's end is after now.
    if (it != lock_delays_.end() && it->second > now) return true;
  }
  return false;
}

StoreReply Store::apply(NodeId from, const StoreRequest& request, LocalTime now, StoreOutput& out) {
  StoreReply reply;
  reply.id = request.id;
  reply.op = request.op;
  const auto fail = [&](StoreError error) {
    reply.error = error;
    reply.succeeded = false;
  };

  switch (request.op) {
    case StoreOp::get:
      reply.kv = peek(request.key);
      break;

    case StoreOp::put: {
      if (request.lease != kNoLease && !leases_.contains(request.lease)) {
        fail(StoreError::lease_not_found);
        break;
      }
      if (keys_.size() >= config_.max_keys && !keys_.contains(request.key)) {
        fail(StoreError::resource_exhausted);
        break;
      }
      Batch batch(*this, out, false);
      batch.put(request.key, request.value, request.lease);
      batch.finish();
      break;
    }

    case StoreOp::del: {
      Batch batch(*this, out, false);
      batch.del(request.key);
      batch.finish();
      break;
    }

    case StoreOp::txn: {
      if (!replica_.leader_judges_lock_delay && lock_delayed(request, now)) {
        // Consul's KVS.Apply answers false and applies nothing.
        reply.succeeded = false;
        reply.lock_delayed = true;
        break;
      }
      bool holds = true;
      for (const Compare& c : request.compares) {
        const auto it = keys_.find(c.key);
        if (!compare_holds(c, it != keys_.end() ? &it->second : nullptr)) {
          holds = false;
          break;
        }
      }
      const std::vector<TxnOp>& ops = holds ? request.success : request.failure;
      const StoreError error = check_ops(ops);
      if (error != StoreError::none) {
        fail(error);
        break;
      }
      reply.succeeded = holds;
      reply.responses.reserve(ops.size());
      Batch batch(*this, out, false);
      for (const TxnOp& op : ops) {
        switch (op.kind) {
          case TxnOp::Kind::get:
            reply.responses.push_back(peek(op.key));
            break;
          case TxnOp::Kind::put:
            batch.put(op.key, op.value, op.lease, request.lock_acquire);
            reply.responses.push_back(std::nullopt);
            break;
          case TxnOp::Kind::del:
            batch.del(op.key);
            reply.responses.push_back(std::nullopt);
            break;
        }
      }
      batch.finish();
      break;
    }

    case StoreOp::lease_grant: {
      if (leases_.size() >= config_.max_leases) {
        fail(StoreError::resource_exhausted);
        break;
      }
      // A ZooKeeper session: ZooKeeperServer.processConnectRequest negotiates the asked timeout
      // into [minSessionTimeout, maxSessionTimeout] and answers the negotiated one, which the
      // client then times its pings by (ClientCnxn.onConnected); SessionTrackerImpl files the
      // session under its next tick (ExpiryQueue.update).
      const Duration ttl = request.session
                               ? negotiate_session_timeout(request.ttl, config_.tick_time)
                               : std::max(request.ttl, config_.min_ttl);
      const LeaseId id = next_lease_++;
      Lease lease{ttl, {}, request.lock_delay, request.release_keys, request.session};
      const LocalTime deadline = deadline_after(lease, now, ttl);
      leases_.insert(id, std::move(lease), deadline);
      reply.lease = id;
      reply.ttl = ttl;
      break;
    }

    case StoreOp::lease_keepalive: {
      reply.lease = request.lease;
      auto* held = leases_.find(request.lease);
      // etcd's lessor refuses to renew a lease whose deadline has passed even if its revocation
      // has not run yet (Renew waits for the revoke and answers ErrLeaseNotFound). In a
      // replicated store the leader has judged that before proposing.
      if (held == nullptr || (!replica_.leader_judges_keepalives && held->deadline() <= now)) {
        fail(StoreError::lease_not_found);
        break;
      }
      const Lease& lease = held->lease();
      leases_.set_deadline(*held, deadline_after(lease, now, lease.ttl));
      reply.ttl = lease.ttl;
      break;
    }

    case StoreOp::lease_revoke: {
      reply.lease = request.lease;
      if (!leases_.contains(request.lease)) {
        fail(StoreError::lease_not_found);
        break;
      }
      end_lease_keys(request.lease, false, now, out);
      leases_.erase(request.lease);
      break;
    }

    case StoreOp::watch: {
      if (watches_.size() >= config_.max_watches) {
        fail(StoreError::resource_exhausted);
        break;
      }
      const std::int64_t id = next_watch_++;
      add_watch(id, Watch{from, request.key});
      reply.watch_id = id;
      // etcd's start_revision: the changes from that revision on that this member still holds
      // come first, in order.
      if (request.start_revision > 0) {
        for (const HistoryEntry& h : history_) {
          if (h.revision < request.start_revision || h.kv.key != request.key) continue;
          WatchNotification n;
          n.to = from;
          n.event.watch_id = id;
          n.event.kind = h.kind;
          n.event.kv = h.kv;
          n.event.revision = h.revision;
          n.event.by_lease_expiry = h.by_lease_expiry;
          out.notifications.push_back(std::move(n));
        }
      }
      break;
    }

    case StoreOp::unwatch: {
      reply.watch_id = request.watch_id;
      const auto it = watches_.find(request.watch_id);
      // A watch belongs to the stream of the node that opened it.
      if (it == watches_.end() || it->second.node != from) {
        fail(StoreError::watch_not_found);
        break;
      }
      remove_watch(it);
      break;
    }
  }
  reply.revision = revision_;
  return reply;
}

void Store::expire_leases(LocalTime now, StoreOutput& out) {
  // Collected first: expiry erases from leases_. Leases expire in id order whatever their
  // deadlines.
  std::vector<LeaseId>& due = expire_scratch_;
  due.clear();
  leases_.due(now, revoke_limit(config_), due);
  for (LeaseId id : due) {
    end_lease_keys(id, true, now, out);
    leases_.erase(id);
    out.expired_leases.push_back(id);
  }
}

void Store::due_leases(LocalTime now, const sim::FlatIndex& skip, std::vector<LeaseId>& due) const {
  // The deadline heap gives the due leases without visiting the others.
  leases_.due(
      now, revoke_limit(config_),
      [&skip](LeaseId id) { return skip.find(static_cast<std::uint64_t>(id)).has_value(); }, due);
}

void Store::spread_promoted_deadlines(LocalTime now) {
  // etcd lease/lessor.go Promote: "adjust expiries in case of overlap". With leaseRevokeRate
  // leases or more, they are taken in deadline order in windows of a second from the first
  // deadline of each: the first three quarters of the rate in a window keep their deadline, and
  // the k-th after them moves to the window's start plus k / (3/4 rate) seconds, "so piled up
  // leases don't consume the entire revoke limit"; a lease past the window that grew opens the
  // next one. Only etcd leases: a ZooKeeper session keeps its tick boundary. Ties in deadline are
  // taken by id (etcd's sort leaves their order open).
  std::vector<std::pair<LocalTime, LeaseId>>& order = spread_scratch_;
  order.clear();
  leases_.for_each([&](LeaseTable<Lease>::Held& held) {
    if (!held.lease().session) order.emplace_back(held.deadline(), held.id());
  });
  if (order.size() < config_.lease_revoke_rate) return;  // no pile-up (the rate is at least 1)
  std::sort(order.begin(), order.end());
  const auto target =
      static_cast<std::int64_t>(std::max<std::size_t>(1, 3 * config_.lease_revoke_rate / 4));
  constexpr Duration kWindow = std::chrono::seconds(1);
  Duration base = order.front().first - now;
  Duration next = base + kWindow;
  std::int64_t expires = 0;
  for (const auto& [deadline, id] : order) {
    const Duration remaining = deadline - now;
    if (remaining > next) {
      base = remaining;
      next = base + kWindow;
      expires = 1;
      continue;
    }
    ++expires;
    if (expires <= target) continue;
    // etcd: refresh(delay + extend), which is the refreshed deadline plus delay.
    const Duration delay = kWindow * expires / target - (remaining - base);
    next = base + delay;
    leases_.set_deadline(*leases_.find(id), deadline + delay);
  }
}

bool Store::revoke_expired(LeaseId lease, LocalTime now, StoreOutput& out) {
  if (!leases_.contains(lease)) return false;
  end_lease_keys(lease, true, now, out);
  leases_.erase(lease);
  out.expired_leases.push_back(lease);
  return true;
}

bool Store::checkpoint_lease(LeaseId lease, Duration remaining) {
  auto* held = leases_.find(lease);
  if (held == nullptr) return false;
  held->lease().remaining = remaining;
  return true;
}

std::optional<Duration> Store::remaining_ttl(LeaseId lease) const {
  const auto* held = leases_.find(lease);
  if (held == nullptr) return std::nullopt;
  const Lease& l = held->lease();
  return l.remaining > Duration(0) ? l.remaining : l.ttl;
}

bool Store::has_checkpoint(LeaseId lease) const {
  const auto* held = leases_.find(lease);
  return held != nullptr && held->lease().remaining > Duration(0);
}

}  // namespace electsim::servers
