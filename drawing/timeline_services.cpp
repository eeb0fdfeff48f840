// The timeline's service rows (drawing/timeline_painter.hpp): the store and its leader key's
// holds and expiries, a replicated store's members and leaders, the servers with rows of their
// own and the sink's writes.
#include "drawing/timeline_painter.hpp"

namespace electsim::drawing::timeline_parts {

// ---- Store and sink rows

void PanelPainter::service_label(std::string& out, double top, double bar, std::string_view name,
                                 std::string_view note) {
  const double base = top + bar / 2 + 4 - (note.empty() ? 0 : 5);
  text(out, c_.g.left - 8, base, kLabelFont, "end", "fill=\"#111111\" font-style=\"italic\"",
       std::string(name));
  if (!note.empty())
    text(out, c_.g.left - 8, base + 11, 9, "end", "fill=\"#666666\"", std::string(note));
}

void PanelPainter::paint_store(std::string& out) {
  const Geometry& g = c_.g;
  const double top = store_top_;
  const double bar = std::max(rows_.bar, 18.0);
  c_.used.store = true;
  out += "<g class=\"store-row\">\n";
  std::string key = tl_.header.leader_key.value_or("");
  if (svg::text_width_estimate(key, 9) > g.left - kSide - 8) key = "leader key";
  service_label(out, top, bar, "store", key);
  const double h = std::round(bar * 0.72);
  const double y = top + (bar - h) / 2;
  // Between holds nobody has the key: a thin line.
  fmt::format_to(std::back_inserter(out),
                 "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#b0b0b0\" "
                 "stroke-width=\"1\"/>\n",
                 number(g.left, 2), number(top + bar / 2, 2), number(g.x(Time(tl_.duration)), 2),
                 number(top + bar / 2, 2));
  const auto& holds = tl_.leader_key;
  merge_narrow(
      holds.size(), [&](std::size_t i) { return xs(holds[i].start, holds[i].end); },
      [&](std::size_t i) { paint_hold(out, holds[i], y, h); },
      [&](double x0, double x1, std::size_t count) {
        c_.used.merged = true;
        rect(out, c_, x0, y, std::max(x1, x0 + 1), h, kMergedFill, " class=\"hold merged\"",
             fmt::format("{} short holds of the leader key", count));
      });
  paint_expiries(out, y, h);
  std::vector<const PauseSpan*> pauses;
  for (const PauseSpan& p : tl_.store_pauses) pauses.push_back(&p);
  paint_pauses(out, pauses, top, bar, "store pause");
  // A replicated store's member 0 has the store's address; its side is drawn on its own row.
  if (rows_.strip > 0 && !has_members_) {
    paint_strip(out, tl_.store_endpoint(), top + bar + 0.5, rows_.strip);
  }
  out += "</g>\n";
}

void PanelPainter::paint_hold(std::string& out, const LeaseHold& hold, double y, double h) {
  const Geometry& g = c_.g;
  const auto [x0, x1raw] = xs(hold.start, hold.end);
  const double x1 = std::max(x1raw, x0 + 1);
  const std::optional<Epoch> epoch = hold_epoch(hold);
  const std::string_view fill = epoch ? kEpochFill[slot_of(*epoch)] : kMergedFill;
  const std::string_view ink = epoch ? kEpochInk[slot_of(*epoch)] : "#ffffff";
  const std::string who = hold.holder >= 0 ? fmt::format("node {}", hold.holder) : "?";
  // The epoch the holder announced (its fencing token), as every other row names it; the
  // store's lease id is no epoch and would read as one here.
  const std::string label = epoch ? fmt::format("{} (epoch {})", who, *epoch) : who;

  // Full while renewed; after the last renewal the lease drains toward zero at its expiry (the
  // store's verdict when the store expired it, else last renewal + TTL). A hold taken over
  // before that shows how much of its lease was left; one that outlived its TTL (followers
  // judge expiry, the record stays) continues as a dashed outline.
  const Time last = hold.last_renewal();
  std::optional<Time> zero_at;
  if (hold.ended_by == HoldEnd::expired) {
    zero_at = hold.end;
  } else if (tl_.lease_ttl && tl_.lease_ttl->count() > 0) {
    zero_at = last + *tl_.lease_ttl;
  }
  // A plain flag and value, not std::optional: GCC 12 at -O3 takes the optional's value for
  // possibly uninitialised on the paths below (-Wmaybe-uninitialized).
  bool draws_drain = false;
  Time drain_end{};
  if (zero_at && *zero_at > last &&
      (hold.ended_by == HoldEnd::expired || hold.end - last > 3 * renewal_gap(hold))) {
    drain_end = std::min(hold.end, *zero_at);
    draws_drain = g.x(drain_end) - g.x(last) >= 1;
  }
  const double full_end = draws_drain ? g.x(last) : x1;
  const std::string tooltip =
      fmt::format("leader key held by {}{}, {} to {} ({}); {} renewal{}{}", who,
                  hold.lease != sim::kNoLease ? fmt::format(" under lease {}", hold.lease) : "",
                  time_text(hold.start), time_text(hold.end), hold_end_name(hold.ended_by),
                  hold.renewals.size(), hold.renewals.size() == 1 ? "" : "s",
                  hold.renewals.empty() ? "" : ", last at " + time_text(last));
  fmt::format_to(std::back_inserter(out), "<g class=\"hold\" data-holder=\"{}\" data-lease=\"{}\">",
                 hold.holder, hold.lease);
  rect(out, c_, x0, y, std::max(full_end, x0 + (draws_drain ? 0.0 : 1.0)), h, fill, "", tooltip);
  if (draws_drain) {
    c_.used.draining = true;
    const double dx0 = g.x(last);
    const double dx1 = std::max(g.x(drain_end), dx0 + 1);
    const double left = static_cast<double>((*zero_at - drain_end).count()) /
                        static_cast<double>((*zero_at - last).count());
    fmt::format_to(std::back_inserter(out),
                   "<path class=\"draining\" d=\"M{0} {1}L{2} {3}L{2} {4}L{0} {4}Z\" fill=\"{5}\" "
                   "fill-opacity=\"0.55\" stroke=\"{5}\" stroke-width=\"0.8\">",
                   number(dx0, 2), number(y, 2), number(dx1, 2), number(y + h * (1 - left), 2),
                   number(y + h, 2), fill);
    std::string what;
    if (hold.ended_by == HoldEnd::expired) {
      what = "the store expired it at " + time_text(hold.end);
    } else if (drain_end < *zero_at) {
      what = fmt::format("{} at {} with {} of its {} TTL left", hold_end_name(hold.ended_by),
                         time_text(hold.end), short_duration(*zero_at - drain_end),
                         short_duration(*tl_.lease_ttl));
    } else {
      what = "its TTL ran out at " + time_text(*zero_at);
    }
    append_title(
        out, c_,
        fmt::format("lease draining since the last renewal at {}; {}", time_text(last), what));
    out += "</path>";
    if (drain_end < hold.end) {
      // Followers judge the record expired, but it stays in the store until overwritten.
      rect(out, c_, dx1, y + h * 0.25, x1, h * 0.5, "none",
           fmt::format(" stroke=\"{}\" stroke-width=\"1\" stroke-dasharray=\"3 2\"", fill),
           "the record outlived its TTL and stayed in the store until it was replaced");
    }
  }
  // Renewal ticks above the bar, when they are far enough apart to be seen one by one.
  if (!hold.renewals.empty()) {
    const double spread = g.x(hold.renewals.back()) - g.x(hold.renewals.front());
    if (hold.renewals.size() == 1 || spread / static_cast<double>(hold.renewals.size()) >= 3) {
      c_.used.renewals = true;
      std::string d;
      double last_x = -1e9;
      for (Time r : hold.renewals) {
        const double x = g.x(r);
        if (x - last_x < 2) continue;
        last_x = x;
        d += fmt::format("M{} {}v{}", number(x, 2), number(y - 3, 2), number(4, 2));
      }
      fmt::format_to(std::back_inserter(out),
                     "<path class=\"renewals\" d=\"{}\" stroke=\"#333333\" stroke-width=\"1\"/>",
                     d);
    }
  }
  const double font = std::min(11.0, h - 2);
  const double room = full_end - x0;
  // The label starts clear of an expiry mark the previous hold may have left at this x.
  for (const std::string& l : {label, who, fmt::format("n{}", hold.holder)}) {
    if (font >= 7 && svg::text_width_estimate(l, font) + 10 <= room) {
      text(out, x0 + 6, y + h / 2 + font * 0.36, font, "",
           fmt::format("fill=\"{}\" font-weight=\"bold\"", ink), l);
      break;
    }
  }
  out += "</g>\n";
}

void PanelPainter::paint_expiries(std::string& out, double y, double h) {
  const Geometry& g = c_.g;
  const auto& holds = tl_.leader_key;
  double last_x = -1e9;
  for (std::size_t i = 0; i < holds.size(); ++i) {
    if (holds[i].ended_by != HoldEnd::expired) continue;
    const double ex = g.x(holds[i].end);
    if (ex - last_x < 4) continue;
    last_x = ex;
    c_.used.expired = true;
    fmt::format_to(std::back_inserter(out),
                   "<g class=\"expiry\"><path d=\"M{0} {1}l7 7m0 -7l-7 7\" stroke=\"#ffffff\" "
                   "stroke-width=\"4\"/><path d=\"M{0} {1}l7 7m0 -7l-7 7\" stroke=\"{2}\" "
                   "stroke-width=\"2\"/>",
                   number(ex - 3.5, 2), number(y + h / 2 - 3.5, 2), kInk);
    append_title(out, c_,
                 fmt::format("{}: the store expired lease {} of node {}", time_text(holds[i].end),
                             holds[i].lease, holds[i].holder));
    const double next_x = i + 1 < holds.size() ? g.x(holds[i + 1].start) : g.right;
    const double w = svg::text_width_estimate("expired", kSmallFont);
    const double room_before = ex - g.x(holds[i].last_renewal());
    const std::string attributes = std::string("fill=\"#111111\" ") + std::string(kHalo);
    if (h >= 12 && next_x - ex >= w + 10) {
      text(out, ex + 6, y + h / 2 + 4, kSmallFont, "", attributes, "expired");
    } else if (h >= 12 && room_before >= w + 10) {
      text(out, ex - 6, y + h / 2 + 4, kSmallFont, "end", attributes, "expired");
    }
    out += "</g>\n";
  }
}

// ---- A replicated store's members

void PanelPainter::paint_members(std::string& out) {
  const std::size_t count = tl_.store_members;
  auto index = [&](sim::Endpoint e) -> std::optional<std::size_t> {
    const std::int32_t m = tl_.header.topology.store_member_index(e);
    if (m < 0 || static_cast<std::size_t>(m) >= count) return std::nullopt;
    return static_cast<std::size_t>(m);
  };
  std::vector<std::vector<const BeliefSpan*>> roles(count);
  for (const BeliefSpan& b : tl_.member_roles) {
    if (const auto m = index(b.node)) roles[*m].push_back(&b);
  }
  std::vector<std::vector<const DownSpan*>> downs(count);
  for (const DownSpan& d : tl_.member_downs) {
    if (const auto m = index(d.node)) downs[*m].push_back(&d);
  }
  std::vector<std::vector<const PauseSpan*>> pauses(count);
  for (const PauseSpan& p : tl_.member_pauses) {
    if (const auto m = index(p.endpoint)) pauses[*m].push_back(&p);
  }
  if (!c_.used.legend_term && !terms_.empty()) c_.used.legend_term = terms_.front();
  const double bar = member_bar();
  out += "<g class=\"store-members\">\n";
  for (std::size_t m = 0; m < count; ++m) {
    const double top = member_top(m);
    const sim::Endpoint endpoint = tl_.header.topology.store_member(m);
    const std::string who = fmt::format("store:{}", m);
    fmt::format_to(std::back_inserter(out), "<g class=\"member-row\" data-member=\"{}\">\n", m);
    service_label(out, top, bar, who, "");
    paint_beliefs(out, roles[m], top, RoleRow{who, true, bar});
    paint_downs(out, downs[m], top, bar, who);
    paint_pauses(out, pauses[m], top, bar, "pause");
    if (rows_.strip > 0) paint_strip(out, endpoint, top + bar + 0.5, rows_.strip);
    out += "</g>\n";
  }
  paint_store_leaders(out);
  out += "</g>\n";
}

// ---- Servers with rows of their own

void PanelPainter::paint_servers(std::string& out) {
  const std::vector<sim::Endpoint>& rows = tl_.server_rows;
  auto row_of = [&](sim::Endpoint e) -> std::optional<std::size_t> {
    const auto it = std::find(rows.begin(), rows.end(), e);
    if (it == rows.end()) return std::nullopt;
    return static_cast<std::size_t>(it - rows.begin());
  };
  std::vector<std::vector<const DownSpan*>> downs(rows.size());
  for (const DownSpan& d : tl_.server_downs) {
    if (const auto r = row_of(d.node)) downs[*r].push_back(&d);
  }
  std::vector<std::vector<const PauseSpan*>> pauses(rows.size());
  for (const PauseSpan& p : tl_.server_pauses) {
    if (const auto r = row_of(p.endpoint)) pauses[*r].push_back(&p);
  }
  const double bar = member_bar();
  out += "<g class=\"servers\">\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double top = server_top(r);
    const std::string who = tl_.header.topology.name_of(rows[r]);
    out += "<g class=\"server-row\" data-server=\"";
    out += svg::escape(who);
    out += "\">\n";
    service_label(out, top, bar, who, "");
    paint_downs(out, downs[r], top, bar, who);
    paint_pauses(out, pauses[r], top, bar, "pause");
    if (rows_.strip > 0) paint_strip(out, rows[r], top + bar + 0.5, rows_.strip);
    out += "</g>\n";
  }
  out += "</g>\n";
}

void PanelPainter::paint_store_leaders(std::string& out) {
  const auto& marks = tl_.store_leaders;
  if (marks.empty()) return;
  c_.used.store_leader = true;
  const Geometry& g = c_.g;
  const double lane_top = members_top_;
  const double base = lane_top + leader_lane();  // the markers' tips
  constexpr std::size_t kTooltipLinesMax = 20;
  LanePacker labels(1);
  out += "<g class=\"store-leaders\">\n";
  std::size_t i = 0;
  while (i < marks.size()) {
    const double x = g.x(marks[i].at);
    std::size_t j = i;
    while (j + 1 < marks.size() && g.x(marks[j + 1].at) - x < 3) ++j;
    const StoreLeaderMark& last = marks[j];  // the leader the cluster ends with
    const std::string to = server_name(tl_.header.topology, last.member);
    std::string tooltip;
    const std::size_t changes = j - i + 1;
    for (std::size_t k = i; k <= j && k < i + kTooltipLinesMax; ++k) {
      const StoreLeaderMark& mark = marks[k];
      if (!tooltip.empty()) tooltip += "\n";
      tooltip +=
          fmt::format("{}: store leader \xE2\x86\x92 {}, term {}{}", time_text(mark.at),
                      server_name(tl_.header.topology, mark.member), mark.term,
                      mark.previous == sim::kNoNode
                          ? " (the first)"
                          : " (was " + server_name(tl_.header.topology, mark.previous) + ")");
    }
    if (changes > kTooltipLinesMax) {
      tooltip += fmt::format("\n\xE2\x80\xA6 and {} more", changes - kTooltipLinesMax);
    }
    fmt::format_to(std::back_inserter(out),
                   "<g class=\"store-leader\" data-member=\"{}\" data-term=\"{}\">",
                   tl_.header.topology.store_member_index(last.member), last.term);
    append_title(out, c_, tooltip);
    const std::int32_t row = tl_.header.topology.store_member_index(last.member);
    if (row >= 0 && static_cast<std::size_t>(row) < tl_.store_members) {
      fmt::format_to(std::back_inserter(out),
                     "<path d=\"M{} {}V{}\" stroke=\"{}\" stroke-width=\"1\" "
                     "stroke-dasharray=\"2 2\" stroke-opacity=\"0.8\"/>",
                     number(x, 2), number(base, 2),
                     number(member_top(static_cast<std::size_t>(row)) + member_bar() / 2, 2), kInk);
    }
    fmt::format_to(std::back_inserter(out), "<path d=\"M{} {}l-4 -6h8z\" fill=\"{}\"/>",
                   number(x, 2), number(base, 2), kInk);
    std::vector<std::string> candidates;
    if (changes == 1) {
      candidates = {fmt::format("store leader \xE2\x86\x92 {}, term {}", to, last.term),
                    fmt::format("\xE2\x86\x92 {} t{}", to, last.term)};
    } else {
      candidates = {fmt::format("{} store leader changes", changes),
                    fmt::format("{} changes", changes)};
    }
    for (const std::string& label : candidates) {
      const double w = svg::text_width_estimate(label, kSmallFont);
      const bool after = x + 6 + w <= g.right;
      const double x0 = after ? x + 6 : x - 6 - w;
      if (x0 < g.left || !labels.place(x0, x0 + w + 6)) continue;
      text(out, after ? x0 : x - 6, lane_top + 10, kSmallFont, after ? "" : "end",
           fmt::format("fill=\"{}\" {}", kInk, kHalo), label);
      break;
    }
    out += "</g>\n";
    i = j + 1;
  }
  out += "</g>\n";
}

void PanelPainter::paint_sink(std::string& out) {
  const Geometry& g = c_.g;
  const double top = sink_top_;
  const double bar = std::max(rows_.bar, 18.0);
  c_.used.sink = true;
  out += "<g class=\"sink-row\">\n";
  service_label(out, top, bar, "sink", "writes");
  const double mid = top + bar / 2;
  const double tick_h = std::round(bar * 0.5);

  // Accepted writes: one tick per pixel column and token colour.
  std::string ticks;
  std::optional<std::pair<long, std::size_t>> last_column;
  for (const SinkWriteMark& w : tl_.writes) {
    if (!w.accepted || w.stale) continue;
    const double x = g.x(w.at);
    const long column = std::lround(std::floor(x));
    const std::size_t slot = slot_of(w.token);
    if (last_column && last_column->first == column && last_column->second == slot) continue;
    last_column = std::make_pair(column, slot);
    fmt::format_to(std::back_inserter(ticks),
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>",
                   number(x, 2), number(mid - tick_h / 2, 2), number(mid + tick_h / 2, 2),
                   kEpochFill[slot]);
  }
  if (!ticks.empty()) {
    fmt::format_to(std::back_inserter(out),
                   "<g class=\"writes-accepted\" stroke-width=\"1.2\">{}</g>\n", ticks);
  }

  // Rejected and stale-accepted writes: marks with labels where they fit.
  LanePacker labels(1);
  std::string texts;
  double last_stale = -1e9;
  double last_rejected = -1e9;
  for (const SinkWriteMark& w : tl_.writes) {
    if (w.accepted && !w.stale && !w.overwrite) continue;
    const double x = g.x(w.at);
    double& last_mark = w.accepted ? last_stale : last_rejected;
    if (x - last_mark < 2) continue;  // one mark of a kind per couple of pixels
    last_mark = x;
    const std::string tooltip = fmt::format(
        "{}: write by {} with token {} {}{}", time_text(w.at),
        node_name(tl_.header.topology, w.writer), w.token, w.accepted ? "accepted" : "rejected",
        w.overwrite ? " over newer data: an overwrite, corruption"
        : w.stale   ? " (stale: a newer epoch had been announced)"
                    : "");
    if (w.accepted) {
      c_.used.stale = true;
      fmt::format_to(std::back_inserter(out),
                     "<g class=\"write-stale\"><circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"none\" "
                     "stroke=\"{}\" stroke-width=\"2\"/><circle cx=\"{}\" cy=\"{}\" r=\"1.6\" "
                     "fill=\"{}\"/>",
                     number(x, 2), number(mid, 2), kAlarm, number(x, 2), number(mid, 2), kAlarm);
      append_title(out, c_, tooltip);
      mark_label(texts, labels, x, mid,
                 fmt::format("{} t{}", w.overwrite ? "overwrite" : "stale", w.token));
      out += "</g>\n";
    } else {
      c_.used.rejected = true;
      fmt::format_to(std::back_inserter(out),
                     "<g class=\"write-rejected\"><path d=\"M{} {}l8 8m0 -8l-8 8\" stroke=\"{}\" "
                     "stroke-width=\"2.2\"/>",
                     number(x - 4, 2), number(mid - 4, 2), kAlarm);
      append_title(out, c_, tooltip);
      mark_label(texts, labels, x, mid, fmt::format("rejected t{}", w.token));
      out += "</g>\n";
    }
  }
  out += texts;  // labels over every mark, so later marks never hide them
  if (rows_.strip > 0) paint_strip(out, tl_.sink_endpoint(), top + bar + 0.5, rows_.strip);
  out += "</g>\n";
}

void PanelPainter::mark_label(std::string& out, LanePacker& labels, double x, double mid,
                              const std::string& label) {
  const double lw = svg::text_width_estimate(label, kSmallFont);
  const bool after = x + 9 + lw <= c_.g.right;
  const double x0 = after ? x + 7 : x - 9 - lw;
  if (!labels.place(x0, x0 + lw + 4)) return;
  text(out, after ? x + 8 : x - 8, mid + 4, kSmallFont, after ? "" : "end",
       fmt::format("fill=\"{}\" font-weight=\"bold\" {}", kAlarm, kHalo), label);
}

}  // namespace electsim::drawing::timeline_parts
