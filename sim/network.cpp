// Network model: latency per link, loss and duplication in ppm, and cuts kept as per-link counts so
// that a partition healing does not undo an overlapping one-way cut.
#include "sim/network.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace electsim::sim {

Network::Network(std::size_t node_count, NetworkConfig config, std::size_t server_count)
    : nodes_(node_count), endpoints_(node_count + server_count), config_(std::move(config)) {
  ELECTSIM_ASSERT(server_count <= kMaxServers, "at most kMaxServers server addresses");
  cut_count_.assign(endpoints_ * endpoints_, 0);
  latency_of_.assign(endpoints_ * endpoints_, nullptr);
  for (const LinkLatency& link : config_.links) {
    const std::size_t from = index_of(link.from);
    const std::size_t to = index_of(link.to);
    latency_of_[from * endpoints_ + to] = &link.latency;
    if (link.both_ways) latency_of_[to * endpoints_ + from] = &link.latency;
  }
}

Duration Network::sample_latency(Endpoint from, Endpoint to, Rng& rng) const {
  const Distribution* d = latency_of_[index_of(from) * endpoints_ + index_of(to)];
  Duration latency = (d != nullptr ? *d : config_.latency).sample(rng);
  // Only the spikes in force, in the order they began: a run's ended spikes cost nothing.
  for (const SpikeHandle live : live_spikes_) latency += spikes_[live].sample(rng);
  return latency;
}

void Network::apply(CutHandle handle, int delta) {
  for (std::uint32_t link : cut_links_[handle]) {
    ELECTSIM_ASSERT(delta > 0 || cut_count_[link] > 0, "healing a link that is cut");
    cut_count_[link] = static_cast<std::uint16_t>(cut_count_[link] + delta);
  }
}

Network::CutHandle Network::partition(const std::vector<std::vector<Endpoint>>& groups) {
  std::vector<std::uint32_t> links;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t h = 0; h < groups.size(); ++h) {
      if (g == h) continue;
      for (Endpoint a : groups[g]) {
        for (Endpoint b : groups[h]) {
          links.push_back(static_cast<std::uint32_t>(index_of(a) * endpoints_ + index_of(b)));
        }
      }
    }
  }
  cut_links_.push_back(std::move(links));
  cut_live_.push_back(true);
  const auto handle = static_cast<CutHandle>(cut_links_.size() - 1);
  apply(handle, +1);
  return handle;
}

Network::CutHandle Network::cut(Endpoint from, Endpoint to) {
  cut_links_.push_back({static_cast<std::uint32_t>(index_of(from) * endpoints_ + index_of(to))});
  cut_live_.push_back(true);
  const auto handle = static_cast<CutHandle>(cut_links_.size() - 1);
  apply(handle, +1);
  return handle;
}

Network::CutHandle Network::isolate(Endpoint endpoint) {
  const std::size_t e = index_of(endpoint);
  std::vector<std::uint32_t> links;
  for (std::size_t other = 0; other < endpoints_; ++other) {
    if (other == e) continue;
    links.push_back(static_cast<std::uint32_t>(e * endpoints_ + other));
    links.push_back(static_cast<std::uint32_t>(other * endpoints_ + e));
  }
  cut_links_.push_back(std::move(links));
  cut_live_.push_back(true);
  const auto handle = static_cast<CutHandle>(cut_links_.size() - 1);
  apply(handle, +1);
  return handle;
}

void Network::heal_one(CutHandle handle) {
  ELECTSIM_ASSERT(handle < cut_live_.size(), "cut handle is known");
  if (!cut_live_[handle]) return;  // already healed by heal_all
  cut_live_[handle] = false;
  apply(handle, -1);
}

void Network::heal_all() {
  for (CutHandle h = 0; h < cut_live_.size(); ++h) heal_one(h);
}

Network::SpikeHandle Network::add_spike(const Distribution& extra) {
  spikes_.push_back(extra);
  spike_live_.push_back(true);
  const auto handle = static_cast<SpikeHandle>(spikes_.size() - 1);
  live_spikes_.push_back(handle);  // the newest handle: the list stays in handle order
  return handle;
}

void Network::remove_spike(SpikeHandle handle) {
  ELECTSIM_ASSERT(handle < spike_live_.size(), "spike handle is known");
  if (!spike_live_[handle]) return;
  spike_live_[handle] = false;
  std::erase(live_spikes_, handle);
}

}  // namespace electsim::sim
