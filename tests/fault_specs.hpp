// Faults for a test world's schedule (WorldConfig::faults) or for Kernel::inject, which sets the
// time itself: the shapes the cluster and drawing tests would otherwise each build by hand.
#pragma once

#include <utility>
#include <vector>

#include "sim/fault.hpp"
#include "sim/time.hpp"

namespace electsim::testing {

// A fault aimed at one node; `lasting` is its duration where the kind has one.
inline sim::FaultSpec node_fault_at(sim::Duration at, sim::FaultKind kind, sim::NodeId node,
                                    sim::Duration lasting = sim::Duration(0)) {
  sim::FaultSpec f;
  f.at = sim::Time(at);
  f.kind = kind;
  f.target = sim::Target{sim::TargetKind::node, node, {}};
  f.duration = lasting;
  return f;
}

// A crash at `at`; with `down_for`, the node restarts after it (durable state kept).
inline sim::FaultSpec crash_at(sim::Duration at, sim::NodeId node,
                               sim::Duration down_for = sim::Duration(0)) {
  return node_fault_at(at, sim::FaultKind::crash, node, down_for);
}

inline sim::FaultSpec step_down_at(sim::Duration at, sim::NodeId node) {
  return node_fault_at(at, sim::FaultKind::step_down, node);
}

// Endpoints in different groups cannot talk; with `lasting`, the partition heals after it.
inline sim::FaultSpec partition_at(sim::Duration at, std::vector<std::vector<sim::Endpoint>> groups,
                                   sim::Duration lasting = sim::Duration(0)) {
  sim::FaultSpec f;
  f.at = sim::Time(at);
  f.kind = sim::FaultKind::partition;
  f.groups = std::move(groups);
  f.duration = lasting;
  return f;
}

}  // namespace electsim::testing
