// Typed values from JSON with located errors: the one place where scenario text becomes durations,
// distributions, probabilities and choices. A table of ParamSpec drives validation, `electsim list`
// and the docs. Every problem carries the JSON pointer of the field, what was expected and what was
// found; unknown keys get the closest valid name as a suggestion.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/distribution.hpp"
#include "sim/ids.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace electsim::params {

struct Problem {
  std::string pointer;   // JSON pointer of the field, "/protocol/ttl"
  std::string expected;  // "a duration such as \"150ms\" or \"5s\""
  std::string found;     // the offending text, "\"ten\"", or a sentence
  std::string hint;      // optional: "did you mean \"renew_interval\"?"
  std::string context;   // optional: what put the value there, "--set protocol.tll=3s"
  // "[<context>: ]at /protocol/ttl: expected ..., found ...[; did you mean ...?]"; the "at" part
  // is left out when the pointer is "" (the whole document or file).
  std::string format() const;
};
using Problems = std::vector<Problem>;

enum class ParamType {
  duration,
  boolean,
  integer,
  number,
  probability,
  choice,
  distribution,
  text,
  object
};
const char* param_type_name(ParamType type);

// A parameter's typed value: its default or a bound of its range. The alternative follows the
// parameter's type: a Duration (duration, distribution), a bool (boolean), a whole number (integer;
// a probability in ppm), a double (number), a string (choice, text).
using ParamValue =
    std::variant<std::monostate, sim::Duration, bool, std::int64_t, double, std::string>;

// One parameter. The default is stated once, by the protocol's config struct, and copied in
// typed (a table is built from a default-constructed config); the range is stated here and only
// here. The reader applies both, and `electsim list`, the comparison page and
// docs/scenario-format.md show them, so what a user reads is what the reader does.
struct ParamSpec {
  std::string name{};
  ParamType type = ParamType::duration;
  // Empty when the default depends on other values or means "not set"; default_note then says
  // what it is ("ttl/3", "none") and the parameter is read with a *_opt reader.
  ParamValue default_value{};
  std::string default_note{};
  // Inclusive bounds of a duration, integer or number (the default's alternative); empty: the
  // type's own (a duration from 0 to ten years, any whole number, any finite number). A timer
  // (ParamReader::timer) states a minimum of at least kShortestTimer.
  ParamValue min{};
  ParamValue max{};
  std::string meaning{};               // one line
  std::vector<std::string> choices{};  // type == choice, in the order of the config's enum
  bool required = false;
};

// What a user is shown: "2s", "true", "0.01", "ttl/3", "none".
std::string default_text(const ParamSpec& spec);
// The range in words: "at least 1ms", "1 to 10000", "0 to 10", or "" for the type's own.
std::string range_text(const ParamSpec& spec);
// The choice's name for an enum value, `names` listed in the enum's order.
template <typename Enum, std::size_t N>
std::string choice_name(const char* const (&names)[N], Enum value) {
  return names[static_cast<std::size_t>(value)];
}
// The spec's choices from the same names.
template <std::size_t N>
std::vector<std::string> choice_names(const char* const (&names)[N]) {
  return {std::begin(names), std::end(names)};
}
// A markdown table of the parameters: name, type, default, range, meaning.
std::string param_table_markdown(std::span<const ParamSpec> params);

// Levenshtein-closest candidate within a small distance, for "did you mean" hints.
std::optional<std::string> closest_name(std::string_view wrong, std::span<const std::string> names);
std::string json_excerpt(const nlohmann::json& value);  // short text of a value for messages
// The JSON pointer of `key` inside the object at `pointer` (RFC 6901 escaping of '~' and '/').
std::string child_pointer(const std::string& pointer, std::string_view key);

// Reads values of one JSON object against its spec table. Missing keys give the default (parsed
// from default_text where it is a literal) or nullopt from the *_opt readers; unknown keys are
// reported once, at construction.
class ParamReader {
 public:
  ParamReader(const nlohmann::json& object, std::string pointer, std::span<const ParamSpec> specs,
              Problems& problems);

  bool has(std::string_view name) const;
  sim::Duration duration(std::string_view name);
  std::optional<sim::Duration> duration_opt(std::string_view name);
  // A protocol timer (a timeout, an interval, a TTL): the given value or the default, within
  // the spec's range, whose minimum is at least kShortestTimer. Nullopt, with one problem recorded,
  // when it is wrong, so that no cross-check runs on a value nobody meant. timer_opt: nullopt also
  // when it was not given.
  std::optional<sim::Duration> timer(std::string_view name);
  std::optional<sim::Duration> timer_opt(std::string_view name);
  bool boolean(std::string_view name);
  std::int64_t integer(std::string_view name);
  double number(std::string_view name);
  sim::Ppm probability(std::string_view name);  // [0, 1] in the file, ppm from here on
  std::string choice(std::string_view name);
  // The position of the chosen name in the spec's choices (0 when it was wrong, with a problem):
  // the config's enum value when the choices are listed in its order.
  std::size_t choice_index(std::string_view name);
  std::string text(std::string_view name);  // any string (a store key, a name)
  sim::Distribution distribution(std::string_view name);
  std::optional<sim::Distribution> distribution_opt(std::string_view name);

  // Records a problem about a field of this object (cross-field checks such as renew_interval <
  // ttl).
  void problem(std::string_view name, std::string expected, std::string found);
  std::string pointer_of(std::string_view name) const;

 private:
  const ParamSpec& spec(std::string_view name) const;
  // The given value, or nullptr when the default applies.
  const nlohmann::json* given(std::string_view name) const;
  template <typename T>
  T default_of(std::string_view name) const;
  // True when `value` lies in the spec's range; otherwise one problem showing `given`.
  template <typename T>
  bool within_range(std::string_view name, const T& value, const nlohmann::json& given);

  const nlohmann::json& object_;
  std::string pointer_;
  std::span<const ParamSpec> specs_;
  Problems& problems_;
};

// Free readers, usable outside a spec table (the scenario loader uses them for every section).
// The longest duration (and, negated, the most negative one) a scenario may give anywhere: ten
// years. Sums of a few such values cannot overflow 64-bit nanoseconds (292 years).
// The shortest timer a protocol may set from a parameter. Below a millisecond a run measures only
// how fast the simulator spins (a 3ns TTL renews a billion times a second); no real deployment
// is tuned that fine.
inline constexpr sim::Duration kShortestTimer = std::chrono::milliseconds(1);

// The longest name or key a scenario may give (its name, a variant's, a store key or prefix), in
// bytes. Each is written into trace lines, escaped (at most 6 bytes per byte); three of them fit
// a trace line with room to spare, so whatever electsim writes, `electsim check` reads.
inline constexpr std::size_t kMaxNameBytes = 1024;
// What a scenario is told when a name or key is longer: "" when `text` is within the bound.
std::string name_length_problem(std::string_view text);
inline constexpr const char* kNameLengthExpected =
    "a name or key of at most 1024 bytes (the limit on names and keys, which keeps every trace "
    "line within what `electsim check` reads)";

inline constexpr sim::Duration kLongestDuration = std::chrono::hours(24 * 365 * 10);

std::optional<sim::Duration> read_duration(const nlohmann::json& value, const std::string& pointer,
                                           Problems& problems, bool allow_negative = false);
std::optional<sim::Ppm> read_probability(const nlohmann::json& value, const std::string& pointer,
                                         Problems& problems);
// A distribution: "150ms" (constant) or an object {"dist": "uniform", "min": "1ms", "max": "10ms",
// "step": "1ms"} / {"dist": "normal", "mean", "stddev"} / {"dist": "exponential", "mean"} /
// {"dist": "lognormal", "median", "sigma"} / {"dist": "pareto", "scale", "shape"}.
std::optional<sim::Distribution> read_distribution(const nlohmann::json& value,
                                                   const std::string& pointer, Problems& problems);
// A JSON integer naming a node of a cluster of `node_count` nodes, or nullopt with one problem.
std::optional<sim::NodeId> read_node_id(const nlohmann::json& value, const std::string& pointer,
                                        std::size_t node_count, Problems& problems);
// An array of distinct node ids, in the order given. Each bad entry is a problem at its own
// pointer, a repeated id at the repeat's, naming where it came first.
std::optional<std::vector<sim::NodeId>> read_node_ids(const nlohmann::json& array,
                                                      const std::string& pointer,
                                                      std::size_t node_count, Problems& problems);
// One of `names` or an array of distinct node ids, as `"all"` or `[0, 3]` for who starts. A
// string that is not a name (with the closest as a hint) or a value that is neither is one problem
// saying `expected`.
using NameOrNodeIds = std::variant<std::string, std::vector<sim::NodeId>>;
std::optional<NameOrNodeIds> read_name_or_node_ids(const nlohmann::json& value,
                                                   const std::string& pointer,
                                                   std::span<const std::string> names,
                                                   const std::string& expected,
                                                   std::size_t node_count, Problems& problems);
// Rejects keys of `object` not in `allowed`, with a suggestion.
void reject_unknown_keys(const nlohmann::json& object, const std::string& pointer,
                         std::span<const std::string> allowed, Problems& problems);

}  // namespace electsim::params
