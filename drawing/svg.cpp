// SVG text helpers: escaping, locale-free numbers, 1-2-5 ticks and time ticks. Ticks follow
// Heckbert's "nice numbers" (Graphics Gems, 1990): a step of 1, 2 or 5 times a power of ten; tick
// values are built as integer multiples of the step so that labels never collect rounding noise.
#include "drawing/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

namespace electsim::drawing::svg {

namespace {

// Powers of ten up to 1e22 are exact in a double; beyond, repeated multiplication keeps the
// result independent of the maths library.
double power_of_ten(int exponent) {
  static constexpr std::array<double, 23> kExact = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const int magnitude = exponent < 0 ? -exponent : exponent;
  double p = 1.0;
  if (magnitude < static_cast<int>(kExact.size())) {
    p = kExact[static_cast<std::size_t>(magnitude)];
  } else {
    p = kExact.back();
    for (int i = static_cast<int>(kExact.size()) - 1; i < magnitude; ++i) p *= 10.0;
  }
  return exponent < 0 ? 1.0 / p : p;
}

// floor(log10(x)) for x > 0, corrected so that exact powers of ten land on their own exponent.
int decade_of(double x) {
  int e = static_cast<int>(std::floor(std::log10(x)));
  if (power_of_ten(e) > x) --e;
  if (power_of_ten(e + 1) <= x) ++e;
  return e;
}

// The width under which two ends count as one value (all-equal data up to rounding).
bool is_degenerate(double lo, double hi) {
  const double magnitude = std::max(std::fabs(lo), std::fabs(hi));
  return hi - lo <= magnitude * 1e-12;
}

// The step count chosen for [lo, hi] with this step: integer multiples first..last of it.
struct Span {
  double first;  // index of the first tick (an integer)
  double last;   // index of the last tick
  double count() const { return last - first + 1; }
};

// Whether a step covering [lo, hi] with `span` beats the best so far: a tick count nearer the
// target first, then less axis beyond the data, then (candidates come in ascending order) the
// larger step. 0..5ms gets 1ms steps ending at 5ms rather than 2ms steps running on to 6ms.
struct Choice {
  double score = 0;  // distance of the tick count from the target
  double waste = 0;  // fraction of the axis outside [lo, hi]
};

bool better_or_equal(const Choice& candidate, const Choice& best) {
  constexpr double kTie = 1e-9;
  if (candidate.score < best.score - kTie) return true;
  if (candidate.score > best.score + kTie) return false;
  return candidate.waste <= best.waste + kTie;
}

Choice choice_for(double lo, double hi, double step, const Span& span, int target) {
  const double axis = (span.last - span.first) * step;
  return Choice{std::fabs(span.count() - target), axis > 0 ? (axis - (hi - lo)) / axis : 0};
}

Span span_for(double lo, double hi, double step) {
  // The small slack keeps an end that is a multiple of the step up to rounding from adding a tick.
  return Span{std::floor(lo / step + 1e-9), std::ceil(hi / step - 1e-9)};
}

// Ticks are limited so that a mistaken range cannot produce a runaway picture.
constexpr double kTicksMax = 1000;

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";  // U+FFFD: XML 1.0 has no way to write these characters
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string number(double value) {
  return number(value, 3);
}

std::string number(double value, int decimals_max) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  decimals_max = std::clamp(decimals_max, 0, 17);
  // fmt never consults the locale without the 'L' flag, and its fixed output is exact rounding.
  std::string text = fmt::format("{:.{}f}", value, decimals_max);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

std::string significant(double value, int digits) {
  if (!std::isfinite(value) || value == 0) return number(value, 0);
  const int decimals = std::max(digits, 1) - 1 - decade_of(std::fabs(value));
  return number(value, std::clamp(decimals, 0, 17));
}

std::vector<Tick> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (lo > hi) std::swap(lo, hi);
  target = std::clamp(target, 2, 50);
  if (is_degenerate(lo, hi)) {
    const double magnitude = std::max(std::fabs(lo), std::fabs(hi));
    const double widen = magnitude > 0 ? power_of_ten(decade_of(magnitude)) : 1.0;
    lo -= widen;
    hi += widen;
  }
  if (!std::isfinite(hi - lo)) return {};

  const double raw = (hi - lo) / (target - 1);
  const int decade = decade_of(raw);
  // Candidates around the raw step, judged by better_or_equal.
  int best_mantissa = 1;
  int best_exponent = decade;
  Choice best_choice;
  bool found = false;
  for (int exponent = decade - 1; exponent <= decade + 1; ++exponent) {
    for (int mantissa : {1, 2, 5}) {
      const double step = mantissa * power_of_ten(exponent);
      const Choice choice = choice_for(lo, hi, step, span_for(lo, hi, step), target);
      if (!found || better_or_equal(choice, best_choice)) {
        found = true;
        best_choice = choice;
        best_mantissa = mantissa;
        best_exponent = exponent;
      }
    }
  }

  const double step = best_mantissa * power_of_ten(best_exponent);
  const Span span = span_for(lo, hi, step);
  const int decimals = std::max(0, -best_exponent);
  std::vector<Tick> ticks;
  for (double i = span.first; i <= span.last && ticks.size() < kTicksMax; i += 1) {
    // i·m·10^k, dividing by an exact power of ten for negative k: 3·(1/10) would read
    // 0.30000000000000004.
    const double units = i * best_mantissa;
    const double value = best_exponent < 0 ? units / power_of_ten(-best_exponent)
                                           : units * power_of_ten(best_exponent);
    ticks.push_back(Tick{value == 0 ? 0.0 : value, number(value, decimals)});
  }
  return ticks;
}

namespace {

constexpr std::array<DurationUnit, 6> kUnits = {{
    {"ns", 1.0},
    {"us", 1e3},
    {"ms", 1e6},
    {"s", 1e9},
    {"min", 60e9},
    {"h", 3600e9},
}};
constexpr std::size_t kUnitMinute = 4;
constexpr std::size_t kUnitHour = 5;

struct DurationStep {
  double ns;
  std::size_t unit;  // index into kUnits of the unit this step is a multiple of
};

// Every step a time axis may use, ascending: 1-2-5 multiples of ns, us and ms below the next unit;
// 1, 2, 5, 10, 20 s; 1, 2, 5, 10, 15, 30 min and h; then 1-2-5 multiples of an hour.
std::vector<DurationStep> duration_steps() {
  std::vector<DurationStep> steps;
  for (std::size_t u = 0; u < 3; ++u) {
    for (double scale : {1.0, 10.0, 100.0}) {
      for (double m : {1.0, 2.0, 5.0}) steps.push_back({m * scale * kUnits[u].ns, u});
    }
  }
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0}) steps.push_back({m * kUnits[3].ns, 3});
  for (std::size_t u : {kUnitMinute, kUnitHour}) {
    for (double m : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0}) steps.push_back({m * kUnits[u].ns, u});
  }
  for (double scale = 10.0; scale <= 1e12; scale *= 10.0) {
    for (double m : {5.0, 10.0, 20.0})
      steps.push_back({m * scale * kUnits[kUnitHour].ns, kUnitHour});
  }
  return steps;
}

}  // namespace

DurationTicks duration_axis(double lo_ns, double hi_ns, int target) {
  DurationTicks result{kUnits[0], {}};
  if (!std::isfinite(lo_ns) || !std::isfinite(hi_ns)) return result;
  if (lo_ns > hi_ns) std::swap(lo_ns, hi_ns);
  target = std::clamp(target, 2, 50);
  if (is_degenerate(lo_ns, hi_ns)) {
    const double magnitude = std::max(std::fabs(lo_ns), std::fabs(hi_ns));
    // A single instant: one decade either side of it, or a second either side of zero.
    const double widen = magnitude >= 1 ? power_of_ten(decade_of(magnitude)) : kUnits[3].ns;
    lo_ns -= widen;
    hi_ns += widen;
  }
  if (!std::isfinite(hi_ns - lo_ns)) return result;

  static const std::vector<DurationStep> kSteps = duration_steps();
  const DurationStep* best = nullptr;
  Choice best_choice;
  for (const DurationStep& candidate : kSteps) {
    const Choice choice =
        choice_for(lo_ns, hi_ns, candidate.ns, span_for(lo_ns, hi_ns, candidate.ns), target);
    if (best == nullptr || better_or_equal(choice, best_choice)) {
      best = &candidate;
      best_choice = choice;
    }
  }
  const Span span = span_for(lo_ns, hi_ns, best->ns);

  // One unit for the axis: the step's own, or a larger one the values reach when the step is a
  // whole thousandth of it (200ms steps up to 1s read 0.2s, 0.4s; 10min steps stay minutes).
  const double reach = std::max(std::fabs(span.first * best->ns), std::fabs(span.last * best->ns));
  std::size_t unit = best->unit;
  for (std::size_t u = kUnits.size(); u-- > best->unit + 1;) {
    if (reach >= kUnits[u].ns && std::fmod(best->ns * 1000.0, kUnits[u].ns) == 0) {
      unit = u;
      break;
    }
  }
  result.unit = kUnits[unit];
  for (double i = span.first; i <= span.last && result.ticks.size() < kTicksMax; i += 1) {
    const double value = i * best->ns;
    result.ticks.push_back(Tick{value == 0 ? 0.0 : value, number(value / result.unit.ns, 3) +
                                                              std::string(result.unit.suffix)});
  }
  return result;
}

std::vector<Tick> duration_ticks(double lo_ns, double hi_ns, int target) {
  return duration_axis(lo_ns, hi_ns, target).ticks;
}

std::string duration_label(double ns) {
  if (!std::isfinite(ns)) return number(ns);
  if (ns == 0) return "0s";
  std::size_t unit = 0;
  for (std::size_t u = 0; u < kUnits.size(); ++u) {
    if (std::fabs(ns) >= kUnits[u].ns) unit = u;
  }
  return number(ns / kUnits[unit].ns, 3) + std::string(kUnits[unit].suffix);
}

double text_width_estimate(std::string_view text, double font_px) {
  std::size_t code_points = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++code_points;
  }
  // 0.58 em is a little above the average advance of Helvetica, Arial and DejaVu Sans.
  return static_cast<double>(code_points) * font_px * 0.58;
}

}  // namespace electsim::drawing::svg
