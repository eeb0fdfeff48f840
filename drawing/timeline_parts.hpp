// The timeline SVG's shared parts (drawing/timeline_svg.cpp paints the panels,
// drawing/timeline_legend.cpp the patterns and the legend): sizes, colours, the features a picture
// uses, where time goes on the page, and the small SVG writers. Not for use outside them.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drawing/svg.hpp"
#include "drawing/timeline.hpp"
#include "drawing/timeline_svg.hpp"

namespace electsim::drawing::timeline_parts {

using svg::number;

constexpr double kSide = 20;       // outer margin
constexpr double kMinWidth = 480;  // narrower pictures are widened to this
constexpr double kMergePx = 1.0;   // spans narrower than this merge with their neighbours
constexpr double kTitleFont = 17;
constexpr double kPanelTitleFont = 15;
constexpr double kSummaryFont = 12;
constexpr double kLabelFont = 12;
constexpr double kSmallFont = 10.5;
constexpr double kLaneHeight = 26;  // one lane of failover and split-brain brackets
constexpr std::size_t kAnnotationLanesMax = 4;
constexpr double kFaultLaneHeight = 14;
constexpr std::size_t kFaultLanesMax = 3;
constexpr std::size_t kPartitionLegendMax = 8;

// Epoch colours: Okabe-Ito without yellow (unreadable on white), black (reads as "down") and
// vermillion (kept for alarms). Label ink chosen for contrast on each.
constexpr std::array<std::string_view, 5> kEpochFill = {"#0072B2", "#009E73", "#CC79A7", "#E69F00",
                                                        "#56B4E9"};
constexpr std::array<std::string_view, 5> kEpochInk = {"#ffffff", "#ffffff", "#000000", "#000000",
                                                       "#000000"};
constexpr std::string_view kAlarm = "#C62828";  // split-brain, rejected and stale writes
constexpr std::string_view kInk = "#222222";
constexpr std::string_view kFollower = "#8c8c8c";
constexpr std::string_view kMergedFill = "#6b6b6b";
constexpr std::string_view kGrid = "#e2e2e2";

// Partition sides: a light fill, a darker ink for the pattern and the letter, and a pattern shape
// of its own, so sides differ in print too.
struct SideStyle {
  std::string_view fill;
  std::string_view ink;
  std::string_view shape;  // pattern content in a 6x6 tile
};
constexpr std::array<SideStyle, 6> kSides = {{
    {"#d4e5f5", "#24588a", "<circle cx=\"3\" cy=\"3\" r=\"1.1\" fill=\"#24588a\"/>"},
    {"#fbdcc2", "#8f4f12", "<rect x=\"0\" y=\"2.5\" width=\"6\" height=\"1.1\" fill=\"#8f4f12\"/>"},
    {"#d3eddc", "#1c6b44",
     "<path d=\"M0 6L6 0M-1 1L1 -1M5 7L7 5\" stroke=\"#1c6b44\" stroke-width=\"1\"/>"},
    {"#f1d6e6", "#853a66", "<rect x=\"2.5\" y=\"0\" width=\"1.1\" height=\"6\" fill=\"#853a66\"/>"},
    {"#e4e4e4", "#444444", "<path d=\"M0 3H6M3 0V6\" stroke=\"#444444\" stroke-width=\"0.9\"/>"},
    {"#fdf0c0", "#6f5a00",
     "<path d=\"M0 0L6 6M-1 5L1 7M5 -1L7 1\" stroke=\"#6f5a00\" stroke-width=\"1\"/>"},
}};

inline std::size_t epoch_slot(Epoch e) {
  const Epoch m = e % static_cast<Epoch>(kEpochFill.size());
  return static_cast<std::size_t>(m < 0 ? m + static_cast<Epoch>(kEpochFill.size()) : m);
}

constexpr std::size_t kLegendSlot = 2;  // the colour legend samples use

inline std::string side_letter(int side) {
  if (side < 0) return "";
  if (side < 26) return std::string(1, static_cast<char>('A' + side));
  return fmt::format("G{}", side + 1);
}

inline const SideStyle& side_style(int side) {
  return kSides[static_cast<std::size_t>(side) % kSides.size()];
}

// "2.14s", "150ms", "6s": three significant digits in the unit duration_label picks.
// Under ten minutes, seconds read better than fractions of a minute ("80s", not "1.33min").
inline std::string short_duration(Duration d) {
  const double ns = static_cast<double>(d.count());
  if (ns == 0) return "0s";
  if (std::fabs(ns) >= 1e9 && std::fabs(ns) < 600e9) return svg::significant(ns / 1e9, 3) + "s";
  const std::string full = svg::duration_label(ns);  // "2.137s"
  std::size_t digits_end = 0;
  while (digits_end < full.size() &&
         (std::isdigit(static_cast<unsigned char>(full[digits_end])) != 0 ||
          full[digits_end] == '.' || full[digits_end] == '-')) {
    ++digits_end;
  }
  const double value = std::strtod(full.substr(0, digits_end).c_str(), nullptr);
  return svg::significant(value, 3) + full.substr(digits_end);
}

inline std::string time_text(Time t) {
  return sim::format_seconds(t.since_start());
}

// Servers by the names their world gave them (the trace header's topology): "store", "store:K",
// "sink", "postgres", "redis:K", ...
inline std::string server_name(const sim::Topology& topology, sim::Endpoint e) {
  const sim::NamedEndpoint* server = topology.server(e);
  return server != nullptr ? server->name : std::string();
}

inline bool is_member(const sim::Topology& topology, sim::Endpoint e) {
  return topology.store_member_index(e) >= 0;
}

inline std::string node_name(const sim::Topology& topology, sim::Endpoint e) {
  if (e >= 0) return fmt::format("node {}", e);
  const std::string name = server_name(topology, e);
  return name.empty() ? "-" : name;
}

inline std::string short_endpoint(const sim::Topology& topology, sim::Endpoint e) {
  if (e >= 0) return fmt::format("n{}", e);
  return server_name(topology, e);
}

inline const char* fault_word(sim::FaultKind kind) {
  return sim::fault_info(kind).label;
}

inline std::string fault_label(const FaultMark& f, const sim::Topology& topology, bool replicated) {
  std::string text = fault_word(f.kind);
  if (f.kind == sim::FaultKind::cut) {
    text += fmt::format(" {}\xE2\x86\x92{}", short_endpoint(topology, f.target),
                        short_endpoint(topology, f.peer));
  } else if (f.target >= 0 || (replicated && is_member(topology, f.target))) {
    text += " " + short_endpoint(topology, f.target);
  }
  if (f.duration.count() > 0) text += " " + short_duration(f.duration);
  if (f.skipped) text += " (skipped)";
  return text;
}

// Splits text at spaces into lines that fit `width_px` (at most 3 lines, the last one cut short).
inline std::vector<std::string> wrap(std::string_view text, double width_px, double font_px) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string word(text.substr(start, end - start));
    const std::string candidate = line.empty() ? word : line + " " + word;
    if (!line.empty() && svg::text_width_estimate(candidate, font_px) > width_px) {
      lines.push_back(std::move(line));
      line = word;
    } else {
      line = candidate;
    }
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  if (lines.size() > 3) {
    lines.resize(3);
    lines.back() += " \xE2\x80\xA6";
  }
  return lines;
}

// Greedy lanes for labels: each item goes into the first lane whose last item ends before it.
class LanePacker {
 public:
  explicit LanePacker(std::size_t lanes_max) : lanes_max_(lanes_max) {}
  std::optional<std::size_t> place(double x0, double x1) {
    for (std::size_t i = 0; i < ends_.size(); ++i) {
      if (x0 >= ends_[i]) {
        ends_[i] = x1;
        return i;
      }
    }
    if (ends_.size() < lanes_max_) {
      ends_.push_back(x1);
      return ends_.size() - 1;
    }
    return std::nullopt;
  }
  std::size_t used() const { return ends_.size(); }

 private:
  std::size_t lanes_max_;
  std::vector<double> ends_;
};

// Which symbols a picture uses, so its legend explains each of them and nothing else.
struct Features {
  bool candidate = false;
  bool follower_known = false;
  bool follower_unknown = false;
  bool down = false;
  bool pause = false;
  bool partition = false;
  bool split_brain = false;
  bool failover = false;
  bool store = false;
  bool draining = false;
  bool expired = false;
  bool renewals = false;
  bool sink = false;
  bool rejected = false;
  bool stale = false;
  bool faults = false;
  bool skipped_faults = false;
  bool merged = false;
  bool run_ended = false;
  bool store_leader = false;          // a replicated store's leader changes
  std::optional<Epoch> legend_epoch;  // an epoch that occurs, for the colour legend's sample
  std::optional<Epoch> legend_term;   // a store leader's term that occurs, likewise
};

// Where time goes on the page.
struct Geometry {
  double left = 0;
  double right = 0;
  double domain_ns = 1;
  double x(Time t) const { return x_ns(static_cast<double>(t.ns)); }
  double x_ns(double ns) const {
    const double v = left + ns / domain_ns * (right - left);
    return std::clamp(v, left, right);
  }
};

struct Context {
  const TimelineStyle& style;
  std::string ids;  // pattern id prefix
  Geometry g;
  Features used;
  std::string pattern(std::string_view name) const { return fmt::format("url(#{}-{})", ids, name); }
};

inline void append_title(std::string& out, const Context& c, const std::string& text) {
  if (!c.style.tooltips) return;
  out += "<title>";
  out += svg::escape(text);
  out += "</title>";
}

// A <rect>, with a tooltip when asked. `extra` holds further attributes.
inline void rect(std::string& out, const Context& c, double x0, double y, double x1, double h,
                 std::string_view fill, std::string_view extra, const std::string& tooltip) {
  const double w = std::max(x1 - x0, 0.0);
  fmt::format_to(std::back_inserter(out),
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}", number(x0, 2),
                 number(y, 2), number(w, 2), number(h, 2), fill, extra);
  if (tooltip.empty() || !c.style.tooltips) {
    out += "/>\n";
    return;
  }
  out += ">";
  append_title(out, c, tooltip);
  out += "</rect>\n";
}

inline void text(std::string& out, double x, double y, double font, std::string_view anchor,
                 std::string_view attributes, const std::string& content) {
  fmt::format_to(std::back_inserter(out), "<text x=\"{}\" y=\"{}\" font-size=\"{}\"", number(x, 2),
                 number(y, 2), number(font));
  if (!anchor.empty()) fmt::format_to(std::back_inserter(out), " text-anchor=\"{}\"", anchor);
  if (!attributes.empty()) {
    out += ' ';
    out += attributes;
  }
  out += '>';
  out += svg::escape(content);
  out += "</text>\n";
}

// Text that stays legible over patterns: a white halo under the glyphs.
constexpr std::string_view kHalo =
    "stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"";

// Runs of spans narrower than kMergePx become one group; wider spans stand alone. Calls
// single(index) for a span drawn as itself and group(x0, x1, count) for a merged run.
template <typename XOf, typename Single, typename Group>
inline void merge_narrow(std::size_t count, XOf x_of, Single single, Group group) {
  std::optional<std::pair<double, double>> open;
  std::size_t open_count = 0;
  std::size_t open_first = 0;
  auto flush = [&] {
    if (!open) return;
    if (open_count == 1) {
      single(open_first);
    } else {
      group(open->first, open->second, open_count);
    }
    open.reset();
    open_count = 0;
  };
  for (std::size_t i = 0; i < count; ++i) {
    const auto [x0, x1] = x_of(i);
    if (x1 - x0 >= kMergePx) {
      flush();
      single(i);
      continue;
    }
    if (open && x0 <= open->second + kMergePx) {
      open->second = std::max(open->second, x1);
      ++open_count;
      continue;
    }
    flush();
    open = std::make_pair(x0, x1);
    open_count = 1;
    open_first = i;
  }
  flush();
}

// The patterns every picture refers to, with ids under the prefix `p`.
std::string defs(const std::string& p);
// The legend for the features `c.used` records, with the partitions of `timelines` (named by
// `names`), from `top`; returns the y below it.
double paint_legend(std::string& out, const Context& c, double top,
                    const std::vector<const Timeline*>& timelines,
                    const std::vector<std::string>& names);

}  // namespace electsim::drawing::timeline_parts
