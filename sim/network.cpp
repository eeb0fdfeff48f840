// Network model: latency per link, loss and duplication in ppm, and cuts kept as the faults gave
// them, each healed on its own, so that a partition healing does not undo an overlapping one-way
// cut.
#include "sim/network.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace electsim::sim {

Network::Network(std::size_t node_count, NetworkConfig config, std::size_t server_count)
    : nodes_(node_count),
      endpoints_(node_count + server_count),
      config_(std::move(config)),
      latency_(config_.latency) {
  for (const LinkLatency& link : config_.links) link_latencies_.emplace_back(link.latency);
  // Later entries win: taken from the last, the first entry to claim a link keeps it.
  for (std::size_t i = config_.links.size(); i-- > 0;) {
    const LinkLatency& link = config_.links[i];
    const std::size_t from = index_of(link.from);
    const std::size_t to = index_of(link.to);
    latency_of_.try_emplace(link_key(from, to), static_cast<std::uint32_t>(i));
    if (link.both_ways) latency_of_.try_emplace(link_key(to, from), static_cast<std::uint32_t>(i));
  }
  refresh_quiet();
}

Duration Network::sample_latency_of_link(Endpoint from, Endpoint to, Rng& rng) const {
  const PreparedDistribution* d = &latency_;
  if (latency_of_.size() != 0) {
    if (const auto link = latency_of_.find(link_key(index_of(from), index_of(to)))) {
      d = &link_latencies_[*link];
    }
  }
  Duration latency = d->sample(rng);
  // Only the spikes in force, in the order they began: a run's ended spikes cost nothing.
  for (const SpikeHandle live : live_spikes_) latency += spikes_[live].sample(rng);
  return latency;
}

bool Network::Cut::cuts(std::size_t a, std::size_t b) const {
  switch (kind) {
    case Kind::partition:
      return group_of[a] >= 0 && group_of[b] >= 0 && group_of[a] != group_of[b];
    case Kind::link:
      return a == from && b == to;
    case Kind::isolate:
      return a != b && (a == from || b == from);
  }
  return false;
}

bool Network::cut_by_any(std::size_t from, std::size_t to) const {
  for (const CutHandle h : live_cuts_) {
    if (cuts_[h].cuts(from, to)) return true;
  }
  return false;
}

Network::CutHandle Network::add_cut(Cut cut) {
  cuts_.push_back(std::move(cut));
  cut_live_.push_back(true);
  const auto handle = static_cast<CutHandle>(cuts_.size() - 1);
  live_cuts_.push_back(handle);  // the newest handle: the list stays in handle order
  refresh_quiet();
  return handle;
}

Network::CutHandle Network::partition(const std::vector<std::vector<Endpoint>>& groups) {
  Cut cut;
  cut.kind = Cut::Kind::partition;
  cut.group_of.assign(endpoints_, -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const Endpoint e : groups[g]) cut.group_of[index_of(e)] = static_cast<std::int32_t>(g);
  }
  return add_cut(std::move(cut));
}

Network::CutHandle Network::cut(Endpoint from, Endpoint to) {
  Cut cut;
  cut.kind = Cut::Kind::link;
  cut.from = index_of(from);
  cut.to = index_of(to);
  return add_cut(std::move(cut));
}

Network::CutHandle Network::isolate(Endpoint endpoint) {
  Cut cut;
  cut.kind = Cut::Kind::isolate;
  cut.from = index_of(endpoint);
  return add_cut(std::move(cut));
}

void Network::heal_one(CutHandle handle) {
  ELECTSIM_ASSERT(handle < cut_live_.size(), "cut handle is known");
  if (!cut_live_[handle]) return;  // already healed by heal_all
  cut_live_[handle] = false;
  std::erase(live_cuts_, handle);
  std::vector<std::int32_t>().swap(cuts_[handle].group_of);  // a healed cut keeps no memory
  refresh_quiet();
}

void Network::heal_all() {
  for (CutHandle h = 0; h < cut_live_.size(); ++h) heal_one(h);
}

Network::SpikeHandle Network::add_spike(const Distribution& extra) {
  spikes_.push_back(extra);
  spike_live_.push_back(true);
  const auto handle = static_cast<SpikeHandle>(spikes_.size() - 1);
  live_spikes_.push_back(handle);  // the newest handle: the list stays in handle order
  refresh_quiet();
  return handle;
}

void Network::remove_spike(SpikeHandle handle) {
  ELECTSIM_ASSERT(handle < spike_live_.size(), "spike handle is known");
  if (!spike_live_[handle]) return;
  spike_live_[handle] = false;
  std::erase(live_spikes_, handle);
  refresh_quiet();
}

}  // namespace electsim::sim
