// The replay report (the recorder: drawing/replay_recorder.cpp): the recorder keeps the run's
// events compactly and pairs every send with its arrival; the renderer writes one HTML page with
// the data as a JSON blob (numbers and a names table, names as in docs/trace-format.md) that the
// page's script replays. The script keeps a snapshot of the state every few thousand events, so a
// seek costs one snapshot and a few thousand events at most, whatever the run's length.
#include "drawing/replay_html.hpp"

#include "analysis/json_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <set>
#include <string_view>
#include <utility>

#include "analysis/expect.hpp"
#include "drawing/svg.hpp"
#include "sim/assert.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"

namespace electsim::drawing {
using analysis::append_json_string;

using analysis::Breach;
using analysis::Failover;
using analysis::format_summary;
using analysis::LeaderInterval;
using analysis::Report;
using analysis::RunInfo;
using analysis::SameEpochLeaders;
using analysis::StaleWrite;
using analysis::TraceHeader;
using analysis::Verdict;

// ---- Page

namespace {

#include "drawing/replay_page.inc"

// JSON text that is also safe inside <script>: '<', '>' and '&' are written as \u escapes, so no
// string can close the element or open a comment.
void append_script_json_string(std::string& out, std::string_view s) {
  append_json_string(out, s, /*script_safe=*/true);
}

void append_int(std::string& out, std::int64_t v) {
  fmt::format_to(std::back_inserter(out), "{}", v);
}

template <typename Range, typename Fn>
void append_array(std::string& out, const Range& range, Fn each) {
  out += '[';
  bool first = true;
  for (const auto& item : range) {
    if (!first) out += ',';
    first = false;
    each(item);
  }
  out += ']';
}

void append_string_array(std::string& out, const std::vector<std::string>& names) {
  append_array(out, names, [&](const std::string& s) { append_script_json_string(out, s); });
}

template <typename Enum>
std::vector<std::string> enum_names(int count, const char* (*name)(Enum)) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.emplace_back(name(static_cast<Enum>(i)));
  return out;
}

void append_segments(std::string& out, const std::vector<ClockSegment>& segments) {
  append_array(out, segments, [&](const ClockSegment& s) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{}", s.from_ns, s.anchor_ns, s.base_ns,
                   s.drift_ppb);
  });
}

// One event's fields, in the order replay_fields() names them.
void append_event_fields(std::string& out, const ReplayEvent& r) {
  using K = sim::EventKind;
  auto it = std::back_inserter(out);
  switch (r.kind) {
    case K::run_start:
      fmt::format_to(it, ",{}", r.x);
      return;
    case K::fault:
      fmt::format_to(it, ",{},{},{},{},{},{},{}", r.code, r.node, r.peer, r.x, r.y, r.flags & 1,
                     r.text);
      return;
    case K::belief:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.code, r.x, r.y);
      return;
    case K::crash:
      fmt::format_to(it, ",{},{}", r.node, r.flags & 1);
      return;
    case K::restart:
    case K::resume:
      fmt::format_to(it, ",{}", r.node);
      return;
    case K::pause:
      fmt::format_to(it, ",{},{}", r.node, r.x);
      return;
    case K::clock_change:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.code, r.x, r.y);
      return;
    case K::timer_fire:
      fmt::format_to(it, ",{},{}", r.node, r.x);
      return;
    case K::msg_send:
    case K::msg_deliver:
      fmt::format_to(it, ",{},{},{}", r.node, r.peer, r.code);
      return;
    case K::msg_drop:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.peer, r.code, r.x);
      return;
    case K::store_request:
      fmt::format_to(it, ",{},{},{}", r.node, r.code, r.x);
      return;
    case K::store_apply:
      fmt::format_to(it, ",{},{},{},{},{},{}", r.node, r.code, r.x, r.flags & 1, r.y, r.z);
      return;
    case K::store_change:
      fmt::format_to(it, ",{},{},{},{},{},{}", r.text, r.code, r.x, r.node, r.y, r.flags & 1);
      return;
    case K::lease_expire:
      fmt::format_to(it, ",{}", r.x);
      return;
    case K::store_reply:
      fmt::format_to(it, ",{},{},{},{},{}", r.node, r.code, r.x, r.flags & 1, r.y);
      return;
    case K::watch_notify:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.text, r.code, r.x);
      return;
    case K::sink_write:
      fmt::format_to(it, ",{},{},{},{},{},{}", r.node, r.x, r.y, r.flags & 1, r.z,
                     (r.flags >> 1) & 1);
      return;
    case K::sink_reply:
      fmt::format_to(it, ",{},{},{}", r.node, r.x, r.flags & 1);
      return;
    case K::store_pause:
      fmt::format_to(it, ",{}", r.x);
      return;
    case K::run_end:
    case K::store_resume:
      return;
    case K::network_change:
      fmt::format_to(it, ",{},{}", r.code, r.x);
      return;
    case K::sink_send:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.x, r.y, r.z);
      return;
    case K::server_role:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.code, r.x, r.y);
      return;
    case K::raft_commit:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.x, r.y, r.z);
      return;
    case K::lease_refresh:
      fmt::format_to(it, ",{},{},{}", r.node, r.x, r.y);
      return;
    case K::client_failover:
      fmt::format_to(it, ",{},{},{},{}", r.node, r.peer, r.code, r.x);
      return;
    case K::server_request:
      fmt::format_to(it, ",{},{},{}", r.node, r.peer, r.x);
      return;
    case K::conn_break:
      fmt::format_to(it, ",{},{}", r.node, r.peer);
      return;
  }
}

struct SplitBrainEpisode {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::vector<std::pair<NodeId, Epoch>> leaders;  // every (node, epoch) that led during it
};

// Maximal stretches of non-zero length with two or more leader intervals open, the way the
// analyzer counts split-brain episodes: changes at one instant count as one.
std::vector<SplitBrainEpisode> split_brain_episodes(const Report& report) {
  struct Boundary {
    std::int64_t at;
    bool opens;
    std::size_t interval;
  };
  std::vector<Boundary> boundaries;
  for (std::size_t i = 0; i < report.intervals.size(); ++i) {
    const LeaderInterval& li = report.intervals[i];
    if (li.end <= li.start) continue;
    boundaries.push_back({li.start.ns, true, i});
    boundaries.push_back({li.end.ns, false, i});
  }
  std::sort(boundaries.begin(), boundaries.end(), [](const Boundary& a, const Boundary& b) {
    return std::tie(a.at, a.opens, a.interval) < std::tie(b.at, b.opens, b.interval);
  });
  std::vector<SplitBrainEpisode> out;
  std::set<std::size_t> open;
  bool in_episode = false;
  for (std::size_t i = 0; i < boundaries.size();) {
    const std::int64_t at = boundaries[i].at;
    for (; i < boundaries.size() && boundaries[i].at == at; ++i) {
      if (boundaries[i].opens) {
        open.insert(boundaries[i].interval);
      } else {
        open.erase(boundaries[i].interval);
      }
    }
    if (open.size() >= 2) {
      if (!in_episode) {
        out.push_back(SplitBrainEpisode{at, at, {}});
        in_episode = true;
      }
      for (const std::size_t k : open) {
        const std::pair<NodeId, Epoch> who{report.intervals[k].node, report.intervals[k].epoch};
        auto& leaders = out.back().leaders;
        if (std::find(leaders.begin(), leaders.end(), who) == leaders.end()) {
          leaders.push_back(who);
        }
      }
    } else if (in_episode) {
      out.back().end = at;
      in_episode = false;
    }
  }
  for (auto& episode : out) std::sort(episode.leaders.begin(), episode.leaders.end());
  return out;
}

constexpr std::size_t kFindingsShownMax = 1000;

std::int64_t optional_ns(const std::optional<Time>& t) {
  return t ? t->ns : -1;
}
std::int64_t optional_ns(const std::optional<Duration>& d) {
  return d ? d->count() : -1;
}

void append_findings(std::string& out, const Report& report) {
  auto it = std::back_inserter(out);
  const std::vector<SplitBrainEpisode> episodes = split_brain_episodes(report);
  out += "{\"split_brain\":";
  std::vector<SplitBrainEpisode> shown(
      episodes.begin(),
      episodes.begin() + static_cast<std::ptrdiff_t>(std::min(episodes.size(), kFindingsShownMax)));
  append_array(out, shown, [&](const SplitBrainEpisode& e) {
    fmt::format_to(it, "[{},{},", e.start, e.end);
    append_array(out, e.leaders, [&](const std::pair<NodeId, Epoch>& p) {
      fmt::format_to(it, "{},{}", p.first, p.second);
    });
    out += ']';
  });
  fmt::format_to(it, ",\"split_brain_total\":{},\"split_brain_time_ns\":{}", episodes.size(),
                 report.split_brain_time.count());
  out += ",\"same_epoch\":";
  append_array(out, report.same_epoch_leaders, [&](const SameEpochLeaders& s) {
    fmt::format_to(it, "[{},{},{},{}]", s.at.ns, s.epoch, s.first, s.second);
  });
  fmt::format_to(it, ",\"same_epoch_total\":{}", report.same_epoch_leaders_total);
  out += ",\"stale\":";
  append_array(out, report.stale_writes, [&](const StaleWrite& w) {
    fmt::format_to(it, "[{},{},{},{},{}]", w.at.ns, w.writer, w.token, w.newest_epoch,
                   w.accepted ? 1 : 0);
  });
  fmt::format_to(it, ",\"stale_accepted\":{},\"stale_rejected\":{}", report.stale_writes_accepted,
                 report.stale_writes_rejected);
  out += ",\"failovers\":";
  std::vector<Failover> failovers(
      report.failovers.begin(),
      report.failovers.begin() +
          static_cast<std::ptrdiff_t>(std::min(report.failovers.size(), kFindingsShownMax)));
  append_array(out, failovers, [&](const Failover& f) {
    fmt::format_to(it, "[{},{},{},{},{},{},{},{},{},{},{},{}]", f.fault_at.ns,
                   static_cast<int>(f.fault), f.fault_index, f.old_leader, f.old_epoch,
                   optional_ns(f.new_leader_at), f.new_leader, optional_ns(f.failover),
                   f.ridden_out ? 1 : 0, optional_ns(f.write_outage), optional_ns(f.last_old_write),
                   optional_ns(f.first_new_write));
  });
  fmt::format_to(it, ",\"failovers_total\":{}", report.failovers.size());
  // Service outages, whatever the cause: [start, end or -1, writer before, writer after or -1,
  // what was going on].
  out += ",\"outages\":";
  std::vector<analysis::Outage> outages(
      report.outages.begin(),
      report.outages.begin() +
          static_cast<std::ptrdiff_t>(std::min(report.outages.size(), kFindingsShownMax)));
  append_array(out, outages, [&](const analysis::Outage& o) {
    fmt::format_to(it, "[{},{},{},{},", o.start.ns, o.end ? o.end->ns : -1, o.writer_before,
                   o.end ? o.writer_after : -1);
    append_script_json_string(out, analysis::outage_causes_text(o));
    out += ']';
  });
  fmt::format_to(it, ",\"outages_total\":{}", report.outages_total);
  // The first equal-token write: [at, writer, the other writer, token], and how many.
  out += ",\"equal_token\":";
  if (report.first_equal_token_write) {
    const auto& w = *report.first_equal_token_write;
    fmt::format_to(it, "[[{},{},{},{}]]", w.at.ns, w.writer, w.other, w.token);
  } else {
    out += "[]";
  }
  fmt::format_to(it, ",\"equal_token_total\":{}}}", report.equal_token_writes);
}

std::string data_json(const ReplayRecorder& recorder, const Report& report, const Verdict& verdict,
                      const RunInfo& info) {
  const TraceHeader& h = recorder.header();
  const std::vector<ReplayEvent>& events = recorder.events();
  std::string out;
  out.reserve(events.size() * 24 + 4096);
  auto it = std::back_inserter(out);

  out += "{\"schema\":1,\"run\":{\"scenario\":";
  append_script_json_string(out, info.scenario);
  out += ",\"variant\":";
  append_script_json_string(out, info.variant);
  out += ",\"protocol\":";
  append_script_json_string(out, info.protocol);
  // The seed as text: a JavaScript number is exact only up to 2^53.
  fmt::format_to(it, ",\"seed\":\"{}\",\"nodes\":{},\"duration_ns\":{},\"end_ns\":{}", info.seed,
                 h.node_count, info.duration.count(), events.empty() ? 0 : events.back().time_ns);
  out += ",\"trace_hash\":";
  append_script_json_string(out, info.trace_hash);
  fmt::format_to(it,
                 ",\"events_total\":{},\"events_kept\":{},\"timer_fires\":{},"
                 "\"lost_in_transit\":{},\"timer_fires_by_node\":",
                 recorder.events_seen(), events.size(), recorder.timer_fires(),
                 recorder.requests_lost());
  append_array(out, recorder.timer_fires_by_node(), [&](std::uint64_t n) { append_int(out, n); });
  // Only a replicated store's page names its members: a single store's data stays as it was.
  if (recorder.store_members() > 0) {
    fmt::format_to(it, ",\"store_members\":{}", recorder.store_members());
  }
  out += "}";

  out += ",\"names\":{\"kinds\":";
  append_string_array(out, enum_names<sim::EventKind>(sim::kEventKindCount, sim::event_kind_name));
  out += ",\"roles\":";
  append_string_array(out, enum_names<sim::Role>(3, sim::role_name));
  out += ",\"faults\":";
  append_string_array(out, enum_names<sim::FaultKind>(sim::kFaultKindCount, sim::fault_kind_name));
  out += ",\"ops\":";
  append_string_array(out, enum_names<sim::StoreOp>(sim::kStoreOpCount, sim::store_op_name));
  out += ",\"reasons\":";
  append_string_array(out, enum_names<sim::DropReason>(5, sim::drop_reason_name));
  if (recorder.store_members() > 0) {
    out += ",\"failover_reasons\":";
    append_string_array(out, enum_names<sim::FailoverReason>(3, sim::failover_reason_name));
  }
  // Servers by the names the world gave them, and a store's members in order (the header's
  // topology): the page derives no name from an address.
  out += ",\"endpoints\":";
  append_array(out, h.topology.servers(), [&](const sim::NamedEndpoint& s) {
    fmt::format_to(it, "[{},", s.address);
    append_script_json_string(out, s.name);
    out += ']';
  });
  out += ",\"members\":";
  std::vector<sim::Endpoint> members;
  for (std::size_t m = 0; m < h.topology.store_members(); ++m) {
    members.push_back(h.topology.store_member(m));
  }
  append_array(out, members, [&](sim::Endpoint e) { append_int(out, e); });
  // The servers whose kind gives them a lane of their own, in the topology's order.
  std::vector<sim::Endpoint> lanes;
  for (const sim::NamedEndpoint& s : h.topology.servers()) {
    if (s.traits.lane == sim::ServerLane::process) lanes.push_back(s.address);
  }
  out += ",\"servers\":";
  append_array(out, lanes, [&](sim::Endpoint e) { append_int(out, e); });
  out += ",\"types\":";
  append_string_array(out, h.message_types);
  out += ",\"texts\":";
  append_string_array(out, recorder.texts());
  out += "}";

  out += ",\"fields\":";
  out += '[';
  for (std::size_t k = 0; k < sim::kEventKindCount; ++k) {
    if (k > 0) out += ',';
    append_array(out, replay_fields(static_cast<sim::EventKind>(k)),
                 [&](std::string_view f) { append_script_json_string(out, f); });
  }
  out += ']';
  out += ",\"leader_key\":";
  if (h.leader_key) {
    append_script_json_string(out, *h.leader_key);
  } else {
    out += "null";
  }
  out += ",\"lease\":";
  if (recorder.lease_ttl()) {
    fmt::format_to(it, "{{\"ttl_ns\":{},\"by_store\":{}}}", recorder.lease_ttl()->count(),
                   recorder.lease_judged_by_store() ? "true" : "false");
  } else {
    out += "null";
  }
  out += ",\"clocks\":";
  append_array(out, recorder.clock_segments(),
               [&](const std::vector<ClockSegment>& s) { append_segments(out, s); });
  out += ",\"store_clock\":";
  append_segments(out, recorder.store_clock_segments());

  // Events: the time since the previous kept event, the kind, then the kind's fields.
  out += ",\"ev\":[";
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const ReplayEvent& r = events[i];
    fmt::format_to(it, "{}{},{}", i == 0 ? "" : ",", r.time_ns - previous,
                   static_cast<std::size_t>(r.kind));
    append_event_fields(out, r);
    previous = r.time_ns;
  }
  out += ']';

  // Flights: start as a step from the previous flight's start, length in events, status.
  out += ",\"flights\":[";
  std::uint32_t previous_start = 0;
  bool first = true;
  for (const ReplayFlight& f : recorder.flights()) {
    fmt::format_to(it, "{}{},{},{}", first ? "" : ",", f.start - previous_start, f.end - f.start,
                   static_cast<int>(f.status));
    previous_start = f.start;
    first = false;
  }
  out += ']';

  out += ",\"findings\":";
  append_findings(out, report);
  out += ",\"verdict\":{\"ok\":";
  out += verdict.ok() ? "true" : "false";
  out += ",\"breaches\":";
  append_array(out, verdict.breaches,
               [&](const Breach& b) { append_script_json_string(out, b.message); });
  out += "}}";
  return out;
}

// The timeline as an inline element: no XML declaration or doctype, and no namespace
// declarations (HTML puts <svg> in the SVG namespace by itself, and the page names no address).
// A picture without a viewBox gets one from its width and height, so that it scales.
std::string inline_svg(const std::string& svg) {
  std::string s = svg;
  const std::size_t open = s.find("<svg");
  if (open == std::string::npos) return {};
  s.erase(0, open);
  for (const std::string_view ns :
       {std::string_view(" xmlns=\"http://www.w3.org/2000/svg\""),
        std::string_view(" xmlns:xlink=\"http://www.w3.org/1999/xlink\"")}) {
    for (std::size_t at = s.find(ns); at != std::string::npos; at = s.find(ns, at)) {
      s.erase(at, ns.size());
    }
  }
  const std::size_t tag_end = s.find('>');
  if (tag_end == std::string::npos) return {};
  const std::string_view tag(s.data(), tag_end);
  if (tag.find("viewBox=") == std::string_view::npos) {
    auto attribute = [&](std::string_view name) -> std::string {
      const std::string key = " " + std::string(name) + "=\"";
      const std::size_t at = tag.find(key);
      if (at == std::string_view::npos) return {};
      const std::size_t from = at + key.size();
      const std::size_t to = tag.find('"', from);
      if (to == std::string_view::npos) return {};
      return std::string(tag.substr(from, to - from));
    };
    const std::string width = attribute("width");
    const std::string height = attribute("height");
    const bool numeric = !width.empty() && !height.empty() &&
                         width.find_first_not_of("0123456789.") == std::string::npos &&
                         height.find_first_not_of("0123456789.") == std::string::npos;
    if (numeric) s.insert(4, fmt::format(" viewBox=\"0 0 {} {}\"", width, height));
  }
  return s;
}

// The summary as printed by `electsim run`, with the lines that state a broken bound marked.
std::string summary_html(const std::string& summary, const Verdict& verdict) {
  std::string out;
  std::size_t from = 0;
  while (from < summary.size()) {
    std::size_t to = summary.find('\n', from);
    if (to == std::string::npos) to = summary.size();
    const std::string_view line(summary.data() + from, to - from);
    bool breach = line.rfind("verdict: FAIL", 0) == 0;
    for (const Breach& b : verdict.breaches) {
      if (!b.message.empty() && line.find(b.message) != std::string_view::npos) breach = true;
    }
    if (breach) out += "<mark class=\"breach\">";
    out += svg::escape(line);
    if (breach) out += "</mark>";
    out += '\n';
    from = to + 1;
  }
  return out;
}

}  // namespace

std::string render_replay_html(const ReplayRecorder& recorder, const Report& report,
                               const Verdict& verdict, const RunInfo& info,
                               const std::string& timeline_svg) {
  const std::string scenario =
      info.scenario + (info.variant.empty() ? "" : " [" + info.variant + "]");
  const std::string title =
      fmt::format("electsim replay: {} · {} · seed {}", scenario, info.protocol, info.seed);
  const std::string svg = inline_svg(timeline_svg);

  std::string html;
  html.reserve(recorder.events().size() * 24 + 200'000 + svg.size());
  auto it = std::back_inserter(html);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  html += svg::escape(title);
  html += "</title>\n<style>\n";
  for (const std::string_view part : kReplayStyle) html += part;
  html += "</style>\n</head>\n<body>\n<header>\n<h1>electsim replay <span class=\"scenario\">";
  html += svg::escape(scenario);
  html += "</span></h1>\n<p class=\"meta\">";
  fmt::format_to(it,
                 "protocol <b>{}</b> · {} nodes{} · seed {} · {} simulated · {} events in its "
                 "trace, {} of them timer fires (counted, not listed)",
                 svg::escape(info.protocol), recorder.header().node_count,
                 recorder.store_members() > 0
                     ? fmt::format(" · a store of {} members", recorder.store_members())
                     : "",
                 info.seed, svg::escape(sim::format_duration(info.duration)),
                 recorder.events_seen(), recorder.timer_fires());
  html += "</p>\n";
  if (!verdict.judged) {
    // A saved trace drawn without its scenario (the playground's Load): no bounds judged it, so
    // the banner names the harm, as `electsim check TRACE` does, and never says PASS.
    const std::vector<std::string> harm = analysis::harm_in(report);
    fmt::format_to(it,
                   "<div id=\"verdict\" class=\"verdict {}\"><b>Not judged</b>: no scenario's "
                   "expect block judged this trace; {}.</div>\n",
                   harm.empty() ? "pass" : "fail",
                   harm.empty() ? "no harm found"
                                : svg::escape("harm: " + fmt::format("{}", fmt::join(harm, ", "))));
  } else if (verdict.ok()) {
    html +=
        "<div id=\"verdict\" class=\"verdict pass\"><b>Verdict: PASS</b>: the run met every "
        "bound its scenario states.</div>\n";
  } else {
    fmt::format_to(it,
                   "<div id=\"verdict\" class=\"verdict fail\"><b>Verdict: FAIL</b>: {} "
                   "expectation{} broke<ul>",
                   verdict.breaches.size(), verdict.breaches.size() == 1 ? "" : "s");
    for (const Breach& b : verdict.breaches) {
      html += "<li class=\"breach\">";
      html += svg::escape(b.message);
      html += "</li>";
    }
    html += "</ul></div>\n";
  }
  html += "</header>\n";
  for (const std::string_view part : kReplayBody) html += part;
  for (const std::string_view part : kReplayPanels) html += part;
  if (!svg.empty()) {
    html +=
        "<section id=\"timeline\" class=\"panel\"><h2>Timeline <small>the red line is the "
        "replay's time; click anywhere to jump there</small></h2><div id=\"timeline-wrap\">";
    html += svg;
    html += "<div id=\"future\"></div><div id=\"cursor\"></div></div></section>\n";
  }
  html +=
      "<details id=\"summary\" open><summary>Summary, as <code>electsim run</code> prints it"
      "</summary><pre>";
  html += summary_html(format_summary(info, report, verdict), verdict);
  html += "</pre></details>\n</main>\n";
  html += "<script type=\"application/json\" id=\"replay-data\">";
  html += data_json(recorder, report, verdict, info);
  html += "</script>\n<script>\n";
  for (const std::string_view part : kReplayScript) html += part;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace electsim::drawing
