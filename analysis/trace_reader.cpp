// Reading a JSON Lines trace back (docs/trace-format.md): each line decoded against the schema
// and the header's names, the stream checked against the rules the kernel keeps
// (analysis/trace_checker.hpp), and every event replayed to the caller's observer.
#include "analysis/json_text.hpp"
#include "analysis/trace.hpp"
#include "analysis/trace_checker.hpp"
#include "analysis/trace_fields.hpp"

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

// The most operations a header's server may list ("requests"), each a name of at most 256 bytes.
constexpr std::size_t kMaxRequestNames = 256;

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
    if (e.contains("requests")) {
      const nlohmann::json& requests = e.at("requests");
      if (!requests.is_array() || requests.size() > kMaxRequestNames) {
        return problem("\"requests\" must be a list of at most 256 operation names");
      }
      traits.requests.clear();
      for (const nlohmann::json& r : requests) {
        if (!r.is_string() || r.get_ref<const std::string&>().empty() ||
            r.get_ref<const std::string&>().size() > 256) {
          return problem("\"requests\" must be a list of at most 256 operation names");
        }
        traits.requests.push_back(r.get<std::string>());
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
    if (g.contains("class")) {
      const auto service_class = header_name(g, "class", false);
      if (!service_class) return problem("\"class\" must be a name (a fleet's class of services)");
      group.service_class = *service_class;
    }
    if (g.contains("store")) {
      const auto store = header_name(g, "store", false);
      if (!store) return problem("\"store\" must be a name (the shard of the store it asks)");
      group.store = *store;
    }
    if (g.contains("via")) {
      const auto via = header_name(g, "via", false);
      if (!via) return problem("\"via\" must be a name (the proxy its nodes ask)");
      group.via = *via;
    }
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
  const std::vector<std::string> shards = h.topology.store_shards();
  for (std::size_t i = 0; i < h.topology.groups().size(); ++i) {
    const std::string& store = h.topology.groups()[i].store;
    const std::string& via = h.topology.groups()[i].via;
    const std::optional<sim::Endpoint> proxy = via.empty() ? std::nullopt : h.topology.find(via);
    if (!via.empty() && (!proxy || *proxy >= 0)) {
      return fmt::format(
          "header field \"groups\", entry {}: \"via\" must name a server of the header (found "
          "{})",
          i, nlohmann::json(via).dump());
    }
    if (!store.empty() && std::find(shards.begin(), shards.end(), store) == shards.end()) {
      return fmt::format(
          "header field \"groups\", entry {}: \"store\" must name a shard of the store, a group "
          "of the header's store servers (found {})",
          i, nlohmann::json(store).dump());
    }
  }
  return {};
}

// The header's "clocks" and "lease", which only the pictures read.
std::string read_drawing(const nlohmann::json& j, TraceHeader& h) {
  // A clock's settings as a scenario bounds them: an offset or a step of at most ten years, a
  // drift that leaves it running forwards, and at most as many steps as faults.
  constexpr std::int64_t kTenYears = 315'360'000'000'000'000;
  constexpr std::size_t kMostSteps = 100'000;
  if (j.contains("clocks")) {
    const nlohmann::json& clocks = j.at("clocks");
    if (!clocks.is_array() || clocks.size() > h.node_count + h.topology.servers().size()) {
      return "header field \"clocks\" must be a list of at most one clock per endpoint";
    }
    for (const nlohmann::json& c : clocks) {
      const std::string what =
          "header field \"clocks\": each entry is {\"at\": an endpoint of the header, "
          "\"offset_ns\", \"drift_ppb\", \"step_at_ns\": [...], \"step_by_ns\": [...] of one "
          "length} within a scenario's bounds";
      if (!c.is_object() || !c.contains("at") || !c.at("at").is_string()) return what;
      const std::optional<sim::Endpoint> at = h.topology.find(c.at("at").get<std::string>());
      const auto offset = header_integer(c.value("offset_ns", nlohmann::json(0)));
      const auto drift = header_integer(c.value("drift_ppb", nlohmann::json(0)));
      const nlohmann::json step_at = c.value("step_at_ns", nlohmann::json::array());
      const nlohmann::json step_by = c.value("step_by_ns", nlohmann::json::array());
      if (!at || !offset || *offset < -kTenYears || *offset > kTenYears || !drift ||
          *drift <= -1'000'000'000 || *drift >= 1'000'000'000 || !step_at.is_array() ||
          !step_by.is_array() || step_at.size() != step_by.size() || step_at.size() > kMostSteps) {
        return what;
      }
      TraceHeader::Clock clock{*at, sim::ClockConfig{Duration(*offset), *drift, {}}};
      for (std::size_t i = 0; i < step_at.size(); ++i) {
        const auto when = header_integer(step_at.at(i));
        const auto by = header_integer(step_by.at(i));
        if (!when || *when < 0 || *when > kTenYears || !by || *by < -kTenYears || *by > kTenYears) {
          return what;
        }
        clock.config.steps.push_back({sim::Time(Duration(*when)), Duration(*by)});
      }
      h.clocks.push_back(std::move(clock));
    }
  }
  if (j.contains("lease")) {
    const nlohmann::json& l = j.at("lease");
    const std::string what =
        "header field \"lease\" must be {\"ttl_ns\": from 1 ms to ten years, "
        "\"judged_by_store\": true or false, \"store_min_ttl_ns\": from 0 to ten years}";
    if (!l.is_object()) return what;
    const auto ttl = header_integer(l.value("ttl_ns", nlohmann::json(nullptr)));
    const auto min_ttl = header_integer(l.value("store_min_ttl_ns", nlohmann::json(0)));
    const nlohmann::json by_store = l.value("judged_by_store", nlohmann::json(true));
    if (!ttl || *ttl < 1'000'000 || *ttl > kTenYears || !min_ttl || *min_ttl < 0 ||
        *min_ttl > kTenYears || !by_store.is_boolean()) {
      return what;
    }
    h.lease = TraceHeader::Lease{Duration(*ttl), by_store.get<bool>(), Duration(*min_ttl)};
  }
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
    // The server leadership depends on, by name: the store's first member unless it says.
    h.coordinator = h.topology.store_member(0);
    if (j.contains("coordinator")) {
      const nlohmann::json& c = j.at("coordinator");
      const std::optional<sim::Endpoint> named =
          c.is_string() ? h.topology.find(c.get<std::string>()) : std::nullopt;
      if (!named || !h.topology.is_coordinator(*named)) {
        return "header field \"coordinator\" must name a server of the header's endpoints that "
               "leadership depends on (\"postgres\")";
      }
      h.coordinator = *named;
    }
    if (std::string problem = read_drawing(j, h); !problem.empty()) return problem;
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("bad trace header: {}", e.what());
  }
  return {};
}

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
  return read_trace(in, [also](const TraceHeader&) { return also; });
}

TraceReadResult read_trace(std::istream& in,
                           const std::function<sim::Observer*(const TraceHeader&)>& watch) {
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
  sim::Observer* also = watch ? watch(result.header) : nullptr;

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
