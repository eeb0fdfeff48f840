// electsim search's configuration (runner/search.hpp): the properties it checks, its defaults,
// and the command line's and the scenario's search section's readings of them.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runner/search.hpp"
#include "runner/search_detail.hpp"

namespace electsim::runner {

namespace {

using nlohmann::json;
using sim::Duration;
using sim::FaultKind;

struct PropertyInfo {
  Property property;
  const char* name;
  const char* meaning;
};

constexpr std::array<PropertyInfo, kPropertyCount> kProperties = {{
    {Property::stale_write, "stale_write",
     "split-brain with a stale write accepted: a deposed leader wrote after a newer epoch was "
     "granted"},
    {Property::overwrite, "overwrite",
     "a stale write accepted over newer data (the sink took an old token after a newer one)"},
    {Property::same_epoch, "same_epoch", "two leaders announced the same epoch"},
    {Property::no_recovery, "no_recovery",
     "after every fault healed, no single leader was writing within the healing bound"},
    {Property::failover, "failover", "a failover took longer than the bound"},
    {Property::expect, "expect", "the scenario's own expect block broke"},
    {Property::store_safety, "store_safety",
     "the replicated store broke its own safety (a bug in the simulated store)"},
    {Property::stale_action, "stale_action",
     "a leader acted on a belief it should have known was stale: it committed a write after its "
     "own renew deadline had passed on its clock"},
    {Property::invariant, "invariant",
     "the simulation broke one of its own invariants, an always-on assertion: a bug in one of "
     "electsim's models"},
}};

// The items of a comma-separated list, empty ones included: the readers refuse those, since
// "crash,,pause" is a slip of the hand rather than a list of two.
std::vector<std::string_view> comma_items(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      items.push_back(text.substr(start));
      return items;
    }
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
}

// A whole number written the one way: digits only, no sign, space or leading zero ("0", "12";
// never "012", "+1", " 1" or "-0"), so that a list reads as exactly as a scenario file.
std::optional<std::uint64_t> plain_whole(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos ||
      (text.size() > 1 && text[0] == '0')) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A plain decimal: a whole part written as plain_whole's, then optionally '.' and digits ("0.2",
// "1"; never ".5", "+0.5", " 0.5", "5e-1" or "00.5").
std::optional<double> plain_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (!plain_whole(text.substr(0, dot))) return std::nullopt;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty() || fraction.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
  }
  // Digits and at most one point, checked above: strtod reads them exactly as from_chars would
  // (both round correctly), and every standard library has it (libc++ 14 has no from_chars for
  // doubles). The "C" locale's point: electsim never sets another.
  const std::string copy(text);
  return std::strtod(copy.c_str(), nullptr);
}

// An object of the search section as the command line's "key=value,..." text.
std::optional<std::string> object_as_list(const json& v) {
  if (!v.is_object() || v.empty()) return std::nullopt;
  std::string text;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const json& value = it.value();
    if (!value.is_string() && !value.is_number()) return std::nullopt;
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", it.key(),
                        value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

void add_problem(params::Problems& problems, std::string pointer, std::string expected,
                 std::string found) {
  params::Problem p;
  p.pointer = std::move(pointer);
  p.expected = std::move(expected);
  p.found = std::move(found);
  problems.push_back(std::move(p));
}

}  // namespace

const char* property_name(Property p) {
  return kProperties[static_cast<std::size_t>(p)].name;
}
const char* property_meaning(Property p) {
  return kProperties[static_cast<std::size_t>(p)].meaning;
}
std::optional<Property> property_from_name(std::string_view name) {
  for (const PropertyInfo& info : kProperties) {
    if (name == info.name) return info.property;
  }
  return std::nullopt;
}
std::string property_list() {
  std::string out;
  for (const PropertyInfo& info : kProperties) {
    out += out.empty() ? "" : ", ";
    out += info.name;
  }
  return out;
}

namespace {
// One property named on the command line or in the search section, or what was expected instead
// (`failover` needs its bound, given by `bound_option`).
std::variant<Property, std::string> named_property(std::string_view name,
                                                   const SearchConfig& config,
                                                   std::string_view bound_option) {
  const auto p = property_from_name(name);
  if (!p) return fmt::format("a property ({})", property_list());
  if (*p == Property::failover && !config.failover_bound) {
    return fmt::format("a property whose bound is given: failover needs {}", bound_option);
  }
  return *p;
}
}  // namespace

std::optional<std::string> parse_properties(std::string_view text, SearchConfig& config) {
  std::uint32_t mask = 0;
  for (const std::string_view name : comma_items(text)) {
    if (name.empty()) {
      return fmt::format("a property in every item, found an empty item in \"{}\"", text);
    }
    const auto p = named_property(name, config, "--failover-bound");
    if (const auto* expected = std::get_if<std::string>(&p)) {
      return fmt::format("{}, found \"{}\"", *expected, name);
    }
    mask |= 1u << static_cast<unsigned>(std::get<Property>(p));
  }
  if (mask == 0) return "at least one property";
  config.properties = mask;
  return std::nullopt;
}

SearchConfig SearchConfig::defaults() {
  SearchConfig c;
  // The catalogue's weights: a new fault kind is drawn once its row gives it one.
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    c.weights[static_cast<std::size_t>(info.kind)] = info.nemesis_weight;
  }
  for (Property p :
       {Property::stale_write, Property::overwrite, Property::same_epoch, Property::no_recovery,
        Property::store_safety, Property::stale_action, Property::invariant}) {
    c.properties |= 1u << static_cast<unsigned>(p);
  }
  return c;
}

std::optional<std::string> parse_kinds(std::string_view text, SearchConfig& config) {
  std::array<std::uint32_t, sim::kFaultKindCount> weights{};
  std::set<std::string_view> named;
  bool any = false;
  for (const std::string_view item : comma_items(text)) {
    if (item.empty()) {
      return fmt::format("a fault kind in every item, found an empty item in \"{}\"", text);
    }
    const std::size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    std::uint32_t weight = 1;
    if (eq != std::string_view::npos) {
      const std::string_view number = item.substr(eq + 1);
      const auto v = plain_whole(number);
      if (!v) {
        return fmt::format(
            "a weight from 0 to 1000 after \"{}=\", in plain digits (no sign, space or leading "
            "zero), found \"{}\"",
            name, number);
      }
      if (*v > 1000) {
        return fmt::format("a weight from 0 to 1000 after \"{}=\", found \"{}\"", name, number);
      }
      weight = static_cast<std::uint32_t>(*v);
    }
    bool known = false;
    for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
      if (name == info.name) {
        weights[static_cast<std::size_t>(info.kind)] = weight;
        known = true;
      }
    }
    if (!known || name == "heal") {
      return fmt::format(
          "a fault kind (see `electsim list faults`; heal is the nemesis's own), "
          "found \"{}\"",
          name);
    }
    // "crash=1,crash=5" would let the later weight win without a word.
    if (!named.insert(name).second) {
      return fmt::format("each fault kind once, found \"{}\" a second time", name);
    }
    any = any || weight > 0;
  }
  if (!any) return "at least one fault kind with a weight above 0";
  config.weights = weights;
  return std::nullopt;
}

std::optional<std::string> parse_intensity(std::string_view text, SearchConfig& config) {
  SearchConfig c = config;
  std::set<std::string> named;
  bool any = false;
  for (const std::string_view item : comma_items(text)) {
    if (item.empty()) {
      return fmt::format("key=value in every item, found an empty item in \"{}\"", text);
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return fmt::format("key=value, found \"{}\"", item);
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    any = true;
    auto percent = [&](std::uint32_t& out) -> std::optional<std::string> {
      const auto v = plain_decimal(value);
      if (!v) {
        return fmt::format(
            "{}: a probability from 0.05 to 1 written as a plain decimal such as 0.2 (no sign, "
            "space, exponent or leading zero), found \"{}\"",
            key, value);
      }
      if (!(*v >= 0.05 && *v <= 1.0)) {
        return fmt::format("{}: a probability from 0.05 to 1, found \"{}\"", key, value);
      }
      out = static_cast<std::uint32_t>(*v * 100.0 + 0.5);
      return std::nullopt;
    };
    auto duration = [&](Duration lo, Duration hi, Duration& out) -> std::optional<std::string> {
      const auto d = sim::parse_duration(value);
      if (!d || *d < lo || *d > hi) {
        return fmt::format("{}: a duration from {} to {}, found \"{}\"", key,
                           sim::format_duration(lo), sim::format_duration(hi), value);
      }
      out = *d;
      return std::nullopt;
    };
    std::optional<std::string> problem;
    if (key == "duration") {
      problem =
          duration(std::chrono::milliseconds(1), std::chrono::hours(24), c.max_fault_duration);
    } else if (key == "loss") {
      problem = percent(c.max_loss_percent);
    } else if (key == "duplicate") {
      problem = percent(c.max_duplicate_percent);
    } else if (key == "latency") {
      problem = duration(std::chrono::milliseconds(1), std::chrono::hours(1), c.max_latency_spike);
    } else if (key == "clock_jump") {
      problem =
          duration(std::chrono::milliseconds(1), std::chrono::hours(24 * 365), c.max_clock_jump);
    } else if (key == "drift_ppm") {
      const auto v = plain_whole(value);
      if (!v || *v < 1 || *v > 500'000) {
        problem = fmt::format(
            "drift_ppm: a whole number from 1 to 500000 in plain digits (no sign, space or "
            "leading zero), found \"{}\"",
            value);
      } else {
        c.max_drift_ppm = static_cast<std::int64_t>(*v);
      }
    } else {
      problem = fmt::format(
          "an intensity: duration, loss, duplicate, latency, clock_jump or drift_ppm, found \"{}\"",
          key);
    }
    if (problem) return problem;
    // "loss=0.1,loss=0.5" would let the later value win without a word.
    if (!named.insert(key).second) {
      return fmt::format("each intensity once, found \"{}\" a second time", key);
    }
  }
  if (!any) return "at least one key=value";
  config = c;
  return std::nullopt;
}

void read_search_section(const json& section, SearchConfig& config, params::Problems& problems) {
  const std::string base = "/search";
  if (!section.is_object()) {
    add_problem(problems, base, "an object (docs/search.md)", params::json_excerpt(section));
    return;
  }
  static const std::vector<std::string> kKeys = {"runs",
                                                 "seed",
                                                 "kinds",
                                                 "faults",
                                                 "safety",
                                                 "heal_bound",
                                                 "max_fault_duration",
                                                 "failover_bound",
                                                 "properties",
                                                 "shrink_budget",
                                                 "intensity"};
  params::reject_unknown_keys(section, base, kKeys, problems);
  auto count = [&](const char* key, std::uint64_t lo,
                   std::uint64_t hi) -> std::optional<std::uint64_t> {
    if (!section.contains(key)) return std::nullopt;
    const json& v = section[key];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < lo || v.get<std::uint64_t>() > hi) {
      add_problem(problems, params::child_pointer(base, key),
                  fmt::format("a whole number from {} to {}", lo, hi), params::json_excerpt(v));
      return std::nullopt;
    }
    return v.get<std::uint64_t>();
  };
  auto duration = [&](const char* key) -> std::optional<Duration> {
    if (!section.contains(key)) return std::nullopt;
    return params::read_duration(section[key], params::child_pointer(base, key), problems);
  };
  if (auto v = count("runs", 1, 1'000'000'000)) config.runs = *v;
  if (auto v = count("seed", 0, std::uint64_t{1} << 62)) config.first_seed = *v;
  if (auto v = count("shrink_budget", 0, 1'000'000)) config.shrink_budget = *v;
  if (auto d = duration("safety")) config.safety = *d;
  if (auto d = duration("heal_bound")) {
    config.heal_bound = *d;
    config.heal_bound_given = true;
  }
  if (auto d = duration("max_fault_duration")) config.max_fault_duration = *d;
  if (auto d = duration("failover_bound")) {
    config.failover_bound = *d;
    config.properties |= 1u << static_cast<unsigned>(Property::failover);
  }
  if (section.contains("faults")) {
    const json& v = section["faults"];
    const bool ok = v.is_object() && v.contains("min") && v.contains("max") &&
                    v["min"].is_number_unsigned() && v["max"].is_number_unsigned() &&
                    v["min"].get<std::uint64_t>() <= v["max"].get<std::uint64_t>() &&
                    v["max"].get<std::uint64_t>() <= 1000;
    if (!ok) {
      add_problem(problems, base + "/faults",
                  "{\"min\": M, \"max\": N}, whole numbers with M <= N <= 1000",
                  params::json_excerpt(v));
    } else {
      config.faults_min = v["min"].get<std::uint32_t>();
      config.faults_max = v["max"].get<std::uint32_t>();
    }
  }
  // kinds and intensity read as their command-line lists do, with the same checks.
  struct Listed {
    const char* key;
    const char* expected;
    std::optional<std::string> (*parse)(std::string_view, SearchConfig&);
  };
  for (const Listed& l :
       {Listed{"intensity", "an object such as {\"loss\": 0.2, \"clock_jump\": \"500ms\"}",
               parse_intensity},
        Listed{"kinds", "an object from fault kind to a weight from 0 to 1000", parse_kinds}}) {
    if (!section.contains(l.key)) continue;
    const json& v = section[l.key];
    const std::string pointer = params::child_pointer(base, l.key);
    const std::optional<std::string> text = object_as_list(v);
    const bool whole =
        std::string_view(l.key) != "kinds" ||
        std::all_of(v.begin(), v.end(), [](const json& w) { return w.is_number_unsigned(); });
    if (!text || !whole) {
      add_problem(problems, pointer, l.expected, params::json_excerpt(v));
    } else if (auto problem = l.parse(*text, config)) {
      add_problem(problems, pointer, *problem, params::json_excerpt(v));
    }
  }
  if (section.contains("properties")) {
    const json& v = section["properties"];
    std::uint32_t mask = 0;
    bool ok = v.is_array() && !v.empty();
    if (!ok) {
      add_problem(problems, base + "/properties", "a non-empty array of property names",
                  params::json_excerpt(v));
    }
    for (std::size_t i = 0; ok && i < v.size(); ++i) {
      const auto p = named_property(v[i].is_string() ? v[i].get_ref<const std::string&>() : "",
                                    config, "failover_bound");
      if (const auto* problem = std::get_if<std::string>(&p)) {
        add_problem(problems, params::child_pointer(base + "/properties", std::to_string(i)),
                    *problem, params::json_excerpt(v[i]));
        ok = false;
      } else {
        mask |= 1u << static_cast<unsigned>(std::get<Property>(p));
      }
    }
    if (ok) config.properties = mask;
  }
  if (config.safety < std::chrono::seconds(1) || config.safety > std::chrono::hours(24)) {
    add_problem(problems, base + "/safety", "a safety phase from 1s to 24h",
                sim::format_duration(config.safety));
  }
  if (config.heal_bound < std::chrono::milliseconds(1) ||
      config.heal_bound > std::chrono::hours(24)) {
    add_problem(problems, base + "/heal_bound", "a healing bound from 1ms to 24h",
                sim::format_duration(config.heal_bound));
  }
}

}  // namespace electsim::runner
