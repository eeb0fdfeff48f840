// The leader's write workload, shared by every protocol: every `interval` while the node believes
// it leads, it decides to write, checks that it leads, works for `work` (the time between the check
// and the write, where a GC pause bites), then commits the write with the token it checked. Whether
// the protocol re-checks just before committing is the protocol's call (may_write), so a lab can
// show the careful and the careless client. Even the careful client's write then spends
// `send_delay` in the writer (syscall, serialisation, socket buffer) before it leaves, and a pause
// there holds it: the check narrows the window, it cannot close it. Runs on ordinary Context
// timers, so pauses delay it.
#pragma once

#include <cstdint>
#include <functional>

#include "sim/distribution.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols {

struct WorkloadConfig {
  bool enabled = true;
  sim::Duration interval = std::chrono::milliseconds(100);
  sim::Distribution work = sim::Distribution::constant_of(sim::Duration(0));
  // From the commit to the bytes leaving the writer. A user-space write to a database client's
  // socket costs tens to hundreds of microseconds of serialisation and syscalls; 100us..1ms
  // leaves room for a busy client. Small next to any TTL, and not zero: the window a pause can
  // fall into after the careful client's last check (Kleppmann, "How to do distributed locking").
  sim::Distribution send_delay = default_send_delay();

  static sim::Distribution default_send_delay() {
    return sim::Distribution::uniform_of(std::chrono::microseconds(100),
                                         std::chrono::milliseconds(1));
  }
};

// Timer tags at or above this value belong to the Writer.
inline constexpr sim::TimerTag kWriterTagBase = 0x7000'0000;

class Writer {
 public:
  explicit Writer(WorkloadConfig config) : config_(config) {}

  // The node became leader with this token: writes start after one interval.
  void start(sim::Context& ctx, sim::Token token);
  // The node stopped leading: the tick stops. A write already in its work window still completes
  // unless the protocol's may_write says no; that is exactly the race under study.
  void stop(sim::Context& ctx);
  // Returns true if the timer was the Writer's. `may_write(token)` is asked just before sending.
  bool on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag,
                const std::function<bool(sim::Token)>& may_write);

  // Writes go to the database server in one transaction with its fencing check
  // (servers/postgres), not to the sink; the send delay does not apply to them.
  void write_to_database() { to_database_ = true; }

  bool active() const { return active_; }
  std::int64_t writes_sent() const { return next_payload_ - 1; }

 private:
  static constexpr sim::TimerTag kTick = kWriterTagBase + 1;
  static constexpr sim::TimerTag kWorkDone = kWriterTagBase + 2;

  WorkloadConfig config_;
  bool active_ = false;
  bool to_database_ = false;
  sim::Token token_ = 0;
  sim::TimerId tick_ = sim::kNoTimer;
  void commit(sim::Context& ctx, sim::Token token);

  // Writes in their work window: token checked at decision time, per timer.
  struct InWork {
    sim::TimerId timer = sim::kNoTimer;
    sim::Token token = 0;
  };
  static constexpr int kMaxInWork = 8;
  InWork in_work_[kMaxInWork];
  std::int64_t next_payload_ = 1;
};

}  // namespace electsim::protocols
