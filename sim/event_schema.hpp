// The event schema, written once: for every EventKind, the fields it carries in the order traces
// write them, the Event slot each one reads, how its value is written and what it means. The trace
// writer and reader (analysis/trace.cpp) work from this table, the replay page's fields and the
// typed emitters (sim/events.hpp) are checked against it, and docs/trace-format.md's event table
// is event_table_markdown() (tests/analysis/event_schema_test.cpp fails when any of them differ).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sim/event.hpp"

namespace electsim::sim {

// The places of an Event a field can name.
enum class Slot : std::uint8_t { code, node, peer, a, b, c, d, text };
inline constexpr int kSlotCount = 8;

// How a field's value is written in a trace (docs/trace-format.md, "Value encodings").
enum class FieldFormat : std::uint8_t {
  integer,        // a JSON number
  unsigned_bits,  // an int64 slot holding unsigned bits (the seed), written unsigned
  boolean,        // true/false (a number if the slot holds anything but 0 or 1)
  endpoint,       // node id; "store", "sink", ...; null for none
  role,
  fault,
  store_op,
  drop_reason,
  failover_reason,
  change,      // "put" / "delete"
  clock_what,  // "drift" / "step" / "offset"
  message_type,
  text,
};

struct EventField {
  Slot slot;
  std::string_view name;
  FieldFormat format;
  bool optional = false;       // written only when it differs from the slot's default
  std::string_view meaning{};  // for docs/trace-format.md; empty when the name says it all
};

struct EventKindSchema {
  std::span<const EventField> fields;
  std::string_view note{};  // what the event says, when the kind's name does not
};

const EventKindSchema& event_schema(EventKind kind);

// docs/trace-format.md's table of event kinds: one row per kind, in the order of EventKind (which
// is also the kind's byte in the trace hash).
std::string event_table_markdown();

}  // namespace electsim::sim
