// The timeline of a run as a standalone SVG document, drawn like a textbook figure: a row per node
// (leader bars coloured and labelled by epoch, candidates hatched, followers as a thin line, down
// and paused stretches as patterned bands), the partition side under each row, the leader key in
// the store with its lease draining, a replicated store's members as rows of their own (Raft roles
// by term, each change of the store's leader marked), the sink's writes, split-brain and failovers
// bracketed and labelled, faults on the time axis, and a legend. Patterns, labels and dashes carry
// every distinction colour carries, so a black-and-white print reads the same. Output is
// deterministic.
#pragma once

#include <string>
#include <vector>

#include "drawing/timeline.hpp"

namespace electsim::drawing {

struct TimelineStyle {
  double width_px = 1200;  // the whole picture; at least 480 is used
  bool legend = true;
  bool tooltips = true;  // <title> on marks, shown by viewers on hover
  // Prefix of the ids of the patterns in <defs>, so that several pictures embedded in one HTML
  // page do not share ids.
  std::string id_prefix = "tl";
  // Replaces the generated title ("scenario [variant] · protocol · seed N") when not empty.
  std::string title;
};

// One run. The root <svg> carries data-time-left, data-time-right (x of time 0 and of the domain's
// end, in user units) and data-time-domain-ns, so a page embedding it can map times to x.
std::string render_timeline_svg(const Timeline& timeline, const TimelineStyle& style = {});

// Several runs (one per protocol in `electsim compare`), stacked as panels on one shared time axis
// spanning the longest run. `panel_titles[i]` heads panel i (the protocol when missing or empty).
// Null pointers are skipped.
std::string render_timelines_svg(const std::vector<const Timeline*>& timelines,
                                 const std::vector<std::string>& panel_titles,
                                 const TimelineStyle& style = {});

}  // namespace electsim::drawing
