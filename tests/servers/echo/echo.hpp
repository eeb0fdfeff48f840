// A kind of server that lives only in the tests: the echo server answers every peer message with
// the same message. It shows what a new kind of server costs: these two files and the one
// registration in echo.cpp. Through the server registry it gets its addresses, its names in
// traces ("echo:0", "echo:1"), the faults it takes, a lane in the pictures and the search's reach,
// and a scenario declares it with {"servers": {"echo": 2}} and configures it in a section of its
// own, {"echo": {"copies": 2}}. Besides peer messages it answers requests of its own type
// (EchoRequest), which sim/wire.hpp and the kernel never hear of.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/process.hpp"

namespace electsim::testing {

// The echo section's settings.
struct EchoConfig {
  std::size_t copies = 1;  // answers to each message
};
inline constexpr std::size_t kMaxEchoCopies = 16;

// The echo server's own request and answer, carried in a sim::Payload like the built-in servers'.
struct EchoRequest {
  std::int64_t number = 0;
  std::string text;
};
struct EchoReply {
  std::int64_t number = 0;
  std::string text;
  std::size_t copy = 0;  // 0 to copies - 1
};

class EchoServer final : public sim::Process {
 public:
  explicit EchoServer(EchoConfig config = {}) : config_(config) {}
  void on_start(sim::ProcessContext&) override {}
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from, const sim::Message& m) override {
    for (std::size_t i = 0; i < config_.copies; ++i) ctx.send(from, m);
  }
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override {
    const auto* request = payload.get_if<EchoRequest>();
    if (request == nullptr) return;
    for (std::size_t i = 0; i < config_.copies; ++i) {
      ctx.reply(from, from_incarnation, sim::Payload(EchoReply{request->number, request->text, i}));
    }
  }
  void on_timer(sim::ProcessContext&, sim::TimerId, sim::TimerTag) override {}

 private:
  EchoConfig config_;
};

// The faults an echo server takes: every process fault (crash, restart, pause, isolate, stop and
// the clock faults).
inline constexpr sim::FaultSet kEchoFaults = sim::kProcessFaults;

}  // namespace electsim::testing
