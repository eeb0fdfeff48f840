// Sweep results to a LinePlot (drawing/plot.hpp): x is the first axis (durations and numbers on
// a scaled axis, anything else as categories); without axes, the protocols are the categories.
#include "runner/sweep_plot.hpp"

#include <fmt/format.h>

#include "drawing/plot.hpp"

namespace electsim::runner {

std::string sweep_plot_svg(const SweepResult& result, const std::vector<PointSummary>& points,
                           const std::vector<std::string>& metrics) {
  const SweepDefinition& d = result.definition;
  const std::uint64_t point_count = d.point_count();
  drawing::LinePlot plot;

  std::string names;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == metrics.size() ? " and " : ", ") + metrics[i];
  }
  plot.title = d.axes.empty()
                   ? fmt::format("{}: {}", d.scenario_name, names)
                   : fmt::format("{}: {} against {}", d.scenario_name, names, d.axes.front().path);
  plot.subtitle = fmt::format("{} seed(s) per point (seeds {}..{}), {} of {} runs; {}",
                              d.seeds.count(), d.seeds.first, d.seeds.last, result.records.size(),
                              d.run_count(), d.scenario_path);

  // Series: (protocol, values of axes 1..n-1); x: values of axis 0.
  struct Series {
    std::string label;
    std::vector<std::uint64_t> points;  // summary index per x
  };
  std::vector<Series> series;
  if (d.axes.empty()) {
    plot.x_label = "protocol";
    plot.x_unit = drawing::AxisUnit::category;
    Series s{"all seeds", {}};
    for (std::size_t p = 0; p < d.protocols.size(); ++p) {
      plot.x_categories.push_back(d.protocols[p]);
      plot.x.push_back(static_cast<double>(p));
      s.points.push_back(p * point_count);
    }
    series.push_back(std::move(s));
  } else {
    const GridAxis& first = d.axes.front();
    plot.x_label = first.path;
    plot.x_unit = first.kind == AxisKind::duration ? drawing::AxisUnit::duration_ns
                  : first.kind == AxisKind::number ? drawing::AxisUnit::number
                                                   : drawing::AxisUnit::category;
    for (std::size_t i = 0; i < first.values.size(); ++i) {
      plot.x.push_back(first.kind == AxisKind::category ? static_cast<double>(i)
                                                        : first.numeric[i]);
    }
    if (first.kind == AxisKind::category) plot.x_categories = first.values;
    const std::uint64_t stride = point_count / first.values.size();  // points per first value
    for (std::size_t p = 0; p < d.protocols.size(); ++p) {
      for (std::uint64_t rest = 0; rest < stride; ++rest) {
        Series s;
        if (d.protocols.size() > 1 || stride == 1) s.label = d.protocols[p];
        const std::vector<std::string> values = d.point_values(rest);  // axis 0 at index 0
        for (std::size_t a = 1; a < d.axes.size(); ++a) {
          s.label += fmt::format("{}{}={}", s.label.empty() ? "" : ", ", d.axes[a].path, values[a]);
        }
        for (std::size_t k = 0; k < first.values.size(); ++k) {
          s.points.push_back(p * point_count + k * stride + rest);
        }
        series.push_back(std::move(s));
      }
    }
  }

  for (const std::string& name : metrics) {
    const PointMetric* metric = find_point_metric(name);
    if (metric == nullptr) continue;
    drawing::PlotPanel panel;
    panel.title = name;
    for (char& c : panel.title) c = c == '_' ? ' ' : c;
    panel.unit = metric->duration      ? drawing::AxisUnit::duration_ns
                 : metric->probability ? drawing::AxisUnit::probability
                                       : drawing::AxisUnit::number;
    for (const Series& s : series) {
      drawing::PlotSeries line;
      line.label = s.label;
      for (std::uint64_t index : s.points) {
        line.y.push_back(index < points.size() ? metric->value(points[index]) : std::nullopt);
      }
      panel.series.push_back(std::move(line));
    }
    plot.panels.push_back(std::move(panel));
  }
  return drawing::render_line_plot_svg(plot);
}

}  // namespace electsim::runner
