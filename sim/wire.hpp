// What travels on the simulated network besides the small peer messages of sim/message.hpp: the
// requests and replies that clients exchange with the world's servers (the store's etcd-like
// API of sim/store_types.hpp, the sink's fenced writes). The kernel carries a Payload from one
// process to another and never looks inside; a server that speaks a new request type adds it to
// the variant.
#pragma once

#include <cstdint>
#include <variant>

#include "sim/ids.hpp"
#include "sim/store_types.hpp"

namespace electsim::sim {

// A write to the sink with a fencing token (Kleppmann, "How to do distributed locking", 2016).
struct SinkWrite {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
};

struct SinkReply {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
  bool accepted = false;
  Token highest_accepted = 0;  // after this write
};

using Payload =
    std::variant<std::monostate, StoreRequest, StoreReply, WatchEvent, SinkWrite, SinkReply>;

}  // namespace electsim::sim
