// A cluster of protocol nodes on the real kernel for cluster tests, in the spirit of etcd-io/raft's
// test `network` helper but with the simulator underneath: N nodes of one protocol, every message
// taking exactly one latency; run to a time or until a leader; crash, restart, pause, cut, isolate,
// heal and move clocks at the current time; and a recorder that counts sends by message type and
// keeps every belief change with its true time. Only the kernel's public API is used.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "servers/world.hpp"
#include "sim/kernel.hpp"
#include "tests/fault_specs.hpp"

namespace electsim::testing {

// ---- The recorder ------------------------------------------------------------------------------

// Watches a run: every send with its type, every belief change with its true time.
class ClusterRecorder final : public sim::Observer {
 public:
  struct Send {
    sim::Time at;
    sim::NodeId from = sim::kNoNode;
    sim::Endpoint to = sim::kNoNode;
    sim::MessageType type = 0;
  };
  struct Change {
    sim::Time at;
    sim::NodeId node = sim::kNoNode;
    sim::Belief belief;
    bool operator==(const Change&) const = default;
  };

  void on_event(const sim::Event& e) override {
    if (e.kind == sim::EventKind::msg_send) {
      sends_.push_back(Send{e.time, e.node, e.peer, e.code});
      ++sent_[e.code];
    } else if (e.kind == sim::EventKind::belief) {
      changes_.push_back(
          Change{e.time, e.node,
                 sim::Belief{static_cast<sim::Role>(e.code), e.a, static_cast<sim::NodeId>(e.b)}});
    }
  }

  // Sends of one message type.
  std::uint64_t sent(sim::MessageType type) const {
    const auto it = sent_.find(type);
    return it == sent_.end() ? 0 : it->second;
  }
  // Sends of `first` or any higher type: with a protocol's type count, the sends of types the
  // protocol does not have.
  std::uint64_t sent_from(std::size_t first) const {
    std::uint64_t n = 0;
    for (const auto& [type, count] : sent_) {
      if (type >= first) n += count;
    }
    return n;
  }
  // (from, to) of each send of one type, in the order sent.
  std::vector<std::pair<sim::NodeId, sim::NodeId>> hops(sim::MessageType type) const {
    std::vector<std::pair<sim::NodeId, sim::NodeId>> out;
    for (const Send& s : sends_) {
      if (s.type == type) out.emplace_back(s.from, s.to);
    }
    return out;
  }
  // The last send of any of these types; Time 0 when there was none.
  sim::Time last_send(std::initializer_list<sim::MessageType> types) const {
    for (auto it = sends_.rbegin(); it != sends_.rend(); ++it) {
      if (std::find(types.begin(), types.end(), it->type) != types.end()) return it->at;
    }
    return sim::Time{};
  }
  // The first time `node` announced `belief`.
  std::optional<sim::Time> first(sim::NodeId node, const sim::Belief& belief) const {
    for (const Change& c : changes_) {
      if (c.node == node && c.belief == belief) return c.at;
    }
    return std::nullopt;
  }
  // How many times any node announced that it leads.
  std::uint64_t leader_announcements() const {
    return static_cast<std::uint64_t>(
        std::count_if(changes_.begin(), changes_.end(),
                      [](const Change& c) { return c.belief.role == sim::Role::leader; }));
  }
  const std::vector<Send>& sends() const { return sends_; }
  const std::vector<Change>& changes() const { return changes_; }

 private:
  std::map<sim::MessageType, std::uint64_t> sent_;
  std::vector<Send> sends_;
  std::vector<Change> changes_;
};

// ---- The cluster -------------------------------------------------------------------------------

// What a down node shows in Cluster::beliefs(): a follower of nobody at epoch -1.
inline const sim::Belief kDown = sim::Belief::follower(sim::kNoNode, -1);

struct ClusterSetup {
  std::size_t nodes = 5;
  sim::Duration duration = std::chrono::seconds(60);
  sim::Duration latency = std::chrono::milliseconds(1);  // every message, one way
  std::vector<sim::FaultSpec> faults;                    // the schedule
  std::uint64_t seed = 1;
  // The protocol's number of message types: a send of any other type fails the test at the next
  // run_until. Zero: not checked.
  std::size_t message_types = 0;
};

// The factory of nodes of type Node sharing one Config.
template <typename Node, typename Config>
sim::ProtocolFactory nodes_of(Config config) {
  auto shared = std::make_shared<const Config>(std::move(config));
  return [shared](sim::NodeId) { return std::make_unique<Node>(shared); };
}

// Started on construction: at time 0 every node has started and the schedule is armed.
class Cluster {
 public:
  Cluster(ClusterSetup setup, sim::ProtocolFactory factory) : message_types_(setup.message_types) {
    sim::WorldConfig world;
    world.seed = setup.seed;
    world.node_count = setup.nodes;
    world.duration = setup.duration;
    world.network.latency = sim::Distribution::constant_of(setup.latency);
    world.faults = std::move(setup.faults);
    kernel_ = std::make_unique<sim::Kernel>(electsim::servers::with_services(std::move(world)),
                                            std::move(factory));
    kernel_->add_observer(&recorder_);
    kernel_->start();
  }
  // The kernel holds a pointer to the recorder: a cluster stays where it was built.
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  sim::Kernel& kernel() { return *kernel_; }
  const ClusterRecorder& recorder() const { return recorder_; }
  std::size_t size() const { return kernel_->config().node_count; }
  sim::Time now() const { return kernel_->now(); }

  // ---- Running

  // Processes every event due at or before true time `t`.
  void run_until(sim::Duration t) {
    kernel_->run_until(sim::Time(t));
    if (message_types_ != 0) {
      INFO("sends of a type the protocol does not have");
      REQUIRE(recorder_.sent_from(message_types_) == 0);
    }
  }
  void run_for(sim::Duration d) { run_until(now().since_start() + d); }
  // Runs in steps of `step` until leader() names a node, at most until true time `limit`.
  std::optional<sim::NodeId> run_until_leader(sim::Duration limit,
                                              sim::Duration step = std::chrono::milliseconds(1)) {
    for (;;) {
      if (const auto l = leader()) return l;
      if (now() >= sim::Time(limit)) return std::nullopt;
      run_until(std::min(now().since_start() + step, limit));
    }
  }

  // ---- Reading

  sim::Belief belief(sim::NodeId node) const { return kernel_->belief(node); }
  bool up(sim::NodeId node) const { return kernel_->node_up(node); }
  // Every node's belief, kDown for a node that is down.
  std::vector<sim::Belief> beliefs() const {
    std::vector<sim::Belief> out;
    for (sim::NodeId i = 0; i < static_cast<sim::NodeId>(size()); ++i) {
      out.push_back(up(i) ? belief(i) : kDown);
    }
    return out;
  }
  // The up node that believes it leads at the highest epoch; nullopt when none does, or two do
  // at that epoch (a split brain has no single leader).
  std::optional<sim::NodeId> leader() const {
    std::optional<sim::NodeId> best;
    bool tied = false;
    for (sim::NodeId i = 0; i < static_cast<sim::NodeId>(size()); ++i) {
      if (!up(i) || belief(i).role != sim::Role::leader) continue;
      if (!best || belief(i).epoch > belief(*best).epoch) {
        best = i;
        tied = false;
      } else if (belief(i).epoch == belief(*best).epoch) {
        tied = true;
      }
    }
    if (tied) return std::nullopt;
    return best;
  }

  // ---- The world, changed now

  void crash(sim::NodeId node) { inject_node(sim::FaultKind::crash, node); }
  void restart(sim::NodeId node) { inject_node(sim::FaultKind::restart, node); }
  void step_down(sim::NodeId node) { inject_node(sim::FaultKind::step_down, node); }
  // Nothing runs on the node for `d`; its clock keeps running.
  void pause(sim::NodeId node, sim::Duration d) { inject_node(sim::FaultKind::pause, node, d); }
  // Both directions between a and b, as etcd's network.cut.
  void cut(sim::NodeId a, sim::NodeId b) {
    cut_one_way(a, b);
    cut_one_way(b, a);
  }
  void cut_one_way(sim::Endpoint from, sim::Endpoint to) {
    sim::FaultSpec f;
    f.kind = sim::FaultKind::cut;
    f.from = from;
    f.to = to;
    kernel_->inject(std::move(f));
  }
  // The node reaches nobody, store and sink included, and nobody reaches it.
  void isolate(sim::NodeId node) { inject_node(sim::FaultKind::isolate, node); }
  // Every partition, cut and isolation ends.
  void heal() {
    sim::FaultSpec f;
    f.kind = sim::FaultKind::heal;
    kernel_->inject(std::move(f));
  }
  // The node's clock jumps by `amount` (negative: back).
  void step_clock(sim::NodeId node, sim::Duration amount) {
    sim::FaultSpec f = node_fault_at(sim::Duration(0), sim::FaultKind::clock_step, node);
    f.clock_amount = amount;
    kernel_->inject(std::move(f));
  }
  // The node's clock runs fast (positive) or slow by `drift_ppb` parts per billion from now.
  void skew(sim::NodeId node, std::int64_t drift_ppb) {
    sim::FaultSpec f = node_fault_at(sim::Duration(0), sim::FaultKind::clock_drift, node);
    f.drift_ppb = drift_ppb;
    kernel_->inject(std::move(f));
  }

 private:
  void inject_node(sim::FaultKind kind, sim::NodeId node, sim::Duration d = sim::Duration(0)) {
    kernel_->inject(node_fault_at(sim::Duration(0), kind, node, d));
  }

  std::size_t message_types_;
  ClusterRecorder recorder_;
  std::unique_ptr<sim::Kernel> kernel_;
};

}  // namespace electsim::testing
