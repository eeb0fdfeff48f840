// A kind of server that lives only in the tests: the echo server answers every peer message with
// the same message. It shows what a new kind of server costs: these two files and the one
// registration in echo.cpp. Through the server registry it gets its addresses, its names in
// traces ("echo:0", "echo:1"), the faults it takes, a lane in the pictures and the search's reach,
// and a scenario declares it with {"servers": {"echo": 2}}.
#pragma once

#include "sim/process.hpp"

namespace electsim::testing {

class EchoServer final : public sim::Process {
 public:
  void on_start(sim::ProcessContext&) override {}
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from, const sim::Message& m) override {
    ctx.send(from, m);
  }
  void on_payload(sim::ProcessContext&, sim::Endpoint, std::uint32_t, sim::Payload&&) override {}
  void on_timer(sim::ProcessContext&, sim::TimerId, sim::TimerTag) override {}
};

// The faults an echo server takes: every process fault (crash, restart, pause, isolate, stop and
// the clock faults).
inline constexpr sim::FaultSet kEchoFaults = sim::kProcessFaults;

}  // namespace electsim::testing
