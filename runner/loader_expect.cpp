// The scenario loader (runner/loader_detail.hpp): `expect` blocks and `variants`.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runner/loader_detail.hpp"

namespace electsim::runner::detail {

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
        const auto d = params::read_duration(*b, bound_pointer, problems_);
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

void Loader::read_expect_by_class(const json& v, const std::string& pointer,
                                  std::vector<analysis::Expectation>& into) {
  const bool has_services = services_given_;
  if (!v.is_object()) {
    problem(pointer,
            "an object from a class of services to an expect block, such as {\"api\": "
            "{\"fleet_services_stalled\": {\"max\": 0}}}",
            json_excerpt(v));
    return;
  }
  // A fleet whose services section did not load has said why already.
  if (classes_.empty() || classes_.front().name.empty()) {
    if (!has_services || !classes_.empty()) {
      problem(pointer, "a fleet with classes of services (services.classes) to bound",
              has_services ? "a fleet without classes" : "no services section");
    }
    return;
  }
  std::vector<std::string> names;
  for (const ServiceClass& c : classes_) names.push_back(c.name);
  std::vector<std::string> per_class;
  for (const analysis::MetricInfo& m : analysis::metric_catalogue()) {
    if (analysis::metric_per_class(m.name)) per_class.push_back(m.name);
  }
  for (const auto& [name, block] : v.items()) {
    const std::string at = child(pointer, name);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      problem(at, "the name of one of the fleet's classes: " + joined(names, true),
              json_quoted(name), did_you_mean(name, names));
      continue;
    }
    for (analysis::Expectation& e : read_expect(block, at)) {
      if (!analysis::metric_per_class(e.metric)) {
        problem(e.pointer,
                "a metric a class's services give on their own: " + joined(per_class, true),
                json_quoted(e.metric));
        continue;
      }
      e.service_class = name;
      into.push_back(std::move(e));
    }
  }
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
    if (std::string found = params::name_length_problem(name); !found.empty()) {
      // The pointer would carry the whole name; the message names its length instead.
      problem("/variants", std::string(params::kNameLengthExpected) + " as a variant's name",
              found);
      continue;
    }
    const std::string pointer = child("/variants", name);
    if (name.empty()) problem(pointer, "a non-empty variant name", "\"\"");
    if (!check_object(body, pointer, {"description", "set", "expect", "expect_by_class"},
                      "a variant")) {
      continue;
    }
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
    if (const json* by_class = get(body, "expect_by_class")) {
      // The selected variant's bounds on classes replace the file's; every variant's are checked.
      std::vector<analysis::Expectation> bounds;
      read_expect_by_class(*by_class, child(pointer, "expect_by_class"), bounds);
      if (variant && *variant == name) class_bounds_ = std::move(bounds);
    }
  }
  return selected;
}

}  // namespace electsim::runner::detail
