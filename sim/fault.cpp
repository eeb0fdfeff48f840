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

// In FaultKind's order. Columns: kind, name, label, target, store_target, duration, keys, effect,
// takes_leader_away, meaning, obeyed_by, nemesis_weight. Who obeys what, from what each process
// does with it: step_down is handled by election nodes only, campaign by store members too (etcd's
// MsgHup), and stop by any process (the kernel shuts it down once it has released); a disk stall
// delays only processes that reply after a durable write (election nodes and store members; the
// database and Redis reply first and write after); a person clears the record that the single store
// or the database keeps. The search's nemesis draws the faults that model failures (crashes and
// pauses most often); restart, heal and stop only undo or end what it drew, and a person clearing a
// record is an operator's act, asked for by name (--kinds operator_clear=1).
// clang-format off
constexpr FaultKindInfo kCatalogue[] = {
  {K::crash, "crash", "crash", N::required, false, N::optional, {}, E::process, true,
   "the target crashes: volatile state lost; with a duration it restarts after it",
   kAnyProcess, 3},
  {K::restart, "restart", "restart", N::required, false, N::no, {}, E::process, false,
   "a crashed target comes back with its durable state",
   kAnyProcess, 0},
  {K::pause, "pause", "pause", N::required, false, N::required, {}, E::process, true,
   "a GC or VM stall: nothing runs for the duration, the clock keeps running",
   kAnyProcess, 3},
  {K::partition, "partition", "partition", N::no, false, N::optional, {"groups"}, E::links, false,
   "endpoints in different groups cannot talk; with a duration it heals after it",
   0, 2},
  {K::cut, "cut", "cut", N::no, false, N::optional, {"from", "to"}, E::links, false,
   "one way: `from` cannot reach `to`; with a duration it heals after it",
   0, 1},
  {K::isolate, "isolate", "isolate", N::required, false, N::optional, {}, E::links, true,
   "the target reaches nobody, servers included; with a duration it heals after it",
   kAnyProcess, 1},
  {K::heal, "heal", "heal", N::no, false, N::no, {}, E::links, false,
   "every partition, cut and isolation ends",
   0, 0},
  {K::loss, "loss", "loss", N::no, false, N::required, {"probability"}, E::window, false,
   "extra message loss for the duration",
   0, 1},
  {K::duplicate, "duplicate", "duplicate", N::no, false, N::required, {"probability"}, E::window,
   false, "extra message duplication for the duration",
   0, 1},
  {K::latency_spike, "latency_spike", "latency spike", N::no, false, N::required, {"extra"},
   E::window, false, "extra latency, drawn per message, for the duration",
   0, 1},
  {K::clock_offset, "clock_offset", "clock offset", N::required, true, N::no, {"offset"}, E::clock,
   false, "the target's clock jumps to read true time plus the offset",
   kAnyProcess | kSingleStore, 1},
  {K::clock_drift, "clock_drift", "clock drift", N::required, true, N::no, {"drift_ppm"}, E::clock,
   false, "the target's clock runs at a new rate",
   kAnyProcess | kSingleStore, 1},
  {K::clock_step, "clock_step", "clock step", N::required, true, N::no, {"by"}, E::clock, false,
   "the target's clock jumps by a signed amount (an NTP step)",
   kAnyProcess | kSingleStore, 1},
  {K::store_pause, "store_pause", "store pause", N::no, false, N::required, {}, E::server, false,
   "the store stalls for the duration; requests are answered late",
   0, 1},
  {K::step_down, "step_down", "step down", N::required, false, N::no, {}, E::command, true,
   "the target gives up leadership (a voluntary release)",
   kElectionNode, 1},
  {K::stop, "stop", "stop", N::required, false, N::no, {}, E::command, true,
   "the target releases and shuts down gracefully; restart brings it back",
   kAnyProcess, 0},
  {K::disk_stall, "disk_stall", "disk stall", N::required, false, N::required, {}, E::process,
   false, "the target's disk finishes no fsync until the duration has passed",
   kElectionNode | kStoreMember, 1},
  {K::campaign, "campaign", "campaign", N::required, false, N::no, {}, E::command, false,
   "the target starts an election now, as if its timer had fired (etcd's MsgHup)",
   kElectionNode | kStoreMember, 1},
  {K::operator_clear, "operator_clear", "operator clear", N::required, true, N::no, {},
   E::command, false,
   "a person clears the leadership record on the target server: \"postgres\" (the flag row set "
   "to NULL, or the lock holder's backend terminated) or \"store\" (the leader key deleted)",
   kSingleStore | kDatabase, 0},
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

TargetClasses target_class(const Target& target) {
  switch (target.kind) {
    case TargetKind::none:
      return 0;
    case TargetKind::leader:
    case TargetKind::follower:
    case TargetKind::random:
      return kElectionNode;
    case TargetKind::store:
      return kSingleStore;
    case TargetKind::group_leader:
    case TargetKind::group_follower:
      return kStoreMember;
    case TargetKind::node:
      if (target.node >= 0) return kElectionNode;
      if (target.node == kPostgresEndpoint) return kDatabase;
      if (redis_master_of(target.node) >= 0) return kRedisMaster;
      if (store_member_of(target.node) >= 0) return kStoreMember;
      return 0;
  }
  return 0;
}

const char* target_class_name(TargetClasses one_class) {
  switch (one_class) {
    case kElectionNode:
      return "an election node";
    case kSingleStore:
      return "the single store";
    case kStoreMember:
      return "a store member";
    case kRedisMaster:
      return "a Redis master";
    case kDatabase:
      return "the database";
    default:
      return "no target";
  }
}

std::string target_classes_text(TargetClasses set) {
  std::vector<std::string> names;
  for (const TargetClasses c :
       {kElectionNode, kSingleStore, kStoreMember, kRedisMaster, kDatabase}) {
    if ((set & c) != 0) names.emplace_back(target_class_name(c));
  }
  if (names.empty()) return "no target";
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

bool obeys(FaultKind kind, const Target& target) {
  return (fault_info(kind).obeyed_by & target_class(target)) != 0;
}

const char* fault_kind_name(FaultKind kind) {
  return static_cast<std::size_t>(kind) < std::size(kCatalogue) ? fault_info(kind).name : "?";
}

}  // namespace electsim::sim
