// The timeline SVG's patterns and legend (drawing/timeline_parts.hpp): each symbol the picture
// used, explained once, and each partition's sides.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "drawing/timeline_parts.hpp"

namespace electsim::drawing::timeline_parts {

using svg::number;

// ---- Whole document

std::string defs(const std::string& p) {
  std::string out = "<defs>\n";
  fmt::format_to(
      std::back_inserter(out),
      "<pattern id=\"{0}-cand\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#ffffff\"/>"
      "<rect width=\"1.7\" height=\"5\" fill=\"#555555\"/></pattern>\n"
      "<pattern id=\"{0}-down\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      "<rect width=\"6\" height=\"6\" fill=\"#3d3d3d\"/><path d=\"M0 0L6 6M6 0L0 6\" "
      "stroke=\"#9c9c9c\" stroke-width=\"0.9\"/></pattern>\n"
      "<pattern id=\"{0}-pause\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(-45)\"><rect width=\"2.2\" height=\"6\" "
      "fill=\"#000000\" fill-opacity=\"0.45\"/></pattern>\n",
      p);
  for (std::size_t i = 0; i < kSides.size(); ++i) {
    fmt::format_to(std::back_inserter(out),
                   "<pattern id=\"{}-side{}\" width=\"6\" height=\"6\" "
                   "patternUnits=\"userSpaceOnUse\"><rect width=\"6\" height=\"6\" fill=\"{}\"/>{}"
                   "</pattern>\n",
                   p, i, kSides[i].fill, kSides[i].shape);
  }
  out += "</defs>\n";
  return out;
}

// One legend entry: a sample (drawn in a 28x14 box at x, y) and its text.
struct LegendEntry {
  std::string sample;
  std::string label;
};

std::vector<LegendEntry> legend_entries(const Context& c) {
  const Features& u = c.used;
  std::vector<LegendEntry> e;
  // Samples are drawn at the origin and moved into place with a translate.
  // The sample names an epoch of this picture, in that epoch's colour (the first epoch's slot).
  if (u.legend_epoch) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"1\" width=\"28\" height=\"12\" fill=\"{}\"/>"
                             "<text x=\"3\" y=\"10.5\" font-size=\"9\" fill=\"{}\" "
                             "font-weight=\"bold\">L e{}</text>",
                             kEpochFill[0], kEpochInk[0], *u.legend_epoch),
                 fmt::format("leader in epoch {} (each epoch its own colour)", *u.legend_epoch)});
  }
  if (u.candidate) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"4\" width=\"28\" height=\"6\" fill=\"{}\" "
                             "stroke=\"#555555\" stroke-width=\"0.8\"/>",
                             c.pattern("cand")),
                 "candidate"});
  }
  if (u.follower_known) {
    e.push_back({fmt::format("<line x1=\"0\" y1=\"7\" x2=\"28\" y2=\"7\" stroke=\"{}\" "
                             "stroke-width=\"2\"/>",
                             kFollower),
                 "follower (knows a leader)"});
  }
  if (u.follower_unknown) {
    e.push_back({fmt::format("<line x1=\"0\" y1=\"7\" x2=\"28\" y2=\"7\" stroke=\"{}\" "
                             "stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>",
                             kFollower),
                 "follower, no leader known"});
  }
  if (u.down) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"0\" width=\"28\" height=\"14\" fill=\"{}\"/>",
                             c.pattern("down")),
                 "down (crashed or stopped)"});
  }
  if (u.pause) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"0\" width=\"28\" height=\"14\" fill=\"{}\"/>"
                             "<rect x=\"0\" y=\"0\" width=\"28\" height=\"14\" fill=\"#ffffff\" "
                             "fill-opacity=\"0.45\" stroke=\"#333333\" stroke-width=\"0.8\" "
                             "stroke-dasharray=\"3 2\"/><rect x=\"0\" y=\"0\" width=\"28\" "
                             "height=\"14\" fill=\"{}\"/>",
                             kEpochFill[kLegendSlot], c.pattern("pause")),
                 "paused (GC or VM stall)"});
  }
  if (u.partition) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"4\" width=\"13\" height=\"7\" fill=\"{}\"/>"
                             "<rect x=\"15\" y=\"4\" width=\"13\" height=\"7\" fill=\"{}\"/>"
                             "<text x=\"4\" y=\"10.5\" font-size=\"7.5\" font-weight=\"bold\" "
                             "fill=\"{}\">A</text><text x=\"19\" y=\"10.5\" font-size=\"7.5\" "
                             "font-weight=\"bold\" fill=\"{}\">B</text>",
                             c.pattern("side0"), c.pattern("side1"), kSides[0].ink, kSides[1].ink),
                 "partition side (listed below)"});
  }
  if (u.split_brain) {
    e.push_back({fmt::format("<rect x=\"1\" y=\"1\" width=\"26\" height=\"12\" fill=\"{0}\" "
                             "fill-opacity=\"0.13\" stroke=\"{0}\" stroke-width=\"1.4\" "
                             "stroke-dasharray=\"5 3\"/>",
                             kAlarm),
                 "split-brain: 2+ leaders at once"});
  }
  if (u.failover) {
    e.push_back({fmt::format("<path d=\"M1 3v8M1 7H27\" fill=\"none\" stroke=\"{0}\" "
                             "stroke-width=\"1.5\"/><path d=\"M27 7l-7 -3.5v7z\" fill=\"{0}\"/>",
                             kInk),
                 "failover: fault to next leader"});
  }
  if (u.store) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"2\" width=\"28\" height=\"10\" fill=\"{}\"/>",
                             kEpochFill[kLegendSlot]),
                 "leader key held in the store"});
  }
  if (u.renewals) {
    e.push_back({"<path d=\"M4 2v5M12 2v5M20 2v5\" stroke=\"#333333\" stroke-width=\"1\"/>",
                 "lease renewal"});
  }
  if (u.draining) {
    e.push_back({fmt::format("<path d=\"M0 2L28 12L0 12Z\" fill=\"{0}\" fill-opacity=\"0.55\" "
                             "stroke=\"{0}\" stroke-width=\"0.8\"/>",
                             kEpochFill[kLegendSlot]),
                 "lease draining after last renewal"});
  }
  if (u.expired) {
    e.push_back(
        {fmt::format("<path d=\"M11 4l6 6m0 -6l-6 6\" stroke=\"{}\" stroke-width=\"2\"/>", kInk),
         "lease expired, key deleted"});
  }
  if (u.legend_term) {
    e.push_back({fmt::format("<rect x=\"0\" y=\"1\" width=\"28\" height=\"12\" fill=\"{}\"/>"
                             "<text x=\"3\" y=\"10.5\" font-size=\"9\" fill=\"{}\" "
                             "font-weight=\"bold\">L t{}</text>",
                             kEpochFill[0], kEpochInk[0], *u.legend_term),
                 fmt::format("store member leading in term {} (each term its own colour)",
                             *u.legend_term)});
  }
  if (u.store_leader) {
    e.push_back({fmt::format("<path d=\"M14 3V14\" stroke=\"{0}\" stroke-width=\"1\" "
                             "stroke-dasharray=\"2 2\"/><path d=\"M14 9l-4 -6h8z\" fill=\"{0}\"/>",
                             kInk),
                 "store leader change: the new leader and its term"});
  }
  if (u.sink) {
    e.push_back({fmt::format("<path d=\"M6 3v8M11 3v8M16 3v8M21 3v8\" stroke=\"{}\" "
                             "stroke-width=\"1.2\"/>",
                             kEpochFill[kLegendSlot]),
                 "write accepted (colour: token)"});
  }
  if (u.rejected) {
    e.push_back({fmt::format("<path d=\"M10 3l8 8m0 -8l-8 8\" stroke=\"{}\" stroke-width=\"2.2\"/>",
                             kAlarm),
                 "write rejected (t = token)"});
  }
  if (u.stale) {
    e.push_back(
        {fmt::format("<circle cx=\"14\" cy=\"7\" r=\"5\" fill=\"none\" stroke=\"{0}\" "
                     "stroke-width=\"2\"/><circle cx=\"14\" cy=\"7\" r=\"1.6\" fill=\"{0}\"/>",
                     kAlarm),
         "stale write accepted (an overwrite if over newer data: corruption)"});
  }
  if (u.faults) {
    e.push_back({fmt::format("<rect x=\"6\" y=\"10\" width=\"22\" height=\"3\" fill=\"#9a9a9a\"/>"
                             "<path d=\"M6 12l4.5 -8h-9z\" fill=\"{0}\" stroke=\"{0}\" "
                             "stroke-width=\"1.2\"/>",
                             kInk),
                 "fault and its duration"});
  }
  if (u.skipped_faults) {
    e.push_back({fmt::format("<path d=\"M14 12l4.5 -8h-9z\" fill=\"#ffffff\" stroke=\"{}\" "
                             "stroke-width=\"1.2\"/>",
                             kInk),
                 "fault skipped (no target)"});
  }
  if (u.merged) {
    e.push_back(
        {fmt::format("<rect x=\"0\" y=\"2\" width=\"28\" height=\"10\" fill=\"{}\"/>", kMergedFill),
         "spans under a pixel, merged"});
  }
  if (u.run_ended) {
    e.push_back(
        {"<rect x=\"0\" y=\"0\" width=\"28\" height=\"14\" fill=\"#f0f0f0\" "
         "stroke=\"#cccccc\"/>",
         "after this run ended"});
  }
  return e;
}

// The endpoints of a partition in the order its legend lists them: nodes, the store's members,
// the sink.
std::vector<std::size_t> legend_order(const PartitionSpan& p) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i <= p.nodes && i < p.side_of.size(); ++i) order.push_back(i);
  for (std::size_t i = p.nodes + 2; i < p.side_of.size(); ++i) order.push_back(i);
  if (p.nodes + 1 < p.side_of.size()) order.push_back(p.nodes + 1);
  return order;
}

double paint_legend(std::string& out, const Context& c, double top,
                    const std::vector<const Timeline*>& timelines,
                    const std::vector<std::string>& names) {
  const double width = c.style.width_px;
  double y = top;
  out += "<g class=\"legend\">\n";
  // Entries in a grid of equal columns, filled row by row, as many columns as the widest fits.
  constexpr double kRow = 20;
  const std::vector<LegendEntry> entries = legend_entries(c);
  double column = 0;
  for (const LegendEntry& e : entries) {
    column = std::max(column, 28 + 6 + svg::text_width_estimate(e.label, 11) + 18);
  }
  const auto columns = static_cast<std::size_t>(
      std::max(1.0, std::floor((width - 2 * kSide) / std::max(column, 1.0))));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const double x = kSide + static_cast<double>(i % columns) * column;
    const double ey = y + static_cast<double>(i / columns) * kRow;
    fmt::format_to(std::back_inserter(out), "<g transform=\"translate({} {})\">{}</g>",
                   number(x, 2), number(ey, 2), entries[i].sample);
    text(out, x + 34, ey + 11, 11, "", "fill=\"#222222\"", entries[i].label);
  }
  y += static_cast<double>((entries.size() + columns - 1) / columns) * kRow;

  // Partition sides, spelled out.
  struct Listed {
    std::string panel;
    const PartitionSpan* span;
    const sim::Topology* topology;
  };
  std::vector<Listed> spans;
  for (std::size_t t = 0; t < timelines.size(); ++t) {
    for (const PartitionSpan& p : timelines[t]->partitions) {
      spans.push_back({names[t], &p, &timelines[t]->header.topology});
    }
  }
  if (!spans.empty()) y += 4;
  for (std::size_t i = 0; i < spans.size() && i < kPartitionLegendMax; ++i) {
    const PartitionSpan& p = *spans[i].span;
    std::string line = spans[i].panel.empty() ? "" : spans[i].panel + ": ";
    line +=
        fmt::format("partition {} to {}:", svg::duration_label(static_cast<double>(p.start.ns)),
                    p.open_at_end ? "the end" : svg::duration_label(static_cast<double>(p.end.ns)));
    double lx = kSide;
    text(out, lx, y + 11, 11, "", "fill=\"#222222\"", line);
    lx += svg::text_width_estimate(line, 11) + 4;
    for (std::size_t s = 0; s < p.side_count && lx < width - kSide - 40; ++s) {
      std::vector<std::string> members;
      for (const std::size_t e : legend_order(p)) {
        if (p.side_of[e] != static_cast<int>(s)) continue;
        const sim::Endpoint endpoint = p.endpoint_at(e);
        members.push_back(endpoint >= 0 ? std::to_string(endpoint)
                                        : short_endpoint(*spans[i].topology, endpoint));
      }
      std::string who;
      for (const std::string& m : members) who += (who.empty() ? "" : ",") + m;
      if (who.size() > 40) who = who.substr(0, 38) + "\xE2\x80\xA6";
      const int side = static_cast<int>(s);
      rect(out, c, lx, y + 2, lx + 14, 11, c.pattern(fmt::format("side{}", s % kSides.size())),
           fmt::format(" stroke=\"{}\" stroke-width=\"0.6\"", side_style(side).ink), "");
      text(out, lx + 7, y + 10.5, 8.5, "middle",
           fmt::format("font-weight=\"bold\" fill=\"{}\" {}", side_style(side).ink, kHalo),
           side_letter(side));
      const std::string entry = fmt::format("= {}", who);
      text(out, lx + 18, y + 11, 11, "", "fill=\"#222222\"", entry);
      lx += 18 + svg::text_width_estimate(entry, 11) + 14;
    }
    y += 17;
  }
  if (spans.size() > kPartitionLegendMax) {
    text(out, kSide, y + 11, 11, "", "fill=\"#555555\"",
         fmt::format("\xE2\x80\xA6 and {} more partition changes (hover a strip for its sides)",
                     spans.size() - kPartitionLegendMax));
    y += 17;
  }
  out += "</g>\n";
  return y;
}

}  // namespace electsim::drawing::timeline_parts
