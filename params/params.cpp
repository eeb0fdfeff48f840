// Typed values from JSON with located errors (params/params.hpp). Every reader reports what it
// expected and what it found at the field's JSON pointer and never throws; unknown keys get the
// Levenshtein-closest valid name as a hint. Probabilities become integer ppm here, once, so that
// no floating point reaches the kernel (TigerBeetle's TIGER_STYLE: probabilities are ratios).
#include "params/params.hpp"
#include "params/section.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace electsim::params {

namespace {

using nlohmann::json;

constexpr const char* kDurationExpected = "a duration such as \"150ms\" or \"5s\"";
constexpr const char* kNonNegativeDurationExpected =
    "a non-negative duration such as \"150ms\" or \"5s\"";
constexpr std::size_t kExcerptChars = 60;

// Rejects keys outside `allowed`; `what` starts the expectation ("one of the keys of a
// \"uniform\" distribution"), the allowed names follow it.
void reject_unknown_keys_of(const json& object, const std::string& pointer,
                            std::span<const std::string> allowed, std::string_view what,
                            Problems& problems) {
  if (!object.is_object()) return;
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    add_problem(problems, child_pointer(pointer, key),
                fmt::format("{}: {}", what, joined(allowed, false)),
                "unknown key " + json_quoted(key), did_you_mean(key, allowed));
  }
}

std::optional<double> finite_number(const json& value) {
  if (!value.is_number()) return std::nullopt;
  const double d = value.get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

// A shape or sigma: a finite number above zero.
std::optional<double> read_positive_number(const json& value, const std::string& pointer,
                                           Problems& problems) {
  const auto d = finite_number(value);
  if (!d || *d <= 0) {
    add_problem(problems, pointer, "a number above 0, such as 0.5", json_excerpt(value));
    return std::nullopt;
  }
  return d;
}

struct DistributionShape {
  sim::DistributionKind kind;
  const char* name;
  std::vector<std::string> required;  // besides "dist"; "step" is optional for every kind
};

const std::vector<DistributionShape>& distribution_shapes() {
  static const std::vector<DistributionShape> shapes = {
      {sim::DistributionKind::constant, "constant", {"value"}},
      {sim::DistributionKind::uniform, "uniform", {"min", "max"}},
      {sim::DistributionKind::normal, "normal", {"mean", "stddev"}},
      {sim::DistributionKind::exponential, "exponential", {"mean"}},
      {sim::DistributionKind::lognormal, "lognormal", {"median", "sigma"}},
      {sim::DistributionKind::pareto, "pareto", {"scale", "shape"}},
  };
  return shapes;
}

std::string expected_of(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::duration:
      return kNonNegativeDurationExpected;
    case ParamType::boolean:
      return "true or false";
    case ParamType::integer:
      return "a whole number";
    case ParamType::number:
      return "a number";
    case ParamType::probability:
      return "a probability from 0 to 1";
    case ParamType::choice:
      return "one of " + joined(spec.choices, true);
    case ParamType::distribution:
      return "a duration or a distribution object";
    case ParamType::text:
      return "a string";
    case ParamType::object:
      return "an object";
  }
  return "a value";
}

// A bound or default in the words a user writes it: "1ms", "10000", "0.01".
std::string value_text(const ParamSpec& spec, const ParamValue& value) {
  struct Text {
    const ParamSpec& spec;
    std::string operator()(std::monostate) const { return spec.default_note; }
    std::string operator()(sim::Duration d) const { return sim::format_duration(d); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t n) const {
      if (spec.type == ParamType::probability) {
        return fmt::format("{}", static_cast<double>(n) / static_cast<double>(sim::kPpmOne));
      }
      return std::to_string(n);
    }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& text) const { return text; }
  };
  return std::visit(Text{spec}, value);
}

template <typename T>
bool within(const ParamSpec& spec, const T& value) {
  if (const T* lo = std::get_if<T>(&spec.min); lo != nullptr && value < *lo) return false;
  if (const T* hi = std::get_if<T>(&spec.max); hi != nullptr && value > *hi) return false;
  return true;
}

// What a value out of the spec's range should have been.
std::string expected_in_range(const ParamSpec& spec) {
  const bool lo = spec.min.index() != 0;
  const bool hi = spec.max.index() != 0;
  const bool duration = spec.type == ParamType::duration || spec.type == ParamType::distribution;
  const auto bound = [&](const ParamValue& v) {
    return duration ? json_quoted(value_text(spec, v)) : value_text(spec, v);
  };
  const std::string noun = duration                              ? "a duration"
                           : spec.type == ParamType::integer     ? "a whole number"
                           : spec.type == ParamType::probability ? "a probability"
                                                                 : "a number";
  if (lo && hi) return fmt::format("{} from {} to {}", noun, bound(spec.min), bound(spec.max));
  if (hi) return fmt::format("{} of at most {}", noun, bound(spec.max));
  if (!lo) return noun;
  const bool shortest_timer = duration && std::get<sim::Duration>(spec.min) == kShortestTimer;
  return fmt::format("{} of at least {}{}", noun, bound(spec.min),
                     shortest_timer ? " (the shortest protocol timer)" : "");
}

}  // namespace

// RFC 6901: '~' and '/' inside a key are written "~0" and "~1".
namespace {
std::string pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string child_pointer(const std::string& pointer, std::string_view key) {
  return pointer + "/" + pointer_token(key);
}

std::string Problem::format() const {
  std::string out;
  if (!context.empty()) out += context + ": ";
  if (!pointer.empty()) out += "at " + pointer + ": ";
  out += "expected " + expected + ", found " + found;
  if (!hint.empty()) out += "; " + hint;
  return out;
}

std::string default_text(const ParamSpec& spec) {
  return value_text(spec, spec.default_value);
}

std::string range_text(const ParamSpec& spec) {
  const bool lo = spec.min.index() != 0;
  const bool hi = spec.max.index() != 0;
  if (lo && hi) {
    return fmt::format("{} to {}", value_text(spec, spec.min), value_text(spec, spec.max));
  }
  if (lo) return "at least " + value_text(spec, spec.min);
  if (hi) return "at most " + value_text(spec, spec.max);
  if (spec.type == ParamType::probability) return "0 to 1";
  return {};
}

std::string param_table_markdown(std::span<const ParamSpec> params) {
  std::string out = "| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n";
  for (const ParamSpec& spec : params) {
    std::string type = param_type_name(spec.type);
    if (!spec.choices.empty()) {
      type.clear();
      for (const std::string& choice : spec.choices)
        type += (type.empty() ? "`" : ", `") + choice + "`";
    }
    // A pipe inside a cell would end it, and "<id>" would be read as a tag.
    std::string meaning;
    for (char c : spec.meaning) {
      if (c == '|') {
        meaning += "\\|";
      } else if (c == '<') {
        meaning += "&lt;";
      } else if (c == '>') {
        meaning += "&gt;";
      } else {
        meaning += c;
      }
    }
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", spec.name, type, default_text(spec),
                       range_text(spec), meaning);
  }
  return out;
}

const char* param_type_name(ParamType type) {
  switch (type) {
    case ParamType::duration:
      return "duration";
    case ParamType::boolean:
      return "boolean";
    case ParamType::integer:
      return "integer";
    case ParamType::number:
      return "number";
    case ParamType::probability:
      return "probability";
    case ParamType::choice:
      return "choice";
    case ParamType::distribution:
      return "distribution";
    case ParamType::text:
      return "text";
    case ParamType::object:
      return "object";
  }
  return "?";
}

std::optional<std::string> closest_name(std::string_view wrong,
                                        std::span<const std::string> names) {
  const std::size_t limit = std::max<std::size_t>(2, wrong.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  std::vector<std::size_t> previous;
  std::vector<std::size_t> current;
  for (const std::string& name : names) {
    // Two-row Levenshtein: previous[j] is the distance between wrong[0..i) and name[0..j).
    previous.resize(name.size() + 1);
    current.resize(name.size() + 1);
    for (std::size_t j = 0; j <= name.size(); ++j) previous[j] = j;
    for (std::size_t i = 1; i <= wrong.size(); ++i) {
      current[0] = i;
      for (std::size_t j = 1; j <= name.size(); ++j) {
        const std::size_t substitute = previous[j - 1] + (wrong[i - 1] == name[j - 1] ? 0 : 1);
        current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
      }
      std::swap(previous, current);
    }
    const std::size_t distance = previous[name.size()];
    // Strictly better only: ties go to the name listed first.
    if (distance <= limit && distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  if (best || wrong.empty()) return best;
  // A key that is the first word of a longer name ("jitter" for "jitter_factor", a parameter
  // renamed when its meaning changed) is that name, whatever the edit distance.
  for (const std::string& name : names) {
    if (name.size() > wrong.size() && name.starts_with(wrong) && name[wrong.size()] == '_') {
      return name;
    }
  }
  return best;
}

std::string json_excerpt(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= kExcerptChars) return text;
  std::size_t cut = kExcerptChars - 3;
  // Never cut a UTF-8 sequence in half.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

namespace {

// "durations need a unit, such as "5s" or "5ms"" for a bare number, but only with suggestions
// that are themselves valid here: a negative number for a field that must not be, 1e+300 or a
// value past the longest duration get no hint.
std::string unit_hint(const std::string& number, bool allow_negative) {
  std::vector<std::string> valid;
  for (const char* unit : {"s", "ms"}) {
    const auto d = sim::parse_duration(number + unit);
    if (d && (allow_negative || d->count() >= 0) && *d <= kLongestDuration &&
        *d >= -kLongestDuration) {
      valid.push_back(json_quoted(number + unit));
    }
  }
  if (valid.empty()) return {};
  return "durations need a unit, such as " + valid[0] + (valid.size() > 1 ? " or " + valid[1] : "");
}

}  // namespace

std::optional<sim::Duration> read_duration(const nlohmann::json& value, const std::string& pointer,
                                           Problems& problems, bool allow_negative) {
  const char* expected = allow_negative ? kDurationExpected : kNonNegativeDurationExpected;
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    const auto d = sim::parse_duration(text);
    // Every duration a user gives is bounded, so that the sums and products the simulator forms
    // from a few of them (deadlines, ttl*2/3, a fault's end) stay far inside 64-bit nanoseconds.
    if (d && (*d > kLongestDuration || *d < -kLongestDuration)) {
      add_problem(
          problems, pointer,
          fmt::format("a duration from {}{} to {} (ten years, the longest electsim accepts)",
                      allow_negative ? "-" : "",
                      allow_negative ? sim::format_duration(kLongestDuration) : "0",
                      json_quoted(sim::format_duration(kLongestDuration))),
          json_excerpt(value));
      return std::nullopt;
    }
    if (!d) {
      const bool overflow = text.find_first_of("0123456789") != std::string::npos &&
                            text.find_first_not_of("-0123456789.hmsnu") == std::string::npos;
      const std::string hint = unit_hint(text, allow_negative);
      add_problem(problems, pointer, expected, json_excerpt(value),
                  !hint.empty() ? hint
                  : overflow    ? fmt::format("the longest duration electsim accepts is {}",
                                              json_quoted(sim::format_duration(kLongestDuration)))
                                : std::string());
      return std::nullopt;
    }
    if (!allow_negative && d->count() < 0) {
      add_problem(problems, pointer, expected, json_excerpt(value));
      return std::nullopt;
    }
    return d;
  }
  if (value.is_number()) {
    // Zero is zero in every unit; any other bare number is ambiguous.
    if (value.get<double>() == 0.0) return sim::Duration(0);
    const std::string number = json_excerpt(value);
    add_problem(problems, pointer, expected, number, unit_hint(number, allow_negative));
    return std::nullopt;
  }
  add_problem(problems, pointer, expected, json_excerpt(value));
  return std::nullopt;
}

std::optional<sim::Ppm> read_probability(const nlohmann::json& value, const std::string& pointer,
                                         Problems& problems) {
  const auto p = finite_number(value);
  if (!p || *p < 0 || *p > 1) {
    add_problem(problems, pointer, "a probability from 0 to 1, such as 0.01", json_excerpt(value));
    return std::nullopt;
  }
  return static_cast<sim::Ppm>(std::llround(*p * static_cast<double>(sim::kPpmOne)));
}

std::optional<sim::Distribution> read_distribution(const nlohmann::json& value,
                                                   const std::string& pointer, Problems& problems) {
  if (value.is_string() || value.is_number()) {
    const auto d = read_duration(value, pointer, problems);
    if (!d) return std::nullopt;
    return sim::Distribution::constant_of(*d);
  }
  if (!value.is_object()) {
    add_problem(problems, pointer,
                "a duration such as \"5ms\" or a distribution object such as {\"dist\": "
                "\"uniform\", \"min\": \"1ms\", \"max\": \"10ms\"}",
                json_excerpt(value));
    return std::nullopt;
  }

  const auto& shapes = distribution_shapes();
  std::vector<std::string> kind_names;
  for (const auto& shape : shapes) kind_names.emplace_back(shape.name);
  const std::string dist_pointer = child_pointer(pointer, "dist");
  const auto dist_it = value.find("dist");
  if (dist_it == value.end()) {
    add_problem(problems, dist_pointer, "one of " + joined(kind_names, true),
                "nothing (a distribution object needs \"dist\")");
    return std::nullopt;
  }
  const DistributionShape* shape = nullptr;
  if (dist_it->is_string()) {
    for (const auto& s : shapes) {
      if (dist_it->get_ref<const std::string&>() == s.name) shape = &s;
    }
  }
  if (shape == nullptr) {
    add_problem(
        problems, dist_pointer, "one of " + joined(kind_names, true), json_excerpt(*dist_it),
        dist_it->is_string() ? did_you_mean(dist_it->get_ref<const std::string&>(), kind_names)
                             : std::string());
    return std::nullopt;
  }

  std::vector<std::string> allowed = {"dist"};
  allowed.insert(allowed.end(), shape->required.begin(), shape->required.end());
  allowed.emplace_back("step");
  const std::size_t before = problems.size();
  reject_unknown_keys_of(
      value, pointer, allowed,
      fmt::format("one of the keys of a {} distribution", json_quoted(shape->name)), problems);
  for (const std::string& key : shape->required) {
    if (!value.contains(key)) {
      add_problem(
          problems, child_pointer(pointer, key),
          key == "sigma" || key == "shape" ? "a number above 0" : kNonNegativeDurationExpected,
          fmt::format("nothing (a {} distribution needs {})", json_quoted(shape->name),
                      json_quoted(key)));
    }
  }
  if (problems.size() != before) return std::nullopt;

  auto duration_of = [&](const char* key) {
    return read_duration(value.at(key), child_pointer(pointer, key), problems);
  };
  auto number_of = [&](const char* key) {
    return read_positive_number(value.at(key), child_pointer(pointer, key), problems);
  };

  sim::Distribution out;
  out.kind = shape->kind;
  if (value.contains("step")) {
    if (auto step = duration_of("step")) out.step = *step;
  }
  switch (shape->kind) {
    case sim::DistributionKind::constant:
      if (auto v = duration_of("value")) out.value = *v;
      break;
    case sim::DistributionKind::uniform: {
      const auto lo = duration_of("min");
      const auto hi = duration_of("max");
      if (lo && hi && *lo > *hi) {
        add_problem(
            problems, child_pointer(pointer, "max"),
            fmt::format("a max of at least the min ({})", json_quoted(sim::format_duration(*lo))),
            json_excerpt(value.at("max")));
      }
      if (lo) out.min = *lo;
      if (hi) out.max = *hi;
      break;
    }
    case sim::DistributionKind::normal:
      if (auto v = duration_of("mean")) out.mean = *v;
      if (auto v = duration_of("stddev")) out.stddev = *v;
      break;
    case sim::DistributionKind::exponential:
      if (auto v = duration_of("mean")) out.mean = *v;
      break;
    case sim::DistributionKind::lognormal:
      if (auto v = duration_of("median")) out.median = *v;
      if (auto v = number_of("sigma")) out.sigma = *v;
      break;
    case sim::DistributionKind::pareto:
      if (auto v = duration_of("scale")) out.scale = *v;
      if (auto v = number_of("shape")) out.shape = *v;
      break;
  }
  if (problems.size() != before) return std::nullopt;
  return out;
}

void reject_unknown_keys(const nlohmann::json& object, const std::string& pointer,
                         std::span<const std::string> allowed, Problems& problems) {
  reject_unknown_keys_of(object, pointer, allowed, "one of the known keys", problems);
}

namespace {

std::string node_id_expected(std::size_t node_count) {
  if (node_count == 0) return "a node id, but the cluster has no nodes";
  return fmt::format("a node id from 0 to {}", node_count - 1);
}

}  // namespace

std::optional<sim::NodeId> read_node_id(const nlohmann::json& value, const std::string& pointer,
                                        std::size_t node_count, Problems& problems) {
  bool ok = false;
  std::uint64_t id = 0;
  if (value.is_number_unsigned()) {
    id = value.get<std::uint64_t>();
    ok = true;
  } else if (value.is_number_integer()) {
    const std::int64_t v = value.get<std::int64_t>();
    ok = v >= 0;
    id = static_cast<std::uint64_t>(v);
  }
  if (!ok || id >= node_count) {
    add_problem(problems, pointer, node_id_expected(node_count), json_excerpt(value));
    return std::nullopt;
  }
  return static_cast<sim::NodeId>(id);
}

std::optional<std::vector<sim::NodeId>> read_node_ids(const nlohmann::json& array,
                                                      const std::string& pointer,
                                                      std::size_t node_count, Problems& problems) {
  const std::size_t before = problems.size();
  std::vector<sim::NodeId> ids;
  std::vector<std::size_t> first_at(node_count, array.size());  // index of each id's first entry
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string at = pointer + "/" + std::to_string(i);
    const auto id = read_node_id(array[i], at, node_count, problems);
    if (!id) continue;
    std::size_t& first = first_at[static_cast<std::size_t>(*id)];
    if (first != array.size()) {
      add_problem(problems, at, "each node id once",
                  fmt::format("node {} again (first at {}/{})", *id, pointer, first));
      continue;
    }
    first = i;
    ids.push_back(*id);
  }
  if (problems.size() != before) return std::nullopt;
  return ids;
}

std::optional<NameOrNodeIds> read_name_or_node_ids(const nlohmann::json& value,
                                                   const std::string& pointer,
                                                   std::span<const std::string> names,
                                                   const std::string& expected,
                                                   std::size_t node_count, Problems& problems) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (std::find(names.begin(), names.end(), text) != names.end()) return NameOrNodeIds(text);
    add_problem(problems, pointer, expected, json_excerpt(value), did_you_mean(text, names));
    return std::nullopt;
  }
  if (!value.is_array()) {
    add_problem(problems, pointer, expected, json_excerpt(value));
    return std::nullopt;
  }
  auto ids = read_node_ids(value, pointer, node_count, problems);
  if (!ids) return std::nullopt;
  return NameOrNodeIds(std::move(*ids));
}

// ---- ParamReader ----------------------------------------------------------------------------

ParamReader::ParamReader(const nlohmann::json& object, std::string pointer,
                         std::span<const ParamSpec> specs, Problems& problems)
    : object_(object), pointer_(std::move(pointer)), specs_(specs), problems_(problems) {
  if (object_.is_null()) return;  // no parameters given: every default applies
  if (!object_.is_object()) {
    add_problem(problems_, pointer_, "an object of parameters", json_excerpt(object_));
    return;
  }
  std::vector<std::string> names;
  names.reserve(specs_.size());
  for (const ParamSpec& s : specs_) names.push_back(s.name);
  reject_unknown_keys_of(object_, pointer_, names, "one of the parameters", problems_);
  for (const ParamSpec& s : specs_) {
    if (s.required && !object_.contains(s.name)) {
      add_problem(problems_, pointer_of(s.name), expected_of(s),
                  "nothing (" + json_quoted(s.name) + " is required)");
    }
  }
}

bool ParamReader::has(std::string_view name) const {
  return object_.is_object() && object_.contains(std::string(name));
}

std::string ParamReader::pointer_of(std::string_view name) const {
  return child_pointer(pointer_, name);
}

void ParamReader::problem(std::string_view name, std::string expected, std::string found) {
  add_problem(problems_, pointer_of(name), std::move(expected), std::move(found));
}

const ParamSpec& ParamReader::spec(std::string_view name) const {
  const auto it = std::find_if(specs_.begin(), specs_.end(),
                               [&](const ParamSpec& s) { return s.name == name; });
  ELECTSIM_ASSERT(it != specs_.end(), "a reader asks only for a parameter of its spec table");
  return *it;
}

const nlohmann::json* ParamReader::given(std::string_view name) const {
  const ParamSpec& s = spec(name);
  if (has(name)) return &object_.at(std::string(name));
  // A required key that is missing was reported at construction; any other parameter without a
  // typed default must be read with a *_opt reader.
  ELECTSIM_ASSERT(s.required || s.default_value.index() != 0,
                  "a parameter without a typed default is read with a *_opt reader");
  return nullptr;
}

template <typename T>
T ParamReader::default_of(std::string_view name) const {
  const ParamSpec& s = spec(name);
  if (s.required) return T{};
  const T* value = std::get_if<T>(&s.default_value);
  ELECTSIM_ASSERT(value != nullptr, "a parameter's default has its type's alternative");
  return *value;
}

template <typename T>
bool ParamReader::within_range(std::string_view name, const T& value, const nlohmann::json& given) {
  const ParamSpec& s = spec(name);
  if (within(s, value)) return true;
  add_problem(problems_, pointer_of(name), expected_in_range(s), json_excerpt(given));
  return false;
}

sim::Duration ParamReader::duration(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<sim::Duration>(name);
  const auto d = read_duration(*v, pointer_of(name), problems_);
  if (!d || !within_range(name, *d, *v)) return sim::Duration(0);
  return *d;
}

std::optional<sim::Duration> ParamReader::duration_opt(std::string_view name) {
  spec(name);
  if (!has(name)) return std::nullopt;
  const json& v = object_.at(std::string(name));
  const auto d = read_duration(v, pointer_of(name), problems_);
  if (!d || !within_range(name, *d, v)) return std::nullopt;
  return d;
}

std::optional<sim::Duration> ParamReader::timer(std::string_view name) {
  const auto* min = std::get_if<sim::Duration>(&spec(name).min);
  ELECTSIM_ASSERT(min != nullptr && *min >= kShortestTimer,
                  "a timer's spec states a minimum of at least kShortestTimer");
  const std::size_t before = problems_.size();
  const sim::Duration d = duration(name);
  if (problems_.size() != before) return std::nullopt;
  return d;
}

std::optional<sim::Duration> ParamReader::timer_opt(std::string_view name) {
  spec(name);
  if (!has(name)) return std::nullopt;
  return timer(name);
}

bool ParamReader::boolean(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<bool>(name);
  if (!v->is_boolean()) {
    add_problem(problems_, pointer_of(name), "true or false", json_excerpt(*v));
    return false;
  }
  return v->get<bool>();
}

std::int64_t ParamReader::integer(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<std::int64_t>(name);
  if (v->is_number_unsigned() &&
      v->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    add_problem(problems_, pointer_of(name), "a whole number below 2^63", json_excerpt(*v));
    return 0;
  }
  if (!v->is_number_integer()) {
    add_problem(problems_, pointer_of(name), "a whole number", json_excerpt(*v));
    return 0;
  }
  const std::int64_t n = v->get<std::int64_t>();
  if (!within_range(name, n, *v)) return 0;
  return n;
}

double ParamReader::number(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<double>(name);
  const auto d = finite_number(*v);
  if (!d) {
    add_problem(problems_, pointer_of(name), "a number", json_excerpt(*v));
    return 0;
  }
  if (!within_range(name, *d, *v)) return 0;
  return *d;
}

sim::Ppm ParamReader::probability(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<std::int64_t>(name);
  return read_probability(*v, pointer_of(name), problems_).value_or(0);
}

std::string ParamReader::choice(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<std::string>(name);
  const ParamSpec& s = spec(name);
  if (v->is_string()) {
    const auto& text = v->get_ref<const std::string&>();
    if (std::find(s.choices.begin(), s.choices.end(), text) != s.choices.end()) return text;
    add_problem(problems_, pointer_of(name), expected_of(s), json_excerpt(*v),
                did_you_mean(text, s.choices));
    return {};
  }
  add_problem(problems_, pointer_of(name), expected_of(s), json_excerpt(*v));
  return {};
}

std::string name_length_problem(std::string_view text) {
  if (text.size() <= kMaxNameBytes) return {};
  return fmt::format("a text of {} bytes", text.size());
}

std::size_t ParamReader::choice_index(std::string_view name) {
  const std::string chosen = choice(name);
  const std::vector<std::string>& choices = spec(name).choices;
  const auto it = std::find(choices.begin(), choices.end(), chosen);
  return it == choices.end() ? 0 : static_cast<std::size_t>(it - choices.begin());
}

std::string ParamReader::text(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return default_of<std::string>(name);
  if (v->is_string()) {
    if (std::string found = name_length_problem(v->get_ref<const std::string&>()); !found.empty()) {
      add_problem(problems_, pointer_of(name), kNameLengthExpected, found);
      return {};
    }
    return v->get<std::string>();
  }
  add_problem(problems_, pointer_of(name), expected_of(spec(name)), json_excerpt(*v));
  return {};
}

sim::Distribution ParamReader::distribution(std::string_view name) {
  const json* v = given(name);
  if (v == nullptr) return sim::Distribution::constant_of(default_of<sim::Duration>(name));
  return read_distribution(*v, pointer_of(name), problems_).value_or(sim::Distribution{});
}

std::optional<sim::Distribution> ParamReader::distribution_opt(std::string_view name) {
  spec(name);
  if (!has(name)) return std::nullopt;
  return read_distribution(object_.at(std::string(name)), pointer_of(name), problems_);
}

}  // namespace electsim::params
