// Line charts as standalone SVG documents, for `electsim sweep --plot`: metrics against a swept
// parameter, one panel per metric, one line per protocol or parameter value. Series are told apart
// by colour (Okabe-Ito, colour-blind safe), dash pattern and marker shape together, so the picture
// survives black-and-white printing. Output is byte-identical for the same input.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace electsim::drawing {

enum class AxisUnit { number, duration_ns, probability, category };

struct PlotSeries {
  std::string label;  // "lease", "fencing=false"
  std::vector<std::optional<double>>
      y;  // one per x value; nullopt = no value there (gap in the line)
};

struct PlotPanel {
  std::string title;  // "failover p99"
  AxisUnit unit =
      AxisUnit::number;  // durations in ns are drawn in a readable unit; probability axis is 0..1
  std::vector<PlotSeries> series;
};

struct LinePlot {
  std::string title;
  std::string subtitle;                // e.g. "200 seeds per point, scenario ttl-vs-gc-pause"
  std::string x_label;                 // "protocol.ttl"
  AxisUnit x_unit = AxisUnit::number;  // category: x_categories are the labels, evenly spaced
  std::vector<double> x;  // increasing, one per point (ignored for category except count)
  std::vector<std::string> x_categories;
  std::vector<PlotPanel> panels;  // stacked vertically, sharing the x axis
};

// A complete SVG document. Series are matched across panels by label (the n-th series of a label
// in one panel is the n-th of that label in another): each gets one legend entry and one style,
// in order of first appearance. A y value that is not finite, or beyond the end of `x`, counts as
// no value; so does any y at a non-finite x.
std::string render_line_plot_svg(const LinePlot& plot);

}  // namespace electsim::drawing
