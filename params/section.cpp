// Sections read by hand (params/section.hpp), worded as every reader of a scenario words them.
#include "params/section.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace electsim::params {

using nlohmann::json;

std::string json_quoted(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string joined(std::span<const std::string> names, bool quote) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote ? json_quoted(names[i]) : names[i];
  }
  return out;
}

std::string did_you_mean(std::string_view wrong, std::span<const std::string> names) {
  if (auto best = closest_name(wrong, names)) return "did you mean " + json_quoted(*best) + "?";
  if (wrong.size() >= 3) {
    for (const std::string& name : names) {
      if (name.size() > wrong.size() && name.compare(0, wrong.size(), wrong) == 0) {
        return "did you mean " + json_quoted(name) + "?";
      }
    }
  }
  return {};
}

std::optional<std::uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  return std::nullopt;
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

void add_problem(Problems& problems, std::string pointer, std::string expected, std::string found,
                 std::string hint) {
  problems.push_back(
      Problem{std::move(pointer), std::move(expected), std::move(found), std::move(hint), {}});
}

bool check_object(const json& value, const std::string& pointer,
                  const std::vector<std::string>& keys, const std::string& what,
                  Problems& problems) {
  if (!value.is_object()) {
    add_problem(problems, pointer, "an object (" + what + ")", json_excerpt(value));
    return false;
  }
  for (const auto& [key, item] : value.items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    add_problem(problems, child_pointer(pointer, key),
                fmt::format("one of the keys of {}: {}", what, joined(keys, false)),
                "unknown key " + json_quoted(key), did_you_mean(key, keys));
  }
  return true;
}

std::optional<bool> read_bool(const json& v, const std::string& pointer, Problems& problems) {
  if (!v.is_boolean()) {
    add_problem(problems, pointer, "true or false", json_excerpt(v));
    return std::nullopt;
  }
  return v.get<bool>();
}

std::optional<sim::Duration> read_positive_duration(const json& v, const std::string& pointer,
                                                    Problems& problems) {
  const auto d = read_duration(v, pointer, problems);
  if (!d) return std::nullopt;
  if (d->count() == 0) {
    add_problem(problems, pointer, "a duration above 0, such as \"100ms\"", json_excerpt(v));
    return std::nullopt;
  }
  return d;
}

// Below a millisecond a run measures only how fast the simulator spins (a "3ns" scan interval
// wakes the store three hundred million times a simulated second, and the run never ends).
std::optional<sim::Duration> read_server_timer(const json& v, const std::string& pointer,
                                               Problems& problems, const char* zero_means) {
  const std::size_t before = problems.size();
  const auto d = read_duration(v, pointer, problems);
  if (!d || problems.size() != before) return std::nullopt;
  if (zero_means != nullptr && d->count() == 0) return d;
  if (*d < kShortestTimer) {
    const std::string shortest = json_quoted(sim::format_duration(kShortestTimer));
    add_problem(
        problems, pointer,
        zero_means != nullptr
            ? fmt::format("\"0s\" ({}) or a duration of at least {} (the shortest server timer)",
                          zero_means, shortest)
            : fmt::format("a duration of at least {} (the shortest server timer)", shortest),
        json_excerpt(v));
    return std::nullopt;
  }
  return d;
}

}  // namespace electsim::params
