// Scenario files to Scenarios (runner/loader.hpp; the format is docs/scenario-format.md): parse,
// apply a variant's and the command line's overrides, validate every section with located
// problems, then build the typed world. Every problem is collected before giving up, so one
// `electsim validate` shows them all; nothing throws past this file.

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
#include "analysis/trace.hpp"
#include "io/input.hpp"
#include "protocols/registry.hpp"
#include "runner/loader_detail.hpp"
#include "servers/registry.hpp"
#include "sim/fault.hpp"

namespace electsim::runner {

// The header line carries three names or keys (the scenario's, the variant's, the leader key),
// escaped at most sixfold, beside a few kilobytes of fixed fields.
static_assert(3 * 6 * params::kMaxNameBytes + 16 * 1024 <= analysis::kMaxTraceLine,
              "every trace line electsim writes is one its reader accepts");

namespace detail {

namespace {

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

}  // namespace

std::optional<Scenario> Loader::load(const json& document,
                                     const std::optional<std::string>& variant) {
  const std::size_t before = problems_.size();
  Scenario s;
  std::vector<std::string> keys = {"name",     "description", "seed", "duration", "nodes",
                                   "protocol", "network",     "disk", "clocks"};
  // Then the sections the server kinds read (store, sink, postgres, redis, aggregator), then the
  // rest.
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (!kind.section.empty()) keys.push_back(kind.section);
  }
  for (const char* key : {"faults", "random_faults", "workload", "expect", "variants", "limits",
                          "protocols", "expect_by_protocol", "expect_by_class", "sweep", "search",
                          "found", "servers", "services"}) {
    keys.emplace_back(key);
  }
  check_object(document, "", keys, "a scenario");

  if (const json* name = get(document, "name")) {
    if (auto text = read_string(*name, "/name")) {
      if (text->empty()) problem("/name", "a non-empty name", "\"\"");
      if (std::string found = params::name_length_problem(*text); !found.empty()) {
        problem("/name", params::kNameLengthExpected, found);
      }
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
  if (const json* disk = get(document, "disk")) s.world.disk = read_disk(*disk);
  // Before the clocks, whose part for a kind's servers (the Redis masters) names them by index.
  read_server_sections(document, s.services);
  if (const json* more = get(document, "servers")) read_servers(*more, s.services);
  if (const json* clocks = get(document, "clocks")) {
    read_clocks(*clocks, s);
  } else {
    s.world.clocks.assign(nodes_.value_or(0), sim::ClockConfig{});
    s.clock_ranges.assign(nodes_.value_or(0), ClockRanges{});
  }
  if (const json* workload = get(document, "workload")) s.workload = read_workload(*workload);
  read_protocol_choice(document, s);
  // The servers the protocol needs are in the world, with their section's settings or their
  // defaults; a server the file configures is there for every protocol, so that `compare` runs
  // them all in the same world.
  if (const protocols::ProtocolInfo* running = protocols::find_protocol(s.protocol)) {
    for (const std::string& kind : running->servers) {
      servers::require_servers(s.services, kind);
      required_kinds_.push_back(kind);
    }
  }
  // A kind whose section alone puts its servers in the world (it has `require`) is there even
  // when the section is wrong, so that faults are judged against the world the file means.
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (kind.require && !kind.section.empty() && get(document, kind.section.c_str()) != nullptr) {
      required_kinds_.push_back(kind.name);
    }
  }
  if (s.prepared.leader_key) s.services.store.leader_key = *s.prepared.leader_key;
  store_keeps_record_ = !s.services.store.leader_key.empty();
  build_topology(s.services);
  if (const json* network = get(document, "network")) read_links(*network, s.world.network);
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
  if (const json* by_class = get(document, "expect_by_class")) {
    std::vector<analysis::Expectation> bounds;
    read_expect_by_class(*by_class, "/expect_by_class", bounds);
    if (!class_bounds_) class_bounds_ = std::move(bounds);
  }
  if (class_bounds_) {
    for (analysis::Expectation& e : *class_bounds_) s.expect.push_back(std::move(e));
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

  // Likewise the search command's section (docs/search.md), and what a search wrote about a
  // scenario it found: its property and how much it shrank.
  if (const json* search = get(document, "search")) {
    if (search->is_object()) {
      s.search = *search;
    } else {
      problem("/search", "an object (the search command's defaults, see docs/search.md)",
              json_excerpt(*search));
    }
  }
  if (const json* found = get(document, "found")) read_found(*found, s);

  if (problems_.size() != before) return std::nullopt;
  s.world.duration = *duration_;
  s.world.node_count = *nodes_;
  // A world is one election group, every node running the protocol on its key, or a fleet.
  s.world.groups = {sim::election_group(s.world.node_count, s.protocol, s.prepared.leader_key)};
  if (services_ > 0) {
    build_fleet(s);
    if (problems_.size() != before) return std::nullopt;
  }
  set_sink_fencing(s);
  s.world.limits.max_events = limits.max_events;
  s.limits = limits;
  s.variant = variant.value_or("");
  return s;
}

}  // namespace detail

namespace {

using namespace detail;

// ---- Duplicate keys -------------------------------------------------------------------------

// nlohmann::json keeps the last of two equal keys without a word; a scenario with two "expect"
// blocks would silently lose one. A SAX pass over the text sees every key, so we find them here.
// It is a pass of its own, beside a plain parse: nlohmann's parser with a callback scans the
// whole enclosing array each time an element ends (to drop discarded values), which made a file
// of 100000 faults take seconds per parse.
class DuplicateKeyFinder final : public json::json_sax_t {
 public:
  explicit DuplicateKeyFinder(Problems& problems) : problems_(problems) {}

  bool null() override { return value(); }
  bool boolean(bool /*v*/) override { return value(); }
  bool number_integer(json::number_integer_t /*v*/) override { return value(); }
  bool number_unsigned(json::number_unsigned_t /*v*/) override { return value(); }
  bool number_float(json::number_float_t /*v*/, const json::string_t& /*s*/) override {
    return value();
  }
  bool string(json::string_t& /*v*/) override { return value(); }
  bool binary(json::binary_t& /*v*/) override { return value(); }
  bool start_object(std::size_t /*elements*/) override {
    start_element();
    frames_.push_back(Frame{true, {}, {}, 0});
    return true;
  }
  bool key(json::string_t& key) override {
    if (frames_.empty()) return true;
    Frame& top = frames_.back();
    top.key = key;
    if (!top.keys.insert(key).second) {
      add(problems_, pointer_of_current(), "each key once in an object",
          json_quoted(key) + " a second time (the later value would win)");
    }
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t /*elements*/) override {
    start_element();
    frames_.push_back(Frame{false, {}, {}, 0});
    return true;
  }
  bool end_array() override { return end(); }
  // The plain parse before this pass has reported any syntax error already.
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const json::exception& /*ex*/) override {
    return false;
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;           // objects: the key being read
    std::size_t elements = 0;  // arrays: elements seen so far
  };

  bool value() {
    start_element();
    return true;
  }
  bool end() {
    if (!frames_.empty()) frames_.pop_back();
    return true;
  }
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

std::optional<nlohmann::json> document_of_variant(const nlohmann::json& document,
                                                  const std::string& variant) {
  const std::vector<std::string> names = variant_names(document);
  if (std::find(names.begin(), names.end(), variant) == names.end()) return std::nullopt;
  json doc = document;
  const json body = doc["variants"][variant];
  // The loader's own steps: the variant's `set` entries in place, then its expect block for the
  // file's. An entry the loader would refuse is left out here and refused there, when the variant
  // itself is loaded.
  Problems ignored;
  if (body.is_object() && body.contains("set") && body["set"].is_object()) {
    for (const auto& [path, value] : body["set"].items()) {
      if (valid_path(path)) set_path(doc, path, value, "", ignored);
    }
  }
  if (body.is_object() && body.contains("expect")) doc["expect"] = body["expect"];
  if (body.is_object() && body.contains("description") && body["description"].is_string()) {
    doc["description"] = body["description"];
  }
  doc.erase("variants");
  return doc;
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
    // `detection` is the matched knob (protocols/registry.hpp): the running protocol's registry
    // entry turns it into its own parameters, each then applied like any --set.
    std::vector<Override> overrides;
    for (const Override& o : options.overrides) {
      if (o.path != "detection") {
        overrides.push_back(o);
        continue;
      }
      const std::string context = "--set detection=" + o.value;
      Problems knob_problems;
      const auto d = params::read_duration(override_value(o.value), "/detection", knob_problems);
      const protocols::ProtocolInfo* info = protocols::find_protocol(running);
      if (!d || d->count() <= 0) {
        add(problems, "", "a positive duration for the detection knob, such as \"20s\"",
            json_quoted(o.value));
        problems.back().context = context;
        continue;
      }
      if (info == nullptr || !info->detection.sets) continue;  // the protocol is reported below
      std::string why;
      const auto sets = info->detection.sets(*d, why);
      if (!sets && options.all_protocols_run) {
        // compare and sweep run every protocol: one that cannot take the knob runs as it is,
        // and says so (its rows are not labelled by the knob).
        result.warnings.push_back(
            fmt::format("{} does not reach protocol {}: {}", context, running, why));
        continue;
      }
      if (!sets) {
        add(problems, "/protocol",
            fmt::format("a protocol that can be set to replace a silent leader after {}",
                        sim::format_duration(*d)),
            fmt::format("protocol {}: {}", running, why));
        problems.back().context = context;
        continue;
      }
      for (const protocols::KnobSet& s : *sets) overrides.push_back(Override{s.path, s.value});
    }
    for (const Override& o : overrides) {
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
    // A store the protocol never asks is simulated for nothing: say so (compare and sweep run
    // one file across protocols, some of which use it).
    const bool asks_store = scenario && scenario->prepared.uses_store &&
                            scenario->prepared.coordinator == sim::server_kind::store;
    if (problems.empty() && scenario && !asks_store && doc.contains("store") &&
        !options.all_protocols_run) {
      // Through which server it elects instead, as its kind calls it ("the database").
      std::string through;
      const servers::ServerKindInfo* kind =
          servers::find_server_kind(scenario->prepared.coordinator);
      if (kind != nullptr && kind->name != sim::server_kind::store && !kind->forms.empty()) {
        through = " (through " + kind->forms.front().noun + ")";
      }
      result.warnings.push_back(fmt::format(
          "the store section (/store) does nothing for this run: protocol {} elects without the "
          "store{}",
          scenario->protocol, through));
    }
    if (problems.empty() && scenario) {
      scenario->source = result.source;
      scenario->document = std::move(doc);
      if (options.plant) options.plant(*scenario);
      result.scenario = std::move(scenario);
    }
  } catch (const std::exception& e) {
    add(problems, "", "a scenario electsim can load",
        std::string("an internal error: ") + e.what());
    result.scenario.reset();
    result.internal_error = true;
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
    document = json::parse(text.begin(), text.end());
    DuplicateKeyFinder finder(duplicates);
    json::sax_parse(text.begin(), text.end(), &finder);
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
