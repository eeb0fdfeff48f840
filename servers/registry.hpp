// The server registry: every kind of server a world can hold, shaped like the protocol registry.
// A kind declares its name, what each of its endpoints is to the rest of electsim (ServerTraits:
// whether leadership depends on it, its lane in the pictures, the fault kinds it takes, whether
// the search may aim at it), how messages call one of them, and how it adds its endpoints to a
// world from the scenario's settings (Services). The kernel, the loader, the analysis, the
// pictures and the search read all of it from here or from the topology it yields; none of them
// names a kind.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "servers/world.hpp"
#include "sim/kernel.hpp"
#include "sim/topology.hpp"

namespace electsim::servers {

// One shape of a kind's endpoints: the store's are the single store or a replicated store's
// members, which take different faults.
struct ServerForm {
  std::string noun;  // as messages call one: "a store member", "the database"
  sim::ServerTraits traits;
};

// Puts servers into a world, handing out their addresses: a built-in kind keeps the slot its
// servers have always had (sim/ids.hpp), any other server takes the next free slot.
class WorldBuilder {
 public:
  explicit WorldBuilder(sim::WorldConfig& world);

  sim::WorldConfig& world() { return world_; }
  // Adds a server and returns its address: `slot` when given (it must be free), else the first
  // free slot from sim::kFirstFreeServerSlot.
  sim::Endpoint add(std::string name, std::string_view kind, std::string group,
                    const ServerForm& form, sim::ClockConfig clock,
                    std::function<std::unique_ptr<sim::Process>()> make,
                    std::optional<std::size_t> slot = std::nullopt);

 private:
  bool taken(std::size_t slot) const;
  void mark(std::size_t slot);
  sim::WorldConfig& world_;
  std::vector<bool> used_;  // by slot: whether a server of the world listens there
  std::size_t next_free_ = sim::kFirstFreeServerSlot;
};

// What a kind's section reader knows of the scenario besides its section.
struct SectionContext {
  std::size_t node_count = 0;
};
// Checks a kind's section and fills `services` from it, each problem at its JSON pointer under
// "/<section>".
using SectionReader =
    std::function<void(const nlohmann::json& section, const SectionContext& context,
                       params::Problems& problems, Services& services)>;

struct ServerKindInfo {
  std::string name;         // its kind in topologies, traces and `electsim list servers`
  std::string description;  // one line
  std::vector<ServerForm> forms;
  // Its indexed servers ("<name>:K") in plural, for messages: "Redis masters are ..."; "" for a
  // kind without them.
  std::string plural;
  // What a scenario is told when it names a server of this kind that its world lacks.
  std::string absent_hint;
  // Adds its servers to the world when `services` asks for them (the loader fills Services from
  // the scenario's sections; tests fill it by hand).
  std::function<void(const Services& services, WorldBuilder& world)> add;
  // The scenario key of the section that configures this kind ("store") and its reader; "" and
  // none for a kind configured by count in `servers` alone. The loader reads every kind's section.
  std::string section;
  SectionReader read;
  // The default of a setting of its section, in the words a reader of the comparison page takes
  // ("2s", "Linux default"); "" for a key its section does not have or a kind without one.
  std::function<std::string(std::string_view key)> setting_default;
  // Puts its servers, with its defaults, into `services` that ask for none: the loader calls it
  // when the running protocol needs the kind (protocols::ProtocolInfo::servers) or the scenario
  // has the kind's section. None for a kind every world has (the store, the sink); a registered
  // kind without it gets one server (require_servers).
  std::function<void(Services& services)> require;
  // For a kind whose servers each keep a clock of their own (the Redis masters): the scenario
  // gives them under /clocks/<name>, by index. How a message calls an index ("master"), the
  // setting that says how many there are ("redis.masters"), and that count as the scenario's
  // sections give it (none: the `servers` count, servers_of). An empty `clock_index`: the
  // kind's servers run on perfect clocks.
  std::string clock_index = {};
  std::string count_setting = {};
  std::function<std::size_t(const Services& services)> count = {};
};

// The most servers of one registered kind a scenario may ask for (Services::more).
inline constexpr std::size_t kMaxServersOfKind = 64;

// Every kind, in the order a world adds them (which fixes the order of its processes).
const std::vector<ServerKindInfo>& all_server_kinds();
const ServerKindInfo* find_server_kind(std::string_view name);
// Registers a kind defined outside this folder (a test's server). Call it before any world is
// built, never while one is (the table is not locked); a second kind of one name is refused.
void register_server_kind(ServerKindInfo kind);
// Whether `name` is one of the built-in kinds, whose servers come from sections of their own
// rather than from counts in `servers`.
bool is_built_in(std::string_view name);
// How many servers of `kind` `services` asks for in Services::more (0 for none).
std::size_t servers_of(const Services& services, std::string_view kind);
// How many servers of `kind` `services` gives: its `count`, or else the `servers` count.
std::size_t count_of(const ServerKindInfo& kind, const Services& services);
// Makes `services` ask for servers of `kind` when it asks for none: the kind's `require`, or one
// server of a registered kind without it. Nothing for an unknown kind.
void require_servers(Services& services, std::string_view kind);

// The noun messages give the server at `e` of `topology` ("a store member"), or "" for a node or
// an address no registered kind's form matches.
std::string server_noun(const sim::Topology& topology, sim::Endpoint e);
// The nouns of every registered form that takes `kind` as a target, in the table's order.
std::vector<std::string> nouns_taking(sim::FaultKind kind);

}  // namespace electsim::servers
