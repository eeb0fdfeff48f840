// The network model: per-message latency from a distribution (with per-link overrides), loss and
// duplication as integer ppm, and link cuts (partitions, one-way cuts, isolation) kept as the
// faults gave them, so that overlapping faults heal independently and memory grows with the
// endpoints, not with the links between them. Endpoints are nodes 0..n-1 and the server addresses
// (sim/ids.hpp): the store's and the sink's at least.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/assert.hpp"
#include "sim/distribution.hpp"
#include "sim/event.hpp"
#include "sim/fault.hpp"
#include "sim/flat_index.hpp"
#include "sim/ids.hpp"
#include "sim/rng.hpp"

namespace electsim::sim {

// What happens to a message already in flight when its link is cut.
enum class InFlightPolicy : std::uint8_t {
  drop_if_cut_on_arrival,  // default: the link is checked again when the message would arrive
  deliver,                 // only the link state at send time matters
};

struct LinkLatency {
  Endpoint from = kNoNode;
  Endpoint to = kNoNode;
  bool both_ways = true;
  Distribution latency;
};

// How traffic on a link behaves: datagrams (each lost, cut, duplicated and delayed on its own) or
// a connection, as TCP is: delivered in order, exactly once, a lost or cut segment sent again.
enum class Transport : std::uint8_t { datagram, tcp };

// TCP's retransmission timing, after Linux: a lost segment is sent again after the retransmission
// timeout, which starts at TCP_RTO_MIN (200ms; on a LAN the smoothed RTT adds next to nothing) and
// doubles with every retransmission up to TCP_RTO_MAX (120s). After net.ipv4.tcp_retries2 (15)
// retransmissions go unanswered the connection is broken (ETIMEDOUT): with the defaults 924.6s
// after the segment was first sent (net/ipv4/tcp_timer.c, tcp_write_timeout and
// retransmits_timed_out).
// A new connection first has to be set up: its SYN is sent again after TCP_TIMEOUT_INIT (1s,
// RFC 6298), doubling, and the attempt fails after net.ipv4.tcp_syn_retries (6) retries, 127s.
// electsim sends the handshake with the connection's first segment.
struct TcpConfig {
  Duration rto_min = std::chrono::milliseconds(200);
  Duration rto_max = std::chrono::seconds(120);
  std::uint32_t retries2 = 15;
  Duration syn_rto = std::chrono::seconds(1);
  std::uint32_t syn_retries = 6;

  // The timeout before retransmission number `attempt` + 1, on an established connection or of a
  // connection's opening segment.
  Duration rto(std::uint32_t attempt, bool established = true) const {
    Duration d = established ? rto_min : syn_rto;
    for (std::uint32_t i = 0; i < attempt && d < rto_max; ++i) d *= 2;
    return d < rto_max ? d : rto_max;
  }
  std::uint32_t retries(bool established = true) const {
    return established ? retries2 : syn_retries;
  }
  // From a segment's first sending to the connection's break, if no retransmission gets through.
  Duration budget(bool established = true) const {
    Duration total{0};
    for (std::uint32_t i = 0; i <= retries(established); ++i) total += rto(i, established);
    return total;
  }
};

struct NetworkConfig {
  Distribution latency = Distribution::constant_of(Duration(1'000'000));
  std::vector<LinkLatency> links;  // later entries win
  Ppm loss = 0;
  Ppm duplicate = 0;
  InFlightPolicy in_flight = InFlightPolicy::drop_if_cut_on_arrival;
  // Between an election node and a server (the store, its members, the sink, the database, a
  // Redis master): clients reach real coordinators over TCP.
  Transport clients = Transport::tcp;
  // Between election nodes (Bully, Ring and Raft messages): datagrams unless a scenario asks.
  Transport peers = Transport::datagram;
  TcpConfig tcp;
};

class Network {
 public:
  // `server_count` server addresses, server_endpoint(0) to server_endpoint(server_count - 1).
  Network(std::size_t node_count, NetworkConfig config, std::size_t server_count = 2);

  // Whether no cut in force cuts the link: only the live cuts are asked, so a network without
  // faults answers at once.
  [[gnu::always_inline]] bool link_up(Endpoint from, Endpoint to) const {
    return live_cuts_.empty() || !cut_by_any(index_of(from), index_of(to));
  }
  // Whether nothing disturbs a message: no cut in force, no loss, no duplication, no per-link
  // latency and no spike. Then a message is never lost or copied and its latency is one draw of
  // the network's distribution (quiet_latency), exactly what the general path draws.
  bool quiet() const { return quiet_; }
  Duration quiet_latency(Rng& rng) const { return latency_.sample(rng); }
  // A message's latency: the link's distribution, plus every latency spike in force.
  Duration sample_latency(Endpoint from, Endpoint to, Rng& rng) const {
    if (latency_of_.size() == 0 && live_spikes_.empty()) return latency_.sample(rng);
    return sample_latency_of_link(from, to, rng);
  }
  // One draw each only when the probability is not zero: a lossless network stays cheap.
  bool draw_loss(Rng& rng) const {
    const Ppm p = config_.loss + extra_loss_;
    return p != 0 && rng.chance(p < kPpmOne ? p : kPpmOne);
  }
  bool draw_duplicate(Rng& rng) const {
    const Ppm p = config_.duplicate + extra_duplicate_;
    return p != 0 && rng.chance(p < kPpmOne ? p : kPpmOne);
  }

  // Link changes. Each returns a handle that heal_one() undoes; heal_all() ends every cut.
  using CutHandle = std::uint32_t;
  CutHandle partition(const std::vector<std::vector<Endpoint>>& groups);
  CutHandle cut(Endpoint from, Endpoint to);
  CutHandle isolate(Endpoint endpoint);
  void heal_one(CutHandle handle);
  void heal_all();

  // Windows of extra loss, duplication and latency (faults with a duration).
  void add_loss(Ppm extra) {
    extra_loss_ += extra;
    refresh_quiet();
  }
  void remove_loss(Ppm extra) {
    extra_loss_ -= extra;
    refresh_quiet();
  }
  void add_duplicate(Ppm extra) {
    extra_duplicate_ += extra;
    refresh_quiet();
  }
  void remove_duplicate(Ppm extra) {
    extra_duplicate_ -= extra;
    refresh_quiet();
  }
  using SpikeHandle = std::uint32_t;
  SpikeHandle add_spike(const Distribution& extra);
  void remove_spike(SpikeHandle handle);

  InFlightPolicy in_flight() const { return config_.in_flight; }
  std::size_t endpoint_count() const { return endpoints_; }

 private:
  std::size_t index_of(Endpoint e) const {
    if (e >= 0) {
      ELECTSIM_ASSERT(static_cast<std::size_t>(e) < nodes_, "endpoint is a known node");
      return static_cast<std::size_t>(e);
    }
    ELECTSIM_ASSERT(is_server_address(e) && nodes_ + server_slot(e) < endpoints_,
                    "endpoint is a node or a server address");
    return nodes_ + server_slot(e);
  }
  // A cut as the fault gave it, so memory grows with the endpoints it names, never with the
  // square of the world: a partition's group per endpoint (-1: in no group, keeps its links),
  // one link, or every link of one endpoint.
  struct Cut {
    enum class Kind : std::uint8_t { partition, link, isolate };
    Kind kind = Kind::link;
    std::size_t from = 0;                // link: its sender; isolate: the endpoint
    std::size_t to = 0;                  // link: its receiver
    std::vector<std::int32_t> group_of;  // partition: by endpoint index
    bool cuts(std::size_t a, std::size_t b) const;
  };
  bool cut_by_any(std::size_t from, std::size_t to) const;
  // quiet_ again, after anything it depends on changed.
  void refresh_quiet() {
    quiet_ = live_cuts_.empty() && config_.loss + extra_loss_ == 0 &&
             config_.duplicate + extra_duplicate_ == 0 && latency_of_.size() == 0 &&
             live_spikes_.empty();
  }
  CutHandle add_cut(Cut cut);
  static std::uint64_t link_key(std::size_t from, std::size_t to) {
    return (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
  }

  std::size_t nodes_;
  std::size_t endpoints_;
  NetworkConfig config_;
  Duration sample_latency_of_link(Endpoint from, Endpoint to, Rng& rng) const;

  PreparedDistribution latency_;      // config_.latency, prepared once
  std::vector<Cut> cuts_;             // by handle
  std::vector<bool> cut_live_;        // by handle
  std::vector<CutHandle> live_cuts_;  // the cuts in force, in handle order
  // Per-link latency overrides (network.links): each entry's distribution prepared, and the
  // entry that decides each link (the last to name it), by link_key.
  std::vector<PreparedDistribution> link_latencies_;
  FlatIndex latency_of_;
  Ppm extra_loss_ = 0;
  Ppm extra_duplicate_ = 0;
  std::vector<Distribution> spikes_;
  std::vector<bool> spike_live_;
  std::vector<SpikeHandle> live_spikes_;  // the spikes in force, in handle order
  bool quiet_ = false;
};

}  // namespace electsim::sim
