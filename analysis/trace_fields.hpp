// What the trace writer (analysis/trace.cpp) and reader (analysis/trace_reader.cpp) share: the
// names and formats of an event's slots, enumerations by name, the message type names as written
// and the traits of servers in headers older than the server registry. Private to analysis/.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/event_schema.hpp"
#include "sim/topology.hpp"

namespace electsim::analysis {

using Slot = sim::Slot;
using Format = sim::FieldFormat;
using Field = sim::EventField;
using sim::kSlotCount;

// Slots a kind does not name are still written (under these names) when they are not at their
// default, so that no field of an event is ever lost.
inline constexpr std::array<const char*, kSlotCount> kGenericNames = {
    "code", "node", "peer", "a", "b", "c", "d", "text"};
inline constexpr std::array<Format, kSlotCount> kGenericFormats = {
    Format::integer, Format::endpoint, Format::endpoint, Format::integer,
    Format::integer, Format::integer,  Format::integer,  Format::text};

// The name of an enumerated value (a role, a fault kind, a store op...) as written, or nullptr for
// a value outside its enumeration or a format that is not an enumeration.
const char* name_of(Format format, std::int64_t v);
// Message type names as written: the protocol's name when it names exactly one type, else
// "type_<n>" (so that the reader maps each name back to one code).
std::vector<std::string> usable_type_names(const std::vector<std::string>& names);
// What the servers of the four kinds that headers before the server registry held were to a
// reader: whether leadership depends on them and where the pictures draw them. Such headers say
// nothing of the faults a server takes, which no reader of a trace needs. A version 1 header
// lists the database and nine Redis masters whether or not its world had them, so they get no
// lane of their own there: its pictures stay as they were drawn.
sim::ServerTraits legacy_traits(std::string_view kind, bool listed = true);

}  // namespace electsim::analysis
