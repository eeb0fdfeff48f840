// JSON Lines traces (docs/trace-format.md): a header line, then one object per kernel event with
// named, kind-specific fields. Lines are formatted by hand with fmt (no JSON library per event);
// every field of an Event survives the round trip, so a trace read back replays into the same
// Report and the same hash. The file is written under a temporary name and renamed when whole.
#include "analysis/trace.hpp"
#include "analysis/json_text.hpp"
#include "analysis/trace_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
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

}  // namespace

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

std::vector<std::string> usable_type_names(const std::vector<std::string>& names) {
  std::vector<std::string> out(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool unique = !names[i].empty() && std::count(names.begin(), names.end(), names[i]) == 1;
    const bool looks_generic = names[i].rfind("type_", 0) == 0;
    if (unique && !looks_generic) out[i] = names[i];
  }
  return out;
}

namespace {

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
  // Written only when it is not the store, so that the traces of store protocols stay as they were.
  if (h.coordinator != sim::kNoNode && h.coordinator != h.topology.store_member(0)) {
    j["coordinator"] = h.topology.name_of(h.coordinator);
  }
  if (h.write_interval) j["write_interval_ns"] = h.write_interval->count();
  if (!h.tokens_ordered) j["tokens_ordered"] = false;
  if (!h.clocks.empty()) {
    nlohmann::json clocks = nlohmann::json::array();
    for (const TraceHeader::Clock& c : h.clocks) {
      // The steps as two lists of one length (a line nests at most four deep).
      nlohmann::json step_at = nlohmann::json::array();
      nlohmann::json step_by = nlohmann::json::array();
      for (const sim::ClockStep& step : c.config.steps) {
        step_at.push_back(step.at.ns);
        step_by.push_back(step.by.count());
      }
      clocks.push_back({{"at", h.topology.name_of(c.endpoint)},
                        {"offset_ns", c.config.offset.count()},
                        {"drift_ppb", c.config.drift_ppb},
                        {"step_at_ns", std::move(step_at)},
                        {"step_by_ns", std::move(step_by)}});
    }
    j["clocks"] = std::move(clocks);
  }
  if (h.lease) {
    j["lease"] = {{"ttl_ns", h.lease->ttl.count()},
                  {"judged_by_store", h.lease->judged_by_store},
                  {"store_min_ttl_ns", h.lease->store_min_ttl.count()}};
  }
  nlohmann::json endpoints = nlohmann::json::array();
  for (const sim::NamedEndpoint& s : h.topology.servers()) {
    nlohmann::json faults = nlohmann::json::array();
    for (const sim::FaultKindInfo& f : sim::fault_catalogue()) {
      if ((s.traits.faults & sim::fault_bit(f.kind)) != 0) faults.push_back(f.name);
    }
    nlohmann::json entry = {{"address", s.address},
                            {"name", s.name},
                            {"kind", s.kind},
                            {"group", s.group},
                            {"coordinator", s.traits.coordinator},
                            {"lane", sim::server_lane_name(s.traits.lane)},
                            {"faults", std::move(faults)},
                            {"nemesis", s.traits.nemesis}};
    // Only for a server that answers requests, so that other headers stay as they were.
    if (!s.traits.requests.empty()) entry["requests"] = s.traits.requests;
    endpoints.push_back(std::move(entry));
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
    nlohmann::json group = {{"name", g.name},
                            {"protocol", g.protocol},
                            {"nodes", std::move(runs)},
                            {"key", g.key ? nlohmann::json(*g.key) : nlohmann::json(nullptr)}};
    if (!g.service_class.empty()) group["class"] = g.service_class;  // a fleet's classes only
    if (!g.store.empty()) group["store"] = g.store;                  // a sharded store's shard only
    if (!g.via.empty()) group["via"] = g.via;  // behind a lease aggregator only
    groups.push_back(std::move(group));
  }
  j["groups"] = std::move(groups);
  return j;
}

}  // namespace

// ---- Header

sim::ServerTraits legacy_traits(std::string_view kind, bool listed) {
  namespace k = sim::server_kind;
  if (kind == k::sink) return {false, sim::ServerLane::sink, 0, false};
  if (kind == k::store) return {true, sim::ServerLane::store, 0, false};
  sim::ServerTraits traits{true, listed ? sim::ServerLane::process : sim::ServerLane::none, 0,
                           false};
  // The two kinds that answered requests before headers listed them.
  if (kind == k::postgres) traits.requests = sim::db_op_names();
  if (kind == k::redis) traits.requests = sim::redis_op_names();
  return traits;
}

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

// FNV-1a over the fields' little-endian bytes (55 of them, then the text). A zero byte only
// multiplies by the prime, so a field's high zero bytes (most of them: small counts, node ids,
// tokens) are one multiplication by a power of the prime instead of one step each. The value is
// the byte-by-byte hash exactly (tests/analysis/trace_test.cpp checks them against each other).
namespace {

constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

constexpr std::array<std::uint64_t, 9> fnv_prime_powers() {
  std::array<std::uint64_t, 9> powers{};
  powers[0] = 1;
  for (std::size_t i = 1; i < powers.size(); ++i) powers[i] = powers[i - 1] * kFnvPrime;
  return powers;
}
constexpr std::array<std::uint64_t, 9> kFnvPrimePowers = fnv_prime_powers();

// Hashes the low `width` bytes of `v`, low byte first.
std::uint64_t fnv_field(std::uint64_t h, std::uint64_t v, int width) {
  const int significant = (std::bit_width(v) + 7) / 8;  // bytes up to the highest nonzero one
  for (int i = 0; i < significant; ++i) {
    h = (h ^ static_cast<std::uint8_t>(v >> (8 * i))) * kFnvPrime;
  }
  return h * kFnvPrimePowers[static_cast<std::size_t>(width - significant)];
}

}  // namespace

void TraceHasher::on_event(const sim::Event& e) {
  ++events_;
  std::uint64_t h = hash_;
  h = fnv_field(h, static_cast<std::uint64_t>(e.time.ns), 8);
  h = fnv_field(h, static_cast<std::uint64_t>(e.kind), 1);
  h = fnv_field(h, e.code, 2);
  h = fnv_field(h, static_cast<std::uint32_t>(e.node), 4);
  h = fnv_field(h, static_cast<std::uint32_t>(e.peer), 4);
  h = fnv_field(h, static_cast<std::uint64_t>(e.a), 8);
  h = fnv_field(h, static_cast<std::uint64_t>(e.b), 8);
  h = fnv_field(h, static_cast<std::uint64_t>(e.c), 8);
  h = fnv_field(h, static_cast<std::uint64_t>(e.d), 8);
  h = fnv_field(h, static_cast<std::uint32_t>(e.text.size()), 4);
  for (const char ch : e.text) h = (h ^ static_cast<std::uint8_t>(ch)) * kFnvPrime;
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

}  // namespace electsim::analysis
