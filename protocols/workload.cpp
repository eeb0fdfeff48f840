// The leader's write workload (protocols/workload.hpp): a tick every `interval` while the node
// believes it leads; each tick checks leadership, works for a sampled `work` duration and only
// then writes with the token it checked. That window between check and use is the one Kleppmann's
// "How to do distributed locking" (2016) shows a GC pause opening.
#include "protocols/workload.hpp"

#include "sim/assert.hpp"

namespace electsim::protocols {

void Writer::start(sim::Context& ctx, sim::Token token) {
  if (!config_.enabled) return;
  ELECTSIM_ASSERT(config_.interval.count() > 0, "the write interval is positive");
  if (tick_ != sim::kNoTimer) ctx.cancel_timer(tick_);
  active_ = true;
  token_ = token;
  tick_ = ctx.set_timer(config_.interval, kTick);
}

void Writer::stop(sim::Context& ctx) {
  active_ = false;
  if (tick_ != sim::kNoTimer) ctx.cancel_timer(tick_);
  tick_ = sim::kNoTimer;
  // Writes in their work window are left alone on purpose: whether they still go out is decided
  // by may_write when their work ends.
}

bool Writer::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag,
                      const std::function<bool(sim::Token)>& may_write) {
  if (tag == kTick) {
    // A tick cancelled by stop() never fires; one from an earlier start() is not ours any more.
    if (id != tick_) return true;
    tick_ = sim::kNoTimer;
    if (!active_) return true;
    InWork* slot = nullptr;
    for (InWork& w : in_work_) {
      if (w.timer == sim::kNoTimer) {
        slot = &w;
        break;
      }
    }
    // A bound on work in progress: with every slot busy (work much longer than the interval) the
    // new write is skipped rather than queued without limit.
    if (slot != nullptr) {
      const sim::Duration work = config_.work.sample(ctx.workload_rng());
      if (work.count() == 0) {
        if (may_write(token_)) commit(ctx, token_);
      } else {
        slot->timer = ctx.set_timer(work, kWorkDone);
        slot->token = token_;
      }
    }
    // may_write may have stopped the writer (the protocol stepped down): then no new tick.
    if (active_ && tick_ == sim::kNoTimer) tick_ = ctx.set_timer(config_.interval, kTick);
    return true;
  }
  if (tag == kWorkDone) {
    for (InWork& w : in_work_) {
      if (w.timer != id) continue;
      const sim::Token token = w.token;
      // The slot is freed before asking: may_write may step the protocol down and stop us.
      w = InWork{};
      if (may_write(token)) commit(ctx, token);
      return true;
    }
    return true;  // a work timer of a write already forgotten
  }
  return false;
}

void Writer::commit(sim::Context& ctx, sim::Token token) {
  if (to_database_) {
    sim::DbRequest request;
    request.op = sim::DbOp::write;
    request.token = token;
    request.payload = next_payload_++;
    ctx.db(request);
    return;
  }
  const sim::Duration send_delay = config_.send_delay.sample(ctx.workload_rng());
  ctx.sink_write(token, next_payload_++, send_delay);
}

}  // namespace electsim::protocols
