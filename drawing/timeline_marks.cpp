// The timeline's marks across rows (drawing/timeline_painter.hpp): split-brain stretches,
// failover brackets and their labels, and the faults' lane.
#include "drawing/timeline_painter.hpp"

namespace electsim::drawing::timeline_parts {

// ---- Split-brain, failovers

std::vector<std::pair<std::size_t, std::size_t>> PanelPainter::split_clusters() const {
  constexpr double kClusterGapPx = 30;
  const Geometry& g = c_.g;
  const auto& spans = tl_.split_brain;
  std::vector<std::pair<std::size_t, std::size_t>> clusters;
  std::size_t i = 0;
  while (i < spans.size()) {
    std::size_t j = i;
    while (j + 1 < spans.size() && g.x(spans[j + 1].start) - g.x(spans[j].end) < kClusterGapPx) {
      ++j;
    }
    clusters.emplace_back(i, j);
    i = j + 1;
  }
  return clusters;
}

void PanelPainter::paint_split_brain(std::string& out) {
  if (tl_.split_brain.empty() || tl_.node_count == 0) return;
  c_.used.split_brain = true;
  const double y = rows_top_ - 2;
  const double h = nodes_bottom_ - rows_top_ + 1;
  out += "<g class=\"split-brain\">\n";
  merge_narrow(
      tl_.split_brain.size(),
      [&](std::size_t i) { return xs(tl_.split_brain[i].start, tl_.split_brain[i].end); },
      [&](std::size_t i) {
        const SplitBrainSpan& s = tl_.split_brain[i];
        auto [x0, x1] = xs(s.start, s.end);
        x1 = std::max(x1, x0 + 1);
        std::string nodes;
        for (NodeId node : s.nodes) nodes += (nodes.empty() ? "" : ", ") + std::to_string(node);
        rect(out, c_, x0, y, x1, h, kAlarm, " fill-opacity=\"0.13\"",
             fmt::format("split-brain {} to {} ({}): nodes {} lead at once", time_text(s.start),
                         time_text(s.end), short_duration(s.end - s.start), nodes));
      },
      [&](double x0, double x1, std::size_t count) {
        rect(out, c_, x0, y, std::max(x1, x0 + 1), h, kAlarm, " fill-opacity=\"0.13\"",
             fmt::format("{} short split-brain stretches", count));
      });
  for (const auto& [first, last] : split_clusters()) {
    const double x0 = c_.g.x(tl_.split_brain[first].start);
    const double x1 = std::max(c_.g.x(tl_.split_brain[last].end), x0 + 1);
    rect(out, c_, x0, y, x1, h, "none",
         fmt::format(" stroke=\"{}\" stroke-width=\"1.4\" stroke-dasharray=\"5 3\"", kAlarm), "");
  }
  out += "</g>\n";
}

std::vector<PanelPainter::Annotation> PanelPainter::annotations() const {
  const Geometry& g = c_.g;
  std::vector<Annotation> notes;
  auto finish = [&](Annotation a) {
    const double w = svg::text_width_estimate(a.label, kSmallFont);
    const double centre = (a.x0 + a.x1) / 2;
    a.label_x = std::clamp(centre - w / 2, g.left, std::max(g.left, g.right - w));
    a.extent0 = std::min(a.x0, a.label_x) - 4;
    a.extent1 = std::max(a.x1, a.label_x + w) + 8;
    notes.push_back(std::move(a));
  };
  for (const Failover& f : tl_.failovers) {
    Annotation a;
    a.x0 = g.x(f.fault_at);
    a.from_node = f.old_leader;
    if (f.new_leader_at && f.failover) {
      a.kind = Annotation::Kind::failover;
      a.x1 = std::max(g.x(*f.new_leader_at), a.x0 + 1);
      a.to_node = f.new_leader;
      a.label = "failover " + short_duration(*f.failover);
      a.tooltip = fmt::format(
          "failover {}: {} at {} took leader {} away, node {} led at {}{}",
          short_duration(*f.failover), fault_word(f.fault), time_text(f.fault_at), f.old_leader,
          f.new_leader, time_text(*f.new_leader_at),
          f.write_outage ? fmt::format("; write outage {}", short_duration(*f.write_outage)) : "");
    } else if (f.ridden_out) {
      a.kind = Annotation::Kind::ridden_out;
      a.x1 = a.x0 + 1;
      a.label = "ridden out";
      a.tooltip = fmt::format("{} at {}: node {} kept leading through it", fault_word(f.fault),
                              time_text(f.fault_at), f.old_leader);
    } else {
      a.kind = Annotation::Kind::unresolved;
      a.x1 = std::max(g.x(Time(tl_.duration)), a.x0 + 1);
      a.label = "no new leader";
      a.tooltip = fmt::format("{} at {} took node {} away; no other node led by the end",
                              fault_word(f.fault), time_text(f.fault_at), f.old_leader);
    }
    c_.used.failover = true;
    finish(std::move(a));
  }
  // Stretches closer together than a label is wide share one bracket: "split-brain 30.3s in
  // 93 episodes" says more than 93 labels stacked over each other.
  const auto& spans = tl_.split_brain;
  for (const auto& [i, j] : split_clusters()) {
    Duration total{0};
    std::set<NodeId> nodes;
    for (std::size_t k = i; k <= j; ++k) {
      total += spans[k].end - spans[k].start;
      nodes.insert(spans[k].nodes.begin(), spans[k].nodes.end());
    }
    Annotation a;
    a.kind = Annotation::Kind::split_brain;
    a.x0 = g.x(spans[i].start);
    a.x1 = std::max(g.x(spans[j].end), a.x0 + 1);
    std::string names;
    for (NodeId node : nodes) names += (names.empty() ? "" : ", ") + std::to_string(node);
    const std::size_t episodes = j - i + 1;
    if (episodes == 1) {
      a.label = "split-brain " + short_duration(total);
      a.tooltip = fmt::format("split-brain {} to {}: nodes {} lead at once",
                              time_text(spans[i].start), time_text(spans[i].end), names);
    } else {
      a.label = fmt::format("split-brain {} in {} episodes", short_duration(total), episodes);
      a.tooltip = fmt::format("{} split-brain episodes between {} and {}, {} in all: nodes {}",
                              episodes, time_text(spans[i].start), time_text(spans[j].end),
                              short_duration(total), names);
    }
    finish(std::move(a));
  }
  std::stable_sort(notes.begin(), notes.end(),
                   [](const Annotation& a, const Annotation& b) { return a.extent0 < b.extent0; });
  return notes;
}

void PanelPainter::paint_annotations(std::string& out, const std::vector<Annotation>& notes,
                                     double top) {
  if (notes.empty()) return;
  out += "<g class=\"annotations\">\n";
  for (const Annotation& a : notes) {
    const std::size_t lane = a.lane.value_or(0);
    const double lane_top = top + static_cast<double>(lane) * kLaneHeight;
    const double by = lane_top + 19;
    const bool alarm = a.kind == Annotation::Kind::split_brain;
    const std::string_view colour = alarm ? kAlarm : kInk;
    const std::string cls = alarm ? "split-brain-label" : "failover";
    fmt::format_to(std::back_inserter(out), "<g class=\"{}\">", cls);
    append_title(out, c_, a.tooltip);
    std::string dash =
        alarm || a.kind == Annotation::Kind::unresolved ? " stroke-dasharray=\"5 3\"" : "";
    if (a.kind == Annotation::Kind::ridden_out) {
      fmt::format_to(std::back_inserter(out),
                     "<path d=\"M{} {}v8\" stroke=\"{}\" stroke-width=\"1.5\"/>", number(a.x0, 2),
                     number(by - 4, 2), colour);
    } else {
      // The bracket: a tick at each end, the line between, an arrowhead where a failover ends.
      fmt::format_to(std::back_inserter(out),
                     "<path d=\"M{0} {1}v8M{0} {2}H{3}M{3} {1}v8\" fill=\"none\" stroke=\"{4}\" "
                     "stroke-width=\"1.5\"{5}/>",
                     number(a.x0, 2), number(by - 4, 2), number(by, 2), number(a.x1, 2), colour,
                     dash);
      if (a.kind == Annotation::Kind::failover && a.x1 - a.x0 >= 8) {
        fmt::format_to(std::back_inserter(out), "<path d=\"M{} {}l-7 -3.5v7z\" fill=\"{}\"/>",
                       number(a.x1, 2), number(by, 2), colour);
      }
    }
    if (a.lane) {
      text(out, a.label_x, lane_top + 11, kSmallFont, "",
           fmt::format("fill=\"{}\" font-weight=\"bold\"", colour), a.label);
    }
    // Guides from a failover's bracket down to the old and the new leader's rows.
    if (a.kind != Annotation::Kind::split_brain) {
      const auto guide = [&](double x, NodeId node) {
        if (node < 0 || static_cast<std::size_t>(node) >= tl_.node_count) return;
        fmt::format_to(std::back_inserter(out),
                       "<path d=\"M{} {}V{}\" stroke=\"{}\" stroke-width=\"1\" "
                       "stroke-dasharray=\"1 2\" stroke-opacity=\"0.8\"/>",
                       number(x, 2), number(by + 4, 2), number(row_centre(node), 2), colour);
      };
      guide(a.x0, a.from_node);
      if (a.kind == Annotation::Kind::failover) guide(a.x1, a.to_node);
    }
    out += "</g>\n";
  }
  out += "</g>\n";
}

// ---- Faults

std::vector<PanelPainter::FaultDraw> PanelPainter::fault_marks() const {
  const Geometry& g = c_.g;
  std::vector<FaultDraw> marks;
  for (const FaultMark& f : tl_.faults) {
    const double x = g.x(f.at);
    const double x_end = f.duration.count() > 0 ? g.x(f.at + f.duration) : x;
    const std::string tooltip = fmt::format("{}: fault #{} {}", time_text(f.at), f.index,
                                            fault_label(f, tl_.header.topology, tl_.replicated()));
    if (!marks.empty() && x - marks.back().x < kMergePx * 2) {
      FaultDraw& m = marks.back();
      ++m.count;
      m.x_end = std::max(m.x_end, x_end);
      m.label = fmt::format("{} faults", m.count);
      m.skipped = m.skipped && f.skipped;
      if (m.count <= 20) m.tooltip += "\n" + tooltip;
      continue;
    }
    FaultDraw d;
    d.x = x;
    d.x_end = x_end;
    d.label = fault_label(f, tl_.header.topology, tl_.replicated());
    d.tooltip = tooltip;
    d.skipped = f.skipped;
    marks.push_back(std::move(d));
  }
  return marks;
}

void PanelPainter::paint_faults(std::string& out, const std::vector<FaultDraw>& faults, double top,
                                double base) {
  const Geometry& g = c_.g;
  c_.used.faults = true;
  out += "<g class=\"faults\">\n";
  fmt::format_to(std::back_inserter(out),
                 "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#bbbbbb\" "
                 "stroke-width=\"1\"/>\n",
                 number(g.left, 2), number(base, 2), number(g.right, 2), number(base, 2));
  for (const FaultDraw& f : faults) {
    if (f.skipped) c_.used.skipped_faults = true;
    out += "<g class=\"fault\">";
    append_title(out, c_, f.tooltip);
    if (f.x_end > f.x + 1) {
      rect(out, c_, f.x, base - 2, f.x_end, 3, "#9a9a9a", "", "");
    }
    fmt::format_to(std::back_inserter(out),
                   "<path d=\"M{} {}l4.5 -8h-9z\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.2\"/>",
                   number(f.x, 2), number(base, 2), f.skipped ? "#ffffff" : kInk, kInk);
    if (f.lane) {
      const double ly = top + static_cast<double>(*f.lane) * kFaultLaneHeight + 10;
      if (*f.lane + 1 < kFaultLanesMax || ly + 2 < base - 8) {
        fmt::format_to(std::back_inserter(out),
                       "<path d=\"M{} {}V{}\" stroke=\"#999999\" stroke-width=\"0.8\"/>",
                       number(f.x, 2), number(ly + 2, 2), number(base - 8, 2));
      }
      text(out, f.label_x, ly, kSmallFont, "", "fill=\"#222222\"", f.label);
    }
    out += "</g>\n";
  }
  out += "</g>\n";
}

}  // namespace electsim::drawing::timeline_parts
