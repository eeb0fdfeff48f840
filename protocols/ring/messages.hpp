// Messages of ring election (Chang and Roberts 1979, "An improved algorithm for decentralized
// extrema-finding in circular configurations of processes"), as typed structs in a std::variant,
// and their encoding into the kernel's fixed-size sim::Message. Election and Elected are the
// paper's two messages; Ack (ring healing around crashed successors) and Heartbeat (failure
// detection) are the additions that make the ring usable when nodes fail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "protocols/wire.hpp"
#include "sim/ids.hpp"
#include "sim/message.hpp"

namespace electsim::protocols::ring {

// The sequence number a sender gives each Election and Elected, echoed by the successor's Ack.
using Sequence = std::int64_t;

// Chang-Roberts' election message: the highest id seen so far on its way round the ring.
struct Election {
  sim::NodeId candidate = sim::kNoNode;
  sim::Epoch election_number = 0;
  Sequence sequence = 0;
  bool operator==(const Election&) const = default;
};

// The coordinator lap: the winner's id travels once round the ring.
struct Elected {
  sim::NodeId leader = sim::kNoNode;
  sim::Epoch election_number = 0;
  Sequence sequence = 0;
  bool operator==(const Elected&) const = default;
};

// A successor acknowledges every Election and Elected it receives.
struct Ack {
  Sequence sequence = 0;
  bool operator==(const Ack&) const = default;
};

// The leader tells every node it is alive, every heartbeat_interval.
struct Heartbeat {
  sim::NodeId leader = sim::kNoNode;
  sim::Epoch election_number = 0;
  bool operator==(const Heartbeat&) const = default;
};

// The alternative index is the wire type: the names in message_type_names() follow this order.
using RingMessage = std::variant<Election, Elected, Ack, Heartbeat>;

inline constexpr std::size_t kMessageTypeCount = std::variant_size_v<RingMessage>;

// The wire type of each message is its alternative index in RingMessage.
template <typename T>
constexpr sim::MessageType type_of() {
  return wire_type<T, RingMessage>();
}

// Names by sim::MessageType, for traces and cost reports.
inline std::vector<std::string> message_type_names() {
  return {"Election", "Elected", "Ack", "Heartbeat"};
}

inline sim::Message encode(const RingMessage& message) {
  struct Encoder {
    sim::Message operator()(const Election& m) const {
      return pack<Election, RingMessage>(m.candidate, m.election_number, m.sequence);
    }
    sim::Message operator()(const Elected& m) const {
      return pack<Elected, RingMessage>(m.leader, m.election_number, m.sequence);
    }
    sim::Message operator()(const Ack& m) const { return pack<Ack, RingMessage>(m.sequence); }
    sim::Message operator()(const Heartbeat& m) const {
      return pack<Heartbeat, RingMessage>(m.leader, m.election_number);
    }
  };
  return std::visit(Encoder{}, message);
}

// nullopt for a type that is not the ring's: only a ring peer sends to a ring node, so the caller
// treats that as a broken invariant.
inline std::optional<RingMessage> decode(const sim::Message& m) {
  const auto& f = m.field;
  switch (m.type) {
    case type_of<Election>():
      return Election{static_cast<sim::NodeId>(f[0]), f[1], f[2]};
    case type_of<Elected>():
      return Elected{static_cast<sim::NodeId>(f[0]), f[1], f[2]};
    case type_of<Ack>():
      return Ack{f[0]};
    case type_of<Heartbeat>():
      return Heartbeat{static_cast<sim::NodeId>(f[0]), f[1]};
    default:
      return std::nullopt;
  }
}

}  // namespace electsim::protocols::ring
