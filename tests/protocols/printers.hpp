// How Catch2 prints an election node's belief in a failed check: "leader(epoch 3, leader 2)" (the
// epoch is Raft's term where the protocol is Raft).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "sim/protocol.hpp"

namespace Catch {
template <>
struct StringMaker<electsim::sim::Belief> {
  static std::string convert(const electsim::sim::Belief& b) {
    return std::string(electsim::sim::role_name(b.role)) + "(epoch " + std::to_string(b.epoch) +
           ", leader " + std::to_string(b.known_leader) + ")";
  }
};
}  // namespace Catch
