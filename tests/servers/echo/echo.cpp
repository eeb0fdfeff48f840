// The echo server's kind (echo.hpp) and its one registration.
#include "tests/servers/echo/echo.hpp"

#include <any>
#include <memory>
#include <string>

#include "params/section.hpp"
#include "servers/registry.hpp"

namespace electsim::testing {

namespace {

const servers::ServerForm kEcho{"an echo server",
                                {false, sim::ServerLane::process, kEchoFaults, true}};

// {"copies": N}: how many answers each message gets, 1 to kMaxEchoCopies.
void read_echo_section(const nlohmann::json& v, const servers::SectionContext&,
                       params::Problems& problems, servers::Services& services) {
  if (!params::check_object(v, "/echo", {"copies"}, "the echo section", problems)) return;
  EchoConfig config;
  if (const nlohmann::json* copies = params::member(v, "copies")) {
    const auto n = params::as_unsigned(*copies);
    if (!n || *n < 1 || *n > kMaxEchoCopies) {
      params::add_problem(problems, "/echo/copies",
                          "a whole number of copies from 1 to " + std::to_string(kMaxEchoCopies),
                          params::json_excerpt(*copies));
      return;
    }
    config.copies = static_cast<std::size_t>(*n);
  }
  services.settings["echo"] = config;
}

servers::ServerKindInfo echo_kind() {
  return {"echo",
          "answers every message with itself (a test's server)",
          {kEcho},
          "echo servers",
          "echo servers exist only when the scenario's servers section asks for them",
          [](const servers::Services& services, servers::WorldBuilder& world) {
            const std::size_t count = servers::servers_of(services, "echo");
            const auto it = services.settings.find("echo");
            const EchoConfig config = it == services.settings.end()
                                          ? EchoConfig{}
                                          : std::any_cast<EchoConfig>(it->second);
            for (std::size_t k = 0; k < count; ++k) {
              world.add("echo:" + std::to_string(k), "echo", "echo", kEcho,
                        servers::clock_of(services, "echo", k),
                        [config] { return std::make_unique<EchoServer>(config); });
            }
          },
          "echo",
          read_echo_section,
          [](std::string_view key) {
            return key == "copies" ? std::to_string(EchoConfig{}.copies) : std::string();
          },
          nullptr,  // a protocol that needs echo servers gets one (servers::require_servers)
          // Each keeps a clock of its own (/clocks/echo), as many as the servers section asks.
          "echo server",
          "servers.echo",
          nullptr};
}

[[maybe_unused]] const bool kRegistered = (servers::register_server_kind(echo_kind()), true);

}  // namespace

}  // namespace electsim::testing
