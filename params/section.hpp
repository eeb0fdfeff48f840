// Sections of a scenario read by hand, with one wording for every reader: the loader's own
// sections and each server kind's (servers/<kind>/). A section is an object whose unknown keys are
// reported with the closest valid one; its values are read with the readers of params.hpp and
// these, each problem at its JSON pointer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "sim/time.hpp"

namespace electsim::params {

// `text` as a JSON string literal: "\"store\"".
std::string json_quoted(std::string_view text);
// "a, b, c", each quoted as JSON when `quote`.
std::string joined(std::span<const std::string> names, bool quote);
// "did you mean \"x\"?" for the closest name, failing that for the first name `wrong` begins
// ("split_brain" for "split_brain_time"); "" when nothing is close.
std::string did_you_mean(std::string_view wrong, std::span<const std::string> names);
// Parsed JSON holds non-negative integers as unsigned, values built in code as signed.
std::optional<std::uint64_t> as_unsigned(const nlohmann::json& v);
// The member `key` of `object`, or nullptr when it has none (or is not an object).
const nlohmann::json* member(const nlohmann::json& object, const char* key);
// What a problem found where a required key is missing.
inline constexpr const char* kRequired = "nothing (the key is required)";
void add_problem(Problems& problems, std::string pointer, std::string expected, std::string found,
                 std::string hint = {});

// True when `value` is an object; reports each key outside `keys`, naming the section `what`.
bool check_object(const nlohmann::json& value, const std::string& pointer,
                  const std::vector<std::string>& keys, const std::string& what,
                  Problems& problems);
std::optional<bool> read_bool(const nlohmann::json& v, const std::string& pointer,
                              Problems& problems);
std::optional<sim::Duration> read_positive_duration(const nlohmann::json& v,
                                                    const std::string& pointer, Problems& problems);
// A server's timer: from kShortestTimer up, or "0s" where `zero_means` says what 0 does (nullptr:
// 0 is refused too). Servers time with the protocols' lower bound for the protocols' reason.
std::optional<sim::Duration> read_server_timer(const nlohmann::json& v, const std::string& pointer,
                                               Problems& problems,
                                               const char* zero_means = nullptr);

}  // namespace electsim::params
