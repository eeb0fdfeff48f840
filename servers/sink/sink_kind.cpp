// The sink as a kind of server (servers/registry.hpp): the protected database every world has.
#include <memory>
#include <string>

#include "params/section.hpp"
#include "servers/registry.hpp"
#include "servers/sink/sink_server.hpp"

namespace electsim::servers {

namespace {

// The protected database is what harm is measured at, not a coordinator, and no fault names it
// as its target (links faults still cut it off).
const ServerForm kSink{"the sink", {false, sim::ServerLane::sink, 0, false}};

// {"fencing": false} runs the sink without fencing whatever the protocol asks for.
void read_sink_section(const nlohmann::json& v, const SectionContext&, params::Problems& problems,
                       Services& services) {
  if (!params::check_object(v, "/sink", {"fencing"}, "the sink section", problems)) return;
  if (const nlohmann::json* fencing = params::member(v, "fencing")) {
    services.sink_fencing = params::read_bool(*fencing, "/sink/fencing", problems);
  }
}

}  // namespace

ServerKindInfo sink_kind() {
  return {std::string(sim::server_kind::sink),
          "the fenced sink: the protected database that rejects stale tokens",
          {kSink},
          "",
          "",
          [](const Services& services, WorldBuilder& builder) {
            builder.world().node_servers.sink = builder.add(
                "sink", sim::server_kind::sink, "", kSink, sim::ClockConfig{},
                [config = services.sink] { return std::make_unique<SinkServer>(config); },
                sim::server_slot(sim::kSinkEndpoint));
          },
          "sink",
          read_sink_section,
          [](std::string_view key) -> std::string {
            // Without a sink section the sink fences as the protocol's own `fencing` says.
            return key == "fencing" ? "the protocol's fencing" : "";
          },
          nullptr};  // every world has the sink
}

}  // namespace electsim::servers
