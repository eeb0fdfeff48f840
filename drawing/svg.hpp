// Small helpers for writing SVG pictures by hand (the sweep line chart, the run timeline): XML
// escaping, locale-free number text, "nice" axis ticks on 1-2-5 steps (Heckbert, "Nice numbers
// for graph labels", Graphics Gems 1990) and time ticks in a readable unit. Everything here is
// deterministic: the same input gives the same bytes on every machine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace electsim::drawing::svg {

// Escapes & < > " ' for use in text and in quoted attributes. Control characters that XML 1.0
// cannot carry at all (below U+0020 except tab, newline, carriage return) become U+FFFD, so any
// label keeps the document well formed.
std::string escape(std::string_view text);

// Fixed text with at most 3 decimals, trailing zeros and a trailing point removed, never an
// exponent, never "-0", independent of the locale: 12.5 -> "12.5", 0.001 -> "0.001", -3 -> "-3".
// Meant for coordinates. Non-finite values read "nan", "inf", "-inf".
std::string number(double value);
// The same with at most `decimals_max` decimals (0 to 17).
std::string number(double value, int decimals_max);
// Text with about `digits` significant digits and no exponent (for tooltips of small values:
// 0.000123 -> "0.000123" where number() would say "0").
std::string significant(double value, int digits);

struct Tick {
  double value;
  std::string label;
};

// About `target` evenly spaced ticks on 1-2-5 steps covering [lo, hi] (lo may equal hi). The
// first tick is <= lo and the last >= hi, so they make a natural axis domain. Labels carry just
// enough decimals for the step. Empty only for non-finite input.
std::vector<Tick> nice_ticks(double lo, double hi, int target);

// A time unit for labels.
struct DurationUnit {
  std::string_view suffix;  // "ns", "us", "ms", "s", "min", "h"
  double ns;                // nanoseconds in one unit
};

// Duration ticks together with the one unit chosen for all their labels.
struct DurationTicks {
  DurationUnit unit;
  std::vector<Tick> ticks;  // labels carry the suffix: "1.5s"
};

// Ticks for a time axis in nanoseconds: picks the unit (ns, us, ms, s, min, h) so labels read
// "250ms", "1.5s", "2min", "3h"; steps are 1-2-5 multiples of the unit or, for minutes and hours,
// 1, 2, 5, 10, 15, 30. One unit for the whole axis, with at most 3 decimals in any label.
std::vector<Tick> duration_ticks(double lo_ns, double hi_ns, int target);
// The same, also telling the unit (a picture can then write bare numbers and put the unit in the
// axis label: "failover p99 (s)").
DurationTicks duration_axis(double lo_ns, double hi_ns, int target);

// Formats a duration in ns for labels the same way ("1.5s", "250ms"): the largest unit not above
// the value, at most 3 decimals. Zero reads "0s".
std::string duration_label(double ns);

// Rough width in pixels of `text` in a generic sans-serif face (code points times an average
// advance). Enough to lay out margins and legends, and deterministic, unlike measuring.
double text_width_estimate(std::string_view text, double font_px);

}  // namespace electsim::drawing::svg
