// Line charts as SVG for sweeps. The layout is computed from estimated text widths (no font
// metrics, so the bytes never depend on the machine); series styles combine the Okabe-Ito palette
// (Okabe & Ito, "Color Universal Design", 2008) with dash patterns and marker shapes, so a
// black-and-white print still tells the lines apart. Points carry <title> tooltips.
#include "drawing/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <numbers>
#include <string_view>
#include <utility>

#include "drawing/svg.hpp"
#include "sim/assert.hpp"

namespace electsim::drawing {

namespace {

using svg::number;

constexpr double kWidth = 860;
constexpr double kSide = 24;          // outer margin left and right
constexpr double kPanelHeight = 190;  // plot area of one panel
constexpr double kPanelGap = 30;
constexpr double kTitleFont = 18;
constexpr double kSubtitleFont = 12;
constexpr double kLabelFont = 12;
constexpr double kTickFont = 11;
constexpr int kYTickTarget = 5;
constexpr std::size_t kTitleLinesMax = 4;
constexpr double kRotatedLabelDegrees = 35;

// Okabe-Ito without its yellow, which is unreadable on white; black last, as it reads as "axis".
constexpr std::array<std::string_view, 7> kColours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                      "#E69F00", "#56B4E9", "#000000"};
// Six patterns against seven colours and markers: (dash, marker) pairs repeat only after 42.
constexpr std::array<std::string_view, 6> kDashes = {"",        "7 4",  "2 3",
                                                     "9 3 2 3", "13 4", "5 2 1 2 1 2"};
constexpr std::array<std::string_view, 7> kMarkers = {"circle", "square", "triangle",     "diamond",
                                                      "cross",  "plus",   "triangle-down"};

struct Style {
  std::string_view colour;
  std::string_view dash;
  std::size_t marker;
};

Style style_of(std::size_t index) {
  return Style{kColours[index % kColours.size()], kDashes[index % kDashes.size()],
               index % kMarkers.size()};
}

std::string dash_attribute(const Style& style) {
  return style.dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", style.dash);
}

// One marker centred on (x, y). Paths start with an absolute move and continue in relative steps,
// so the shape reads the same wherever it is drawn.
std::string marker_svg(const Style& style, double x, double y, const std::string& tooltip) {
  const auto move = [&](double dx, double dy) {
    return fmt::format("M{} {}", number(x + dx), number(y + dy));
  };
  const std::string filled =
      fmt::format("fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.8\"", style.colour);
  const std::string stroked =
      fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2\"", style.colour);
  std::string element;
  std::string tag = "path";
  switch (style.marker) {
    case 0:
      tag = "circle";
      element = fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" {}", number(x), number(y), filled);
      break;
    case 1:
      element = fmt::format("<path d=\"{} h7 v7 h-7 z\" {}", move(-3.5, -3.5), filled);
      break;
    case 2:
      element = fmt::format("<path d=\"{} l4.5 8 h-9 z\" {}", move(0, -5), filled);
      break;
    case 3:
      element = fmt::format("<path d=\"{} l5 5 l-5 5 l-5 -5 z\" {}", move(0, -5), filled);
      break;
    case 4:
      element = fmt::format("<path d=\"{} l8 8 m0 -8 l-8 8\" {}", move(-4, -4), stroked);
      break;
    case 5:
      element = fmt::format("<path d=\"{} h10 m-5 -5 v10\" {}", move(-5, 0), stroked);
      break;
    default:
      element = fmt::format("<path d=\"{} l4.5 -8 h-9 z\" {}", move(0, 5), filled);
      break;
  }
  if (tooltip.empty()) return element + "/>";
  return fmt::format("{}><title>{}</title></{}>", element, svg::escape(tooltip), tag);
}

// A value axis: its domain is the span of its ticks.
struct Axis {
  double lo = 0;
  double hi = 1;
  std::vector<svg::Tick> ticks;
  std::string unit_suffix;  // duration axes: the unit of the (bare) labels

  double map(double value, double from, double to) const {
    return from + (value - lo) / (hi - lo) * (to - from);
  }
};

// `bare`: duration labels without their unit, which then goes in the axis label.
Axis value_axis(AxisUnit unit, double lo, double hi, int target, bool bare) {
  Axis axis;
  if (unit == AxisUnit::duration_ns) {
    svg::DurationTicks duration = svg::duration_axis(lo, hi, target);
    axis.ticks = std::move(duration.ticks);
    axis.unit_suffix = std::string(duration.unit.suffix);
    if (bare) {
      for (svg::Tick& tick : axis.ticks) tick.label = number(tick.value / duration.unit.ns);
    }
  } else {
    axis.ticks = svg::nice_ticks(lo, hi, target);
  }
  if (axis.ticks.size() >= 2) {
    axis.lo = axis.ticks.front().value;
    axis.hi = axis.ticks.back().value;
  } else {
    // Only values near the limits of a double get here: draw them unticked rather than fail.
    axis.ticks.clear();
    axis.lo = std::isfinite(lo) ? lo : 0;
    axis.hi = std::isfinite(hi) && hi > axis.lo ? hi : axis.lo + 1;
  }
  return axis;
}

// Text for tooltips: more precision than the tick labels.
std::string value_text(AxisUnit unit, double value) {
  return unit == AxisUnit::duration_ns ? svg::duration_label(value) : svg::significant(value, 6);
}

// Splits text at spaces into lines that fit `width_px`, at most kTitleLinesMax of them.
std::vector<std::string> wrap(std::string_view text, double width_px, double font_px) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    const std::string candidate = line.empty() ? std::string(word) : line + " " + std::string(word);
    if (!line.empty() && svg::text_width_estimate(candidate, font_px) > width_px) {
      lines.push_back(std::move(line));
      line = std::string(word);
    } else {
      line = candidate;
    }
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  if (lines.size() > kTitleLinesMax) {
    lines.resize(kTitleLinesMax);
    lines.back() += " \xE2\x80\xA6";  // an ellipsis says the rest was cut
  }
  return lines;
}

// One legend entry per distinct series: the n-th series labelled L in a panel is the same series
// as the n-th labelled L in any other panel.
struct LegendEntry {
  std::string label;
  std::size_t occurrence;  // among equal labels in one panel
  bool has_data = false;
};

// For every panel, the legend index of each of its series.
struct SeriesIndex {
  std::vector<LegendEntry> entries;
  std::vector<std::vector<std::size_t>> of_panel;
};

// Whether point i exists at all (a finite x, or any category slot).
std::vector<bool> usable_points(const LinePlot& plot) {
  std::vector<bool> usable(plot.x.size());
  for (std::size_t i = 0; i < plot.x.size(); ++i) {
    usable[i] = plot.x_unit == AxisUnit::category || std::isfinite(plot.x[i]);
  }
  return usable;
}

std::optional<double> value_at(const PlotSeries& series, std::size_t i,
                               const std::vector<bool>& usable) {
  if (i >= usable.size() || !usable[i] || i >= series.y.size() || !series.y[i]) return std::nullopt;
  if (!std::isfinite(*series.y[i])) return std::nullopt;
  return series.y[i];
}

SeriesIndex index_series(const LinePlot& plot, const std::vector<bool>& usable) {
  SeriesIndex index;
  for (const PlotPanel& panel : plot.panels) {
    std::vector<std::size_t> of_series;
    for (std::size_t s = 0; s < panel.series.size(); ++s) {
      const PlotSeries& series = panel.series[s];
      std::size_t occurrence = 0;
      for (std::size_t before = 0; before < s; ++before) {
        if (panel.series[before].label == series.label) ++occurrence;
      }
      // Linear search keeps first-appearance order; plots have a dozen series, not thousands.
      std::size_t entry = 0;
      while (entry < index.entries.size() && (index.entries[entry].label != series.label ||
                                              index.entries[entry].occurrence != occurrence)) {
        ++entry;
      }
      if (entry == index.entries.size()) index.entries.push_back({series.label, occurrence});
      for (std::size_t i = 0; i < usable.size(); ++i) {
        if (value_at(series, i, usable)) index.entries[entry].has_data = true;
      }
      of_series.push_back(entry);
    }
    index.of_panel.push_back(std::move(of_series));
  }
  return index;
}

std::string legend_text(const LegendEntry& entry) {
  std::string text = entry.label.empty() ? "(unnamed)" : entry.label;
  if (!entry.has_data) text += " (no data)";
  return text;
}

// A panel's y axis: probability 0..1 (widened only if values fall outside, which would be a bug
// upstream worth seeing); other axes include zero so that lines are compared from a baseline,
// which also gives all-equal values a span.
Axis panel_axis(const PlotPanel& panel, const std::vector<bool>& usable) {
  bool has = false;
  double lo = 0;
  double hi = 0;
  for (const PlotSeries& series : panel.series) {
    for (std::size_t i = 0; i < usable.size(); ++i) {
      if (const std::optional<double> v = value_at(series, i, usable)) {
        lo = has ? std::min(lo, *v) : *v;
        hi = has ? std::max(hi, *v) : *v;
        has = true;
      }
    }
  }
  const bool duration = panel.unit == AxisUnit::duration_ns;
  if (panel.unit == AxisUnit::probability) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 1.0);
    return value_axis(AxisUnit::number, lo, hi, kYTickTarget + 1, true);
  }
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (lo == hi) hi = duration ? 1e9 : 1.0;  // nothing but zeros: a unit span
  return value_axis(panel.unit, lo, hi, kYTickTarget, true);
}

std::string panel_label(const PlotPanel& panel, const Axis& axis) {
  if (panel.unit == AxisUnit::duration_ns && !axis.unit_suffix.empty()) {
    return fmt::format("{} ({})", panel.title, axis.unit_suffix);
  }
  return panel.title;
}

void append_text_lines(std::string& out, const std::vector<std::string>& lines, double& cursor,
                       double font_px, double line_px, std::string_view css_class,
                       std::string_view attributes) {
  for (const std::string& line : lines) {
    cursor += line_px;
    fmt::format_to(std::back_inserter(out),
                   "<text class=\"{}\" x=\"{}\" y=\"{}\" font-size=\"{}\"{}>{}</text>\n", css_class,
                   number(kSide), number(cursor), number(font_px), attributes, svg::escape(line));
  }
}

}  // namespace

std::string render_line_plot_svg(const LinePlot& plot) {
  const std::vector<bool> usable = usable_points(plot);
  const std::size_t points = plot.x.size();
  const bool any_point = std::find(usable.begin(), usable.end(), true) != usable.end();
  const bool drawable = !plot.panels.empty() && any_point;

  // Heading: title and subtitle, wrapped to the width.
  std::string body;
  double cursor = 10;
  append_text_lines(body, wrap(plot.title, kWidth - 2 * kSide, kTitleFont * 1.1), cursor,
                    kTitleFont, 24, "title", " font-weight=\"bold\"");
  append_text_lines(body, wrap(plot.subtitle, kWidth - 2 * kSide, kSubtitleFont), cursor,
                    kSubtitleFont, 17, "subtitle", " fill=\"#444444\"");

  if (!drawable) {
    const std::string_view note = plot.panels.empty() ? "nothing to plot: no metrics were chosen"
                                                      : "nothing to plot: no points";
    cursor += 32;
    fmt::format_to(std::back_inserter(body),
                   "<text class=\"note\" x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"#444444\">{}"
                   "</text>\n",
                   number(kSide), number(cursor), number(kLabelFont), note);
    cursor += 24;
  } else {
    const SeriesIndex index = index_series(plot, usable);

    // Legend: entries flow left to right and wrap.
    constexpr double kSample = 34;
    constexpr double kRow = 20;
    cursor += 10;
    body += "<g class=\"legend\">\n";
    double legend_x = kSide;
    double row_top = cursor;
    for (std::size_t e = 0; e < index.entries.size(); ++e) {
      const Style style = style_of(e);
      const std::string text = legend_text(index.entries[e]);
      const double entry_width = kSample + 6 + svg::text_width_estimate(text, kLabelFont) + 18;
      if (legend_x > kSide && legend_x + entry_width > kWidth - kSide) {
        legend_x = kSide;
        row_top += kRow;
      }
      const double mid = row_top + 10;
      fmt::format_to(
          std::back_inserter(body),
          "<g class=\"legend-entry\" data-series=\"{}\">"
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
          "stroke-width=\"2\"{}/>{}"
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\">{}</text></g>\n",
          e, number(legend_x), number(mid), number(legend_x + kSample), number(mid), style.colour,
          dash_attribute(style), marker_svg(style, legend_x + kSample / 2, mid, ""),
          number(legend_x + kSample + 6), number(mid + 4), number(kLabelFont), svg::escape(text));
      legend_x += entry_width;
    }
    body += "</g>\n";
    cursor = row_top + kRow + 14;

    // Y axes first: their widest tick label sets the left margin shared by all panels.
    std::vector<Axis> y_axes;
    double y_label_width = 0;
    for (const PlotPanel& panel : plot.panels) {
      y_axes.push_back(panel_axis(panel, usable));
      for (const svg::Tick& tick : y_axes.back().ticks) {
        y_label_width = std::max(y_label_width, svg::text_width_estimate(tick.label, kTickFont));
      }
    }
    double left = std::max(70.0, kSide + 20 + y_label_width + 6);
    const double right = kWidth - kSide - 8;

    // X axis: categories evenly spaced with half a slot at each end, or a value axis.
    const bool category = plot.x_unit == AxisUnit::category;
    Axis x_axis;
    std::vector<std::string> category_labels;
    bool rotate = false;
    double category_label_width = 0;
    if (category) {
      for (std::size_t i = 0; i < points; ++i) {
        category_labels.push_back(i < plot.x_categories.size() ? plot.x_categories[i] : "");
        category_label_width = std::max(
            category_label_width, svg::text_width_estimate(category_labels.back(), kTickFont));
      }
      const double slot = (right - left) / static_cast<double>(points);
      rotate = category_label_width > slot - 6;
      if (rotate && !category_labels.empty()) {
        // Rotated labels hang to the left of their slot: keep the first one on the page.
        const double reach = svg::text_width_estimate(category_labels.front(), kTickFont) *
                             std::cos(kRotatedLabelDegrees * std::numbers::pi / 180);
        left = std::max(left, kSide + reach - slot / 2);
      }
    } else {
      double lo = 0;
      double hi = 0;
      bool has = false;
      for (std::size_t i = 0; i < points; ++i) {
        if (!usable[i]) continue;
        lo = has ? std::min(lo, plot.x[i]) : plot.x[i];
        hi = has ? std::max(hi, plot.x[i]) : plot.x[i];
        has = true;
      }
      if (plot.x_unit == AxisUnit::probability) {
        lo = std::min(lo, 0.0);
        hi = std::max(hi, 1.0);
      }
      const int target = std::clamp(static_cast<int>((right - left) / 90), 2, 10);
      x_axis = value_axis(
          plot.x_unit == AxisUnit::duration_ns ? AxisUnit::duration_ns : AxisUnit::number, lo, hi,
          target, false);
    }
    const auto x_of = [&](std::size_t i) {
      if (category)
        return left + (static_cast<double>(i) + 0.5) * (right - left) / static_cast<double>(points);
      return x_axis.map(plot.x[i], left, right);
    };
    // Where vertical gridlines and x labels go.
    std::vector<std::pair<double, std::string>> x_marks;
    if (category) {
      for (std::size_t i = 0; i < points; ++i) x_marks.emplace_back(x_of(i), category_labels[i]);
    } else {
      for (const svg::Tick& tick : x_axis.ticks) {
        x_marks.emplace_back(x_axis.map(tick.value, left, right), tick.label);
      }
    }
    const auto x_text = [&](std::size_t i) {
      if (category)
        return category_labels[i].empty() ? number(static_cast<double>(i)) : category_labels[i];
      return value_text(plot.x_unit, plot.x[i]);
    };

    const double panels_top = cursor;
    for (std::size_t p = 0; p < plot.panels.size(); ++p) {
      const PlotPanel& panel = plot.panels[p];
      const Axis& y_axis = y_axes[p];
      const double top = panels_top + static_cast<double>(p) * (kPanelHeight + kPanelGap);
      const double bottom = top + kPanelHeight;
      const auto y_of = [&](double v) { return y_axis.map(v, bottom, top); };
      fmt::format_to(std::back_inserter(body), "<g class=\"panel\" data-panel=\"{}\">\n", p);

      // Grid, zero line, frame.
      body += "<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">";
      for (const svg::Tick& tick : y_axis.ticks) {
        fmt::format_to(std::back_inserter(body), "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                       number(left), number(y_of(tick.value)), number(right),
                       number(y_of(tick.value)));
      }
      for (const auto& [x, label] : x_marks) {
        fmt::format_to(std::back_inserter(body), "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                       number(x), number(top), number(x), number(bottom));
      }
      body += "</g>\n";
      if (y_axis.lo < 0 && y_axis.hi > 0) {
        fmt::format_to(std::back_inserter(body),
                       "<line class=\"zero\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
                       "stroke=\"#888888\" stroke-width=\"1\"/>\n",
                       number(left), number(y_of(0)), number(right), number(y_of(0)));
      }
      fmt::format_to(std::back_inserter(body),
                     "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                     "fill=\"none\" stroke=\"#666666\" stroke-width=\"1\"/>\n",
                     number(left), number(top), number(right - left), number(kPanelHeight));

      // Y tick labels and the rotated axis label.
      fmt::format_to(std::back_inserter(body),
                     "<g class=\"y-axis\" font-size=\"{}\" text-anchor=\"end\" fill=\"#333333\">",
                     number(kTickFont));
      for (const svg::Tick& tick : y_axis.ticks) {
        fmt::format_to(std::back_inserter(body), "<text x=\"{}\" y=\"{}\">{}</text>",
                       number(left - 6), number(y_of(tick.value) + 4), svg::escape(tick.label));
      }
      body += "</g>\n";
      const double label_x = kSide + 10;
      const double label_y = (top + bottom) / 2;
      fmt::format_to(std::back_inserter(body),
                     "<text class=\"y-label\" x=\"{}\" y=\"{}\" font-size=\"{}\" "
                     "text-anchor=\"middle\" transform=\"rotate(-90 {} {})\">{}</text>\n",
                     number(label_x), number(label_y), number(kLabelFont), number(label_x),
                     number(label_y), svg::escape(panel_label(panel, y_axis)));

      // Series: a polyline per unbroken run of values, then a marker per value.
      bool panel_has_data = false;
      for (std::size_t s = 0; s < panel.series.size(); ++s) {
        const PlotSeries& series = panel.series[s];
        const std::size_t entry = index.of_panel[p][s];
        const Style style = style_of(entry);
        fmt::format_to(std::back_inserter(body), "<g class=\"series\" data-series=\"{}\">\n",
                       entry);
        std::vector<std::vector<std::pair<double, double>>> runs(1);
        for (std::size_t i = 0; i < points; ++i) {
          if (const std::optional<double> v = value_at(series, i, usable)) {
            runs.back().emplace_back(x_of(i), y_of(*v));
          } else if (!runs.back().empty()) {
            runs.emplace_back();
          }
        }
        for (const auto& run : runs) {
          if (run.size() < 2) continue;  // a lone value shows as its marker
          body += "<polyline points=\"";
          for (std::size_t k = 0; k < run.size(); ++k) {
            fmt::format_to(std::back_inserter(body), "{}{},{}", k == 0 ? "" : " ",
                           number(run[k].first), number(run[k].second));
          }
          fmt::format_to(std::back_inserter(body),
                         "\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                         "stroke-linejoin=\"round\"{}/>\n",
                         style.colour, dash_attribute(style));
        }
        for (std::size_t i = 0; i < points; ++i) {
          const std::optional<double> v = value_at(series, i, usable);
          if (!v) continue;
          panel_has_data = true;
          const std::string tooltip =
              fmt::format("{}: x = {}, y = {}", legend_text(index.entries[entry]), x_text(i),
                          value_text(panel.unit, *v));
          body += marker_svg(style, x_of(i), y_of(*v), tooltip);
          body += "\n";
        }
        body += "</g>\n";
      }
      if (!panel_has_data) {
        fmt::format_to(std::back_inserter(body),
                       "<text class=\"note\" x=\"{}\" y=\"{}\" font-size=\"{}\" "
                       "text-anchor=\"middle\" fill=\"#666666\">no data</text>\n",
                       number((left + right) / 2), number((top + bottom) / 2), number(kLabelFont));
      }
      body += "</g>\n";
    }

    // The shared x axis under the last panel.
    const double axis_y = panels_top + static_cast<double>(plot.panels.size()) * kPanelHeight +
                          static_cast<double>(plot.panels.size() - 1) * kPanelGap;
    fmt::format_to(std::back_inserter(body),
                   "<g class=\"x-axis\" font-size=\"{}\" fill=\"#333333\" text-anchor=\"{}\">",
                   number(kTickFont), rotate ? "end" : "middle");
    for (const auto& [x, label] : x_marks) {
      if (rotate) {
        fmt::format_to(std::back_inserter(body),
                       "<text x=\"{}\" y=\"{}\" transform=\"rotate(-{} {} {})\">{}</text>",
                       number(x + 3), number(axis_y + 14), number(kRotatedLabelDegrees),
                       number(x + 3), number(axis_y + 14), svg::escape(label));
      } else {
        fmt::format_to(std::back_inserter(body), "<text x=\"{}\" y=\"{}\">{}</text>", number(x),
                       number(axis_y + 16), svg::escape(label));
      }
    }
    body += "</g>\n";
    const double label_drop =
        rotate
            ? 14 + category_label_width * std::sin(kRotatedLabelDegrees * std::numbers::pi / 180) +
                  18
            : 38;
    cursor = axis_y + label_drop;
    fmt::format_to(std::back_inserter(body),
                   "<text class=\"x-label\" x=\"{}\" y=\"{}\" font-size=\"{}\" "
                   "text-anchor=\"middle\">{}</text>\n",
                   number((left + right) / 2), number(cursor), number(kLabelFont),
                   svg::escape(plot.x_label));
    cursor += 16;
  }

  const double height = std::ceil(cursor);
  ELECTSIM_ASSERT(std::isfinite(height), "plot height is finite");
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\">\n"
                 "<title>{2}</title>\n"
                 "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
                 number(kWidth), number(height), svg::escape(plot.title));
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace electsim::drawing
