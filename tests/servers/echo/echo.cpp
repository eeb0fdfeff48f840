// The echo server's kind (echo.hpp) and its one registration.
#include "tests/servers/echo/echo.hpp"

#include <memory>
#include <string>

#include "servers/registry.hpp"

namespace electsim::testing {

namespace {

const servers::ServerForm kEcho{"an echo server",
                                {false, sim::ServerLane::process, kEchoFaults, true}};

servers::ServerKindInfo echo_kind() {
  return {"echo",
          "answers every message with itself (a test's server)",
          {kEcho},
          "echo servers",
          "echo servers exist only when the scenario's servers section asks for them",
          [](const servers::Services& services, servers::WorldBuilder& world) {
            const std::size_t count = servers::servers_of(services, "echo");
            for (std::size_t k = 0; k < count; ++k) {
              world.add("echo:" + std::to_string(k), "echo", "echo", kEcho, sim::ClockConfig{},
                        [] { return std::make_unique<EchoServer>(); });
            }
          }};
}

[[maybe_unused]] const bool kRegistered = (servers::register_server_kind(echo_kind()), true);

}  // namespace

}  // namespace electsim::testing
