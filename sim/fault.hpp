// Faults: what the kernel can do to the world at a scheduled time. Targets are a node id or a role
// resolved when the fault fires (`leader`, `follower`, `random`), drawing from the faults stream.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/ids.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

enum class FaultKind : std::uint16_t {
  crash,      // volatile state lost; with duration: restarts after it
  restart,    // a crashed node comes back (durable state kept)
  pause,      // GC or VM stall for duration: nothing runs, the clock keeps running
  partition,  // symmetric: endpoints in different groups cannot talk; with duration: heals after
  cut,        // one-way: from cannot reach to; with duration: heals after
  isolate,    // the target can reach nobody, store and sink included; with duration: heals after
  heal,       // every partition, cut and isolation ends
  loss,       // extra message loss probability for duration
  duplicate,  // extra duplication probability for duration
  latency_spike,   // extra latency drawn from a distribution for duration
  clock_offset,    // the target's clock jumps to read true time + offset
  clock_drift,     // the target's clock drift changes
  clock_step,      // the target's clock jumps by a signed amount
  store_pause,     // the store stalls for duration; requests are answered late
  step_down,       // the target is told to give up leadership (voluntary release)
  stop,            // the target releases and shuts down gracefully; restart brings it back
  disk_stall,      // the target's disk finishes no fsync until the duration has passed
  campaign,        // the target starts an election now (etcd's MsgHup)
  operator_clear,  // a person clears the leadership record the target server keeps
};
inline constexpr int kFaultKindCount = 19;
const char* fault_kind_name(FaultKind kind);

// The fault catalogue: one row per kind, read by the loader (which keys a fault takes), the
// analysis (whether it starts a failover), the pictures (labels, windows), the search's nemesis
// (its default weight, how it aims the fault; its keys by their names) and `electsim list faults`.
// Adding a kind is a row here and its effect in the kernel's apply_fault. Only a key of a new name
// also needs its reader (runner/loader_faults.cpp) and its drawer (runner/search.cpp,
// Nemesis::draw_key, which asserts it knows every key of the catalogue).
enum class FaultNeed : std::uint8_t { no, optional, required };
enum class FaultEffect : std::uint8_t {
  process,  // on one process: crash, restart, pause
  command,  // an order the process itself carries out: step down, stop, campaign
  links,    // the network's links: partition, cut, isolate, heal
  window,   // the network's loss, duplication or latency, for a while
  clock,    // a clock's offset, drift or steps
  server,   // a server's own fault: the store's pause
};
// Which targets a fault acts on: election nodes as the catalogue's `nodes_obey` says, a server as
// its own kind declares (ServerTraits::faults, sim/topology.hpp, from the server registry; see
// sim::obeys). A fault aimed at a target that does not obey it would do nothing, so the loader
// refuses it and the search's nemesis never draws it.

// How `electsim search`'s nemesis aims a fault of a kind: runner/search.cpp draws the target by
// this column, each key by its name and a duration where the kind takes one, so a new kind whose
// keys are known is drawn with no edit there.
enum class NemesisAim : std::uint8_t {
  none,            // no target
  process,         // a node (the leader half the time), or one time in four a server it acts on
  leader,          // the current leader
  node,            // the leader, a follower or a node by id
  node_id,         // a node by id
  clock,           // a node by id, or one time in four a server whose clock it moves
  member_or_node,  // half the time a replicated store's member by role, if any; else a node
  record,          // the server that keeps a leadership record (the database's row, else the
                   // single store's leader key), or nothing
};

struct FaultKindInfo {
  FaultKind kind;
  const char* name;   // in scenario files and traces
  const char* label;  // in pictures
  FaultNeed target;
  bool store_target;  // the target may be "store" (its clock)
  FaultNeed duration;
  std::array<const char*, 2> keys;  // kind-specific keys, each required; nullptr: none
  FaultEffect effect;
  bool takes_leader_away;  // when it hits the leader, a failover is measured from it
  const char* meaning;     // one line for `electsim list faults`
  bool nodes_obey;         // it acts on election nodes named as its target
  // How often `electsim search` draws it unless --kinds says otherwise, relative to the others;
  // 0: only when asked for.
  std::uint32_t nemesis_weight;
  NemesisAim aim;  // how the nemesis draws its target
};
const FaultKindInfo& fault_info(FaultKind kind);
std::span<const FaultKindInfo> fault_catalogue();

// node: an election node's id or a server's address. group_leader / group_follower: a member of
// a server group (`store_leader`, `store_follower`) by the roles its members announce.
enum class TargetKind : std::uint8_t {
  none,
  node,
  leader,
  follower,
  random,
  store,  // the store: the single store's address, its member 0's in a replicated one
  group_leader,
  group_follower,
  service_leader,    // a fleet's service: its leader with the newest epoch when the fault fires
  service_follower,  // a fleet's service: one of its live nodes that does not lead
};
struct Target {
  TargetKind kind = TargetKind::none;
  NodeId node = kNoNode;  // kind == node; the service's index for service_leader, service_follower
  std::string group;      // kind == group_leader, group_follower; the service's name
};

struct FaultSpec {
  Time at;
  FaultKind kind = FaultKind::crash;
  Target target;
  Duration duration{0};
  // partition; endpoints in no group keep all links. Groups may name kLeaderMember,
  // kFollowerMember and kRestMember (sim/ids.hpp), resolved when the fault fires; if the leader or
  // a follower cannot be found then, the partition is skipped.
  std::vector<std::vector<Endpoint>> groups;
  Endpoint from = kNoNode;     // cut
  Endpoint to = kNoNode;       // cut
  Ppm probability = 0;         // loss, duplicate
  Distribution extra_latency;  // latency_spike
  Duration clock_amount{0};    // clock_offset, clock_step
  std::int64_t drift_ppb = 0;  // clock_drift
};

}  // namespace electsim::sim
