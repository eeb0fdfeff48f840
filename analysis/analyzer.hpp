// All observers of DESIGN.md in one: fed every kernel event (live, or read back from a saved
// trace), it keeps only what the metrics need (no whole-trace memory) and produces a Report at
// run_end.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "sim/event.hpp"
#include "sim/topology.hpp"

namespace electsim::analysis {

struct AnalysisConfig {
  std::size_t node_count = 0;
  Duration duration{0};
  std::vector<std::string> message_types;  // names by sim::MessageType
  // The message names that belong to electing a leader (Election, RequestVote, ...), as the
  // protocol's registry entry lists them; the rest (heartbeats) are not election cost.
  std::vector<std::string> election_message_types;
  // Lease-style protocols: leadership lives in this store key; failover ends when another node
  // holds it (the store_change event's node is the holder).
  std::optional<std::string> leader_key;
  bool uses_store = false;        // a partition cutting the leader from the store takes it away
  std::size_t store_members = 1;  // a replicated store's members (1: the single store)
  // The world's servers by name, for the endpoints a partition's groups name.
  sim::Topology topology;
  // The server leadership depends on: kNoNode for the store (its members, by the topology), or
  // one server, such as the database.
  sim::Endpoint coordinator = sim::kNoNode;
  // The leaders' write interval (the workload's); service outages are measured only with one. A
  // gap between accepted writes longer than two intervals is an outage.
  std::optional<Duration> write_interval;
  // False when the protocol's tokens do not grow with each grant (protocols/registry.hpp):
  // staleness and overwrites are then judged by the order in which leadership was granted.
  bool tokens_ordered = true;
};

class Analyzer : public sim::Observer {
 public:
  explicit Analyzer(AnalysisConfig config);
  ~Analyzer() override;
  void on_event(const sim::Event& event) override;
  // Closes open intervals at the last event time (run_end) and returns the report.
  Report finish();

 private:
  struct State;
  struct Fleet;
  // A world of many election groups (a fleet): a State per group, fed its own nodes' events
  // (analysis/analyzer_fleet.cpp).
  void start_fleet(AnalysisConfig config);
  void on_fleet_event(const sim::Event& event);
  Report finish_fleet();

  std::unique_ptr<State> state_;
  std::unique_ptr<Fleet> fleet_;
};

}  // namespace electsim::analysis
