// The run timeline as SVG, written by hand like the sweep chart (drawing/plot.cpp): layout from
// estimated text widths, colours from the Okabe-Ito palette (Okabe & Ito, "Color Universal
// Design", 2008), and every distinction also made by a pattern, a label or a dash. Spans narrower
// than a pixel are merged, so a run with tens of thousands of changes stays a small file that
// renders quickly; the same timeline always gives the same bytes.
#include "drawing/timeline_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "drawing/svg.hpp"
#include "drawing/timeline_painter.hpp"
#include "drawing/timeline_parts.hpp"
#include "sim/assert.hpp"

namespace electsim::drawing {

namespace timeline_parts {

// ---- One panel

RowGeometry row_geometry(std::size_t nodes, bool strips) {
  RowGeometry r;
  const double n = static_cast<double>(std::max<std::size_t>(nodes, 1));
  r.bar = std::clamp(270.0 / n, 6.0, 26.0);
  r.strip = strips ? std::max(3.0, std::round(r.bar * 0.34)) : 0.0;
  const double gap = r.bar >= 14 ? 5 : 1;
  r.pitch = r.bar + r.strip + gap;
  r.label_font = std::min(kLabelFont, r.pitch - 1);
  if (r.label_font < 7) {
    r.label_font = 7;
    r.label_every = static_cast<std::size_t>(std::ceil(8.0 / r.pitch));
  }
  return r;
}

// A follower line, a candidate bar, a leader bar: where each sits in the bar area.
BarShape bar_shape(double top, double bar) {
  const double lh = std::max(3.0, std::round(bar * 0.78));
  const double ch = std::max(2.0, std::round(bar * 0.42));
  return BarShape{top + (bar - lh) / 2, lh, top + (bar - ch) / 2, ch, top + bar / 2};
}

std::vector<std::string> summary_parts(const Timeline& tl) {
  std::vector<std::string> parts;
  if (!tl.verdict.empty()) parts.push_back(tl.verdict);
  parts.push_back(fmt::format("{} node{}, {}", tl.node_count, tl.node_count == 1 ? "" : "s",
                              short_duration(tl.duration)));
  if (tl.replicated()) {
    const std::size_t changes = tl.store_leaders.size();
    parts.push_back(fmt::format("store of {} members, {} leader{} elected", tl.store_members,
                                changes, changes == 1 ? "" : "s"));
  }
  const TimelineSummary& s = tl.summary;
  parts.push_back(fmt::format("{} election{}", s.elections, s.elections == 1 ? "" : "s"));
  if (s.split_brain_time.count() > 0) {
    parts.push_back(fmt::format("split-brain {} in {} episode{}",
                                short_duration(s.split_brain_time), s.split_brain_episodes,
                                s.split_brain_episodes == 1 ? "" : "s"));
  } else {
    parts.push_back("no split-brain");
  }
  std::vector<std::string> measured;
  std::size_t unresolved = 0;
  for (const Failover& f : tl.failovers) {
    if (f.failover) {
      measured.push_back(short_duration(*f.failover));
    } else if (!f.ridden_out) {
      ++unresolved;
    }
  }
  if (!measured.empty()) {
    if (measured.size() > 4) {
      measured.resize(4);
      measured.back() += ", \xE2\x80\xA6";
    }
    std::string joined;
    for (const std::string& m : measured) joined += (joined.empty() ? "" : ", ") + m;
    parts.push_back(fmt::format("failover{} {}", tl.failovers.size() == 1 ? "" : "s", joined));
  }
  if (unresolved > 0) parts.push_back(fmt::format("{} without a new leader", unresolved));
  if (s.same_epoch_leaders > 0) {
    parts.push_back(fmt::format("{} same-epoch leader pair{}", s.same_epoch_leaders,
                                s.same_epoch_leaders == 1 ? "" : "s"));
  }
  if (s.writes_accepted + s.writes_rejected > 0) {
    parts.push_back(
        fmt::format("writes {} accepted, {} rejected", s.writes_accepted, s.writes_rejected));
    if (s.stale_writes_accepted + s.stale_writes_rejected > 0) {
      parts.push_back(fmt::format("stale writes {} accepted, {} rejected", s.stale_writes_accepted,
                                  s.stale_writes_rejected));
    }
    if (s.overwrites > 0) {
      parts.push_back(fmt::format("{} overwrite{} of newer data (corruption)", s.overwrites,
                                  s.overwrites == 1 ? "" : "s"));
    }
  }
  parts.push_back(fmt::format("leaderless {}%", number(s.leaderless_fraction * 100, 1)));
  return parts;
}

constexpr std::string_view kSeparator = " \xC2\xB7 ";  // a middle dot between figures

std::string summary_line(const Timeline& tl) {
  std::string line;
  for (const std::string& p : summary_parts(tl)) {
    if (!line.empty()) line += kSeparator;
    line += p;
  }
  return line;
}

// The summary's figures in lines that fit `width_px`, broken only between figures.
std::vector<std::string> summary_lines(const Timeline& tl, double width_px, double font_px) {
  std::vector<std::string> lines;
  std::string line;
  for (const std::string& p : summary_parts(tl)) {
    const std::string candidate = line.empty() ? p : line + std::string(kSeparator) + p;
    if (!line.empty() && svg::text_width_estimate(candidate, font_px) > width_px) {
      lines.push_back(std::move(line));
      line = p;
    } else {
      line = candidate;
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// A short note under a node's label when its clock is not true time: its largest drift, else
// whether it was stepped or started with an offset.
std::string clock_note(const Timeline& tl, std::size_t node) {
  if (node >= tl.clocks.size() || tl.clocks[node].empty()) return "";
  const auto& segments = tl.clocks[node];
  std::int64_t drift = 0;
  for (const TimelineClockSegment& s : segments) {
    if (std::llabs(s.drift_ppb) > std::llabs(drift)) drift = s.drift_ppb;
  }
  if (drift != 0) {
    const double ppm = static_cast<double>(drift) / 1000.0;
    if (std::fabs(ppm) >= 1000) {
      return fmt::format("clock {}{}%", ppm > 0 ? "+" : "", svg::significant(ppm / 1e4, 3));
    }
    return fmt::format("clock {}{}ppm", ppm > 0 ? "+" : "", svg::significant(ppm, 3));
  }
  if (segments.size() > 1) return "clock stepped";
  return segments.front().local_ns != segments.front().from.ns ? "clock offset" : "";
}

double PanelPainter::paint(std::string& out, double top, const std::vector<svg::Tick>& ticks) {
  const Geometry& g = c_.g;
  const std::size_t n = tl_.node_count;
  has_store_ = tl_.header.leader_key.has_value() || !tl_.leader_key.empty() ||
               !tl_.store_pauses.empty() || touches(tl_.store_endpoint());
  has_sink_ = !tl_.writes.empty() || touches(tl_.sink_endpoint());
  leaders_.assign(n, {});
  for (const BeliefSpan& b : tl_.beliefs) {
    if (b.role != sim::Role::leader) continue;
    epochs_.push_back(b.epoch);
    if (b.node >= 0 && static_cast<std::size_t>(b.node) < n) {
      leaders_[static_cast<std::size_t>(b.node)].push_back(&b);
    }
  }
  std::sort(epochs_.begin(), epochs_.end());
  epochs_.erase(std::unique(epochs_.begin(), epochs_.end()), epochs_.end());
  if (!c_.used.legend_epoch && !epochs_.empty()) c_.used.legend_epoch = epochs_.front();
  has_members_ = tl_.replicated();
  for (const BeliefSpan& b : tl_.member_roles) {
    if (b.role == sim::Role::leader) terms_.push_back(b.epoch);
  }
  std::sort(terms_.begin(), terms_.end());
  terms_.erase(std::unique(terms_.begin(), terms_.end()), terms_.end());
  rows_ = row_geometry(n, !tl_.partitions.empty());

  // Heading and summary.
  double y = top;
  std::string head;
  const double heading_font = in_.big_heading ? kTitleFont : kPanelTitleFont;
  for (const std::string& line : wrap(in_.heading, g.right - kSide, heading_font * 1.05)) {
    y += heading_font + 6;
    text(head, kSide, y, heading_font, "", "font-weight=\"bold\" fill=\"#111111\"", line);
  }
  for (const std::string& line : summary_lines(tl_, g.right - kSide, kSummaryFont)) {
    y += kSummaryFont + 5;
    text(head, kSide, y, kSummaryFont, "", "fill=\"#444444\"", line);
  }
  y += 8;

  // Annotation lanes (failovers, split-brain) above the rows.
  std::vector<Annotation> notes = annotations();
  LanePacker packer(kAnnotationLanesMax);
  for (Annotation& a : notes) a.lane = packer.place(a.extent0, a.extent1);
  const double lanes_top = y;
  const double lanes_h = static_cast<double>(packer.used()) * kLaneHeight;
  rows_top_ = lanes_top + lanes_h + (packer.used() > 0 ? 4 : 0);
  nodes_bottom_ = rows_top_ + static_cast<double>(n) * rows_.pitch;
  store_top_ = nodes_bottom_ + (has_store_ || has_members_ ? 6 : 0);
  members_top_ = store_top_ + (has_store_ ? service_pitch() : 0);
  sink_top_ = members_top_ + (has_members_ ? members_height() : 0);
  servers_top_ = sink_top_ + (has_sink_ ? service_pitch() : 0);
  const double services_bottom = servers_top_ + servers_height();

  // Faults under the rows, labels packed into lanes above their markers.
  std::vector<FaultDraw> faults = fault_marks();
  LanePacker fault_packer(kFaultLanesMax);
  for (FaultDraw& f : faults) {
    const double w = svg::text_width_estimate(f.label, kSmallFont);
    const double x0 = std::clamp(f.x - 4, g.left, std::max(g.left, g.right - w));
    f.label_x = x0;
    f.lane = fault_packer.place(x0, x0 + w + 10);
  }
  const double fault_top = services_bottom + 6;
  const double fault_lanes_h = static_cast<double>(fault_packer.used()) * kFaultLaneHeight;
  const double fault_base = fault_top + fault_lanes_h + 8;  // the markers' baseline
  const double bottom = faults.empty() ? services_bottom + 6 : fault_base + 4;

  fmt::format_to(std::back_inserter(out), "<g class=\"panel\" data-panel=\"{}\">\n", index_);
  out += head;

  // Row backgrounds, then grid lines, behind everything else.
  for (std::size_t node = 0; node < n; node += 2) {
    rect(out, c_, g.left, row_top(node) - 1, g.right, rows_.bar + rows_.strip + 2, "#f4f4f4", "",
         "");
  }
  const double service_bar = std::max(rows_.bar, 18.0);
  if (has_store_) {
    rect(out, c_, g.left, store_top_ - 1, g.right, service_bar + rows_.strip + 2, "#edf2f7", "",
         "");
  }
  if (has_sink_) {
    rect(out, c_, g.left, sink_top_ - 1, g.right, service_bar + rows_.strip + 2, "#f7f2ea", "", "");
  }
  for (std::size_t m = 0; has_members_ && m < tl_.store_members; m += 2) {
    rect(out, c_, g.left, member_top(m) - 1, g.right, member_bar() + rows_.strip + 2, "#edf2f7", "",
         "");
  }
  for (std::size_t r = 0; r < tl_.server_rows.size(); r += 2) {
    rect(out, c_, g.left, server_top(r) - 1, g.right, member_bar() + rows_.strip + 2, "#eef3ee", "",
         "");
  }
  out += fmt::format("<g class=\"grid\" stroke=\"{}\" stroke-width=\"1\">", kGrid);
  for (const svg::Tick& tick : ticks) {
    const double x = g.x_ns(tick.value);
    fmt::format_to(std::back_inserter(out), "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>",
                   number(x, 2), number(lanes_top, 2), number(bottom, 2));
  }
  out += "</g>\n";

  // The stretch after a shorter run ended (compare panels share the longest run's axis).
  if (g.x(Time(tl_.duration)) < g.right - 0.5) {
    c_.used.run_ended = true;
    const double x0 = g.x(Time(tl_.duration));
    rect(out, c_, x0, rows_top_, g.right, services_bottom - rows_top_, "#f0f0f0", "", "");
    text(out, (x0 + g.right) / 2, rows_top_ + 14, kSmallFont, "middle", "fill=\"#777777\"",
         "run ended");
  }

  paint_node_rows(out);
  if (has_store_) paint_store(out);
  if (has_members_) paint_members(out);
  if (has_sink_) paint_sink(out);
  if (!tl_.server_rows.empty()) paint_servers(out);
  paint_split_brain(out);
  paint_annotations(out, notes, lanes_top);
  if (!faults.empty()) paint_faults(out, faults, fault_top, fault_base);
  out += "</g>\n";
  return bottom;
}

double PanelPainter::member_top(std::size_t m) const {
  return members_top_ + leader_lane() + static_cast<double>(m) * member_pitch();
}

double PanelPainter::members_height() const {
  return leader_lane() + static_cast<double>(tl_.store_members) * member_pitch() + 2;
}

double PanelPainter::server_top(std::size_t row) const {
  return servers_top_ + 2 + static_cast<double>(row) * member_pitch();
}

double PanelPainter::servers_height() const {
  if (tl_.server_rows.empty()) return 0;
  return 4 + static_cast<double>(tl_.server_rows.size()) * member_pitch();
}

bool PanelPainter::touches(sim::Endpoint e) const {
  return std::any_of(tl_.partitions.begin(), tl_.partitions.end(),
                     [&](const PartitionSpan& p) { return p.side(e) >= 0; });
}

double PanelPainter::row_top(std::size_t node) const {
  return rows_top_ + static_cast<double>(node) * rows_.pitch;
}

double PanelPainter::row_centre(NodeId node) const {
  if (node < 0 || static_cast<std::size_t>(node) >= tl_.node_count) return rows_top_;
  return row_top(static_cast<std::size_t>(node)) + rows_.bar / 2;
}

std::size_t PanelPainter::slot_of(Epoch e) const {
  const auto it = std::lower_bound(epochs_.begin(), epochs_.end(), e);
  if (it != epochs_.end() && *it == e) {
    return static_cast<std::size_t>(it - epochs_.begin()) % kEpochFill.size();
  }
  return epoch_slot(e);
}

std::size_t PanelPainter::term_slot(Epoch term) const {
  const auto it = std::lower_bound(terms_.begin(), terms_.end(), term);
  if (it != terms_.end() && *it == term) {
    return static_cast<std::size_t>(it - terms_.begin()) % kEpochFill.size();
  }
  return epoch_slot(term);
}

std::optional<Epoch> PanelPainter::hold_epoch(const LeaseHold& hold) const {
  if (hold.holder < 0 || static_cast<std::size_t>(hold.holder) >= leaders_.size()) {
    return std::nullopt;
  }
  const auto& spans = leaders_[static_cast<std::size_t>(hold.holder)];
  auto it = std::lower_bound(spans.begin(), spans.end(), hold.start,
                             [](const BeliefSpan* b, Time t) { return b->start < t; });
  if (it != spans.end() && (*it)->start <= hold.end) return (*it)->epoch;
  if (it != spans.begin() && (*std::prev(it))->end > hold.start) return (*std::prev(it))->epoch;
  return std::nullopt;
}

Duration PanelPainter::renewal_gap(const LeaseHold& hold) const {
  std::vector<Duration> gaps;
  Time previous = hold.start;
  for (Time r : hold.renewals) {
    gaps.push_back(r - previous);
    previous = r;
  }
  if (gaps.size() >= 2) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                     gaps.end());
    return gaps[gaps.size() / 2];
  }
  return tl_.lease_ttl ? *tl_.lease_ttl / 3 : Duration(0);
}

}  // namespace timeline_parts

namespace {

using namespace timeline_parts;

std::string default_title(const Timeline& tl) {
  const TraceHeader& h = tl.header;
  std::string title = h.scenario.empty() ? "run" : h.scenario;
  if (!h.variant.empty()) title += " [" + h.variant + "]";
  if (!h.protocol.empty()) title += " \xC2\xB7 " + h.protocol;
  title += fmt::format(" \xC2\xB7 seed {}", h.seed);
  return title;
}

std::string render(const std::vector<const Timeline*>& timelines,
                   const std::vector<std::string>& headings, const std::string& title,
                   const TimelineStyle& style, bool compare) {
  const double width = std::max(style.width_px, kMinWidth);
  TimelineStyle s = style;
  s.width_px = width;
  Context c{s, style.id_prefix.empty() ? "tl" : style.id_prefix, {}, {}};
  for (char& ch : c.ids) {
    if (std::isalnum(static_cast<unsigned char>(ch)) == 0 && ch != '-' && ch != '_') ch = '_';
  }

  // The label column fits "node N" for the largest N, and "store".
  std::size_t nodes_max = 1;
  double domain = 0;
  for (const Timeline* tl : timelines) {
    nodes_max = std::max(nodes_max, tl->node_count);
    domain = std::max(domain, static_cast<double>(tl->duration.count()));
  }
  if (domain <= 0) domain = 1e9;  // an empty run still gets a one-second axis
  const double label_w =
      std::max(svg::text_width_estimate(fmt::format("node {}", nodes_max - 1), kLabelFont),
               svg::text_width_estimate("clock +100ppm", 9));
  c.g.left = kSide + label_w + 14;
  c.g.right = width - kSide - 6;
  c.g.domain_ns = domain;

  const int target = std::clamp(static_cast<int>((c.g.right - c.g.left) / 95), 2, 14);
  std::vector<svg::Tick> ticks;
  for (svg::Tick& t : svg::duration_ticks(0, domain, target)) {
    if (t.value >= 0 && t.value <= domain * (1 + 1e-9)) ticks.push_back(std::move(t));
  }

  std::string body;
  double y = 6;
  const bool single = !compare;
  if (!single) {
    for (const std::string& line : wrap(title, width - 2 * kSide, kTitleFont * 1.05)) {
      y += kTitleFont + 6;
      text(body, kSide, y, kTitleFont, "", "font-weight=\"bold\" fill=\"#111111\"", line);
    }
    y += 6;
  }
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    PanelInput in{timelines[i], single ? title : headings[i], single};
    PanelPainter painter(c, in, i);
    y = painter.paint(body, y, ticks) + (i + 1 < timelines.size() ? 14 : 0);
    if (i + 1 < timelines.size()) {
      fmt::format_to(std::back_inserter(body),
                     "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999999\" "
                     "stroke-width=\"1\"/>\n",
                     number(kSide, 2), number(y - 7, 2), number(width - kSide, 2),
                     number(y - 7, 2));
    }
  }

  // The shared time axis.
  const double axis_y = y + 4;
  fmt::format_to(std::back_inserter(body),
                 "<g class=\"x-axis\" font-size=\"11\" fill=\"#333333\" text-anchor=\"middle\">"
                 "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333333\" "
                 "stroke-width=\"1\"/>",
                 number(c.g.left, 2), number(axis_y, 2), number(c.g.right, 2), number(axis_y, 2));
  for (const svg::Tick& t : ticks) {
    const double x = c.g.x_ns(t.value);
    fmt::format_to(std::back_inserter(body),
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333333\"/>"
                   "<text x=\"{0}\" y=\"{3}\">{4}</text>",
                   number(x, 2), number(axis_y, 2), number(axis_y + 5, 2), number(axis_y + 17, 2),
                   svg::escape(t.label));
  }
  body += "</g>\n";
  text(body, c.g.right, axis_y + 33, 11, "end", "fill=\"#555555\"", "true time since the start");
  y = axis_y + 44;

  std::vector<std::string> names;
  for (std::size_t i = 0; i < timelines.size(); ++i) names.push_back(single ? "" : headings[i]);
  if (s.legend) y = paint_legend(body, c, y, timelines, names) + 6;

  const double height = std::ceil(y + 6);
  ELECTSIM_ASSERT(std::isfinite(height), "timeline height is finite");
  std::string desc;
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    desc += (i == 0 ? "" : "\n") + (single ? std::string() : headings[i] + ": ") +
            summary_line(*timelines[i]);
  }
  std::string out;
  out.reserve(body.size() + 4096);
  fmt::format_to(std::back_inserter(out),
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" data-time-left=\"{2}\" "
                 "data-time-right=\"{3}\" data-time-domain-ns=\"{4}\">\n"
                 "<title>{5}</title>\n<desc>{6}</desc>\n",
                 number(width), number(height), number(c.g.left, 2), number(c.g.right, 2),
                 number(domain, 0), svg::escape(title), svg::escape(desc));
  out += defs(c.ids);
  fmt::format_to(std::back_inserter(out),
                 "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                 number(width), number(height));
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string render_timeline_svg(const Timeline& timeline, const TimelineStyle& style) {
  const std::string title = style.title.empty() ? default_title(timeline) : style.title;
  return render({&timeline}, {title}, title, style, false);
}

std::string render_timelines_svg(const std::vector<const Timeline*>& timelines,
                                 const std::vector<std::string>& panel_titles,
                                 const TimelineStyle& style) {
  std::vector<const Timeline*> present;
  std::vector<std::string> headings;
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    if (timelines[i] == nullptr) continue;
    present.push_back(timelines[i]);
    std::string heading = i < panel_titles.size() ? panel_titles[i] : "";
    if (heading.empty()) heading = timelines[i]->header.protocol;
    headings.push_back(heading);
  }
  std::string title = style.title;
  if (title.empty()) {
    if (present.empty()) {
      title = "compare: nothing to show";
    } else {
      const TraceHeader& h = present.front()->header;
      title =
          fmt::format("{}{} \xC2\xB7 seed {} \xC2\xB7 ", h.scenario.empty() ? "run" : h.scenario,
                      h.variant.empty() ? "" : " [" + h.variant + "]", h.seed);
      for (std::size_t i = 0; i < headings.size(); ++i) {
        title += (i == 0 ? "" : " vs ") + headings[i];
      }
    }
  }
  return render(present, headings, title, style, true);
}

}  // namespace electsim::drawing
