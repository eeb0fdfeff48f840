// The servers every scenario's world has: the store (an etcd-like coordination service) and the
// sink (the fenced database), as processes at their addresses (sim/ids.hpp). This is the one place
// that puts them into a world; the kernel only sees ServerSpecs.
#pragma once

#include "servers/sink/sink.hpp"
#include "servers/store/store.hpp"
#include "sim/kernel.hpp"

namespace electsim::servers {

struct Services {
  StoreConfig store;
  SinkConfig sink;
  sim::ClockConfig store_clock;  // the sink's clock is perfect
};

// Adds the store at kStoreEndpoint and the sink at kSinkEndpoint to `world`.
void add_services(sim::WorldConfig& world, const Services& services);
// `world` with the store and the sink added: for tests and tools that build worlds by hand.
sim::WorldConfig with_services(sim::WorldConfig world, const Services& services = {});

// The state of a running world's store and sink, for white-box tests and inspection.
const Store& store_of(const sim::Kernel& kernel);
const Sink& sink_of(const sim::Kernel& kernel);

}  // namespace electsim::servers
