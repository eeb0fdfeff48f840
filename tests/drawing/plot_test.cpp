// Tests of the SVG helpers (escaping, number text, 1-2-5 and time ticks) and of the sweep line
// chart: well-formed output (checked by a small tag-balance parser here), legend, escaping, gaps,
// byte-identical output, and styles that differ in more than colour.
#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "drawing/plot.hpp"
#include "drawing/svg.hpp"
#include "tests/drawing/svg_check.hpp"

namespace {

using electsim::test::well_formed_error;

using namespace electsim::drawing;
using std::nullopt;

constexpr double kMs = 1e6;
constexpr double kSecond = 1e9;
constexpr double kMinute = 60e9;
constexpr double kHour = 3600e9;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + what.size())) {
    ++n;
  }
  return n;
}

// The whole <g ...> element that opens with `opening` (nested groups included), or "".
std::string group(const std::string& doc, const std::string& opening, std::size_t from = 0) {
  const std::size_t start = doc.find(opening, from);
  if (start == std::string::npos) return "";
  int depth = 0;
  std::size_t pos = start;
  while (pos < doc.size()) {
    if (doc.compare(pos, 3, "<g ") == 0 || doc.compare(pos, 3, "<g>") == 0) {
      ++depth;
    } else if (doc.compare(pos, 4, "</g>") == 0) {
      if (--depth == 0) return doc.substr(start, pos + 4 - start);
    }
    ++pos;
  }
  return "";
}

std::string attribute(const std::string& element, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t pos = element.find(key);
  if (pos == std::string::npos) return "";
  const std::size_t start = pos + key.size();
  return element.substr(start, element.find('"', start) - start);
}

// The text contents of the <text> elements in `fragment`, in order.
std::vector<std::string> texts(const std::string& fragment) {
  std::vector<std::string> out;
  for (std::size_t pos = fragment.find("<text"); pos != std::string::npos;
       pos = fragment.find("<text", pos + 1)) {
    const std::size_t start = fragment.find('>', pos) + 1;
    out.push_back(fragment.substr(start, fragment.find("</text>", start) - start));
  }
  return out;
}

double parse(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  REQUIRE(end == text.c_str() + text.size());
  return value;
}

// The shape of the first marker in a series group: the element and its geometry relative to its
// own position (paths start with one absolute move, then relative steps).
std::string marker_signature(const std::string& series_group) {
  const std::size_t circle = series_group.find("<circle");
  const std::size_t path = series_group.find("<path");
  if (circle != std::string::npos && (path == std::string::npos || circle < path)) {
    return "circle r=" + attribute(series_group.substr(circle), "r");
  }
  REQUIRE(path != std::string::npos);
  const std::string d = attribute(series_group.substr(path), "d");
  const std::size_t after_x = d.find(' ');
  const std::size_t after_y = d.find(' ', after_x + 1);
  REQUIRE(after_y != std::string::npos);
  return "path " + d.substr(after_y);
}

std::string dash_of(const std::string& series_group) {
  const std::size_t line = series_group.find("<polyline");
  REQUIRE(line != std::string::npos);
  const std::string element = series_group.substr(line, series_group.find("/>", line) - line);
  const std::string dash = attribute(element, "stroke-dasharray");
  return dash.empty() ? "solid" : dash;
}

std::string series_group(const std::string& doc, std::size_t series, std::size_t panel = 0) {
  const std::string in_panel =
      group(doc, "<g class=\"panel\" data-panel=\"" + std::to_string(panel) + "\">");
  return group(in_panel, "<g class=\"series\" data-series=\"" + std::to_string(series) + "\">");
}

PlotSeries line(std::string label, std::vector<std::optional<double>> y) {
  return PlotSeries{std::move(label), std::move(y)};
}

// Failover times of two protocols against lease TTL, the second with a missing point.
LinePlot sample() {
  LinePlot plot;
  plot.title = "Failover against lease TTL";
  plot.subtitle = "200 seeds per point, scenario ttl-vs-gc-pause";
  plot.x_label = "protocol.ttl";
  plot.x_unit = AxisUnit::duration_ns;
  plot.x = {1 * kSecond, 2 * kSecond, 3 * kSecond, 5 * kSecond, 10 * kSecond};
  PlotPanel p99{"failover p99", AxisUnit::duration_ns, {}};
  p99.series.push_back(
      line("lease", {1.5 * kSecond, 2.6 * kSecond, 3.4 * kSecond, 5.9 * kSecond, 11 * kSecond}));
  p99.series.push_back(
      line("raft", {0.4 * kSecond, 0.5 * kSecond, nullopt, 0.45 * kSecond, 0.6 * kSecond}));
  PlotPanel split{"split-brain probability", AxisUnit::probability, {}};
  split.series.push_back(line("lease", {0.02, 0.01, 0.005, 0.0, 0.0}));
  split.series.push_back(line("raft", {0.0, 0.0, nullopt, 0.0, 0.0}));
  plot.panels = {p99, split};
  return plot;
}

}  // namespace

TEST_CASE("svg: escape replaces the five XML special characters and keeps other text") {
  const auto [text, expected] = GENERATE(table<std::string, std::string>({
      {"plain text", "plain text"},
      {"a<b", "a&lt;b"},
      {"a>b", "a&gt;b"},
      {"x & y", "x &amp; y"},
      {"\"quoted\"", "&quot;quoted&quot;"},
      {"it's", "it&#39;s"},
      {"&amp;", "&amp;amp;"},
      {"", ""},
      {"h\xC3\xA9llo", "h\xC3\xA9llo"},
      {"tab\tand\nnewline", "tab\tand\nnewline"},
      {"bell\x07", "bell\xEF\xBF\xBD"},
  }));
  CAPTURE(text);
  CHECK(svg::escape(text) == expected);
}

TEST_CASE("svg: number writes fixed text with at most three decimals, no exponent, no -0") {
  const auto [value, expected] = GENERATE(table<double, std::string>({
      {12.5, "12.5"},
      {0.001, "0.001"},
      {-3.0, "-3"},
      {0.0, "0"},
      {-0.0, "0"},
      {-0.0004, "0"},
      {2.0004, "2"},
      {1.23456, "1.235"},
      {123.45, "123.45"},
      {1e6, "1000000"},
      {1e20, "100000000000000000000"},
      {-1234.5, "-1234.5"},
      {0.1 + 0.2, "0.3"},
  }));
  CAPTURE(value);
  CHECK(svg::number(value) == expected);
}

TEST_CASE("svg: more decimals and significant digits are available for small values") {
  CHECK(svg::number(0.000123, 6) == "0.000123");
  CHECK(svg::number(2.5, 0) == "2");  // fmt rounds half to even, as printf does
  CHECK(svg::significant(0.000123456, 3) == "0.000123");
  CHECK(svg::significant(1234.5678, 6) == "1234.57");
  CHECK(svg::significant(-0.5, 6) == "-0.5");
  CHECK(svg::significant(0.0, 6) == "0");
}

TEST_CASE("svg: nice ticks cover the range with evenly spaced 1-2-5 steps") {
  const auto [lo, hi, target] = GENERATE(table<double, double, int>({
      {0, 1, 5},
      {0, 10, 5},
      {-3, 5, 5},
      {0.001, 0.0037, 5},
      {123, 987, 6},
      {-1e6, -2e5, 4},
      {1e9, 3e9, 8},
      {0.3, 0.7, 5},
      {5, 5, 5},
      {0, 0, 5},
      {-0.25, -0.25, 3},
      {1, 1.0000000000001, 5},
      {0, 1, 2},
  }));
  CAPTURE(lo, hi, target);
  const std::vector<svg::Tick> ticks = svg::nice_ticks(lo, hi, target);
  REQUIRE(ticks.size() >= 2);
  CHECK(ticks.size() <= static_cast<std::size_t>(2 * target + 1));
  CHECK(ticks.size() >= static_cast<std::size_t>(target / 2));
  const double step = ticks[1].value - ticks[0].value;
  REQUIRE(step > 0);
  const double slack = step * 1e-9;
  CHECK(ticks.front().value <= lo + slack);
  CHECK(ticks.back().value >= hi - slack);
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    CHECK(std::fabs(ticks[i].value - ticks[i - 1].value - step) <= slack);
  }
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  CAPTURE(step, mantissa);
  CHECK((std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 ||
         std::fabs(mantissa - 5) < 1e-6));
  std::set<std::string> labels;
  for (const svg::Tick& tick : ticks) {
    CAPTURE(tick.label);
    CHECK(tick.label.find_first_of("eE") == std::string::npos);
    CHECK(std::fabs(parse(tick.label) - tick.value) <= slack);
    labels.insert(tick.label);
  }
  CHECK(labels.size() == ticks.size());
}

TEST_CASE("svg: duration ticks choose a readable unit for the range") {
  const auto [lo, hi, suffix, last] = GENERATE(table<double, double, std::string, std::string>({
      {0, 5 * kMs, "ms", "5ms"},
      {0, 30 * kSecond, "s", "30s"},
      {0, 2 * kHour, "h", "2h"},
      {0, 800, "ns", "800ns"},
      {0, 40e3, "us", "40us"},
      {0, 45 * kMinute, "min", "45min"},
      {0, 2 * kSecond, "s", "2s"},
      {150 * kMs, 3 * kSecond, "s", "3s"},
  }));
  CAPTURE(lo, hi);
  const std::vector<svg::Tick> ticks = svg::duration_ticks(lo, hi, 5);
  REQUIRE(ticks.size() >= 2);
  CHECK(ticks.size() <= 11);
  CHECK(ticks.front().value <= lo);
  CHECK(ticks.back().value >= hi);
  CHECK(ticks.back().label == last);
  const double unit = suffix == "ns"    ? 1
                      : suffix == "us"  ? 1e3
                      : suffix == "ms"  ? kMs
                      : suffix == "s"   ? kSecond
                      : suffix == "min" ? kMinute
                                        : kHour;
  for (const svg::Tick& tick : ticks) {
    CAPTURE(tick.label);
    REQUIRE(tick.label.size() > suffix.size());
    const std::string digits = tick.label.substr(0, tick.label.size() - suffix.size());
    CHECK(tick.label.substr(digits.size()) == suffix);
    CHECK(std::isdigit(static_cast<unsigned char>(digits.back())) != 0);
    CHECK(std::fabs(parse(digits) * unit - tick.value) <= 1e-6 * unit);
  }
  // The step is a 1-2-5 multiple of a unit, or 1, 2, 5, 10, 15, 30 minutes or hours.
  const double step = ticks[1].value - ticks[0].value;
  bool allowed = false;
  for (double m : {1.0, 2.0, 5.0}) {
    for (double p = 1; p <= 1e11; p *= 10) allowed = allowed || std::fabs(step - m * p) < 1e-6;
  }
  for (double m : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0}) {
    for (double u : {kMinute, kHour}) allowed = allowed || std::fabs(step - m * u) < 1e-6;
  }
  CAPTURE(step);
  CHECK(allowed);
}

TEST_CASE("svg: duration labels use the largest unit not above the value") {
  const auto [ns, expected] = GENERATE(table<double, std::string>({
      {1.5e9, "1.5s"},
      {2.5e8, "250ms"},
      {1.2e11, "2min"},
      {1.08e13, "3h"},
      {0, "0s"},
      {999, "999ns"},
      {1500, "1.5us"},
      {-2e6, "-2ms"},
      {90e9, "1.5min"},
      {1234567, "1.235ms"},
  }));
  CAPTURE(ns);
  CHECK(svg::duration_label(ns) == expected);
}

TEST_CASE("test helper: the tag-balance checker rejects broken documents") {
  const auto [doc, problem] = GENERATE(table<std::string, std::string>({
      {"<svg><g></svg>", "closing </svg> does not match <g>"},
      {"<svg><g>", "<g> is never closed"},
      {"<svg a=1/>", "unquoted attribute in <svg> at 6"},
      {"<svg a=\"x<y\"/>", "'<' in an attribute of <svg>"},
      {"<svg>a & b</svg>", "bare '&' at 7"},
      {"<svg/><svg/>", "2 root elements"},
      {"<svg>a > b</svg>", "bare '>' in text at 7"},
  }));
  CAPTURE(doc);
  CHECK(well_formed_error(doc) == problem);
  CHECK(well_formed_error("<svg a=\"&amp;\"><g/>x &lt; y</svg>").empty());
}

TEST_CASE("plot: the picture is a well-formed standalone SVG document") {
  const std::string doc = render_line_plot_svg(sample());
  INFO(well_formed_error(doc));
  CHECK(well_formed_error(doc).empty());
  CHECK(doc.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(doc.find("viewBox=\"0 0 ") != std::string::npos);
  CHECK(doc.find("font-family=\"sans-serif\"") != std::string::npos);
  CHECK(doc.find("fill=\"#ffffff\"") != std::string::npos);
  // Standalone: the namespace is the only address, nothing is linked or loaded.
  CHECK(count(doc, "http") == 1);
  CHECK(count(doc, "href") == 0);
  CHECK(count(doc, "@import") == 0);
}

TEST_CASE("plot: the title and every series label appear, the labels in the legend") {
  const LinePlot plot = sample();
  const std::string doc = render_line_plot_svg(plot);
  CHECK(doc.find(">Failover against lease TTL</text>") != std::string::npos);
  CHECK(doc.find("200 seeds per point") != std::string::npos);
  const std::string legend = group(doc, "<g class=\"legend\">");
  REQUIRE(!legend.empty());
  const std::vector<std::string> entries = texts(legend);
  CHECK(entries == std::vector<std::string>{"lease", "raft"});
  // One legend for all panels, each panel with its own y label and unit.
  CHECK(count(doc, "class=\"legend\"") == 1);
  CHECK(doc.find(">failover p99 (s)</text>") != std::string::npos);
  CHECK(doc.find(">split-brain probability</text>") != std::string::npos);
  CHECK(doc.find(">protocol.ttl</text>") != std::string::npos);
}

TEST_CASE("plot: text with < and & is escaped everywhere it appears") {
  LinePlot plot = sample();
  plot.title = "A & B <compared>";
  plot.panels[0].series[0].label = "p<0.5 & fenced";
  plot.panels[1].series[0].label = "p<0.5 & fenced";
  plot.x_label = "ttl<max>";
  const std::string doc = render_line_plot_svg(plot);
  INFO(well_formed_error(doc));
  CHECK(well_formed_error(doc).empty());
  CHECK(doc.find("A &amp; B &lt;compared&gt;") != std::string::npos);
  CHECK(texts(group(doc, "<g class=\"legend\">")).front() == "p&lt;0.5 &amp; fenced");
  CHECK(doc.find("ttl&lt;max&gt;") != std::string::npos);
  CHECK(doc.find("p<0.5") == std::string::npos);
  CHECK(doc.find("A & B") == std::string::npos);
}

TEST_CASE("plot: a missing value breaks the series line into two pieces") {
  const std::string doc = render_line_plot_svg(sample());
  const std::string whole = series_group(doc, 0);
  const std::string gapped = series_group(doc, 1);
  REQUIRE(!whole.empty());
  REQUIRE(!gapped.empty());
  CHECK(count(whole, "<polyline") == 1);
  CHECK(count(gapped, "<polyline") == 2);
  // A marker (with its tooltip) at every value, none at the gap.
  CHECK(count(whole, "<title>") == 5);
  CHECK(count(gapped, "<title>") == 4);
  // The pieces are the values before and after the gap: 2 points, then 2.
  const std::size_t first = gapped.find("<polyline");
  const std::string first_points = attribute(gapped.substr(first), "points");
  const std::string second_points =
      attribute(gapped.substr(gapped.find("<polyline", first + 1)), "points");
  CHECK(count(first_points, ",") == 2);
  CHECK(count(second_points, ",") == 2);
}

TEST_CASE("plot: a lone value between gaps shows as a marker without a line") {
  LinePlot plot = sample();
  plot.panels[0].series[1].y = {nullopt, 1.0 * kSecond, nullopt, nullopt, nullopt};
  const std::string doc = render_line_plot_svg(plot);
  const std::string lone = series_group(doc, 1);
  CHECK(count(lone, "<polyline") == 0);
  CHECK(count(lone, "<title>") == 1);
}

TEST_CASE("plot: the same input renders byte-identical output") {
  const LinePlot plot = sample();
  const std::string first = render_line_plot_svg(plot);
  const LinePlot copy = plot;
  const std::string second = render_line_plot_svg(copy);
  CHECK(first == second);
  CHECK(render_line_plot_svg(sample()) == first);
}

TEST_CASE("plot: series differ in dash pattern and marker shape, not only colour") {
  LinePlot plot;
  plot.title = "twelve lines";
  plot.x = {1, 2, 3};
  PlotPanel panel{"cost", AxisUnit::number, {}};
  for (int s = 0; s < 12; ++s) {
    panel.series.push_back(line("series " + std::to_string(s), {1.0 * s, 2.0 * s, 1.5 * s}));
  }
  plot.panels = {panel};
  const std::string doc = render_line_plot_svg(plot);
  CHECK(texts(group(doc, "<g class=\"legend\">")).size() == 12);
  std::vector<std::string> dashes;
  std::vector<std::string> markers;
  std::set<std::pair<std::string, std::string>> styles;
  for (std::size_t s = 0; s < 12; ++s) {
    const std::string g = series_group(doc, s);
    REQUIRE(!g.empty());
    dashes.push_back(dash_of(g));
    markers.push_back(marker_signature(g));
    styles.emplace(dashes.back(), markers.back());
  }
  CHECK(dashes[0] != dashes[1]);
  CHECK(markers[0] != markers[1]);
  for (std::size_t s = 1; s < 12; ++s) {
    CAPTURE(s);
    CHECK(dashes[s] != dashes[s - 1]);
    CHECK(markers[s] != markers[s - 1]);
  }
  CHECK(styles.size() == 12);
}

TEST_CASE("plot: a series with no values still shows in the legend, marked no data") {
  LinePlot plot = sample();
  PlotSeries missing = line("bully", {nullopt, nullopt, nullopt, nullopt, nullopt});
  plot.panels[0].series.push_back(missing);
  plot.panels[1].series.push_back(missing);
  const std::string doc = render_line_plot_svg(plot);
  CHECK(texts(group(doc, "<g class=\"legend\">")) ==
        std::vector<std::string>{"lease", "raft", "bully (no data)"});
  const std::string g = series_group(doc, 2);
  REQUIRE(!g.empty());
  CHECK(count(g, "<polyline") == 0);
  CHECK(count(g, "<title>") == 0);
}

TEST_CASE("plot: a probability panel spans 0 to 1 whatever its values") {
  const std::string doc = render_line_plot_svg(sample());
  const std::string panel = group(doc, "<g class=\"panel\" data-panel=\"1\">");
  const std::vector<std::string> labels = texts(group(panel, "<g class=\"y-axis\""));
  REQUIRE(labels.size() >= 3);
  CHECK(labels.front() == "0");
  CHECK(labels.back() == "1");
}

TEST_CASE("plot: a duration panel names the unit its axis is drawn in") {
  const auto [lo, hi, expected] = GENERATE(table<double, double, std::string>({
      {0.5 * kSecond, 2 * kSecond, "failover p99 (s)"},
      {20 * kMs, 80 * kMs, "failover p99 (ms)"},
      {3 * kMinute, 12 * kMinute, "failover p99 (min)"},
  }));
  LinePlot plot = sample();
  plot.panels.resize(1);
  plot.panels[0].series = {line("lease", {lo, hi, lo, hi, hi})};
  const std::string doc = render_line_plot_svg(plot);
  CHECK(doc.find(">" + expected + "</text>") != std::string::npos);
  // Bare numbers on the ticks, the unit being in the axis label.
  const std::vector<std::string> labels =
      texts(group(group(doc, "<g class=\"panel\""), "<g class=\"y-axis\""));
  REQUIRE(labels.size() >= 2);
  for (const std::string& label : labels) {
    CAPTURE(label);
    CHECK(std::isdigit(static_cast<unsigned char>(label.back())) != 0);
  }
}

TEST_CASE("plot: a single x value and all-equal values still give an axis with a span") {
  const auto [y, unit] = GENERATE(table<double, AxisUnit>({
      {7.0, AxisUnit::number},
      {0.0, AxisUnit::number},
      {0.0, AxisUnit::duration_ns},
      {2 * kSecond, AxisUnit::duration_ns},
      {-4.0, AxisUnit::number},
  }));
  CAPTURE(y);
  LinePlot plot;
  plot.title = "one point";
  plot.x = {3};
  plot.panels = {PlotPanel{"value", unit, {line("only", {y})}}};
  const std::string doc = render_line_plot_svg(plot);
  INFO(well_formed_error(doc));
  CHECK(well_formed_error(doc).empty());
  CHECK(doc.find("nan") == std::string::npos);
  CHECK(doc.find("inf") == std::string::npos);
  const std::vector<std::string> labels =
      texts(group(group(doc, "<g class=\"panel\""), "<g class=\"y-axis\""));
  CHECK(std::set<std::string>(labels.begin(), labels.end()).size() >= 2);
  CHECK(count(series_group(doc, 0), "<title>") == 1);
  const std::vector<std::string> x_labels = texts(group(doc, "<g class=\"x-axis\""));
  CHECK(std::set<std::string>(x_labels.begin(), x_labels.end()).size() >= 2);
}

TEST_CASE("plot: negative values get an axis that covers them") {
  LinePlot plot;
  plot.title = "clock offset";
  plot.x = {-10, 0, 10};
  plot.panels = {PlotPanel{"offset", AxisUnit::number, {line("drift", {-3.0, 1.0, 5.0})}}};
  const std::string doc = render_line_plot_svg(plot);
  const std::vector<std::string> labels =
      texts(group(group(doc, "<g class=\"panel\""), "<g class=\"y-axis\""));
  REQUIRE(labels.size() >= 2);
  CHECK(parse(labels.front()) <= -3);
  CHECK(parse(labels.back()) >= 5);
  CHECK(doc.find("class=\"zero\"") != std::string::npos);
  const std::vector<std::string> x_labels = texts(group(doc, "<g class=\"x-axis\""));
  REQUIRE(!x_labels.empty());
  CHECK(parse(x_labels.front()) <= -10);
}

TEST_CASE("plot: without panels the picture holds the title and a note") {
  LinePlot plot = sample();
  plot.panels.clear();
  const std::string doc = render_line_plot_svg(plot);
  INFO(well_formed_error(doc));
  CHECK(well_formed_error(doc).empty());
  CHECK(doc.find(">Failover against lease TTL</text>") != std::string::npos);
  CHECK(doc.find("class=\"note\"") != std::string::npos);
  CHECK(doc.find("class=\"series\"") == std::string::npos);
  CHECK(doc.find("class=\"legend\"") == std::string::npos);
}

TEST_CASE("plot: a category x axis labels each slot with its category") {
  LinePlot plot;
  plot.title = "protocols";
  plot.x_label = "protocol";
  plot.x_unit = AxisUnit::category;
  plot.x_categories = {"bully", "ring", "raft", "lease"};
  plot.x = {0, 1, 2, 3};
  plot.panels = {PlotPanel{"messages", AxisUnit::number, {line("all seeds", {40, 12, 8, 3})}}};
  const std::string doc = render_line_plot_svg(plot);
  CHECK(texts(group(doc, "<g class=\"x-axis\"")) == plot.x_categories);
  CHECK(doc.find("<title>all seeds: x = raft, y = 8</title>") != std::string::npos);
}

TEST_CASE("plot: every point carries a tooltip with its series, x and y") {
  const std::string doc = render_line_plot_svg(sample());
  CHECK(doc.find("<title>lease: x = 1s, y = 1.5s</title>") != std::string::npos);
  CHECK(doc.find("<title>raft: x = 5s, y = 450ms</title>") != std::string::npos);
  CHECK(doc.find("<title>lease: x = 2s, y = 0.01</title>") != std::string::npos);
}

// Set ELECTSIM_PLOT_EXAMPLE to a file name to look at a representative picture.
TEST_CASE("plot: an example sweep picture is well formed and is written out on request") {
  LinePlot plot;
  plot.title =
      "ttl-vs-gc-pause: failover p50, failover p99 and split brain probability against "
      "protocol.ttl";
  plot.subtitle = "200 seed(s) per point (seeds 1..200), 4000 of 4000 runs; scenarios/ttl.json";
  plot.x_label = "protocol.ttl";
  plot.x_unit = AxisUnit::duration_ns;
  plot.x = {500 * kMs, 1 * kSecond, 2 * kSecond, 5 * kSecond, 10 * kSecond};
  PlotPanel p50{"failover p50", AxisUnit::duration_ns, {}};
  PlotPanel p99{"failover p99", AxisUnit::duration_ns, {}};
  PlotPanel split{"split brain probability", AxisUnit::probability, {}};
  const std::vector<std::string> labels = {"lease, fencing=true", "lease, fencing=false", "raft",
                                           "bully", "ring"};
  for (std::size_t s = 0; s < labels.size(); ++s) {
    PlotSeries a{labels[s], {}};
    PlotSeries b{labels[s], {}};
    PlotSeries c{labels[s], {}};
    for (std::size_t i = 0; i < plot.x.size(); ++i) {
      const double scale = 1.0 + 0.3 * static_cast<double>(s);
      a.y.push_back(plot.x[i] * scale * 0.6 + 150 * kMs);
      b.y.push_back(plot.x[i] * scale * 1.1 + 400 * kMs);
      c.y.push_back(s == 1 ? 0.4 / (1.0 + static_cast<double>(i)) : 0.02 * static_cast<double>(s));
    }
    if (s == 2) b.y[2] = nullopt;
    if (s == 4) a.y.assign(plot.x.size(), nullopt), b.y = a.y, c.y = a.y;
    p50.series.push_back(a);
    p99.series.push_back(b);
    split.series.push_back(c);
  }
  plot.panels = {p50, p99, split};
  const std::string doc = render_line_plot_svg(plot);
  INFO(well_formed_error(doc));
  REQUIRE(well_formed_error(doc).empty());
  CHECK(doc.find("ring (no data)") != std::string::npos);
  if (const char* path = std::getenv("ELECTSIM_PLOT_EXAMPLE"); path != nullptr && *path != 0) {
    std::ofstream out(path, std::ios::binary);
    out << doc;
    CHECK(out.good());
  }
}
