// JSON Lines traces (docs/trace-format.md): a header line, then one object per kernel event with
// named, kind-specific fields. Lines are formatted by hand with fmt (no JSON library per event);
// every field of an Event survives the round trip, so a trace read back replays into the same
// Report and the same hash. The file is written under a temporary name and renamed when whole.
#include "analysis/trace.hpp"
#include "analysis/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>

#include "io/input.hpp"
#include "sim/assert.hpp"
#include "sim/event_schema.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"
#include "sim/wire.hpp"

namespace electsim::analysis {

namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

// ---- The schema (sim/event_schema.hpp): which Event slot each kind names, and how its value is
// written.

using Slot = sim::Slot;
using Format = sim::FieldFormat;
using Field = sim::EventField;
using sim::kSlotCount;

// Slots a kind does not name are still written (under these names) when they are not at their
// default, so that no field of an event is ever lost.
constexpr std::array<const char*, kSlotCount> kGenericNames = {"code", "node", "peer", "a",
                                                               "b",    "c",    "d",    "text"};
constexpr std::array<Format, kSlotCount> kGenericFormats = {
    Format::integer, Format::endpoint, Format::endpoint, Format::integer,
    Format::integer, Format::integer,  Format::integer,  Format::text};

std::int64_t slot_value(const sim::Event& e, Slot slot) {
  switch (slot) {
    case Slot::code:
      return e.code;
    case Slot::node:
      return e.node;
    case Slot::peer:
      return e.peer;
    case Slot::a:
      return e.a;
    case Slot::b:
      return e.b;
    case Slot::c:
      return e.c;
    case Slot::d:
      return e.d;
    case Slot::text:
      return 0;
  }
  return 0;
}

bool slot_is_default(const sim::Event& e, Slot slot) {
  switch (slot) {
    case Slot::node:
      return e.node == sim::kNoNode;
    case Slot::peer:
      return e.peer == sim::kNoNode;
    case Slot::text:
      return e.text.empty();
    default:
      return slot_value(e, slot) == 0;
  }
}

// Enumerations written by name; a value outside the enumeration is written as its number.
template <typename Enum>
const char* enum_name(std::int64_t value, int count, const char* (*name)(Enum)) {
  if (value < 0 || value >= count) return nullptr;
  return name(static_cast<Enum>(value));
}

const char* change_name(std::int64_t v) {
  return v == 0 ? "put" : v == 1 ? "delete" : nullptr;
}
const char* clock_what_name(std::int64_t v) {
  return v == 0 ? "drift" : v == 1 ? "step" : v == 2 ? "offset" : nullptr;
}

const char* name_of(Format format, std::int64_t v) {
  switch (format) {
    case Format::role:
      return enum_name<sim::Role>(v, 3, sim::role_name);
    case Format::fault:
      return enum_name<sim::FaultKind>(v, sim::kFaultKindCount, sim::fault_kind_name);
    case Format::store_op:
      return enum_name<sim::StoreOp>(v, sim::kStoreOpCount, sim::store_op_name);
    case Format::drop_reason:
      return enum_name<sim::DropReason>(v, 5, sim::drop_reason_name);
    case Format::failover_reason:
      return enum_name<sim::FailoverReason>(v, 3, sim::failover_reason_name);
    case Format::change:
      return change_name(v);
    case Format::clock_what:
      return clock_what_name(v);
    default:
      return nullptr;
  }
}

// Message type names as written: the protocol's name when it names exactly one type, else
// "type_<n>" (so that the reader maps each name back to one code).
std::vector<std::string> usable_type_names(const std::vector<std::string>& names) {
  std::vector<std::string> out(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool unique = !names[i].empty() && std::count(names.begin(), names.end(), names[i]) == 1;
    const bool looks_generic = names[i].rfind("type_", 0) == 0;
    if (unique && !looks_generic) out[i] = names[i];
  }
  return out;
}

void append_value(std::string& out, const sim::Event& e, Slot slot, Format format,
                  const std::vector<std::string>& type_names, const sim::Topology& topology) {
  if (slot == Slot::text) {
    append_json_string(out, e.text);
    return;
  }
  const std::int64_t v = slot_value(e, slot);
  auto it = std::back_inserter(out);
  switch (format) {
    case Format::integer:
      fmt::format_to(it, "{}", v);
      return;
    case Format::unsigned_bits:
      fmt::format_to(it, "{}", static_cast<std::uint64_t>(v));
      return;
    case Format::boolean:
      if (v == 0 || v == 1) {
        out += v == 1 ? "true" : "false";
      } else {
        fmt::format_to(it, "{}", v);
      }
      return;
    case Format::endpoint:
      if (v == sim::kNoNode) {
        out += "null";
      } else if (const sim::NamedEndpoint* server =
                     v < 0 && v >= INT32_MIN ? topology.server(static_cast<sim::Endpoint>(v))
                                             : nullptr) {
        // Servers by the names the world gave them (the header's topology).
        out += '"';
        out += server->name;
        out += '"';
      } else {
        fmt::format_to(it, "{}", v);
      }
      return;
    case Format::message_type:
      if (v >= 0 && static_cast<std::size_t>(v) < type_names.size() &&
          !type_names[static_cast<std::size_t>(v)].empty()) {
        append_json_string(out, type_names[static_cast<std::size_t>(v)]);
      } else {
        fmt::format_to(it, "\"type_{}\"", v);
      }
      return;
    case Format::text:
      return;
    default:
      if (const char* name = name_of(format, v)) {
        out += '"';
        out += name;
        out += '"';
      } else {
        fmt::format_to(it, "{}", v);
      }
      return;
  }
}

void append_event(std::string& out, const sim::Event& e, const std::vector<std::string>& type_names,
                  const sim::Topology& topology) {
  ELECTSIM_ASSERT(static_cast<int>(e.kind) < sim::kEventKindCount, "events have a known kind");
  fmt::format_to(std::back_inserter(out), "{{\"t\":{},\"ev\":\"{}\"", e.time.ns,
                 sim::event_kind_name(e.kind));
  std::array<bool, kSlotCount> named{};
  for (const Field& f : sim::event_schema(e.kind).fields) {
    named[static_cast<std::size_t>(f.slot)] = true;
    if (f.optional && slot_is_default(e, f.slot)) continue;
    out += ",\"";
    out += f.name;
    out += "\":";
    append_value(out, e, f.slot, f.format, type_names, topology);
  }
  for (int s = 0; s < kSlotCount; ++s) {
    const auto slot = static_cast<Slot>(s);
    if (named[static_cast<std::size_t>(s)] || slot_is_default(e, slot)) continue;
    out += ",\"";
    out += kGenericNames[static_cast<std::size_t>(s)];
    out += "\":";
    append_value(out, e, slot, kGenericFormats[static_cast<std::size_t>(s)], type_names, topology);
  }
  out += '}';
}

nlohmann::json header_json(const TraceHeader& h) {
  nlohmann::json j = nlohmann::json::object();
  j["electsim_trace"] = h.schema_version;
  j["scenario"] = h.scenario;
  j["variant"] = h.variant;
  j["protocol"] = h.protocol;
  j["seed"] = h.seed;
  j["nodes"] = h.node_count;
  j["duration_ns"] = h.duration.count();
  j["message_types"] = h.message_types;
  if (!h.election_message_types.empty()) j["election_message_types"] = h.election_message_types;
  j["leader_key"] = h.leader_key ? nlohmann::json(*h.leader_key) : nlohmann::json(nullptr);
  j["uses_store"] = h.uses_store;
  if (h.coordinator == sim::kPostgresEndpoint) j["coordinator"] = "postgres";
  if (h.write_interval) j["write_interval_ns"] = h.write_interval->count();
  if (!h.tokens_ordered) j["tokens_ordered"] = false;
  nlohmann::json endpoints = nlohmann::json::array();
  for (const sim::NamedEndpoint& s : h.topology.servers()) {
    nlohmann::json faults = nlohmann::json::array();
    for (const sim::FaultKindInfo& f : sim::fault_catalogue()) {
      if ((s.traits.faults & sim::fault_bit(f.kind)) != 0) faults.push_back(f.name);
    }
    endpoints.push_back({{"address", s.address},
                         {"name", s.name},
                         {"kind", s.kind},
                         {"group", s.group},
                         {"coordinator", s.traits.coordinator},
                         {"lane", sim::server_lane_name(s.traits.lane)},
                         {"faults", std::move(faults)},
                         {"nemesis", s.traits.nemesis}});
  }
  j["endpoints"] = std::move(endpoints);
  nlohmann::json groups = nlohmann::json::array();
  for (const sim::ElectionGroup& g : h.topology.groups()) {
    // Nodes as rising runs, each a pair first, last ([0, 4, 7, 7]: nodes 0 to 4, and 7), so a
    // group of many nodes stays short and the header shallow.
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t i = 0; i < g.nodes.size();) {
      std::size_t k = i;
      while (k + 1 < g.nodes.size() && g.nodes[k + 1] == g.nodes[k] + 1) ++k;
      runs.push_back(g.nodes[i]);
      runs.push_back(g.nodes[k]);
      i = k + 1;
    }
    groups.push_back({{"name", g.name},
                      {"protocol", g.protocol},
                      {"nodes", std::move(runs)},
                      {"key", g.key ? nlohmann::json(*g.key) : nlohmann::json(nullptr)}});
  }
  j["groups"] = std::move(groups);
  return j;
}

void put_le(std::uint8_t*& p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) *p++ = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

// ---- Header

namespace {

// What the servers of the four kinds that headers before the server registry held were to a
// reader: whether leadership depends on them and where the pictures draw them. Such headers say
// nothing of the faults a server takes, which no reader of a trace needs. A version 1 header
// lists the database and nine Redis masters whether or not its world had them, so they get no
// lane of their own there: its pictures stay as they were drawn.
sim::ServerTraits legacy_traits(std::string_view kind, bool listed = true) {
  namespace k = sim::server_kind;
  if (kind == k::sink) return {false, sim::ServerLane::sink, 0, false};
  if (kind == k::store) return {true, sim::ServerLane::store, 0, false};
  return {true, listed ? sim::ServerLane::process : sim::ServerLane::none, 0, false};
}

}  // namespace

sim::Topology legacy_topology(std::size_t node_count, std::size_t store_members) {
  namespace kind = sim::server_kind;
  std::vector<sim::NamedEndpoint> servers;
  for (std::size_t k = 0; k < std::max<std::size_t>(store_members, 1); ++k) {
    servers.push_back({sim::store_member_endpoint(k), k == 0 ? "store" : fmt::format("store:{}", k),
                       std::string(kind::store), "store", legacy_traits(kind::store)});
  }
  servers.push_back(
      {sim::kSinkEndpoint, "sink", std::string(kind::sink), "", legacy_traits(kind::sink)});
  servers.push_back({sim::kPostgresEndpoint, "postgres", std::string(kind::postgres), "",
                     legacy_traits(kind::postgres, false)});
  for (std::size_t k = 0; k < sim::kMaxRedisMasters; ++k) {
    servers.push_back({sim::redis_endpoint(k), fmt::format("redis:{}", k), std::string(kind::redis),
                       "redis", legacy_traits(kind::redis, false)});
  }
  return sim::Topology(node_count, std::move(servers),
                       {sim::election_group(node_count, "", std::nullopt)});
}

AnalysisConfig TraceHeader::analysis_config() const {
  AnalysisConfig config;
  config.node_count = node_count;
  config.duration = duration;
  config.message_types = message_types;
  config.election_message_types = election_message_types;
  config.leader_key = leader_key;
  config.uses_store = uses_store;
  config.store_members = store_members;
  config.topology = topology;
  config.coordinator = coordinator;
  config.write_interval = write_interval;
  config.tokens_ordered = tokens_ordered;
  return config;
}

// ---- Hasher

void TraceHasher::on_event(const sim::Event& e) {
  ++events_;
  std::array<std::uint8_t, 55> fixed{};
  std::uint8_t* p = fixed.data();
  put_le(p, static_cast<std::uint64_t>(e.time.ns), 8);
  put_le(p, static_cast<std::uint64_t>(e.kind), 1);
  put_le(p, e.code, 2);
  put_le(p, static_cast<std::uint32_t>(e.node), 4);
  put_le(p, static_cast<std::uint32_t>(e.peer), 4);
  put_le(p, static_cast<std::uint64_t>(e.a), 8);
  put_le(p, static_cast<std::uint64_t>(e.b), 8);
  put_le(p, static_cast<std::uint64_t>(e.c), 8);
  put_le(p, static_cast<std::uint64_t>(e.d), 8);
  put_le(p, static_cast<std::uint32_t>(e.text.size()), 4);
  ELECTSIM_ASSERT(p == fixed.data() + fixed.size(), "the hash layout fills its buffer");
  constexpr std::uint64_t kPrime = 0x100000001b3ull;
  std::uint64_t h = hash_;
  for (const std::uint8_t byte : fixed) h = (h ^ byte) * kPrime;
  for (const char ch : e.text) h = (h ^ static_cast<std::uint8_t>(ch)) * kPrime;
  hash_ = h;
}

std::string TraceHasher::hex() const {
  return fmt::format("{:016x}", hash_);
}

// ---- Writer

TraceWriter::TraceWriter(std::string path, const TraceHeader& header, std::uint64_t max_bytes)
    : path_(std::move(path)),
      file_(std::make_unique<io::TempFile>(path_)),
      max_bytes_(max_bytes),
      type_names_(usable_type_names(header.message_types)),
      topology_(header.topology) {
  if (file_->file() == nullptr) {
    error_ = fmt::format("cannot write trace: {}", file_->error());
    file_.reset();
    return;
  }
  buffer_.reserve(kFlushBytes + 4096);
  buffer_ = header_json(header).dump();
  buffer_ += '\n';
  if (buffer_.size() > max_bytes_) {
    buffer_.clear();
    fail(fmt::format("trace larger than the limit of {} bytes; not written", max_bytes_));
    return;
  }
  bytes_ = buffer_.size();
}

TraceWriter::~TraceWriter() = default;  // an uncommitted TempFile removes itself

void TraceWriter::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
  buffer_.clear();
  file_.reset();
}

void TraceWriter::flush_buffer() {
  if (!file_ || buffer_.empty()) return;
  const std::size_t written = std::fwrite(buffer_.data(), 1, buffer_.size(), file_->file());
  if (written != buffer_.size()) {
    fail(fmt::format("cannot write trace {}: {}", path_, std::strerror(errno)));
    return;
  }
  buffer_.clear();
}

void TraceWriter::on_event(const sim::Event& event) {
  if (!file_ || closed_) return;
  const std::size_t before = buffer_.size();
  append_event(buffer_, event, type_names_, topology_);
  buffer_ += '\n';
  const std::uint64_t line = buffer_.size() - before;
  if (bytes_ + line > max_bytes_) {
    fail(fmt::format("trace larger than the limit of {} bytes; not written", max_bytes_));
    return;
  }
  bytes_ += line;
  if (buffer_.size() >= kFlushBytes) flush_buffer();
}

bool TraceWriter::close() {
  if (closed_) return ok();
  std::unique_ptr<io::TempFile> staged = close_staged();
  if (!staged) return false;
  if (!staged->commit()) {
    error_ = staged->error();
    return false;
  }
  return true;
}

std::unique_ptr<io::TempFile> TraceWriter::close_staged() {
  if (closed_) return nullptr;
  closed_ = true;
  if (!file_) return nullptr;
  flush_buffer();
  if (!file_) return nullptr;
  if (!file_->finish()) {
    error_ = file_->error();
    file_.reset();
    return nullptr;
  }
  return std::move(file_);
}

std::string format_trace_event(const sim::Event& event, const TraceHeader& header) {
  std::string out;
  append_event(out, event, usable_type_names(header.message_types), header.topology);
  return out;
}

// ---- Reader

// The largest trace read back: the most a run may write (runner's ceiling on limits.trace_bytes).
constexpr std::uint64_t kMaxTraceBytes = 64ull << 30;

namespace {

struct FieldRef {
  Slot slot;
  Format format;
};

class LineDecoder {
 public:
  explicit LineDecoder(const TraceHeader& header) : topology_(header.topology) {
    const std::vector<std::string> names = usable_type_names(header.message_types);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!names[i].empty()) type_codes_[names[i]] = static_cast<std::int64_t>(i);
    }
    for (int k = 0; k < sim::kEventKindCount; ++k) {
      kinds_[sim::event_kind_name(static_cast<sim::EventKind>(k))] = static_cast<sim::EventKind>(k);
    }
  }

  // Fills `event` (and `text`, which event.text then views) from one line; "" or what is wrong.
  std::string decode(const nlohmann::json& j, sim::Event& event, std::string& text) const {
    if (!j.is_object()) return "expected a JSON object";
    const auto t = j.find("t");
    const auto ev = j.find("ev");
    if (t == j.end() || ev == j.end()) return "expected fields \"t\" and \"ev\"";
    std::int64_t time = 0;
    if (!as_int64(*t, time) || time < 0) return "\"t\" must be a non-negative integer (ns)";
    if (!ev->is_string()) return "\"ev\" must be an event kind name";
    const auto kind = kinds_.find(ev->get<std::string>());
    if (kind == kinds_.end())
      return fmt::format("unknown event kind \"{}\"", ev->get<std::string>());
    event = sim::Event{};
    event.time = sim::Time(time);
    event.kind = kind->second;
    text.clear();
    const sim::EventKindSchema& ks = sim::event_schema(event.kind);
    for (const auto& [key, value] : j.items()) {
      if (key == "t" || key == "ev") continue;
      std::optional<FieldRef> ref;
      for (const Field& f : ks.fields) {
        if (key == f.name) ref = FieldRef{f.slot, f.format};
      }
      if (!ref) {
        for (int s = 0; s < kSlotCount; ++s) {
          if (key == kGenericNames[static_cast<std::size_t>(s)]) {
            ref = FieldRef{static_cast<Slot>(s), kGenericFormats[static_cast<std::size_t>(s)]};
          }
        }
      }
      if (!ref)
        return fmt::format("unknown field \"{}\" in a {} event", key, ev->get<std::string>());
      if (std::string problem = decode_field(*ref, value, event, text); !problem.empty()) {
        return fmt::format("field \"{}\": {}", key, problem);
      }
    }
    return {};
  }

 private:
  static bool as_int64(const nlohmann::json& v, std::int64_t& out) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
      out = static_cast<std::int64_t>(u);
      return true;
    }
    if (v.is_number_integer()) {
      out = v.get<std::int64_t>();
      return true;
    }
    return false;
  }

  std::string decode_field(FieldRef ref, const nlohmann::json& v, sim::Event& e,
                           std::string& text) const {
    std::int64_t value = 0;
    switch (ref.format) {
      case Format::text:
        if (!v.is_string()) return "expected a string";
        text = v.get<std::string>();
        return {};
      case Format::integer:
        if (!as_int64(v, value)) return "expected an integer";
        break;
      case Format::unsigned_bits:
        if (v.is_number_unsigned()) {
          value = static_cast<std::int64_t>(v.get<std::uint64_t>());
        } else if (!as_int64(v, value)) {
          return "expected an unsigned integer";
        }
        break;
      case Format::boolean:
        if (v.is_boolean()) {
          value = v.get<bool>() ? 1 : 0;
        } else if (!as_int64(v, value)) {
          return "expected true or false";
        }
        break;
      case Format::endpoint:
        if (v.is_null()) {
          value = sim::kNoNode;
        } else if (v.is_string()) {
          const std::optional<sim::Endpoint> server = topology_.find(v.get<std::string>());
          if (!server || *server >= 0) {
            return fmt::format(
                "expected a node id, a server of the header's world ({}) or null, found {}",
                server_names(), v.dump().substr(0, 80));
          }
          value = *server;
        } else if (!as_int64(v, value)) {
          return fmt::format(
              "expected a node id, a server of the header's world ({}) or null, found {}",
              server_names(), v.dump().substr(0, 80));
        }
        break;
      case Format::message_type:
        if (v.is_string()) {
          const std::string name = v.get<std::string>();
          if (const auto it = type_codes_.find(name); it != type_codes_.end()) {
            value = it->second;
          } else if (name.rfind("type_", 0) == 0) {
            const char* begin = name.data() + 5;
            const char* end = name.data() + name.size();
            const auto [ptr, ec] = std::from_chars(begin, end, value);
            if (ec != std::errc{} || ptr != end || begin == end) {
              return fmt::format("unknown message type \"{}\"", name);
            }
          } else {
            return fmt::format("unknown message type \"{}\" (not in the header)", name);
          }
        } else if (!as_int64(v, value)) {
          return "expected a message type name";
        }
        break;
      default:
        if (v.is_string()) {
          const std::string name = v.get<std::string>();
          bool found = false;
          for (std::int64_t code = 0; code < 64 && !found; ++code) {
            const char* n = name_of(ref.format, code);
            if (n != nullptr && name == n) {
              value = code;
              found = true;
            }
          }
          if (!found) return fmt::format("unknown name \"{}\"", name);
        } else if (!as_int64(v, value)) {
          return "expected a name";
        }
        break;
    }
    switch (ref.slot) {
      case Slot::code:
        if (value < 0 || value > UINT16_MAX) return "out of range";
        e.code = static_cast<std::uint16_t>(value);
        break;
      case Slot::node:
      case Slot::peer:
        if (value != sim::kNoNode && (value < INT32_MIN || value > INT32_MAX ||
                                      !topology_.has(static_cast<sim::Endpoint>(value)))) {
          return fmt::format("{} is not a node of this trace's {} or an endpoint", value,
                             topology_.node_count());
        }
        (ref.slot == Slot::node ? e.node : e.peer) = static_cast<sim::NodeId>(value);
        break;
      case Slot::a:
        e.a = value;
        break;
      case Slot::b:
        e.b = value;
        break;
      case Slot::c:
        e.c = value;
        break;
      case Slot::d:
        e.d = value;
        break;
      case Slot::text:
        break;
    }
    return {};
  }

  // The header world's servers by name, for an error message.
  std::string server_names() const {
    std::string out;
    for (const sim::NamedEndpoint& server : topology_.servers()) {
      out += (out.empty() ? "\"" : ", \"") + server.name + "\"";
    }
    return out.empty() ? "none" : out;
  }

  const sim::Topology& topology_;
  std::map<std::string, std::int64_t> type_codes_;
  std::map<std::string, sim::EventKind> kinds_;
};

// A header field that must be a whole number: nlohmann's get<> of a float out of range (1e20) is
// undefined behaviour, so the type is checked first.
std::optional<std::int64_t> header_integer(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  return std::nullopt;
}

// A string field of a header object of at most 256 bytes (empty only if `may_be_empty`), or
// nullopt.
std::optional<std::string> header_name(const nlohmann::json& object, const char* key,
                                       bool may_be_empty) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  std::string text = it->get<std::string>();
  if ((!may_be_empty && text.empty()) || text.size() > 256) return std::nullopt;
  return text;
}

// The header's "endpoints" and "groups" (version 2 on): the world's servers and election groups.
std::string read_topology(const nlohmann::json& j, TraceHeader& h) {
  const auto endpoints = j.find("endpoints");
  if (endpoints == j.end() || !endpoints->is_array()) {
    return "header field \"endpoints\" must be the list of the world's servers";
  }
  std::vector<sim::NamedEndpoint> servers;
  std::set<std::int64_t> addresses;
  std::set<std::string> names;
  for (std::size_t i = 0; i < endpoints->size(); ++i) {
    const nlohmann::json& e = (*endpoints)[i];
    const auto problem = [&](const char* what) {
      return fmt::format("header field \"endpoints\", entry {}: {}", i, what);
    };
    if (!e.is_object()) return problem("expected an object");
    const auto address = e.contains("address") ? header_integer(e.at("address")) : std::nullopt;
    if (!address || *address > sim::server_endpoint(0) || *address < -1'000'000) {
      return problem("\"address\" must be a server address from -2 down to -1000000");
    }
    const auto name = header_name(e, "name", false);
    const auto kind = header_name(e, "kind", false);
    const auto group = header_name(e, "group", true);
    if (!name || !kind || !group) {
      return problem("expected \"name\" and \"kind\" (names) and \"group\" (a name or \"\")");
    }
    if (!addresses.insert(*address).second) return problem("a second server at one address");
    if (!names.insert(*name).second) return problem("a second server of one name");
    if (name->find_first_not_of("0123456789") == std::string::npos) {
      return problem("a server's name is not a number (numbers name nodes)");
    }
    // What the server is to readers; headers written before the server registry leave it out.
    sim::ServerTraits traits = legacy_traits(*kind);
    if (e.contains("lane")) {
      const auto lane = e.at("lane").is_string()
                            ? sim::server_lane_of(e.at("lane").get_ref<const std::string&>())
                            : std::nullopt;
      if (!lane) return problem("\"lane\" must be \"none\", \"store\", \"sink\" or \"process\"");
      traits.lane = *lane;
    }
    for (const char* flag : {"coordinator", "nemesis"}) {
      if (!e.contains(flag)) continue;
      if (!e.at(flag).is_boolean())
        return problem("\"coordinator\" and \"nemesis\" must be true or false");
      (flag[0] == 'c' ? traits.coordinator : traits.nemesis) = e.at(flag).get<bool>();
    }
    if (e.contains("faults")) {
      const nlohmann::json& faults = e.at("faults");
      if (!faults.is_array() || faults.size() > sim::kFaultKindCount) {
        return problem("\"faults\" must be a list of fault kinds");
      }
      traits.faults = 0;
      for (const nlohmann::json& f : faults) {
        const sim::FaultKindInfo* info = nullptr;
        for (const sim::FaultKindInfo& c : sim::fault_catalogue()) {
          if (f.is_string() && f.get_ref<const std::string&>() == c.name) info = &c;
        }
        if (info == nullptr) return problem("\"faults\" must be a list of fault kinds");
        traits.faults |= sim::fault_bit(info->kind);
      }
    }
    servers.push_back({static_cast<sim::Endpoint>(*address), *name, *kind, *group, traits});
  }
  std::vector<sim::ElectionGroup> groups;
  const auto listed = j.find("groups");
  if (listed == j.end() || !listed->is_array()) {
    return "header field \"groups\" must be the list of the world's election groups";
  }
  for (std::size_t i = 0; i < listed->size(); ++i) {
    const nlohmann::json& g = (*listed)[i];
    const auto problem = [&](const char* what) {
      return fmt::format("header field \"groups\", entry {}: {}", i, what);
    };
    if (!g.is_object()) return problem("expected an object");
    const auto name = header_name(g, "name", false);
    const auto protocol = header_name(g, "protocol", true);
    if (!name || !protocol) return problem("expected \"name\" and \"protocol\" (names)");
    sim::ElectionGroup group{*name, *protocol, {}, std::nullopt};
    if (g.contains("key") && g.at("key").is_string()) group.key = g.at("key").get<std::string>();
    const auto runs = g.find("nodes");
    if (runs == g.end() || !runs->is_array()) return problem("\"nodes\" must be a list");
    const char* runs_problem =
        "\"nodes\" must be rising runs of the header's nodes, each a pair first, last";
    if (runs->size() % 2 != 0) return problem(runs_problem);
    for (std::size_t r = 0; r < runs->size(); r += 2) {
      const std::int64_t first = header_integer((*runs)[r]).value_or(-1);
      const std::int64_t last = header_integer((*runs)[r + 1]).value_or(-1);
      if (first < 0 || last < first || last >= static_cast<std::int64_t>(h.node_count) ||
          (!group.nodes.empty() && first <= group.nodes.back())) {
        return problem(runs_problem);
      }
      for (std::int64_t n = first; n <= last; ++n)
        group.nodes.push_back(static_cast<sim::NodeId>(n));
    }
    groups.push_back(std::move(group));
  }
  h.topology = sim::Topology(h.node_count, std::move(servers), std::move(groups));
  return {};
}

std::string read_header(const nlohmann::json& j, TraceHeader& h) {
  if (!j.is_object() || !j.contains("electsim_trace")) {
    return fmt::format("expected the trace header {{\"electsim_trace\": {}, ...}}",
                       kTraceSchemaVersion);
  }
  try {
    const auto version = header_integer(j.at("electsim_trace"));
    if (!version || *version < kOldestReadableTraceVersion || *version > kTraceSchemaVersion) {
      return fmt::format(
          "trace schema version {} is not supported (this electsim reads versions {} to {})",
          j.at("electsim_trace").dump(), kOldestReadableTraceVersion, kTraceSchemaVersion);
    }
    h.schema_version = static_cast<int>(*version);
    h.scenario = j.value("scenario", std::string());
    h.variant = j.value("variant", std::string());
    h.protocol = j.value("protocol", std::string());
    if (!j.at("seed").is_number_unsigned()) {
      return "header field \"seed\" must be a whole number from 0 to 2^64-1";
    }
    h.seed = j.at("seed").get<std::uint64_t>();
    const auto nodes = header_integer(j.at("nodes"));
    if (!nodes || *nodes < 0 || *nodes > 1'000'000) return "header field \"nodes\" is out of range";
    h.node_count = static_cast<std::size_t>(*nodes);
    const auto duration = header_integer(j.at("duration_ns"));
    if (!duration || *duration < 0) {
      return "header field \"duration_ns\" must be a whole number of nanoseconds from 0";
    }
    h.duration = Duration(*duration);
    h.message_types = j.value("message_types", std::vector<std::string>());
    h.election_message_types = j.value("election_message_types", std::vector<std::string>());
    const nlohmann::json& key = j.value("leader_key", nlohmann::json(nullptr));
    if (key.is_string()) h.leader_key = key.get<std::string>();
    h.uses_store = j.value("uses_store", false);
    if (j.contains("store_members")) {
      const auto members = header_integer(j.at("store_members"));
      if (!members || *members < 1 || *members > static_cast<std::int64_t>(sim::kMaxStoreMembers)) {
        return fmt::format("header field \"store_members\" must be from 1 to {}",
                           sim::kMaxStoreMembers);
      }
      h.store_members = static_cast<std::size_t>(*members);
    }
    if (j.contains("tokens_ordered")) {
      if (!j.at("tokens_ordered").is_boolean()) {
        return "header field \"tokens_ordered\" must be true or false";
      }
      h.tokens_ordered = j.at("tokens_ordered").get<bool>();
    }
    if (j.contains("write_interval_ns")) {
      const auto interval = header_integer(j.at("write_interval_ns"));
      if (!interval || *interval < 1'000'000 || *interval > 1'000'000'000'000'000'000) {
        return "header field \"write_interval_ns\" must be whole nanoseconds from 1 ms to "
               "1e18";
      }
      h.write_interval = Duration(*interval);
    }
    if (j.contains("coordinator")) {
      if (j.at("coordinator") != "postgres") {
        return "header field \"coordinator\" must be \"postgres\" when present";
      }
      h.coordinator = sim::kPostgresEndpoint;
    }
    if (h.schema_version >= 2) {
      // The topology names the store's members; version 1 wrote their count apart.
      if (std::string problem = read_topology(j, h); !problem.empty()) return problem;
      h.store_members = std::max<std::size_t>(1, h.topology.store_members());
      if (h.store_members > sim::kMaxStoreMembers) {
        return fmt::format("header field \"endpoints\": at most {} store members",
                           sim::kMaxStoreMembers);
      }
    } else {
      h.topology = legacy_topology(h.node_count, h.store_members);
    }
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("bad trace header: {}", e.what());
  }
  return {};
}

// The rules an event stream written by the kernel always keeps, checked on a trace read back so
// that a damaged or hand-edited file is refused instead of analysed: one run_start first, naming
// the header's nodes and seed; events only from endpoints that can emit them; no negative epoch,
// token, revision, lease, request id or duration; store requests and revisions that only grow
// (a duplicated line breaks them); crash, restart and resume in an order a process can live;
// servers the header's world has (store members below its store_members; the events of a
// store's own Raft only with a replicated store) and operations the server knows.
class StreamChecker {
 public:
  explicit StreamChecker(const TraceHeader& h) : header_(h), nodes_(h.node_count) {}

  std::string check(const sim::Event& e) {
    using K = sim::EventKind;
    if (!started_ && e.kind != K::run_start) return "expected run_start as the first event";
    if (e.time > sim::Time(header_.duration)) {
      return fmt::format("an event at {} ns, after the run's duration of {} ns", e.time.ns,
                         header_.duration.count());
    }
    switch (e.kind) {
      case K::run_start:
        if (started_) return "a second run_start (a duplicated or spliced line)";
        started_ = true;
        if (e.a != static_cast<std::int64_t>(header_.node_count)) {
          return fmt::format("run_start names {} nodes, the header {}", e.a, header_.node_count);
        }
        if (static_cast<std::uint64_t>(e.b) != header_.seed) {
          return "run_start names another seed than the header";
        }
        return {};
      case K::belief:
        if (auto p = need_node(e.node, "node")) return *p;
        if (e.b != sim::kNoNode && !is_node(e.b))
          return "field \"leader\": not a node of this trace";
        return non_negative(e.a, "epoch");
      case K::crash:
      case K::restart: {
        if (auto p = need_process(e.node, "node")) return *p;
        Life& life = life_of(e.node);
        if (e.kind == K::crash) {
          if (life.down) return fmt::format("{} crashes while it is down", process_name(e.node));
          life.down = true;
          life.paused = false;
        } else {
          if (!life.down) return fmt::format("{} restarts while it is up", process_name(e.node));
          life.down = false;
        }
        return {};
      }
      case K::pause:
      case K::resume: {
        if (auto p = need_process(e.node, "node")) return *p;
        Life& life = life_of(e.node);
        if (life.down) {
          return fmt::format("{} pauses or resumes while down", process_name(e.node));
        }
        if (is_server(e.node)) return non_negative(e.a, "duration_ns");
        if (e.kind == K::pause) {
          // A pause during a pause extends it; one resume ends both.
          life.paused = true;
          return non_negative(e.a, "duration_ns");
        }
        if (!life.paused) return fmt::format("node {} resumes while not paused", e.node);
        life.paused = false;
        return {};
      }
      case K::clock_change:
        return need_process(e.node, "node").value_or("");
      case K::timer_fire:
      case K::store_reply:
      case K::watch_notify:
      case K::sink_reply:
        if (auto p = need_node(e.node, "node")) return *p;
        return non_negative(e.a, e.kind == K::sink_reply ? "token" : "value");
      case K::msg_send:
      case K::msg_deliver:
      case K::msg_drop:
        if (auto p = need_node(e.node, e.kind == K::msg_deliver ? "to" : "from")) return *p;
        return need_node(e.peer, e.kind == K::msg_deliver ? "from" : "to").value_or("");
      case K::store_request:
        if (auto p = need_node(e.node, "node")) return *p;
        if (e.a <= last_request_) {
          return fmt::format("store request {} after request {} (ids only grow)", e.a,
                             last_request_);
        }
        last_request_ = e.a;
        return {};
      case K::store_apply:
        if (auto p = need_node(e.node, "node")) return *p;
        if (e.d > last_request_ || e.d < 0) {
          return fmt::format("store request {} applied before it was sent", e.d);
        }
        if (e.a < 0 || e.c < 0) return "a negative revision or lease";
        return {};
      case K::store_change:
        if (e.node != sim::kNoNode && !is_node(e.node)) {
          return "field \"owner\": not a node of this trace";
        }
        if (e.a <= last_revision_) {
          return fmt::format("store revision {} after revision {} (revisions only grow)", e.a,
                             last_revision_);
        }
        last_revision_ = e.a;
        return non_negative(e.b, "lease");
      case K::lease_expire:
        return non_negative(e.a, "lease");
      case K::sink_write:
        if (auto p = need_node(e.node, "writer")) return *p;
        if (e.a < 0 || e.d < 0) return "a negative fencing token";
        return {};
      case K::sink_send:
        if (auto p = need_node(e.node, "writer")) return *p;
        if (e.a < 0) return "a negative fencing token";
        if (e.d < 0) return "field \"late_ns\": expected a duration from 0";
        return non_negative(e.c, "send_delay_ns");
      case K::store_pause:
        return non_negative(e.a, "duration_ns");
      case K::fault:
        if (e.a < 0 || e.b < 0) return "a negative fault index or duration";
        return {};
      case K::server_role:
        if (auto p = need_member(e.node, "member", e.kind)) return *p;
        if (e.b != sim::kNoNode) {
          if (auto p = need_member(e.b, "leader", e.kind)) return *p + " or null";
        }
        return non_negative(e.a, "term");
      case K::raft_commit:
        if (auto p = need_member(e.node, "leader", e.kind)) return *p;
        if (e.a < 1) return "field \"index\": expected a log index from 1";
        return non_negative(e.b, "term");
      case K::lease_refresh:
        if (auto p = need_member(e.node, "leader", e.kind)) return *p;
        if (e.a < 0) return "field \"leases\": expected a count from 0";
        return non_negative(e.b, "term");
      case K::client_failover:
        if (auto p = need_node(e.node, "node")) return *p;
        if (auto p = need_member(e.peer, "member", e.kind)) return *p;
        return non_negative(e.a, "request");
      case K::server_request:
        if (auto p = need_node(e.node, "node")) return *p;
        if (kind_of(e.peer) != sim::server_kind::postgres &&
            kind_of(e.peer) != sim::server_kind::redis) {
          return "field \"server\": expected \"postgres\" or a Redis master";
        }
        if (auto p = need_server_op(e.peer, e.text)) return *p;
        return non_negative(e.a, "request");
      case K::conn_break: {
        const auto end = [&](sim::NodeId n) { return is_node(n) || is_server(n); };
        if (!end(e.node) || !end(e.peer) || e.node == e.peer) {
          return "fields \"node\" and \"peer\": expected the two ends of a connection";
        }
        return {};
      }
      case K::run_end:
      case K::store_resume:
      case K::network_change:
        return {};
    }
    return "an unknown event kind";
  }

 private:
  bool is_node(std::int64_t n) const {
    return n >= 0 && static_cast<std::uint64_t>(n) < header_.node_count;
  }
  static std::size_t idx(sim::NodeId n) { return static_cast<std::size_t>(n); }
  std::string_view kind_of(sim::NodeId n) const { return header_.topology.kind_of(n); }
  // A store member's index (the single store is member 0), or -1.
  std::int32_t store_member(sim::NodeId n) const { return header_.topology.store_member_index(n); }
  bool is_server(sim::NodeId n) const { return header_.topology.server(n) != nullptr; }

  // Whether a process is down or paused, to check that crash, restart, pause and resume come in
  // an order it can live: nodes by id, servers by address.
  struct Life {
    bool down = false;
    bool paused = false;
  };
  Life& life_of(sim::NodeId n) { return is_node(n) ? nodes_[idx(n)] : servers_[n]; }
  std::string process_name(sim::NodeId n) const {
    return n >= 0 ? fmt::format("node {}", n) : "server " + header_.topology.name_of(n);
  }
  // A node of the header, or a server its world has: store member K only below the header's
  // store_members (the single store is member 0).
  std::optional<std::string> need_process(sim::NodeId n, const char* field) const {
    if (is_node(n) || is_server(n)) return std::nullopt;
    return need_node(n, field);
  }
  // A member of the replicated store the header names: events of a store's own Raft need one.
  std::optional<std::string> need_member(sim::NodeId n, const char* field,
                                         sim::EventKind kind) const {
    if (header_.store_members <= 1) {
      return fmt::format(
          "a {} event, but the header names no replicated store (its world has no more than "
          "one server of kind \"store\")",
          sim::event_kind_name(kind));
    }
    if (store_member(n) >= 0) return std::nullopt;
    std::string members;
    for (const sim::NamedEndpoint& s : header_.topology.servers()) {
      if (s.kind == sim::server_kind::store) {
        members += (members.empty() ? "\"" : ", \"") + s.name + "\"";
      }
    }
    return fmt::format(
        "field \"{}\": expected a member of the header's store ({}), found {}", field, members,
        n == sim::kNoNode ? std::string("null") : "\"" + header_.topology.name_of(n) + "\"");
  }
  // A server_request names an operation the server it went to knows.
  static std::optional<std::string> need_server_op(sim::NodeId server, std::string_view op) {
    std::vector<std::string> names;
    if (server == sim::kPostgresEndpoint) {
      for (int i = 0; i < sim::kDbOpCount; ++i) {
        names.emplace_back(sim::db_op_name(static_cast<sim::DbOp>(i)));
      }
    } else {
      for (int i = 0; i < sim::kRedisOpCount; ++i) {
        names.emplace_back(sim::redis_op_name(static_cast<sim::RedisOp>(i)));
      }
    }
    if (std::find(names.begin(), names.end(), op) != names.end()) return std::nullopt;
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "\"" : ", \"") + name + "\"";
    std::string found;
    append_json_string(found, op.substr(0, 64));
    return fmt::format("field \"op\": expected an operation of {} ({}), found {}",
                       server == sim::kPostgresEndpoint ? "the database" : "a Redis master", list,
                       found);
  }
  std::optional<std::string> need_node(sim::NodeId n, const char* field) const {
    if (is_node(n)) return std::nullopt;
    return fmt::format("field \"{}\": expected a node of this trace (0 to {}), found {}", field,
                       header_.node_count == 0 ? 0 : header_.node_count - 1,
                       n == sim::kStoreEndpoint  ? std::string("\"store\"")
                       : n == sim::kSinkEndpoint ? std::string("\"sink\"")
                       : n == sim::kNoNode       ? std::string("null")
                                                 : std::to_string(n));
  }
  static std::string non_negative(std::int64_t v, const char* field) {
    if (v >= 0) return {};
    return fmt::format("field \"{}\": expected a value from 0, found {}", field, v);
  }

  const TraceHeader& header_;
  bool started_ = false;
  std::vector<Life> nodes_;
  std::map<sim::NodeId, Life> servers_;  // by address, for the header's servers only
  std::int64_t last_request_ = -1;
  std::int64_t last_revision_ = -1;
};

// One line of at most kMaxTraceLine bytes into `line` (without its '\n'). Returns false at the
// end of the input; sets `too_long` (and stops reading) for a longer line, so a file without
// newlines, such as /dev/zero, costs at most the limit.
bool next_line(std::istream& in, std::string& line, bool& too_long, std::uint64_t& bytes) {
  line.clear();
  too_long = false;
  std::streambuf* buffer = in.rdbuf();
  if (buffer == nullptr) return false;
  for (;;) {
    const int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) return !line.empty();
    ++bytes;
    if (c == '\n') return true;
    if (line.size() >= kMaxTraceLine) {
      too_long = true;
      return true;
    }
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace

TraceReadResult read_trace(std::istream& in, sim::Observer* also) {
  TraceReadResult result;
  std::string line;
  std::size_t line_no = 0;
  std::uint64_t bytes = 0;
  bool too_long = false;
  auto failed = [&](const std::string& what) {
    result.error = fmt::format("line {}: {}", line_no, what);
    return result;
  };
  auto parse = [&](nlohmann::json& out) -> std::string {
    // Trace lines are flat objects; anything nested deeper is not a trace line.
    io::JsonParse parsed = io::parse_json(line, 4);
    if (!parsed.ok()) return fmt::format("not a trace line ({})", parsed.error);
    out = std::move(parsed.value);
    return {};
  };
  const std::string long_line =
      fmt::format("a line longer than {} bytes (the limit on a trace line)", kMaxTraceLine);

  line_no = 1;
  if (!next_line(in, line, too_long, bytes)) return failed("empty trace: expected the header line");
  if (too_long) return failed(long_line);
  nlohmann::json j;
  if (std::string problem = parse(j); !problem.empty()) return failed(problem);
  if (std::string problem = read_header(j, result.header); !problem.empty()) return failed(problem);

  Analyzer analyzer(result.header.analysis_config());
  TraceHasher hasher;
  const LineDecoder decoder(result.header);
  StreamChecker checker(result.header);
  sim::Event event;
  std::string text;
  sim::Time last;
  bool ended = false;
  std::uint64_t events = 0;
  while (next_line(in, line, too_long, bytes)) {
    ++line_no;
    if (too_long) return failed(long_line);
    if (bytes > kMaxTraceBytes) {
      return failed(
          fmt::format("the trace is larger than {} bytes (the limit on a trace)", kMaxTraceBytes));
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (ended) return failed("events after run_end");
    if (std::string problem = parse(j); !problem.empty()) return failed(problem);
    if (std::string problem = decoder.decode(j, event, text); !problem.empty()) {
      return failed(problem);
    }
    event.text = text;
    if (event.time < last) return failed("time goes backwards");
    if (std::string problem = checker.check(event); !problem.empty()) return failed(problem);
    last = event.time;
    analyzer.on_event(event);
    hasher.on_event(event);
    if (also != nullptr) also->on_event(event);
    ++events;
    ended = event.kind == sim::EventKind::run_end;
  }
  if (in.bad()) return failed("read error");
  if (!ended) return failed("the trace ends without run_end (incomplete)");

  result.report = analyzer.finish();
  result.info.scenario = result.header.scenario;
  result.info.variant = result.header.variant;
  result.info.protocol = result.header.protocol;
  result.info.seed = result.header.seed;
  result.info.trace_hash = hasher.hex();
  result.info.events_processed = events;
  result.info.duration = result.report.duration;
  return result;
}

TraceReadResult read_trace_file(const std::string& path, sim::Observer* also) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    TraceReadResult result;
    result.error = "cannot read the trace: it is a directory";
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    TraceReadResult result;
    result.error = fmt::format("cannot open the trace: {}", std::strerror(errno));
    return result;
  }
  return read_trace(in, also);
}

}  // namespace electsim::analysis
