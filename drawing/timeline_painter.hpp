// The timeline SVG's panel painter (drawing/timeline_svg.cpp lays out the page and paints a
// panel's frame; each lane is painted in a file of its own: timeline_nodes.cpp the node rows,
// timeline_services.cpp the store, its members, the sink and the servers, timeline_marks.cpp
// split-brain, failovers and faults). Not for use outside them.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drawing/svg.hpp"
#include "drawing/timeline_parts.hpp"
#include "sim/assert.hpp"

namespace electsim::drawing::timeline_parts {

using analysis::Failover;
using analysis::TraceHeader;

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

// Row sizes for a panel of `nodes` rows, with or without partition strips.
RowGeometry row_geometry(std::size_t nodes, bool strips);

struct BarShape {
  double leader_y, leader_h, cand_y, cand_h, line_y;
};
BarShape bar_shape(double top, double bar);

// The run's figures for the panel heading: one part each, in one line or wrapped to a width.
std::vector<std::string> summary_parts(const Timeline& tl);
std::string summary_line(const Timeline& tl);
std::vector<std::string> summary_lines(const Timeline& tl, double width_px, double font_px);
// A node's clock offset and drift, when it has any, for its row label.
std::string clock_note(const Timeline& tl, std::size_t node);

class PanelPainter {
 public:
  PanelPainter(Context& c, const PanelInput& in, std::size_t panel_index)
      : c_(c), tl_(*in.tl), in_(in), index_(panel_index) {}

  // Draws the panel from `top`; returns the y just below it.
  double paint(std::string& out, double top, const std::vector<svg::Tick>& ticks);

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
  double member_top(std::size_t m) const;
  double members_height() const;

  // The servers with rows of their own (Timeline::server_rows), below the sink.
  double server_top(std::size_t row) const;
  double servers_height() const;

  bool touches(sim::Endpoint e) const;

  double row_top(std::size_t node) const;
  double row_centre(NodeId node) const;

  std::pair<double, double> xs(Time a, Time b) const { return {c_.g.x(a), c_.g.x(b)}; }

  // Colours go to leader epochs in the order they occur, so successive leaders always differ
  // (epochs 1 and 11 would share a colour by remainder). Other numbers (a token no leader
  // announced) fall back to the remainder.
  std::size_t slot_of(Epoch e) const;

  // Store leaders' terms get colours the same way, in their own order.
  std::size_t term_slot(Epoch term) const;

  // The epoch a holder announced when it took the key (its first leader span starting within the
  // hold, else the one it already had), so the store bar wears the leader's colour.
  std::optional<Epoch> hold_epoch(const LeaseHold& hold) const;

  // The usual time between renewals of a hold (the median gap), or a third of the TTL.
  Duration renewal_gap(const LeaseHold& hold) const;

  // ---- Node rows

  void paint_node_rows(std::string& out);

  // Whose role bars paint_beliefs draws, and what their numbers are.
  struct RoleRow {
    std::string who;     // "node 3", "store:1"
    bool terms = false;  // a store member's Raft terms, not a node's election epochs
    double bar = 0;      // height of the bar area
  };

  void paint_beliefs(std::string& out, const std::vector<const BeliefSpan*>& spans, double top,
                     const RoleRow& row);

  void paint_downs(std::string& out, const std::vector<const DownSpan*>& spans, double top,
                   double bar, const std::string& who);

  void paint_pauses(std::string& out, const std::vector<const PauseSpan*>& spans, double top,
                    double height, std::string_view word);

  // The partition strip of one endpoint: its side letter and pattern while partitions last.
  void paint_strip(std::string& out, sim::Endpoint endpoint, double y, double h);

  // ---- Store and sink rows

  void service_label(std::string& out, double top, double bar, std::string_view name,
                     std::string_view note);

  void paint_store(std::string& out);

  void paint_hold(std::string& out, const LeaseHold& hold, double y, double h);

  // Expiry marks go over every hold, so the next holder's bar never hides one. The word goes
  // after the mark when the row is free there, else before it, over the drained wedge.
  void paint_expiries(std::string& out, double y, double h);

  // ---- A replicated store's members

  // A row per member, drawn like a node's: its Raft role (leader bars coloured and labelled by
  // term), its crashes and pauses, its partition side; then the store's leader changes.
  void paint_members(std::string& out);

  // ---- Servers with rows of their own

  // A row per server whose kind asks for one (the database, the Redis masters, ...): when it was
  // down or paused, and its partition side.
  void paint_servers(std::string& out);

  // Each change of the store's leader: a marker over the member rows, a guide down to the new
  // leader's row and a label in the lane above ("store leader → store:2, term 5"). Changes
  // closer than a few pixels share one marker, whose tooltip lists them.
  void paint_store_leaders(std::string& out);

  void paint_sink(std::string& out);

  // A sink mark's label: after the mark, or before it near the right edge; none if it would
  // run into the previous label.
  void mark_label(std::string& out, LanePacker& labels, double x, double mid,
                  const std::string& label);

  // ---- Split-brain, failovers

  // Split-brain stretches closer together than a label is wide: [first, last] index pairs.
  std::vector<std::pair<std::size_t, std::size_t>> split_clusters() const;

  // Each stretch shaded across the node rows; each cluster of them outlined once, dashed.
  void paint_split_brain(std::string& out);

  std::vector<Annotation> annotations() const;

  void paint_annotations(std::string& out, const std::vector<Annotation>& notes, double top);

  // ---- Faults

  std::vector<FaultDraw> fault_marks() const;

  void paint_faults(std::string& out, const std::vector<FaultDraw>& faults, double top,
                    double base);

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

}  // namespace electsim::drawing::timeline_parts
