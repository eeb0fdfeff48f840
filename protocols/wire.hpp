// What every protocol's messages.hpp shares: a protocol's messages are the alternatives of one
// std::variant, and an alternative's index in it is its wire type (sim/message_codec.hpp).
#pragma once

#include "sim/message_codec.hpp"

namespace electsim::protocols {

using sim::AlternativeIndex;
using sim::pack;
using sim::wire_type;

}  // namespace electsim::protocols
