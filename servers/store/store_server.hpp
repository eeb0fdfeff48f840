// The store as a process of the world: the etcd-like state machine of servers/store/store.hpp
// behind the network. Requests arrive as payloads and take effect on arrival (the linearization
// point), or with a finite `capacity` when their service ends (servers/store/service_queue.hpp);
// replies go back on the requester's connection and watch notifications to each watcher.
// Lease expiry is this process's own timer on its own clock: exact at the deadline, or, with
// `expiry_scan_interval`, noticed only at periodic scans as etcd's leader does (every 500 ms,
// server/lease/lessor.go).
#pragma once

#include <optional>

#include "servers/store/store.hpp"
#include "sim/process.hpp"

namespace electsim::servers {

class StoreServer final : public sim::Process {
 public:
  explicit StoreServer(StoreConfig config) : store_(config), queue_(config.capacity) {
    // etcd keeps its MVCC history until a compaction: a client whose connection broke resumes
    // its watches from the revision after the last event it saw (sim/store_client.hpp).
    ReplicaMode mode;
    mode.history_limit = kWatchHistory;
    store_.set_replica_mode(mode);
  }

  const Store& store() const { return store_; }

  void on_start(sim::ProcessContext& ctx) override;
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from,
                  const sim::Message& message) override;
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override;
  void on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_disconnect(sim::ProcessContext& ctx, sim::Endpoint peer) override;
  // operator_clear: a person deletes the leader key.
  void on_command(sim::ProcessContext& ctx, sim::Command command) override;
  void on_clock_change(sim::ProcessContext& ctx) override;

 private:
  static constexpr sim::TimerTag kExpiry = 1;
  static constexpr sim::TimerTag kScan = 2;

  // The clock the store's timers read: see on_start's neighbour in store_server.cpp.
  static LocalTime clock(const sim::ProcessContext& ctx);
  void expire(sim::ProcessContext& ctx);
  void publish(sim::ProcessContext& ctx);  // traces out_ and sends its watch notifications
  void schedule_expiry(sim::ProcessContext& ctx);
  // Applies a request and answers it: on arrival, or when its service ends.
  void serve(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
             const StoreRequest& request);

  Store store_;
  ServiceQueue queue_;
  StoreOutput out_;
  // The expiry timer armed for the earliest lease deadline, if any. Timers for later deadlines are
  // never armed while it is; earlier ones are armed beside it, and a firing that finds nothing
  // due expires nothing.
  sim::TimerId expiry_timer_ = sim::kNoTimer;
};

}  // namespace electsim::servers
