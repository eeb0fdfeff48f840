// Network model: cuts as counts (partition, one-way cut, isolation, heal), latency overrides, loss,
// duplication and latency spikes.
#include <catch2/catch.hpp>

#include <optional>

#include "sim/network.hpp"

using namespace electsim::sim;

namespace {
NetworkConfig constant_latency(Duration d) {
  NetworkConfig c;
  c.latency = Distribution::constant_of(d);
  return c;
}
}  // namespace

TEST_CASE("network: a partition cuts links between groups both ways and keeps links inside") {
  Network net(5, constant_latency(1ms));
  const auto h = net.partition({{0, 1}, {2, 3, kStoreEndpoint}});
  CHECK_FALSE(net.link_up(0, 2));
  CHECK_FALSE(net.link_up(3, 1));
  CHECK_FALSE(net.link_up(0, kStoreEndpoint));
  CHECK(net.link_up(2, kStoreEndpoint));
  CHECK(net.link_up(0, 1));
  CHECK(net.link_up(2, 3));
  // Node 4 is in no group: it keeps every link.
  CHECK(net.link_up(4, 0));
  CHECK(net.link_up(2, 4));
  net.heal_one(h);
  CHECK(net.link_up(0, 2));
  CHECK(net.link_up(0, kStoreEndpoint));
}

TEST_CASE("network: a one-way cut blocks only its direction") {
  Network net(3, constant_latency(1ms));
  net.cut(0, 1);
  CHECK_FALSE(net.link_up(0, 1));
  CHECK(net.link_up(1, 0));
}

TEST_CASE("network: isolating a node cuts it from everyone, store and sink included") {
  Network net(3, constant_latency(1ms));
  net.isolate(1);
  for (Endpoint other : {0, 2, kStoreEndpoint, kSinkEndpoint}) {
    CHECK_FALSE(net.link_up(1, other));
    CHECK_FALSE(net.link_up(other, 1));
  }
  CHECK(net.link_up(0, 2));
  CHECK(net.link_up(0, kStoreEndpoint));
}

TEST_CASE("network: overlapping cuts heal independently, heal_all ends them all") {
  Network net(3, constant_latency(1ms));
  const auto p = net.partition({{0}, {1, 2}});
  const auto c = net.cut(0, 1);
  net.heal_one(p);
  CHECK_FALSE(net.link_up(0, 1));  // the one-way cut still holds
  CHECK(net.link_up(1, 0));
  net.heal_one(c);
  CHECK(net.link_up(0, 1));
  net.partition({{0}, {1}});
  net.isolate(2);
  net.heal_all();
  CHECK(net.link_up(0, 1));
  CHECK(net.link_up(2, 0));
  net.heal_one(c);  // healing twice is harmless
  CHECK(net.link_up(0, 1));
}

TEST_CASE("network: per-link latency overrides the default, one way or both") {
  NetworkConfig config = constant_latency(1ms);
  config.links.push_back({0, 1, true, Distribution::constant_of(7ms)});
  config.links.push_back({2, kStoreEndpoint, false, Distribution::constant_of(30ms)});
  Network net(3, config);
  Rng rng(1, StreamPurpose::network, 0);
  CHECK(net.sample_latency(0, 1, rng) == 7ms);
  CHECK(net.sample_latency(1, 0, rng) == 7ms);
  CHECK(net.sample_latency(2, kStoreEndpoint, rng) == 30ms);
  CHECK(net.sample_latency(kStoreEndpoint, 2, rng) == 1ms);
  CHECK(net.sample_latency(0, 2, rng) == 1ms);
}

TEST_CASE("network: of two entries for one link the later decides, in the direction it names") {
  NetworkConfig config = constant_latency(1ms);
  config.links.push_back({0, 1, true, Distribution::constant_of(7ms)});
  config.links.push_back({0, 1, false, Distribution::constant_of(9ms)});
  config.links.push_back({2, 0, true, Distribution::constant_of(4ms)});
  config.links.push_back({0, 2, true, Distribution::constant_of(5ms)});
  // A copy draws the same after its original is gone: overrides are not pointers into it.
  std::optional<Network> original;
  original.emplace(3, config);
  const Network net = *original;
  original.reset();
  Rng rng(1, StreamPurpose::network, 0);
  CHECK(net.sample_latency(0, 1, rng) == 9ms);
  CHECK(net.sample_latency(1, 0, rng) == 7ms);
  CHECK(net.sample_latency(0, 2, rng) == 5ms);
  CHECK(net.sample_latency(2, 0, rng) == 5ms);
}

TEST_CASE("network: loss and duplication windows add to the configured probability") {
  NetworkConfig config = constant_latency(1ms);
  config.loss = 0;
  Network net(2, config);
  Rng rng(3, StreamPurpose::network, 0);
  int lost = 0;
  for (int i = 0; i < 1000; ++i) lost += net.draw_loss(rng) ? 1 : 0;
  CHECK(lost == 0);
  net.add_loss(kPpmOne);
  lost = 0;
  for (int i = 0; i < 1000; ++i) lost += net.draw_loss(rng) ? 1 : 0;
  CHECK(lost == 1000);
  net.remove_loss(kPpmOne);
  net.add_duplicate(500'000);
  int dup = 0;
  for (int i = 0; i < 10'000; ++i) dup += net.draw_duplicate(rng) ? 1 : 0;
  CHECK(dup > 4'500);
  CHECK(dup < 5'500);
}

TEST_CASE("network: a latency spike adds its draw while it lasts") {
  Network net(2, constant_latency(2ms));
  Rng rng(5, StreamPurpose::network, 0);
  const auto s = net.add_spike(Distribution::constant_of(100ms));
  CHECK(net.sample_latency(0, 1, rng) == 102ms);
  net.remove_spike(s);
  CHECK(net.sample_latency(0, 1, rng) == 2ms);
}

TEST_CASE("network: it is quiet only while nothing can lose, cut, copy or delay a message") {
  // The kernel's common path trusts quiet(): every fault that can disturb a message must end it,
  // and its end must bring it back once no other disturbance is left.
  Network net(3, constant_latency(1ms));
  CHECK(net.quiet());
  const auto cut = net.cut(0, 1);
  CHECK_FALSE(net.quiet());
  const auto part = net.partition({{0}, {1, 2}});
  net.heal_one(cut);
  CHECK_FALSE(net.quiet());  // the partition is still in force
  net.heal_one(part);
  CHECK(net.quiet());
  net.isolate(2);
  CHECK_FALSE(net.quiet());
  net.heal_all();
  CHECK(net.quiet());
  net.add_loss(10);
  CHECK_FALSE(net.quiet());
  net.remove_loss(10);
  CHECK(net.quiet());
  net.add_duplicate(10);
  CHECK_FALSE(net.quiet());
  net.remove_duplicate(10);
  CHECK(net.quiet());
  const auto spike = net.add_spike(Distribution::constant_of(5ms));
  CHECK_FALSE(net.quiet());
  net.remove_spike(spike);
  CHECK(net.quiet());

  // What the configuration itself disturbs never lets it be quiet.
  NetworkConfig lossy = constant_latency(1ms);
  lossy.loss = 1;
  CHECK_FALSE(Network(2, lossy).quiet());
  NetworkConfig copying = constant_latency(1ms);
  copying.duplicate = 1;
  CHECK_FALSE(Network(2, copying).quiet());
  NetworkConfig linked = constant_latency(1ms);
  linked.links.push_back(LinkLatency{0, 1, true, Distribution::constant_of(3ms)});
  CHECK_FALSE(Network(2, linked).quiet());
}
