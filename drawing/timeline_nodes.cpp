// The timeline's node rows (drawing/timeline_painter.hpp): each node's beliefs, downtime, pauses
// and partition strip.
#include "drawing/timeline_painter.hpp"

namespace electsim::drawing::timeline_parts {

// ---- Node rows

void PanelPainter::paint_node_rows(std::string& out) {
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

void PanelPainter::paint_beliefs(std::string& out, const std::vector<const BeliefSpan*>& spans,
                                 double top, const RoleRow& row) {
  const BarShape shape = bar_shape(top, row.bar);
  const std::string_view noun = row.terms ? "term" : "epoch";
  const char letter = row.terms ? 't' : 'e';
  // Followers: one line per unbroken run of follower spans of one kind.
  std::optional<std::pair<double, double>> run;
  bool run_known = false;
  auto flush_run = [&] {
    if (!run) return;
    fmt::format_to(std::back_inserter(out),
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
        rect(
            out, c_, x0, shape.leader_y, x1, shape.leader_h, kEpochFill[slot],
            fmt::format(" class=\"leader\" data-{}=\"{}\"", noun, b.epoch),
            fmt::format("{}: leader, {} {}, {} to {}{}", row.who, noun, b.epoch, time_text(b.start),
                        time_text(b.end), b.open_at_end ? " (still leading at the end)" : ""));
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

void PanelPainter::paint_downs(std::string& out, const std::vector<const DownSpan*>& spans,
                               double top, double bar, const std::string& who) {
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

void PanelPainter::paint_pauses(std::string& out, const std::vector<const PauseSpan*>& spans,
                                double top, double height, std::string_view word) {
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
                 std::string("fill=\"#111111\" font-weight=\"bold\" ") + std::string(kHalo), label);
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

void PanelPainter::paint_strip(std::string& out, sim::Endpoint endpoint, double y, double h) {
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
         fmt::format(" class=\"side\" data-side=\"{}\" stroke=\"{}\" stroke-width=\"0.6\"", letter,
                     s.ink),
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

}  // namespace electsim::drawing::timeline_parts
