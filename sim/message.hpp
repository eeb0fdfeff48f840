// A peer-to-peer message as the kernel carries it: a small trivially-copyable record, so that
// sending one never allocates. Each protocol defines its messages as a std::variant of typed
// structs and encodes them into this record (protocols/<name>/messages.hpp); the kernel never looks
// inside.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "sim/ids.hpp"

namespace electsim::sim {

using MessageType = std::uint16_t;

struct Message {
  MessageType type = 0;  // protocol-defined; named by the protocol's message_type_name()
  std::array<std::int64_t, 4> field{};
};
static_assert(std::is_trivially_copyable_v<Message>);

}  // namespace electsim::sim
