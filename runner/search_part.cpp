// Search shards (runner/search.hpp): a shard's part file, and merging parts into the result one
// process gives. A search's findings are its runs' in run order, so a merge needs, per shard,
// only its counts and its first finding of each property (with that finding shrunk): the first
// of the whole search is the earliest run among the shards' firsts, and shrinking is a function
// of the finding's run alone, so the shard that found it shrank it exactly as one process would.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/input.hpp"
#include "runner/search.hpp"

namespace electsim::runner {

namespace {

using json = nlohmann::json;

constexpr int kPartFormat = 1;
constexpr const char* kPartKey = "electsim_search_part";

// ---- Writing

json config_json(const SearchConfig& c) {
  json weights = json::object();
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    weights[info.name] = c.weights[static_cast<std::size_t>(info.kind)];
  }
  json properties = json::array();
  for (int p = 0; p < kPropertyCount; ++p) {
    if (c.wants(static_cast<Property>(p)))
      properties.push_back(property_name(static_cast<Property>(p)));
  }
  return {{"weights", weights},
          {"faults_min", c.faults_min},
          {"faults_max", c.faults_max},
          {"safety_ns", c.safety.count()},
          {"heal_bound_ns", c.heal_bound.count()},
          {"heal_bound_given", c.heal_bound_given},
          {"max_fault_duration_ns", c.max_fault_duration.count()},
          {"max_loss_percent", c.max_loss_percent},
          {"max_duplicate_percent", c.max_duplicate_percent},
          {"max_latency_spike_ns", c.max_latency_spike.count()},
          {"max_clock_jump_ns", c.max_clock_jump.count()},
          {"max_drift_ppm", c.max_drift_ppm},
          {"failover_bound_ns", c.failover_bound ? json(c.failover_bound->count()) : json()},
          {"properties", properties},
          {"first_seed", c.first_seed},
          {"runs", c.runs},
          {"shrink_budget", c.shrink_budget},
          {"shrink", c.shrink},
          {"unsafe_by_design", c.unsafe_by_design}};
}

json durations_or_null(const std::optional<sim::Duration>& d) {
  return d ? json(d->count()) : json();
}

}  // namespace

std::string search_part(const SearchResult& r, const SearchConfig& config, const Shard& shard) {
  json header = {{kPartKey, kPartFormat},
                 {"shard", fmt::format("{}/{}", shard.index, shard.count)},
                 {"config", config_json(config)},
                 {"searched", r.searched}};
  json violations = json::array();
  for (const std::uint64_t v : r.violations) violations.push_back(v);
  json first = json::array();
  for (const Finding& f : r.first) {
    first.push_back({{"property", property_name(f.property)},
                     {"run", f.run},
                     {"seed", f.seed},
                     {"faults", f.faults}});
  }
  const json counts = {
      {"scenario", r.scenario_name},
      {"protocol", r.protocol},
      {"runs_planned", r.runs_planned},
      {"runs_done", r.runs_done},
      {"stopped", r.stopped},
      {"interrupted", r.interrupted},
      {"violations", violations},
      {"first", first},
      {"coverage",
       {r.coverage.fault_kinds, r.coverage.roles, r.coverage.message_types, r.coverage.store_ops}},
      {"message_types", r.message_type_names},
      {"uses_store", r.uses_store},
      {"heal_bound_ns", r.heal_bound.count()},
      {"warnings", r.warnings},
      {"kinds_inapplicable", r.kinds_inapplicable},
      {"silent_hold_ns", durations_or_null(r.silent_hold)},
      {"silent_hold_what", r.silent_hold_what},
      {"longest_threat_ns", r.longest_threat.count()},
      {"runs_healed", r.runs_healed},
      {"runs_incomplete", r.runs_incomplete},
      {"longest_outage_ns", r.longest_outage.count()},
      {"longest_outage_seed", r.longest_outage_seed},
      {"runs_never_wrote_again", r.runs_never_wrote_again}};
  std::string out = header.dump() + "\n" + json{{"counts", counts}}.dump() + "\n";
  for (const Shrunk& s : r.shrunk) {
    out += json{{"shrunk",
                 {{"property", property_name(s.property)},
                  {"seed", s.seed},
                  {"faults_before", s.faults_before},
                  {"faults_after", s.faults_after},
                  {"runs", s.runs},
                  {"budget_exhausted", s.budget_exhausted},
                  {"steps", s.steps},
                  {"reproduced", s.reproduced},
                  {"document", s.document}}}}
               .dump() +
           "\n";
  }
  return out;
}

bool is_search_part(std::string_view text) {
  const std::string_view head = text.substr(0, text.find('\n'));  // the header line
  return head.find(fmt::format("\"{}\":", kPartKey)) != std::string_view::npos;
}

// ---- Reading: every value range-checked, every problem located at its part and line

namespace {

// Reads a part's fields, failing (with the first problem) on anything malformed.
class Fields {
 public:
  explicit Fields(std::string where) : where_(std::move(where)) {}
  bool ok() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }

  const json* get(const json& j, const char* key) {
    if (!ok()) return nullptr;
    if (!j.is_object() || !j.contains(key)) {
      fail(fmt::format("expected \"{}\"", key));
      return nullptr;
    }
    return &j.at(key);
  }
  std::uint64_t number(const json& j, const char* key, std::uint64_t max) {
    const json* v = get(j, key);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() > max) {
      fail(fmt::format("expected \"{}\" to be a whole number from 0 to {}", key, max));
      return 0;
    }
    return v->get<std::uint64_t>();
  }
  sim::Duration duration(const json& j, const char* key) {
    return sim::Duration(static_cast<std::int64_t>(
        number(j, key, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))));
  }
  std::optional<sim::Duration> optional_duration(const json& j, const char* key) {
    const json* v = get(j, key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    return duration(j, key);
  }
  bool boolean(const json& j, const char* key) {
    const json* v = get(j, key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) fail(fmt::format("expected \"{}\" to be true or false", key));
    return ok() && v->get<bool>();
  }
  std::string text(const json& j, const char* key) {
    const json* v = get(j, key);
    if (v == nullptr) return {};
    if (!v->is_string()) fail(fmt::format("expected \"{}\" to be a string", key));
    return ok() ? v->get<std::string>() : std::string();
  }
  std::vector<std::string> texts(const json& j, const char* key) {
    const json* v = get(j, key);
    std::vector<std::string> out;
    if (v == nullptr) return out;
    if (!v->is_array()) fail(fmt::format("expected \"{}\" to be a list of strings", key));
    for (const json& item : ok() ? *v : json::array()) {
      if (!item.is_string()) {
        fail(fmt::format("expected \"{}\" to be a list of strings", key));
        break;
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  Property property(const json& j, const char* key) {
    const std::string name = text(j, key);
    const std::optional<Property> p = ok() ? property_from_name(name) : std::nullopt;
    if (ok() && !p) fail(fmt::format("expected \"{}\" to be one of {}", key, property_list()));
    return p.value_or(Property::stale_write);
  }
  void fail(const std::string& what) {
    if (problem_.empty()) problem_ = where_ + ": " + what;
  }

 private:
  std::string where_;
  std::string problem_;
};

constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kMaxI64 =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

SearchConfig read_config(const json& j, Fields& f) {
  SearchConfig c;
  if (const json* weights = f.get(j, "weights")) {
    for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
      c.weights[static_cast<std::size_t>(info.kind)] =
          static_cast<std::uint32_t>(f.number(*weights, info.name, 1000));
    }
  }
  // Within the bounds the command line and the search section give them (docs/search.md).
  c.faults_min = static_cast<std::uint32_t>(f.number(j, "faults_min", 1000));
  c.faults_max = static_cast<std::uint32_t>(f.number(j, "faults_max", 1000));
  c.safety = f.duration(j, "safety_ns");
  c.heal_bound = f.duration(j, "heal_bound_ns");
  c.heal_bound_given = f.boolean(j, "heal_bound_given");
  c.max_fault_duration = f.duration(j, "max_fault_duration_ns");
  c.max_loss_percent = static_cast<std::uint32_t>(f.number(j, "max_loss_percent", 100));
  c.max_duplicate_percent = static_cast<std::uint32_t>(f.number(j, "max_duplicate_percent", 100));
  c.max_latency_spike = f.duration(j, "max_latency_spike_ns");
  c.max_clock_jump = f.duration(j, "max_clock_jump_ns");
  c.max_drift_ppm = static_cast<std::int64_t>(f.number(j, "max_drift_ppm", 1'000'000));
  c.failover_bound = f.optional_duration(j, "failover_bound_ns");
  c.properties = 0;
  for (const std::string& name : f.texts(j, "properties")) {
    const std::optional<Property> p = property_from_name(name);
    if (!p) {
      f.fail(fmt::format("expected \"properties\" to name properties among {}", property_list()));
      break;
    }
    c.properties |= 1u << static_cast<unsigned>(*p);
  }
  c.first_seed = f.number(j, "first_seed", std::uint64_t{1} << 62);
  c.runs = f.number(j, "runs", 1'000'000'000);
  c.shrink_budget = f.number(j, "shrink_budget", 1'000'000);
  c.shrink = f.boolean(j, "shrink");
  c.unsafe_by_design = f.boolean(j, "unsafe_by_design");
  if (f.ok() && (c.runs == 0 || c.faults_min > c.faults_max)) {
    f.fail("expected a configuration of at least one run and faults_min at most faults_max");
  }
  return c;
}

// One part as read: its shard, its counts (a SearchResult of its own runs) and its shrunk
// findings.
struct Part {
  Shard shard;
  SearchResult result;
};

std::optional<Part> read_counts(const json& j, const SearchConfig& config, const Shard& shard,
                                Fields& f) {
  Part part{shard, {}};
  SearchResult& r = part.result;
  r.scenario_name = f.text(j, "scenario");
  r.protocol = f.text(j, "protocol");
  r.runs_planned = f.number(j, "runs_planned", 1'000'000'000);
  const std::uint64_t owned = shard.runs_of(config.runs);
  r.runs_done = f.number(j, "runs_done", owned);
  r.stopped = f.boolean(j, "stopped");
  r.interrupted = f.boolean(j, "interrupted");
  if (const json* v = f.get(j, "violations")) {
    if (!v->is_array() || v->size() != static_cast<std::size_t>(kPropertyCount)) {
      f.fail(fmt::format("expected \"violations\": {} counts, one per property", kPropertyCount));
    }
    for (std::size_t p = 0; f.ok() && p < r.violations.size(); ++p) {
      const json& count = v->at(p);
      if (!count.is_number_unsigned() || count.get<std::uint64_t>() > r.runs_done) {
        f.fail("expected each of \"violations\" to count at most the part's runs");
      } else {
        r.violations[p] = count.get<std::uint64_t>();
      }
    }
  }
  if (const json* first = f.get(j, "first")) {
    if (!first->is_array()) f.fail("expected \"first\" to be a list of findings");
    std::uint32_t seen = 0;
    for (const json& item : f.ok() ? *first : json::array()) {
      Finding finding;
      finding.property = f.property(item, "property");
      finding.run = f.number(item, "run", config.runs - 1);
      finding.seed = f.number(item, "seed", kMaxI64);
      finding.faults = static_cast<std::size_t>(f.number(item, "faults", 1'000'000));
      if (!f.ok()) break;
      const unsigned bit = 1u << static_cast<unsigned>(finding.property);
      if ((seen & bit) != 0 || !shard.owns(finding.run) ||
          finding.seed != config.first_seed + finding.run ||
          r.violations[static_cast<std::size_t>(finding.property)] == 0) {
        f.fail(
            fmt::format("expected each finding once per property, at a run of shard {}/{} with "
                        "its seed (first_seed + run) and a violation counted",
                        shard.index, shard.count));
        break;
      }
      seen |= bit;
      r.first.push_back(finding);
    }
  }
  if (const json* coverage = f.get(j, "coverage")) {
    // Four bit sets: fault kinds, roles, message types, store operations.
    const char* what =
        "expected \"coverage\": [fault kinds, roles, message types, store operations], each a "
        "set of bits within its width";
    const std::uint64_t widths[] = {kMaxU32, 255, ~std::uint64_t{0}, kMaxU32};
    std::uint64_t bits[4] = {};
    if (!coverage->is_array() || coverage->size() != 4) f.fail(what);
    for (std::size_t i = 0; f.ok() && i < 4; ++i) {
      const json& v = coverage->at(i);
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() > widths[i]) {
        f.fail(what);
      } else {
        bits[i] = v.get<std::uint64_t>();
      }
    }
    r.coverage.fault_kinds = static_cast<std::uint32_t>(bits[0]);
    r.coverage.roles = static_cast<std::uint8_t>(bits[1]);
    r.coverage.message_types = bits[2];
    r.coverage.store_ops = static_cast<std::uint32_t>(bits[3]);
  }
  r.message_type_names = f.texts(j, "message_types");
  r.uses_store = f.boolean(j, "uses_store");
  r.heal_bound = f.duration(j, "heal_bound_ns");
  r.warnings = f.texts(j, "warnings");
  r.kinds_inapplicable = f.texts(j, "kinds_inapplicable");
  r.silent_hold = f.optional_duration(j, "silent_hold_ns");
  r.silent_hold_what = f.text(j, "silent_hold_what");
  r.longest_threat = f.duration(j, "longest_threat_ns");
  r.runs_healed = f.number(j, "runs_healed", r.runs_done);
  r.runs_incomplete = f.number(j, "runs_incomplete", r.runs_done);
  r.longest_outage = f.duration(j, "longest_outage_ns");
  r.longest_outage_seed = f.number(j, "longest_outage_seed", kMaxI64);
  r.runs_never_wrote_again = f.number(j, "runs_never_wrote_again", r.runs_done);
  if (!f.ok()) return std::nullopt;
  return part;
}

std::optional<Shrunk> read_shrunk(const json& j, Fields& f) {
  Shrunk s;
  s.property = f.property(j, "property");
  s.seed = f.number(j, "seed", kMaxI64);
  s.faults_before = static_cast<std::size_t>(f.number(j, "faults_before", 1'000'000));
  s.faults_after = static_cast<std::size_t>(f.number(j, "faults_after", 1'000'000));
  s.runs = f.number(j, "runs", 1'000'000);
  s.budget_exhausted = f.boolean(j, "budget_exhausted");
  s.steps = f.texts(j, "steps");
  s.reproduced = f.boolean(j, "reproduced");
  if (const json* document = f.get(j, "document")) {
    if (!document->is_object()) f.fail("expected \"document\" to be a scenario (a JSON object)");
    s.document = *document;
  }
  if (!f.ok()) return std::nullopt;
  return s;
}

// The same for every part of one search (what it searched decides them).
bool same_search(const SearchResult& a, const SearchResult& b) {
  return a.scenario_name == b.scenario_name && a.protocol == b.protocol &&
         a.runs_planned == b.runs_planned && a.message_type_names == b.message_type_names &&
         a.uses_store == b.uses_store && a.heal_bound == b.heal_bound && a.warnings == b.warnings &&
         a.kinds_inapplicable == b.kinds_inapplicable && a.silent_hold == b.silent_hold &&
         a.silent_hold_what == b.silent_hold_what;
}

}  // namespace

SearchMerge merge_search_parts(const std::vector<PartText>& texts) {
  SearchMerge out;
  std::optional<json> header_of_all;  // the first part's config and searched document
  std::optional<std::uint64_t> count;
  std::map<std::uint64_t, std::string> seen_shards;
  std::vector<Part> parts;
  std::vector<std::vector<Shrunk>> shrunk_by_part;
  for (const PartText& text : texts) {
    std::optional<Shard> shard;
    std::optional<Part> part;
    std::vector<Shrunk> shrunk;
    for_each_part_line(text.text, [&](std::size_t line_number, std::string_view line) {
      Fields f(fmt::format("{}:{}", text.name, line_number));
      const io::JsonParse parsed = io::parse_json(line);
      const json& j = parsed.value;
      if (!parsed.ok() || !j.is_object()) {
        f.fail("expected a JSON object on every line of a part");
      } else if (!shard) {
        if (!j.contains(kPartKey) || j.at(kPartKey) != kPartFormat) {
          f.fail(
              "expected a search part written by `electsim search --shard` (its first line "
              "names the search)");
        } else {
          const std::string shard_text = f.text(j, "shard");
          const Parsed<Shard> s = f.ok() ? parse_shard(shard_text) : Parsed<Shard>{};
          const json* config = f.get(j, "config");
          const json* searched = f.get(j, "searched");
          if (f.ok() && !s.value) f.fail("expected \"shard\": \"i/n\"");
          if (f.ok()) {
            const json identity = {{"config", *config}, {"searched", *searched}};
            if (!header_of_all) {
              header_of_all = identity;
              out.config = read_config(*config, f);
              count = s.value->count;
            } else if (identity != *header_of_all) {
              f.fail(
                  fmt::format("this part comes from a different search than {} (scenario, "
                              "variant, --set or search options differ)",
                              texts.front().name));
            } else if (s.value->count != *count) {
              f.fail(fmt::format("this part is a shard of {}, and {} one of {}", s.value->count,
                                 texts.front().name, *count));
            }
          }
          if (f.ok()) {
            const auto [it, fresh] = seen_shards.emplace(s.value->index, text.name);
            if (!fresh)
              f.fail(fmt::format("shard {}/{} is also {}", s.value->index, *count, it->second));
            shard = *s.value;
          }
        }
      } else if (!part) {
        const json* counts = f.get(j, "counts");
        if (counts != nullptr) part = read_counts(*counts, out.config, *shard, f);
        if (part && (part->result.stopped || part->result.interrupted ||
                     part->result.runs_done != shard->runs_of(out.config.runs))) {
          f.fail(fmt::format(
              "shard {}/{} stopped after {} of its {} runs (Ctrl-C or --time); "
              "run it again to its end",
              shard->index, shard->count, part->result.runs_done, shard->runs_of(out.config.runs)));
        }
      } else {
        const json* item = f.get(j, "shrunk");
        const std::optional<Shrunk> s = item != nullptr ? read_shrunk(*item, f) : std::nullopt;
        if (s) shrunk.push_back(*s);
      }
      if (!f.ok()) out.problems.push_back(f.problem());
      return out.problems.empty();
    });
    if (!out.problems.empty()) return out;
    if (!part) {
      out.problems.push_back(text.name + ": expected a search part's header and counts");
      return out;
    }
    // Each first finding shrunk, in order, when the search shrinks.
    bool matches = !out.config.shrink || shrunk.size() == part->result.first.size();
    for (std::size_t i = 0; matches && out.config.shrink && i < shrunk.size(); ++i) {
      matches = shrunk[i].property == part->result.first[i].property &&
                shrunk[i].seed == part->result.first[i].seed;
    }
    if (!matches || (!out.config.shrink && !shrunk.empty())) {
      out.problems.push_back(text.name +
                             ": expected one shrunk finding per first finding, in "
                             "their order (none when the search does not shrink)");
      return out;
    }
    if (!parts.empty() && !same_search(parts.front().result, part->result)) {
      out.problems.push_back(
          fmt::format("{}: this part's search differs from {}'s (scenario, protocol or bounds)",
                      text.name, texts.front().name));
      return out;
    }
    parts.push_back(std::move(*part));
    shrunk_by_part.push_back(std::move(shrunk));
  }
  if (parts.empty()) {
    out.problems.push_back("electsim merge: no part given");
    return out;
  }
  std::vector<std::string> missing;
  for (std::uint64_t i = 1; i <= *count && missing.size() < 10; ++i) {
    if (!seen_shards.contains(i)) missing.push_back(fmt::format("{}/{}", i, *count));
  }
  if (!missing.empty()) {
    out.problems.push_back(fmt::format("electsim merge: the search's shards {}{} are missing",
                                       fmt::join(missing, ", "),
                                       missing.size() == 10 ? ", ..." : ""));
    return out;
  }

  // The whole search: counts summed, coverage joined, extremes taken (the longest outage at its
  // earliest run, as one process keeps the first it sees), and each property's first finding
  // the earliest run among the parts', with that part's shrinking of it.
  SearchResult r = parts.front().result;
  r.runs_done = 0;
  r.violations = {};
  r.first.clear();
  r.coverage = Coverage{};
  r.longest_threat = sim::Duration(0);
  r.runs_healed = r.runs_incomplete = r.runs_never_wrote_again = 0;
  r.longest_outage = sim::Duration(0);
  r.longest_outage_seed = 0;
  r.searched = (*header_of_all)["searched"];
  std::array<std::optional<std::pair<std::uint64_t, std::pair<const Finding*, const Shrunk*>>>,
             kPropertyCount>
      earliest{};
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const SearchResult& p = parts[k].result;
    r.runs_done += p.runs_done;
    for (std::size_t i = 0; i < r.violations.size(); ++i) r.violations[i] += p.violations[i];
    r.coverage.merge(p.coverage);
    r.longest_threat = std::max(r.longest_threat, p.longest_threat);
    r.runs_healed += p.runs_healed;
    r.runs_incomplete += p.runs_incomplete;
    r.runs_never_wrote_again += p.runs_never_wrote_again;
    if (p.longest_outage > r.longest_outage ||
        (p.longest_outage == r.longest_outage && p.longest_outage.count() > 0 &&
         p.longest_outage_seed < r.longest_outage_seed)) {
      r.longest_outage = p.longest_outage;
      r.longest_outage_seed = p.longest_outage_seed;
    }
    for (std::size_t i = 0; i < p.first.size(); ++i) {
      const Finding& f = p.first[i];
      auto& best = earliest[static_cast<std::size_t>(f.property)];
      const Shrunk* s = out.config.shrink ? &shrunk_by_part[k][i] : nullptr;
      if (!best || f.run < best->first) best = {f.run, {&f, s}};
    }
  }
  std::vector<std::pair<std::uint64_t, int>> order;
  for (int p = 0; p < kPropertyCount; ++p) {
    if (earliest[static_cast<std::size_t>(p)])
      order.emplace_back(earliest[static_cast<std::size_t>(p)]->first, p);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [run, p] : order) {
    const auto& [finding, shrunk] = earliest[static_cast<std::size_t>(p)]->second;
    r.first.push_back(*finding);
    if (shrunk != nullptr) r.shrunk.push_back(*shrunk);
  }
  r.stopped = false;
  r.interrupted = false;
  out.result = std::move(r);
  return out;
}

}  // namespace electsim::runner
