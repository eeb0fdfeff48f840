// The sink as a process of the world: the fenced database of servers/sink/sink.hpp behind the
// network. A write takes effect when it arrives; the answer goes back on the writer's connection.
#pragma once

#include "servers/sink/sink.hpp"
#include "sim/process.hpp"

namespace electsim::servers {

class SinkServer final : public sim::Process {
 public:
  explicit SinkServer(SinkConfig config) : sink_(config) {}

  const Sink& sink() const { return sink_; }

  void on_start(sim::ProcessContext& /*ctx*/) override {}
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from,
                  const sim::Message& message) override;
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override;
  void on_timer(sim::ProcessContext& /*ctx*/, sim::TimerId /*id*/, sim::TimerTag /*tag*/) override {
  }

 private:
  Sink sink_;
};

}  // namespace electsim::servers
