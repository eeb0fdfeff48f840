// Leader election by a lease on one store key, with fencing tokens: etcd's
// client/v3/concurrency Election (store mode: the key lives on a lease the store expires) and
// Kubernetes client-go leaderelection (client mode: a plain record that followers judge expired on
// their own clocks). The fencing token is the revision of the acquiring write (Kleppmann 2016).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "protocols/lease/config.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols::lease {

// The registry entries: "lease" (both expiry modes), and "kubernetes", the same node in client mode
// with client-go's defaults. Name, description, parameter table and prepare().
ProtocolInfo protocol_info();
ProtocolInfo kubernetes_protocol_info();

// Client mode's record, the store value: "<holder id> <lease duration ns> <renew time ns>", the
// holder's configured duration (the Lease's leaseDurationSeconds) and its wall clock when it
// wrote (renewTime). Store mode's value is the id alone.
struct LeaseRecord {
  sim::NodeId holder = sim::kNoNode;
  bool timed = false;  // the two times are present (false: the id alone)
  sim::Duration lease_duration{0};
  sim::LocalTime renew_time;
};
// kNoNode as holder when the value is neither form.
LeaseRecord parse_record(std::string_view value);
std::string format_record(sim::NodeId holder, sim::Duration lease_duration,
                          sim::LocalTime renew_time);

class LeaseNode final : public sim::Protocol {
 public:
  explicit LeaseNode(std::shared_ptr<const LeaseConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& ctx, const sim::StoreReply& reply) override;
  void on_watch(sim::Context& ctx, const sim::WatchEvent& event) override;
  void on_sink_reply(sim::Context& ctx, const sim::SinkReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  // White-box views for tests.
  bool leads() const { return role_ == sim::Role::leader; }
  sim::Token token() const { return token_; }
  sim::LeaseId lease() const { return lease_; }
  const Writer& writer() const { return writer_; }

  // Timer tags, below kWriterTagBase.
  static constexpr sim::TimerTag kRenewTag = 1;     // leader: keepalive / record update
  static constexpr sim::TimerTag kDeadlineTag = 2;  // leader: renew_deadline by its own clock
  static constexpr sim::TimerTag kRetryTag = 3;     // follower: retry or poll
  static constexpr sim::TimerTag kRaceTag = 4;      // follower: race_jitter's wait is over

 private:
  // The one acquisition step in flight (etcd's Campaign: grant, then the txn; Kubernetes:
  // get, then create or update).
  enum class Pending : std::uint8_t { none, grant, acquire_txn, probe };
  struct Renewal {
    sim::RequestId id = 0;
    sim::LocalTime sent_at;
  };
  // Keepalives or record updates whose replies may still come; the oldest is forgotten first.
  static constexpr std::size_t kRenewalsMax = 8;

  bool store_mode() const { return config_->expiry == Expiry::store; }
  // The clock that intervals (deadlines, hold-offs, the age of an observation) are measured on:
  // the monotonic one in both modes. Both clients are Go: time.Now carries a monotonic reading
  // and Sub, After and context timeouts use it. client-go's renew deadline runs in a context
  // timeout; clientv3's lease client closes its KeepAlive channel once time.Now() passes the
  // deadline of the last answer (lease.go, deadlineLoop), so a wall-clock step on the holder
  // moves neither.
  static sim::LocalTime elapsed_now(const sim::Context& ctx) { return ctx.monotonic_now(); }
  // Client mode: whether the record, observed as it is, has outlived its lease by this node's
  // judgement.
  bool record_expired(const sim::Context& ctx, const LeaseRecord& record) const;
  std::string record_value(const sim::Context& ctx) const;

  // Role changes reset all role state in one place (etcd-io/raft's becomeFollower/becomeLeader).
  void become_leader(sim::Context& ctx, sim::Token token);
  void become_follower(sim::Context& ctx, sim::NodeId holder, sim::Epoch epoch);
  // The holder stops believing it leads; `release` gives the claim back first (best effort).
  void step_down(sim::Context& ctx, bool release);
  void release(sim::Context& ctx);

  // Acquisition and observation of the key.
  void maybe_acquire(sim::Context& ctx);
  void send_acquire_txn(sim::Context& ctx, bool fresh_lease);
  void send_takeover_txn(sim::Context& ctx, sim::Revision expected_mod_revision,
                         sim::Revision create_revision);
  void send_probe(sim::Context& ctx);
  void observe(sim::Context& ctx, const std::optional<sim::KeyValue>& kv);
  void observe_record(sim::Context& ctx, const std::optional<sim::KeyValue>& kv);
  void follow(sim::Context& ctx, const sim::KeyValue& kv);
  void maybe_watch(sim::Context& ctx);
  bool acquisition_in_flight(sim::LocalTime now) const;

  // Renewal and the holder's own deadline.
  void send_renewal(sim::Context& ctx);
  void on_renewal_reply(sim::Context& ctx, const sim::StoreReply& reply, sim::LocalTime sent_at);
  void confirm(sim::Context& ctx, sim::LocalTime sent_at);
  void arm_deadline(sim::Context& ctx);
  bool deadline_passed(sim::LocalTime now) const;
  bool may_write(sim::Context& ctx, sim::Token token);

  void arm_retry(sim::Context& ctx, sim::Duration after);
  // The wait before the next try: retry_interval, or the backed-off wait after failures; jittered.
  sim::Duration retry_wait(sim::Context& ctx);
  // An acquisition step's answer: `error` none or a refusal (backoff_max's bookkeeping).
  void on_try_answered(sim::Context& ctx, sim::StoreError error);
  // Races for a freed key now, or after race_jitter's draw.
  void race(sim::Context& ctx);
  sim::Duration jittered(sim::Context& ctx, sim::Duration d);
  sim::NodeId parse_holder(const std::string& value) const;
  void announce_follower(sim::Context& ctx) {
    ctx.announce(sim::Belief::follower(holder_, epoch_));
  }
  void cancel(sim::Context& ctx, sim::TimerId& timer);

  std::shared_ptr<const LeaseConfig> config_;
  Writer writer_;
  sim::NodeId self_ = sim::kNoNode;
  std::string self_text_;  // the record value: decimal node id

  sim::Role role_ = sim::Role::follower;
  bool stopped_ = false;  // after Command::stop: inert until the kernel takes the node down
  sim::Token token_ = 0;  // the fencing token of the current or last tenure
  sim::NodeId holder_ = sim::kNoNode;  // follower: who holds the key, if someone else
  sim::Epoch epoch_ = 0;               // follower: the holder's token as far as it is known

  sim::TimerId renew_timer_ = sim::kNoTimer;
  sim::TimerId deadline_timer_ = sim::kNoTimer;
  sim::TimerId retry_timer_ = sim::kNoTimer;
  sim::TimerId race_timer_ = sim::kNoTimer;
  // The backed-off wait after consecutive failed tries (0: none failed since the last answer).
  sim::Duration backoff_{0};
  // After a voluntary step-down the node does not race before this (local) time.
  bool holding_off_ = false;
  sim::LocalTime hold_off_until_;

  // Send time of the last request whose reply confirmed the claim (store mode: the lease's grant
  // or keepalive; client mode: the acquiring or renewing txn).
  sim::LocalTime confirmed_at_;
  sim::LeaseId lease_ = sim::kNoLease;  // store mode

  Pending pending_ = Pending::none;
  sim::RequestId pending_id_ = 0;
  sim::LocalTime pending_sent_at_;
  bool pending_fresh_lease_ = false;           // store mode: the txn uses a lease just granted
  sim::Revision pending_create_revision_ = 0;  // client mode: the key's life a takeover targets

  std::array<Renewal, kRenewalsMax> renewals_{};
  std::size_t next_renewal_ = 0;

  // Store mode: the watch on the key.
  std::int64_t watch_id_ = 0;
  sim::RequestId watch_request_ = 0;
  sim::LocalTime watch_sent_at_;
  // Newest store revision at which the key was observed; older watch events are ignored.
  sim::Revision seen_revision_ = 0;

  // Client mode: the record as this node last saw it change (client-go's observedRecord and
  // observedTime, on the monotonic clock) and, while leading, the record's revisions.
  sim::Revision observed_mod_revision_ = 0;
  sim::NodeId observed_holder_ = sim::kNoNode;
  sim::LocalTime observed_at_;
  sim::Revision record_mod_revision_ = 0;
  sim::Revision record_create_revision_ = 0;
};

}  // namespace electsim::protocols::lease
