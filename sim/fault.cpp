// The fault catalogue (sim/fault.hpp): every fault kind's keys, effect and meaning in one table.
#include "sim/fault.hpp"

#include <string>
#include <vector>

#include "sim/assert.hpp"

namespace electsim::sim {

namespace {

using K = FaultKind;
using N = FaultNeed;
using E = FaultEffect;
using A = NemesisAim;

// In FaultKind's order. Columns: kind, name, label, target, store_target, duration, keys, effect,
// takes_leader_away, meaning, nodes_obey, nemesis_weight, aim. Election nodes obey every process
// fault (crash, restart, pause, isolate, the clock faults, stop), step_down, a disk stall and
// campaign; which faults a server obeys its kind declares (servers/registry.hpp). The search's
// nemesis draws the faults that model failures (crashes and pauses most often); restart, heal and
// stop only undo or end what it drew, and a person clearing a record is an operator's act, asked
// for by name (--kinds operator_clear=1).
// clang-format off
constexpr FaultKindInfo kCatalogue[] = {
  {K::crash, "crash", "crash", N::required, false, N::optional, {}, E::process, true,
   "the target crashes: volatile state lost; with a duration it restarts after it",
   true, 3, A::process},
  {K::restart, "restart", "restart", N::required, false, N::no, {}, E::process, false,
   "a crashed target comes back with its durable state",
   true, 0, A::node_id},
  {K::pause, "pause", "pause", N::required, false, N::required, {}, E::process, true,
   "a GC or VM stall: nothing runs for the duration, the clock keeps running",
   true, 3, A::process},
  {K::partition, "partition", "partition", N::no, false, N::optional, {"groups"}, E::links, false,
   "endpoints in different groups cannot talk; with a duration it heals after it",
   false, 2, A::none},
  {K::cut, "cut", "cut", N::no, false, N::optional, {"from", "to"}, E::links, false,
   "one way: `from` cannot reach `to`; with a duration it heals after it",
   false, 1, A::none},
  {K::isolate, "isolate", "isolate", N::required, false, N::optional, {}, E::links, true,
   "the target reaches nobody, servers included; with a duration it heals after it",
   true, 1, A::process},
  {K::heal, "heal", "heal", N::no, false, N::no, {}, E::links, false,
   "every partition, cut and isolation ends",
   false, 0, A::none},
  {K::loss, "loss", "loss", N::no, false, N::required, {"probability"}, E::window, false,
   "extra message loss for the duration",
   false, 1, A::none},
  {K::duplicate, "duplicate", "duplicate", N::no, false, N::required, {"probability"}, E::window,
   false, "extra message duplication for the duration",
   false, 1, A::none},
  {K::latency_spike, "latency_spike", "latency spike", N::no, false, N::required, {"extra"},
   E::window, false, "extra latency, drawn per message, for the duration",
   false, 1, A::none},
  {K::clock_offset, "clock_offset", "clock offset", N::required, true, N::no, {"offset"}, E::clock,
   false, "the target's clock jumps to read true time plus the offset",
   true, 1, A::clock},
  {K::clock_drift, "clock_drift", "clock drift", N::required, true, N::no, {"drift_ppm"}, E::clock,
   false, "the target's clock runs at a new rate",
   true, 1, A::clock},
  {K::clock_step, "clock_step", "clock step", N::required, true, N::no, {"by"}, E::clock, false,
   "the target's clock jumps by a signed amount (an NTP step)",
   true, 1, A::clock},
  {K::store_pause, "store_pause", "store pause", N::no, false, N::required, {}, E::server, false,
   "the store stalls for the duration; requests are answered late",
   false, 1, A::none},
  {K::step_down, "step_down", "step down", N::required, false, N::no, {}, E::command, true,
   "the target gives up leadership (a voluntary release)",
   true, 1, A::leader},
  {K::stop, "stop", "stop", N::required, false, N::no, {}, E::command, true,
   "the target releases and shuts down gracefully; restart brings it back",
   true, 0, A::node},
  {K::disk_stall, "disk_stall", "disk stall", N::required, false, N::required, {}, E::process,
   false, "the target's disk finishes no fsync until the duration has passed",
   true, 1, A::member_or_node},
  {K::campaign, "campaign", "campaign", N::required, false, N::no, {}, E::command, false,
   "the target starts an election now, as if its timer had fired (etcd's MsgHup)",
   true, 1, A::node},
  {K::operator_clear, "operator_clear", "operator clear", N::required, true, N::no, {},
   E::command, false,
   "a person clears the leadership record on the target server: \"postgres\" (the flag row set "
   "to NULL, or the lock holder's backend terminated) or \"store\" (the leader key deleted)",
   false, 0, A::record},
};
// clang-format on
static_assert(std::size(kCatalogue) == kFaultKindCount, "one catalogue row per fault kind");

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kCatalogue); ++i) {
    if (static_cast<std::size_t>(kCatalogue[i].kind) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "catalogue rows stand in FaultKind's order");

}  // namespace

const FaultKindInfo& fault_info(FaultKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  ELECTSIM_ASSERT(index < std::size(kCatalogue), "a fault kind of the catalogue");
  return kCatalogue[index];
}

std::span<const FaultKindInfo> fault_catalogue() {
  return kCatalogue;
}

const char* fault_kind_name(FaultKind kind) {
  return static_cast<std::size_t>(kind) < std::size(kCatalogue) ? fault_info(kind).name : "?";
}

}  // namespace electsim::sim
