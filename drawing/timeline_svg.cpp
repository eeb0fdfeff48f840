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
#include "drawing/timeline_parts.hpp"
#include "sim/assert.hpp"

namespace electsim::drawing {

using analysis::Failover;
using analysis::TraceHeader;

namespace {

using namespace timeline_parts;

// ---- One panel

struct PanelInput {
  const Timeline* tl = nullptr;
  std::string heading;
  bool big_heading = true;
};

struct RowGeometry {
  double pitch = 0;  // from one row's top to the next
  double bar = 0;    // height of the bar area
  double strip = 0;  // partition strip under the bar area
  double label_font = kLabelFont;
  std::size_t label_every = 1;
};

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
struct BarShape {
  double leader_y, leader_h, cand_y, cand_h, line_y;
};
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

class PanelPainter {
 public:
  PanelPainter(Context& c, const PanelInput& in, std::size_t panel_index)
      : c_(c), tl_(*in.tl), in_(in), index_(panel_index) {}

  // Draws the panel from `top`; returns the y just below it.
  double paint(std::string& out, double top, const std::vector<svg::Tick>& ticks) {
    const Geometry& g = c_.g;
    const std::size_t n = tl_.node_count;
    has_store_ = tl_.header.leader_key.has_value() || !tl_.leader_key.empty() ||
                 !tl_.store_pauses.empty() || touches(sim::kStoreEndpoint);
    has_sink_ = !tl_.writes.empty() || touches(sim::kSinkEndpoint);
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
      rect(out, c_, g.left, sink_top_ - 1, g.right, service_bar + rows_.strip + 2, "#f7f2ea", "",
           "");
    }
    for (std::size_t m = 0; has_members_ && m < tl_.store_members; m += 2) {
      rect(out, c_, g.left, member_top(m) - 1, g.right, member_bar() + rows_.strip + 2, "#edf2f7",
           "", "");
    }
    for (std::size_t r = 0; r < tl_.server_rows.size(); r += 2) {
      rect(out, c_, g.left, server_top(r) - 1, g.right, member_bar() + rows_.strip + 2, "#eef3ee",
           "", "");
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

 private:
  struct Annotation {
    enum class Kind { failover, ridden_out, unresolved, split_brain } kind = Kind::failover;
    double x0 = 0, x1 = 0;            // the bracket
    double extent0 = 0, extent1 = 0;  // bracket and label together, for packing
    double label_x = 0;
    std::string label;
    std::string tooltip;
    std::optional<std::size_t> lane;
    NodeId from_node = sim::kNoNode;  // failover guides: old leader's row
    NodeId to_node = sim::kNoNode;    // and new leader's row
  };

  struct FaultDraw {
    double x = 0;
    double x_end = 0;  // end of its duration (== x without one)
    std::string label;
    std::string tooltip;
    bool skipped = false;
    std::size_t count = 1;
    double label_x = 0;
    std::optional<std::size_t> lane;
  };

  double service_pitch() const { return std::max(rows_.bar, 18.0) + rows_.strip + 5; }

  // A replicated store's member rows: a lane for the leader changes' labels, then a row each.
  double member_bar() const { return std::clamp(rows_.bar, 14.0, 20.0); }
  double member_pitch() const { return member_bar() + rows_.strip + 4; }
  double leader_lane() const { return tl_.store_leaders.empty() ? 0.0 : kFaultLaneHeight; }
  double member_top(std::size_t m) const {
    return members_top_ + leader_lane() + static_cast<double>(m) * member_pitch();
  }
  double members_height() const {
    return leader_lane() + static_cast<double>(tl_.store_members) * member_pitch() + 2;
  }

  // The servers with rows of their own (Timeline::server_rows), below the sink.
  double server_top(std::size_t row) const {
    return servers_top_ + 2 + static_cast<double>(row) * member_pitch();
  }
  double servers_height() const {
    if (tl_.server_rows.empty()) return 0;
    return 4 + static_cast<double>(tl_.server_rows.size()) * member_pitch();
  }

  bool touches(sim::Endpoint e) const {
    return std::any_of(tl_.partitions.begin(), tl_.partitions.end(),
                       [&](const PartitionSpan& p) { return p.side(e) >= 0; });
  }

  double row_top(std::size_t node) const {
    return rows_top_ + static_cast<double>(node) * rows_.pitch;
  }
  double row_centre(NodeId node) const {
    if (node < 0 || static_cast<std::size_t>(node) >= tl_.node_count) return rows_top_;
    return row_top(static_cast<std::size_t>(node)) + rows_.bar / 2;
  }

  std::pair<double, double> xs(Time a, Time b) const { return {c_.g.x(a), c_.g.x(b)}; }

  // Colours go to leader epochs in the order they occur, so successive leaders always differ
  // (epochs 1 and 11 would share a colour by remainder). Other numbers (a token no leader
  // announced) fall back to the remainder.
  std::size_t slot_of(Epoch e) const {
    const auto it = std::lower_bound(epochs_.begin(), epochs_.end(), e);
    if (it != epochs_.end() && *it == e) {
      return static_cast<std::size_t>(it - epochs_.begin()) % kEpochFill.size();
    }
    return epoch_slot(e);
  }

  // Store leaders' terms get colours the same way, in their own order.
  std::size_t term_slot(Epoch term) const {
    const auto it = std::lower_bound(terms_.begin(), terms_.end(), term);
    if (it != terms_.end() && *it == term) {
      return static_cast<std::size_t>(it - terms_.begin()) % kEpochFill.size();
    }
    return epoch_slot(term);
  }

  // The epoch a holder announced when it took the key (its first leader span starting within the
  // hold, else the one it already had), so the store bar wears the leader's colour.
  std::optional<Epoch> hold_epoch(const LeaseHold& hold) const {
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

  // The usual time between renewals of a hold (the median gap), or a third of the TTL.
  Duration renewal_gap(const LeaseHold& hold) const {
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

  // ---- Node rows

  void paint_node_rows(std::string& out) {
    const Geometry& g = c_.g;
    const std::size_t n = tl_.node_count;
    std::vector<std::vector<const BeliefSpan*>> beliefs(n);
    for (const BeliefSpan& b : tl_.beliefs) {
      if (b.node >= 0 && static_cast<std::size_t>(b.node) < n) {
        beliefs[static_cast<std::size_t>(b.node)].push_back(&b);
      }
    }
    std::vector<std::vector<const DownSpan*>> downs(n);
    for (const DownSpan& d : tl_.downs) {
      if (d.node >= 0 && static_cast<std::size_t>(d.node) < n) {
        downs[static_cast<std::size_t>(d.node)].push_back(&d);
      }
    }
    std::vector<std::vector<const PauseSpan*>> pauses(n);
    for (const PauseSpan& p : tl_.pauses) {
      if (p.endpoint >= 0 && static_cast<std::size_t>(p.endpoint) < n) {
        pauses[static_cast<std::size_t>(p.endpoint)].push_back(&p);
      }
    }

    for (std::size_t node = 0; node < n; ++node) {
      const double top = row_top(node);
      fmt::format_to(std::back_inserter(out), "<g class=\"node-row\" data-node=\"{}\">\n", node);
      if (node % rows_.label_every == 0) {
        const std::string note = clock_note(tl_, node);
        const bool two_lines = !note.empty() && rows_.bar >= 22;
        const double base = top + rows_.bar / 2 + rows_.label_font * 0.35 - (two_lines ? 5 : 0);
        text(out, g.left - 8, base, rows_.label_font, "end", "fill=\"#111111\"",
             fmt::format("node {}", node));
        if (two_lines) text(out, g.left - 8, base + 11, 9, "end", "fill=\"#666666\"", note);
      }
      const std::string who = fmt::format("node {}", node);
      paint_beliefs(out, beliefs[node], top, RoleRow{who, false, rows_.bar});
      paint_downs(out, downs[node], top, rows_.bar, who);
      paint_pauses(out, pauses[node], top, rows_.bar, "GC pause");
      if (rows_.strip > 0) {
        paint_strip(out, static_cast<sim::Endpoint>(node), top + rows_.bar + 0.5, rows_.strip);
      }
      out += "</g>\n";
    }
  }

  // Whose role bars paint_beliefs draws, and what their numbers are.
  struct RoleRow {
    std::string who;     // "node 3", "store:1"
    bool terms = false;  // a store member's Raft terms, not a node's election epochs
    double bar = 0;      // height of the bar area
  };

  void paint_beliefs(std::string& out, const std::vector<const BeliefSpan*>& spans, double top,
                     const RoleRow& row) {
    const BarShape shape = bar_shape(top, row.bar);
    const std::string_view noun = row.terms ? "term" : "epoch";
    const char letter = row.terms ? 't' : 'e';
    // Followers: one line per unbroken run of follower spans of one kind.
    std::optional<std::pair<double, double>> run;
    bool run_known = false;
    auto flush_run = [&] {
      if (!run) return;
      fmt::format_to(
          std::back_inserter(out),
          "<line class=\"follower\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
          "stroke-width=\"{}\"{}/>\n",
          number(run->first, 2), number(shape.line_y, 2), number(run->second, 2),
          number(shape.line_y, 2), kFollower, run_known ? "2" : "1.5",
          run_known ? "" : " stroke-dasharray=\"2 3\"");
      run.reset();
    };
    for (const BeliefSpan* b : spans) {
      if (b->role != sim::Role::follower) continue;
      const auto [x0, x1] = xs(b->start, b->end);
      const bool known = b->known_leader != sim::kNoNode;
      (known ? c_.used.follower_known : c_.used.follower_unknown) = true;
      if (run && x0 <= run->second + kMergePx && (known == run_known || x1 - x0 < kMergePx)) {
        run->second = std::max(run->second, x1);
        continue;
      }
      flush_run();
      run = std::make_pair(x0, x1);
      run_known = known;
    }
    flush_run();

    // Candidates: thin hatched bars. Back-to-back candidacies (a new term after each timeout) make
    // one bar, so a node campaigning in a minority reads as one stretch, not a picket fence.
    struct Campaign {
      Time start;
      Time end;
      Epoch first = 0;
      Epoch last = 0;
      std::size_t count = 0;
    };
    std::vector<Campaign> campaigns;
    std::vector<const BeliefSpan*> leaders;
    for (const BeliefSpan* b : spans) {
      if (b->role == sim::Role::leader) leaders.push_back(b);
      if (b->role != sim::Role::candidate) continue;
      if (!campaigns.empty() && campaigns.back().end == b->start) {
        campaigns.back().end = b->end;
        campaigns.back().last = b->epoch;
        ++campaigns.back().count;
      } else {
        campaigns.push_back({b->start, b->end, b->epoch, b->epoch, 1});
      }
    }
    if (!campaigns.empty()) c_.used.candidate = true;
    merge_narrow(
        campaigns.size(), [&](std::size_t i) { return xs(campaigns[i].start, campaigns[i].end); },
        [&](std::size_t i) {
          const Campaign& b = campaigns[i];
          auto [x0, x1] = xs(b.start, b.end);
          x1 = std::max(x1, x0 + 1);
          const std::string epochs = b.count == 1
                                         ? fmt::format("{} {}", noun, b.first)
                                         : fmt::format("{}s {} to {}", noun, b.first, b.last);
          rect(out, c_, x0, shape.cand_y, x1, shape.cand_h, c_.pattern("cand"),
               " class=\"candidate\"",
               fmt::format("{}: candidate, {}, {} to {}", row.who, epochs, time_text(b.start),
                           time_text(b.end)));
          const std::string label =
              b.count == 1 ? fmt::format("C {}{}", letter, b.first)
                           : fmt::format("C {}{}\xE2\x80\x93{}", letter, b.first, b.last);
          const double font = std::min(10.0, row.bar - 4);
          if (font >= 7 && svg::text_width_estimate(label, font) + 10 <= x1 - x0) {
            text(out, x0 + 3, shape.cand_y + shape.cand_h / 2 + font * 0.36, font, "",
                 std::string("fill=\"#222222\" ") + std::string(kHalo), label);
          }
        },
        [&](double x0, double x1, std::size_t count) {
          c_.used.merged = true;
          rect(out, c_, x0, shape.cand_y, std::max(x1, x0 + 1), shape.cand_h, kMergedFill,
               " class=\"candidate merged\"", fmt::format("{} short candidacies", count));
        });

    // Leaders: filled bars coloured and labelled by epoch.
    merge_narrow(
        leaders.size(), [&](std::size_t i) { return xs(leaders[i]->start, leaders[i]->end); },
        [&](std::size_t i) {
          const BeliefSpan& b = *leaders[i];
          auto [x0, x1] = xs(b.start, b.end);
          x1 = std::max(x1, x0 + 1);
          const std::size_t slot = row.terms ? term_slot(b.epoch) : slot_of(b.epoch);
          rect(out, c_, x0, shape.leader_y, x1, shape.leader_h, kEpochFill[slot],
               fmt::format(" class=\"leader\" data-{}=\"{}\"", noun, b.epoch),
               fmt::format("{}: leader, {} {}, {} to {}{}", row.who, noun, b.epoch,
                           time_text(b.start), time_text(b.end),
                           b.open_at_end ? " (still leading at the end)" : ""));
          const double font = std::min(11.0, shape.leader_h - 2);
          const std::string label = fmt::format("L {}{}", letter, b.epoch);
          if (font >= 7 && svg::text_width_estimate(label, font) + 6 <= x1 - x0) {
            text(out, x0 + 3, shape.leader_y + shape.leader_h / 2 + font * 0.36, font, "",
                 fmt::format("fill=\"{}\" font-weight=\"bold\"", kEpochInk[slot]), label);
          }
        },
        [&](double x0, double x1, std::size_t count) {
          c_.used.merged = true;
          rect(out, c_, x0, shape.leader_y, std::max(x1, x0 + 1), shape.leader_h, kMergedFill,
               " class=\"leader merged\"", fmt::format("{} short leader spans", count));
        });
  }

  void paint_downs(std::string& out, const std::vector<const DownSpan*>& spans, double top,
                   double bar, const std::string& who) {
    if (!spans.empty()) c_.used.down = true;
    merge_narrow(
        spans.size(), [&](std::size_t i) { return xs(spans[i]->start, spans[i]->end); },
        [&](std::size_t i) {
          const DownSpan& d = *spans[i];
          auto [x0, x1] = xs(d.start, d.end);
          x1 = std::max(x1, x0 + 1);
          const char* word = d.graceful ? "stopped" : "crashed";
          rect(out, c_, x0, top, x1, bar, c_.pattern("down"), " class=\"down\"",
               fmt::format("{}: {} from {} to {}", who, word, time_text(d.start),
                           d.open_at_end ? "the end" : time_text(d.end)));
          const double font = std::min(10.5, bar - 3);
          if (font >= 7 && svg::text_width_estimate(word, font) + 8 <= x1 - x0) {
            text(out, (x0 + x1) / 2, top + bar / 2 + font * 0.36, font, "middle",
                 "fill=\"#ffffff\" font-weight=\"bold\" stroke=\"#3d3d3d\" stroke-width=\"3\" "
                 "stroke-linejoin=\"round\" paint-order=\"stroke\"",
                 word);
          }
        },
        [&](double x0, double x1, std::size_t count) {
          c_.used.merged = true;
          rect(out, c_, x0, top, std::max(x1, x0 + 1), bar, c_.pattern("down"),
               " class=\"down merged\"", fmt::format("{} short down spans", count));
        });
  }

  void paint_pauses(std::string& out, const std::vector<const PauseSpan*>& spans, double top,
                    double height, std::string_view word) {
    if (!spans.empty()) c_.used.pause = true;
    merge_narrow(
        spans.size(), [&](std::size_t i) { return xs(spans[i]->start, spans[i]->end); },
        [&](std::size_t i) {
          const PauseSpan& p = *spans[i];
          auto [x0, x1] = xs(p.start, p.end);
          x1 = std::max(x1, x0 + 1);
          const std::string who = node_name(tl_.header.topology, p.endpoint);
          rect(out, c_, x0, top, x1, height, "#ffffff",
               " class=\"pause\" fill-opacity=\"0.45\" stroke=\"#333333\" stroke-width=\"0.8\" "
               "stroke-dasharray=\"3 2\"",
               "");
          rect(out, c_, x0, top, x1, height, c_.pattern("pause"), "",
               fmt::format("{}: paused from {} to {}", who, time_text(p.start),
                           p.open_at_end ? "the end" : time_text(p.end)));
          const std::string d = short_duration(p.end - p.start);
          const double font = std::min(11.0, height - 2);
          for (const std::string& label :
               {fmt::format("{} {}", word, d), std::string("pause ") + d, d}) {
            if (font >= 7 && svg::text_width_estimate(label, font) + 8 <= x1 - x0) {
              text(out, (x0 + x1) / 2, top + height / 2 + font * 0.36, font, "middle",
                   std::string("fill=\"#111111\" font-weight=\"bold\" ") + std::string(kHalo),
                   label);
              break;
            }
          }
        },
        [&](double x0, double x1, std::size_t count) {
          c_.used.merged = true;
          rect(out, c_, x0, top, std::max(x1, x0 + 1), height, c_.pattern("pause"),
               " class=\"pause merged\"", fmt::format("{} short pauses", count));
        });
  }

  // The partition strip of one endpoint: its side letter and pattern while partitions last.
  void paint_strip(std::string& out, sim::Endpoint endpoint, double y, double h) {
    struct Piece {
      double x0, x1;
      int side;  // -2: merged pieces of several sides
      std::size_t span;
    };
    std::vector<Piece> pieces;
    for (std::size_t i = 0; i < tl_.partitions.size(); ++i) {
      const PartitionSpan& p = tl_.partitions[i];
      const int side = p.side(endpoint);
      if (side < 0) continue;
      const auto [x0, x1] = xs(p.start, p.end);
      if (!pieces.empty() && x0 <= pieces.back().x1 + 0.01 &&
          (pieces.back().side == side ||
           (x1 - x0 < kMergePx && pieces.back().x1 - pieces.back().x0 < kMergePx))) {
        if (pieces.back().side != side) pieces.back().side = -2;
        pieces.back().x1 = std::max(pieces.back().x1, x1);
        continue;
      }
      pieces.push_back({x0, x1, side, i});
    }
    if (pieces.empty()) return;
    c_.used.partition = true;
    for (const Piece& piece : pieces) {
      const double x1 = std::max(piece.x1, piece.x0 + 1);
      if (piece.side == -2) {
        c_.used.merged = true;
        rect(out, c_, piece.x0, y, x1, h, kMergedFill, " class=\"side merged\"",
             "several short partitions");
        continue;
      }
      const PartitionSpan& p = tl_.partitions[piece.span];
      const SideStyle& s = side_style(piece.side);
      const std::string letter = side_letter(piece.side);
      rect(out, c_, piece.x0, y, x1, h, c_.pattern(fmt::format("side{}", piece.side % 6)),
           fmt::format(" class=\"side\" data-side=\"{}\" stroke=\"{}\" stroke-width=\"0.6\"",
                       letter, s.ink),
           fmt::format("{}: side {} of {}", node_name(tl_.header.topology, endpoint), letter,
                       p.label));
      // The letter, repeated along long stretches so it is never far from the eye.
      const double font = std::min(9.0, h + 2);
      if (h >= 4 && x1 - piece.x0 >= 12) {
        for (double x = piece.x0 + 3; x + 8 <= x1; x += 260) {
          text(out, x, y + h / 2 + font * 0.36, font, "",
               fmt::format("fill=\"{}\" font-weight=\"bold\" {}", s.ink, kHalo), letter);
        }
      }
    }
  }

  // ---- Store and sink rows

  void service_label(std::string& out, double top, double bar, std::string_view name,
                     std::string_view note) {
    const double base = top + bar / 2 + 4 - (note.empty() ? 0 : 5);
    text(out, c_.g.left - 8, base, kLabelFont, "end", "fill=\"#111111\" font-style=\"italic\"",
         std::string(name));
    if (!note.empty())
      text(out, c_.g.left - 8, base + 11, 9, "end", "fill=\"#666666\"", std::string(note));
  }

  void paint_store(std::string& out) {
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
      paint_strip(out, sim::kStoreEndpoint, top + bar + 0.5, rows_.strip);
    }
    out += "</g>\n";
  }

  void paint_hold(std::string& out, const LeaseHold& hold, double y, double h) {
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
    fmt::format_to(std::back_inserter(out),
                   "<g class=\"hold\" data-holder=\"{}\" data-lease=\"{}\">", hold.holder,
                   hold.lease);
    rect(out, c_, x0, y, std::max(full_end, x0 + (draws_drain ? 0.0 : 1.0)), h, fill, "", tooltip);
    if (draws_drain) {
      c_.used.draining = true;
      const double dx0 = g.x(last);
      const double dx1 = std::max(g.x(drain_end), dx0 + 1);
      const double left = static_cast<double>((*zero_at - drain_end).count()) /
                          static_cast<double>((*zero_at - last).count());
      fmt::format_to(
          std::back_inserter(out),
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

  // Expiry marks go over every hold, so the next holder's bar never hides one. The word goes
  // after the mark when the row is free there, else before it, over the drained wedge.
  void paint_expiries(std::string& out, double y, double h) {
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

  // A row per member, drawn like a node's: its Raft role (leader bars coloured and labelled by
  // term), its crashes and pauses, its partition side; then the store's leader changes.
  void paint_members(std::string& out) {
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
      const sim::Endpoint endpoint = sim::store_member_endpoint(m);
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

  // A row per server whose kind asks for one (the database, the Redis masters, ...): when it was
  // down or paused, and its partition side.
  void paint_servers(std::string& out) {
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

  // Each change of the store's leader: a marker over the member rows, a guide down to the new
  // leader's row and a label in the lane above ("store leader → store:2, term 5"). Changes
  // closer than a few pixels share one marker, whose tooltip lists them.
  void paint_store_leaders(std::string& out) {
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
                       number(member_top(static_cast<std::size_t>(row)) + member_bar() / 2, 2),
                       kInk);
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

  void paint_sink(std::string& out) {
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
    if (rows_.strip > 0) paint_strip(out, sim::kSinkEndpoint, top + bar + 0.5, rows_.strip);
    out += "</g>\n";
  }

  // A sink mark's label: after the mark, or before it near the right edge; none if it would
  // run into the previous label.
  void mark_label(std::string& out, LanePacker& labels, double x, double mid,
                  const std::string& label) {
    const double lw = svg::text_width_estimate(label, kSmallFont);
    const bool after = x + 9 + lw <= c_.g.right;
    const double x0 = after ? x + 7 : x - 9 - lw;
    if (!labels.place(x0, x0 + lw + 4)) return;
    text(out, after ? x + 8 : x - 8, mid + 4, kSmallFont, after ? "" : "end",
         fmt::format("fill=\"{}\" font-weight=\"bold\" {}", kAlarm, kHalo), label);
  }

  // ---- Split-brain, failovers

  // Split-brain stretches closer together than a label is wide: [first, last] index pairs.
  std::vector<std::pair<std::size_t, std::size_t>> split_clusters() const {
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

  // Each stretch shaded across the node rows; each cluster of them outlined once, dashed.
  void paint_split_brain(std::string& out) {
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

  std::vector<Annotation> annotations() const {
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
            f.write_outage ? fmt::format("; write outage {}", short_duration(*f.write_outage))
                           : "");
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
    std::stable_sort(notes.begin(), notes.end(), [](const Annotation& a, const Annotation& b) {
      return a.extent0 < b.extent0;
    });
    return notes;
  }

  void paint_annotations(std::string& out, const std::vector<Annotation>& notes, double top) {
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

  std::vector<FaultDraw> fault_marks() const {
    const Geometry& g = c_.g;
    std::vector<FaultDraw> marks;
    for (const FaultMark& f : tl_.faults) {
      const double x = g.x(f.at);
      const double x_end = f.duration.count() > 0 ? g.x(f.at + f.duration) : x;
      const std::string tooltip =
          fmt::format("{}: fault #{} {}", time_text(f.at), f.index,
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

  void paint_faults(std::string& out, const std::vector<FaultDraw>& faults, double top,
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
      fmt::format_to(
          std::back_inserter(out),
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

  Context& c_;
  const Timeline& tl_;
  const PanelInput& in_;
  std::size_t index_;
  RowGeometry rows_;
  std::vector<Epoch> epochs_;                            // distinct leader epochs, ascending
  std::vector<std::vector<const BeliefSpan*>> leaders_;  // per node, by start
  std::vector<Epoch> terms_;  // distinct terms of store leaders, ascending
  bool has_store_ = false;
  bool has_members_ = false;
  bool has_sink_ = false;
  double servers_top_ = 0;
  double rows_top_ = 0;
  double nodes_bottom_ = 0;
  double store_top_ = 0;
  double members_top_ = 0;
  double sink_top_ = 0;
};

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
