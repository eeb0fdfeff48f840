// Messages of the Bully algorithm (Garcia-Molina 1982; the textbook form of Tanenbaum's
// "Distributed Systems") as typed structs in a std::variant, and their encoding into the
// kernel's fixed-size sim::Message. Every message carries one election number: the sender's
// election (Election, and the Answer that echoes it) or the coordinator's epoch (Coordinator,
// Heartbeat).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "protocols/wire.hpp"
#include "sim/ids.hpp"
#include "sim/message.hpp"

namespace electsim::protocols::bully {

// "Are you up?" sent to every higher id when a node holds an election.
struct Election {
  sim::Epoch election_number = 0;
  bool operator==(const Election&) const = default;
};

// A higher node's reply to an Election: it is up and will take over. Echoes the election number.
struct Answer {
  sim::Epoch election_number = 0;
  bool operator==(const Answer&) const = default;
};

// The winner's announcement to every lower id; election_number is its epoch.
struct Coordinator {
  sim::Epoch election_number = 0;
  bool operator==(const Coordinator&) const = default;
};

// The coordinator's periodic sign of life, to every node; followers that miss it hold an election.
struct Heartbeat {
  sim::Epoch election_number = 0;
  bool operator==(const Heartbeat&) const = default;
};

// The alternative index is the wire type: message_type_names() follows this order.
using BullyMessage = std::variant<Election, Answer, Coordinator, Heartbeat>;

inline constexpr std::size_t kMessageTypeCount = std::variant_size_v<BullyMessage>;

// The wire type of each message is its alternative index in BullyMessage.
template <typename T>
constexpr sim::MessageType type_of() {
  return wire_type<T, BullyMessage>();
}

// Names by sim::MessageType, for traces and cost reports.
inline std::vector<std::string> message_type_names() {
  return {"Election", "Answer", "Coordinator", "Heartbeat"};
}

inline sim::Message encode(const BullyMessage& message) {
  sim::Message m;
  m.type = static_cast<sim::MessageType>(message.index());
  m.field[0] = std::visit([](const auto& typed) { return typed.election_number; }, message);
  return m;
}

// nullopt for a type that is not Bully's (the kernel never delivers one; tests may try).
inline std::optional<BullyMessage> decode(const sim::Message& m) {
  const sim::Epoch number = m.field[0];
  switch (m.type) {
    case type_of<Election>():
      return Election{number};
    case type_of<Answer>():
      return Answer{number};
    case type_of<Coordinator>():
      return Coordinator{number};
    case type_of<Heartbeat>():
      return Heartbeat{number};
    default:
      return std::nullopt;
  }
}

}  // namespace electsim::protocols::bully
