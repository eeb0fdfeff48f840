// Expectations: bounds a scenario states on the report's metrics, and the verdict that says which
// bound broke, by how much, and when. The catalogue of metric names is here so that the scenario
// loader can reject unknown ones with a suggestion.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/report.hpp"

namespace electsim::analysis {

enum class MetricUnit { duration, count, fraction, rate };

struct MetricInfo {
  std::string name;
  MetricUnit unit = MetricUnit::count;
  std::string meaning;
  std::string absent_when;  // when it has no value ("no observed failover"); "" for never
  // Its value in a report, in its unit (durations in nanoseconds), or nullopt when not observed.
  std::optional<double> (*value)(const Report& report) = nullptr;
  // It can be taken over one class of a fleet's services (`expect_by_class`): it reads only the
  // fleet figures a class has too (class_metric).
  bool per_class = false;
};
std::span<const MetricInfo> metric_catalogue();
const MetricInfo* find_metric(std::string_view name);
const char* metric_unit_name(MetricUnit unit);  // "duration", "count", "fraction", "rate"
// docs/metrics.md's table of metrics (metric, unit, when not observed), from the catalogue.
std::string metric_table_markdown();

// A metric's value in a report, in its unit (durations in nanoseconds). Metrics that were not
// observed (no failover happened) return nullopt.
std::optional<double> metric_value(const Report& report, std::string_view name);

struct Expectation {
  std::string metric;
  // A bound on one class of a fleet's services (`expect_by_class`): the metric is taken over that
  // class's services alone (class_metric). "" for the whole run.
  std::string service_class;
  std::optional<double> min;      // inclusive; durations in ns
  std::optional<double> max;      // inclusive
  bool require_observed = false;  // fail when the metric was not observed at all
  std::string pointer;            // where in the scenario file it was stated
};

// Whether `name` can be taken over one class of a fleet's services (MetricInfo::per_class).
bool metric_per_class(std::string_view name);
// The value of such a metric over class `c` of the report's fleet alone.
std::optional<double> class_metric(const Report& report, const ClassFigures& c,
                                   std::string_view name);

struct Breach {
  Expectation expectation;
  std::optional<double> actual;
  std::string
      message;  // "split_brain_time = 1.2s, above max 0s by 1.2s; first at 12.345s (nodes 0, 3)"
};

struct Verdict {
  std::vector<Breach> breaches;
  // False when no expect block judged the run (`electsim check` without a scenario): the verdict
  // line then names the harm instead of a PASS.
  bool judged = true;
  bool ok() const { return breaches.empty(); }
};

Verdict check(const Report& report, std::span<const Expectation> expectations);

// What was going on in an outage, in words: "during: crash of store:1 at 10.000s; before: ..." or
// "no fault".
std::string outage_causes_text(const Outage& outage);

// The harm in a run whatever its expect block says (split-brain, stale writes accepted,
// overwrites, equal-token writes, same-epoch leaders, a broken store), as phrases for a verdict
// line; empty when there is none.
std::vector<std::string> harm_in(const Report& report);
// A service that never wrote again (or never wrote), as phrases for a verdict line.
std::vector<std::string> liveness_concerns(const Report& report);

}  // namespace electsim::analysis
