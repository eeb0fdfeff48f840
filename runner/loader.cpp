// Scenario files to Scenarios (runner/loader.hpp; the format is docs/scenario-format.md): parse,
// apply a variant's and the command line's overrides, validate every section with located
// problems, then build the typed world. Every problem is collected before giving up, so one
// `electsim validate` shows them all; nothing throws past this file.
#include "runner/loader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/expect.hpp"
#include "io/input.hpp"
#include "protocols/registry.hpp"
#include "sim/fault.hpp"

namespace electsim::runner {

namespace {

using nlohmann::json;
using protocols::json_excerpt;
using protocols::Problem;
using protocols::Problems;

// A clock at most 50% fast or slow: far beyond any real oscillator, but lessons on the lease
// inequality exaggerate drift to make it visible (scenarios/lease-clock-drift.json runs at 25%).
constexpr double kMaxDriftPpm = 500'000;
constexpr const char* kRequired = "nothing (the key is required)";
constexpr std::size_t kMaxVariants = 64;
constexpr std::uint64_t kEventsCeiling = 100'000'000'000;  // the kernel orders 2^40 pushes
constexpr std::uint64_t kTraceBytesCeiling = 64ull << 30;  // 64 GiB

// ---- Small text helpers ---------------------------------------------------------------------

std::string child(const std::string& pointer, std::string_view key) {
  return protocols::child_pointer(pointer, key);
}

std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::string json_quoted(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string joined(const std::vector<std::string>& names, bool quote) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote ? json_quoted(names[i]) : names[i];
  }
  return out;
}

// The closest name by edit distance; failing that, the first name that `wrong` begins
// ("split_brain" for "split_brain_time"), since metric names grow by suffixes.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& names) {
  if (auto best = protocols::closest_name(wrong, names)) {
    return "did you mean " + json_quoted(*best) + "?";
  }
  if (wrong.size() >= 3) {
    for (const std::string& name : names) {
      if (name.size() > wrong.size() && name.compare(0, wrong.size(), wrong) == 0) {
        return "did you mean " + json_quoted(name) + "?";
      }
    }
  }
  return {};
}

// Parsed JSON holds non-negative integers as unsigned, values built in code as signed.
std::optional<std::uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  return std::nullopt;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A canonical decimal number ("0", "12"; not "012", "+1" or " 1").
std::optional<std::int64_t> parse_index(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    segments.emplace_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return segments;
}

bool valid_path(std::string_view path) {
  const auto segments = split_path(path);
  return std::none_of(segments.begin(), segments.end(),
                      [](const std::string& s) { return s.empty(); });
}

void add(Problems& problems, std::string pointer, std::string expected, std::string found,
         std::string hint = {}) {
  problems.push_back(
      Problem{std::move(pointer), std::move(expected), std::move(found), std::move(hint), {}});
}

// ---- Overrides ------------------------------------------------------------------------------

// Where an override (or a variant's `set` entry) wrote, and how to name it in messages.
struct Applied {
  std::string pointer;
  std::string context;
};

// Writes `value` at the dotted `path` of `document`: numeric segments index arrays (the index
// equal to the size appends), missing object keys are created. Returns the JSON pointer written,
// or nullopt after reporting why not.
std::optional<std::string> set_path(json& document, std::string_view path, json value,
                                    const std::string& context, Problems& problems) {
  if (!valid_path(path)) {
    add(problems, "", "a dotted path such as \"protocol.ttl\" or \"faults.0.at\"",
        json_quoted(path));
    problems.back().context = context;
    return std::nullopt;
  }
  const auto segments = split_path(path);
  json* current = &document;
  std::string pointer;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& segment = segments[i];
    if (current->is_null()) *current = json::object();
    json* next = nullptr;
    if (current->is_object()) {
      pointer = child(pointer, segment);
      next = &(*current)[segment];
    } else if (current->is_array()) {
      const auto index = parse_index(segment);
      const std::size_t size = current->size();
      if (!index || static_cast<std::size_t>(*index) > size) {
        add(problems, pointer,
            fmt::format("an index from 0 to {} into this array of {} (the last one appends)", size,
                        size),
            json_quoted(segment));
        problems.back().context = context;
        return std::nullopt;
      }
      if (static_cast<std::size_t>(*index) == size) current->push_back(nullptr);
      pointer = child(pointer, static_cast<std::size_t>(*index));
      next = &(*current)[static_cast<std::size_t>(*index)];
    } else {
      add(problems, pointer,
          fmt::format("an object or an array to set {} in", json_quoted(segment)),
          json_excerpt(*current));
      problems.back().context = context;
      return std::nullopt;
    }
    current = next;
  }
  *current = std::move(value);
  return pointer;
}

json override_value(const std::string& text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return json(text);
  return parsed;
}

// ---- The validating reader ------------------------------------------------------------------

enum class Need { no, optional, required };

struct FaultShape {
  Need target = Need::no;
  bool store_target = false;  // clock faults may target the store's clock
  Need duration = Need::no;
  std::vector<std::string> keys;  // kind-specific keys, each required
};

FaultShape shape_of(sim::FaultKind kind) {
  using sim::FaultKind;
  switch (kind) {
    case FaultKind::crash:
      return {Need::required, false, Need::optional, {}};
    case FaultKind::restart:
      return {Need::required, false, Need::no, {}};
    case FaultKind::pause:
      return {Need::required, false, Need::required, {}};
    case FaultKind::partition:
      return {Need::no, false, Need::optional, {"groups"}};
    case FaultKind::cut:
      return {Need::no, false, Need::optional, {"from", "to"}};
    case FaultKind::isolate:
      return {Need::required, false, Need::optional, {}};
    case FaultKind::heal:
      return {Need::no, false, Need::no, {}};
    case FaultKind::loss:
    case FaultKind::duplicate:
      return {Need::no, false, Need::required, {"probability"}};
    case FaultKind::latency_spike:
      return {Need::no, false, Need::required, {"extra"}};
    case FaultKind::clock_offset:
      return {Need::required, true, Need::no, {"offset"}};
    case FaultKind::clock_drift:
      return {Need::required, true, Need::no, {"drift_ppm"}};
    case FaultKind::clock_step:
      return {Need::required, true, Need::no, {"by"}};
    case FaultKind::store_pause:
      return {Need::no, false, Need::required, {}};
    case FaultKind::step_down:
    case FaultKind::stop:
      return {Need::required, false, Need::no, {}};
  }
  return {};
}

std::vector<std::string> fault_kind_names() {
  std::vector<std::string> names;
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    names.emplace_back(sim::fault_kind_name(static_cast<sim::FaultKind>(k)));
  }
  return names;
}

class Loader {
 public:
  Loader(const LoadOptions& options, Problems& problems) : options_(options), problems_(problems) {}

  // `document` is an object (the caller checked). `variant` is the selected variant, if any.
  std::optional<Scenario> load(const json& document, const std::optional<std::string>& variant);

 private:
  void problem(std::string pointer, std::string expected, std::string found,
               std::string hint = {}) {
    add(problems_, std::move(pointer), std::move(expected), std::move(found), std::move(hint));
  }

  static const json* get(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  // True when `value` is an object; reports each key outside `keys`, naming `what`.
  bool check_object(const json& value, const std::string& pointer,
                    const std::vector<std::string>& keys, const std::string& what);

  std::optional<std::string> read_string(const json& v, const std::string& pointer);
  std::optional<bool> read_bool(const json& v, const std::string& pointer);
  std::optional<sim::Duration> read_positive_duration(const json& v, const std::string& pointer);
  std::optional<sim::Time> read_time(const json& v, const std::string& pointer);
  std::optional<std::int64_t> read_drift_ppb(const json& v, const std::string& pointer);
  std::string node_expected() const;
  std::optional<sim::NodeId> read_node(const json& v, const std::string& pointer);
  std::optional<sim::Endpoint> read_endpoint(const json& v, const std::string& pointer);
  std::optional<sim::Target> read_target(const json& v, const std::string& pointer,
                                         bool allow_store);

  void read_nodes(const json& document);
  void read_duration(const json& document);
  sim::NetworkConfig read_network(const json& v);
  std::optional<DrawRange> read_range(const json& v, const std::string& pointer, bool drift);
  void read_clock(const json& v, const std::string& pointer, sim::ClockConfig& clock,
                  ClockRanges& ranges);
  void read_clocks(const json& v, Scenario& s);
  sim::StoreConfig read_store(const json& v);
  protocols::WorkloadConfig read_workload(const json& v);
  void read_limits(const json& v, Limits& limits);
  void read_protocol(const json* v, const protocols::WorkloadConfig& workload, Scenario& s);
  void read_protocol_choice(const json& document, Scenario& s);
  void read_protocol_at(const json& params, const std::string& name, const std::string& pointer,
                        const protocols::WorkloadConfig& workload, Scenario& s);
  void read_expect_by_protocol(const json& v, Scenario& s);
  std::optional<sim::FaultSpec> read_fault(const json& v, const std::string& pointer,
                                           RandomFault* generator = nullptr);
  std::vector<sim::FaultSpec> read_faults(const json& v);
  std::optional<RandomFault> read_random_fault(const json& v, const std::string& pointer);
  std::vector<RandomFault> read_random_faults(const json& v, const json* fixed);
  std::vector<analysis::Expectation> read_expect(const json& v, const std::string& pointer);
  std::optional<std::vector<analysis::Expectation>> read_variants(
      const json& v, const std::optional<std::string>& variant);

  const LoadOptions& options_;
  Problems& problems_;
  std::optional<std::size_t> nodes_;         // known once /nodes is valid
  std::optional<sim::Duration> duration_;    // known once /duration is valid
  std::optional<std::size_t> cluster_size_;  // /nodes if it is a number from 1, even over the limit
};

bool Loader::check_object(const json& value, const std::string& pointer,
                          const std::vector<std::string>& keys, const std::string& what) {
  if (!value.is_object()) {
    problem(pointer, "an object (" + what + ")", json_excerpt(value));
    return false;
  }
  for (const auto& [key, item] : value.items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    problem(child(pointer, key),
            fmt::format("one of the keys of {}: {}", what, joined(keys, false)),
            "unknown key " + json_quoted(key), did_you_mean(key, keys));
  }
  return true;
}

std::optional<std::string> Loader::read_string(const json& v, const std::string& pointer) {
  if (!v.is_string()) {
    problem(pointer, "a string", json_excerpt(v));
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<bool> Loader::read_bool(const json& v, const std::string& pointer) {
  if (!v.is_boolean()) {
    problem(pointer, "true or false", json_excerpt(v));
    return std::nullopt;
  }
  return v.get<bool>();
}

std::optional<sim::Duration> Loader::read_positive_duration(const json& v,
                                                            const std::string& pointer) {
  const auto d = protocols::read_duration(v, pointer, problems_);
  if (!d) return std::nullopt;
  if (d->count() == 0) {
    problem(pointer, "a duration above 0, such as \"100ms\"", json_excerpt(v));
    return std::nullopt;
  }
  return d;
}

// A moment of the run: from 0 up to (not including) the end.
std::optional<sim::Time> Loader::read_time(const json& v, const std::string& pointer) {
  const auto d = protocols::read_duration(v, pointer, problems_);
  if (!d) return std::nullopt;
  if (duration_ && *d >= *duration_) {
    problem(pointer,
            fmt::format("a time before the end of the run ({})", sim::format_duration(*duration_)),
            json_excerpt(v));
    return std::nullopt;
  }
  return sim::Time(*d);
}

std::optional<std::int64_t> Loader::read_drift_ppb(const json& v, const std::string& pointer) {
  const double ppm = v.is_number() ? v.get<double>() : std::nan("");
  if (!std::isfinite(ppm) || std::fabs(ppm) > kMaxDriftPpm) {
    problem(pointer,
            "a drift in ppm from -500000 to 500000 (a clock at most 50% fast or slow), such as 50",
            json_excerpt(v));
    return std::nullopt;
  }
  return std::llround(ppm * 1000.0);
}

std::string Loader::node_expected() const {
  if (!nodes_) return "a node id (a whole number from 0)";
  if (*nodes_ == 1) return "the node id 0 (the scenario has 1 node)";
  return fmt::format("a node id from 0 to {} (the scenario has {} nodes)", *nodes_ - 1, *nodes_);
}

std::optional<sim::NodeId> Loader::read_node(const json& v, const std::string& pointer) {
  const auto n = as_unsigned(v);
  if (!n || (nodes_ && *n >= *nodes_) ||
      *n > static_cast<std::uint64_t>(std::numeric_limits<sim::NodeId>::max())) {
    problem(pointer, node_expected(), json_excerpt(v));
    return std::nullopt;
  }
  return static_cast<sim::NodeId>(*n);
}

std::optional<sim::Endpoint> Loader::read_endpoint(const json& v, const std::string& pointer) {
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    if (text == "store") return sim::kStoreEndpoint;
    if (text == "sink") return sim::kSinkEndpoint;
  }
  if (v.is_number_integer()) return read_node(v, pointer);
  problem(pointer, node_expected() + ", \"store\" or \"sink\"", json_excerpt(v));
  return std::nullopt;
}

std::optional<sim::Target> Loader::read_target(const json& v, const std::string& pointer,
                                               bool allow_store) {
  std::vector<std::string> roles = {"leader", "follower", "random"};
  if (allow_store) roles.emplace_back("store");
  if (v.is_number_integer()) {
    const auto node = read_node(v, pointer);
    if (!node) return std::nullopt;
    return sim::Target{sim::TargetKind::node, *node};
  }
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    if (text == "leader") return sim::Target{sim::TargetKind::leader, sim::kNoNode};
    if (text == "follower") return sim::Target{sim::TargetKind::follower, sim::kNoNode};
    if (text == "random") return sim::Target{sim::TargetKind::random, sim::kNoNode};
    if (allow_store && text == "store") return sim::Target{sim::TargetKind::store, sim::kNoNode};
  }
  problem(pointer, node_expected() + " or one of " + joined(roles, true), json_excerpt(v),
          v.is_string() ? did_you_mean(v.get_ref<const std::string&>(), roles) : std::string());
  return std::nullopt;
}

void Loader::read_nodes(const json& document) {
  const json* v = get(document, "nodes");
  if (v == nullptr) {
    problem("/nodes", "the number of nodes, such as 5", kRequired);
    return;
  }
  const std::size_t limit = options_.limits.max_nodes;
  const auto n = as_unsigned(*v);
  if (!n || *n < 1) {
    problem("/nodes", "a whole number of nodes from 1", json_excerpt(*v));
    return;
  }
  if (*n > limit) {
    problem("/nodes", fmt::format("at most {} nodes (the limit on nodes)", limit),
            json_excerpt(*v));
    // The protocol's own checks still deserve a cluster size to judge by; the limit is the
    // largest one it can be handed safely.
    cluster_size_ = limit;
    return;
  }
  nodes_ = static_cast<std::size_t>(*n);
  cluster_size_ = nodes_;
}

void Loader::read_duration(const json& document) {
  const json* v = get(document, "duration");
  if (v == nullptr) {
    problem("/duration", "how long the run lasts, such as \"60s\"", kRequired);
    return;
  }
  const auto d = read_positive_duration(*v, "/duration");
  if (!d) return;
  const sim::Duration limit = options_.limits.max_duration;
  if (*d > limit) {
    problem(
        "/duration",
        fmt::format("at most {} (the limit on duration)", json_quoted(sim::format_duration(limit))),
        json_excerpt(*v));
    return;
  }
  duration_ = d;
}

sim::NetworkConfig Loader::read_network(const json& v) {
  sim::NetworkConfig network;
  if (!check_object(v, "/network", {"latency", "links", "loss", "duplicate", "in_flight"},
                    "the network section")) {
    return network;
  }
  if (const json* latency = get(v, "latency")) {
    if (auto d = protocols::read_distribution(*latency, "/network/latency", problems_)) {
      network.latency = *d;
    }
  }
  if (const json* links = get(v, "links")) {
    if (!links->is_array()) {
      problem("/network/links",
              "an array of links such as [{\"from\": 0, \"to\": 1, \"latency\": "
              "\"20ms\"}]",
              json_excerpt(*links));
    } else {
      for (std::size_t i = 0; i < links->size(); ++i) {
        const json& link = (*links)[i];
        const std::string pointer = child("/network/links", i);
        if (!check_object(link, pointer, {"from", "to", "both_ways", "latency"}, "a link")) {
          continue;
        }
        sim::LinkLatency out;
        bool ok = true;
        for (const char* end : {"from", "to"}) {
          const json* e = get(link, end);
          if (e == nullptr) {
            problem(child(pointer, end), node_expected() + ", \"store\" or \"sink\"", kRequired);
            ok = false;
            continue;
          }
          const auto endpoint = read_endpoint(*e, child(pointer, end));
          if (!endpoint) {
            ok = false;
          } else if (end[0] == 'f') {
            out.from = *endpoint;
          } else {
            out.to = *endpoint;
          }
        }
        if (ok && out.from == out.to) {
          problem(child(pointer, "to"), "an endpoint other than \"from\"",
                  json_excerpt(link.at("to")));
        }
        if (const json* both = get(link, "both_ways")) {
          if (auto b = read_bool(*both, child(pointer, "both_ways"))) out.both_ways = *b;
        }
        if (const json* latency = get(link, "latency")) {
          if (auto d =
                  protocols::read_distribution(*latency, child(pointer, "latency"), problems_)) {
            out.latency = *d;
          }
        } else {
          problem(child(pointer, "latency"), "the link's latency, such as \"20ms\"", kRequired);
        }
        network.links.push_back(std::move(out));
      }
    }
  }
  if (const json* loss = get(v, "loss")) {
    if (auto p = protocols::read_probability(*loss, "/network/loss", problems_)) network.loss = *p;
  }
  if (const json* dup = get(v, "duplicate")) {
    if (auto p = protocols::read_probability(*dup, "/network/duplicate", problems_)) {
      network.duplicate = *p;
    }
  }
  if (const json* in_flight = get(v, "in_flight")) {
    const std::vector<std::string> choices = {"drop_if_cut_on_arrival", "deliver"};
    if (in_flight->is_string() && *in_flight == "deliver") {
      network.in_flight = sim::InFlightPolicy::deliver;
    } else if (in_flight->is_string() && *in_flight == "drop_if_cut_on_arrival") {
      network.in_flight = sim::InFlightPolicy::drop_if_cut_on_arrival;
    } else {
      problem("/network/in_flight", "one of " + joined(choices, true), json_excerpt(*in_flight),
              in_flight->is_string()
                  ? did_you_mean(in_flight->get_ref<const std::string&>(), choices)
                  : std::string());
    }
  }
  return network;
}

// {"min": a, "max": b} for a clock's drift (numbers in ppm, to whole ppb) or offset (durations,
// may be negative, to whole ns); min <= max.
std::optional<DrawRange> Loader::read_range(const json& v, const std::string& pointer, bool drift) {
  const std::string what = drift ? "a drift range" : "an offset range";
  if (!check_object(v, pointer, {"min", "max"}, what)) return std::nullopt;
  const std::size_t before = problems_.size();
  std::optional<std::int64_t> bounds[2];
  const char* keys[2] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    const std::string bound_pointer = child(pointer, keys[i]);
    const json* bound = get(v, keys[i]);
    if (bound == nullptr) {
      problem(bound_pointer,
              drift ? "a drift in ppm, such as -50 (a range needs both min and max)"
                    : "a duration that may be negative, such as \"-50ms\" (a range needs both "
                      "min and max)",
              kRequired);
      continue;
    }
    if (drift) {
      bounds[i] = read_drift_ppb(*bound, bound_pointer);
    } else if (auto d = protocols::read_duration(*bound, bound_pointer, problems_, true)) {
      bounds[i] = d->count();
    }
  }
  if (problems_.size() != before || !bounds[0] || !bounds[1]) return std::nullopt;
  if (*bounds[0] > *bounds[1]) {
    problem(child(pointer, "max"), "a max of at least the min (" + json_excerpt(v.at("min")) + ")",
            json_excerpt(v.at("max")));
    return std::nullopt;
  }
  return DrawRange{*bounds[0], *bounds[1]};
}

// Each key present replaces that part of `clock` and `ranges` (which hold the defaults on entry):
// a fixed value clears the default's range, a range zeroes the fixed value it stands for.
void Loader::read_clock(const json& v, const std::string& pointer, sim::ClockConfig& clock,
                        ClockRanges& ranges) {
  if (!check_object(v, pointer, {"offset", "drift_ppm", "steps"}, "a clock")) return;
  if (const json* offset = get(v, "offset")) {
    const std::string offset_pointer = child(pointer, "offset");
    if (offset->is_object()) {
      if (auto range = read_range(*offset, offset_pointer, false)) {
        ranges.offset_ns = *range;
        clock.offset = sim::Duration(0);
      }
    } else if (auto d = protocols::read_duration(*offset, offset_pointer, problems_, true)) {
      clock.offset = *d;
      ranges.offset_ns.reset();
    }
  }
  if (const json* drift = get(v, "drift_ppm")) {
    const std::string drift_pointer = child(pointer, "drift_ppm");
    if (drift->is_object()) {
      if (auto range = read_range(*drift, drift_pointer, true)) {
        ranges.drift_ppb = *range;
        clock.drift_ppb = 0;
      }
    } else if (auto ppb = read_drift_ppb(*drift, drift_pointer)) {
      clock.drift_ppb = *ppb;
      ranges.drift_ppb.reset();
    }
  }
  if (const json* steps = get(v, "steps")) {
    const std::string steps_pointer = child(pointer, "steps");
    if (!steps->is_array()) {
      problem(steps_pointer, "an array of steps such as [{\"at\": \"10s\", \"by\": \"-500ms\"}]",
              json_excerpt(*steps));
      return;
    }
    clock.steps.clear();
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const json& step = (*steps)[i];
      const std::string step_pointer = child(steps_pointer, i);
      if (!check_object(step, step_pointer, {"at", "by"}, "a clock step")) continue;
      sim::ClockStep out;
      bool ok = true;
      if (const json* at = get(step, "at")) {
        if (auto t = read_time(*at, child(step_pointer, "at"))) {
          out.at = *t;
        } else {
          ok = false;
        }
      } else {
        problem(child(step_pointer, "at"), "the true time of the step, such as \"10s\"", kRequired);
        ok = false;
      }
      if (const json* by = get(step, "by")) {
        if (auto d = protocols::read_duration(*by, child(step_pointer, "by"), problems_, true)) {
          out.by = *d;
        } else {
          ok = false;
        }
      } else {
        problem(child(step_pointer, "by"), "how far the clock jumps, such as \"-500ms\"",
                kRequired);
        ok = false;
      }
      if (ok) clock.steps.push_back(out);
    }
  }
}

void Loader::read_clocks(const json& v, Scenario& s) {
  sim::WorldConfig& world = s.world;
  if (!check_object(v, "/clocks", {"default", "nodes", "store"}, "the clocks section")) return;
  sim::ClockConfig base;
  ClockRanges base_ranges;
  if (const json* d = get(v, "default")) read_clock(*d, "/clocks/default", base, base_ranges);
  world.clocks.assign(nodes_.value_or(0), base);
  s.clock_ranges.assign(nodes_.value_or(0), base_ranges);
  if (const json* nodes = get(v, "nodes")) {
    if (!nodes->is_object()) {
      problem("/clocks/nodes",
              "an object from node id to clock, such as {\"1\": {\"drift_ppm\": 50}}",
              json_excerpt(*nodes));
    } else {
      for (const auto& [key, clock] : nodes->items()) {
        const std::string pointer = child("/clocks/nodes", key);
        const auto id = parse_index(key);
        sim::ClockConfig scratch = base;
        ClockRanges scratch_ranges = base_ranges;
        if (!id || (nodes_ && static_cast<std::size_t>(*id) >= *nodes_)) {
          problem(pointer, node_expected() + " as the key", json_quoted(key));
          read_clock(clock, pointer, scratch, scratch_ranges);  // still report what is wrong inside
          continue;
        }
        const auto index = static_cast<std::size_t>(*id);
        if (index < world.clocks.size()) {
          read_clock(clock, pointer, world.clocks[index], s.clock_ranges[index]);
        } else {
          read_clock(clock, pointer, scratch, scratch_ranges);
        }
      }
    }
  }
  if (const json* store = get(v, "store")) {
    read_clock(*store, "/clocks/store", world.store_clock, s.store_clock_ranges);
  }
}

sim::StoreConfig Loader::read_store(const json& v) {
  sim::StoreConfig store;
  if (!check_object(v, "/store", {"min_ttl", "expiry_scan_interval"}, "the store section")) {
    return store;
  }
  if (const json* min_ttl = get(v, "min_ttl")) {
    if (auto d = protocols::read_duration(*min_ttl, "/store/min_ttl", problems_)) {
      store.min_ttl = *d;
    }
  }
  if (const json* scan = get(v, "expiry_scan_interval")) {
    if (auto d = protocols::read_duration(*scan, "/store/expiry_scan_interval", problems_)) {
      store.expiry_scan_interval = *d;
    }
  }
  return store;
}

// A file may lower or raise the limits on events and trace size, never past their ceilings: a run
// that needs more is better split (a shorter duration, no trace, or a sweep).
void Loader::read_limits(const json& v, Limits& limits) {
  if (!check_object(v, "/limits", {"events", "trace_bytes"}, "the limits section")) return;
  auto read = [&](const char* key, std::uint64_t ceiling, const char* what, std::uint64_t& out) {
    const json* value = get(v, key);
    if (value == nullptr) return;
    const auto n = as_unsigned(*value);
    if (!n || *n == 0 || *n > ceiling) {
      problem(child("/limits", key), fmt::format("a whole number from 1 to {} ({})", ceiling, what),
              json_excerpt(*value));
      return;
    }
    out = *n;
  };
  read("events", kEventsCeiling, "the ceiling on events per run", limits.max_events);
  read("trace_bytes", kTraceBytesCeiling, "the ceiling on trace size", limits.max_trace_bytes);
}

protocols::WorkloadConfig Loader::read_workload(const json& v) {
  protocols::WorkloadConfig workload;
  if (!check_object(v, "/workload", {"enabled", "interval", "work", "send_delay"},
                    "the workload section")) {
    return workload;
  }
  if (const json* enabled = get(v, "enabled")) {
    if (auto b = read_bool(*enabled, "/workload/enabled")) workload.enabled = *b;
  }
  if (const json* interval = get(v, "interval")) {
    if (auto d = read_positive_duration(*interval, "/workload/interval")) {
      if (*d < protocols::kShortestTimer) {
        problem("/workload/interval",
                fmt::format("a duration of at least {} (the shortest protocol timer)",
                            json_quoted(sim::format_duration(protocols::kShortestTimer))),
                json_excerpt(*interval));
      } else {
        workload.interval = *d;
      }
    }
  }
  if (const json* work = get(v, "work")) {
    if (auto d = protocols::read_distribution(*work, "/workload/work", problems_)) {
      workload.work = *d;
    }
  }
  if (const json* send_delay = get(v, "send_delay")) {
    if (auto d = protocols::read_distribution(*send_delay, "/workload/send_delay", problems_)) {
      workload.send_delay = *d;
    }
  }
  return workload;
}

// Which protocol runs, with which parameters: the file's `protocol`, or the one LoadOptions names,
// whose parameters come from `protocols.<name>`. Every entry of `protocols` is validated even when
// another protocol runs, so a file is either valid for `compare` or says why not.
void Loader::read_protocol_choice(const json& document, Scenario& s) {
  const json* section = get(document, "protocols");
  const json* own = get(document, "protocol");
  const std::vector<std::string> names = protocols::protocol_names();
  // The protocol that runs: --protocol, else the one the file's `protocol` names.
  std::optional<std::string> running = options_.protocol;
  if (!running && own != nullptr && own->is_object() && own->contains("name") &&
      own->at("name").is_string()) {
    running = own->at("name").get<std::string>();
  }
  const json* entry = nullptr;  // protocols.<running>, when the file has it
  if (section != nullptr) {
    if (!section->is_object()) {
      problem("/protocols",
              "an object from protocol name to its parameters, such as "
              "{\"raft\": {\"election_timeout_min\": \"150ms\"}}",
              json_excerpt(*section));
    } else {
      for (const auto& [name, params] : section->items()) {
        const std::string pointer = child("/protocols", name);
        const protocols::ProtocolInfo* info = protocols::find_protocol(name);
        if (info == nullptr) {
          problem(pointer, "the name of a protocol: one of " + joined(names, true),
                  json_quoted(name), did_you_mean(name, names));
          continue;
        }
        if (!params.is_object()) {
          problem(pointer, "an object of " + name + " parameters", json_excerpt(params));
          continue;
        }
        if (params.contains("name")) {
          problem(child(pointer, "name"), "parameters only (the key names the protocol)",
                  json_excerpt(params.at("name")));
          continue;
        }
        if (running && *running == name) {
          entry = &params;  // validated below, together with `protocol` when it names it too
        } else if (cluster_size_) {
          Scenario scratch;
          read_protocol_at(params, name, pointer, s.workload, scratch);
        }
      }
    }
  }
  if (!options_.protocol) {
    if (entry == nullptr) {
      read_protocol(own, s.workload, s);
      return;
    }
  } else if (protocols::find_protocol(*options_.protocol) == nullptr) {
    problem("", "a protocol to run: one of " + joined(names, true), json_quoted(*options_.protocol),
            did_you_mean(*options_.protocol, names));
    return;
  }
  // The running protocol's parameters: the `protocol` object when it names it, and
  // protocols.<name> on top. A key both give differently is an error, so that no value a user
  // wrote (or --set) is silently ignored.
  json params = json::object();
  std::string pointer = entry != nullptr ? child("/protocols", *running) : "/protocol";
  std::set<std::string> from_entry;
  if (own != nullptr && own->is_object() && own->contains("name") && own->at("name") == *running) {
    params = *own;
    params.erase("name");
    pointer = "/protocol";
  }
  if (entry != nullptr) {
    for (const auto& [key, value] : entry->items()) {
      if (params.contains(key) && params[key] != value) {
        problem(child(child("/protocols", *running), key),
                fmt::format("the value /protocol/{} gives, or no {} here: the parameter is given "
                            "twice for protocol {}",
                            key, json_quoted(key), *running),
                json_excerpt(value));
        continue;
      }
      params[key] = value;
      from_entry.insert(key);
    }
  }
  const std::size_t before = problems_.size();
  read_protocol_at(params, *running, pointer, s.workload, s);
  // A problem in a key that came from protocols.<name> is reported where the user wrote it.
  for (std::size_t i = before; i < problems_.size(); ++i) {
    std::string& where = problems_[i].pointer;
    for (const std::string& key : from_entry) {
      const std::string from = child(pointer, key);
      if (pointer != child("/protocols", *running) &&
          (where == from || starts_with(where, from + "/"))) {
        where = child(child("/protocols", *running), key) + where.substr(from.size());
      }
    }
  }
}

void Loader::read_expect_by_protocol(const json& v, Scenario& s) {
  const std::vector<std::string> names = protocols::protocol_names();
  if (!v.is_object()) {
    problem("/expect_by_protocol", "an object from protocol name to an expect block",
            json_excerpt(v));
    return;
  }
  for (const auto& [name, block] : v.items()) {
    const std::string pointer = child("/expect_by_protocol", name);
    if (protocols::find_protocol(name) == nullptr) {
      problem(pointer, "the name of a protocol: one of " + joined(names, true), json_quoted(name),
              did_you_mean(name, names));
      continue;
    }
    std::vector<analysis::Expectation> extra = read_expect(block, pointer);
    if (name != s.protocol) continue;
    // A protocol's own bound on a metric replaces the common one.
    for (analysis::Expectation& e : extra) {
      std::erase_if(s.expect, [&](const analysis::Expectation& x) { return x.metric == e.metric; });
      s.expect.push_back(std::move(e));
    }
  }
}

void Loader::read_protocol(const json* v, const protocols::WorkloadConfig& workload, Scenario& s) {
  const std::vector<std::string> names = protocols::protocol_names();
  const std::string name_expected = "the name of a protocol: one of " + joined(names, true);
  if (v == nullptr) {
    problem("/protocol", "a protocol object such as {\"name\": \"lease\"}", kRequired);
    return;
  }
  if (!v->is_object()) {
    problem("/protocol", "a protocol object such as {\"name\": \"lease\"}", json_excerpt(*v));
    return;
  }
  const json* name = get(*v, "name");
  if (name == nullptr) {
    problem("/protocol/name", name_expected, kRequired);
    return;
  }
  const protocols::ProtocolInfo* info =
      name->is_string() ? protocols::find_protocol(name->get_ref<const std::string&>()) : nullptr;
  if (info == nullptr) {
    problem("/protocol/name", name_expected, json_excerpt(*name),
            name->is_string() ? did_you_mean(name->get_ref<const std::string&>(), names)
                              : std::string());
    return;
  }
  json params = *v;
  params.erase("name");
  read_protocol_at(params, info->name, "/protocol", workload, s);
}

void Loader::read_protocol_at(const json& params, const std::string& name,
                              const std::string& pointer, const protocols::WorkloadConfig& workload,
                              Scenario& s) {
  const protocols::ProtocolInfo* info = protocols::find_protocol(name);
  s.protocol = info->name;
  s.protocol_params = params;
  // The protocol checks its parameters against the cluster's size; without a size at all (already
  // reported) its verdict would be noise.
  if (!cluster_size_) return;
  const std::size_t before = problems_.size();
  try {
    auto prepared = info->prepare(s.protocol_params, pointer,
                                  protocols::ClusterInfo{*cluster_size_, workload}, problems_);
    if (prepared) {
      s.prepared = std::move(*prepared);
    } else if (problems_.size() == before) {
      problem(pointer, "parameters the " + info->name + " protocol accepts",
              "a refusal without a reason");
    }
  } catch (const std::exception& e) {
    problem(pointer, "parameters the " + info->name + " protocol accepts",
            std::string("an error: ") + e.what());
  }
}

// A fault of `faults`, or with `generator` the fault part of a `random_faults` entry: the same keys
// and messages, except that `at` is replaced by the generator's keys (read by the caller) and
// `duration` may be a distribution, stored in the generator.
std::optional<sim::FaultSpec> Loader::read_fault(const json& v, const std::string& pointer,
                                                 RandomFault* generator) {
  if (!v.is_object()) {
    problem(pointer,
            "a fault object such as {\"at\": \"5s\", \"kind\": \"crash\", \"target\": "
            "\"leader\"}",
            json_excerpt(v));
    return std::nullopt;
  }
  const std::size_t before = problems_.size();
  const std::vector<std::string> kinds = fault_kind_names();
  const json* kind_value = get(v, "kind");
  if (kind_value == nullptr) {
    problem(child(pointer, "kind"), "one of the fault kinds " + joined(kinds, true), kRequired);
    return std::nullopt;
  }
  std::optional<sim::FaultKind> kind;
  if (kind_value->is_string()) {
    for (int k = 0; k < sim::kFaultKindCount; ++k) {
      if (*kind_value == kinds[static_cast<std::size_t>(k)]) kind = static_cast<sim::FaultKind>(k);
    }
  }
  if (!kind) {
    problem(child(pointer, "kind"), "one of the fault kinds " + joined(kinds, true),
            json_excerpt(*kind_value),
            kind_value->is_string() ? did_you_mean(kind_value->get_ref<const std::string&>(), kinds)
                                    : std::string());
    return std::nullopt;
  }
  const FaultShape shape = shape_of(*kind);
  std::vector<std::string> keys = {"at", "kind"};
  if (generator != nullptr) keys = {"kind", "every", "from", "until", "max"};
  if (shape.target != Need::no) keys.emplace_back("target");
  if (shape.duration != Need::no) keys.emplace_back("duration");
  keys.insert(keys.end(), shape.keys.begin(), shape.keys.end());
  const std::string kind_name = sim::fault_kind_name(*kind);
  if (generator == nullptr) {
    check_object(v, pointer, keys, "a " + json_quoted(kind_name) + " fault");
  } else {
    // `at` gets a message of its own below rather than "unknown key".
    json without_at = v;
    without_at.erase("at");
    check_object(without_at, pointer, keys, "a " + json_quoted(kind_name) + " random fault");
  }

  sim::FaultSpec fault;
  fault.kind = *kind;
  auto required = [&](const char* key, const std::string& expected) -> const json* {
    const json* field = get(v, key);
    if (field == nullptr) {
      problem(
          child(pointer, key), expected,
          fmt::format("nothing (a {} fault needs {})", json_quoted(kind_name), json_quoted(key)));
    }
    return field;
  };

  if (generator != nullptr) {
    if (const json* at = get(v, "at")) {
      problem(child(pointer, "at"), "no \"at\" (random faults draw their times from \"every\")",
              json_excerpt(*at));
    }
  } else if (const json* at = required("at", "when the fault happens, such as \"5s\"")) {
    if (auto t = read_time(*at, child(pointer, "at"))) fault.at = *t;
  }
  if (shape.target == Need::required) {
    if (const json* target = required("target", node_expected() + " or \"leader\", \"follower\", "
                                                                  "\"random\"")) {
      if (auto t = read_target(*target, child(pointer, "target"), shape.store_target)) {
        fault.target = *t;
      }
    }
  }
  if (shape.duration != Need::no) {
    const json* duration = shape.duration == Need::required
                               ? required("duration", "how long it lasts, such as \"6s\"")
                               : get(v, "duration");
    if (duration != nullptr && generator != nullptr && duration->is_object()) {
      // Each generated fault draws its own duration.
      generator->duration =
          protocols::read_distribution(*duration, child(pointer, "duration"), problems_);
    } else if (duration != nullptr) {
      if (auto d = read_positive_duration(*duration, child(pointer, "duration"))) {
        fault.duration = *d;
      }
    }
  }
  for (const std::string& key : shape.keys) {
    const std::string key_pointer = child(pointer, key);
    if (key == "groups") {
      const json* groups = required("groups", "an array of at least two groups of endpoints");
      if (groups == nullptr) continue;
      if (!groups->is_array() || groups->size() < 2) {
        problem(key_pointer,
                "an array of at least two groups, each an array of node ids, \"store\", "
                "\"sink\", \"leader\", \"follower\" or \"rest\", such as "
                "[[\"leader\", \"follower\"], [\"rest\", \"store\"]]",
                json_excerpt(*groups));
        continue;
      }
      std::set<sim::Endpoint> seen;
      for (std::size_t g = 0; g < groups->size(); ++g) {
        const json& group = (*groups)[g];
        const std::string group_pointer = child(key_pointer, g);
        if (!group.is_array() || group.empty()) {
          problem(group_pointer, "a non-empty array of node ids, \"store\" or \"sink\"",
                  json_excerpt(group));
          continue;
        }
        std::vector<sim::Endpoint> members;
        for (std::size_t i = 0; i < group.size(); ++i) {
          // Role members, resolved when the fault fires: "leader" and "rest" at most once in the
          // whole fault, "follower" as often as wanted (a different follower each time).
          if (group[i].is_string()) {
            const auto& text = group[i].get_ref<const std::string&>();
            const sim::Endpoint role = text == "leader"     ? sim::kLeaderMember
                                       : text == "follower" ? sim::kFollowerMember
                                       : text == "rest"     ? sim::kRestMember
                                                            : sim::kNoNode;
            if (role != sim::kNoNode) {
              if (role != sim::kFollowerMember && !seen.insert(role).second) {
                problem(child(group_pointer, i), "each endpoint in at most one group",
                        json_excerpt(group[i]) + " again");
                continue;
              }
              members.push_back(role);
              continue;
            }
          }
          const auto e = read_endpoint(group[i], child(group_pointer, i));
          if (!e) continue;
          if (!seen.insert(*e).second) {
            problem(child(group_pointer, i), "each endpoint in at most one group",
                    json_excerpt(group[i]) + " again");
            continue;
          }
          members.push_back(*e);
        }
        fault.groups.push_back(std::move(members));
      }
    } else if (key == "from" || key == "to") {
      const json* end = required(key.c_str(), node_expected() + ", \"store\" or \"sink\"");
      if (end == nullptr) continue;
      if (auto e = read_endpoint(*end, key_pointer)) (key == "from" ? fault.from : fault.to) = *e;
    } else if (key == "probability") {
      const json* p = required("probability", "a probability from 0 to 1, such as 0.2");
      if (p == nullptr) continue;
      if (auto ppm = protocols::read_probability(*p, key_pointer, problems_)) {
        fault.probability = *ppm;
      }
    } else if (key == "extra") {
      const json* extra = required("extra", "the extra latency, a duration or a distribution");
      if (extra == nullptr) continue;
      if (auto d = protocols::read_distribution(*extra, key_pointer, problems_)) {
        fault.extra_latency = *d;
      }
    } else if (key == "offset" || key == "by") {
      const json* amount =
          required(key.c_str(), "a duration that may be negative, such as \"-500ms\"");
      if (amount == nullptr) continue;
      if (auto d = protocols::read_duration(*amount, key_pointer, problems_, true)) {
        fault.clock_amount = *d;
      }
    } else if (key == "drift_ppm") {
      const json* drift = required("drift_ppm", "a drift in ppm, such as 50");
      if (drift == nullptr) continue;
      if (auto ppb = read_drift_ppb(*drift, key_pointer)) fault.drift_ppb = *ppb;
    }
  }
  if (*kind == sim::FaultKind::cut && problems_.size() == before && fault.from == fault.to) {
    problem(child(pointer, "to"), "an endpoint other than \"from\"", json_excerpt(v.at("to")));
  }
  if (problems_.size() != before) return std::nullopt;
  return fault;
}

std::vector<sim::FaultSpec> Loader::read_faults(const json& v) {
  std::vector<sim::FaultSpec> faults;
  if (!v.is_array()) {
    problem("/faults", "an array of faults", json_excerpt(v));
    return faults;
  }
  const std::size_t limit = options_.limits.max_faults;
  if (v.size() > limit) {
    problem("/faults", fmt::format("at most {} faults (the limit on faults)", limit),
            fmt::format("{} faults", v.size()));
    return faults;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto fault = read_fault(v[i], child("/faults", i))) faults.push_back(std::move(*fault));
  }
  return faults;
}

std::optional<RandomFault> Loader::read_random_fault(const json& v, const std::string& pointer) {
  if (!v.is_object()) {
    problem(pointer,
            "a random fault object such as {\"every\": {\"dist\": \"exponential\", \"mean\": "
            "\"20s\"}, \"kind\": \"pause\", \"target\": \"leader\", \"duration\": \"2s\"}",
            json_excerpt(v));
    return std::nullopt;
  }
  const std::size_t before = problems_.size();
  RandomFault out;
  if (auto fault = read_fault(v, pointer, &out)) out.fault = std::move(*fault);

  if (const json* every = get(v, "every")) {
    if (auto d = protocols::read_distribution(*every, child(pointer, "every"), problems_)) {
      out.every = *d;
    }
  } else {
    problem(child(pointer, "every"),
            "the time between faults, a duration or a distribution such as {\"dist\": "
            "\"exponential\", \"mean\": \"20s\"}",
            kRequired);
  }
  bool from_ok = true;
  if (const json* from = get(v, "from")) {
    const auto t = read_time(*from, child(pointer, "from"));
    if (t) out.from = *t;
    from_ok = t.has_value();
  }
  if (duration_) out.until = sim::Time(*duration_);
  if (const json* until = get(v, "until")) {
    const std::string until_pointer = child(pointer, "until");
    if (auto d = protocols::read_duration(*until, until_pointer, problems_)) {
      if (duration_ && *d > *duration_) {
        problem(until_pointer,
                fmt::format("a time no later than the end of the run ({})",
                            sim::format_duration(*duration_)),
                json_excerpt(*until));
      } else if (from_ok && *d <= out.from.since_start()) {
        problem(
            until_pointer,
            fmt::format("a time after \"from\" ({})", sim::format_duration(out.from.since_start())),
            json_excerpt(*until));
      } else {
        out.until = sim::Time(*d);
      }
    }
  }
  if (const json* max = get(v, "max")) {
    const std::size_t limit = options_.limits.max_faults;
    const auto n = as_unsigned(*max);
    if (!n || *n < 1 || *n > limit) {
      problem(child(pointer, "max"),
              fmt::format("a whole number of faults from 1 to {} (the limit on faults)", limit),
              json_excerpt(*max));
    } else {
      out.max = static_cast<std::size_t>(*n);
    }
  }
  if (problems_.size() != before) return std::nullopt;
  return out;
}

// `fixed` is the file's `faults`, if any: its faults and every generator's `max` share the limit
// on faults, so a run never holds more than the limit whatever it draws.
std::vector<RandomFault> Loader::read_random_faults(const json& v, const json* fixed) {
  std::vector<RandomFault> generators;
  if (!v.is_array()) {
    problem("/random_faults", "an array of random faults", json_excerpt(v));
    return generators;
  }
  const std::size_t limit = options_.limits.max_faults;
  if (v.size() > limit) {
    problem("/random_faults", fmt::format("at most {} random faults (the limit on faults)", limit),
            fmt::format("{} random faults", v.size()));
    return generators;
  }
  const std::uint64_t fixed_count = fixed != nullptr && fixed->is_array() ? fixed->size() : 0;
  std::uint64_t max_sum = 0;  // at most limit * limit: no overflow
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto g = read_random_fault(v[i], child("/random_faults", i))) {
      max_sum += g->max;
      generators.push_back(std::move(*g));
    }
  }
  if (fixed_count + max_sum > limit) {
    problem("/random_faults",
            fmt::format("at most {} faults (the limit on faults), counting every generator's "
                        "\"max\" (1000 when not given) and the fixed faults",
                        limit),
            fmt::format("{} ({} fixed, {} from the generators' \"max\")", fixed_count + max_sum,
                        fixed_count, max_sum));
  }
  return generators;
}

std::vector<analysis::Expectation> Loader::read_expect(const json& v, const std::string& pointer) {
  std::vector<analysis::Expectation> out;
  if (!v.is_object()) {
    problem(pointer,
            "an object of bounds on metrics, such as {\"split_brain_time\": {\"max\": \"0s\"}}",
            json_excerpt(v));
    return out;
  }
  std::vector<std::string> metrics;
  for (const analysis::MetricInfo& m : analysis::metric_catalogue()) metrics.push_back(m.name);
  for (const auto& item : v.items()) {
    // Named references, not a structured binding: the lambda below captures them.
    const std::string& name = item.key();
    const json& bound = item.value();
    const std::string metric_pointer = child(pointer, name);
    const analysis::MetricInfo* info = analysis::find_metric(name);
    if (info == nullptr) {
      problem(metric_pointer, "the name of a metric (`electsim list` shows them)",
              "unknown metric " + json_quoted(name), did_you_mean(name, metrics));
      continue;
    }
    if (!check_object(bound, metric_pointer, {"min", "max", "observed"},
                      "a bound on " + json_quoted(name))) {
      continue;
    }
    if (bound.empty()) {
      problem(metric_pointer, "at least one of min, max, observed", "{}");
      continue;
    }
    analysis::Expectation e;
    e.metric = name;
    e.pointer = metric_pointer;
    bool ok = true;
    auto read_bound = [&](const char* key) -> std::optional<double> {
      const json* b = get(bound, key);
      if (b == nullptr) return std::nullopt;
      const std::string bound_pointer = child(metric_pointer, key);
      if (info->unit == analysis::MetricUnit::duration) {
        const auto d = protocols::read_duration(*b, bound_pointer, problems_);
        if (!d) ok = false;
        return d ? std::optional<double>(static_cast<double>(d->count())) : std::nullopt;
      }
      if (!b->is_number()) {
        problem(bound_pointer, "a number", json_excerpt(*b));
        ok = false;
        return std::nullopt;
      }
      return b->get<double>();
    };
    e.min = read_bound("min");
    e.max = read_bound("max");
    if (const json* observed = get(bound, "observed")) {
      if (auto b = read_bool(*observed, child(metric_pointer, "observed"))) {
        e.require_observed = *b;
      } else {
        ok = false;
      }
    }
    if (e.min && e.max && *e.min > *e.max) {
      problem(child(metric_pointer, "max"),
              "a max of at least the min (" + json_excerpt(bound.at("min")) + ")",
              json_excerpt(bound.at("max")));
      ok = false;
    }
    if (ok) out.push_back(std::move(e));
  }
  return out;
}

// Checks every variant's shape (so a typo in a variant is found without selecting it) and returns
// the selected variant's expect block if it has one.
std::optional<std::vector<analysis::Expectation>> Loader::read_variants(
    const json& v, const std::optional<std::string>& variant) {
  std::optional<std::vector<analysis::Expectation>> selected;
  if (!v.is_object()) {
    problem("/variants", "an object from variant name to variant", json_excerpt(v));
    return selected;
  }
  if (v.size() > kMaxVariants) {
    // Each variant is validated as a whole scenario; the cap keeps that linear in the file.
    problem("/variants", fmt::format("at most {} variants (the limit on variants)", kMaxVariants),
            fmt::format("{} variants", v.size()));
    return selected;
  }
  for (const auto& [name, body] : v.items()) {
    const std::string pointer = child("/variants", name);
    if (name.empty()) problem(pointer, "a non-empty variant name", "\"\"");
    if (!check_object(body, pointer, {"description", "set", "expect"}, "a variant")) continue;
    if (const json* description = get(body, "description")) {
      read_string(*description, child(pointer, "description"));
    }
    if (const json* set = get(body, "set")) {
      if (!set->is_object()) {
        problem(child(pointer, "set"),
                "an object from dotted path to value, such as {\"protocol.fencing\": false}",
                json_excerpt(*set));
      } else {
        for (const auto& [path, value] : set->items()) {
          if (!valid_path(path)) {
            problem(child(child(pointer, "set"), path),
                    "a dotted path such as \"protocol.ttl\" or \"faults.0.at\" as the key",
                    json_quoted(path));
          }
        }
      }
    }
    if (const json* expect = get(body, "expect")) {
      auto expectations = read_expect(*expect, child(pointer, "expect"));
      if (variant && *variant == name) selected = std::move(expectations);
    }
  }
  return selected;
}

std::optional<Scenario> Loader::load(const json& document,
                                     const std::optional<std::string>& variant) {
  const std::size_t before = problems_.size();
  Scenario s;
  check_object(document, "",
               {"name", "description", "seed", "duration", "nodes", "protocol", "network", "clocks",
                "store", "sink", "faults", "random_faults", "workload", "expect", "variants",
                "limits", "protocols", "expect_by_protocol", "sweep"},
               "a scenario");

  if (const json* name = get(document, "name")) {
    if (auto text = read_string(*name, "/name")) {
      if (text->empty()) problem("/name", "a non-empty name", "\"\"");
      s.name = *text;
    }
  } else {
    problem("/name", "a name for the scenario, such as \"lease-leader-crash\"", kRequired);
  }
  if (const json* description = get(document, "description")) {
    if (auto text = read_string(*description, "/description")) s.description = *text;
  }
  if (const json* seed = get(document, "seed")) {
    if (const auto n = as_unsigned(*seed)) {
      s.world.seed = *n;
    } else {
      problem("/seed", "a whole number from 0 to 2^64-1", json_excerpt(*seed));
    }
  }
  if (options_.seed) s.world.seed = *options_.seed;
  read_duration(document);
  read_nodes(document);

  if (const json* network = get(document, "network")) s.world.network = read_network(*network);
  if (const json* clocks = get(document, "clocks")) {
    read_clocks(*clocks, s);
  } else {
    s.world.clocks.assign(nodes_.value_or(0), sim::ClockConfig{});
    s.clock_ranges.assign(nodes_.value_or(0), ClockRanges{});
  }
  if (const json* store = get(document, "store")) s.world.store = read_store(*store);
  std::optional<bool> sink_fencing;
  if (const json* sink = get(document, "sink")) {
    if (check_object(*sink, "/sink", {"fencing"}, "the sink section")) {
      if (const json* fencing = get(*sink, "fencing")) {
        sink_fencing = read_bool(*fencing, "/sink/fencing");
      }
    }
  }
  if (const json* workload = get(document, "workload")) s.workload = read_workload(*workload);
  read_protocol_choice(document, s);
  if (const json* faults = get(document, "faults")) s.world.faults = read_faults(*faults);
  if (const json* random = get(document, "random_faults")) {
    s.random_faults = read_random_faults(*random, get(document, "faults"));
  }
  if (const json* expect = get(document, "expect")) s.expect = read_expect(*expect, "/expect");
  if (const json* variants = get(document, "variants")) {
    if (auto selected = read_variants(*variants, variant)) s.expect = std::move(*selected);
  }
  if (const json* by_protocol = get(document, "expect_by_protocol")) {
    read_expect_by_protocol(*by_protocol, s);
  }

  Limits limits = options_.limits;
  if (const json* section = get(document, "limits")) read_limits(*section, limits);
  // The sweep command validates the section's contents (docs/sweeps.md); here only its shape.
  if (const json* sweep = get(document, "sweep")) {
    if (sweep->is_object()) {
      s.sweep = *sweep;
    } else {
      problem("/sweep", "an object (the sweep command's defaults, see docs/sweeps.md)",
              json_excerpt(*sweep));
    }
  }

  if (problems_.size() != before) return std::nullopt;
  s.world.duration = *duration_;
  s.world.node_count = *nodes_;
  s.world.sink.fencing = sink_fencing.value_or(s.prepared.fencing.value_or(true));
  s.world.limits.max_events = limits.max_events;
  s.limits = limits;
  s.variant = variant.value_or("");
  return s;
}

// ---- Duplicate keys -------------------------------------------------------------------------

// nlohmann::json keeps the last of two equal keys without a word; a scenario with two "expect"
// blocks would silently lose one. The parser callback sees every key, so we find them here.
class DuplicateKeyFinder {
 public:
  explicit DuplicateKeyFinder(Problems& problems) : problems_(problems) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        start_element();
        frames_.push_back(Frame{event == json::parse_event_t::object_start, {}, {}, 0});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        if (frames_.empty() || !parsed.is_string()) break;
        Frame& top = frames_.back();
        const auto& key = parsed.get_ref<const std::string&>();
        top.key = key;
        if (!top.keys.insert(key).second) {
          add(problems_, pointer_of_current(), "each key once in an object",
              json_quoted(key) + " a second time (the later value would win)");
        }
        break;
      }
      case json::parse_event_t::value:
        start_element();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;           // objects: the key being read
    std::size_t elements = 0;  // arrays: elements seen so far
  };

  void start_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().elements;
  }

  std::string pointer_of_current() const {
    std::string pointer;
    for (const Frame& f : frames_) {
      pointer = f.object ? child(pointer, f.key) : child(pointer, f.elements - 1);
    }
    return pointer;
  }

  Problems& problems_;
  std::vector<Frame> frames_;
};

// "parse error at line 3, column 5: syntax error while parsing object - unexpected '}'" ->
// "a syntax error at line 3, column 5 (while parsing object - unexpected '}')".
std::string describe_parse_error(const std::string& what) {
  const std::size_t at = what.find("at line ");
  if (at == std::string::npos) return what;
  std::string rest = what.substr(at);
  const std::size_t colon = rest.find(": ");
  if (colon == std::string::npos) return "a syntax error " + rest;
  std::string where = rest.substr(0, colon);
  std::string detail = rest.substr(colon + 2);
  if (starts_with(detail, "syntax error ")) detail = detail.substr(13);
  return "a syntax error " + where + " (" + detail + ")";
}

}  // namespace

std::optional<Override> parse_override(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  return Override{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

std::vector<std::string> LoadResult::messages() const {
  std::vector<std::string> out;
  out.reserve(problems.size());
  for (const Problem& p : problems) out.push_back(source + ": " + p.format());
  return out;
}

std::vector<std::string> variant_names(const nlohmann::json& document) {
  std::vector<std::string> names;
  if (!document.is_object()) return names;
  const auto it = document.find("variants");
  if (it == document.end() || !it->is_object()) return names;
  for (const auto& [name, body] : it->items()) names.push_back(name);
  return names;
}

LoadResult load_scenario_json(const nlohmann::json& document, std::string source,
                              const LoadOptions& options) {
  LoadResult result;
  result.source = std::move(source);
  Problems& problems = result.problems;
  try {
    if (!document.is_object()) {
      add(problems, "", "a JSON object with the scenario's keys", json_excerpt(document));
      return result;
    }
    json doc = document;
    std::vector<Applied> applied;

    // A variant's `set` entries go first, then the command line's overrides.
    std::optional<std::string> variant;
    if (options.variant) {
      const std::vector<std::string> names = variant_names(doc);
      if (std::find(names.begin(), names.end(), *options.variant) == names.end()) {
        add(problems, "/variants",
            names.empty() ? std::string("a file with variants to choose from")
                          : "one of the variants " + joined(names, true),
            json_quoted(*options.variant) + (names.empty() ? " (this file has none)" : ""),
            did_you_mean(*options.variant, names));
      } else {
        variant = *options.variant;
        const json body = doc["variants"][*options.variant];
        if (body.is_object() && body.contains("set") && body["set"].is_object()) {
          for (const auto& [path, value] : body["set"].items()) {
            const std::string context =
                fmt::format("variant {} sets {}", json_quoted(*variant), path);
            if (!valid_path(path)) continue;  // reported with the variants section
            if (auto pointer = set_path(doc, path, value, context, problems)) {
              applied.push_back({*pointer, context});
            }
          }
        }
      }
    }
    // The protocol that will run, to aim command-line overrides at it.
    std::string file_protocol;
    if (doc.contains("protocol") && doc["protocol"].is_object() &&
        doc["protocol"].contains("name") && doc["protocol"]["name"].is_string()) {
      file_protocol = doc["protocol"]["name"].get<std::string>();
    }
    const std::string running = options.protocol.value_or(file_protocol);
    for (const Override& o : options.overrides) {
      const std::string context = "--set " + o.path + "=" + o.value;
      std::string path = o.path;
      // `--protocol raft --set protocol.pre_vote=true` means raft's pre_vote, not a parameter of
      // the file's other protocol.
      if (options.protocol && *options.protocol != file_protocol &&
          starts_with(path, "protocol.") && path != "protocol.name") {
        path = "protocols." + *options.protocol + path.substr(std::string("protocol").size());
      }
      const auto segments = split_path(path);
      if (segments.size() >= 2 && segments[0] == "protocols" && segments[1] != running &&
          !options.all_protocols_run) {
        result.warnings.push_back(fmt::format(
            "{} does not reach this run: it runs protocol {}, not {} (use --protocol {} or "
            "compare)",
            context, running, segments[1], segments[1]));
      }
      if (auto pointer = set_path(doc, path, override_value(o.value), context, problems)) {
        applied.push_back({*pointer, context});
      }
    }

    const std::size_t validation_start = problems.size();
    Loader loader(options, problems);
    std::optional<Scenario> scenario = loader.load(doc, variant);

    // A problem in a value an override wrote is the override's: say so.
    for (std::size_t i = validation_start; i < problems.size(); ++i) {
      Problem& p = problems[i];
      for (const Applied& a : applied) {
        if (p.pointer == a.pointer || starts_with(p.pointer, a.pointer + "/"))
          p.context = a.context;
      }
    }
    if (problems.empty() && scenario) {
      scenario->source = result.source;
      scenario->document = std::move(doc);
      result.scenario = std::move(scenario);
    }
  } catch (const std::exception& e) {
    add(problems, "", "a scenario electsim can load",
        std::string("an internal error: ") + e.what());
    result.scenario.reset();
  }
  return result;
}

LoadResult load_scenario_text(std::string_view text, std::string source,
                              const LoadOptions& options) {
  Problems duplicates;
  json document;
  if (auto deep = io::json_depth_problem(text)) {
    LoadResult result;
    result.source = std::move(source);
    add(result.problems, "", "valid JSON", *deep);
    return result;
  }
  try {
    DuplicateKeyFinder finder(duplicates);
    document = json::parse(text.begin(), text.end(), std::ref(finder));
  } catch (const json::exception& e) {
    LoadResult result;
    result.source = std::move(source);
    add(result.problems, "", "valid JSON", describe_parse_error(e.what()));
    return result;
  } catch (const std::exception& e) {
    LoadResult result;
    result.source = std::move(source);
    add(result.problems, "", "valid JSON", std::string("an error: ") + e.what());
    return result;
  }
  LoadResult result = load_scenario_json(document, std::move(source), options);
  if (!duplicates.empty()) {
    result.problems.insert(result.problems.begin(), duplicates.begin(), duplicates.end());
    result.scenario.reset();
  }
  return result;
}

io::ReadResult read_scenario_file(const std::string& path) {
  return io::read_file_bounded(path, io::kMaxScenarioBytes, "scenario file");
}

LoadResult load_scenario_file(const std::string& path, const LoadOptions& options) {
  io::ReadResult read = read_scenario_file(path);
  if (read.ok()) return load_scenario_text(read.text, path, options);
  LoadResult result;
  result.source = path;
  add(result.problems, "", "a readable scenario file", read.error);
  return result;
}

}  // namespace electsim::runner
